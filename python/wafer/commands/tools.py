"""`wafer oracle | train | reproduce | gap | report | tune | bench`: future knowledge, training, the
papers' experiments, reports, tuning and benchmarks."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from .. import _core
from ..api import Device, policies
from .flags import (
    EPILOG_WORKLOADS,
    QUIET_HELP,
    _add_device,
    _add_run,
    _add_trace,
    _device,
    _nonneg_float,
    _params,
    _positive_int,
    _seed,
    _trace_kwargs,
    _writes,
)
from .show import _print_result, _short


def cmd_oracle_search(a: argparse.Namespace) -> int:
    from ..oracle import search

    dev = _device(a)
    res = search(a.workload, **_writes(a), device=dev, victim=a.victim, seed=a.seed,
                 min_gain=a.min_gain, max_groups=a.max_groups, progress=not a.quiet,
                 **_trace_kwargs(a))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(res, f, indent=1)
    if a.json:
        print(json.dumps(res))
        return 0
    print(f"nodap search on {a.trace or a.workload}: {len(res['trials'])} replays; {res['stopped']}")
    print(f"{'groups':>6}  {'WAF':>7}  BIR upper bounds [user blocks] / size caps [segments]")
    for pg in res["per_groups"]:
        mark = "  <- chosen" if pg["groups"] == res["groups"] else ""
        print(f"{pg['groups']:>6}  {pg['waf']:>7.4f}  {_short(pg['birs'])} / {_short(pg['sizes'])}{mark}")
    if a.out:
        print(f"\nconfiguration: {a.out}  (use: wafer replay --policy nodap --param config={a.out} ...)")
    else:
        print(f"\nuse: --policy nodap --param birs={json.dumps(res['birs'])} --param sizes={json.dumps(res['sizes'])}")
    return 0


def cmd_oracle_annotate(a: argparse.Namespace) -> int:
    from ..oracle import annotate

    dev = _device(a)
    info = annotate(a.workload, **_writes(a), device=dev, seed=a.seed, **_trace_kwargs(a))
    if a.json:
        print(json.dumps(info))
    else:
        how = "reused" if info["reused"] else ("cached" if info["cached"] else "computed (scratch, not kept)")
        print(f"{info['path']}: {info['writes']} user block writes annotated, {how}, {info['seconds']:.2f} s")
    return 0


def cmd_train(a: argparse.Namespace) -> int:
    from ..api import train

    dev = _device(a)
    r = train(a.policy, a.workload, out=a.out, **_writes(a), device=dev, victim=a.victim, seed=a.seed,
              params=_params(a.param), accuracy=a.accuracy, progress=not a.quiet, **_trace_kwargs(a))
    if a.json:
        print(json.dumps({"model": a.out, "result": r.to_dict()}))
        return 0
    _print_result(r)
    print(f"\nmodel: {a.out}  (use: --policy {a.policy} --param model={a.out} [--param retrain=0])")
    return 0


def cmd_reproduce(a: argparse.Namespace) -> int:
    from .. import reproduce

    return reproduce.main(a.name, a.quick, a.json, a.out, progress=not a.quiet, seeds=a.seeds,
                          store=a.store, jobs=a.jobs, report=a.report, list_only=a.list)


def _study_trace(a: argparse.Namespace) -> dict[str, Any] | None:
    """The trace flags as a study's trace table (None without a trace)."""
    kw = _trace_kwargs(a)
    if "trace" not in kw:
        return None
    sel = kw["selection"]
    return {"path": os.path.abspath(kw["trace"]), "format": kw["format"], "repeat": kw["repeat"],
            "extend": kw["extend"],
            "remap": kw["remap"], "address_space": kw["address_space"], "device": sel.device,
            "start": sel.start_seconds, "end": sel.end_seconds, "max_requests": sel.max_requests,
            "drop_reads": sel.drop_reads, "skip_bad": sel.skip_bad}


def _device_fields(a: argparse.Namespace) -> dict[str, Any]:
    """The device flags as wafer.Device fields (those that differ from the defaults)."""
    from dataclasses import asdict

    given, default = asdict(_device(a)), asdict(Device())
    return {k: v for k, v in given.items() if v != default[k]}


def cmd_gap(a: argparse.Namespace) -> int:
    from .. import gap
    from ..store import Store

    names = [p for p in a.policy.split(",") if p]
    page = None
    with Store(a.store) as st:
        gaps, ids = gap.run(names, store=st, jobs=a.jobs, progress=not a.quiet,
                            workload=a.workload, trace=_study_trace(a), device=_device_fields(a), victim=a.victim,
                            seeds=list(range(a.seed, a.seed + a.seeds)), writes=a.writes,
                            drive_writes=a.drive_writes, nodap_search=not a.nodap_ladder)
        if a.report:
            from ..report import write_report

            page = write_report(st, a.report, title=f"wafer gap: {', '.join(names)}", jobs=ids,
                                gaps=gap.tidy(gaps), notes=[gap.LEGEND.replace("\n", " ")])
    if a.json:
        print(json.dumps({"gaps": gaps, **({"report": str(page)} if page else {})}))
        return 0 if all(g.get("complete") for g in gaps) else 1
    for g in gaps:
        print(gap.format_gap(g))
        print()
    print(gap.LEGEND)
    if page:
        print(f"\nreport: {page}")
    return 0 if all(g.get("complete") for g in gaps) else 1


def cmd_report(a: argparse.Namespace) -> int:
    from ..report import write_report
    from ..store import sqlite_errors

    if not os.path.exists(a.source):
        raise _core.ConfigError(f"report: {a.source}: no such file")
    with sqlite_errors(a.source):  # a store damaged past its first pages: one line naming it
        path = write_report(a.source, a.out, title=a.title, study=a.study,
                            static_formats=() if a.no_static else ("png", "svg"))
    print(f"report: {path}")
    return 0


def _goal(text: str) -> tuple[str, float]:
    what, _, factor = text.partition(":")
    try:
        f = float(factor.rstrip("xX"))
    except ValueError:
        f = 0.0
    if what not in ("latency", "throughput") or not f > 0:
        raise argparse.ArgumentTypeError(f"'{text}': expected latency:FACTOR or throughput:FACTOR, e.g. latency:3")
    return what, f


def cmd_tune(a: argparse.Namespace) -> int:
    from .. import tune

    target = a.trace or a.workload
    if not target:
        raise _core.ConfigError("tune: give the target: TRACE or --workload SPEC (repeatable: one category)")
    others = {}
    for i, spec in enumerate(a.other or []):
        name, sep, rest = spec.partition("=")
        name, rest = (name, rest) if sep else (f"other{i + 1}", spec)
        others.setdefault(name, []).extend(rest.split("+"))
    try:
        r = tune.run(target, others, reference=a.reference, db=a.db, max_iterations=a.max_iterations,
                     target_metric=a.target, alpha=a.alpha, beta=a.beta, power_budget=a.power_budget,
                     constraints=a.constraints, objective=a.objective,
                     backend=a.backend, address=a.address, jobs=a.jobs, goal=a.goal, widen=a.widen,
                     prune_first=a.prune, seed=a.seed, policy=a.policy, writes=a.writes,
                     logical_blocks=a.logical_blocks, requests=a.max_requests, arrival=a.arrival, seeds=a.seeds,
                     whole_drive=not a.fit_device, precondition=a.precondition, progress=not a.quiet)
    except ValueError as e:
        raise _core.ConfigError(f"tune: {e}") from None
    if a.out:
        r.write_preset(a.out)
    if a.plot and r.history:
        r.plot(a.plot)
    if a.json:
        print(json.dumps(r.to_json(), default=str))
    else:
        print(r.table())
        if a.out:
            print(f"\npreset: {a.out} (use it with --timing {a.out})")
        if a.plot and r.history:
            print(f"plot: {a.plot}")
    return 0


def cmd_bench(a: argparse.Namespace) -> int:
    from ..bench import run_bench

    return run_bench(quick=a.quick, as_json=a.json, repeat=a.repeat)


def add_parser(sub: Any) -> None:
    """Add the `wafer oracle | train | reproduce | gap | report | tune | bench` subcommands to ``sub``."""
    fmt = argparse.RawDescriptionHelpFormatter
    o = sub.add_parser("oracle", help="future knowledge: lifetime annotation and NoDaP's configuration search")
    osub = o.add_subparsers(dest="oracle_command", metavar="SUBCOMMAND", required=True)
    os_ = osub.add_parser(
        "search", formatter_class=fmt, epilog=EPILOG_WORKLOADS,
        help="find NoDaP's group configuration (BIRs, sizes) for a trace or workload (DOGI §3.1)",
        description="Replay the stream under candidate NoDaP configurations: N=2 groups first (every BIR "
                    "bound on a doubling grid, then size caps), then N+1, until one more group lowers WAF "
                    "by less than --min-gain. Writes a reusable configuration with --out.")
    os_.add_argument("trace_file", nargs="?", metavar="TRACE", help="trace to search on (or --workload SPEC)")
    os_.add_argument("--victim", default="greedy", help="fallback victim selector (default greedy)")
    nodap = next(p["defaults"] for p in policies() if p["name"] == "nodap")
    os_.add_argument("--min-gain", type=_nonneg_float, metavar="F",
                     help=f"stop when one more group lowers WAF by less than F (default {nodap['min_gain']})")
    os_.add_argument("--max-groups", type=_positive_int, metavar="N",
                     help=f"most groups tried (default {nodap['max_groups']})")
    os_.add_argument("--out", "-o", metavar="FILE.json", help="write the result; nodap reads it with --param config=FILE")
    _add_run(os_)
    _add_device(os_)
    _add_trace(os_)
    os_.set_defaults(func=cmd_oracle_search)
    oa = osub.add_parser("annotate", formatter_class=fmt, epilog=EPILOG_WORKLOADS,
                         help="annotate a trace with every block's death time (cached next to it)")
    oa.add_argument("trace_file", nargs="?", metavar="TRACE", help="trace to annotate (or --workload SPEC)")
    _add_run(oa)
    _add_device(oa)
    _add_trace(oa)
    oa.set_defaults(func=cmd_oracle_annotate)

    tr = sub.add_parser(
        "train", formatter_class=fmt, epilog=EPILOG_WORKLOADS,
        help="train a learned policy's model on a trace or workload and save it (safetensors)",
        description="Replay the stream under a learned policy (dogi, phftl, ml-dt) with its online training, then write "
                    "its final model. A later run starts from it with --param model=FILE (and keeps it frozen "
                    "with --param retrain=0). Weights trained elsewhere (e.g. PyTorch) load when their tensor "
                    "names follow the documented layout (README, 'Learned policies').")
    tr.add_argument("policy", help="learned policy: dogi (or dogi+User, dogi+Grp), phftl, ml-dt")
    tr.add_argument("trace_file", nargs="?", metavar="TRACE", help="trace to train on (or --workload SPEC)")
    tr.add_argument("--out", "-o", default="model.safetensors", metavar="FILE",
                    help="where to write the model (default model.safetensors)")
    tr.add_argument("--victim", default="greedy", help="victim selector (default greedy)")
    tr.add_argument("--param", action="append", metavar="KEY=VALUE", help="policy parameter (repeatable)")
    _add_run(tr, default_workload="zipf:1.0")
    _add_device(tr)
    _add_trace(tr)
    tr.set_defaults(func=cmd_train)

    from ..reproduce import EXPERIMENTS

    rp = sub.add_parser(
        "reproduce", help="re-run the experiment behind a paper figure (docs/FIDELITY.md) and check its claims",
        formatter_class=fmt,
        description="Each experiment is a sweep over policies, victims, workloads and OPs, repeated over seeds, on "
                    "all cores; its runs go to a store (default reproduce-NAME.sqlite), so a rerun resumes. It "
                    "prints one Markdown table per setting (mean ± 95% interval over seeds) and checks the claims "
                    "of the papers it stands for: each holds or fails, with the numbers.",
        epilog="examples:\n"
               "  wafer reproduce --list                       experiments, their figures and claims\n"
               "  wafer reproduce rule-based                   3 seeds, all cores, resumable\n"
               "  wafer reproduce oracle --seeds 5 --report oracle-report/\n"
               "  wafer reproduce learned --quick --seeds 1    a small device: a smoke test in seconds\n\n"
               "experiments:\n" + "\n".join(f"  {k:<12} {v.figure}" for k, v in EXPERIMENTS.items()))
    rp.add_argument("name", nargs="?", choices=list(EXPERIMENTS), help="experiment (see --list)")
    rp.add_argument("--list", action="store_true", help="list the experiments, the figures they stand for, their claims")
    rp.add_argument("--seeds", type=_positive_int, metavar="N", help="seeds 1..N per cell (default 3)")
    rp.add_argument("--quick", action="store_true", help="a small device (seconds; for tests)")
    rp.add_argument("--store", metavar="FILE", help="results store (default reproduce-NAME.sqlite; reruns resume)")
    rp.add_argument("--jobs", "-j", type=_positive_int, metavar="N", help="worker processes (default: all cores)")
    rp.add_argument("--report", metavar="DIR", help="also write the HTML report and figures into DIR")
    rp.add_argument("--out", metavar="FILE.json", help="also write the cells and claims as JSON")
    rp.add_argument("--json", action="store_true", help="print JSON instead of Markdown tables")
    rp.add_argument("--quiet", "-q", action="store_true", help=QUIET_HELP)
    rp.set_defaults(func=cmd_reproduce)


    gp = sub.add_parser(
        "gap", formatter_class=fmt,
        help="how much of a policy's distance to NoDaP comes from user placement, GC relocation, configuration",
        description="Runs POLICY, POLICY+nu (NoDaP's user placement), POLICY+ngc (NoDaP's GC relocation),\n"
                    "POLICY+nu+ngc and NoDaP on the same stream, device and seeds (on all cores), and splits\n"
                    "the distance W(POLICY) - W(NoDaP) of steady-state WAFs into three parts (DOGI §3.2):\n\n"
                    "  user first:  user = W(P) - W(P+nu),      GC = W(P+nu) - W(P+nu+ngc)\n"
                    "  GC first:    GC   = W(P) - W(P+ngc),     user = W(P+ngc) - W(P+nu+ngc)\n"
                    "  both:        group configuration = W(P+nu+ngc) - W(NoDaP)\n"
                    "  average:     the mean of the two orders (Shapley values): the three parts add up\n"
                    "               to the distance.\n\n"
                    "A negative part means the oracle's choice hurt the policy (its other parts were tuned\n"
                    "around its own). With --seeds N every part is a mean with its 95% interval over seeds.",
        epilog="examples:\n"
               "  wafer gap sepbit --workload zipf:1.0 --capacity 256MiB --drive-writes 6\n"
               "  wafer gap sepbit,midas --workload zipf:1.0 --seeds 3 --report gap/     stacked bars, table\n"
               "  wafer gap midas --trace hm_0.csv.gz --victim cost-benefit --json\n"
               "  wafer gap sepbit --nodap-ladder --store gap.sqlite   NoDaP without its search; runs kept\n\n"
               + EPILOG_WORKLOADS)
    gp.add_argument("policy", metavar="POLICY[,POLICY...]", help="policies to decompose, e.g. sepbit or sepbit,midas")
    gp.add_argument("--victim", default="greedy", help="victim selector (default greedy)")
    gp.add_argument("--seeds", type=_positive_int, default=1, metavar="N", help="seeds --seed .. --seed+N-1 (default 1)")
    gp.add_argument("--nodap-ladder", action="store_true",
                    help="NoDaP with DOGI's BIR ladder instead of its offline search (faster, a little worse)")
    gp.add_argument("--jobs", "-j", type=_positive_int, metavar="N", help="worker processes (default: all cores)")
    gp.add_argument("--store", metavar="FILE", help="keep the runs in this store (rerun: reused); default: in memory")
    gp.add_argument("--report", metavar="DIR", help="write the report (stacked bars, the runs' figures) into DIR")
    _add_run(gp)
    _add_device(gp)
    _add_trace(gp)
    gp.set_defaults(func=cmd_gap)

    rep = sub.add_parser(
        "report", formatter_class=fmt,
        help="an HTML report (interactive figures, sortable table) and paper figures from a store or results JSON",
        description="Write report.html (plotly figures with their JavaScript embedded: one file, works offline), "
                    "figures/*.png and *.svg for papers (matplotlib), and the data as JSON and CSV. Figures: "
                    "steady WAF per policy with 95% intervals over seeds, WAF over time, prediction accuracy, "
                    "group sizes and lifetimes, victim valid ratios (each when the runs have the data).",
        epilog="examples:\n"
               "  wafer report study.sqlite -o report/             a sweep's store (wafer sweep run)\n"
               "  wafer report study.sqlite -o r/ --study skew     one study of a shared store\n"
               "  wafer compare --json > runs.json && wafer report runs.json -o r/\n"
               "  wafer replay --policy sepbit --accuracy --json > one.json && wafer report one.json -o r/\n")
    rep.add_argument("source", metavar="STORE|RESULTS.json", help="a results store or a JSON file of results")
    rep.add_argument("--out", "-o", required=True, metavar="DIR", help="where to write the report")
    rep.add_argument("--study", metavar="NAME", help="only this study of the store")
    rep.add_argument("--title", help="page title")
    rep.add_argument("--no-static", action="store_true", help="skip the PNG/SVG figures (faster)")
    rep.set_defaults(func=cmd_report)

    tu = sub.add_parser(
        "tune", help="AutoBlox: tune an SSD configuration for a workload on the timing model", formatter_class=fmt,
        description="AutoBlox (MICRO'23): place the target in a workload cluster (a cluster tuned before answers "
                    "at once from the database), then search the 46-parameter SSD space with a Gaussian process "
                    "under the capacity, DRAM, chip-layout and power constraints, grading each configuration by "
                    "simulated latency and throughput (Eq. 1-2) against the reference preset. Every validation "
                    "goes to the database (--db): a killed run resumes.",
        epilog="examples:\n"
               "  wafer tune --workload zipf:1.0 --other seq=seq --max-iterations 40 -o tuned.toml --plot grade.png\n"
               "  wafer tune hm_0.csv --reference intel750 --target latency --power-budget 12\n"
               "  wafer tune --workload zipf:1.0 --goal latency:3 --widen 4    what-if: 3x lower latency\n"
               "  wafer tune --workload zipf:1.0 --backend ray --address auto   validations on a Ray cluster")
    tu.add_argument("trace", nargs="*", metavar="TRACE", help="trace file(s) of the target category")
    tu.add_argument("--workload", action="append", metavar="SPEC", help="synthetic target workload (repeatable)")
    tu.add_argument("--other", action="append", metavar="[NAME=]SPEC[+SPEC]",
                    help="a non-target category: traces or workload specs joined by + (repeatable)")
    tu.add_argument("--reference", default="intel750", metavar="PRESET", help="reference timing preset (default intel750)")
    tu.add_argument("--max-iterations", type=_positive_int, default=100, metavar="N", help="search steps (default 100)")
    tu.add_argument("--db", default="autoblox.sqlite", metavar="FILE", help="AutoDB file (default autoblox.sqlite)")
    tu.add_argument("--target", choices=["latency", "throughput", "balanced"],
                    help="optimise latency only (alpha 0), throughput only (alpha 1), or both (default, alpha 0.5)")
    tu.add_argument("--alpha", type=_nonneg_float, default=0.5, help="Eq. 1's weight of throughput (default 0.5)")
    tu.add_argument("--beta", type=_nonneg_float, default=0.1, help="Eq. 2's weight of the other categories (default 0.1)")
    tu.add_argument("--power-budget", default="+10%", metavar="W|+P%|none",
                    help="reject configurations above this average power: watts, a share over the reference's "
                         "power on the same trace (default +10%%), or none")
    tu.add_argument("--constraints", default="realistic", metavar="realistic|none|FILE.toml",
                    help="the space's limits: realistic (default; values shipped parts have, each with its source, "
                         "and the reference's user capacity), none (the paper's space), or a TOML file of rules "
                         "(extends = \"realistic\" starts from it)")
    tu.add_argument("--objective", metavar="TERM[=W],...",
                    help="grade by these terms instead of --alpha: latency, read_latency, write_latency, p99, "
                         "throughput, endurance (erases per host write), with weights (e.g. "
                         "latency=0.25,p99=0.25,throughput=0.5; names alone weigh equally)")
    tu.add_argument("--goal", type=_goal, metavar="latency:F|throughput:F",
                    help="what-if: stop once the target's speedup reaches F (e.g. latency:3)")
    tu.add_argument("--widen", type=_positive_int, metavar="F", help="what-if: extend value ranges Fx beyond both ends")
    tu.add_argument("--prune", action="store_true", help="prune insensitive parameters first (coarse + Ridge, §3.3)")
    tu.add_argument("--backend", choices=["local", "ray"], default="local", help="where validations run (default local)")
    tu.add_argument("--address", help="Ray cluster address (with --backend ray)")
    tu.add_argument("--jobs", "-j", type=_positive_int, metavar="N", help="parallel validations (default: all cores)")
    tu.add_argument("--policy", default="base", help="placement policy of the simulated FTL (default base)")
    tu.add_argument("--writes", type=_positive_int, default=200_000, metavar="N",
                    help="user blocks a synthetic workload writes per validation (default 200000)")
    tu.add_argument("--logical-blocks", type=_positive_int, default=1 << 20, metavar="N",
                    help="logical blocks of a synthetic workload (default 1048576: 4 GiB, larger than the "
                         "reference's data cache)")
    tu.add_argument("--max-requests", type=_positive_int, metavar="N", help="replay at most N requests of a trace")
    tu.add_argument("--arrival", choices=["think", "trace", "closed"], default="think",
                    help="how a validation issues a trace's requests: think (default; AutoBlox's: 3 outstanding, "
                         "each completion waits the time the trace's 5-s window spent on its bytes less what the "
                         "category's busiest second would), trace (its timestamps), closed (back to back)")
    tu.add_argument("--seeds", type=_positive_int, default=3, metavar="N",
                    help="seeds per validation (default 3): the grade gets a 95%% interval and a verdict")
    tu.add_argument("--fit-device", action="store_true",
                    help="validate on a device sized to the run instead of the candidate's whole drive (quick; "
                         "not the paper's validation)")
    tu.add_argument("--precondition", type=_nonneg_float, metavar="K",
                    help="drive-writes of preconditioning before each validation (default: the preset's, 2: "
                         "GC's steady state; each preconditioned drive is reused by later validations)")
    tu.add_argument("--seed", type=_seed, default=1, help="first seed (default 1)")
    tu.add_argument("--out", "-o", metavar="FILE.toml", help="write the best configuration as a timing preset")
    tu.add_argument("--plot", metavar="FILE.png", help="plot the grade over the iterations")
    tu.add_argument("--json", action="store_true", help="print JSON")
    tu.add_argument("--quiet", "-q", action="store_true", help=QUIET_HELP)
    tu.set_defaults(func=cmd_tune)

    b = sub.add_parser("bench", help="measure engine and workload-generator speed")
    b.add_argument("--quick", action="store_true", help="skip the 32M-block device")
    b.add_argument("--repeat", type=_positive_int, default=3, help="runs per measurement; the best is reported (default 3)")
    b.add_argument("--json", action="store_true", help="print JSON")
    b.set_defaults(func=cmd_bench)
