"""``wafer reproduce NAME``: the experiments behind docs/FIDELITY.md, each one
command with its seed inside and structured output (JSON + a Markdown table),
so anyone can re-run them and compare."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ._core import SimulationError
from .api import Device, policies, replay
from .progress import Progress


@dataclass
class Experiment:
    """A sweep: every policy x victim x workload x OP on one device size."""

    description: str
    policies: list[str]
    victims: list[str]
    workloads: list[str]
    ops: list[float]
    logical_blocks: int = 1 << 18
    drive_writes: float = 8.0
    warmup_drive_writes: float = 2.0
    segment_blocks: int = 256
    seed: int = 1
    accuracy: bool = False
    quick: dict[str, Any] = field(default_factory=lambda: {"logical_blocks": 1 << 14, "drive_writes": 3.0,
                                                            "warmup_drive_writes": 1.0, "segment_blocks": 8})


EXPERIMENTS = {
    "rule-based": Experiment(
        description="Rule-based placement (the baselines of DOGI Table 1 and Shiro §V): steady-state WAF of base, "
                    "two-r, sepbit, midas, autostream "
                    "(and equal-partition) under greedy and cost-benefit, five synthetic workloads, 7/10/28% OP, "
                    "fixed-capacity SSD, prefilled, 8 drive-writes of which 2 are warm-up.",
        policies=["base", "two-r", "sepbit", "midas", "autostream", "equal-partition"],
        victims=["greedy", "cost-benefit"],
        workloads=["uniform", "zipf:0.8", "zipf:1.0", "hotcold:0.9:0.1", "phase"],
        ops=[0.07, 0.10, 0.28],
    ),
    "oracle": Experiment(
        description="Future knowledge (DOGI §3, Figs. 2-4): NoDaP (searched per workload and OP) against the simple "
                    "oracles, "
                    "the rule-based policies and their oracle-assisted variants (+nu: NoDaP user placement, +ngc: "
                    "NoDaP GC relocation), with the accuracy of every lifetime prediction; greedy fallback victims, "
                    "the rule-based experiment's workloads, device and OPs.",
        policies=["nodap", "oracle-sort", "oracle-hotcold", "sepbit", "sepbit+ngc", "sepbit+nu+ngc", "midas",
                  "midas+ngc", "midas+nu"],
        victims=["greedy"],
        workloads=["uniform", "zipf:0.8", "zipf:1.0", "hotcold:0.9:0.1", "phase"],
        ops=[0.07, 0.10, 0.28],
        accuracy=True,
    ),
    "learned": Experiment(
        description="Learned placement (DOGI §5.2-5.3, Figs. 10-14): WAF and lifetime-prediction accuracy of base, "
                    "sepbit, midas, phftl, ml-dt, DOGI and its ablations (+User, +Grp; +GC is DOGI) and NoDaP "
                    "(searched), with online training; FIO-like zipf:1.0, a varmail-like dynamic workload "
                    "(phase: the hot set moves), hotcold and uniform; cost-benefit victims (the paper's baselines; "
                    "MiDAS, DOGI and NoDaP choose their own), 10% OP (the paper's) and 28%.",
        policies=["base", "sepbit", "midas", "phftl", "ml-dt", "dogi+User", "dogi+Grp", "dogi", "nodap"],
        victims=["cost-benefit"],
        workloads=["zipf:1.0", "phase", "hotcold:0.9:0.1", "uniform"],
        ops=[0.10, 0.28],
        accuracy=True,
    ),
}


# Timing mode's study has its own runner (wafer/timing_study.py).
from .timing_study import TIMING  # noqa: E402

EXPERIMENTS["timing"] = TIMING


def run(name: str, quick: bool = False, progress: bool = True) -> dict[str, Any]:
    """Run experiment ``name``; policies not registered in this build are listed as missing."""
    e = EXPERIMENTS[name]
    known = {p["name"] for p in policies()}
    pols = [p for p in e.policies if p.split("+")[0] in known]
    size = dict(logical_blocks=e.logical_blocks, drive_writes=e.drive_writes,
                warmup_drive_writes=e.warmup_drive_writes, segment_blocks=e.segment_blocks)
    if quick:
        size.update(e.quick)
    total = len(pols) * len(e.victims) * len(e.workloads) * len(e.ops)
    bar = Progress(total, f"reproduce {name}", enabled=progress)
    rows = []
    for op in e.ops:
        for victim in e.victims:
            for workload in e.workloads:
                for policy in pols:
                    dev = Device(logical_blocks=size["logical_blocks"], op=op, segment_blocks=size["segment_blocks"],
                                 warmup_drive_writes=size["warmup_drive_writes"])
                    row = {"op": op, "victim": victim, "workload": workload, "policy": policy}
                    try:
                        r = replay(policy, workload, device=dev, victim=victim, seed=e.seed,
                                   writes=int(size["drive_writes"] * size["logical_blocks"]), accuracy=e.accuracy)
                    except SimulationError as err:
                        # One configuration that cannot run must not end the sweep: it is reported.
                        rows.append({**row, "waf": None, "steady_waf": None, "error": str(err)})
                        bar.update(len(rows))
                        continue
                    row.update({"waf": r.waf, "steady_waf": r.steady_waf,
                                "mean_victim_valid_ratio": r.mean_victim_valid_ratio})
                    if e.accuracy:
                        acc = r.accuracy or {}
                        row["user_accuracy"] = (acc.get("user") or {}).get("accuracy")
                        row["gc_accuracy"] = (acc.get("gc") or {}).get("accuracy")
                    if r.training:
                        row["training_seconds"] = r.training["seconds"]
                        row["trainings"] = r.training["trainings"]
                    if "nodap_search" in r.raw:
                        row["nodap"] = r.raw["nodap_search"]
                    rows.append(row)
                    bar.update(len(rows))
    bar.close()
    return {"experiment": name, "description": e.description, "quick": quick, "settings": size, "seed": e.seed,
            "policies": pols, "missing_policies": [p for p in e.policies if p.split("+")[0] not in known], "results": rows}


def _table(lines: list[str], title: str, cols: list[str], workloads: list[str], cell) -> None:
    """A Markdown table: workloads down, ``cols`` across, ``cell(workload, col)`` in each cell."""
    lines.append(f"#### {title}\n")
    lines.append("| workload | " + " | ".join(f"`{p}`" for p in cols) + " |")
    lines.append("|---|" + "---|" * len(cols))
    for w in workloads:
        lines.append(f"| `{w}` | " + " | ".join(cell(w, p) for p in cols) + " |")
    lines.append("")


def markdown(out: dict[str, Any]) -> str:
    """One table per (OP, victim): workloads down, policies across, steady WAF, the lowest in bold;
    then the same for the prediction accuracies, if the experiment measured them."""
    lines: list[str] = []
    pols = out["policies"]
    results = out["results"]
    by = {(r["op"], r["victim"], r["workload"], r["policy"]): r["steady_waf"] for r in results}
    failed = {(r["op"], r["victim"], r["workload"], r["policy"]) for r in results if r.get("error")}
    ops = sorted({r["op"] for r in results})
    victims = list(dict.fromkeys(r["victim"] for r in results))
    workloads = list(dict.fromkeys(r["workload"] for r in results))
    for op in ops:
        for v in victims:
            best = {w: min((x for p in pols if (x := by.get((op, v, w, p))) is not None), default=None)
                    for w in workloads}

            def waf(w: str, p: str, op=op, v=v, best=best) -> str:
                x = by.get((op, v, w, p))
                if (op, v, w, p) in failed:
                    return "failed"
                return "-" if x is None else (f"**{x:.3f}**" if x == best[w] else f"{x:.3f}")

            _table(lines, f"OP {op:.0%}, victim `{v}` (steady-state WAF)", pols, workloads, waf)
    for key, label in (("user_accuracy", "user-write"), ("gc_accuracy", "GC-write")):
        acc = {(r["op"], r["victim"], r["workload"], r["policy"]): r.get(key) for r in results}
        cols = [p for p in pols if any(x is not None for k, x in acc.items() if k[3] == p)]
        if not cols:
            continue
        for op in ops:
            for v in victims:
                def fraction(w: str, p: str, op=op, v=v, acc=acc) -> str:
                    x = acc.get((op, v, w, p))
                    return "-" if x is None else f"{x:.3f}"

                _table(lines, f"OP {op:.0%}, victim `{v}` ({label} lifetime-prediction accuracy)", cols, workloads,
                       fraction)
    errors = [r for r in out["results"] if r.get("error")]
    if errors:
        lines.append("Runs that could not complete:\n")
        lines += [f"* `{r['policy']}` on `{r['workload']}`, OP {r['op']:.0%}, `{r['victim']}`: {r['error']}"
                  for r in errors]
        lines.append("")
    if out["missing_policies"]:
        lines.append("Not yet implemented, so not in the tables: " + ", ".join(f"`{p}`" for p in out["missing_policies"]))
    return "\n".join(lines)


def main(name: str, quick: bool, as_json: bool, out_file: str | None, progress: bool) -> int:
    if hasattr(EXPERIMENTS[name], "main"):
        return EXPERIMENTS[name].main(quick, as_json, out_file, progress)
    out = run(name, quick=quick, progress=progress)
    if out_file:
        with open(out_file, "w") as f:
            json.dump(out, f, indent=1)
    print(json.dumps(out) if as_json else markdown(out))
    return 0
