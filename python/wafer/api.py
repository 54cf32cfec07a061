"""The Python API: device description, replay, compare, the policy registry."""

from __future__ import annotations

import functools
import json
import math
import os
import sys
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, make_dataclass
from typing import Any, Callable

from . import _core
from .progress import Progress
from .result import ResultSet, RunResult
from .traces import Selection


def parse_size(size: int | str, name: str = "size") -> int:
    """Bytes in a size such as ``4096``, ``"64k"``, ``"4GiB"``, ``"1.5 TB"``.

    Bare ``K/M/G/T`` and ``KiB/MiB/...`` are powers of 1024; ``KB/MB/...`` powers of 1000.
    The engine reads it (the rule a run's sizes follow); an error
    (:class:`ConfigError`) names the field ``name`` (``"capacity"``).
    """
    if isinstance(size, bool) or not isinstance(size, (int, float, str)):
        raise _core.ConfigError(f"invalid {name}: {size!r} is not a size (bytes, or a string such as '4GiB')")
    # A float reads as its text ("1.5" -> 1 byte), as a size string does.
    return _core.parse_size(name, json.dumps(str(size) if isinstance(size, float) else size))


def _whole(name: str, v: Any, lo: int = 0, hi: int = (1 << 64) - 1) -> int:
    """``v`` as an integer in ``lo..=hi`` (an integral float such as ``1e6``
    counts); anything else is a :class:`ConfigError` naming ``name``, never a
    silently truncated value."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not v.is_integer()):
        raise _core.ConfigError(f"invalid run configuration: {name}: {v!r} is not a whole number")
    if not lo <= v <= hi:
        raise _core.ConfigError(f"invalid run configuration: {name}: {v!r}; must be from {lo} to {hi}")
    return int(v)


def _names(name: str, v: Any) -> list[str]:
    """A list of names given as ``name``: a string where the list belongs is
    an error (it would be read letter by letter), as is an empty list."""
    if isinstance(v, (str, bytes)):
        raise _core.ConfigError(f"invalid run configuration: {name}: a list of names, got the string {v!r} "
                                f"(write [{v!r}])")
    out = [str(x) if isinstance(x, os.PathLike) else x for x in v]
    if not out:
        raise _core.ConfigError(f"invalid run configuration: {name}: the list is empty")
    return out


def _finite(x: Any, what: str, path: str = "") -> None:
    """Refuse NaN and infinities anywhere in a ``what`` configuration, naming
    the field (JSON has no spelling for them: the engine would only see a
    syntax error)."""
    if isinstance(x, float) and not math.isfinite(x):
        raise _core.ConfigError(f"invalid {what} configuration: {path or 'value'}: {x}; must be a finite number")
    if isinstance(x, dict):
        for k, v in x.items():
            _finite(v, what, f"{path}.{k}" if path else str(k))
    elif isinstance(x, (list, tuple)):
        for v in x:
            _finite(v, what, path)


def _dumps(config: dict[str, Any], what: str) -> str:
    """``config`` as JSON for the engine, NaN and infinities refused by name."""
    _finite(config, what)
    return json.dumps(config)


#: Every field of the engine's device configuration (``_core.device_fields_json``): name, type, optional, unit,
#: choices, doc, default. :class:`Device` is built from it, so it has every field the engine has.
DEVICE_FIELDS: list[dict[str, Any]] = json.loads(_core.device_fields_json())
_DEFAULT_DEVICE = {f["name"]: f["default"] for f in DEVICE_FIELDS}
#: Engine fields that stay None in Python until given: a trace sizes the device, and may fit the segment size;
#: gc_high not given is gc_low when that is larger; fit_segments not given is on for a trace that sizes the device
#: (the engine settles each).
_UNSET = ("logical_blocks", "segment_blocks", "gc_high", "fit_segments")
#: Python-only fields, each placed after the engine field it stands for (bytes or a string like ``"4GiB"``).
_SIZES = {"logical_blocks": ("capacity", "logical capacity in bytes or a size string (\"4GiB\"), instead of "
                                         "logical_blocks"),
          "segment_blocks": ("segment_size", "segment size in bytes or a size string (\"512MiB\"), instead of "
                                             "segment_blocks")}
_PY_TYPES = {"int": int, "float": float, "bool": bool, "str": str}
_SIZE_FIELDS = ("capacity", "segment_size", "logical_blocks", "segment_blocks")


class _DeviceMethods:
    """What every :class:`Device` does; its fields come from the engine's table."""

    @classmethod
    def preset(cls, name: str, **overrides: Any) -> Device:
        """The device of a paper by name (see :func:`presets`), e.g.
        ``Device.preset("fios-disksim", capacity="8GiB")``: every field the
        preset sets, then ``overrides`` (which win). An unknown name raises
        :class:`ConfigError` listing the presets."""
        found = {p["name"]: p for p in presets()}
        if name not in found:
            raise _core.ConfigError(f"unknown device preset '{name}'; known: {', '.join(found)}")
        return cls(**{**found[name]["device"], **overrides})

    def __post_init__(self) -> None:
        self.to_config()

    def segment_given(self) -> bool:
        """Whether the segment size was set (else the engine may fit it)."""
        return self.segment_blocks is not None or self.segment_size is not None

    def size_given(self) -> bool:
        """Whether the logical size was set (else a trace sizes the device)."""
        return self.logical_blocks is not None or self.capacity is not None

    def resolved_logical_blocks(self) -> int:
        return int(self.to_config()["logical_blocks"])

    def given(self) -> dict[str, Any]:
        """The fields set to other than their defaults, sizes as given
        (``capacity``/``segment_size`` in bytes or a size string): the
        ``device`` of the engine's run spec, which settles the rest."""
        out = {k: v for k, v in asdict(self).items()
               if v is not None and (k in _SIZE_FIELDS or k in _UNSET or v != _DEFAULT_DEVICE.get(k))}
        if self.logical_blocks is not None:
            out["logical_blocks"] = int(self.logical_blocks)
        if self.segment_blocks is not None:
            out["segment_blocks"] = int(self.segment_blocks)
        return out

    def to_config(self) -> dict[str, Any]:
        """The engine's device configuration (a JSON object) for the fields
        given, as the engine settles it (``_core.settle_device``); an
        impossible device raises :class:`ConfigError` naming the field."""
        return json.loads(_core.settle_device(_dumps(self.given(), "device")))


def _field_line(f: dict[str, Any], unset: bool = False) -> str:
    """A field of an engine table (:data:`DEVICE_FIELDS`, :data:`RUN_FIELDS`) as a line of its class's doc."""
    unit = f" [{f['unit']}]" if f["unit"] else ""
    choices = f" (one of {', '.join(f['choices'])})" if f["choices"] else ""
    default = "unset" if unset or f["default"] is None else json.dumps(f["default"])
    return f"    ``{f['name']}``{unit}: {f['doc']}{choices}; default {default}."


def _device_class() -> type:
    """:class:`Device`, a dataclass of every field of :data:`DEVICE_FIELDS` (and the size strings)."""
    from typing import Optional, Union

    fields: list[tuple[str, Any, Any]] = []
    lines = []
    for f in DEVICE_FIELDS:
        t = _PY_TYPES[f["type"]]
        name = f["name"]
        unset = name in _UNSET
        fields.append((name, Optional[t] if f["optional"] or unset else t,
                       field(default=None if unset else f["default"])))
        lines.append(_field_line(f, unset))
        if name in _SIZES:
            extra, doc = _SIZES[name]
            fields.append((extra, Optional[Union[int, str]], field(default=None)))
            lines.append(f"    ``{extra}``: {doc}.")
    cls = make_dataclass("Device", fields, bases=(_DeviceMethods,))
    cls.__module__ = __name__
    cls.__qualname__ = "Device"
    cls.__doc__ = (
        "The simulated device: every field of the engine's device configuration\n"
        "(``wafer.DEVICE_FIELDS``), all with defaults. Give the logical size as\n"
        "``logical_blocks`` or ``capacity``; without either, a trace sizes the\n"
        "device from its footprint (and, without a segment size, fits the\n"
        "segments to it). An impossible device (``op=0``, a block size that is\n"
        "not a power of two, ...) raises :class:`ConfigError` at construction.\n\n"
        "Fields:\n\n" + "\n".join(lines) + "\n")
    return cls


Device = _device_class()


def presets() -> list[dict[str, Any]]:
    """Device presets: ``name``, ``description``, ``device`` (the fields it
    sets), ``config`` (the whole device it gives) and ``victim`` (the
    paper's GC victim selector)."""
    return json.loads(_core.presets_json())["device"]


def kmeans(points: list[list[float]], weights: list[float] | None = None, k: int = 2, *, seed: int = 1,
           max_iter: int = 300, init: list[list[float]] | None = None) -> dict[str, Any]:
    """The weighted K-means ``fios`` clusters its feature matrix with
    (k-means++ seeded by ``seed``, or the ``init`` centres; Lloyd until no
    assignment changes): ``centers``, ``labels``, ``init``, ``iterations``,
    ``inertia``, ``converged``."""
    pts = [[float(x) for x in p] for p in points]
    w = [1.0] * len(pts) if weights is None else [float(x) for x in weights]
    return json.loads(_core.kmeans_json(pts, w, int(k), int(seed), int(max_iter), init))


@functools.cache
def _registry_text() -> str:
    return _core.registry_json()


def _registry() -> dict[str, Any]:
    return json.loads(_registry_text())


def policies() -> list[dict[str, Any]]:
    """Registered placement policies: ``name``, ``description``, ``family``
    (trivial, rule-based, stream, learned, oracle), ``needs_future`` (places
    by the annotated future) and ``defaults`` (its parameters)."""
    return _registry()["policies"]


def composites() -> list[dict[str, Any]]:
    """The composite policy names (``POLICY+nu``, ``nodap+POLICY-user``,
    ``dogi+User`` ...), as data: ``form``, ``description``, ``examples``,
    ``applies_to`` (empty: any policy that does not place by the future),
    ``parts``, ``family``, ``needs_future``. :func:`describe_policy` reads a
    name."""
    return _registry()["composites"]


@functools.lru_cache(maxsize=1024)
def _describe(name: str) -> str:
    return _core.describe_policy(name)


def describe_policy(name: str) -> dict[str, Any]:
    """What a policy name stands for, as the engine parses it: ``base`` (the
    registered policy whose parameters it takes), ``form`` (the composite
    form, None for a registered name), ``assists``, ``predictor``, ``stage``,
    ``family`` and ``needs_future``. An unknown policy, assist or predictor
    raises :class:`PolicyError`."""
    return json.loads(_describe(str(name)))


def victims() -> list[dict[str, Any]]:
    """Registered victim selectors: ``name``, ``description``."""
    return _registry()["victims"]


def setups() -> list[dict[str, Any]]:
    """Peer setups (``setup=`` of :func:`replay`): ``name``, ``description``."""
    return _registry()["setups"]


def _chunk(total: int) -> int:
    return max(1 << 16, min(1 << 21, total // 100))


ALL = 1 << 63

#: The workload ``replay``, ``compare`` and ``train`` use when none is given:
#: Zipf(1.0), FIO-like, skewed enough for placement to matter.
DEFAULT_WORKLOAD = "zipf:1.0"


#: Every field a run takes (``_core.run_fields_json``): ``name``, ``type``, ``unit``, ``choices``, ``default``,
#: ``doc``, ``flag`` (the CLI's), ``group``. :class:`Run` and :func:`replay`'s keywords are drawn from it.
RUN_FIELDS: list[dict[str, Any]] = json.loads(_core.run_fields_json())
_RUN_FIELD = {f["name"]: f for f in RUN_FIELDS}


def _run_class() -> type:
    """:class:`Run`, a dataclass of every field of :data:`RUN_FIELDS` but the
    policy, workload and device (:func:`replay`'s own arguments), all unset."""
    from typing import Optional

    lines, fields = [], []
    for f in RUN_FIELDS:
        if f["name"] in ("policy", "workload", "device"):
            continue
        fields.append((f["name"], Optional[Any], field(default=None)))
        lines.append(_field_line(f))
    cls = make_dataclass("Run", fields)
    cls.__module__ = __name__
    cls.__qualname__ = "Run"
    cls.__doc__ = ("How to run a replay: every run field of the engine (``wafer.RUN_FIELDS``), unset until\n"
                   "given; ``replay(policy, workload, run=Run(...))`` or the same names as keywords.\n"
                   "The engine settles what is not given (``_core.settle_run``).\n\n"
                   "Fields:\n\n" + "\n".join(lines) + "\n")
    return cls


Run = _run_class()


def _spec_value(name: str, v: Any) -> Any:
    """Field ``name``'s value as JSON for the engine: paths as strings, a
    :class:`Selection` as its fields, an integral float as an integer where
    the field counts (anything else refused by name, never truncated)."""
    kind = _RUN_FIELD[name]["type"]
    if isinstance(v, os.PathLike):
        return str(v)
    if isinstance(v, Selection):
        return json.loads(v.to_json())
    if kind.startswith("int") and not isinstance(v, (str, dict)):  # int|str, int|object: the other part as is
        return _whole(name, v)
    if kind == "float" and isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    return v


def _run_fields(run: Any, fields: dict[str, Any]) -> dict[str, Any]:
    """The run fields of ``run`` (a :class:`Run`) and ``fields`` together; an
    unknown name or one given twice is a :class:`ConfigError`."""
    unknown = [k for k in fields if k not in _RUN_FIELD]
    if unknown:
        raise _core.ConfigError(f"invalid run configuration: {unknown[0]}: no such run field; known: "
                                f"{', '.join(_RUN_FIELD)}")
    if run is None:
        return dict(fields)
    both = [k for k, v in fields.items() if v is not None and getattr(run, k) is not None]
    if both:
        raise _core.ConfigError(f"invalid run configuration: {both[0]}: given in run= and as a keyword; give it once")
    return {**{k: v for k, v in asdict(run).items() if v is not None}, **fields}


def _spec(policy: str, workload: str, device: Device | None, fields: dict[str, Any]) -> dict[str, Any]:
    """The engine's run spec (``_core.settle_run``): the fields given, None = not given."""
    spec = {k: _spec_value(k, v) for k, v in {"policy": policy, "workload": workload, **fields}.items()
            if v is not None}
    if device is not None:
        spec["device"] = device.given()
    return spec


def run_config(policy: str = "base", workload: str = DEFAULT_WORKLOAD, *, device: Device | None = None,
               run: Any = None, **fields: Any) -> dict[str, Any]:
    """The engine's whole run configuration (a JSON-ready dict) for these
    arguments (those of :func:`replay`): the engine settles it
    (``_core.settle_run``), so every default and rule is the one a JSON
    caller of the engine gets."""
    spec = _spec(policy, workload, device, _run_fields(run, fields))
    return json.loads(_core.settle_run(_dumps(spec, "run")))


def timing_presets() -> list[dict[str, Any]]:
    """The timing presets shipped with wafer: ``name``, ``description`` and
    ``config`` (the whole SSD, as :func:`timing_config` gives it;
    ``presets/NAME.toml``; :func:`timing_config` reads one or a file)."""
    return json.loads(_core.presets_json())["timing"]


def timing_config(spec: str | os.PathLike) -> dict[str, Any]:
    """The SSD of timing preset ``spec`` (a name from :func:`timing_presets`)
    or of the TOML file at path ``spec``, as a dict; :class:`ConfigError`
    names the key of an unknown or impossible setting."""
    return json.loads(_core.timing_config_json(str(spec)))


def preset_op(ssd: dict[str, Any]) -> float:
    """A preset's over-provisioning (a fraction of the physical pages) as
    wafer's ``op`` ((physical - logical) / logical)."""
    return _core.preset_op(_dumps(ssd, "timing"))


def _needs_nodap_search(policy: str, params: dict[str, Any] | None) -> bool:
    p = params or {}
    return policy == "nodap" and not p.get("birs") and not p.get("config") and p.get("search", True)


def replay(
    policy: str = "base",
    workload: str = DEFAULT_WORKLOAD,
    *,
    device: Device | None = None,
    run: Run | None = None,
    progress: bool = False,
    on_step: Callable[[int, int], None] | None = None,
    save_model: str | os.PathLike | None = None,
    checkpoint: str | os.PathLike | None = None,
    checkpoint_every: float | None = None,
    **fields: Any,
) -> RunResult:
    """Replay ``workload`` (a spec such as ``"zipf:1.0"``) or a ``trace`` file
    under ``policy``.

    ``writes`` is the number of user blocks to write (default: 4 drive-writes
    of a synthetic workload; the whole trace), or ``drive_writes`` that many
    times the logical capacity (a trace's footprint once it is sized). A trace's format is detected
    unless ``format`` is given; ``selection`` picks a device, time window,
    first N requests, reads. A ``workload`` that names an existing file is a
    trace.

    Without a logical size in ``device`` a trace sizes the device from its
    footprint: the blocks it reads or writes, mapped densely (``address_space
    =True`` keeps its addresses and sizes the device to the highest one).
    With a size given, blocks keep their addresses unless ``remap=True``.
    ``repeat=K`` replays the trace K times in a row (timestamps shifted; every
    block then lives exactly one pass), ``extend=K`` continues it to K
    drive-writes in all with requests drawn from its own lifetimes, sizes,
    read/write mix and locality (``wafer.traces.extend``), so a short trace
    reaches a steady state. ``result.warnings`` says when a number means
    little (GC never ran, warm-up not reached, odd timestamps).

    Before anything is allocated, the run's memory is estimated; a run that
    needs more than the machine has (or ``memory_limit``, bytes or
    ``"8GiB"``) raises :class:`ResourceError` saying which flag helps.

    ``accuracy=True`` annotates the stream with every block's death time
    (cached for a trace in ``cache_dir``, default ``~/.cache/wafer``) and
    scores the policy's lifetime predictions:
    ``result.accuracy``, per-group lifetimes, per-window accuracy columns.
    Oracle policies (``nodap``, ``oracle-*``, ``POLICY+nu``/``+ngc``) always
    get the annotation; ``nodap`` without ``birs``/``config`` first runs its
    offline search (:func:`wafer.oracle.search`), reported in
    ``result.raw["nodap_search"]``.

    Learned policies (``dogi``) train online during the replay (reported in
    ``result.training``); ``save_model=PATH`` writes the policy's final model
    as safetensors (see :func:`train`).

    ``timing="intel750"`` (a preset of :func:`timing_presets`, a TOML file,
    or a dict) simulates the SSD's timing too, on the preset's whole drive
    (its capacity and over-provisioning; a trace is placed inside it,
    remapped densely only when its addresses exceed it): the drive is
    preconditioned in WAF mode to ``precondition`` drive-writes (the
    preset's ``[precondition]`` by default, 2: a sequential fill, then a
    drive-write of random overwrites by ``precondition_workload``: a
    synthetic run's own workload, else the preset's), never with the
    trace's requests; then every request passes the host interface, DRAM
    cache and mapping table and every flash operation (user, GC, mapping)
    runs on its channel, die and plane; at the end the dirty cache is
    flushed and timed (``flush=False`` leaves it).
    ``fit_device=True`` sizes the device to the run instead (the trace's
    footprint or ``device``): quicker, not the preset's drive.
    ``arrival`` is ``"trace"`` (open loop at the timestamps; the default
    for traces), ``"closed"`` (``queue_depth`` outstanding requests, each
    completion issues the next after ``think_ns``; the default otherwise;
    ``think_ns`` may instead be AutoBlox's think time from a trace's rate,
    ``{"peak_bytes_per_ns": P, "windows": [[start_ns, bytes_per_ns], ...]}``,
    see :func:`wafer.tune.evaluate.think_model`)
    or ``"afap"`` (as fast as the device admits). The page size is the
    block size.
    ``result.timing`` holds latency percentiles, IOPS, bandwidth,
    utilisation, hit rates, WAF with mapping writes and energy.

    The simulation runs in Rust without the GIL, in chunks; ``progress=True``
    draws a progress bar on stderr for runs longer than two seconds and
    ``on_step(written, total)`` is called after every chunk.

    ``setup`` follows a peer simulator's conventions (``"sepbit-replayer"``,
    ``"midas-sim"``; see :func:`setups` and the README): it fixes the GC
    trigger and check, garbage accounting, prefill, cost-benefit form and
    clock and whether the WAF counts the prefill, and gives policies the
    peer's variants; ``result.raw["conventions"]`` says what was used. Without
    a setup, ``cost_benefit`` (``"lfs"`` or ``"sqrt"``: (1-u)/u·√age) and
    ``cost_benefit_clock`` (``"user-writes"`` since sealing, or
    ``"trace-time"`` since the segment's last append) choose what the
    ``cost-benefit`` selector computes, and ``waf_counts_prefill`` counts the
    prefill's writes in ``waf`` (``workload_waf`` never does).

    ``checkpoint=PATH`` writes the run's complete state (FTL, policy with
    its models, samplers and RNGs, statistics, position in the trace)
    atomically to PATH every ``checkpoint_every`` drive-writes (default:
    every 5 minutes of wall time) and at the end; :func:`resume` continues a killed run from it to the
    result the uninterrupted run gives (a learned policy is checkpointed
    between its trainings; timed replays cannot be checkpointed).

    An error during the replay (a bad trace line, a diverging training) is
    raised with the results up to that point in ``error.partial`` (a
    :class:`RunResult`), so nothing measured is lost.
    """
    fields = _run_fields(run, fields)
    config = run_config(policy, workload, device=device, **fields)
    accuracy = bool(fields.get("accuracy"))
    if progress and config["trace"] and (accuracy or describe_policy(policy)["needs_future"]):
        # The annotation runs inside the constructor; say why a big trace takes a while.
        sys.stderr.write(f"annotating block lifetimes of {config['trace']['path']} "
                         "(or reusing its cached annotation) ...\n")
    if checkpoint is not None and config.get("timing") is not None:
        # Said before the run is built (a timed device may not even fit).
        raise _core.CheckpointError(f"checkpoint {checkpoint}: a timed replay cannot be checkpointed")
    if checkpoint is not None and config.get("dump_gc") is not None:
        raise _core.CheckpointError(f"checkpoint {checkpoint}: a run dumping its victims (dump_gc) cannot be "
                                    "checkpointed (its dump would restart); leave one of them out")
    if save_model is not None:
        # Said before the run: a training run is not lost to a bad path.
        where = os.path.dirname(os.path.abspath(save_model))
        if os.path.isdir(save_model) or not os.path.isdir(where) or not os.access(where, os.W_OK):
            why = "a directory" if os.path.isdir(save_model) else f"{where} is not a writable directory"
            raise _core.ConfigError(f"invalid run configuration: save_model: cannot write {save_model} ({why})")
    # NoDaP's search (a nodap run without birs/config) runs in the engine as the run is built; its trials
    # drive a progress line.
    searching = progress and _needs_nodap_search(policy, fields.get("params"))
    bar = Progress(None, "nodap search", enabled=bool(searching))
    best: list[tuple[float, int]] = []

    def trial(text: str) -> None:
        t = json.loads(text)
        if t.get("waf") is not None and (not best or t["waf"] < best[0][0]):
            best[:] = [(t["waf"], t["groups"])]
        bar.text(f"trial, {t['groups']} groups" + (f", best WAF {best[0][0]:.3f} ({best[0][1]} groups)" if best else ""))

    try:
        sim = _core.Simulation(_dumps(config, "run"), trial if searching else None)
    finally:
        bar.close()
    r = _drive(sim, config, f"{policy}/{config['victim']}", progress=progress, on_step=on_step, checkpoint=checkpoint,
               checkpoint_every=checkpoint_every)
    if save_model is not None and not sim.save_model(str(save_model)):
        raise _core.PolicyError(f"policy {policy} has no model to save (not a learned policy, "
                                "or it never had enough labelled samples to train)")
    found = (r.policy_state or {}).get("search") if describe_policy(policy)["base"] == "nodap" else None
    if found:
        r.raw["nodap_search"] = found
    return r


def train(
    policy: str,
    workload: str = DEFAULT_WORKLOAD,
    *,
    out: str | os.PathLike = "model.safetensors",
    **kwargs: Any,
) -> RunResult:
    """Replay ``workload`` (or a ``trace=`` file) under the learned ``policy``
    with its online training, and write its final model to ``out``
    (safetensors, with the policy's name in the metadata). Start a later run
    from it with ``params={"model": out}`` (add ``"retrain": 0`` to keep it
    frozen). Keyword arguments are those of :func:`replay`."""
    learned = [p["name"] for p in policies() if p["family"] == "learned"]
    if describe_policy(policy)["base"] not in learned:
        raise _core.PolicyError(f"'{policy}' does not learn; learned policies: {', '.join(learned)}")
    return replay(policy, workload, save_model=out, **kwargs)


def compare(
    policies: Iterable[str] | None = None,
    workload: str = DEFAULT_WORKLOAD,
    *,
    victims: Iterable[str] = ("greedy",),
    **kwargs: Any,
) -> ResultSet:
    """Replay the same workload, device and seed under several policies (all
    registered ones by default) and victim selectors. Keyword arguments are
    those of :func:`replay`; ``params`` may map a policy name to its parameters.

    A run that cannot complete (a policy that does not fit the device, a bad
    parameter) becomes a row whose ``error`` says why; the others still run.
    The result is a :class:`ResultSet`: a list of :class:`RunResult` with
    ``to_pandas()`` / ``to_arrow()`` of the summary, one row per run."""
    if kwargs.get("dump_gc") is not None:
        raise _core.ConfigError("invalid run configuration: dump_gc: one file per run; dump a run's victims with "
                                "replay (`wafer replay --dump-gc FILE`), not a comparison of several")
    names = _names("policies", policies) if policies is not None else [p["name"] for p in _registry()["policies"]]
    params = kwargs.pop("params", None) or {}
    victims = _names("victims", victims)
    out = ResultSet()
    # Off a terminal: a line per finished run (and a long run's own lines);
    # on a terminal each run draws its bar.
    jobs = Progress(len(victims) * len(names), "compare", enabled=bool(kwargs.get("progress")), unit="jobs")
    for v in victims:
        for name in names:
            try:
                out.append(replay(name, workload, victim=v, params=params.get(name), **kwargs))
            except _core.WaferError as e:
                partial = getattr(e, "partial", None)
                out.append(RunResult.failed(name, v, str(kwargs.get("trace") or workload),
                                            int(kwargs.get("seed", 1)), str(e), partial))
            jobs.label = f"compare ({name}/{v} done)"
            jobs.update(len(out))
    jobs.label = "compare"
    jobs.close()
    return out


@dataclass
class MultiResult:
    """What a multi-volume replay measured: ``waf`` over all volumes
    ((Σ user + Σ GC) / Σ user writes), the totals, and each volume's own
    :class:`RunResult` in ``volumes`` (its ``workload`` names the trace, and
    for ``all_devices`` the device after ``#``). ``skipped`` lists the
    volumes that could not run (a footprint too small for any working log),
    each with why: they are in no figure."""

    waf: float | None
    user_writes: int
    gc_writes: int
    elapsed_seconds: float
    volumes: list[RunResult]
    raw: dict[str, Any] = field(repr=False, default_factory=dict)
    skipped: list[dict[str, str]] = field(default_factory=list)
    #: Most volumes whose engines were in memory at once (each is built at its first request and dropped at
    #: its last, its result kept).
    peak_volumes_in_memory: int = 0

    @classmethod
    def from_json(cls, text: str, config: dict[str, Any]) -> MultiResult:
        raw = json.loads(text)
        vols = [RunResult.from_json(json.dumps(v), config["run"]) for v in raw["volumes"]]
        return cls(waf=raw["waf"], user_writes=raw["user_writes"], gc_writes=raw["gc_writes"],
                   elapsed_seconds=raw["elapsed_seconds"], volumes=vols, raw=raw, skipped=raw.get("skipped", []),
                   peak_volumes_in_memory=raw.get("peak_volumes_in_memory", 0))

    def to_dict(self) -> dict[str, Any]:
        return {"waf": self.waf, "user_writes": self.user_writes, "gc_writes": self.gc_writes,
                "elapsed_seconds": self.elapsed_seconds, "volumes": [v.to_dict() for v in self.volumes],
                "skipped": self.skipped, "peak_volumes_in_memory": self.peak_volumes_in_memory}


#: Wall time between checkpoints when no drive-write interval is given [s]: a
#: checkpoint costs ~50 ms and 17 MB per Mi blocks of device (sepbit), so a
#: fast policy replays a drive-write in about three times that.
CHECKPOINT_SECONDS = 300.0


def _drive(sim: Any, config: dict[str, Any], label: str, *, progress: bool = False,
           on_step: Callable[[int, int], None] | None = None, checkpoint: str | os.PathLike | None = None,
           checkpoint_every: float | None = None) -> RunResult:
    """Step ``sim`` to its end (progress bar, ``on_step``), checkpointing to
    ``checkpoint`` every ``checkpoint_every`` drive-writes (every
    :data:`CHECKPOINT_SECONDS` without one) and at the end; its result."""
    if checkpoint is not None:
        remove_stale_temps(checkpoint)
    total = sim.total
    bar = Progress(total if total < ALL else None, label, enabled=progress)
    chunk = _chunk(total if total < ALL else 1 << 26)
    every = None
    if checkpoint is not None and checkpoint_every is not None:
        dw = float(checkpoint_every)
        if not (dw > 0 and dw == dw and dw != float("inf")):
            raise _core.ConfigError(f"invalid run configuration: checkpoint_every: {checkpoint_every}; "
                                    "must be a number of drive-writes > 0")
        every = max(1, round(dw * sim.logical_blocks))
        chunk = min(chunk, every)
        due = (sim.written // every + 1) * every
    last = time.monotonic()
    try:
        _precondition(sim, label, progress)
        while not sim.step(chunk):
            bar.update(sim.written)
            if on_step:
                on_step(sim.written, total)
            if checkpoint is None or not sim.checkpoint_ready:
                continue
            if every is not None and sim.written >= due:
                sim.save_checkpoint(str(checkpoint))
                due = (sim.written // every + 1) * every
            elif every is None and time.monotonic() - last >= CHECKPOINT_SECONDS:
                sim.save_checkpoint(str(checkpoint))
                last = time.monotonic()
        if checkpoint is not None and sim.checkpoint_ready:
            sim.save_checkpoint(str(checkpoint))
    except _core.WaferError as e:
        e.partial = RunResult.from_json(sim.result_json(), config)
        raise
    finally:
        bar.close()
    return RunResult.from_json(sim.result_json(), config)


def remove_stale_temps(checkpoint: str | os.PathLike) -> list[str]:
    """Remove the temporary files that runs killed while writing checkpoint
    ``checkpoint`` left beside it (``.NAME.tmp-PID`` of a process that is
    gone) and say so in one line on stderr; the files removed. A run that
    checkpoints calls it when it starts or resumes, so a kill mid-write
    costs no disk for good."""
    removed = _core.remove_stale_checkpoint_temps(str(checkpoint))
    if removed:
        sys.stderr.write(f"wafer: removed {len(removed)} stale temporary checkpoint file(s) left by killed runs: "
                         f"{', '.join(removed)}\n")
    return removed


#: User blocks of a timed run's preconditioning per step: about half a second,
#: so a progress line moves and Ctrl-C is answered between steps.
PRECONDITION_CHUNK = 1 << 21


def _precondition(sim: Any, label: str, progress: bool) -> None:
    """A timed run's preconditioning (its overwrites), stepped with its own
    progress bar before the first timed request."""
    pre = getattr(sim, "preconditioning", None)
    if pre is None:
        return
    bar = Progress(max(pre[1], 1), f"{label} preconditioning", enabled=progress, unit="writes")
    try:
        while pre is not None:
            sim.step(PRECONDITION_CHUNK)
            pre = sim.preconditioning
            if pre is not None:
                bar.update(pre[0])
    finally:
        bar.close()


def resume(path: str | os.PathLike, *, checkpoint: str | os.PathLike | None = None,
           checkpoint_every: float | None = None, progress: bool = False,
           on_step: Callable[[int, int], None] | None = None) -> RunResult:
    """Continue the run checkpointed at ``path`` (see :func:`replay`'s
    ``checkpoint``) to its end; the result is the one the uninterrupted run
    gives, apart from wall-clock times and allocated memory. The run keeps
    checkpointing to ``checkpoint`` (default: ``path`` itself) every
    ``checkpoint_every`` drive-writes (default: every 5 minutes). A checkpoint of another
    wafer version, a truncated file or a trace that changed since is a
    :class:`CheckpointError` naming the file (the file is verified by its
    length and checksum, its state must be its configuration's, and a
    trace's requests replayed so far must be the same)."""
    if checkpoint is not None and os.path.abspath(checkpoint) != os.path.abspath(path):
        remove_stale_temps(path)
    sim = _core.Simulation.resume(str(path))
    config = json.loads(sim.config_json)
    return _drive(sim, config, f"{config['policy']}/{config['victim']} (resumed)", progress=progress,
                  on_step=on_step, checkpoint=path if checkpoint is None else checkpoint,
                  checkpoint_every=checkpoint_every)


def replay_volumes(
    policy: str = "base",
    traces: Iterable[str | os.PathLike] | None = None,
    *,
    all_devices: str | os.PathLike | None = None,
    format: str | None = None,
    selection: Selection | None = None,
    progress: bool = False,
    **kwargs: Any,
) -> MultiResult:
    """Replay several volumes, each its own log (its own device sized from
    its trace, policy and victim selector), as SepBIT's trace replayer runs
    a list of per-volume traces (the logs share nothing, so they run one
    after another and memory holds one volume's engine at a time):
    the volumes are the files in ``traces``, or every device of the one file
    ``all_devices``. Keyword arguments are those of :func:`run_config`
    (device, victim, seed, setup, params ...); the result has the overall
    WAF and every volume's own result."""
    if (traces is None) == (all_devices is None):
        raise _core.ConfigError("invalid run configuration: volumes: give traces or all_devices, not both or neither")
    names: list[str] | None = None
    sel = selection or Selection()
    if all_devices is not None and not (sel.device or sel.start_seconds or sel.end_seconds or sel.max_requests):
        # Every device of one file: split it once (cached) and replay the
        # volumes' own files, instead of one pass over the whole file per
        # volume to find its requests (hours for a thousand volumes). Each
        # volume's requests, timestamps and order are the same.
        from .traces import split_cached

        # What no volume could run is refused before the (long) split.
        _core.check_multi_run(_dumps(run_config(policy, str(all_devices), trace=str(all_devices), format=format,
                                                selection=selection, **kwargs), "run"))
        split = split_cached(str(all_devices), format, skip_bad=sel.skip_bad, cache_dir=kwargs.get("cache_dir"),
                             progress=progress)
        names = [f"{all_devices}#{v['device']}" for v in split]
        traces, all_devices, format = [v["path"] for v in split], None, None
        selection = Selection(drop_reads=sel.drop_reads, skip_bad=sel.skip_bad)
    paths = [str(t) for t in _names("traces", traces)] if traces is not None else [str(all_devices)]
    base = run_config(policy, paths[0], trace=paths[0], format=format, selection=selection, **kwargs)
    vols = []
    for p in paths:
        t = dict(base["trace"])
        t["path"] = p
        vols.append(t)
    config = {"run": base, "volumes": [] if all_devices is not None else vols,
              "all_devices": all_devices is not None}
    sim = _core.MultiSimulation(_dumps(config, "run"))
    label = f"{policy}/{base['victim']} x{len(paths)}" if traces is not None else f"{policy}/{base['victim']}"
    bar = Progress(None, label, enabled=progress)
    try:
        while not sim.step(1 << 21):
            bar.update(sim.written)
    finally:
        bar.close()
    m = MultiResult.from_json(sim.result_json(), config)
    if names is not None:  # the split files' volumes under the source's names (FILE#ID)
        by_path = dict(zip(paths, names))
        for v in m.volumes:
            v.workload = by_path.get(v.workload, v.workload)
            v.raw["workload"] = v.workload
        for sk in m.skipped:
            sk["volume"] = by_path.get(sk["volume"], sk["volume"])
    return m
