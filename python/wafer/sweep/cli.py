"""``wafer sweep``: run a study file, look at a store, export it."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

EXAMPLE = """\
# A wafer study: every combination of the lists below is one job (replay).
# Run it with `wafer sweep run study.toml` (results in study.sqlite; rerun to resume).
name = "skew"
description = "SepBIT against 2R and Base on two Zipf skews, two victim selectors, three OPs"
workloads = ["zipf:0.8", "zipf:1.0"]          # synthetic workload specs (wafer replay --help)
# traces = ["hm_0.csv.gz", { path = "web.csv", format = "msr", label = "web" }]
victims = ["greedy", "cost-benefit"]
seeds = 3                                     # seeds 1, 2, 3 (or a list: [1, 7, 42])
drive_writes = 4                              # or writes = 1000000 (user blocks); a list sweeps it
metrics = ["steady_waf", "waf"]               # add "user_accuracy" to score lifetime predictions

policies = [
  "base",
  "two-r",
  { name = "sepbit", grid = { window_segments = [8, 16] } },   # a grid sweeps parameters
]

[[devices]]
name = "64MiB"
capacity = "64MiB"                            # any wafer.Device field
segment_blocks = 64
op = [0.07, 0.10, 0.28]                       # a list sweeps the field
"""

EPILOG = """\
examples:
  wafer sweep example > study.toml               a commented study file to start from
  wafer sweep run study.toml                     all cores; results in study.sqlite; rerun to resume
  wafer sweep run study.toml --jobs 4 --store /data/skew.sqlite --report skew-report/
  wafer sweep run study.toml --backend ray --address auto     on a running Ray cluster
  wafer sweep run study.toml --dry-run           list the jobs without running them
  wafer sweep status study.sqlite                done / failed / running / orphaned, with the errors
  wafer sweep export study.sqlite -o runs.parquet              one row per job (or .csv)
  wafer sweep export study.sqlite -o windows.csv --timeseries  one row per job x window
  wafer report study.sqlite -o report/           HTML page and paper figures

A job already done in the store is skipped; a failed one keeps its error and
partial results and is skipped too unless --retry-failed. A job's id hashes
its whole configuration and wafer's version, so changing a parameter or
upgrading wafer runs it anew. Two sweeps may share a store: each takes jobs
the other has not claimed.
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    fmt = argparse.RawDescriptionHelpFormatter
    s = sub.add_parser("sweep", help="run a study (TOML): many replays on all cores or a Ray cluster, resumable",
                       formatter_class=fmt, epilog=EPILOG,
                       description="A study file names workloads or traces, policies (with parameter grids), "
                                   "victim selectors, devices, seeds and lengths; every combination is a job. "
                                   "Results go to an SQLite store, one row per job.")
    ss = s.add_subparsers(dest="sweep_command", metavar="SUBCOMMAND", required=True)

    r = ss.add_parser("run", help="run a study's jobs that the store does not have yet", formatter_class=fmt,
                      epilog=EPILOG)
    r.add_argument("study", metavar="STUDY.toml", help="the study file (`wafer sweep example` prints one)")
    r.add_argument("--store", metavar="FILE", help="results store (default: STUDY.sqlite beside the study file)")
    r.add_argument("--jobs", "-j", type=int, metavar="N", help="worker processes (default: all cores)")
    r.add_argument("--backend", choices=["local", "ray"], default="local",
                   help="local: a process pool on this machine (default); ray: a Ray cluster")
    r.add_argument("--address", metavar="ADDR",
                   help="Ray cluster address (ray://host:10001, host:6379 or auto); default: start a local one")
    r.add_argument("--retry-failed", action="store_true", help="run failed jobs again (default: keep their error)")
    r.add_argument("--dry-run", action="store_true", help="list the jobs and whether the store has them; run nothing")
    r.add_argument("--report", metavar="DIR", help="then write the study's report into DIR")
    r.add_argument("--json", action="store_true", help="print the results as JSON (one object per job)")
    r.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    r.set_defaults(func=cmd_run)

    st = ss.add_parser("status", help="jobs per status in a store, failed jobs' errors, running jobs "
                                      "(orphaned: their sweep is gone)",
                       formatter_class=fmt, epilog=EPILOG)
    st.add_argument("store", metavar="STORE", help="a results store (.sqlite)")
    st.add_argument("--study", metavar="NAME", help="only this study (a store may hold several)")
    st.add_argument("--json", action="store_true", help="print JSON")
    st.set_defaults(func=cmd_status)

    ex = ss.add_parser("export", help="write a store's jobs (or time series) as Parquet or CSV",
                       formatter_class=fmt, epilog=EPILOG)
    ex.add_argument("store", metavar="STORE", help="a results store (.sqlite)")
    ex.add_argument("--out", "-o", required=True, metavar="FILE", help="FILE.parquet or FILE.csv")
    ex.add_argument("--timeseries", action="store_true", help="one row per job x window instead of per job")
    ex.add_argument("--study", metavar="NAME", help="only this study")
    ex.set_defaults(func=cmd_export)

    e = ss.add_parser("example", help="print a commented example study file", formatter_class=fmt, epilog=EPILOG)
    e.set_defaults(func=lambda a: print(EXAMPLE, end="") or 0)


def _open_existing(path: str):
    """The store at ``path``, which must be one (never created or changed
    into one); ConfigError naming the file and why otherwise."""
    from ..store import Store

    return Store(path, create=False)


def cell_table(df, metrics: list[str], limit: int | None = 60) -> str:
    """Mean and 95% interval over seeds of each metric, one line per cell
    (workload, device, victim, length, policy), done jobs only."""
    from ..stats import fmt_interval, mean_interval

    done = df[df.status == "done"]
    if done.empty:
        return "(no finished jobs)"
    keys = [k for k in ("workload", "device", "victim", "length", "policy") if done[k].nunique() > 1 or k == "policy"]
    head = [*keys, "seeds", *metrics]
    rows = []
    for key, g in done.groupby(keys, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        cells = [str(k) for k in key] + [str(len(g))]
        for m in metrics:
            _, mean, half = mean_interval(g[m].tolist())
            cells.append(fmt_interval(mean, half))
        rows.append(cells)
    more = len(rows) - limit if limit and len(rows) > limit else 0
    rows = rows[:limit] if more else rows
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    out = ["  ".join(c.ljust(w) if i < len(keys) else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
           for r in [head, ["-" * w for w in widths], *rows]]
    if more:
        out.append(f"... {more} more cells (wafer sweep export STORE -o FILE.csv)")
    out.append("mean ± half-width of the 95% interval over seeds (Student's t); one seed: the value alone.")
    return "\n".join(out)


def cmd_run(a: argparse.Namespace) -> int:
    from ..store import sqlite_errors
    from . import default_store, load

    study = load(a.study)  # the whole study is checked before the store is opened
    path = Path(a.store) if a.store else default_store(study, a.study)
    jobs = study.jobs()
    with sqlite_errors(path):
        return _run(a, study, path, jobs)


def _run(a: argparse.Namespace, study, path: Path, jobs: list) -> int:
    from ..store import Store
    from . import run_study

    if a.dry_run:
        if path.exists() and path.stat().st_size:
            with Store(path) as store:
                known = store.statuses(j.id for j in jobs)
        else:
            known = {}
        if a.json:
            print(json.dumps([{"job": j.id, **j.labels, "status": known.get(j.id)} for j in jobs]))
            return 0
        for j in jobs:
            lab = j.labels
            print(f"{j.id}  {known.get(j.id) or 'new':<7}  {lab['workload']}  {lab['device']}  {lab['policy']}  "
                  f"{lab['victim']}  seed {lab['seed']}  {lab['length']}")
        print(f"{len(jobs)} jobs; {sum(1 for j in jobs if known.get(j.id) == 'done')} done in {path}")
        return 0
    with Store(path) as store:
        if not (a.quiet or a.json):
            print(f"study {study.name}: {len(jobs)} jobs; store {path}", flush=True)
        tally = run_study(study, store, jobs=a.jobs, backend=a.backend, address=a.address,
                          retry_failed=a.retry_failed, progress=not a.quiet)
        df = store.to_pandas([j.id for j in jobs])
        if a.report:
            from ..report import write_report

            page = write_report(store, a.report, study=study.name)
    # A study with a failed job exits 1 (its row and `wafer sweep status` say why), so scripts notice.
    any_failed = 1 if (df.status == "failed").any() else 0
    if a.json:
        print(df.to_json(orient="records"))
        return any_failed
    rate = tally.ran / tally.seconds if tally.seconds > 0 else 0.0
    print(f"{tally.ran} ran ({tally.failed} failed), {tally.skipped} already in the store, "
          f"{tally.busy} running in another sweep; {tally.seconds:.1f} s, {rate:.1f} jobs/s\n")
    print(cell_table(df, study.metrics))
    failed = df[df.status == "failed"]
    for _, r in failed.head(10).iterrows():
        print(f"failed ({r.policy}/{r.victim} on {r.workload}, {r.device}, seed {r.seed}): "
              f"{str(r.error).splitlines()[0]}")
    if len(failed) > 10:
        print(f"... and {len(failed) - 10} more failed jobs (wafer sweep status {path})")
    if a.report:
        print(f"\nreport: {page}")
    return any_failed


def cmd_status(a: argparse.Namespace) -> int:
    from ..store import sqlite_errors

    with sqlite_errors(a.store), _open_existing(a.store) as store:
        counts = store.counts(a.study)
        df = store.to_pandas(study=a.study)
        running = store.running(a.study)
        studies = sorted(store.studies())
    # A job marked running whose sweep is gone (killed) is orphaned: the next sweep runs it again.
    counts["orphaned"] = sum(r["orphaned"] for r in running)
    counts["running"] -= counts["orphaned"]
    failed = df[df.status == "failed"]
    out: dict[str, Any] = {"store": a.store, "studies": studies, "jobs": len(df), **counts,
                           "failed_jobs": [{"job": r.job, "policy": r.policy, "victim": r.victim,
                                            "workload": r.workload, "device": r.device, "seed": int(r.seed),
                                            "error": r.error} for r in failed.itertuples()],
                           "running_jobs": running}
    done = df[df.status == "done"]
    out["job_seconds"] = float(done.seconds.sum()) if len(done) else 0.0
    if a.json:
        print(json.dumps(out))
        return 0
    orphaned = f", {counts['orphaned']} orphaned" if counts["orphaned"] else ""
    print(f"{a.store}: {len(df)} jobs of {', '.join(studies) or 'no study'}: "
          f"{counts['done']} done, {counts['failed']} failed, {counts['running']} running{orphaned}")
    if len(done):
        print(f"  {out['job_seconds']:.1f} s of job time; versions {', '.join(sorted(done.version.unique()))}")
    now = time.time()
    for r in running:
        age = f"{now - r['heartbeat']:.0f} s ago" if r["heartbeat"] else "never"
        if r["orphaned"]:
            print(f"  orphaned {r['job']} by {r['owner']} (its sweep is gone; last heartbeat {age}; "
                  "the next `wafer sweep run` runs it again)")
        else:
            print(f"  running {r['job']} by {r['owner']} (last heartbeat {age})")
    for r in out["failed_jobs"][:20]:
        print(f"  failed {r['job']} {r['policy']}/{r['victim']} on {r['workload']}, {r['device']}, seed {r['seed']}: "
              f"{str(r['error']).splitlines()[0]}")
    if len(out["failed_jobs"]) > 20:
        print(f"  ... {len(out['failed_jobs']) - 20} more failed (--json lists all)")
    return 0


def cmd_export(a: argparse.Namespace) -> int:
    from ..store import sqlite_errors

    with sqlite_errors(a.store), _open_existing(a.store) as store:
        path = store.export(a.out, timeseries=a.timeseries, study=a.study)
    print(f"wrote {path}")
    return 0
