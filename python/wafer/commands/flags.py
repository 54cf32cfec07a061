"""The run's flags, shared by the commands that run something: drawn from the engine's field tables
(``wafer.RUN_FIELDS``, ``wafer.DEVICE_FIELDS``), with argparse types that name the flag of a bad value,
and the conversion of parsed flags into :func:`wafer.replay`'s arguments."""

from __future__ import annotations

import argparse
import json
import os
import textwrap
from typing import Any

from .. import _core, traces
from ..api import (
    _RUN_FIELD,
    DEFAULT_WORKLOAD,
    DEVICE_FIELDS,
    Device,
    parse_size,
    presets,
    setups,
    timing_presets,
)

#: --quiet: progress goes to stderr unless asked not to.
QUIET_HELP = "no progress on stderr (a bar on a terminal, elsewhere a line per finished job or per 30 s)"

_FIELD = _RUN_FIELD


def _doc(name: str, default: str | None = None) -> str:
    """A run field's help, as the engine documents it (``wafer.RUN_FIELDS``), with its default."""
    f = _FIELD[name]
    if default is None:
        default = "" if f["default"] in (None, False, True, {}) else json.dumps(f["default"]).strip('"')
    return f["doc"] + (f" (default {default})" if default else "")


def _flag(g: Any, name: str, *flags: str, **kw: Any) -> argparse.Action:
    """Add run field ``name``'s flag (the table's, or ``flags``) to ``g``: its choices and help from the
    engine's table; ``kw`` as argparse takes them."""
    f = _FIELD[name]
    if f["choices"] and kw.get("action") is None:
        kw.setdefault("choices", f["choices"])
    kw.setdefault("help", _doc(name))
    kw.setdefault("dest", name)
    return g.add_argument(*(flags or (f["flag"],)), **kw)

EPILOG_WORKLOADS = _core.workload_grammar() + """
traces (--trace FILE, or --workload FILE): formats
{formats}
  (blktrace: binary NAME.blktrace.N, base name NAME, or a tar of them; blkparse and blktrace
  take :Q or :D), and csv:time=0,op=1,offset=2,size=3[,sep=..,time_unit=..,offset_unit=sector,...]
  for any other delimited layout (see `wafer traces formats`);
  gzip/xz/zstd read transparently; the format is detected unless --format is given
  (one clear winner, or an error listing the candidates).
  Device size: without --logical-blocks/--capacity the device is the trace's footprint
  (the blocks it reads or writes, mapped densely; segments shrink to fit a small one);
  --address-space keeps its addresses and sizes the device to the highest one.
  A short trace: --extend K continues it to K drive-writes in all with requests drawn from
  its own lifetimes, sizes, read/write mix and locality (`wafer traces extend` writes it);
  --repeat K replays it K times (every block then lives exactly one pass); results warn
  when GC never ran, the warm-up was not reached or the trace ended before --drive-writes.
""".format(formats=textwrap.fill(
    ", ".join(f["name"] for f in json.loads(_core.trace_formats_json()) if f["name"] != "csv:KEYS"), 96,
    initial_indent="  ", subsequent_indent="  ", break_on_hyphens=False))


def _int_type(lo: int, hi: int | None = None, bounds: str | None = None):
    """An argparse type: an integer in ``lo..=hi`` (the flag is named by
    argparse on error); ``bounds`` says the range (default: at least ``lo``)."""
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not an integer") from None
        if v < lo or (hi is not None and v > hi):
            raise argparse.ArgumentTypeError(f"{v} must be {bounds or f'at least {lo}'}")
        return v
    return parse


#: argparse types: an integer >= 1, >= 0, and a seed (0..2^64-1).
_positive_int = _int_type(1)
_nonneg_int = _int_type(0)
_seed = _int_type(0, (1 << 64) - 1, "an integer from 0 to 2^64-1")


def _size(text: str) -> int:
    """argparse type: a size such as 8GiB (see `wafer.parse_size`)."""
    try:
        return parse_size(text)
    except _core.ConfigError as e:
        raise argparse.ArgumentTypeError(str(e).split(": ", 2)[-1]) from None


def _positive_float(text: str) -> float:
    """argparse type: a finite number > 0."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not (v > 0 and v != float("inf")):
        raise argparse.ArgumentTypeError(f"{text} must be a finite number > 0")
    return v


def _nonneg_float(text: str) -> float:
    """argparse type: a finite number >= 0 (NaN and inf are refused naming the flag)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not (v >= 0 and v != float("inf")):
        raise argparse.ArgumentTypeError(f"{text} must be a finite number >= 0")
    return v


#: --think-us at most an hour: a closed loop's think time in ns must fit the engine's 64-bit clock many times over.
MAX_THINK_US = 3.6e9


def _think_us(text: str) -> float:
    """argparse type: a think time in microseconds, 0 to an hour."""
    v = _nonneg_float(text)
    if v > MAX_THINK_US:
        raise argparse.ArgumentTypeError(f"{text} us is more than an hour ({MAX_THINK_US:.0f} us)")
    return v


def _add_device(p: argparse.ArgumentParser) -> None:
    d = Device()
    g = p.add_argument_group("device")
    g.add_argument("--preset", metavar="NAME",
                   help="a paper's device, every field it sets: " +
                        ", ".join(f"{x['name']} ({x['description'].split(':')[0]}: "
                                  + ", ".join(f"{k}={json.dumps(v)}" for k, v in x["device"].items()) + ")"
                                  for x in presets())
                        + "; flags given explicitly win over it (--gc-reserve/--gc-high over its GC fractions)")
    size = g.add_mutually_exclusive_group()
    size.add_argument("--logical-blocks", type=_positive_int, metavar="N",
                      help="logical capacity in blocks (default 1Mi = 4 GiB)")
    size.add_argument("--capacity", metavar="SIZE", help="logical capacity in bytes, e.g. 4GiB, 512MiB, 1TB")
    g.add_argument("--physical-blocks", type=_positive_int, metavar="N",
                   help="exact physical capacity in blocks (overrides --op)")
    g.add_argument("--op", type=_positive_float, metavar="RATIO",
                   help=f"over-provisioning, (physical-logical)/logical (default {d.op}; with --timing, the preset's)")
    g.add_argument("--block-size", type=_positive_int, metavar="BYTES", help=f"block (page) size (default {d.block_size})")
    seg = g.add_mutually_exclusive_group()
    seg.add_argument("--segment-blocks", type=_positive_int, metavar="N",
                     help="segment (superblock) size in blocks (default 256; smaller for a trace's small footprint)")
    seg.add_argument("--segment-size", metavar="SIZE", help="segment size in bytes, e.g. 2MiB or 512MiB")
    g.add_argument("--gc-reserve", "--gc-low", dest="gc_low", type=_positive_int, metavar="N",
                   help=f"GC reserve: GC starts below N free segments, the same for every policy (default {d.gc_low}, "
                        "at least 2); the open segments of a policy's groups come on top, as its own cost")
    g.add_argument("--gc-high", type=_positive_int, metavar="N",
                   help="GC stops at N free segments (default: the larger of 4 and the reserve)")
    g.add_argument("--gc-mode", choices=["watermark", "garbage-proportion"], default=None,
                   help="watermark: fixed-capacity SSD, GC below --gc-low free segments (default); "
                        "garbage-proportion: the log-structured store of SepBIT's evaluation, GC while the log's "
                        "garbage exceeds --gp-threshold (sized automatically; --op unused). Its trigger only: "
                        "--setup sepbit-replayer sets the replayer's other conventions too")
    g.add_argument("--garbage-accounting", choices=["immediate", "at-seal"], default=None,
                   help="immediate: an overwritten copy is garbage of the log at once (default); at-seal: a copy "
                        "in an open segment counts when the segment is sealed (SepBIT's replayer)")
    g.add_argument("--gc-check", choices=["block", "request"], default=None,
                   help="block: check GC after every block, collect until the trigger clears (default); "
                        "request: check after every request, collect --pick-segments victims (SepBIT's replayer)")
    g.add_argument("--pick-segments", type=_positive_int, metavar="K",
                   help="victims per GC check at most (default: until the trigger clears; 1 with --gc-check "
                        "request, the replayer's --setPickSegAmount)")
    g.add_argument("--gp-threshold", type=_nonneg_float, metavar="F",
                   help=f"garbage-proportion mode: log garbage that triggers GC (default {d.gp_threshold})")
    g.add_argument("--segment-gp-threshold", type=_nonneg_float, metavar="F",
                   help=f"garbage-proportion mode: least garbage of a victim (default {d.segment_gp_threshold})")
    g.add_argument("--open-streams", type=_positive_int, metavar="N",
                   help="open-stream limit of a multi-stream SSD: groups >= N share the last stream (default: none)")
    g.add_argument("--prefill", action=argparse.BooleanOptionalAction, default=None,
                   help="write the logical space once before the workload (default: on, or the --preset's); "
                        "--no-prefill starts from an empty device")
    g.add_argument("--warmup-drive-writes", type=_nonneg_float, metavar="K",
                   help=f"drive-writes excluded from the steady-state WAF (default {d.warmup_drive_writes})")
    g.add_argument("--window-drive-writes", type=_positive_float, metavar="W",
                   help=f"time-series window length (default {d.window_drive_writes})")
    g.add_argument("--check-every", type=_nonneg_int, metavar="N",
                   help="run the FTL invariant checker every N user writes (slow; for debugging)")
    p.set_defaults(_more_device=_add_more(p, DEVICE_FIELDS, "more device fields (the engine's table)"))


#: Device flags, by their argparse dest (= the wafer.Device field); each given explicitly wins over the --preset.
_DEVICE_FLAGS = ("logical_blocks", "capacity", "physical_blocks", "op", "block_size", "segment_blocks", "segment_size",
                 "gc_low", "gc_high", "gc_mode", "garbage_accounting", "gc_check", "pick_segments", "gp_threshold",
                 "segment_gp_threshold", "open_streams", "prefill", "warmup_drive_writes", "window_drive_writes",
                 "check_every")


def _add_more(p: argparse.ArgumentParser, fields: list[dict[str, Any]], title: str) -> list[str]:
    """A flag for each engine field in ``fields`` (``wafer.DEVICE_FIELDS``, ``wafer.RUN_FIELDS``) that has none
    above, its type, choices and help from the table: a field added to the engine reaches the CLI as it is.
    Returns their names (their dests)."""
    g, names = None, []
    for f in fields:
        flag = (f.get("flag") or "--" + f["name"].replace("_", "-")).split(",")[0]
        if not flag.startswith("--") or flag in p._option_string_actions:
            continue
        g = g or p.add_argument_group(title)
        kw: dict[str, Any] = ({"action": argparse.BooleanOptionalAction} if f["type"] == "bool" else
                              {"choices": f["choices"]} if f["choices"] else
                              {"type": {"int": int, "float": float}.get(f["type"], str),
                               "metavar": {"int": "N", "float": "F"}.get(f["type"], "VALUE")})
        unit = f" [{f['unit']}]" if f["unit"] else ""
        default = "unset" if f["default"] is None else json.dumps(f["default"]).strip('"')
        g.add_argument(flag, dest=f["name"], default=None, help=f"{f['doc']}{unit} (default {default})", **kw)
        names.append(f["name"])
    return names


def _add_run(p: argparse.ArgumentParser, default_workload: str = DEFAULT_WORKLOAD) -> None:
    g = p.add_argument_group("run")
    _flag(g, "workload", default=default_workload, metavar="SPEC",
          help=_doc("workload", default_workload) + "; see below")
    n = g.add_mutually_exclusive_group()
    _flag(n, "writes", type=_positive_int, metavar="N")
    _flag(n, "drive_writes", "--drive-writes", type=_positive_float, metavar="K")
    _flag(g, "seed", type=_seed, default=1)
    _flag(g, "accuracy", action="store_true")
    _flag(g, "cache_dir", metavar="DIR")
    _flag(g, "memory_limit", metavar="SIZE", type=_size)
    g.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    g.add_argument("--quiet", "-q", action="store_true", help=QUIET_HELP)


def _epilog_setups() -> str:
    """The setups, as the engine describes them (``wafer.setups()``), and what a setup fixes."""
    rows = [textwrap.fill(s["description"], 98, initial_indent=f"  {s['name']:<17}", subsequent_indent=" " * 19,
                          break_on_hyphens=False) for s in setups()]
    return ("setups (--setup): a peer simulator's conventions at once, for comparing with its numbers\n"
            + "\n".join(rows) + "\n"
            "  A setup fixes --gc-mode, the prefill, --garbage-accounting, --gc-check, --cost-benefit,\n"
            "  --cost-benefit-clock, --waf-counts-prefill and --placement-batch (giving one otherwise is an error);\n"
            "  --pick-segments, the thresholds, the reserve and the device size stay yours.\n"
            "  Results name the setup and conventions used (\"conventions\" in --json).\n"
            "volumes: --trace A --trace B ... (or --all-devices with one trace) replays each volume as its\n"
            "  own log, as the replayer runs a list of per-volume traces (one volume in memory at a time);\n"
            "  the result has the overall WAF and each volume's.\n")


def _add_setup(p: argparse.ArgumentParser) -> None:
    """--setup and the conventions it fixes (replay and compare)."""
    g = p.add_argument_group("conventions (see 'setups' below)")
    _flag(g, "setup", default="wafer")
    _flag(g, "cost_benefit", default=None)
    _flag(g, "cost_benefit_clock", default=None)
    _flag(g, "waf_counts_prefill", action="store_true", default=None)


def _setup_kwargs(a: argparse.Namespace) -> dict[str, Any]:
    """setup= and the conventions given, for replay()/compare(); the engine refuses a convention the setup
    fixes otherwise."""
    return {"setup": a.setup, "cost_benefit": a.cost_benefit, "cost_benefit_clock": a.cost_benefit_clock,
            "waf_counts_prefill": a.waf_counts_prefill}


def _add_selection(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("trace selection")
    g.add_argument("--format", metavar="NAME", help="trace format (default: detected from the content)")
    g.add_argument("--device", metavar="ID", help="keep one device / volume: N, or MAJ,MIN for fiu and blkparse")
    g.add_argument("--start", type=_nonneg_float, metavar="SECONDS",
                   help="skip requests before this time (s after the first)")
    g.add_argument("--end", type=_nonneg_float, metavar="SECONDS", help="stop at this time (s after the first)")
    g.add_argument("--max-requests", type=_positive_int, metavar="N", help="keep the first N selected requests")
    g.add_argument("--drop-reads", action="store_true", help="leave read requests out")
    g.add_argument("--skip-bad", action="store_true",
                   help="skip malformed lines and report how many (default: stop at the first, naming it)")


def _add_trace(p: argparse.ArgumentParser) -> None:
    """--trace, --remap and the selection flags of replay and compare."""
    _add_selection(p)
    g = p.add_argument_group("trace")
    g.add_argument("--trace", metavar="FILE", action="append",
                   help="replay a trace file instead of --workload (replay: repeat it for several volumes, "
                        "each its own log)")
    g.add_argument("--all-devices", action="store_true",
                   help="replay: every device of the trace as its own volume (log)")
    g.add_argument("--repeat", type=_positive_int, default=1, metavar="K",
                   help="replay the trace K times in a row, timestamps shifted (default 1); every block then "
                        "lives exactly one pass: prefer --extend")
    g.add_argument("--extend", type=_positive_float, metavar="K",
                   help="continue the trace to K drive-writes in all, drawn from its own lifetimes, sizes, "
                        "read/write mix and locality (seeded by --seed)")
    g.add_argument("--address-space", action="store_true",
                   help="size the device to the trace's highest block, addresses kept (default: its footprint)")
    g.add_argument("--remap", action="store_true",
                   help="with --capacity/--logical-blocks: map the blocks the trace touches densely")


def _add_timing(p: argparse.ArgumentParser, own: tuple[str, ...] = ()) -> None:
    """The timing flags, then a generic flag for every other run field the parser has none for but ``own``
    (the fields a command sets itself, e.g. compare's policy, victim and params)."""
    g = p.add_argument_group("timing (latency, throughput and energy of an SSD; see `wafer presets`)")
    names = ", ".join(t["name"] for t in timing_presets())
    _flag(g, "timing", metavar="PRESET|FILE", help=_doc("timing") + f"; presets: {names}")
    _flag(g, "arrival")
    _flag(g, "queue_depth", type=_positive_int, default=32, metavar="N")
    _flag(g, "think_ns", "--think-us", dest="think_us", type=_think_us, default=0.0, metavar="US",
          help="closed loop: host time between a completion and the next request [us] (default 0)")
    _flag(g, "precondition", type=_nonneg_float, metavar="K")
    _flag(g, "precondition_workload", "--precondition-workload", metavar="SPEC")
    _flag(g, "fit_device", "--fit-device", action="store_true")
    _flag(g, "precondition_cache", "--precondition-cache", metavar="DIR",
          help=_doc("precondition_cache") + " (true without either flag; this flag gives the folder)")
    g.add_argument("--no-precondition-cache", action="store_true", help="precondition afresh and save nothing")
    _flag(g, "flush", "--no-flush", dest="no_flush", action="store_true",
          help="leave the dirty cache at the end (reported as timing.cache.dirty_pages_at_end) instead of "
               "flushing it to flash, timed (timing.flush)")
    p.set_defaults(_more_run=_add_more(p, [f for f in _FIELD.values() if f["name"] not in own],
                                       "more run fields (the engine's table)"))


def _timing_kwargs(a: argparse.Namespace) -> dict[str, Any]:
    """The timing flags (and any run field with a generic flag) as given; the engine settles them (a timed
    run's whole drive, its page as the block) and refuses what does not apply, naming the field (and flag)."""
    return {"timing": a.timing, "arrival": a.arrival, "queue_depth": a.queue_depth,
            "think_ns": int(a.think_us * 1000), "precondition": a.precondition,
            "precondition_workload": a.precondition_workload, "fit_device": a.fit_device,
            "flush": not a.no_flush, "precondition_cache": _precondition_cache(a),
            **{f: v for f in getattr(a, "_more_run", ()) if (v := getattr(a, f)) is not None}}


def _precondition_cache(a: argparse.Namespace) -> bool | str:
    if a.no_precondition_cache and a.precondition_cache:
        raise _core.ConfigError("invalid device configuration: --no-precondition-cache: not with --precondition-cache")
    return False if a.no_precondition_cache else (a.precondition_cache or True)


def _selection(a: argparse.Namespace) -> traces.Selection:
    return traces.Selection(device=a.device, start_seconds=a.start, end_seconds=a.end,
                            max_requests=a.max_requests, drop_reads=a.drop_reads, skip_bad=a.skip_bad)


def _trace_kwargs(a: argparse.Namespace) -> dict[str, Any]:
    if isinstance(a.trace, list):
        if len(a.trace) > 1:
            raise _core.ConfigError("invalid run configuration: trace: several --trace files are volumes, "
                                    "which only `wafer replay` runs")
        a.trace = a.trace[0]
    if getattr(a, "trace_file", None):
        a.trace = a.trace or a.trace_file
    path = a.trace or (a.workload if os.path.isfile(a.workload) else None)
    extra = {"cache_dir": a.cache_dir, "memory_limit": a.memory_limit}
    if path is None:
        # Trace-only flags given with a workload go to the engine, which refuses them by name
        # (dropping them here ran the workload as if they had not been given).
        given = {"format": a.format, "remap": a.remap or None, "address_space": a.address_space or None,
                 "repeat": a.repeat if a.repeat != 1 else None, "extend": a.extend}
        sel = _selection(a)
        if sel != traces.Selection():
            given["selection"] = sel
        return {**extra, **{k: v for k, v in given.items() if v is not None}}
    return {"trace": path, "format": a.format, "selection": _selection(a), "remap": a.remap,
            "address_space": a.address_space, "repeat": a.repeat, "extend": a.extend, **extra}


def _preset(a: argparse.Namespace) -> dict[str, Any]:
    """The preset named by --preset (empty without one)."""
    name = getattr(a, "preset", None)
    if not name:
        return {}
    found = {p["name"]: p for p in presets()}
    if name not in found:
        raise _core.ConfigError(f"unknown device preset '{name}'; known: {', '.join(found)}")
    return found[name]


def _device(a: argparse.Namespace) -> Device:
    """The device: every field of the --preset, then the flags given explicitly (which win), the rest at their
    defaults. A flag stands for the fields of the same knob in other units: --segment-size for the preset's
    segment_blocks, --gc-reserve for its gc_low_fraction, --gc-high for its gc_high_fraction."""
    pre = dict(_preset(a).get("device", {}))
    given = {f: v for f in (*_DEVICE_FLAGS, *getattr(a, "_more_device", ())) if (v := getattr(a, f, None)) is not None}
    for flag, replaces in (("segment_size", "segment_blocks"), ("gc_low", "gc_low_fraction"),
                           ("gc_high", "gc_high_fraction")):
        if flag in given:
            pre.pop(replaces, None)
    return Device(**{**pre, **given})


def _writes(a: argparse.Namespace) -> dict[str, Any]:
    """--writes or --drive-writes (the latter resolved once the device is sized)."""
    return {"writes": a.writes, "drive_writes": a.drive_writes}


def _params(items: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items or []:
        if "=" not in item:
            raise _core.PolicyError(f"--param '{item}' is not KEY=VALUE")
        k, v = item.split("=", 1)
        try:
            out[k] = json.loads(v)
        except json.JSONDecodeError:
            out[k] = v
    return out
