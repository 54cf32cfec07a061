"""``wafer demo``: one policy or more of every family on a skewed workload,
run as a small sweep on all cores, with the report.

The default finishes in well under a minute on two cores: a 256 MiB device
(64Ki blocks), 4 drive-writes, seven policies (no separation: base;
rule-based: two-r, sepbit, midas; learned: dogi; oracles: nodap,
oracle-sort) under greedy and cost-benefit victims. ``--full`` runs every
registered policy on a 4 GiB device (several minutes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .api import policies

WORKLOAD = "zipf:1.0"
#: The default demo's policies, the slowest first (a learned policy trains online).
POLICIES = ["dogi", "base", "two-r", "sepbit", "midas", "nodap", "oracle-sort"]
SLOW_FIRST = ("ml-dt", "phftl", "dogi")


def study(full: bool = False, quick: bool = False, logical_blocks: int | None = None, seeds: int = 1,
          seed: int = 1) -> dict[str, Any]:
    """The demo as a study (see :mod:`wafer.sweep.study`)."""
    if full:
        names = [p["name"] for p in policies()]
        names = [n for n in SLOW_FIRST if n in names] + [n for n in names if n not in SLOW_FIRST]
    else:
        names = list(POLICIES)
    blocks = logical_blocks or (1 << 14 if quick else 1 << 20 if full else 1 << 16)
    # Small segments on the small devices: enough of them for DOGI's 13 groups.
    segment = 32 if blocks <= 1 << 14 else 64 if blocks <= 1 << 18 else 256
    return {
        "name": "demo-full" if full else "demo",
        "description": f"every policy family on {WORKLOAD}: {blocks} blocks of 4 KiB, 10% OP, prefilled, "
                       "4 drive-writes (1 of warm-up), greedy and cost-benefit victims",
        "workloads": [WORKLOAD],
        "policies": [{"name": n, "params": {"search": False}, "label": n} if n == "nodap" else n for n in names],
        "victims": ["greedy", "cost-benefit"],
        "devices": [{"name": f"{blocks * 4096 >> 20}MiB", "logical_blocks": blocks, "op": 0.1,
                     "segment_blocks": segment}],
        "seeds": list(range(seed, seed + seeds)),
        "drive_writes": 4,
        "metrics": ["steady_waf", "waf", "user_accuracy", "gc_accuracy", "train_seconds"],
    }


def _report_has(out: Path, runs: int) -> bool:
    """Whether the report in ``out`` shows ``runs`` runs (its runs.csv)."""
    import pandas as pd

    try:
        return len(pd.read_csv(out / "runs.csv")) == runs
    except (OSError, ValueError):
        return False


def run(out: str | Path = "wafer-report", *, full: bool = False, quick: bool = False,
        logical_blocks: int | None = None, seeds: int = 1, seed: int = 1, jobs: int | None = None,
        progress: bool = True, static: bool = True):
    """Run the demo into ``out`` (its store ``out/demo.sqlite``: a second run
    reuses the results) and write the report; returns (report path, runs
    DataFrame, the store's path)."""
    from .report import write_report
    from .store import Store
    from .sweep import load, run_study

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    st = load(study(full=full, quick=quick, logical_blocks=logical_blocks, seeds=seeds, seed=seed))
    db_path = out / f"{st.name}.sqlite"
    page = out / "report.html"
    with Store(db_path) as db:
        tally = run_study(st, db, jobs=jobs, progress=progress)
        ids = [j.id for j in st.jobs()]
        df = db.to_pandas(ids)
        if tally.ran == 0 and page.exists() and _report_has(out, len(ids)):
            return page, df, db_path  # nothing new: the report of these runs is there
        notes = ["Oracles (nodap, oracle-sort) know every block's death time; nodap uses DOGI's BIR ladder here "
                 "(`wafer oracle search` finds the paper's searched configuration). dogi learns online: its "
                 "training time is part of its run. 'user acc' / 'GC acc': how often a policy's lifetime-class "
                 "prediction was right."]
        if len(st.seeds) == 1:
            notes.append("One seed: no intervals. `wafer demo --seeds 3` repeats every run with three seeds.")
        page = write_report(db, out, title=f"wafer demo: {WORKLOAD}", jobs=ids,
                            static_formats=("png", "svg") if static else (), notes=notes)
    return page, df, db_path
