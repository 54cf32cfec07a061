"""The ``wafer`` command line. Run ``wafer --help`` or ``wafer COMMAND --help``."""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from typing import Any

from . import _core
from .api import Device, compare, policies, replay, victims
from .result import RunResult, format_table

EPILOG_WORKLOADS = """\
workload specs (--workload):
  uniform                 uniform random writes
  zipf[:THETA]            Zipf(theta), default 1.0; hot blocks scattered (scramble=0 to keep them together)
  hotcold[:W[:S]]         fraction W of requests to fraction S of the space (default 0.9:0.1)
  seq                     sequential overwrites, wrapping at the end
  phase[:W[:S[:P]]]       hot spot W/S that moves every P drive-writes (default 0.9:0.1:1.0)
  mix:A+B+...             tenants with their own region, sizes and rate, e.g.
                          mix:zipf:1.0,size=8,region=0.5+seq,size=64k,iops=500
  keys: size=N|A-B|64k  iops=R  reads=F  region=F  scramble=0|1
"""


def _add_device(p: argparse.ArgumentParser) -> None:
    d = Device()
    g = p.add_argument_group("device")
    size = g.add_mutually_exclusive_group()
    size.add_argument("--logical-blocks", type=int, metavar="N", help="logical capacity in blocks (default 1Mi = 4 GiB)")
    size.add_argument("--capacity", metavar="SIZE", help="logical capacity in bytes, e.g. 4GiB, 512MiB, 1TB")
    g.add_argument("--physical-blocks", type=int, metavar="N", help="exact physical capacity in blocks (overrides --op)")
    g.add_argument("--op", type=float, default=d.op, metavar="RATIO",
                   help=f"over-provisioning, (physical-logical)/logical (default {d.op})")
    g.add_argument("--block-size", type=int, default=d.block_size, metavar="BYTES", help="block (page) size (default 4096)")
    g.add_argument("--segment-blocks", type=int, default=d.segment_blocks, metavar="N",
                   help=f"segment (superblock) size in blocks (default {d.segment_blocks})")
    g.add_argument("--gc-low", type=int, default=d.gc_low, metavar="N", help="GC starts below N free segments")
    g.add_argument("--gc-high", type=int, default=d.gc_high, metavar="N", help="GC stops at N free segments")
    g.add_argument("--no-prefill", action="store_true", help="start from an empty device (default: write it full first)")
    g.add_argument("--warmup-drive-writes", type=float, default=d.warmup_drive_writes, metavar="K",
                   help=f"drive-writes excluded from the steady-state WAF (default {d.warmup_drive_writes})")
    g.add_argument("--window-drive-writes", type=float, default=d.window_drive_writes, metavar="W",
                   help=f"time-series window length (default {d.window_drive_writes})")
    g.add_argument("--check-every", type=int, default=0, metavar="N",
                   help="run the FTL invariant checker every N user writes (slow; for debugging)")


def _add_run(p: argparse.ArgumentParser, default_workload: str = "uniform") -> None:
    g = p.add_argument_group("run")
    g.add_argument("--workload", default=default_workload, metavar="SPEC",
                   help=f"synthetic workload spec (default {default_workload}); see below")
    n = g.add_mutually_exclusive_group()
    n.add_argument("--writes", type=int, metavar="N", help="user blocks to write (default: 4 drive-writes)")
    n.add_argument("--drive-writes", type=float, metavar="K", help="user writes as a multiple of the logical capacity")
    g.add_argument("--seed", type=int, default=1, help="seed of every random choice (default 1)")
    g.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    g.add_argument("--quiet", "-q", action="store_true", help="no progress bar")


def _device(a: argparse.Namespace) -> Device:
    return Device(
        logical_blocks=a.logical_blocks,
        capacity=a.capacity,
        physical_blocks=a.physical_blocks,
        op=a.op,
        block_size=a.block_size,
        segment_blocks=a.segment_blocks,
        gc_low=a.gc_low,
        gc_high=max(a.gc_high, a.gc_low),
        prefill=not a.no_prefill,
        warmup_drive_writes=a.warmup_drive_writes,
        window_drive_writes=a.window_drive_writes,
        check_every=a.check_every,
    )


def _writes(a: argparse.Namespace, dev: Device) -> int | None:
    if a.drive_writes is not None:
        if a.drive_writes <= 0:
            raise _core.ConfigError("invalid run configuration: --drive-writes must be > 0")
        return max(1, int(a.drive_writes * dev.resolved_logical_blocks()))
    return a.writes


def _check_workload(spec: str) -> None:
    if os.path.exists(spec):
        raise _core.WorkloadError(
            f"'{spec}' is a file: trace files are not read yet (this version replays synthetic workloads); "
            "give a workload spec such as zipf:1.0"
        )


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
    rows = [
        ("policy / victim", f"{r.policy} / {r.victim}"),
        ("workload", r.workload),
        ("WAF", f"{r.waf:.4f}" if r.waf else "-"),
        ("steady-state WAF", f"{r.steady_waf:.4f}" if r.steady_waf else "- (warm-up not reached)"),
        ("user / GC writes", f"{r.user_writes} / {r.gc_writes} blocks"),
        ("drive-writes", f"{r.drive_writes:.2f}"),
        ("mean victim valid ratio", f"{r.mean_victim_valid_ratio:.3f}" if r.mean_victim_valid_ratio else "-"),
        ("erases per segment", "min {min} / mean {mean:.1f} / max {max}".format(**r.erases)),
        ("groups", ", ".join(f"#{g['group']}: {g['user_writes']}u+{g['gc_writes']}gc, {g['segments']} seg"
                             for g in r.groups)),
        ("speed", f"{r.user_writes_per_second / 1e6:.2f} M user writes/s ({r.elapsed_seconds:.2f} s)"),
    ]
    w = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{w}}  {v}")


def _write_timeseries(r: RunResult, path: str) -> None:
    ts = r.timeseries()
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(ts.keys())
        out.writerows(zip(*ts.values()))


def cmd_replay(a: argparse.Namespace) -> int:
    _check_workload(a.workload)
    dev = _device(a)
    r = replay(a.policy, a.workload, writes=_writes(a, dev), device=dev, victim=a.victim, seed=a.seed,
               params=_params(a.param), progress=not (a.quiet or a.json))
    if a.timeseries:
        _write_timeseries(r, a.timeseries)
    if a.json:
        print(json.dumps(r.to_dict()))
    else:
        _print_result(r)
    return 0


def _comparison(a: argparse.Namespace, names: list[str] | None, vics: list[str], workload: str) -> list[RunResult]:
    _check_workload(workload)
    dev = _device(a)
    return compare(names, workload, victims=vics, writes=_writes(a, dev), device=dev, seed=a.seed,
                   progress=not (a.quiet or a.json))


def cmd_compare(a: argparse.Namespace) -> int:
    names = [p for p in a.policies.split(",") if p] if a.policies else None
    results = _comparison(a, names, [v for v in a.victims.split(",") if v], a.workload)
    if a.report:
        from .report import write_report

        path = write_report(results, a.report, title=f"wafer compare: {a.workload}")
        if not a.json:
            print(f"report: {path}")
    if a.json:
        print(json.dumps({"results": [r.to_dict() for r in results]}))
    else:
        print(format_table(results))
    return 0


def cmd_policies(a: argparse.Namespace) -> int:
    ps, vs = policies(), victims()
    if a.json:
        print(json.dumps({"policies": ps, "victims": vs}))
        return 0
    print("placement policies (--policy):")
    for p in ps:
        print(f"  {p['name']:<16} {p['description']}")
        if a.defaults:
            for k, v in p["defaults"].items():
                print(f"  {'':<16}   {k} = {json.dumps(v)}")
            if not p["defaults"]:
                print(f"  {'':<16}   (no parameters)")
    print("victim selectors (--victim):")
    for v in vs:
        print(f"  {v['name']:<16} {v['description']}")
    return 0


DEMO_WORKLOAD = "zipf:1.0"


def cmd_demo(a: argparse.Namespace) -> int:
    from .report import write_report

    dev = Device(logical_blocks=a.logical_blocks or (1 << 16 if a.quick else 1 << 20), op=0.1)
    writes = 6 * dev.resolved_logical_blocks()
    if not a.json:
        print(f"wafer demo: every policy on {DEMO_WORKLOAD}, {dev.resolved_logical_blocks()} blocks of 4 KiB, "
              f"10% OP, prefilled, 6 drive-writes (1 of warm-up), victims greedy and cost-benefit\n")
    results = compare(None, DEMO_WORKLOAD, victims=("greedy", "cost-benefit"), writes=writes, device=dev,
                      seed=a.seed, progress=not (a.quiet or a.json))
    path = write_report(results, a.out, title=f"wafer demo: {DEMO_WORKLOAD}")
    if a.json:
        print(json.dumps({"report": str(path), "results": [r.to_dict() for r in results]}))
    else:
        print(format_table(results))
        print(f"\nreport: {path}")
    return 0


def cmd_bench(a: argparse.Namespace) -> int:
    from .bench import run_bench

    return run_bench(quick=a.quick, as_json=a.json, repeat=a.repeat)


def build_parser() -> argparse.ArgumentParser:
    fmt = argparse.RawDescriptionHelpFormatter
    p = argparse.ArgumentParser(
        prog="wafer",
        formatter_class=fmt,
        description="Replay block I/O workloads through a simulated flash translation layer and "
                    "measure write amplification (WAF) under data-placement policies.",
        epilog="examples:\n"
               "  wafer demo                                   every policy on a skewed workload, with a report\n"
               "  wafer replay --policy two-r --workload zipf:0.9 --capacity 4GiB --op 0.07\n"
               "  wafer compare --workload hotcold:0.9:0.1 --victims greedy,cost-benefit --report out/\n"
               "  wafer policies --defaults\n"
               "  wafer bench --quick\n",
    )
    p.add_argument("--version", action="version", version=f"wafer {_core.__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    r = sub.add_parser("replay", help="replay one workload under one policy", formatter_class=fmt,
                       epilog=EPILOG_WORKLOADS)
    r.add_argument("--policy", default="base", help="placement policy (see `wafer policies`; default base)")
    r.add_argument("--victim", default="greedy", help="victim selector: greedy, cost-benefit, fifo (default greedy)")
    r.add_argument("--param", action="append", metavar="KEY=VALUE", help="policy parameter (repeatable)")
    r.add_argument("--timeseries", metavar="FILE.csv", help="also write the per-window time series as CSV")
    _add_run(r)
    _add_device(r)
    r.set_defaults(func=cmd_replay)

    c = sub.add_parser("compare", help="replay one workload under several policies", formatter_class=fmt,
                       epilog=EPILOG_WORKLOADS)
    c.add_argument("--policies", metavar="A,B,...", help="policies to compare (default: all)")
    c.add_argument("--victims", default="greedy", metavar="A,B,...", help="victim selectors (default greedy)")
    c.add_argument("--report", metavar="DIR", help="write an HTML report, JSON and CSV into DIR")
    _add_run(c)
    _add_device(c)
    c.set_defaults(func=cmd_compare)

    pol = sub.add_parser("policies", help="list placement policies and victim selectors")
    pol.add_argument("--defaults", action="store_true", help="show every parameter's default")
    pol.add_argument("--json", action="store_true", help="print JSON")
    pol.set_defaults(func=cmd_policies)

    d = sub.add_parser("demo", help="every policy on a built-in skewed workload, with a report")
    d.add_argument("--out", default="wafer-report", metavar="DIR", help="report directory (default wafer-report)")
    d.add_argument("--quick", action="store_true", help="a small device (seconds, for tests)")
    d.add_argument("--logical-blocks", type=int, metavar="N", help="device size in blocks (default 1Mi)")
    d.add_argument("--seed", type=int, default=1)
    d.add_argument("--json", action="store_true", help="print JSON")
    d.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    d.set_defaults(func=cmd_demo)

    b = sub.add_parser("bench", help="measure engine and workload-generator speed")
    b.add_argument("--quick", action="store_true", help="skip the 32M-block device")
    b.add_argument("--repeat", type=int, default=3, help="runs per measurement; the best is reported (default 3)")
    b.add_argument("--json", action="store_true", help="print JSON")
    b.set_defaults(func=cmd_bench)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    a = parser.parse_args(argv)
    if not getattr(a, "func", None):
        parser.print_help()
        return 2
    try:
        return a.func(a)
    except _core.WaferError as e:
        print(f"wafer: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nwafer: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
