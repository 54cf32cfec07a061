"""The ``wafer`` command line. Run ``wafer --help`` or ``wafer COMMAND --help``."""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import sys
import textwrap
from typing import Any

from . import _core, traces
from .api import (
    _RUN_FIELD,
    DEFAULT_WORKLOAD,
    DEVICE_FIELDS,
    Device,
    compare,
    composites,
    describe_policy,
    parse_size,
    policies,
    presets,
    replay,
    replay_volumes,
    resume,
    run_config,
    setups,
    timing_config,
    timing_presets,
    victims,
)
from .result import RunResult, format_table

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
                   help="GC stops at N free segments (default: the reserve)")
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
            "  own log in one timeline merged by timestamp, as the replayer runs a list of per-volume\n"
            "  traces; the result has the overall WAF and each volume's.\n")


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
                   help="replay: every device of the trace as its own volume (log), merged by timestamp")
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


def _add_timing(p: argparse.ArgumentParser) -> None:
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
          help=_doc("precondition_cache").replace("true (", "default (").split(", a folder")[0]
          + "; or this folder")
    g.add_argument("--no-precondition-cache", action="store_true", help="precondition afresh and save nothing")
    _flag(g, "flush", "--no-flush", dest="no_flush", action="store_true",
          help="leave the dirty cache at the end (reported as timing.cache.dirty_pages_at_end) instead of "
               "flushing it to flash, timed (timing.flush)")
    p.set_defaults(_more_run=_add_more(p, list(_FIELD.values()), "more run fields (the engine's table)"))


def _timing_kwargs(a: argparse.Namespace) -> dict[str, Any]:
    """The timing flags (and any run field with a generic flag) as given; the engine settles them (a timed
    run's whole drive, its page as the block) and refuses what does not apply, naming the field (and flag)."""
    return {"timing": a.timing, "arrival": a.arrival, "queue_depth": a.queue_depth,
            "think_ns": int(a.think_us * 1000), "precondition": a.precondition,
            "precondition_workload": a.precondition_workload, "fit_device": a.fit_device,
            "flush": not a.no_flush, "precondition_cache": _precondition_cache(a),
            **{f: v for f in getattr(a, "_more_run", ()) if (v := getattr(a, f)) is not None}}


def _pcache_text(c: dict[str, Any] | None) -> str:
    """How a timed run's preconditioning came about, for its summary row."""
    if not c:
        return ""
    if c["loaded"]:
        return f"; loaded from {c['path']}"
    if c["saved"]:
        return f"; saved to {c['path']} ({c['bytes'] / 2**20:.0f} MiB) for later runs"
    return ""


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
        return extra
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


def _print_result(r: RunResult) -> None:
    transient = "  (only the prefill transient: see the warning)" if r.transient else ""
    rows = [
        ("policy / victim", f"{r.policy} / {r.victim}"),
        ("workload", r.workload),
        ("WAF", (f"{r.waf:.4f}" if r.waf else "-") + transient),
        ("steady-state WAF", (f"{r.steady_waf:.4f}" + transient) if r.steady_waf else "- (warm-up not reached)"),
        ("user / GC writes", f"{r.user_writes} / {r.gc_writes} blocks"),
        ("drive-writes", f"{r.drive_writes:.2f} of the {r.raw['geometry']['logical_blocks']}-block device"),
        ("mean victim valid ratio", f"{r.mean_victim_valid_ratio:.3f}" if r.mean_victim_valid_ratio else "-"),
        ("erases per segment", "min {min} / mean {mean:.1f} / max {max}".format(**r.erases)),
        ("groups", ", ".join(f"#{g['group']}: {g['user_writes']}u+{g['gc_writes']}gc, {g['segments']} seg"
                             for g in r.groups)),
        ("speed", f"{r.user_writes_per_second / 1e6:.2f} M user writes/s ({r.elapsed_seconds:.2f} s)"),
    ]
    t = r.raw.get("trace")
    if t:
        truncated = "; TRUNCATED" if t["truncated"] else ""
        passes = f" in {t['passes']} passes" if t["passes"] > 1 else ""
        ext = t.get("extension")
        if ext:
            passes += (f", then {ext['requests']} requests of its continuation ({ext['write_blocks']} of "
                       f"{ext['planned_write_blocks']} blocks planned)")
        rows.insert(2, ("trace", f"{t['format']}: {t['requests']} requests from {t['lines']} lines{passes}; "
                                 f"skipped {t['skipped_bad']} bad, {t['zero_size']} zero-size, {t['filtered']} filtered; "
                                 f"{t['backwards_timestamps']} timestamps raised{truncated}"))
        geo = r.raw["geometry"]
        how = {"footprint": "the trace's footprint, blocks mapped densely",
               "address-space": "the trace's address space",
               "given": ("the preset's whole drive" if r.timing and not r.timing["fit_device"] else "as given")
               + (", the trace's blocks mapped densely inside it" if t.get("remapped") else "")}[t["sizing"]]
        rows.insert(3, ("device", f"{geo['logical_blocks']} logical blocks ({how}; footprint "
                                  f"{t['footprint_blocks']}, address space {t['address_space_blocks']}), "
                                  f"{geo['segments']} segments of {geo['segment_blocks']} blocks, OP {geo['op']:.3f}"))
    for kind, label in (("user", "accuracy (user writes)"), ("gc", "accuracy (GC writes)")):
        rep = (r.accuracy or {}).get(kind)
        if rep:
            rows.append((label, _accuracy_line(rep)))
    ann = r.raw.get("annotation")
    if ann:
        how = "reused" if ann["reused"] else ("cached" if ann["cached"] else "scratch")
        rows.append(("lifetime annotation", f"{ann['writes']} writes, {ann['bytes'] / 2**20:.1f} MiB, {how}, "
                                            f"{ann['seconds']:.2f} s" + (f" ({ann['path']})" if ann["cached"] else "")))
    found = r.raw.get("nodap_search")
    if found:
        rows.append(("nodap search", f"{found['groups']} groups, BIRs {_short(found['birs'])}, "
                                     f"sizes {_short(found['sizes'])}, {found['trials']} trials; {found['stopped']}"))
    tr = r.training
    if tr:
        loss = f", last loss {tr['last_loss']:.3f}" if tr.get("last_loss") is not None else ""
        rows.append(("online training", f"{tr['trainings']} trainings, {tr['seconds']:.2f} s, "
                                        f"{tr['last_examples']} examples last{loss}"))
    conv = r.raw.get("conventions")
    if conv and (conv["setup"] != "wafer" or conv["gc_check"] != "block" or conv["garbage_accounting"] != "immediate"
                 or conv["cost_benefit"] != {"form": "lfs", "clock": "user-writes"} or conv["waf_counts_prefill"]):
        cb = conv["cost_benefit"]
        pick = conv["pick_segments"] or "until clear"
        rows.insert(1, ("conventions", f"setup {conv['setup']}: {conv['gc_mode']} GC checked per {conv['gc_check']}, "
                                       f"victims per check {pick}, garbage {conv['garbage_accounting']}, "
                                       f"prefill {'on' if conv['prefill'] else 'off'}"
                                       f"{' (counted in WAF)' if conv['waf_counts_prefill'] else ''}, "
                                       f"cost-benefit {cb['form']} on {cb['clock']}"))
    for g in r.groups:
        if g.get("victims"):
            life = g.get("mean_lifespan")
            rows.append((f"group {g['group']} GC", f"{g['victims']} victims, mean garbage "
                                                   f"{_fmt_num(g['mean_victim_garbage'])}, {g['user_writes']} user "
                                                   f"+ {g['gc_writes']} GC blocks written, "
                                                   f"{_fmt_num(g['user_write_share'])} of user writes, "
                                                   f"{_fmt_num(g['valid_share'])} of valid blocks, lifespan "
                                                   f"{_fmt_num(life)} user writes"))
    state = r.policy_state
    if state:
        shown = {k: v for k, v in state.items() if v is not None and k != "search"}  # the search has its row
        rows.append(("policy state", ", ".join(f"{k}={_short(v)}" for k, v in shown.items())))
    rows += [(k, v + (transient if k == "timing" else "")) for k, v in _timing_rows(r.timing)]
    for warning in r.warnings:
        rows.append(("warning", warning["message"]))
    if r.error:
        rows.append(("error", r.error))
    w = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{w}}  {v}")


def _lat(s: dict[str, Any]) -> str:
    return (f"mean {s['mean']:.1f}, p50 {s['p50']:.1f}, p90 {s['p90']:.1f}, p99 {s['p99']:.1f}, "
            f"p99.9 {s['p999']:.1f}, p99.99 {s['p9999']:.1f}, max {s['max']:.1f} us ({s['count']})")


def _timing_rows(t: dict[str, Any] | None) -> list[tuple[str, str]]:
    """The table rows of a timed run."""
    if not t:
        return []
    tp, u, h, f, e = t["throughput"], t["utilisation"], t["hits"], t["flash"], t["energy"]
    loop = f" (queue depth {t['queue_depth']})" if t["arrival"] == "closed" else ""

    def rate(x: float | None) -> str:
        return "-" if x is None else f"{x:.3f}"

    rows = [
        ("timing", f"{t['preset']} ({'fitted device' if t['fit_device'] else 'whole drive'}), {t['arrival']} "
                   f"arrivals{loop}; {t['simulated_seconds']:.4f} s simulated after {t['precondition_writes']} "
                   f"preconditioning writes ({t['precondition_workload']}, {t['precondition_seconds']:.1f} s"
                   + _pcache_text(t.get("precondition_cache")) + ")"),
        ("throughput", f"{tp['iops']:.0f} IOPS ({tp['read_iops']:.0f} read, {tp['write_iops']:.0f} write), "
                       f"{tp['bandwidth_bytes_per_s'] / 1e6:.1f} MB/s"),
    ]
    for kind in ("read", "write"):
        lat = t[f"{kind}_latency"]
        if lat["device"]["count"]:
            rows.append((f"{kind} latency (device)", _lat(lat["device"])))
            rows.append((f"{kind} latency (end to end)", _lat(lat["end_to_end"])))
    rows += [
        ("utilisation", f"channels mean {u['channel_mean']:.2f} max {u['channel_max']:.2f}; dies mean "
                        f"{u['die_mean']:.2f} min {u['die_min']:.2f} max {u['die_max']:.2f}; host link "
                        f"{max(u['host_link_down'], u['host_link_up']):.2f}; DRAM {u['dram']:.2f}"),
        ("queue waits", f"host queue mean {t['waits']['host_queue_mean_us']:.1f} us; flash mean "
                        + ", ".join(f"{k} {v:.1f}" for k, v in t["waits"]["flash_mean_us"].items()) + " us"),
        ("hit rates", f"cache {rate(h['cache_hit_rate'])}, mapping table {rate(h['cmt_hit_rate'])}"),
        ("flash operations", f"{f['user_programs']} user + {f['gc_programs']} GC + {f['mapping_programs']} mapping "
                             f"programs, {f['reads']} reads ({f['mapping_reads']} mapping), {f['erases']} erases; "
                             f"{f['multiplane_batches']} multi-plane batches; suspended {f['suspended_programs']} "
                             f"programs, {f['suspended_erases']} erases"),
        ("end of run", f"flushed {t['flush']['pages']} dirty pages in {t['flush']['seconds'] * 1e3:.3f} ms "
                       f"({t['flush']['programs']} programs)" if t["flush"] else
                       f"{t['cache']['dirty_pages_at_end']} dirty pages left in the cache (--no-flush)"),
        ("WAF with mapping", f"{rate(t['waf_with_mapping'])} (flash programs / user programs); "
                             f"host WAF {rate(t['host_waf'])} (flash programs / host pages)"),
        ("energy", f"{e['total_j']:.4g} J, {e['average_power_w']:.3f} W average: flash read {e['flash_read_j']:.3g}, "
                   f"program {e['flash_program_j']:.3g}, erase {e['flash_erase_j']:.3g}, idle {e['flash_idle_j']:.3g}, "
                   f"DRAM {e['dram_j']:.3g}, controller {e['controller_j']:.3g} J"),
        ("timing speed", f"{t['requests_per_wall_second'] / 1e6:.3f} M host requests/s, "
                         f"{t['flash_ops_per_wall_second'] / 1e6:.3f} M flash operations/s ({t['wall_seconds']:.2f} s)"),
    ]
    return rows


def _accuracy_line(rep: dict[str, Any]) -> str:
    """One line of a prediction report: accuracy, and P/R/F1 or per-class recall."""
    text = f"{rep['accuracy']:.3f} of {rep['predictions']} blocks, {rep['classes']} classes"
    b = rep.get("binary")
    if b:
        text += f"; short-lived class: precision {_fmt_num(b['precision'])}, recall {_fmt_num(b['recall'])}, " \
                f"F1 {_fmt_num(b['f1'])}"
    else:
        text += "; per-class recall " + " ".join(_fmt_num(c["recall"]) for c in rep["per_class"])
    return text


def _short(v: object) -> str:
    """A policy-state value on one line: floats to 3 decimals, lists compact."""
    if isinstance(v, float):
        return f"{v:.3f}"
    if isinstance(v, list):
        if any(isinstance(x, dict) for x in v):
            return f"[{len(v)} entries; see --json]"
        return "[" + " ".join(_short(x) for x in v) + "]"
    return str(v)


def _write_timeseries(r: RunResult, path: str) -> None:
    ts = r.timeseries()
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(ts.keys())
        out.writerows(zip(*ts.values()))


def _victim(a: argparse.Namespace, given: str | None) -> str:
    """--victim(s) as given, else the preset's, else greedy."""
    return given or _preset(a).get("victim", "greedy")


#: `wafer replay` flags that do not define the run (allowed with --resume).
_NOT_THE_RUN = {"command", "func", "parser", "argv", "resume", "checkpoint", "checkpoint_every", "quiet", "json",
                "timeseries", "show_config"}


def _given(a: argparse.Namespace) -> set[str]:
    """The options the user typed on the command line (a value equal to the
    default counts: `--seed 1` with --resume is a flag given, not a no-op)."""
    argv = list(getattr(a, "argv", None) or [])
    if a.command in argv:
        argv = argv[argv.index(a.command) + 1:]
    saved = [(act, act.default) for act in a.parser._actions]
    try:
        for act, _ in saved:
            act.default = argparse.SUPPRESS
        given, _ = a.parser.parse_known_args(argv)
    finally:
        for act, d in saved:
            act.default = d
    return set(vars(given)) - set(a.parser._defaults)


def cmd_replay(a: argparse.Namespace) -> int:
    if a.resume:
        given = sorted(k for k in _given(a) if k not in _NOT_THE_RUN)
        if given:
            flags = ", ".join("--" + k.replace("_", "-") for k in given)
            raise _core.ConfigError(f"invalid run configuration: resume: the run comes from checkpoint {a.resume}; "
                                    f"drop {flags} (a resumed run cannot change)")
        r = resume(a.resume, checkpoint=a.checkpoint, checkpoint_every=a.checkpoint_every,
                   progress=not a.quiet)
    else:
        dev = _device(a)
        if (a.trace and len(a.trace) > 1) or a.all_devices:
            if a.checkpoint:
                raise _core.ConfigError("invalid run configuration: checkpoint: a multi-volume run cannot be "
                                        "checkpointed; replay the volumes one at a time")
            return _replay_volumes(a, dev)
        kw = dict(**_writes(a), victim=_victim(a, a.victim), seed=a.seed, params=_params(a.param),
                  accuracy=a.accuracy, **_setup_kwargs(a), **_trace_kwargs(a), **_timing_kwargs(a))
        if a.show_config:
            print(json.dumps(run_config(a.policy, a.workload, device=dev, **kw), indent=1))
            return 0
        r = replay(a.policy, a.workload, device=dev, progress=not a.quiet, checkpoint=a.checkpoint,
                   checkpoint_every=a.checkpoint_every, **kw)
    if a.timeseries:
        _write_timeseries(r, a.timeseries)
    if a.json:
        print(json.dumps(r.to_dict()))
    else:
        _print_result(r)
    return 0


def _replay_volumes(a: argparse.Namespace, dev: Device) -> int:
    """`wafer replay` with several --trace files or --all-devices."""
    if a.all_devices and (not a.trace or len(a.trace) != 1):
        raise _core.ConfigError("invalid run configuration: trace: --all-devices needs exactly one --trace")
    kw: dict[str, Any] = dict(format=a.format, selection=_selection(a), remap=a.remap, repeat=a.repeat,
                              extend=a.extend, address_space=a.address_space, device=dev, accuracy=a.accuracy,
                              victim=_victim(a, a.victim), seed=a.seed, params=_params(a.param), **_writes(a),
                              cache_dir=a.cache_dir, memory_limit=a.memory_limit, **_setup_kwargs(a),
                              **_timing_kwargs(a))
    if a.all_devices:
        m = replay_volumes(a.policy, all_devices=a.trace[0], progress=not a.quiet, **kw)
    else:
        m = replay_volumes(a.policy, a.trace, progress=not a.quiet, **kw)
    if a.json:
        print(json.dumps(m.to_dict()))
        return 0
    print(f"{a.policy} / {_victim(a, a.victim)}, {len(m.volumes)} volumes, setup {a.setup}: overall WAF "
          + (f"{m.waf:.4f}" if m.waf else "-") + f" ({m.user_writes} user / {m.gc_writes} GC writes, "
          f"{m.elapsed_seconds:.2f} s; at most {m.peak_volumes_in_memory} volumes in memory at once)")
    w = max(len(v.workload) for v in m.volumes)
    for v in m.volumes:
        waf = f"{v.waf:.4f}" if v.waf else "-"
        print(f"  {v.workload:<{w}}  WAF {waf}  user {v.user_writes}  GC {v.gc_writes}")
    if m.skipped:
        print(f"skipped {len(m.skipped)} volume(s) that could not run (in no figure above):")
        for s in m.skipped:
            print(f"  {s['volume']}: {s['why']}")
    return 0


def _comparison(a: argparse.Namespace, names: list[str] | None, vics: list[str], workload: str) -> list[RunResult]:
    dev = _device(a)
    return compare(names, workload, victims=vics, **_writes(a), device=dev, seed=a.seed,
                   accuracy=a.accuracy, progress=not a.quiet, **_setup_kwargs(a),
                   **_trace_kwargs(a), **(_timing_kwargs(a) if hasattr(a, "timing") else {}))


#: `wafer compare`'s policies without --policies: one of each family's
#: landmarks (``--policies all`` runs every registered policy).
COMPARE_DEFAULT = ("base", "two-r", "sepbit", "midas", "dogi", "nodap")


def _compare_names(a: argparse.Namespace) -> list[str] | None:
    if a.policies == "all":
        return None
    if a.policies:
        return [p for p in a.policies.split(",") if p]
    if getattr(a, "timing", None):
        # An oracle's annotation covers only one drive-write of preconditioning.
        return [p for p in COMPARE_DEFAULT if describe_policy(p)["family"] != "oracle"]
    return list(COMPARE_DEFAULT)


def cmd_compare(a: argparse.Namespace) -> int:
    names = _compare_names(a)
    results = _comparison(a, names, [v for v in _victim(a, a.victims).split(",") if v], a.workload)
    if a.report:
        from .report import write_report

        path = write_report(results, a.report, title=f"wafer compare: {a.workload}")
        if not a.json:
            print(f"report: {path}")
    if a.json:
        print(json.dumps({"results": [r.to_dict() for r in results]}))
    else:
        print(format_table(results))
    # A failed run (its row says why) makes the exit code 1, so scripts notice.
    return 1 if any(r.error for r in results) else 0


def cmd_presets(a: argparse.Namespace) -> int:
    if a.name == "import":
        if not a.file or a.file.endswith(".toml"):
            raise _core.ConfigError("presets import: give an MQSim configuration (FILE.xml), e.g. "
                                    "`wafer presets import ssdconfig.xml -o my.toml`")
        text = _core.timing_import_toml(a.file)
        if a.out:
            with open(a.out, "w") as f:
                f.write(text)
            print(f"wrote {a.out} (run it with --timing {a.out})", file=sys.stderr)
        else:
            print(text, end="")
        return 0
    if a.file or a.out:
        raise _core.ConfigError("presets: FILE and -o only with `wafer presets import FILE.xml -o NAME.toml`")
    if a.name:
        if a.json:
            print(json.dumps(timing_config(a.name)))
        else:
            print(_core.timing_preset_toml(a.name), end="")
        return 0
    ps, ds = timing_presets(), presets()
    if a.json:
        print(json.dumps({"timing": ps, "device": ds}))
        return 0
    print("timing presets (--timing NAME, or a TOML file; `wafer presets NAME` prints one):")
    for p in ps:
        print(f"  {p['name']:<14} {p['description']}")
    print("device presets (--preset NAME, Device.preset(NAME)): the fields each sets, the rest at their defaults")
    for p in ds:
        print(f"  {p['name']:<14} " + ", ".join(f"{k}={json.dumps(v)}" for k, v in p["device"].items())
              + f"; victim {p['victim']}")
    return 0


def cmd_policies(a: argparse.Namespace) -> int:
    import textwrap

    ps, cs, vs = policies(), composites(), victims()
    if a.json:
        print(json.dumps({"policies": ps, "composites": cs, "victims": vs}))
        return 0
    print("placement policies (--policy), with their family:")
    for p in ps:
        print(f"  {p['name']:<16} {p['family']:<10} {p['description']}")
        if a.defaults:
            for k, v in p["defaults"].items():
                print(f"  {'':<27}   {k} = {json.dumps(v)}")
            if not p["defaults"]:
                print(f"  {'':<27}   (no parameters)")
    print("composite names (a composite takes its base policy's parameters):")
    for c in cs:
        text = f"{c['family']}: {c['description']}; e.g. {', '.join(c['examples'])}"
        print(f"  {c['form']}")
        print(textwrap.fill(text, width=110, initial_indent=" " * 6, subsequent_indent=" " * 6))
    print("victim selectors (--victim):")
    for v in vs:
        print(f"  {v['name']:<16} {v['description']}")
    return 0


def cmd_demo(a: argparse.Namespace) -> int:
    import time

    from . import demo

    if not (a.json or a.quiet):
        st = demo.study(full=a.full, quick=a.quick, logical_blocks=a.logical_blocks, seeds=a.seeds, seed=a.seed)
        dev = st["devices"][0]
        what = "every registered policy (minutes)" if a.full else \
            "no separation (base), rule-based (two-r, sepbit, midas), learned (dogi, trained online), " \
            "oracles (nodap, oracle-sort: they know every block's death time)"
        print(f"wafer demo: {demo.WORKLOAD} on {dev['logical_blocks']} blocks of 4 KiB ({dev['name']}), 10% OP, "
              f"prefilled, 4 drive-writes (1 of warm-up), victims greedy and cost-benefit, "
              f"{len(st['seeds'])} seed(s), on all cores;\n{what}\n", flush=True)
    start = time.monotonic()
    page, df, db = demo.run(a.out, full=a.full, quick=a.quick, logical_blocks=a.logical_blocks, seeds=a.seeds,
                            seed=a.seed, jobs=a.jobs, progress=not a.quiet)
    if a.json:
        print(json.dumps({"report": str(page), "store": str(db), "results": json.loads(df.to_json(orient="records"))}))
        return 0
    from .store import Store

    with Store(db) as st:
        results = st.results(df.job.tolist())
    print(format_table(results))
    print(f"\nreport: {page}  ({time.monotonic() - start:.0f} s; results in {db}: "
          f"`wafer report {db} -o DIR`, `wafer sweep export {db} -o runs.csv`)")
    return 0


def _fmt_num(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.4g}"
    return str(x)


def build_parser() -> argparse.ArgumentParser:
    fmt = argparse.RawDescriptionHelpFormatter
    p = argparse.ArgumentParser(
        prog="wafer",
        formatter_class=fmt,
        description="Replay block I/O workloads through a simulated flash translation layer and "
                    "measure write amplification (WAF) under data-placement policies.",
        epilog="examples:\n"
               "  wafer demo                                   every policy family on a skewed workload, with a report\n"
               "  wafer replay --policy two-r --workload zipf:0.9 --capacity 4GiB --op 0.07\n"
               "  wafer compare --workload hotcold:0.9:0.1 --victims greedy,cost-benefit --report out/\n"
               "  wafer replay --trace hm_0.csv.gz --policy sepbit --victim cost-benefit\n"
               "  wafer traces inspect hm_0.csv.gz             workload statistics of a real trace\n"
               "  wafer policies --defaults\n"
               "  wafer replay --policy midas --workload zipf:1.0 --accuracy   prediction accuracy vs the truth\n"
               "  wafer oracle search hm_0.csv.gz -o nodap.json   NoDaP's near-optimal configuration\n"
               "  wafer compare --policies midas,midas+ngc,nodap --workload zipf:1.0   oracle-assisted variants\n"
               "  wafer train dogi --workload zipf:1.0 -o dogi.safetensors   a learned policy's model\n"
               "  wafer sweep example > study.toml && wafer sweep run study.toml   a study on all cores, resumable\n"
               "  wafer report study.sqlite -o report/         HTML page and paper figures from a store\n"
               "  wafer gap sepbit --workload zipf:1.0         SepBIT's distance to NoDaP, by component\n"
               "  wafer reproduce --list                       one command per paper figure, claims checked\n"
               "  wafer reproduce rule-based                   the sweep behind docs/FIDELITY.md\n"
               "  wafer replay --timing intel750 --workload uniform --queue-depth 32   latency, IOPS, energy\n"
               "  wafer presets intel750 > my.toml             a timing preset to edit (--timing my.toml)\n"
               "  wafer bench --quick\n",
    )
    p.add_argument("--version", action="version", version=f"wafer {_core.__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    r = sub.add_parser("replay", help="replay one workload under one policy", formatter_class=fmt,
                       epilog=EPILOG_WORKLOADS + _epilog_setups())
    r.add_argument("--policy", default="base", help="placement policy (see `wafer policies`; default base)")
    r.add_argument("--victim",
                   help="victim selector: greedy, cost-benefit, fifo, cat, d-choices[:D], random, random-greedy, "
                        "window-greedy, lru, cost-hotness, multilog (default greedy, or the --preset's; see "
                        "`wafer policies`)")
    r.add_argument("--param", action="append", metavar="KEY=VALUE", help="policy parameter (repeatable)")
    r.add_argument("--timeseries", metavar="FILE.csv", help="also write the per-window time series as CSV")
    r.add_argument("--show-config", action="store_true",
                   help="print the run configuration the engine settles from these flags (JSON: every default "
                        "and rule applied; `_core.Simulation` runs it as is; a --setup's conventions are applied "
                        "when the run starts, and its result names them) and exit without running")
    ck = r.add_argument_group("checkpoints (long replays that survive a kill)")
    ck.add_argument("--checkpoint", metavar="FILE",
                    help="write the run's complete state to FILE (atomically) every 5 minutes (or "
                         "--checkpoint-every drive-writes) and at the end")
    ck.add_argument("--checkpoint-every", type=_positive_float, metavar="DW",
                    help="drive-writes between checkpoints (default: every 5 minutes of wall time)")
    ck.add_argument("--resume", metavar="FILE",
                    help="continue the run checkpointed in FILE to the result the uninterrupted run gives "
                         "(the run's flags come from FILE; it keeps checkpointing to FILE, or to --checkpoint)")
    _add_run(r)
    _add_setup(r)
    _add_device(r)
    _add_trace(r)
    _add_timing(r)
    r.set_defaults(func=cmd_replay, parser=r)

    c = sub.add_parser("compare", help="replay one workload under several policies", formatter_class=fmt,
                       epilog=EPILOG_WORKLOADS + _epilog_setups())
    c.add_argument("--policies", metavar="A,B,...|all",
                   help="policies to compare; `all` runs every registered one (~35 s each on the default "
                        "device). Default: " + ",".join(COMPARE_DEFAULT) + " (without nodap under --timing)")
    c.add_argument("--victims", metavar="A,B,...", help="victim selectors (default greedy, or the --preset's)")
    c.add_argument("--report", metavar="DIR", help="write an HTML report, JSON and CSV into DIR")
    _add_run(c)
    _add_setup(c)
    _add_device(c)
    _add_trace(c)
    _add_timing(c)
    c.set_defaults(func=cmd_compare)

    pr = sub.add_parser("presets", help="list the timing and device presets, or print a timing preset to copy and edit")
    pr.add_argument("name", nargs="?", help="print this preset's TOML (e.g. `wafer presets intel750 > my.toml`); "
                    "`import FILE.xml -o NAME.toml`: an MQSim ssdconfig.xml as a preset")
    pr.add_argument("file", nargs="?", help=argparse.SUPPRESS)
    pr.add_argument("--out", "-o", metavar="NAME.toml", help="with import: write the preset here (default: print it)")
    pr.add_argument("--json", action="store_true", help="print JSON (with NAME: the resolved configuration)")
    pr.set_defaults(func=cmd_presets)

    pol = sub.add_parser("policies", help="list placement policies and victim selectors")
    pol.add_argument("--defaults", action="store_true", help="show every parameter's default")
    pol.add_argument("--json", action="store_true", help="print JSON")
    pol.set_defaults(func=cmd_policies)

    d = sub.add_parser("demo", help="every policy family on a built-in skewed workload, with a report",
                       formatter_class=fmt,
                       description="Replays zipf:1.0 under base, two-r, sepbit, midas, dogi (learned online), "
                                   "nodap and oracle-sort with greedy and cost-benefit victims, on all cores, and "
                                   "writes an HTML report (open DIR/report.html) with figures for papers. The "
                                   "results stay in DIR/demo.sqlite: running the demo again reuses them.",
                       epilog="examples:\n"
                              "  wafer demo                        under a minute on two cores\n"
                              "  wafer demo --seeds 3              every run with three seeds: 95% intervals\n"
                              "  wafer demo --full --out full/     every registered policy, 4 GiB device\n")
    d.add_argument("--out", default="wafer-report", metavar="DIR", help="report directory (default wafer-report)")
    size = d.add_mutually_exclusive_group()
    size.add_argument("--full", action="store_true", help="every registered policy on a 4 GiB device (minutes)")
    size.add_argument("--quick", action="store_true", help="a 64 MiB device (seconds, for tests)")
    d.add_argument("--logical-blocks", type=_positive_int, metavar="N",
                   help="device size in blocks (default 64Ki = 256 MiB)")
    d.add_argument("--seed", type=_seed, default=1, help="first seed (default 1)")
    d.add_argument("--seeds", type=_positive_int, default=1, metavar="N", help="seeds per run (default 1)")
    d.add_argument("--jobs", "-j", type=_positive_int, metavar="N", help="worker processes (default: all cores)")
    d.add_argument("--json", action="store_true", help="print JSON")
    d.add_argument("--quiet", "-q", action="store_true", help=QUIET_HELP)
    d.set_defaults(func=cmd_demo)

    from .commands import tools
    from .commands import traces as traces_commands

    traces_commands.add_parser(sub)
    tools.add_parser(sub)
    from .sweep.cli import add_parser as add_sweep

    add_sweep(sub)
    return p


def _name_flag(msg: str, parser: argparse.ArgumentParser | None) -> str:
    """An engine error names a configuration field (`gc_low`,
    `timing.queue_depth`); the user typed a flag: name it beside the field."""
    m = re.match(r"(invalid [a-z ]*configuration: )([a-z_]+(?:\.[a-z_]+)*): ", msg)
    if not m or parser is None:
        return msg
    dest = m.group(2).rsplit(".", 1)[-1]
    for act in parser._actions:
        if act.dest == dest and act.option_strings:
            return f"{m.group(1)}{act.option_strings[0]} ({m.group(2)}): {msg[m.end():]}"
    return msg


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    a = parser.parse_args(argv)
    a.argv = argv
    if not getattr(a, "func", None):
        parser.print_help()
        return 2
    try:
        return a.func(a)
    except _core.WaferError as e:
        partial = getattr(e, "partial", None)
        if partial is not None and partial.user_writes > 0:
            if getattr(a, "json", False):
                print(json.dumps({"error": str(e), "partial": partial.to_dict()}))
            else:
                print(f"results up to the error ({partial.user_writes} user writes):")
                _print_result(partial)
        print(f"wafer: error: {_name_flag(str(e), getattr(a, 'parser', None))}", file=sys.stderr)
        return 2
    except _core.InternalError as e:  # a Rust panic caught at the binding: a bug, said without a traceback
        print(f"wafer: {e}", file=sys.stderr)
        return 70
    except KeyboardInterrupt:
        # The stop is under way: a second signal of the same Ctrl-C (the engine's handler and Python's
        # both see it) must not turn the goodbye into a traceback.
        import signal

        signal.signal(signal.SIGINT, signal.SIG_IGN)
        print("\nwafer: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader (e.g. `| head`) stopped: nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
