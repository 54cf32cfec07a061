"""``wafer reproduce dogi-configs``: DOGI's Fig. 13 method. Every one of the
512 group configurations (a ``mask`` of kept category boundaries) is forced
on DOGI and replayed, on a process pool over the cores, for each workload;
the result says how good the configuration model's pick is:

* the best configuration's steady WAF, and the best for each group count
  K = 1..10 (Fig. 13's curve; ten groups = mask 511);
* the model's pick (the configuration the unforced DOGI chose most often
  after the warm-up) and its rank among the 512 measured WAFs;
* estimated vs measured WAF per configuration: the chain model's estimate
  (and the flow model's) of the forced configuration, averaged over its
  reconfigurations after the warm-up, against the run's steady WAF; their
  rank correlation says whether the model orders configurations right.
"""

from __future__ import annotations

import os
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from .api import Device, replay
from .progress import Progress

WORKLOADS = ["zipf:1.0", "hotcold:0.9:0.1", "phase"]
SETTINGS = {"logical_blocks": 1 << 18, "drive_writes": 8.0, "warmup_drive_writes": 2.0, "segment_blocks": 256,
            "op": 0.10, "victim": "cost-benefit", "seed": 1}
QUICK = {"logical_blocks": 1 << 14, "drive_writes": 4.0, "warmup_drive_writes": 1.5, "segment_blocks": 16}
#: A few configurations for --quick: one group, ten, and splits in between.
QUICK_MASKS = [0, 1, 0b11, 0b1001, 0b100100, 0b10101, 0b1111, 0b111111111]
MASKS = 512


def groups_of(mask: int) -> int:
    return bin(mask).count("1") + 1


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _one(args: tuple[str, int | None, dict[str, Any]]) -> dict[str, Any]:
    """One replay: DOGI with ``mask`` forced (``None``: searched)."""
    workload, mask, s = args
    dev = Device(logical_blocks=s["logical_blocks"], op=s["op"], segment_blocks=s["segment_blocks"],
                 warmup_drive_writes=s["warmup_drive_writes"])
    params = {} if mask is None else {"mask": mask}
    row: dict[str, Any] = {"workload": workload, "mask": mask}
    try:
        r = replay("dogi", workload, device=dev, victim=s["victim"], seed=s["seed"], params=params,
                   writes=int(s["drive_writes"] * s["logical_blocks"]))
    except Exception as e:  # one configuration that cannot run is reported, not fatal
        row["error"] = str(e)
        return row
    state = r.policy_state or {}
    warm = s["warmup_drive_writes"] * s["logical_blocks"]
    hist = [h for h in state.get("configurations", []) if h.get("model_on")]
    start = min((h["time"] for h in hist), default=0)
    steady = [h for h in hist if h["time"] - start >= 0 and h["time"] >= warm] or hist

    def avg(key: str) -> float | None:
        return _mean([h[key] for h in steady if h.get(key) is not None])

    row.update({
        "steady_waf": r.steady_waf,
        "estimated_waf": avg("estimated_waf"),
        "estimated_waf_chain": avg("estimated_waf_chain"),
        "estimated_waf_flow": avg("estimated_waf_flow"),
        "measured_waf_per_configuration": avg("measured_waf"),
        "picks": [h.get("model_pick") for h in steady],
        "masks": [h.get("mask") for h in steady],
        "victims": state.get("victims"),
        "training_seconds": (r.training or {}).get("seconds"),
    })
    return row


def _spearman(a: list[float], b: list[float]) -> float | None:
    """Rank correlation (average ranks for ties)."""
    if len(a) < 3:
        return None

    def ranks(v: list[float]) -> list[float]:
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2
            i = j + 1
        return r

    ra, rb = ranks(a), ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra) ** 0.5
    vb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return cov / (va * vb) if va and vb else None


def summarize(workload: str, searched: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The Fig. 13 figures of one workload."""
    ok = [r for r in rows if r.get("steady_waf") is not None]
    by_mask = {r["mask"]: r for r in ok}
    ranked = sorted(ok, key=lambda r: r["steady_waf"])
    best = ranked[0] if ranked else None
    picks = [p for p in searched.get("picks", []) if p is not None]
    pick = Counter(picks).most_common(1)[0][0] if picks else None
    rank = next((i + 1 for i, r in enumerate(ranked) if r["mask"] == pick), None)
    per_k: dict[int, dict[str, Any]] = {}
    for r in ok:
        k = groups_of(r["mask"])
        if k not in per_k or r["steady_waf"] < per_k[k]["steady_waf"]:
            per_k[k] = r
    out: dict[str, Any] = {
        "workload": workload,
        "configurations": len(ok),
        "failed": len(rows) - len(ok),
        "best_mask": best and best["mask"],
        "best_groups": best and groups_of(best["mask"]),
        "best_waf": best and best["steady_waf"],
        "searched_waf": searched.get("steady_waf"),
        "pick": pick,
        "pick_groups": None if pick is None else groups_of(pick),
        "pick_waf": by_mask.get(pick, {}).get("steady_waf"),
        "pick_rank": rank,
        "ten_groups_waf": by_mask.get(MASKS - 1, {}).get("steady_waf"),
        "best_per_groups": {k: {"mask": v["mask"], "steady_waf": v["steady_waf"],
                                "estimated_waf": v.get("estimated_waf")} for k, v in sorted(per_k.items())},
    }
    for model in ("chain", "flow"):
        pairs = [(r[f"estimated_waf_{model}"], r["steady_waf"]) for r in ok if r.get(f"estimated_waf_{model}")]
        out[f"spearman_{model}"] = _spearman([p[0] for p in pairs], [p[1] for p in pairs])
        out[f"mean_abs_error_{model}"] = _mean([abs(e - m) / m for e, m in pairs])
        out[f"estimated_{model}"] = len(pairs)
    return out


#: The runner protocol of :mod:`wafer.reproduce`: the options this experiment cannot honour, and why.
REFUSED = {"seeds": "Fig. 13's method replays each of the 512 configurations once, on seed 1",
           "store": "its replays run on a process pool and are kept in memory, not in a store (a rerun starts "
                    "over)",
           "report": "its table ranks configurations, not policies; use --out FILE.json for its numbers"}


def runs(quick: bool) -> int:
    """Replays of the whole experiment."""
    return len(WORKLOADS) * (1 + (len(QUICK_MASKS) if quick else MASKS))


def work(quick: bool) -> int:
    """User writes of the whole experiment (``wafer reproduce --list`` scales its estimate by them)."""
    s = {**SETTINGS, **(QUICK if quick else {})}
    return runs(quick) * int(s["drive_writes"] * s["logical_blocks"])


def reproduce(options) -> dict[str, Any]:
    """The runner protocol of :mod:`wafer.reproduce` (quick, progress, jobs: worker processes)."""
    return run(quick=options.quick, progress=options.progress, workers=options.jobs)


def run(quick: bool = False, progress: bool = True, workers: int | None = None,
        masks: list[int] | None = None, workloads: list[str] | None = None) -> dict[str, Any]:
    s = dict(SETTINGS)
    if quick:
        s.update(QUICK)
    masks = masks if masks is not None else (QUICK_MASKS if quick else list(range(MASKS)))
    workloads = workloads or WORKLOADS
    jobs = [(w, None, s) for w in workloads] + [(w, m, s) for w in workloads for m in masks]
    bar = Progress(len(jobs), "reproduce dogi-configs", enabled=progress)
    rows: list[dict[str, Any]] = []
    with ProcessPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
        for row in pool.map(_one, jobs, chunksize=1):
            rows.append(row)
            bar.update(len(rows))
    bar.close()
    summaries = []
    for w in workloads:
        searched = next(r for r in rows if r["workload"] == w and r["mask"] is None)
        summaries.append(summarize(w, searched, [r for r in rows if r["workload"] == w and r["mask"] is not None]))
    return {"experiment": "dogi-configs", "description": __doc__.strip().splitlines()[0], "quick": quick,
            "settings": s, "masks": masks, "summaries": summaries, "results": rows}


def _f(x: float | None, fmt: str = ".3f") -> str:
    return "-" if x is None else format(x, fmt)


def markdown(out: dict[str, Any]) -> str:
    lines = ["| workload | best (K, mask) | best WAF | DOGI searched WAF | model's pick (K, mask) | pick's WAF | "
             "pick's rank | ten groups WAF | Spearman est./meas. (chain, flow) | mean abs. error (chain, flow) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    n = len(out["masks"])
    for s in out["summaries"]:
        lines.append(
            f"| `{s['workload']}` | {s['best_groups']}, {s['best_mask']} | {_f(s['best_waf'])} | "
            f"{_f(s['searched_waf'])} | {s['pick_groups']}, {s['pick']} | {_f(s['pick_waf'])} | "
            f"{s['pick_rank']} of {n} | {_f(s['ten_groups_waf'])} | "
            f"{_f(s['spearman_chain'], '.2f')}, {_f(s['spearman_flow'], '.2f')} | "
            f"{_f(s['mean_abs_error_chain'], '.1%')}, {_f(s['mean_abs_error_flow'], '.1%')} |")
    lines.append("")
    lines.append("Best configuration per group count K (steady WAF; the chain model's estimate in brackets):\n")
    ks = sorted({int(k) for s in out["summaries"] for k in s["best_per_groups"]})
    lines.append("| workload | " + " | ".join(f"K={k}" for k in ks) + " |")
    lines.append("|---|" + "---|" * len(ks))
    for s in out["summaries"]:
        cells = []
        for k in ks:
            v = s["best_per_groups"].get(k) or s["best_per_groups"].get(str(k))
            cells.append("-" if not v else f"{_f(v['steady_waf'])} ({_f(v['estimated_waf'])})")
        lines.append(f"| `{s['workload']}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)
