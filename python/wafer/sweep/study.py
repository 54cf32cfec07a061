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
    setup = "wafer"                             # conventions: wafer, sepbit-replayer, midas-sim, mqsim

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
``max_requests``, ``drop_reads``, ``skip_bad``, and ``setup`` (the
conventions its jobs run under, instead of the study's ``setup``:
``wafer``, ``sepbit-replayer``, ``midas-sim``, ``mqsim``). A fleet: ``volumes =
"all" | "top:N" | [ids]`` makes each volume (device id) of the file its own
workload, labelled ``LABEL#ID`` (split once into wafer's cache folder,
reused while the file is unchanged; ``top:N`` by bytes written; an id the
file does not hold is an error naming the line). A device's ``timing`` key is
reserved for the timing presets (not implemented yet).

The whole study is checked when it is loaded, before any job runs or the
store is opened: TOML syntax, each key's type (a list key takes a list: a
string there is refused, never read as its characters), no empty lists (an
empty list never stands for the default), and the engine builds every
policy (each parameter set of its grid), victim selector and workload spec
once. An error names the file, the line of the key and why.

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
import re
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
         "drive_writes", "metrics", "accuracy", "cache_dir", "setup"}
_TRACE_KEYS = {"path", "label", "format", "repeat", "extend", "remap", "address_space", "device", "start", "end",
               "max_requests", "drop_reads", "skip_bad", "setup", "volumes"}
_DEVICE_FIELDS = {f.name for f in fields(Device)}


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
        "setup": spec.get("setup") or "wafer",
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
    #: The conventions every job runs under (``wafer``, ``sepbit-replayer``,
    #: ``midas-sim``, ``mqsim``); a trace table's ``setup`` overrides it.
    setup: str = "wafer"
    source: dict[str, Any] = field(default_factory=dict, repr=False)

    def jobs(self) -> list[Job]:
        """Every combination, seeds outermost (so a sweep covers every cell once
        before repeating it), then workload, device, policy, victim, length."""
        out = []
        for seed, w, d, p, v, n in itertools.product(self.seeds, self.workloads, self.devices, self.policies,
                                                      self.victims, self.lengths):
            trace = w.get("trace")
            setup = (trace or {}).get("setup") or self.setup
            if trace and "setup" in trace:
                trace = {k: x for k, x in trace.items() if k != "setup"}
            spec = {"policy": p["name"], "params": p["params"], "victim": v, "workload": w.get("spec"),
                    "trace": trace, "device": d["fields"], "seed": seed, "writes": n["writes"],
                    "drive_writes": n["drive_writes"], "accuracy": self.accuracy, "cache_dir": self.cache_dir}
            if setup != "wafer":  # (absent for wafer's own: the jobs of older studies keep their ids)
                spec["setup"] = setup
            jid, cfg = job_id(spec)
            labels = {"workload": w["label"], "policy": p["label"], "policy_name": p["name"],
                      "params": json.dumps(p["params"], sort_keys=True), "victim": v, "device": d["label"],
                      "op": d["op"], "seed": seed, "length": n["label"]}
            out.append(Job(jid, labels, spec, cfg))
        return out


def load(source: str | os.PathLike | dict[str, Any] | Study, base_dir: str | os.PathLike | None = None) -> Study:
    """A :class:`Study` from a TOML file, a dict of the same keys, or a Study
    (returned as is). Relative trace paths are relative to the file's folder
    (or ``base_dir``). The whole study is checked here, before any job runs:
    a bad key, type or value raises :class:`wafer.ConfigError` naming the
    file, the key (and its line) and why."""
    if isinstance(source, Study):
        return source
    if isinstance(source, dict):
        return parse(source, Path(base_dir or "."), "study")
    path = Path(source)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise _core.ConfigError(f"invalid study: {path}: {e.strerror or e}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _core.ConfigError(f"invalid study: {path}: not a text file (byte {e.start} is not UTF-8); "
                                "a study is TOML (`wafer sweep example` prints one)") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        # "Unclosed array (at line 4, column 1)" -> "FILE:4: TOML syntax: Unclosed array (column 1)"
        m = re.match(r"(.*) \(at line (\d+), column (\d+)\)$", str(e))
        where, msg = (f"{path}:{m[2]}", f"{m[1]} (column {m[3]})") if m else (str(path), str(e))
        raise _core.ConfigError(f"invalid study: {where}: TOML syntax: {msg}") from None
    return parse(data, Path(base_dir) if base_dir else path.parent, str(path), text=text)


class _Source:
    """Where a study comes from (a file's name and text, or ``study`` for a
    dict), to name a key's line in errors."""

    _HEADER = re.compile(r"^\s*\[\[?\s*[A-Za-z0-9_.\"-]+\s*\]\]?\s*(#.*)?$")

    def __init__(self, name: str, text: str | None = None):
        self.name = name
        self.lines = text.splitlines() if text is not None else []

    def line(self, key: str, index: int | None = None) -> int | None:
        """The line of top-level ``key`` (``[[key]]`` number ``index`` for an array of tables)."""
        if index is not None:
            heads = [i for i, s in enumerate(self.lines) if re.match(rf"^\s*\[\[\s*{re.escape(key)}\s*\]\]", s)]
            if index < len(heads):
                return heads[index] + 1
        for i, s in enumerate(self.lines):
            if self._HEADER.match(s):
                break  # top-level keys come before the first table
            if re.match(rf"^\s*(\"?){re.escape(key)}\1\s*=", s):
                return i + 1
        return None


def _err(src: _Source, msg: str, key: str | None = None) -> _core.ConfigError:
    """``invalid study: FILE:LINE: KEY: why``; the key is ``msg``'s first word
    unless given (``devices[2]: ...`` names the third ``[[devices]]``)."""
    index = None
    if key is None:
        m = re.match(r"([a-z_]+)(?:\[(\d+)\])?[:\s/]", msg)
        if m and m.group(1) in _KEYS:
            key, index = m.group(1), None if m.group(2) is None else int(m.group(2))
    line = src.line(key, index) if key else None
    return _core.ConfigError(f"invalid study: {src.name}{f':{line}' if line else ''}: {msg}")


_TOML_TYPES = ((bool, "a boolean"), (int, "an integer"), (float, "a float"), (str, "a string"), (list, "an array"),
               (dict, "a table"))


def _kind(v: Any) -> str:
    """The TOML name of a value's type, with its article."""
    return next((n for t, n in _TOML_TYPES if isinstance(v, t)), f"a {type(v).__name__}")


def _show(v: Any) -> str:
    """A value as a study would write it (strings in double quotes)."""
    return json.dumps(v, default=str) if isinstance(v, (str, list, dict)) else repr(v).lower() \
        if isinstance(v, bool) else repr(v)


def _is(v: Any, types: tuple) -> bool:
    """``isinstance`` where a boolean is not a number."""
    return isinstance(v, types) and not (isinstance(v, bool) and bool not in types)


def _list(d: dict[str, Any], key: str, src: _Source, default: list, types: tuple, what: str,
          scalar: bool = False) -> list:
    """``d[key]``, a non-empty list of ``types`` (``what`` says which in errors;
    ``scalar``: one value stands for a list of it), or ``default`` when absent."""
    if key not in d:
        return list(default)
    v = d[key]
    if scalar and _is(v, types):
        v = [v]
    elif scalar and not isinstance(v, list):
        raise _err(src, f"{key}: {_show(v)} is {_kind(v)}; give {what} (or a list of them)")
    if not isinstance(v, list):
        raise _err(src, f"{key}: {_show(v)} is {_kind(v)}; give a list of {what} (e.g. {key} = [{_show(v)}])")
    if not v:
        raise _err(src, f"{key}: an empty list; list at least one of {what} (or leave {key} out for "
                        f"the default{f' {_show(default)}' if default else ''})")
    for x in v:
        if not _is(x, types):
            raise _err(src, f"{key}: {_show(x)} is {_kind(x)}; give {what}")
    return v


def _scalar(d: dict[str, Any], key: str, src: _Source, types: tuple, what: str, default: Any) -> Any:
    v = d.get(key, default)
    if key in d and not _is(v, types):
        raise _err(src, f"{key}: {_show(v)} is {_kind(v)}; give {what}")
    return v


def parse(d: dict[str, Any], base: Path, where: str = "study", text: str | None = None) -> Study:
    """A :class:`Study` from the parsed TOML (see :func:`load`); ``text`` (the
    file's) lets errors name lines. Each key's type and value is checked, and
    every policy (with each of its grid's parameter sets), victim selector and
    workload spec is built once by the engine (:func:`_check_with_engine`)."""
    src = _Source(where, text)
    unknown = set(d) - _KEYS
    if unknown:
        raise _err(src, f"unknown key(s) {', '.join(sorted(unknown))}; known: {', '.join(sorted(_KEYS))}",
                   key=sorted(unknown)[0])
    metrics = _list(d, "metrics", src, ["steady_waf", "waf"], (str,), "metric names")
    bad = [m for m in metrics if m not in METRICS]
    if bad:
        raise _err(src, f"metrics: unknown {', '.join(bad)}; known: {', '.join(METRICS)}")
    accuracy = _scalar(d, "accuracy", src, (bool,), "true or false", False) or \
        any(m in ACCURACY_METRICS for m in metrics)
    seeds = d.get("seeds", 1)
    if _is(seeds, (int,)):
        if seeds < 1:
            raise _err(src, f"seeds: {seeds}; give a count >= 1 or a list of seeds")
        seeds = list(range(1, seeds + 1))
    elif not isinstance(seeds, list):
        raise _err(src, f"seeds: {_show(seeds)} is {_kind(seeds)}; give a count or a list of integer seeds")
    else:
        seeds = _list(d, "seeds", src, [], (int,), "integer seeds")
        if any(s < 0 for s in seeds):
            raise _err(src, f"seeds: {seeds!r}; seeds are integers >= 0")
    name = _scalar(d, "name", src, (str,), "a string", None)
    study = Study(
        name=name or (Path(where).stem if where != "study" else "study"),
        description=_scalar(d, "description", src, (str,), "a string", ""),
        workloads=_workloads(d, base, src),
        policies=_policies(_list(d, "policies", src, ["base"], (str, dict), "policy names or tables"), src),
        victims=_list(d, "victims", src, ["greedy"], (str,), "victim selector names"),
        devices=_devices(_list(d, "devices", src, [{}], (dict,), "tables of wafer.Device fields"), src),
        seeds=list(dict.fromkeys(seeds)),
        lengths=_lengths(d, src),
        metrics=metrics,
        accuracy=accuracy,
        cache_dir=_scalar(d, "cache_dir", src, (str,), "a folder", None),
        setup=_setup(_scalar(d, "setup", src, (str,), "a setup name", "wafer"), src, "setup"),
        source=d,
    )
    for w in study.workloads:
        if w.get("trace") and "setup" in w["trace"]:
            _setup(w["trace"]["setup"], src, "traces")
    _check_with_engine(study, src)
    return study


def _setup(name: str, src: _Source, key: str) -> str:
    """A setup name wafer knows (``wafer.setups()``), else an error naming the key's line."""
    from ..api import setups

    known = [s["name"] for s in setups()]
    if name not in known:
        raise _err(src, f"{key}: setup '{name}' is not one wafer knows; known: {', '.join(known)}", key=key)
    return name


def _workloads(d: dict[str, Any], base: Path, src: _Source) -> list[dict[str, Any]]:
    specs = _list(d, "workloads", src, [], (str,), "workload specs (strings such as \"zipf:1.0\")")
    out = [{"label": w, "spec": w} for w in specs]
    for t in _list(d, "traces", src, [], (str, dict), "trace paths or tables"):
        t = {"path": t} if isinstance(t, str) else dict(t)
        if "path" not in t:
            raise _err(src, f"traces: {t!r} has no path")
        unknown = set(t) - _TRACE_KEYS
        if unknown:
            raise _err(src, f"traces: unknown key(s) {', '.join(sorted(unknown))}; "
                            f"known: {', '.join(sorted(_TRACE_KEYS))}")
        for k, v in t.items():
            types, what = _TRACE_TYPES[k]
            if not _is(v, types):
                raise _err(src, f"traces: {_show(t['path'])}: {k}: {_show(v)} is {_kind(v)}; give {what}")
        p = Path(t["path"]).expanduser()
        t["path"] = str(p if p.is_absolute() else (base / p).resolve())
        if not os.path.exists(t["path"]):
            raise _err(src, f"traces: {t['path']}: no such file")
        label = t.pop("label", None) or Path(t["path"]).name
        if "volumes" in t:
            for device, path in _volumes(t, d.get("cache_dir"), src):
                out.append({"label": f"{label}#{device}", "spec": None,
                            "trace": {k: v for k, v in t.items() if k != "volumes"} | {"path": path}})
            continue
        out.append({"label": label, "spec": None, "trace": t})
    if not out:
        out = [{"label": "zipf:1.0", "spec": "zipf:1.0"}]
    labels = [w["label"] for w in out]
    if len(set(labels)) != len(labels):
        raise _err(src, f"workloads/traces: labels repeat ({', '.join(labels)}); give traces a label")
    return out


def _volumes(t: dict[str, Any], cache_dir: str | None, src: _Source) -> list[tuple[str, str]]:
    """A fleet entry's volumes (``volumes = "all" | "top:N" | [ids]``) as
    (device, native file): the file split once per volume into wafer's cache
    (reused while the file is unchanged), each volume checked against it."""
    from ..traces import split_cached

    want, where = t["volumes"], f"traces: {_show(t['path'])}: volumes"
    if "device" in t:
        raise _err(src, f"{where}: give volumes or device, not both", key="traces")
    if isinstance(want, list):
        if not want:
            raise _err(src, f"{where}: the list is empty", key="traces")
        if not all(_is(v, (int, str)) for v in want):
            raise _err(src, f"{where}: {_show(want)}; device ids are integers or \"MAJ,MIN\"", key="traces")
    elif want != "all" and not re.fullmatch(r"top:[1-9][0-9]*", want):
        raise _err(src, f"{where}: {_show(want)}; give \"all\", \"top:N\" (N >= 1) or a list of device ids",
                   key="traces")
    try:
        vols = split_cached(t["path"], t.get("format"), skip_bad=bool(t.get("skip_bad")), cache_dir=cache_dir)
    except _core.WaferError as e:
        raise _err(src, f"{where}: {e}", key="traces") from None
    by_id = {v["device"]: v for v in vols}
    if want == "all":
        chosen = vols
    elif isinstance(want, str):
        chosen = sorted(vols, key=lambda v: -v["write_bytes"])[:int(want[4:])]
    else:
        missing = [str(v) for v in want if str(v) not in by_id]
        if missing:
            raise _err(src, f"{where}: no volume {', '.join(missing)} in the file (its volumes: "
                            f"{', '.join(by_id)})", key="traces")
        chosen = [by_id[str(v)] for v in dict.fromkeys(want)]
    return [(v["device"], v["path"]) for v in chosen]


_NUMBER = ((int, float), "a number")
#: What each key of a trace table takes: (types, said as).
_TRACE_TYPES = {"path": ((str,), "a path"), "label": ((str,), "a string"), "format": ((str,), "a format name"),
                "repeat": ((int,), "an integer"), "extend": _NUMBER, "remap": ((bool,), "true or false"),
                "address_space": ((bool,), "true or false"), "device": ((str, int), "a device (\"N\" or \"MAJ,MIN\")"),
                "start": _NUMBER, "end": _NUMBER, "max_requests": ((int,), "an integer"),
                "drop_reads": ((bool,), "true or false"), "skip_bad": ((bool,), "true or false"),
                "setup": ((str,), "a setup name"),
                "volumes": ((str, list), "\"all\", \"top:N\" or a list of device ids")}


def _policies(items: list, src: _Source) -> list[dict[str, Any]]:
    registry = {p["name"]: p for p in policies()}
    out = []
    for item in items:
        p = {"name": item} if isinstance(item, str) else dict(item)
        name = p.get("name")
        if not name:
            raise _err(src, f"policies: {item!r} has no name")
        if not isinstance(name, str):
            raise _err(src, f"policies: name {_show(name)} is {_kind(name)}; give a policy name (a string)")
        unknown = set(p) - {"name", "params", "grid", "label"}
        if unknown:
            raise _err(src, f"policies: {name}: unknown key(s) {', '.join(sorted(unknown))}; "
                            "known: name, params, grid, label")
        for k, types, what in (("params", (dict,), "a table of parameter = value"),
                               ("grid", (dict,), "a table of parameter = [values]"), ("label", (str,), "a string")):
            if k in p and not _is(p[k], types):
                raise _err(src, f"policies: {name}: {k}: {_show(p[k])} is {_kind(p[k])}; give {what}")
        try:
            described = describe_policy(name)
        except _core.PolicyError as e:
            raise _err(src, f"policies: {e}") from None
        # A composite takes its base's parameters (nodap+POLICY-user: POLICY's under 'predictor').
        known = [*registry[described["base"]]["defaults"], *(["predictor"] if described["predictor"] else [])]
        fixed = dict(p.get("params") or {})
        grid = dict(p.get("grid") or {})
        for k in [*fixed, *grid]:
            if k not in known:
                raise _err(src, f"policies: {name}: unknown parameter '{k}'; "
                                f"known: {', '.join(known) or 'none'}")
        for k, vs in grid.items():
            if not isinstance(vs, list) or not vs:
                raise _err(src, f"policies: {name}: grid.{k} must be a non-empty list of values")
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
        raise _err(src, f"policies: labels repeat ({', '.join(labels)}); give each a label")
    return out


def _devices(items: list, src: _Source) -> list[dict[str, Any]]:
    out = []
    for i, item in enumerate(items):
        item = dict(item)
        if "timing" in item:
            raise _err(src, f"devices[{i}]: timing: timing presets are not implemented yet (key reserved)")
        name = item.pop("name", None)
        if name is not None and not isinstance(name, str):
            raise _err(src, f"devices[{i}]: name: {_show(name)} is {_kind(name)}; give a string")
        unknown = set(item) - _DEVICE_FIELDS
        if unknown:
            raise _err(src, f"devices[{i}]: unknown field(s) {', '.join(sorted(unknown))}; "
                            f"known: {', '.join(sorted(_DEVICE_FIELDS))}, name, timing")
        swept = {k: v for k, v in item.items() if isinstance(v, list)}
        fixed = {k: v for k, v in item.items() if k not in swept}
        for k, vs in swept.items():
            if not vs:
                raise _err(src, f"devices[{i}]: {k}: empty list")
        for combo in itertools.product(*swept.values()) if swept else [()]:
            f = {**fixed, **dict(zip(swept, combo))}
            try:
                dev = Device(**f)
            except (TypeError, ValueError, _core.WaferError) as e:
                raise _err(src, f"devices[{i}] {f}: {e}") from None
            # A device is named by its name, else by its swept fields, else by its fields.
            parts = [f"{k}={_compact(v)}" for k, v in zip(swept, combo)]
            if name:
                label = " ".join([name, *parts])
            else:
                label = " ".join(parts) or ",".join(f"{k}={_compact(v)}" for k, v in fixed.items()) or "default"
            out.append({"label": label, "fields": f, "op": float(dev.op)})
    labels = [d["label"] for d in out]
    if len(set(labels)) != len(labels):
        raise _err(src, f"devices: labels repeat ({', '.join(labels)}); give each device a name")
    return out


def _lengths(d: dict[str, Any], src: _Source) -> list[dict[str, Any]]:
    if "writes" in d and "drive_writes" in d:
        raise _err(src, "give writes or drive_writes, not both", key="drive_writes")
    if "writes" in d:
        ws = _list(d, "writes", src, [], (int,), "user writes [blocks], integers >= 1", scalar=True)
        if not all(w >= 1 for w in ws):
            raise _err(src, f"writes: {ws!r}; user blocks, integers >= 1")
        return [{"label": f"{w} writes", "writes": int(w), "drive_writes": None} for w in ws]
    if "drive_writes" in d:
        ds = _list(d, "drive_writes", src, [], (int, float), "drive-writes, numbers > 0", scalar=True)
        if not all(0 < x < float("inf") for x in ds):
            raise _err(src, f"drive_writes: {ds!r}; numbers > 0")
        return [{"label": f"{x:g} drive-writes", "writes": None, "drive_writes": float(x)} for x in ds]
    return [{"label": "default", "writes": None, "drive_writes": None}]


#: The device the engine builds each policy, victim selector and workload on
#: to check them (small, so it takes no time or memory).
_CHECK_DEVICE: dict[str, Any] = {"logical_blocks": 1 << 16}
#: The engine's answer to ``writes = 0``, which it gives only once it has
#: built the workload, the policy and the victim selector: they are fine.
_BUILT = "writes: must be at least 1 user block"


def _engine_refuses(device: dict[str, Any], policy: str = "base", params: dict[str, Any] | None = None,
                    victim: str = "greedy", workload: str = "uniform") -> str | None:
    """Why the engine refuses to build this run on ``device``, or None. It is
    asked for 0 writes, which it refuses only after building the workload,
    policy and victim selector, so nothing runs or is allocated for the device."""
    try:
        cfg = run_config(policy, workload, device=Device(**device), victim=victim, params=params, writes=1)
        cfg["writes"] = 0
        _core.Simulation(json.dumps(cfg))
    except _core.ResourceError:
        return None  # this machine's memory, not the study: the job says so if it must
    except _core.WaferError as e:
        return None if _BUILT in str(e) else str(e)
    return None


def _check_with_engine(study: Study, src: _Source) -> None:
    """Have the engine build every victim selector, policy (each parameter set
    of its grid) and workload spec of the study, on a small device; what it
    refuses there is checked again on the study's devices (a value may depend
    on the device) and reported, naming the key, unless all of them take it."""

    def refused(key: str, what: str, **run: Any) -> None:
        if _engine_refuses(_CHECK_DEVICE, **run) is None:
            return
        whys = [(d["label"], _engine_refuses(d["fields"], **run)) for d in study.devices]
        bad = [(label, why) for label, why in whys if why is not None]
        if bad:
            on = f" (on device {bad[0][0]})" if len(bad) < len(whys) else ""
            raise _err(src, f"{key}: {what}{on}: {bad[0][1]}")

    for v in dict.fromkeys(study.victims):
        refused("victims", _show(v), victim=v)
    for p in study.policies:
        refused("policies", p["label"], policy=p["name"], params=p["params"])
    for w in study.workloads:
        if w.get("spec"):
            refused("workloads", _show(w["spec"]), workload=w["spec"])
