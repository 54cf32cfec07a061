"""``wafer reproduce autoblox``: AutoBlox's claims (MICRO'23 §4) on
synthetic stand-ins for its workload categories. The paper's traces
(database, web search, cloud storage, KV store, batch analytics from
production systems) are not reachable here; each category below is a
synthetic workload with that category's shape (request sizes, read share,
locality, burstiness), two seeds of each (one to cluster, one to validate).

Checked, each printed as holds / fails with its numbers:

1. Clustering separates the categories: the share of a category's held-out
   windows that land in its own cluster (the paper: 95%).
2. A configuration tuned for a target beats the reference (``intel750``)
   on it (grade > 0, latency or throughput faster) without slowing the
   other categories by more than 10% (the search's own root rule, §3.4).
3. beta = 0 against beta = 0.1 (Fig. 12): ignoring the other categories
   gives the target at least as much and the others no more.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

#: Category -> synthetic workload (timestamps and reads matter to the timing model and the clustering).
CATEGORIES: dict[str, str] = {
    "database": "zipf:0.9,size=1-2,reads=0.7,iops=20000",
    "analytics": "seq,size=64-256,reads=0.8,iops=1500",
    "cloud-storage": "hotcold:0.8:0.2,size=16-64,reads=0.3,iops=4000,arrivals=mmpp",
    "kv-store": "uniform,size=1,reads=0.5,iops=40000",
}


def _claim(claims: list[dict], n: int, text: str, holds: bool | None, numbers: str) -> None:
    claims.append({"n": n, "claim": text, "status": {True: "holds", False: "fails", None: "undecided"}[holds],
                   "numbers": numbers})


#: The runner protocol of :mod:`wafer.reproduce`: the options this experiment cannot honour, and why.
REFUSED = {"seeds": "it clusters on seed 1 and validates on seed 2 by design (one tuning per target)",
           "report": "its results are tuning searches, not runs of a sweep; use --out FILE.json for its numbers"}


def reproduce(options) -> dict[str, Any]:
    """The runner protocol of :mod:`wafer.reproduce`: ``jobs`` validations at a time, ``store`` the path of its
    AutoDB (tuning's SQLite; one file per target and beta beside it; a rerun resumes)."""
    return run(quick=options.quick, progress=options.progress, jobs=options.jobs, db=options.store)


def run(quick: bool = False, progress: bool = True, evaluator: Any = None, db: str | Path | None = None,
        jobs: int | None = None) -> dict[str, Any]:
    from .tune import clustering as C
    from .tune.runner import _windows
    from .tune.runner import run as tune

    t0 = time.perf_counter()
    blocks = 1 << 14 if quick else 1 << 20
    writes = 20_000 if quick else 200_000
    iters = 8 if quick else 40
    targets = ["database", "analytics"] if quick else list(CATEGORIES)
    claims: list[dict] = []

    # 1. Clustering: fit on seed 1's windows, score seed 2's.
    train = {c: _windows(s, logical_blocks=blocks, seed=1) for c, s in CATEGORIES.items()}
    held = {c: _windows(s, logical_blocks=blocks, seed=2) for c, s in CATEGORIES.items()}
    cl = C.Clustering.fit(train, seed=1)
    share = cl.own_cluster_share(held)
    mean_share = float(np.mean(list(share.values())))
    _claim(claims, 1, "clustering puts held-out windows in their category's cluster (paper: 95%)",
           mean_share >= 0.95, ", ".join(f"{c} {v:.0%}" for c, v in share.items()) + f"; mean {mean_share:.1%}")

    # 2. Tune each target against the others.
    tmp = Path(db) if db else Path(tempfile.mkdtemp(prefix="wafer-autoblox-")) / "autodb.sqlite"
    rows = []
    for t in targets:
        others = {c: [s] for c, s in CATEGORIES.items() if c != t}
        per_beta = {}
        for beta in ((0.1, 0.0) if t == targets[0] else (0.1,)):
            r = tune(CATEGORIES[t], others, db=tmp.with_name(f"{tmp.stem}-{t}-{beta}{tmp.suffix}"),
                     max_iterations=iters, beta=beta, evaluator=evaluator, writes=writes, logical_blocks=blocks,
                     progress=progress, jobs=jobs, whole_drive=not quick, seeds=1 if quick else 3)
            s = r.scores
            per_beta[beta] = {**s, "best": r.best}
            rows.append({"target": t, "beta": beta, "grade": s["grade"],
                         "target_latency_speedup": s["target_latency_speedup"],
                         "target_throughput_speedup": s["target_throughput_speedup"],
                         "nontarget_latency_speedup": s["nontarget_latency_speedup"],
                         "nontarget_throughput_speedup": s["nontarget_throughput_speedup"],
                         "significant": r.significant, "grade_ci95": s.get("grade_ci95"),
                         "iterations": len(r.history), "validations": r.validations,
                         "seconds_per_validation": r.seconds_per_validation, "seconds": r.seconds,
                         "changed": [n for n, _, _ in r.changed()],
                         "power_w": r.metrics.get("tuned", {}).get("power_w"),
                         "reference_power_w": r.metrics.get("reference", {}).get("power_w")})
        if 0.0 in per_beta:
            a, b = per_beta[0.0], per_beta[0.1]
            ta = a["target_latency_speedup"] * a["target_throughput_speedup"]
            tb = b["target_latency_speedup"] * b["target_throughput_speedup"]
            na = a["nontarget_latency_speedup"] * a["nontarget_throughput_speedup"]
            nb = b["nontarget_latency_speedup"] * b["nontarget_throughput_speedup"]
            same = a["best"] == b["best"]  # both searches ended at one configuration: no trade-off to see
            # Fig. 12 (and §4.4): beta = 0.1 is the sweet spot, the most
            # improvement for the target and for the others alike.
            _claim(claims, 3, f"beta = 0.1 does at least as well as beta = 0 on the target ({t}) and on the others "
                              "(Fig. 12's sweet spot)",
                   None if same else tb >= ta * 0.999 and nb >= na * 0.999,
                   f"target lat x thpt speedup {ta:.3f} (beta 0) vs {tb:.3f} (0.1); others {na:.3f} vs {nb:.3f}")
    main = [r for r in rows if r["beta"] == 0.1]
    ok = [r["grade"] > 0 and max(r["target_latency_speedup"], r["target_throughput_speedup"]) >= 1.05
          and min(r["nontarget_latency_speedup"], r["nontarget_throughput_speedup"]) >= 0.9 for r in main]
    _claim(claims, 2, "a configuration tuned for a target beats intel750 on it by at least 5% without slowing the "
                      "others by > 10%",
           all(ok), "; ".join(f"{r['target']}: latency {r['target_latency_speedup']:.2f}x, throughput "
                              f"{r['target_throughput_speedup']:.2f}x, others {r['nontarget_latency_speedup']:.2f}x / "
                              f"{r['nontarget_throughput_speedup']:.2f}x" for r in main))
    claims.sort(key=lambda c: c["n"])
    return {"experiment": "autoblox", "quick": quick, "categories": CATEGORIES, "cluster_share": share,
            "results": rows, "claims": claims, "settings": {"logical_blocks": blocks, "writes": writes,
                                                             "max_iterations": iters, "reference": "intel750"},
            "seconds": time.perf_counter() - t0}


def markdown(out: dict[str, Any]) -> str:
    lines = ["#### AutoBlox on synthetic workload categories (reference `intel750`)\n",
             "| category | workload | own-cluster share |", "|---|---|---|"]
    lines += [f"| {c} | `{s}` | {out['cluster_share'][c]:.0%} |" for c, s in out["categories"].items()]
    lines += ["", "| target | beta | grade | target latency | target throughput | others latency | others throughput "
              "| iterations | s / validation | changed |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in out["results"]:
        spv = r["seconds_per_validation"]
        lines.append(f"| {r['target']} | {r['beta']} | {r['grade']:+.3f} | {r['target_latency_speedup']:.2f}x | "
                     f"{r['target_throughput_speedup']:.2f}x | {r['nontarget_latency_speedup']:.2f}x | "
                     f"{r['nontarget_throughput_speedup']:.2f}x | {r['iterations']} | "
                     f"{'-' if spv is None else f'{spv:.2f}'} | {', '.join(r['changed'][:6])} |")
    lines.append("")
    lines += [f"* **{c['status'].upper()}**: {c['claim']} — {c['numbers']}" for c in out["claims"]]
    lines.append(f"\n{out['seconds']:.0f} s in all.")
    return "\n".join(lines)
