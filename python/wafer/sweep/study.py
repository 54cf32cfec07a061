"""A study file (TOML) and its expansion into jobs.

A study names what to vary; every combination is one job (one replay)::

    name = "skew"
    description = "SepBIT against 2R and Base on two Zipf skews"
    workloads = ["zipf:0.8", "zipf:1.0"]        # synthetic specs (see `wafer replay --help`)
    traces = ["traces/hm_0.csv.gz"]             # and/or trace files (relative to this file)
    victims = ["greedy", "cost-benefit"]
    seeds = 3                                   # 1, 2, 3 (or a list: [1, 7, 42])
    drive_writes = 4                            # or writes = 1000000 (user blocks); a list sweeps it
    metrics = ["steady_waf", "waf", "user_accuracy"]   # accuracy metrics turn on the annotation

    policies = ["base", "two-r", { name = "sepbit", grid = { window_segments = [8, 16] } }]

    [[devices]]
    name = "1GiB"
    capacity = "1GiB"                           # any wafer.Device field
    op = [0.07, 0.10, 0.28]                     # a list sweeps the field
    segment_blocks = 256

A policy is a name or a table: ``name``, fixed ``params``, a ``grid`` of
parameters whose lists are swept, an optional ``label``. A trace is a path or
a table: ``path``, ``label``, ``format``, ``repeat``, ``extend``, ``remap``,
``address_space`` and the selection keys ``device``, ``start``, ``end``,
``max_requests``, ``drop_reads``, ``skip_bad``. A device's ``timing`` key is
reserved for the timing presets (not implemented yet).

A job's id is a hash of its full engine configuration (and a trace's size)
with wafer's version: the same study run twice gives the same ids, so a
store skips what is done; a changed parameter or a new wafer version gives
new ids.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import sys
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from .. import _core
from ..api import Device, describe_policy, policies, run_config
from ..traces import Selection

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.9/3.10 only
    import tomli as tomllib

#: Summary columns a study may name in ``metrics`` (see :meth:`wafer.RunResult.summary`).
METRICS = ("steady_waf", "waf", "extra_writes_per_user_write", "user_writes", "gc_writes", "drive_writes",
           "mean_victim_valid_ratio", "elapsed_seconds", "user_writes_per_second", "user_accuracy",
           "gc_accuracy", "train_seconds")
#: Metrics that need the lifetime annotation (they turn ``accuracy`` on).
ACCURACY_METRICS = ("user_accuracy", "gc_accuracy")

_KEYS = {"name", "description", "workloads", "traces", "policies", "victims", "devices", "seeds", "writes",
         "drive_writes", "metrics", "accuracy", "cache_dir"}
_TRACE_KEYS = {"path", "label", "format", "repeat", "extend", "remap", "address_space", "device", "start", "end",
               "max_requests", "drop_reads", "skip_bad"}
_DEVICE_FIELDS = {f.name for f in fields(Device)}


def _err(where: str, msg: str) -> _core.ConfigError:
    return _core.ConfigError(f"invalid study: {where}: {msg}")


@dataclass(frozen=True)
class Job:
    """One replay of a study: ``labels`` say where it sits in the study
    (workload, policy, victim, device, op, seed, length), ``spec`` is what to
    run (JSON-ready), ``id`` the hash of its configuration and wafer's version."""

    id: str
    labels: dict[str, Any]
    spec: dict[str, Any]
    config: dict[str, Any] = field(repr=False)

    def to_json(self) -> str:
        return json.dumps({"id": self.id, "labels": self.labels, "spec": self.spec, "config": self.config},
                          sort_keys=True)


def replay_args(spec: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """``(policy, workload, kwargs)`` of :func:`wafer.replay` for a job's spec."""
    kw: dict[str, Any] = {
        "device": Device(**spec["device"]), "victim": spec["victim"], "seed": spec["seed"],
        "params": spec["params"] or None, "accuracy": spec["accuracy"], "writes": spec["writes"],
        "drive_writes": spec["drive_writes"], "cache_dir": spec.get("cache_dir"),
    }
    workload = spec["workload"]
    t = spec.get("trace")
    if t:
        sel = Selection(device=t.get("device"), start_seconds=t.get("start"), end_seconds=t.get("end"),
                        max_requests=t.get("max_requests"), drop_reads=bool(t.get("drop_reads")),
                        skip_bad=bool(t.get("skip_bad")))
        kw.update(trace=t["path"], format=t.get("format"), selection=sel, remap=bool(t.get("remap")),
                  address_space=bool(t.get("address_space")), repeat=int(t.get("repeat", 1)),
                  extend=t.get("extend"))
        workload = t["path"]
    return spec["policy"], workload, kw


def job_id(spec: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The job's id and its engine configuration: SHA-256 (first 16 hex digits)
    of the configuration (without where caches go), a trace's size in bytes,
    and ``wafer.__version__``."""
    policy, workload, kw = replay_args(spec)
    cfg = run_config(policy, workload, **kw)
    ident = {k: v for k, v in cfg.items() if k not in ("cache_dir", "memory_limit")}
    if cfg["trace"]:
        try:
            ident["trace_bytes"] = os.path.getsize(cfg["trace"]["path"])
        except OSError:
            ident["trace_bytes"] = None
    ident["version"] = _core.__version__
    text = json.dumps(ident, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16], cfg


def _compact(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v, separators=(",", ":"))


@dataclass
class Study:
    """A parsed study (see the module's doc for the file format)."""

    name: str
    description: str = ""
    workloads: list[dict[str, Any]] = field(default_factory=list)
    policies: list[dict[str, Any]] = field(default_factory=list)
    victims: list[str] = field(default_factory=lambda: ["greedy"])
    devices: list[dict[str, Any]] = field(default_factory=list)
    seeds: list[int] = field(default_factory=lambda: [1])
    lengths: list[dict[str, Any]] = field(default_factory=list)
    metrics: list[str] = field(default_factory=lambda: ["steady_waf", "waf"])
    accuracy: bool = False
    cache_dir: str | None = None
    source: dict[str, Any] = field(default_factory=dict, repr=False)

    def jobs(self) -> list[Job]:
        """Every combination, seeds outermost (so a sweep covers every cell once
        before repeating it), then workload, device, policy, victim, length."""
        out = []
        for seed, w, d, p, v, n in itertools.product(self.seeds, self.workloads, self.devices, self.policies,
                                                      self.victims, self.lengths):
            spec = {"policy": p["name"], "params": p["params"], "victim": v, "workload": w.get("spec"),
                    "trace": w.get("trace"), "device": d["fields"], "seed": seed, "writes": n["writes"],
                    "drive_writes": n["drive_writes"], "accuracy": self.accuracy, "cache_dir": self.cache_dir}
            jid, cfg = job_id(spec)
            labels = {"workload": w["label"], "policy": p["label"], "policy_name": p["name"],
                      "params": json.dumps(p["params"], sort_keys=True), "victim": v, "device": d["label"],
                      "op": d["op"], "seed": seed, "length": n["label"]}
            out.append(Job(jid, labels, spec, cfg))
        return out


def load(source: str | os.PathLike | dict[str, Any] | Study, base_dir: str | os.PathLike | None = None) -> Study:
    """A :class:`Study` from a TOML file, a dict of the same keys, or a Study
    (returned as is). Relative trace paths are relative to the file's folder
    (or ``base_dir``). Bad keys and values raise :class:`wafer.ConfigError`
    naming them."""
    if isinstance(source, Study):
        return source
    if isinstance(source, dict):
        return parse(source, Path(base_dir or "."), "study")
    path = Path(source)
    try:
        data = tomllib.loads(path.read_text())
    except OSError as e:
        raise _core.ConfigError(f"invalid study: {path}: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise _core.ConfigError(f"invalid study: {path}: {e}") from None
    return parse(data, Path(base_dir) if base_dir else path.parent, str(path))


def _list(d: dict[str, Any], key: str, where: str, default: list) -> list:
    v = d.get(key, default)
    if not isinstance(v, list):
        v = [v]
    if not v:
        raise _err(where, f"{key}: empty list")
    return v


def parse(d: dict[str, Any], base: Path, where: str = "study") -> Study:
    """A :class:`Study` from the parsed TOML (see :func:`load`)."""
    unknown = set(d) - _KEYS
    if unknown:
        raise _err(where, f"unknown key(s) {', '.join(sorted(unknown))}; known: {', '.join(sorted(_KEYS))}")
    metrics = _list(d, "metrics", where, ["steady_waf", "waf"])
    bad = [m for m in metrics if m not in METRICS]
    if bad:
        raise _err(where, f"metrics: unknown {', '.join(bad)}; known: {', '.join(METRICS)}")
    accuracy = bool(d.get("accuracy", False)) or any(m in ACCURACY_METRICS for m in metrics)
    seeds = d.get("seeds", 1)
    if isinstance(seeds, int) and not isinstance(seeds, bool):
        if seeds < 1:
            raise _err(where, f"seeds: {seeds}; give a count >= 1 or a list of seeds")
        seeds = list(range(1, seeds + 1))
    elif not (isinstance(seeds, list) and seeds and all(isinstance(s, int) for s in seeds)):
        raise _err(where, f"seeds: {seeds!r}; give a count or a list of integers")
    return Study(
        name=str(d.get("name") or (Path(where).stem if where != "study" else "study")),
        description=str(d.get("description", "")),
        workloads=_workloads(d, base, where),
        policies=_policies(_list(d, "policies", where, ["base"]), where),
        victims=[str(v) for v in _list(d, "victims", where, ["greedy"])],
        devices=_devices(_list(d, "devices", where, [{}]), where),
        seeds=list(dict.fromkeys(seeds)),
        lengths=_lengths(d, where),
        metrics=metrics,
        accuracy=accuracy,
        cache_dir=d.get("cache_dir"),
        source=d,
    )


def _workloads(d: dict[str, Any], base: Path, where: str) -> list[dict[str, Any]]:
    out = [{"label": str(w), "spec": str(w)} for w in (d.get("workloads") or [])]
    for t in d.get("traces") or []:
        t = {"path": t} if isinstance(t, str) else dict(t)
        if not isinstance(t, dict) or "path" not in t:
            raise _err(where, f"traces: {t!r} has no path")
        unknown = set(t) - _TRACE_KEYS
        if unknown:
            raise _err(where, f"traces: unknown key(s) {', '.join(sorted(unknown))}; "
                              f"known: {', '.join(sorted(_TRACE_KEYS))}")
        p = Path(str(t["path"])).expanduser()
        t["path"] = str(p if p.is_absolute() else (base / p).resolve())
        if not os.path.exists(t["path"]):
            raise _err(where, f"traces: {t['path']}: no such file")
        label = str(t.pop("label", None) or Path(t["path"]).name)
        out.append({"label": label, "spec": None, "trace": t})
    if not out:
        out = [{"label": "zipf:1.0", "spec": "zipf:1.0"}]
    labels = [w["label"] for w in out]
    if len(set(labels)) != len(labels):
        raise _err(where, f"workloads/traces: labels repeat ({', '.join(labels)}); give traces a label")
    return out


def _policies(items: list, where: str) -> list[dict[str, Any]]:
    registry = {p["name"]: p for p in policies()}
    out = []
    for item in items:
        p = {"name": item} if isinstance(item, str) else dict(item)
        name = p.get("name")
        if not name:
            raise _err(where, f"policies: {item!r} has no name")
        unknown = set(p) - {"name", "params", "grid", "label"}
        if unknown:
            raise _err(where, f"policies: {name}: unknown key(s) {', '.join(sorted(unknown))}; "
                              "known: name, params, grid, label")
        try:
            described = describe_policy(str(name))
        except _core.PolicyError as e:
            raise _err(where, f"policies: {e}") from None
        # A composite takes its base's parameters (nodap+POLICY-user: POLICY's under 'predictor').
        known = [*registry[described["base"]]["defaults"], *(["predictor"] if described["predictor"] else [])]
        fixed = dict(p.get("params") or {})
        grid = dict(p.get("grid") or {})
        for k in [*fixed, *grid]:
            if k not in known:
                raise _err(where, f"policies: {name}: unknown parameter '{k}'; "
                                  f"known: {', '.join(known) or 'none'}")
        for k, vs in grid.items():
            if not isinstance(vs, list) or not vs:
                raise _err(where, f"policies: {name}: grid.{k} must be a non-empty list of values")
        for combo in itertools.product(*grid.values()) if grid else [()]:
            params = {**fixed, **dict(zip(grid, combo))}
            label = p.get("label")
            if label and grid:
                label += "[" + ",".join(f"{k}={_compact(v)}" for k, v in zip(grid, combo)) + "]"
            elif not label:
                label = name + ("[" + ",".join(f"{k}={_compact(v)}" for k, v in params.items()) + "]"
                                if params else "")
            out.append({"label": label, "name": name, "params": params})
    labels = [p["label"] for p in out]
    if len(set(labels)) != len(labels):
        raise _err(where, f"policies: labels repeat ({', '.join(labels)}); give each a label")
    return out


def _devices(items: list, where: str) -> list[dict[str, Any]]:
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise _err(where, f"devices: {item!r} is not a table of wafer.Device fields")
        item = dict(item)
        if "timing" in item:
            raise _err(where, f"devices[{i}]: timing: timing presets are not implemented yet (key reserved)")
        name = item.pop("name", None)
        unknown = set(item) - _DEVICE_FIELDS
        if unknown:
            raise _err(where, f"devices[{i}]: unknown field(s) {', '.join(sorted(unknown))}; "
                              f"known: {', '.join(sorted(_DEVICE_FIELDS))}, name, timing")
        swept = {k: v for k, v in item.items() if isinstance(v, list)}
        fixed = {k: v for k, v in item.items() if k not in swept}
        for k, vs in swept.items():
            if not vs:
                raise _err(where, f"devices[{i}]: {k}: empty list")
        for combo in itertools.product(*swept.values()) if swept else [()]:
            f = {**fixed, **dict(zip(swept, combo))}
            try:
                dev = Device(**f)
            except (TypeError, _core.ConfigError) as e:
                raise _err(where, f"devices[{i}] {f}: {e}") from None
            # A device is named by its name, else by its swept fields, else by its fields.
            parts = [f"{k}={_compact(v)}" for k, v in zip(swept, combo)]
            if name:
                label = " ".join([name, *parts])
            else:
                label = " ".join(parts) or ",".join(f"{k}={_compact(v)}" for k, v in fixed.items()) or "default"
            out.append({"label": label, "fields": f, "op": float(dev.op)})
    labels = [d["label"] for d in out]
    if len(set(labels)) != len(labels):
        raise _err(where, f"devices: labels repeat ({', '.join(labels)}); give each device a name")
    return out


def _lengths(d: dict[str, Any], where: str) -> list[dict[str, Any]]:
    if "writes" in d and "drive_writes" in d:
        raise _err(where, "give writes or drive_writes, not both")
    if "writes" in d:
        ws = _list(d, "writes", where, [])
        if not all(isinstance(w, int) and w >= 1 for w in ws):
            raise _err(where, f"writes: {ws!r}; user blocks, integers >= 1")
        return [{"label": f"{w} writes", "writes": int(w), "drive_writes": None} for w in ws]
    if "drive_writes" in d:
        ds = _list(d, "drive_writes", where, [])
        if not all(isinstance(x, (int, float)) and x > 0 for x in ds):
            raise _err(where, f"drive_writes: {ds!r}; numbers > 0")
        return [{"label": f"{x:g} drive-writes", "writes": None, "drive_writes": float(x)} for x in ds]
    return [{"label": "default", "writes": None, "drive_writes": None}]
