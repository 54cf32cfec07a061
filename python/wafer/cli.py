"""The ``wafer`` command line. Run ``wafer --help`` or ``wafer COMMAND --help``."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import textwrap
from typing import Any

from . import _core
from .api import (
    Device,
    compare,
    composites,
    describe_policy,
    policies,
    presets,
    replay,
    replay_volumes,
    resume,
    run_config,
    timing_config,
    timing_presets,
    victims,
)
from .commands.flags import (
    EPILOG_WORKLOADS,
    QUIET_HELP,
    _add_device,
    _add_run,
    _add_setup,
    _add_timing,
    _add_trace,
    _device,
    _epilog_setups,
    _params,
    _positive_float,
    _positive_int,
    _preset,
    _seed,
    _selection,
    _setup_kwargs,
    _timing_kwargs,
    _trace_kwargs,
    _writes,
)
from .commands.show import _print_result, _write_timeseries
from .result import RunResult, format_table


def _victim(a: argparse.Namespace, given: str | None) -> str:
    """--victim(s) as given, else the preset's, else greedy."""
    return given or _preset(a).get("victim", "greedy")


#: `wafer replay` flags that do not define the run (allowed with --resume).
_NOT_THE_RUN = {"command", "func", "parser", "argv", "resume", "checkpoint", "checkpoint_every", "quiet", "json",
                "timeseries", "group_timeseries", "show_config"}


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
    if a.group_timeseries:
        _write_timeseries(r, a.group_timeseries, groups=True)
    if a.json:
        print(json.dumps(r.to_dict()))
    else:
        _print_result(r)
    return 0


def _replay_volumes(a: argparse.Namespace, dev: Device) -> int:
    """`wafer replay` with several --trace files or --all-devices."""
    if a.all_devices and (not a.trace or len(a.trace) != 1):
        raise _core.ConfigError("invalid run configuration: trace: --all-devices needs exactly one --trace")
    for flag in ("timeseries", "group_timeseries"):
        if getattr(a, flag):
            raise _core.ConfigError(f"invalid run configuration: {flag}: a multi-volume run has a time series per "
                                    "volume (in --json's volumes); replay one volume for --" + flag.replace("_", "-"))
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
    r.add_argument("--group-timeseries", metavar="FILE.csv",
                   help="also write each group's part of each window as CSV (sealed and open segments, victims and "
                        "their valid ratio, writes, valid blocks: MiDAS-Simulation's per-group lines)")
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
    _add_timing(c, own=("policy", "victim", "params", "dump_gc"))
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
    _own_parser(p)
    return p


def _own_parser(p: argparse.ArgumentParser) -> None:
    """Every (sub)command knows its parser, so an engine error naming a field names its flag
    (:func:`_name_flag`) wherever it comes from."""
    for act in p._actions:
        if isinstance(act, argparse._SubParsersAction):
            for sp in act.choices.values():
                if sp.get_default("parser") is None:
                    sp.set_defaults(parser=sp)
                _own_parser(sp)


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
