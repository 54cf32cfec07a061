"""Sweeps: a study (TOML) expanded into jobs, run on a local process pool
or a Ray cluster, recorded in a results store, resumed when run again::

    import wafer.sweep
    df = wafer.sweep.run("study.toml", store="study.sqlite")   # one row per job (pandas)
    df.groupby(["workload", "policy"]).steady_waf.mean()

See :mod:`wafer.sweep.study` for the study format and :mod:`wafer.store`
for the store's tables.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..store import Store, new_owner
from .runner import JobContext, Tally, execute, make_backend, run_job
from .study import ACCURACY_METRICS, METRICS, Job, Study, load

__all__ = ["ACCURACY_METRICS", "METRICS", "Job", "JobContext", "Study", "Tally", "load", "run", "run_job",
           "run_study"]


def default_store(study: Study, source: Any = None) -> Path:
    """Where a study's results go by default: ``STUDY.sqlite`` beside a study
    file, else ``NAME.sqlite`` in the current folder."""
    if isinstance(source, (str, os.PathLike)):
        return Path(source).with_suffix(".sqlite")
    return Path(f"{study.name}.sqlite")


def run_study(
    study: Study,
    store: Store,
    *,
    jobs: int | None = None,
    backend: str = "local",
    address: str | None = None,
    retry_failed: bool = False,
    progress: bool = True,
    checkpoint_dir: str | os.PathLike | None = None,
) -> Tally:
    """Run ``study``'s jobs that ``store`` does not have (see :func:`run`); the tally says what happened.
    Long jobs keep checkpoints in ``checkpoint_dir`` (default: ``STORE.ckpt/`` beside a store file; see
    :class:`JobContext`), so a killed sweep's long jobs resume where they were."""
    store.register_study(study.name, study.source)
    todo = study.jobs()
    known = store.statuses(j.id for j in todo)
    annotate_traces([j for j in todo if known.get(j.id) != "done"], progress=progress)
    if checkpoint_dir is None and store.path is not None:
        checkpoint_dir = store.path.with_suffix(".ckpt")
    ctx = JobContext(checkpoint_dir=None if checkpoint_dir is None else str(checkpoint_dir))
    return execute(todo, store, lambda: make_backend(backend, jobs, address), owner=new_owner(), study=study.name,
                   retry_failed=retry_failed, progress=progress, ctx=ctx)


def _needs_annotation(spec: dict[str, Any]) -> bool:
    """Whether a job reads the lifetime annotation (accuracy, oracles, oracle-assisted variants)."""
    from ..api import describe_policy

    return bool(spec["accuracy"]) or describe_policy(spec["policy"])["needs_future"]


def annotate_traces(jobs: list[Job], progress: bool = False) -> int:
    """Annotate each trace the jobs need once, here, before the workers start:
    they then all read the cached annotation instead of writing the same
    cache file at once. Returns how many annotations were made or checked."""
    import sys

    from ..oracle import annotate
    from .study import replay_args

    seen: set[str] = set()
    for j in jobs:
        if not (j.spec.get("trace") and _needs_annotation(j.spec)):
            continue
        key = json.dumps([j.spec["trace"], j.spec["device"], j.spec.get("cache_dir")], sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        _, workload, kw = replay_args(j.spec)
        if progress and sys.stderr.isatty():
            sys.stderr.write(f"annotating block lifetimes of {j.spec['trace']['path']} (or reusing its cache) ...\n")
        kw = {k: v for k, v in kw.items() if k not in ("victim", "params", "accuracy")}
        annotate(workload, **kw)
    return len(seen)


def run(
    study: str | os.PathLike | dict[str, Any] | Study,
    store: str | os.PathLike | Store | None = None,
    *,
    jobs: int | None = None,
    backend: str = "local",
    address: str | None = None,
    retry_failed: bool = False,
    progress: bool = False,
):
    """Run a study and return its results as a pandas DataFrame, one row per
    job (dimensions, metrics, status, error; see :meth:`wafer.store.Store.to_pandas`).

    ``study`` is a TOML file, a dict of the same keys, or a :class:`Study`.
    Results go to ``store`` (a path, an open :class:`~wafer.store.Store`, or
    ``None`` for the default ``STUDY.sqlite`` beside a study file, or an
    in-memory store for a dict). Jobs already done there are skipped; failed
    ones too unless ``retry_failed``. ``jobs`` worker processes (default: all
    cores) on ``backend`` ``"local"`` (a process pool) or ``"ray"`` (a Ray
    cluster at ``address``, the one this process is connected to, or a new
    local one). The time series of every job are in
    ``Store(path).timeseries()``; ``Store(path).to_arrow()`` gives the same
    table as Arrow."""
    st = load(study)
    own = not isinstance(store, Store)
    if own:
        if store is None and isinstance(study, (str, os.PathLike)):
            store = default_store(st, study)
        db = Store(store)
    else:
        db = store
    try:
        run_study(st, db, jobs=jobs, backend=backend, address=address, retry_failed=retry_failed, progress=progress)
        return db.to_pandas([j.id for j in st.jobs()])
    finally:
        if own:
            db.close()
