"""The report's data as tidy tables (pandas), one row per observation, built
from runs (a list of :class:`wafer.RunResult`), a results store, or a
results JSON file. Every figure is drawn from these tables."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..result import RunResult

#: Where a run sits: the columns every table starts with.
DIMS = ["run", "workload", "device", "victim", "length", "policy", "policy_name", "family", "seed", "op"]
#: Policy families, in the order legends and tables list them: the registry's families (``trivial`` shown as
#: "no separation"), its oracle composites (``POLICY+nu``, ``nodap+POLICY-user`` ...) apart as
#: "oracle-assisted", and "unregistered" for a name this build does not know (a store from another version).
FAMILIES = ["no separation", "rule-based", "stream", "learned", "oracle-assisted", "oracle", "unregistered"]
_LABELS = {"trivial": "no separation"}


def family(policy: str) -> str:
    """The report's family of a policy name, from the registry
    (:func:`wafer.describe_policy`): ``no separation`` (base), ``rule-based``,
    ``stream``, ``learned`` (and DOGI's stages, e.g. dogi+User), ``oracle``
    (nodap, oracle-*, fk), ``oracle-assisted`` (the oracle composites:
    POLICY+nu/+ngc/+ngrp, nodap+POLICY-user), ``unregistered``."""
    from .._core import PolicyError
    from ..api import describe_policy

    try:
        d = describe_policy(policy)
    except PolicyError:
        return "unregistered"
    if d["family"] == "oracle" and d["form"] is not None:
        return "oracle-assisted"
    return _LABELS.get(d["family"], d["family"])


@dataclass
class Tables:
    """Tidy tables of a set of runs (pandas DataFrames).

    * ``runs``: one row per run: the dimensions, ``status``, ``error``, and the
      metrics (waf, steady_waf, user/gc_writes [blocks], mean_victim_valid_ratio,
      user/gc_accuracy, train_seconds [s], elapsed_seconds [s], warnings).
    * ``windows``: one row per run x window: ``window``, ``drive_writes`` (end
      of the window), ``waf`` (within it), ``cumulative_waf``, accuracies ...
    * ``groups``: one row per run x group at the end of the run: ``group``,
      ``segments``, ``valid_blocks``, ``user_writes``, ``gc_writes``,
      ``lifetime_p10/median/p90`` [drive-writes] of the blocks it received.
    * ``group_windows``: one row per run x window x group: ``window``,
      ``drive_writes`` (end of the window), ``group``, ``user_writes``,
      ``gc_writes``, ``victims``, ``victim_valid_ratio``, ``sealed_segments``,
      ``open_segments``, ``valid_blocks`` (MiDAS-Simulation's per-group lines).
    * ``victims``: one row per run x valid-ratio bin: ``lo``, ``hi``, ``victims``, ``share``.
    * ``latency``: one row per run x operation x point of a latency CDF
      (``op``, ``us``, ``cdf``), from results that carry ``latency`` (timing runs).
    """

    runs: Any
    windows: Any
    groups: Any
    victims: Any
    latency: Any
    group_windows: Any = None
    title: str = "wafer report"
    notes: list[str] = field(default_factory=list)

    @property
    def policies(self) -> list[str]:
        """Policies in legend order: by family, then first appearance."""
        r = self.runs.drop_duplicates("policy")
        order = {f: i for i, f in enumerate(FAMILIES)}
        return [p for _, p in sorted(((order.get(f, 9), i), p) for i, (p, f) in enumerate(zip(r.policy, r.family)))]


def _label_of(r: RunResult) -> dict[str, Any]:
    """A run's place: a study's labels, or what the result says (compare, replay)."""
    geo = r.raw.get("geometry") or {}
    op = (r.config.get("device") or {}).get("op", geo.get("op"))
    workload = r.workload
    if (r.raw.get("trace") or r.config.get("trace")) and os.sep in str(workload):
        workload = Path(workload).name
    lab = {"workload": workload, "device": f"op={op:g}" if isinstance(op, (int, float)) else "device",
           "victim": r.victim, "length": "", "policy": r.policy, "policy_name": r.policy, "seed": r.seed,
           "op": op}
    lab.update({k: v for k, v in (r.labels or {}).items() if k in lab})
    return lab


def _num(x: Any) -> float:
    return math.nan if x is None else float(x)


def from_results(results: list[RunResult], title: str = "wafer report") -> Tables:
    """The tables of these runs (from :func:`wafer.compare`, a store, or JSON)."""
    import pandas as pd

    runs, windows, groups, victims, latency, group_windows = [], [], [], [], [], []
    for i, r in enumerate(results):
        lab = _label_of(r)
        dims = {"run": i, **{k: lab[k] for k in DIMS[1:] if k in lab}, "family": family(lab["policy_name"])}
        dims = {k: dims[k] for k in DIMS}
        s = r.summary()
        runs.append({**dims, "status": "failed" if r.error else "done", "error": r.error,
                     **{k: s[k] for k in ("waf", "steady_waf", "extra_writes_per_user_write", "user_writes",
                                          "gc_writes", "mean_victim_valid_ratio", "user_accuracy", "gc_accuracy",
                                          "user_classes", "gc_classes", "train_seconds", "elapsed_seconds",
                                          "user_writes_per_second", "warnings")}})
        logical = (r.raw.get("geometry") or {}).get("logical_blocks") or 1
        ends = []
        for w, row in enumerate(r.raw.get("windows") or []):
            windows.append({**dims, "window": w, **row})
            ends.append(row["drive_writes"])
        for row in r.raw.get("group_windows") or []:
            w = row["window"]
            group_windows.append({**dims, "drive_writes": ends[w] if w < len(ends) else math.nan, **row})
        for g in r.raw.get("groups") or []:
            life = g.get("lifetime") or {}
            groups.append({**dims, "group": g["group"], "segments": g["segments"], "valid_blocks": g["valid_blocks"],
                           "user_writes": g["user_writes"], "gc_writes": g["gc_writes"],
                           **{f"lifetime_{k}": _num(life.get(k)) / logical for k in ("p10", "median", "p90")}})
        hist = r.raw.get("victim_valid_histogram") or []
        total = sum(hist) or 1
        for b, n in enumerate(hist):
            victims.append({**dims, "bin": b, "lo": b / len(hist), "hi": (b + 1) / len(hist), "victims": n,
                            "share": n / total})
        for op, cdf in (r.raw.get("latency") or {}).items():
            for us, p in zip(cdf.get("us", []), cdf.get("cdf", [])):
                latency.append({**dims, "op": op, "us": us, "cdf": p})
    frame = pd.DataFrame
    return Tables(runs=frame(runs, columns=[*DIMS, "status", "error"] if not runs else None),
                  windows=frame(windows, columns=DIMS if not windows else None),
                  groups=frame(groups, columns=DIMS if not groups else None),
                  victims=frame(victims, columns=DIMS if not victims else None),
                  latency=frame(latency, columns=[*DIMS, "op", "us", "cdf"] if not latency else None),
                  group_windows=frame(group_windows, columns=DIMS if not group_windows else None),
                  title=title)


def load_results_json(path: str | os.PathLike) -> list[RunResult]:
    """Runs from a JSON file: ``{"results": [...]}`` (``wafer compare --json``,
    a report's results.json, ``wafer demo --json``), a list of results, or one
    result (``wafer replay --json``). A file that is neither (empty, not
    JSON, other JSON) raises :class:`wafer.ConfigError` naming it and why."""
    from .._core import ConfigError

    what = "neither a wafer store (SQLite) nor results JSON (`wafer replay/compare --json`, a report's results.json)"
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except OSError as e:
        raise ConfigError(f"{path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: {what}: binary, not UTF-8 text (byte {e.start})") from None
    if not text.strip():
        raise ConfigError(f"{path}: {what}: an empty file")
    try:
        d = json.loads(text)
    except json.JSONDecodeError as e:
        raise ConfigError(f"{path}: {what}: not JSON ({e.msg} at line {e.lineno}, column {e.colno})") from None
    items = d.get("results", [d]) if isinstance(d, dict) else d
    if not isinstance(items, list):
        raise ConfigError(f"{path}: {what}: JSON of another kind")
    out = []
    for x in items:
        if not isinstance(x, dict) or "policy" not in x or "waf" not in x:
            raise ConfigError(f"{path}: not wafer results (each needs policy, waf, ...: the output of "
                              "`wafer replay/compare --json` or a report's results.json)")
        out.append(RunResult.from_dict(x))
    return out


def load(source: Any, study: str | None = None, title: str | None = None,
         jobs: list[str] | None = None) -> tuple[Tables, list[RunResult]]:
    """Tables from a store (an open :class:`wafer.store.Store` or a path to
    one; its ``study`` or ``jobs`` only, if given), a results JSON file, or a
    list of runs; also the runs themselves."""
    from ..store import Store, is_store

    if isinstance(source, (list, tuple)):
        results = list(source)
        name = title or "wafer report"
    elif isinstance(source, Store):
        results = source.results(jobs, study=study)
        name = title or f"wafer study: {study or ', '.join(sorted(source.studies())) or source.path}"
    elif is_store(source):
        with Store(source, create=False) as st:
            return load(st, study, title, jobs)
    else:
        results = load_results_json(source)
        name = title or f"wafer report: {Path(source).name}"
    return from_results(results, name), results
