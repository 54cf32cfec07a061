"""`wafer traces ...`: inspect, convert, extend, split and sample block traces; list their formats."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .. import traces
from ..api import DEFAULT_WORKLOAD, parse_size
from .flags import (
    EPILOG_WORKLOADS,
    QUIET_HELP,
    _add_selection,
    _positive_float,
    _positive_int,
    _seed,
    _selection,
)
from .show import _fmt_num, _load_end


def cmd_traces_inspect(a: argparse.Namespace) -> int:
    cap = a.capacity_blocks
    if a.capacity is not None:
        cap = parse_size(a.capacity) // a.block_size
    st = traces.inspect(a.file, a.format, block_size=a.block_size, capacity_blocks=cap, selection=_selection(a),
                        progress=not a.quiet)
    if a.json:
        print(json.dumps(st.to_dict()))
        return 0
    d = st.to_dict()
    rd = d["read"]
    print(f"{a.file}  ({d['format']}, {a.block_size}-byte blocks)")
    rows = [
        ("requests", f"{d['requests']}  (reads {d['reads']}, writes {d['writes']}, trims {d['trims']}; "
                     f"read fraction {_fmt_num(d['read_fraction'])})"),
        ("bytes", f"read {d['read_bytes']}, written {d['write_bytes']}, trimmed {d['trim_bytes']}"),
        ("footprint", f"{d['footprint_blocks']} blocks touched, {d['write_footprint_blocks']} written; "
                      f"address space {d['address_space_blocks']} blocks"),
        ("drive-writes", f"{_fmt_num(d['drive_writes'])} of the {d['capacity_blocks']}-block "
                         + ("device given" if cap is not None else "footprint (the device `wafer replay` sizes from it)")
                         + f"; {_fmt_num(d['address_space_drive_writes'])} of the {d['address_space_blocks']}-block "
                           "address space (--address-space)"),
        ("duration", f"{d['duration_seconds']:.3f} s"),
        ("request sizes", ", ".join(f"{lo}B+: {c}" for lo, c in zip(d['size_histogram']['lower'],
                                                                    d['size_histogram']['count']))),
        ("update intervals", ", ".join(f"{lo}+: {c}" for lo, c in zip(d['update_intervals']['lower'],
                                                                      d['update_intervals']['count'])) or "-"),
        ("mean update interval", f"{_fmt_num(d['mean_update_interval'])} user-written blocks; "
                                 f"{d['never_overwritten_blocks']} blocks never overwritten"),
    ]
    f = d["fios"]
    rows.append(("FIOS attributes", f"ACF {_fmt_num(f['acf_write_rate'])} (write rate per 5 min; of the gaps "
                                    f"{_fmt_num(f['acf'])}), RW {_fmt_num(f['random_write_ratio'])}, "
                                    f"R {_fmt_num(f['reuse_ratio'])}, S {_fmt_num(f['avg_write_kib'])} KiB, "
                                    f"WV {_fmt_num(f['working_volume_kib'])} KiB, "
                                    f"write rate {_fmt_num(f['write_gb_per_day'])} GB/day, "
                                    f"peak {_fmt_num(f['peak_iops_5min'])} IOPS, mean {_fmt_num(f['iops'])} IOPS"))
    rows.append(("reading", f"{rd['lines']} lines; skipped {rd['skipped_bad']} bad, {rd['zero_size']} zero-size, "
                            f"{rd['filtered']} filtered; {rd['backwards_timestamps']} timestamps raised"
                            + ("; TRUNCATED archive" if rd["truncated"] else "") + _load_end(rd)))
    w = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"  {k:<{w}}  {v}")
    return 0


def cmd_traces_convert(a: argparse.Namespace) -> int:
    st = traces.convert(a.src, a.dst, a.format, selection=_selection(a), progress=not a.quiet)
    if a.json:
        print(json.dumps(st))
    else:
        print(f"{a.dst}: {st['requests']} requests from {st['lines']} lines "
              f"(skipped {st['skipped_bad']} bad, {st['zero_size']} zero-size, {st['filtered']} filtered)")
    return 0


def cmd_traces_extend(a: argparse.Namespace) -> int:
    w = traces.extend(a.src, a.out, a.drive_writes, a.format, block_size=a.block_size, seed=a.seed,
                      selection=_selection(a), progress=not a.quiet)
    if a.json:
        print(json.dumps(w))
    else:
        c = w["continuation"]
        print(f"{a.out}: {a.src} ({w['format']}, {_fmt_num(w['trace_drive_writes'])} drive-writes of its "
              f"{w['footprint_blocks']}-block footprint) and a continuation of {c['requests']} requests, "
              f"{c['write_blocks']} blocks written: {_fmt_num(w['drive_writes'])} drive-writes in all")
    return 0


def cmd_traces_split(a: argparse.Namespace) -> int:
    vols = traces.split(a.src, a.out, a.volumes, a.format, block_size=a.block_size,
                        selection=traces.Selection(skip_bad=a.skip_bad), progress=not a.quiet)
    if a.json:
        print(json.dumps(vols))
        return 0
    print(f"{a.src}: {len(vols)} volume(s) in {a.out}")
    w = max(len(v["device"]) for v in vols)
    for v in vols:
        print(f"  {v['device']:>{w}}  {v['requests']:>10} requests ({v['writes']} writes, "
              f"{v['write_bytes'] / 2**20:.1f} MiB written), footprint {v['footprint_blocks']} blocks  {v['path']}")
    return 0


def cmd_traces_sample(a: argparse.Namespace) -> int:
    n = traces.sample(a.out, a.workload, format=a.format, requests=a.requests, logical_blocks=a.logical_blocks,
                      block_size=a.block_size, seed=a.seed)
    if a.json:
        print(json.dumps({"path": a.out, "lines": n, "format": a.format}))
    else:
        print(f"{a.out}: {n} requests of {a.workload} in the {a.format} layout")
    return 0


def cmd_traces_formats(a: argparse.Namespace) -> int:
    fs = traces.formats()
    if a.json:
        print(json.dumps(fs))
    else:
        for f in fs:
            print(f"  {f['name']:<12} {f['description']}")
    return 0


def add_parser(sub: Any) -> None:
    """Add the `wafer traces ...` subcommands to ``sub``."""
    fmt = argparse.RawDescriptionHelpFormatter
    t = sub.add_parser("traces", help="inspect, convert and extend block traces")
    tsub = t.add_subparsers(dest="traces_command", metavar="SUBCOMMAND", required=True)
    ti = tsub.add_parser("inspect", help="workload statistics of a trace (FIOS attributes, lifetimes ...)")
    ti.add_argument("file")
    ti.add_argument("--block-size", type=_positive_int, default=4096, metavar="BYTES", help="block size for block figures")
    cap = ti.add_mutually_exclusive_group()
    cap.add_argument("--capacity", metavar="SIZE", help="capacity for drive-writes (default: the footprint)")
    cap.add_argument("--capacity-blocks", type=_positive_int, metavar="N", help="capacity for drive-writes, in blocks")
    ti.add_argument("--json", action="store_true", help="print one JSON object")
    _add_selection(ti)
    ti.add_argument("--quiet", "-q", action="store_true", help=QUIET_HELP)
    ti.set_defaults(func=cmd_traces_inspect)
    tc = tsub.add_parser("convert", help="convert a trace to the native columnar format (Arrow IPC)")
    tc.add_argument("src")
    tc.add_argument("dst")
    tc.add_argument("--json", action="store_true", help="print the read counts as JSON")
    _add_selection(tc)
    tc.add_argument("--quiet", "-q", action="store_true", help=QUIET_HELP)
    tc.set_defaults(func=cmd_traces_convert)
    te = tsub.add_parser("extend", help="continue a short trace with its own lifetimes, sizes, mix and locality",
                         description="Write the trace and a continuation to --drive-writes in all (of its footprint) "
                                     "as a native trace: each block class's next rewrite is drawn from the update "
                                     "intervals the trace shows (Kaplan-Meier, censored at its end), write runs keep "
                                     "their requests, reads keep the trace's share (model: trace/extend.rs).")
    te.add_argument("src")
    te.add_argument("--drive-writes", type=_positive_float, required=True, metavar="K",
                    help="drive-writes of the file written, trace included")
    te.add_argument("-o", "--out", required=True, metavar="FILE", help="the extended trace (native format)")
    te.add_argument("--block-size", type=_positive_int, default=4096, metavar="BYTES")
    te.add_argument("--seed", type=_seed, default=1, help="seed of the continuation's draws (default 1)")
    te.add_argument("--json", action="store_true")
    _add_selection(te)
    te.add_argument("--quiet", "-q", action="store_true", help=QUIET_HELP)
    te.set_defaults(func=cmd_traces_extend)
    tp = tsub.add_parser("split", help="split a multi-volume trace into one native trace per volume",
                         description="One pass over the file writes each volume (device id) to "
                                     "DIR/STEM.devID.arrow, checksummed, with the source's timestamps and ids "
                                     "(a split volume replays as --device ID of the source does); reports each "
                                     "volume's requests, bytes written and footprint.")
    tp.add_argument("src")
    tp.add_argument("-o", "--out", required=True, metavar="DIR", help="folder of the volumes' files")
    tp.add_argument("--volumes", default="all", metavar="all|top:N|ID[+ID...]",
                    help="which volumes: all (default), the N that write the most bytes, or device ids")
    tp.add_argument("--format", metavar="NAME", help="the trace's format (default: detected)")
    tp.add_argument("--block-size", type=_positive_int, default=4096, metavar="BYTES",
                    help="block size of the footprint (default 4096)")
    tp.add_argument("--skip-bad", action="store_true", help="skip malformed lines (counted) instead of failing")
    tp.add_argument("--json", action="store_true")
    tp.add_argument("--quiet", "-q", action="store_true", help=QUIET_HELP)
    tp.set_defaults(func=cmd_traces_split)
    ts = tsub.add_parser("sample", formatter_class=fmt, epilog=EPILOG_WORKLOADS,
                         help="write a synthetic workload as a trace file in a real layout (to try readers and replays)",
                         description="Write the first N requests of a synthetic workload as a text trace in one of "
                                     f"the layouts {', '.join(traces.SAMPLE_FORMATS)}, e.g.\n"
                                     "  wafer traces sample hm_sample.csv --workload zipf:1.0 --requests 200000\n"
                                     "  wafer compare --trace hm_sample.csv --repeat 3 --policies base,sepbit,midas")
    ts.add_argument("out", metavar="FILE")
    ts.add_argument("--workload", default=DEFAULT_WORKLOAD, metavar="SPEC", help=f"default {DEFAULT_WORKLOAD}")
    ts.add_argument("--format", default="msr", choices=traces.SAMPLE_FORMATS, help="layout to write (default msr)")
    ts.add_argument("--requests", type=_positive_int, default=100_000, metavar="N", help="requests (default 100000)")
    ts.add_argument("--logical-blocks", type=_positive_int, default=1 << 16, metavar="N",
                    help="address space of the workload in blocks (default 65536)")
    ts.add_argument("--block-size", type=_positive_int, default=4096, metavar="BYTES")
    ts.add_argument("--seed", type=_seed, default=1)
    ts.add_argument("--json", action="store_true")
    ts.set_defaults(func=cmd_traces_sample)
    tf = tsub.add_parser("formats", help="list the trace formats, their layouts and units")
    tf.add_argument("--json", action="store_true")
    tf.set_defaults(func=cmd_traces_formats)
