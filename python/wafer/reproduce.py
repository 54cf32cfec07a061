"""``wafer reproduce NAME``: one command per paper figure behind
docs/FIDELITY.md. Each experiment is a sweep (resumable, on all cores, its
runs in a store), repeated over seeds; it reports every cell's mean and 95%
interval, checks the claims of the papers it names (a claim is a small
function over the table of cells; each holds or fails, with the numbers)
and can write the report."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ._core import ConfigError, PolicyError
from .api import describe_policy
from .stats import summarize

WORKLOADS = ["uniform", "zipf:0.8", "zipf:1.0", "hotcold:0.9:0.1", "phase"]
SKEWED = ["zipf:0.8", "zipf:1.0", "hotcold:0.9:0.1"]
#: Synthetic stand-ins for Shiro's Alibaba drives (`wafer reproduce shiro`).
SHIRO_WORKLOADS = ["zipf:1.0", "hotcold:0.9:0.1", "phase"]
#: The same on a fresh drive whose workload touches 70% of the logical space (`wafer reproduce shiro-fresh`): the
#: regime Table III's 5% free-space trigger with 8 open superblocks implies (a full drive would leave <= 1% slack).
SHIRO_FRESH = [w + ",region=0.7" for w in SHIRO_WORKLOADS]


class Cells:
    """The cells of an experiment: per (op, victim, workload, policy) the mean
    and 95% half-width over seeds of steady WAF and of the accuracies."""

    def __init__(self, df):
        from .report.data import family

        self.df = df
        done = df[df.status == "done"]
        keys = ["op", "victim", "workload", "policy"]
        self.table = summarize(done, keys, "steady_waf")
        self.families = {p: family(n) for p, n in zip(df.policy, df.policy_name)}
        self._practical = {p: _practical(n) for p, n in zip(df.policy, df.policy_name)}
        self._waf = {tuple(r[k] for k in keys): (r["mean"], r["half"]) for _, r in self.table.iterrows()}
        self._acc = {}
        for col in ("user_accuracy", "gc_accuracy", "user_majority", "gc_majority", "user_balanced_accuracy",
                    "gc_balanced_accuracy"):
            if col in done and done[col].notna().any():
                s = summarize(done, keys, col)
                self._acc[col] = {tuple(r[k] for k in keys): r["mean"] for _, r in s.iterrows()}
        self.ops = sorted(set(done.op))
        self.victims = list(dict.fromkeys(done.victim))
        self.workloads = list(dict.fromkeys(done.workload))

    def waf(self, policy: str, workload: str, op: float, victim: str) -> float:
        """Mean steady WAF of a cell (NaN if the cell has no finished run)."""
        return self._waf.get((op, victim, workload, policy), (math.nan, math.nan))[0]

    def acc(self, kind: str, policy: str, workload: str, op: float, victim: str) -> float:
        """Mean ``user`` or ``gc`` prediction accuracy of a cell (NaN if none)."""
        v = self._acc.get(f"{kind}_accuracy", {}).get((op, victim, workload, policy))
        return math.nan if v is None else v

    def acc_note(self, kind: str, policy: str, workload: str, op: float, victim: str) -> str:
        """The baselines a cell's accuracy is read against, as " (commonest class M, balanced B)", or
        "" when the store has no such columns (runs stored before they were recorded)."""
        key = (op, victim, workload, policy)
        m = self._acc.get(f"{kind}_majority", {}).get(key)
        b = self._acc.get(f"{kind}_balanced_accuracy", {}).get(key)
        if m is None or b is None or m != m or b != b:
            return ""
        return f" (commonest class {m:.3f}, balanced {b:.3f})"

    def settings(self):
        """Every (op, victim) of the experiment."""
        return [(op, v) for op in self.ops for v in self.victims]

    def practical(self) -> list[str]:
        """Policies a real device can run (not oracles or oracle-assisted variants: the registry's
        ``needs_future``)."""
        return [p for p, ok in self._practical.items() if ok]


@dataclass(frozen=True)
class RunOptions:
    """What ``wafer reproduce NAME`` hands every experiment (the runner protocol): ``quick`` (a small device),
    ``progress`` (a bar on stderr), ``seeds`` (1..N per cell; None: the experiment's default), ``jobs`` (worker
    processes; None: all cores), ``store`` (where its runs go, so a rerun resumes) and ``report`` (a folder for
    its HTML report). A sweep honours them all; a runner of its own honours those it does not list in its
    ``REFUSED``, and :func:`run` refuses any other given, naming the flag."""

    quick: bool = False
    progress: bool = True
    seeds: int | None = None
    jobs: int | None = None
    store: str | Path | None = None
    report: str | Path | None = None

    def given(self) -> dict[str, Any]:
        """The options beyond quick and progress that were set."""
        return {k: v for k in OPTIONS if (v := getattr(self, k)) is not None}


#: The options a runner may refuse, and their flags.
OPTIONS = {"seeds": "--seeds", "jobs": "--jobs", "store": "--store", "report": "--report"}
#: Seeds per cell when none are given.
DEFAULT_SEEDS = 3
#: Where and when the ``quick_seconds`` of the experiments were measured.
TIMED = "the project's 2-core machine, shared with three other builds (load 10-14; 2026-11-27, commit of issue 31)"
#: Seconds per user write of a quick run without a measurement of its own: rule-based's measured 303.5 s for 540
#: runs of 49,152 user writes.
QUICK_RATE = 303.5 / (540 * 49_152)
#: A full run's time per run over a quick run's, where a doc has no full run: rule-based's, whose both are measured
#: (32 min / 303.5 s; its runs write 43 times more, but a quick run's fixed costs weigh more).
FULL_FACTOR = 32 * 60 / 303.5


class Runner(Protocol):
    """An experiment with a runner of its own (a module named by :attr:`Experiment.runner`)."""

    #: Option name (a key of :data:`OPTIONS`) -> why the runner cannot honour it.
    REFUSED: dict[str, str]

    def reproduce(self, options: RunOptions) -> dict[str, Any]:
        """Run the experiment; its output (``claims`` among it) for :meth:`markdown`."""

    def markdown(self, out: dict[str, Any]) -> str:
        """The output as Markdown tables and claims."""


def runner(e: Experiment) -> Runner | None:
    """The runner module of ``e`` (None for a sweep)."""
    import importlib

    return importlib.import_module(f".{e.runner}", __package__) if e.runner else None


def refused(name: str, options: RunOptions) -> str | None:
    """Why ``wafer reproduce NAME`` cannot honour one of ``options`` (None: it honours every one given)."""
    r = runner(EXPERIMENTS[name])
    for k in options.given():
        if r is not None and k in r.REFUSED:
            return f"wafer reproduce {name}: {OPTIONS[k]} is not honoured: {r.REFUSED[k]}; leave the flag out"
    return None


@dataclass
class Claim:
    """A statement of a paper, checked on the results: ``check(cells)``
    returns (holds, the numbers that decided it); holds None: not decidable
    (runs missing or failed)."""

    text: str
    check: Callable[[Cells], tuple[bool | None, str]]
    #: Why the claim fails here when it does, as docs/FIDELITY.md judges it by an experiment: "fixed: ...",
    #: "regime: ..." or "does not reproduce: ..."; printed beside a failing claim (None: not judged yet).
    verdict: str | None = None


def _f(x: float) -> str:
    return "-" if x != x else f"{x:.3f}"


def _all(items: list[tuple[bool | None, str]], summary: str = "") -> tuple[bool | None, str]:
    """Holds if every item holds; the failing items (or the summary) as the numbers."""
    if not items:
        return None, "no runs to decide"
    if any(h is None for h, _ in items):
        return None, "; ".join(d for h, d in items if h is None)[:400]
    bad = [d for h, d in items if not h]
    if bad:
        return False, f"{len(bad)} of {len(items)} settings do not: " + "; ".join(bad[:6])
    return True, summary or f"in all {len(items)} settings, e.g. " + "; ".join(d for _, d in items[:3])


def order(policies: list[str], workloads: list[str]) -> Callable[[Cells], tuple[bool | None, str]]:
    """Strictly increasing steady WAF along ``policies`` on each workload, in every setting."""
    def check(c: Cells):
        items = []
        for op, v in c.settings():
            for w in workloads:
                xs = [c.waf(p, w, op, v) for p in policies]
                text = f"{w} {op:.0%} {v}: " + " < ".join(f"{p} {_f(x)}" for p, x in zip(policies, xs))
                if any(x != x for x in xs):
                    items.append((None, text))
                else:
                    items.append((all(a < b for a, b in zip(xs, xs[1:])), text))
        return _all(items)
    return check


def lowest(policy: str, workloads: list[str], among: str = "all") -> Callable[[Cells], tuple[bool | None, str]]:
    """``policy`` has the lowest steady WAF on these workloads in every setting
    (``among``: ``all`` policies or the ``practical`` ones)."""
    def check(c: Cells):
        items = []
        others = [p for p in (c.practical() if among == "practical" else c.families) if p != policy]
        for op, v in c.settings():
            for w in workloads:
                mine = c.waf(policy, w, op, v)
                rest = {p: c.waf(p, w, op, v) for p in others}
                rest = {p: x for p, x in rest.items() if x == x}
                if mine != mine or not rest:
                    items.append((None, f"{w} {op:.0%} {v}: {policy} has no result"))
                    continue
                best = min(rest, key=rest.get)
                items.append((mine < rest[best], f"{w} {op:.0%} {v}: {policy} {_f(mine)} vs {best} {_f(rest[best])}"))
        return _all(items)
    return check


def better_victim(policy: str, workloads: list[str], good: str, bad: str) -> Callable[[Cells], tuple[bool | None, str]]:
    """``policy`` has a lower WAF under victim selector ``good`` than under ``bad`` on these workloads at every OP."""
    def check(c: Cells):
        items = []
        for op in c.ops:
            for w in workloads:
                g, b = c.waf(policy, w, op, good), c.waf(policy, w, op, bad)
                text = f"{w} {op:.0%}: {good} {_f(g)} vs {bad} {_f(b)}"
                items.append((None if g != g or b != b else g < b, text))
        return _all(items)
    return check


def lowers(variant: str, policy: str, workloads: list[str], op: float) -> Callable[[Cells], tuple[bool | None, str]]:
    """``variant`` has a lower WAF than ``policy`` on these workloads at ``op`` (every victim); the reduction in %."""
    def check(c: Cells):
        items = []
        for v in c.victims:
            for w in workloads:
                a, b = c.waf(policy, w, op, v), c.waf(variant, w, op, v)
                change = "" if a != a or b != b else \
                    f" ({(a - b) / a:.0%} lower)" if b <= a else f" ({(b - a) / a:.0%} higher)"
                text = f"{w} {v}: {policy} {_f(a)} -> {variant} {_f(b)}{change}"
                items.append((None if a != a or b != b else b < a, text))
        return _all(items, "; ".join(d for _, d in items))
    return check


def extra_lowers(variant: str, policy: str, workloads: list[str], op: float) -> Callable[[Cells], tuple[bool | None, str]]:
    """Like :func:`lowers`, in the paper's metric: extra writes per user write, WAF - 1 ("(F-U)/U", Shiro §V-B)."""
    def check(c: Cells):
        items = []
        for v in c.victims:
            for w in workloads:
                a, b = c.waf(policy, w, op, v) - 1, c.waf(variant, w, op, v) - 1
                change = "" if a != a or b != b or a <= 0 else \
                    f" ({(a - b) / a:.0%} lower)" if b <= a else f" ({(b - a) / a:.0%} higher)"
                text = f"{w} {v}: {policy} {_f(a)} -> {variant} {_f(b)}{change}"
                items.append((None if a != a or b != b else b < a, text))
        return _all(items, "; ".join(d for _, d in items))
    return check


def accuracy_at_least(policy: str, kind: str, workloads: list[str], lo: float,
                      hi: float = 1.0) -> Callable[[Cells], tuple[bool | None, str]]:
    """``policy``'s ``kind`` (user/gc) prediction accuracy is within [lo, hi] on these workloads in every setting."""
    def check(c: Cells):
        items = []
        for op, v in c.settings():
            for w in workloads:
                a = c.acc(kind, policy, w, op, v)
                items.append((None if a != a else lo - 1e-9 <= a <= hi + 1e-9,
                              f"{w} {op:.0%} {v}: {_f(a)}{c.acc_note(kind, policy, w, op, v)}"))
        return _all(items)
    return check


def more_accurate(a: str, b: str, kind: str) -> Callable[[Cells], tuple[bool | None, str]]:
    """``a``'s ``kind`` prediction accuracy is above ``b``'s on every workload and setting."""
    def check(c: Cells):
        items = []
        for op, v in c.settings():
            for w in c.workloads:
                x, y = c.acc(kind, a, w, op, v), c.acc(kind, b, w, op, v)
                items.append((None if x != x or y != y else x > y, f"{w} {op:.0%}: {a} {_f(x)} vs {b} {_f(y)}"))
        return _all(items)
    return check


def highest_of(policy: str, among: list[str], workloads: list[str]) -> Callable[[Cells], tuple[bool | None, str]]:
    """``policy`` has the highest WAF of ``among`` on these workloads in every setting."""
    def check(c: Cells):
        items = []
        for op, v in c.settings():
            for w in workloads:
                xs = {p: c.waf(p, w, op, v) for p in among}
                if any(x != x for x in xs.values()):
                    items.append((None, f"{w} {op:.0%}: missing runs"))
                    continue
                top = max(xs, key=xs.get)
                items.append((top == policy, f"{w} {op:.0%}: " + ", ".join(f"{p} {_f(x)}" for p, x in xs.items())))
        return _all(items)
    return check


def gc_part_above_user(policy: str, workloads: list[str]) -> Callable[[Cells], tuple[bool | None, str]]:
    """Of ``policy``'s distance to NoDaP (see :mod:`wafer.gap`, average of both
    orders), GC relocation is a larger part than user placement on these workloads."""
    from .gap import COMPONENTS, decompose

    def check(c: Cells):
        items = []
        for op, v in c.settings():
            for w in workloads:
                d = c.df[(c.df.workload == w) & (c.df.op == op) & (c.df.victim == v)]
                g = decompose(d, policy)
                if not g.get("complete"):
                    items.append((None, f"{w}: incomplete"))
                    continue
                parts = {k: g["average"][k]["mean"] for k in COMPONENTS}
                items.append((parts["gc"] > parts["user"], f"{w} {op:.0%}: " +
                              ", ".join(f"{k} {_f(x)}" for k, x in parts.items())))
        return _all(items)
    return check


@dataclass
class Experiment:
    """A sweep: every policy x victim x workload x OP on one device size,
    over seeds; with the figure it stands for and the claims it checks."""

    description: str
    figure: str
    policies: list[str]
    victims: list[str]
    workloads: list[str]
    ops: list[float]
    logical_blocks: int = 1 << 18
    drive_writes: float = 8.0
    warmup_drive_writes: float = 2.0
    segment_blocks: int = 256
    #: Write the whole logical space once before the workload (False: a fresh drive).
    prefill: bool = True
    accuracy: bool = False
    claims: list[Claim] = field(default_factory=list)
    gap: list[str] = field(default_factory=list)
    #: A module with the runner protocol (:class:`Runner`), for an experiment that is not a sweep.
    runner: str | None = None
    #: Wall time of ``wafer reproduce NAME --quick --jobs 2`` [s] where it was measured (see :data:`TIMED`); else
    #: ``--list`` estimates it from the number of runs.
    quick_seconds: float | None = None
    quick_source: str = "measured"
    #: Wall time of the full run [s] where a doc measured it, and where; else ``--list`` scales the quick run.
    full_seconds: float | None = None
    full_source: str = ""
    quick: dict[str, Any] = field(default_factory=lambda: {"logical_blocks": 1 << 14, "drive_writes": 3.0,
                                                            "warmup_drive_writes": 1.0, "segment_blocks": 8})

    def settings(self, quick: bool) -> dict[str, Any]:
        s = dict(logical_blocks=self.logical_blocks, drive_writes=self.drive_writes,
                 warmup_drive_writes=self.warmup_drive_writes, segment_blocks=self.segment_blocks)
        if quick:
            s.update(self.quick)
        return s

    def replays(self, seeds: int = DEFAULT_SEEDS) -> int:
        """Runs of the sweep (0 for a runner of its own)."""
        return 0 if self.runner else len(self.policies) * len(self.victims) * len(self.workloads) * len(self.ops) * seeds

    def runs(self, quick: bool) -> int:
        """Runs of the whole experiment (0 if its runner does not say)."""
        if self.runner:
            return getattr(runner(self), "runs", lambda quick: 0)(quick)
        return self.replays()

    def work(self, quick: bool, seeds: int = DEFAULT_SEEDS) -> int | None:
        """User writes of the whole experiment (None if its runner does not say)."""
        if self.runner:
            w = getattr(runner(self), "work", None)
            return w(quick) if w else None
        s = self.settings(quick)
        return self.replays(seeds) * int(s["drive_writes"] * s["logical_blocks"])

    def quick_estimate(self) -> tuple[float | None, str]:
        """The quick run's wall time [s] and how it is known: measured, or estimated from its runs and their
        user writes at the rate of the measured rule-based sweep (:data:`QUICK_RATE`; learned policies, NoDaP's
        searches and timed runs take longer per write, so this is a lower bound)."""
        if self.quick_seconds is not None:
            return self.quick_seconds, self.quick_source
        runs = self.runs(True)
        work = self.work(True)
        if runs and work:
            return work * QUICK_RATE, f"estimated: {runs} runs, {work:,} user writes at rule-based's rate"
        return None, "not measured"

    def full_estimate(self) -> tuple[float | None, str]:
        """The full run's wall time [s] and how it is known: measured, or the quick run's scaled by the number
        of runs and rule-based's measured full/quick time per run (:data:`FULL_FACTOR`)."""
        if self.full_seconds is not None:
            return self.full_seconds, f"measured, {self.full_source}"
        seconds, _ = self.quick_estimate()
        quick, full = self.runs(True), self.runs(False)
        if seconds is None or not quick or not full:
            return None, "not measured"
        scale = full / quick * FULL_FACTOR
        return seconds * scale, (f"estimated: the quick run x {scale:.1f} ({full} runs for {quick}, x "
                                 f"{FULL_FACTOR:.1f} per run as rule-based measured)")

    def study(self, name: str, quick: bool = False, seeds: int = 3) -> dict[str, Any]:
        """The experiment as a study (see :mod:`wafer.sweep.study`)."""
        s = self.settings(quick)
        return {
            "name": f"reproduce-{name}" + ("-quick" if quick else ""),
            "description": self.description,
            "workloads": self.workloads,
            "policies": [p for p in self.policies if _known(p)],
            "victims": self.victims,
            "devices": [{"logical_blocks": s["logical_blocks"], "op": self.ops, "segment_blocks": s["segment_blocks"],
                         "warmup_drive_writes": s["warmup_drive_writes"], "prefill": self.prefill}],
            "seeds": seeds,
            "writes": int(s["drive_writes"] * s["logical_blocks"]),
            "accuracy": self.accuracy,
            "metrics": ["steady_waf", "waf", "user_accuracy", "gc_accuracy"] if self.accuracy else ["steady_waf", "waf"],
        }


#: Table V's 80%+ on the synthetic workloads (docs/FIDELITY.md, "Shiro's accuracy", issue 49 item 2).
SHIRO_ACCURACY_VERDICT = ("regime: on hotcold and phase the rewrites are memoryless, so no classifier of page history "
                          "beats always answering the commonest class (0.66-0.73; the numbers show it beside the "
                          "accuracy) and the balanced accuracy is 0.50-0.53; on zipf, where lifetimes follow "
                          "popularity, 0.79-0.89")


EXPERIMENTS = {
    "rule-based": Experiment(
        description="Rule-based placement (the baselines of DOGI Table 1 and Shiro §V): steady-state WAF of base, "
                    "two-r, sepbit, midas, autostream (and equal-partition) under greedy and cost-benefit, five "
                    "synthetic workloads, 7/10/28% OP, fixed-capacity SSD, prefilled, 8 drive-writes of which 2 are "
                    "warm-up.",
        figure="FIDELITY.md 'Rule-based placement'; the baselines of Shiro Fig. 7 and DOGI Fig. 10",
        policies=["base", "two-r", "sepbit", "midas", "autostream", "equal-partition"],
        victims=["greedy", "cost-benefit"],
        workloads=WORKLOADS,
        ops=[0.07, 0.10, 0.28],
        claims=[
            Claim("Skewed (Zipf) workloads order SepBIT < 2R < Base under both selectors at every OP "
                  "(Shiro Fig. 7, DOGI Fig. 10)", order(["sepbit", "two-r", "base"], ["zipf:0.8", "zipf:1.0"])),
            Claim("Uniform writes gain nothing from separation: Base has the lowest WAF on uniform everywhere "
                  "(Desnoyers' model)", lowest("base", ["uniform"])),
            Claim("Cost-benefit beats greedy for SepBIT on skewed workloads at every OP (LFS; SepBIT and Shiro "
                  "evaluate with cost-benefit)", better_victim("sepbit", SKEWED, "cost-benefit", "greedy")),
        ],
        quick_seconds=303.5, full_seconds=32 * 60.0,
        full_source="docs/FIDELITY.md: 540 runs in 32 min on one core of the shared machine, 2026-11-23",
    ),
    "oracle": Experiment(
        description="Future knowledge (DOGI §3, Figs. 2-4): NoDaP (searched per workload and OP) against the simple "
                    "oracles, the rule-based policies and their oracle-assisted variants (+nu: NoDaP user "
                    "placement, +ngc: NoDaP GC relocation), with the accuracy of every lifetime prediction; greedy "
                    "fallback victims, the rule-based experiment's workloads, device and OPs.",
        figure="DOGI Fig. 2 (prediction accuracy), Fig. 3 (oracle-assisted variants), Fig. 4 (NoDaP)",
        policies=["nodap", "oracle-sort", "oracle-hotcold", "sepbit", "sepbit+ngc", "sepbit+nu+ngc", "midas",
                  "midas+ngc", "midas+nu"],
        victims=["greedy"],
        workloads=WORKLOADS,
        ops=[0.07, 0.10, 0.28],
        accuracy=True,
        claims=[
            Claim("NoDaP is below every practical policy in every cell (DOGI §3.1: 'WAFs slightly greater than 1')",
                  lowest("nodap", WORKLOADS, among="practical")),
            Claim("Oracle GC relocation lowers SepBIT's WAF on the skewed workloads at 10% OP (DOGI Fig. 3(a): "
                  "46% on average for MiDAS and ML-DT)", lowers("sepbit+ngc", "sepbit", SKEWED, 0.10)),
            Claim("Oracles' lifetime predictions score 1.000 (a check of the scorer)",
                  accuracy_at_least("nodap", "user", WORKLOADS, 1.0)),
            Claim("SepBIT's user-write predictions are right 76% of the time or more on Zipf (DOGI Fig. 2(b): 76-87%)",
                  accuracy_at_least("sepbit", "user", ["zipf:0.8", "zipf:1.0"], 0.76)),
        ],
        quick_seconds=1460.0,
        quick_source="extrapolated: 349 of its 405 runs (45 NoDaP searches among them) took 21 min, then stopped",
    ),
    "learned": Experiment(
        description="Learned placement (DOGI §5.2-5.3, Figs. 10-14): WAF and lifetime-prediction accuracy of base, "
                    "sepbit, midas, phftl, ml-dt, DOGI and its ablations (+User, +Grp; +GC is DOGI) and NoDaP "
                    "(searched), with online training; FIO-like zipf:1.0, a varmail-like dynamic workload "
                    "(phase: the hot set moves), hotcold and uniform; cost-benefit victims (the paper's baselines; "
                    "MiDAS, DOGI and NoDaP choose their own), 10% OP (the paper's) and 28%.",
        figure="DOGI Fig. 10 (WAF), Figs. 11-12 (accuracy), Fig. 14 (ablations)",
        policies=["base", "sepbit", "midas", "phftl", "ml-dt", "dogi+User", "dogi+Grp", "dogi", "nodap"],
        victims=["cost-benefit"],
        workloads=["zipf:1.0", "phase", "hotcold:0.9:0.1", "uniform"],
        ops=[0.10, 0.28],
        accuracy=True,
        claims=[
            Claim("DOGI is below SepBIT and MiDAS on the FIO-like zipf:1.0 (DOGI Fig. 10)",
                  lambda c: _all([(c.waf("dogi", "zipf:1.0", op, v) < min(c.waf("sepbit", "zipf:1.0", op, v),
                                                                          c.waf("midas", "zipf:1.0", op, v)),
                                   f"{op:.0%}: dogi {_f(c.waf('dogi', 'zipf:1.0', op, v))}, sepbit "
                                   f"{_f(c.waf('sepbit', 'zipf:1.0', op, v))}, midas "
                                   f"{_f(c.waf('midas', 'zipf:1.0', op, v))}") for op, v in c.settings()])),
            Claim("The ablations order dogi < dogi+Grp < dogi+User on zipf:1.0 (DOGI Fig. 14)",
                  order(["dogi", "dogi+Grp", "dogi+User"], ["zipf:1.0"])),
            Claim("ML-Reloc relocates more accurately than age: DOGI's GC-write accuracy is above dogi+Grp's on every "
                  "workload (DOGI Fig. 12)", more_accurate("dogi", "dogi+Grp", "gc")),
            Claim("NoDaP is below every practical policy in every cell (DOGI §3.1)",
                  lowest("nodap", ["zipf:1.0", "phase", "hotcold:0.9:0.1", "uniform"], among="practical")),
            Claim("ML-DT has the highest WAF of the learned policies on zipf:1.0 (DOGI §3.2, Fig. 4: 19 groups pay "
                  "for every misprediction)", highest_of("ml-dt", ["phftl", "ml-dt", "dogi"], ["zipf:1.0"])),
        ],
        quick={"logical_blocks": 1 << 14, "drive_writes": 3.0, "warmup_drive_writes": 1.0, "segment_blocks": 16},
        full_seconds=12 * 60 + 49.0,
        full_source="docs/FIDELITY.md: 216 runs in 12 min 49 s with --jobs 2, 2026-11-24",
    ),
    "gap": Experiment(
        description="Where the distance to NoDaP comes from (DOGI §3.2, Fig. 3): SepBIT and MiDAS with NoDaP's user "
                    "placement (+nu), GC relocation (+ngc) and both, against NoDaP (searched); the skewed workloads, "
                    "10% OP, greedy fallback victims. See `wafer gap` for one policy.",
        figure="DOGI Fig. 3 (oracle-assisted variants: the gap per component)",
        policies=["sepbit", "sepbit+nu", "sepbit+ngc", "sepbit+nu+ngc", "midas", "midas+nu", "midas+ngc",
                  "midas+nu+ngc", "nodap"],
        victims=["greedy"],
        workloads=["zipf:0.8", "zipf:1.0", "hotcold:0.9:0.1"],
        ops=[0.10],
        gap=["sepbit", "midas"],
        claims=[
            Claim("GC relocation costs SepBIT more than user placement on the skewed workloads (DOGI Fig. 3: "
                  "oracle relocation gains more than oracle user placement)", gc_part_above_user("sepbit", SKEWED)),
            Claim("Oracle GC relocation lowers SepBIT's WAF on every skewed workload (DOGI Fig. 3(a))",
                  lowers("sepbit+ngc", "sepbit", SKEWED, 0.10)),
        ],
        quick_seconds=304.6, full_seconds=12 * 60.0,
        full_source="docs/FIDELITY.md: 81 runs in 12 min on two cores, 2026-11-24",
    ),
    "streams": Experiment(
        description="Host-side stream identification (FIOS/OFIOS, LSTM+KM): multi-streaming vs "
                    "legacy, the 15 feature combinations (decimal and binary) on four designed mixes, automatic "
                    "selection's regret, the chunk-size knee, OFIOS vs static FIOS on phased tenants and its "
                    "training fraction, LSTM vs last-value on a sliding and a stationary hot spot, OFIOS vs "
                    "AutoStream-MQ/vStream/LSTM+KM; each claim holds/fails with numbers; dictionary build time and "
                    "BD/SID bytes vs chunks.",
        policies=["base", "equal-partition", "fios", "ofios", "vstream", "autostream-pub", "lstm-km"],
        victims=["greedy"],
        workloads=[],
        ops=[0.11],
        runner="repro_streams",
        figure="FIOS Figs. 8-12, OFIOS Figs. 6-9, LSTM+KM Figs. 6-8",
        quick_seconds=79.0 / 4, quick_source="estimated: the full run's 79 s on a quarter of the device",
        full_seconds=79.0, full_source="docs/FIDELITY.md: seeds 1-3 in 79 s on two cores, 2026-11-24",
    ),
    "oracle-assist": Experiment(
        description="DOGI Fig. 2(a): NoDaP with each policy's user-write predictions (NoDaP^{+SeU}, ^{+MiU}, "
                    "^{+PHU}, ^{+MLU}, and DOGI's), against NoDaP; its groups, GC relocation and victims stay "
                    "NoDaP's (searched per cell); greedy fallback victims, 10% OP, with the accuracy of every "
                    "prediction.",
        policies=["nodap", "nodap+sepbit-user", "nodap+midas-user", "nodap+phftl-user", "nodap+ml-dt-user",
                  "nodap+dogi-user"],
        victims=["greedy"],
        workloads=["zipf:1.0", "hotcold:0.9:0.1", "phase"],
        ops=[0.10],
        accuracy=True,
        figure="DOGI Fig. 2(a) (NoDaP with each policy's user-write predictions)",
        claims=[
            Claim("NoDaP's own (exact) user placement beats every policy's predictions in its place (DOGI Fig. 2(a))",
                  lowest("nodap", ["zipf:1.0", "hotcold:0.9:0.1", "phase"])),
            Claim("DOGI's predictions bring NoDaP closer than SepBIT's on zipf:1.0 (DOGI Fig. 2(a))",
                  order(["nodap+dogi-user", "nodap+sepbit-user"], ["zipf:1.0"])),
        ],
    ),
    "autoblox": Experiment(
        description="AutoBlox (MICRO'23) on synthetic stand-ins for its workload categories (the paper's traces "
                    "are not reachable here): clustering's own-cluster share of held-out windows, configurations "
                    "tuned per target on the timing model against intel750 (target and non-target speedups), "
                    "beta = 0 vs 0.1.",
        figure="AutoBlox §4.1 (clustering, 95%), Figs. 8-10 (speedups over the reference), Fig. 12 (beta)",
        policies=["base"],
        victims=["greedy"],
        workloads=[],
        ops=[0.2],
        runner="repro_autoblox",
        quick_seconds=976.0 * 24 / 200,
        quick_source="estimated: the full run's 976 s x 24 of its 200 search iterations (an upper bound: a quick "
                     "validation writes 10 times less)",
        full_seconds=976.0,
        full_source="docs/PERFORMANCE.md: five searches of 40 iterations in 976 s with --jobs 2, 2026-11-24",
    ),
    "timing": Experiment(
        description="Timing mode: latency vs queue depth on intel750; GC's effect on tail latency by placement "
                    "policy on Shiro's femu device (better placement, less GC, lower tail); host stream policies "
                    "against legacy placement.",
        figure="MQSim-style latency/IOPS curves; Shiro Figs. 11-12 (tail latency by placement)",
        policies=["base", "two-r", "sepbit", "midas", "shiro"],
        victims=["greedy"],
        workloads=[],
        ops=[0.07],
        runner="timing_study",
    ),
    "shiro": Experiment(
        description="Shiro (TCAD'25 §V, Figs. 7-9, Table V) on synthetic stand-ins for its Alibaba drives (the "
                    "traces are not reachable here): FIO-like zipf:1.0, hotcold and phase (a moving hot set) at "
                    "Table III's 7% OP, 2^18 pages, prefilled (the fresh drive is `shiro-fresh`), warm-up 2 "
                    "drive-writes); Base and 2R with cost-benefit (as the paper runs them), Shiro, SepBIT and "
                    "MiDAS with their own victims; the -NG ablations (no GC separation) of Fig. 9.",
        figure="Shiro Fig. 7 (WAF), Fig. 9 (-NG ablations), Table V (short-class accuracy)",
        policies=["base", "two-r", "sepbit", "midas", "shiro", "sepbit-ng", "midas-ng", "shiro-ng"],
        victims=["cost-benefit"],
        workloads=SHIRO_WORKLOADS,
        ops=[0.07],
        accuracy=True,
        claims=[
            Claim("Shiro has the lowest WAF of every practical policy (Fig. 7)",
                  lowest("shiro", SHIRO_WORKLOADS, among="practical")),
            Claim("2R is below Base (Fig. 7)", order(["two-r", "base"], SHIRO_WORKLOADS)),
            Claim("Shiro's reduction against Base (the paper: 67.6% on average)",
                  lowers("shiro", "base", SHIRO_WORKLOADS, 0.07)),
            Claim("... against SepBIT (the paper: 17.1-58.0% against the rule-based schemes)",
                  lowers("shiro", "sepbit", SHIRO_WORKLOADS, 0.07)),
            Claim("... against MiDAS", lowers("shiro", "midas", SHIRO_WORKLOADS, 0.07)),
            Claim("Fig. 9's ablation order: shiro-ng below sepbit-ng and midas-ng, both below base",
                  lambda c: _all([(c.waf("shiro-ng", w, op, v) < min(c.waf("sepbit-ng", w, op, v),
                                                                    c.waf("midas-ng", w, op, v))
                                   and max(c.waf("sepbit-ng", w, op, v), c.waf("midas-ng", w, op, v))
                                   < c.waf("base", w, op, v),
                                   f"{w}: " + ", ".join(f"{p} {_f(c.waf(p, w, op, v))}"
                                                        for p in ("shiro-ng", "sepbit-ng", "midas-ng", "base")))
                                  for op, v in c.settings() for w in SHIRO_WORKLOADS])),
            Claim("GC separation helps Shiro: shiro below shiro-ng (Fig. 9)",
                  lowers("shiro", "shiro-ng", SHIRO_WORKLOADS, 0.07)),
            Claim("... and SepBIT: sepbit below sepbit-ng (Fig. 9)",
                  lowers("sepbit", "sepbit-ng", SHIRO_WORKLOADS, 0.07)),
            Claim("... and MiDAS: midas below midas-ng (Fig. 9)",
                  lowers("midas", "midas-ng", SHIRO_WORKLOADS, 0.07)),
            Claim("Shiro's user-write lifetime accuracy is at least 80% (Table V: 81.4-98.7%, average 90.9%)",
                  accuracy_at_least("shiro", "user", SHIRO_WORKLOADS, 0.80), verdict=SHIRO_ACCURACY_VERDICT),
        ],
        quick={"logical_blocks": 1 << 14, "drive_writes": 3.0, "warmup_drive_writes": 1.0, "segment_blocks": 16},
    ),
    "shiro-fresh": Experiment(
        description="Shiro (TCAD'25 §V, Fig. 7) in the regime its Table III implies: a fresh drive (no prefill) "
                    "whose workload touches 70% of the logical space (zipf:1.0, hotcold, phase with region=0.7), 7% "
                    "OP, 2^18 pages, 8 drive-writes of which 2 warm-up; the same policies and victims as `wafer "
                    "reproduce shiro`. Claims in the paper's metric, extra writes per user write (WAF - 1).",
        figure="Shiro Fig. 7 (WAF - 1, \"(F-U)/U\"), Fig. 9 (-NG ablations), Table V (short-class accuracy)",
        policies=["base", "two-r", "sepbit", "midas", "shiro", "sepbit-ng", "midas-ng", "shiro-ng"],
        victims=["cost-benefit"],
        workloads=SHIRO_FRESH,
        ops=[0.07],
        prefill=False,
        accuracy=True,
        claims=[
            Claim("Shiro has the lowest WAF of every practical policy (Fig. 7)",
                  lowest("shiro", SHIRO_FRESH, among="practical")),
            Claim("2R is below Base (Fig. 7)", order(["two-r", "base"], SHIRO_FRESH)),
            Claim("Shiro's reduction of extra writes against Base (the paper: 67.6% on average)",
                  extra_lowers("shiro", "base", SHIRO_FRESH, 0.07)),
            Claim("... against SepBIT (the paper: 17.1-58.0% against the rule-based schemes)",
                  extra_lowers("shiro", "sepbit", SHIRO_FRESH, 0.07)),
            Claim("... against MiDAS", extra_lowers("shiro", "midas", SHIRO_FRESH, 0.07)),
            Claim("GC separation helps Shiro: shiro below shiro-ng (Fig. 9)",
                  extra_lowers("shiro", "shiro-ng", SHIRO_FRESH, 0.07)),
            Claim("Shiro's user-write lifetime accuracy is at least 80% (Table V: 81.4-98.7%, average 90.9%)",
                  accuracy_at_least("shiro", "user", SHIRO_FRESH, 0.80), verdict=SHIRO_ACCURACY_VERDICT),
        ],
        quick={"logical_blocks": 1 << 14, "drive_writes": 3.0, "warmup_drive_writes": 1.0, "segment_blocks": 16},
    ),
    "dogi-configs": Experiment(
        description="DOGI's Fig. 13 method: all 512 group configurations forced and replayed (process pool) on "
                    "zipf:1.0, hotcold and phase (2^18 blocks, 10% OP, cost-benefit); the best configuration, "
                    "the rank of the configuration model's pick, estimated vs measured WAF.",
        figure="DOGI Fig. 13 (the 512 group configurations, the model's pick ranked)",
        policies=["dogi"],
        victims=["cost-benefit"],
        workloads=[],
        ops=[0.10],
        runner="dogi_configs",
    ),
}


def _known(policy: str) -> bool:
    """Whether this build has ``policy`` (the registry describes it, composites included)."""
    try:
        describe_policy(policy)
    except PolicyError:
        return False
    return True


def _practical(policy: str) -> bool:
    """Whether a real device can run ``policy``: it does not place by the future (an unknown name: no)."""
    return _known(policy) and not describe_policy(policy)["needs_future"]


def check_claims(name: str, cells: Cells) -> list[dict[str, Any]]:
    """Every claim of the experiment: ``claim``, ``status`` (holds / fails /
    undecided), ``numbers``."""
    out = []
    for c in EXPERIMENTS[name].claims:
        try:
            holds, numbers = c.check(cells)
        except Exception as e:  # a claim over missing data must not hide the others
            holds, numbers = None, f"could not check: {type(e).__name__}: {e}"
        row = {"claim": c.text, "status": {True: "holds", False: "fails", None: "undecided"}[holds],
               "numbers": numbers}
        if holds is False and c.verdict:
            row["verdict"] = c.verdict
        out.append(row)
    return out


def run(name: str, quick: bool = False, seeds: int | None = None, store: str | Path | None = None,
        jobs: int | None = None, progress: bool = True, report: str | Path | None = None) -> dict[str, Any]:
    """Run experiment ``name`` (see :class:`RunOptions`): a sweep into ``store`` (default
    ``reproduce-NAME.sqlite``, resumed), its claims checked, optionally its report written; or its own
    runner. An option the experiment cannot honour is a :class:`ConfigError` naming the flag. Returns the
    cells, the claims and the settings."""
    from .gap import decompose, tidy
    from .store import Store
    from .sweep import load, run_study

    if name not in EXPERIMENTS:
        raise ConfigError(f"wafer reproduce: unknown experiment '{name}'; known: {', '.join(EXPERIMENTS)}")
    options = RunOptions(quick=quick, progress=progress, seeds=seeds, jobs=jobs, store=store, report=report)
    if seeds is not None and seeds < 1:
        raise ConfigError(f"wafer reproduce {name}: --seeds {seeds}; must be at least 1")
    why = refused(name, options)
    if why:
        raise ConfigError(why)
    e = EXPERIMENTS[name]
    r = runner(e)
    if r is not None:
        return r.reproduce(options)
    seeds = DEFAULT_SEEDS if seeds is None else seeds
    spec = e.study(name, quick=quick, seeds=seeds)
    st = load(spec)
    ids = [j.id for j in st.jobs()]
    path = Path(store) if store else Path(f"reproduce-{name}.sqlite")
    page = None
    with Store(path) as db:
        tally = run_study(st, db, jobs=jobs, progress=progress)
        df = db.to_pandas(ids)
        cells = Cells(df)
        claims = check_claims(name, cells)
        gaps = [decompose(df[df.workload == w], p) | {"policy": f"{p} @ {w}"} for p in e.gap for w in e.workloads]
        if report:
            from .report import write_report

            notes = [f"{e.figure}. {e.description}"] + [
                f"{c['status'].upper()}: {c['claim']} — {c['numbers']}"
                + (f" — verdict: {c['verdict']}" if c.get("verdict") else "") for c in claims]
            page = write_report(db, report, title=f"wafer reproduce {name}" + (" (quick)" if quick else ""),
                                jobs=ids, notes=notes, gaps=tidy(gaps) if gaps else None)
    rows = []
    for r in cells.table.itertuples():
        row = {"op": r.op, "victim": r.victim, "workload": r.workload, "policy": r.policy, "seeds": r.n,
               "steady_waf": None if r.mean != r.mean else r.mean, "steady_waf_half": None if r.half != r.half else r.half}
        for kind in ("user", "gc"):
            a = cells.acc(kind, r.policy, r.workload, r.op, r.victim)
            if a == a:
                row[f"{kind}_accuracy"] = a
        rows.append(row)
    errors = [{"op": r.op, "victim": r.victim, "workload": r.workload, "policy": r.policy, "seed": int(r.seed),
               "error": str(r.error).splitlines()[0]} for r in df[df.status == "failed"].itertuples()]
    return {"experiment": name, "figure": e.figure, "description": e.description, "quick": quick,
            "settings": e.settings(quick), "seeds": st.seeds, "store": str(path), "report": str(page) if page else None,
            "policies": spec["policies"], "missing_policies": [p for p in e.policies if not _known(p)],
            "results": rows, "errors": errors, "claims": claims,
            "gaps": [g for g in gaps if g.get("complete")],
            "ran": tally.ran, "reused": tally.skipped}


def _table(lines: list[str], title: str, cols: list[str], workloads: list[str], cell) -> None:
    """A Markdown table: workloads down, ``cols`` across, ``cell(workload, col)`` in each cell."""
    lines.append(f"#### {title}\n")
    lines.append("| workload | " + " | ".join(f"`{p}`" for p in cols) + " |")
    lines.append("|---|" + "---|" * len(cols))
    for w in workloads:
        lines.append(f"| `{w}` | " + " | ".join(cell(w, p) for p in cols) + " |")
    lines.append("")


def markdown(out: dict[str, Any]) -> str:
    """One table per (OP, victim): workloads down, policies across, steady WAF
    (mean ± 95% half-width over seeds), the lowest in bold; the accuracies if
    measured; failed runs; then the claims, each holds / fails with its numbers."""
    r = runner(EXPERIMENTS[out["experiment"]]) if out["experiment"] in EXPERIMENTS else None
    if r is not None:
        return r.markdown(out)
    lines: list[str] = []
    pols = out["policies"]
    results = out["results"]
    by = {(r["op"], r["victim"], r["workload"], r["policy"]): r for r in results}
    failed = {(r["op"], r["victim"], r["workload"], r["policy"]) for r in out["errors"]}
    ops = sorted({r["op"] for r in results} | {r["op"] for r in out["errors"]})
    victims = list(dict.fromkeys([r["victim"] for r in results] + [r["victim"] for r in out["errors"]]))
    workloads = list(dict.fromkeys([r["workload"] for r in results] + [r["workload"] for r in out["errors"]]))

    def fmt(x: float | None, half: float | None) -> str:
        return "-" if x is None else f"{x:.3f}" + (f" ± {half:.3f}" if half is not None else "")

    for op in ops:
        for v in victims:
            best = {w: min((r["steady_waf"] for p in pols if (r := by.get((op, v, w, p))) and r["steady_waf"]),
                           default=None) for w in workloads}

            def waf(w: str, p: str, op=op, v=v, best=best) -> str:
                r = by.get((op, v, w, p))
                if r is None or r["steady_waf"] is None:
                    return "failed" if (op, v, w, p) in failed else "-"
                text = fmt(r["steady_waf"], r["steady_waf_half"])
                return f"**{text}**" if r["steady_waf"] == best[w] else text

            _table(lines, f"OP {op:.0%}, victim `{v}` (steady-state WAF)", pols, workloads, waf)
    for key, label in (("user_accuracy", "user-write"), ("gc_accuracy", "GC-write")):
        cols = [p for p in pols if any(r.get(key) is not None for r in results if r["policy"] == p)]
        if not cols:
            continue
        for op in ops:
            for v in victims:
                def fraction(w: str, p: str, op=op, v=v, key=key) -> str:
                    r = by.get((op, v, w, p))
                    return "-" if r is None or r.get(key) is None else f"{r[key]:.3f}"

                _table(lines, f"OP {op:.0%}, victim `{v}` ({label} lifetime-prediction accuracy)", cols, workloads,
                       fraction)
    if out["errors"]:
        lines.append("Runs that could not complete:\n")
        lines += [f"* `{r['policy']}` on `{r['workload']}`, OP {r['op']:.0%}, `{r['victim']}`, seed {r['seed']}: "
                  f"{r['error']}" for r in out["errors"]]
        lines.append("")
    if out["missing_policies"]:
        lines.append("Not yet implemented, so not in the tables: " + ", ".join(f"`{p}`" for p in out["missing_policies"]))
        lines.append("")
    if out.get("gaps"):
        from .gap import format_gap

        lines.append("#### Distance to NoDaP by component (`wafer gap`)\n")
        lines.append("```")
        lines += [format_gap(g) + "\n" for g in out["gaps"]]
        lines.append("```\n")
    n = len(out["seeds"])
    lines.append(f"Steady-state WAF: mean over {n} seed{'s' if n > 1 else ''}"
                 + (" ± half-width of the 95% interval (Student's t)." if n > 1 else "."))
    lines.append("")
    lines.append(f"#### Claims ({out['figure']})\n")
    for c in out["claims"]:
        verdict = f" **Verdict: {c['verdict']}**" if c.get("verdict") else ""
        lines.append(f"* **{c['status']}**: {c['claim']}. {c['numbers']}{verdict}")
    return "\n".join(lines)


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def durations(e: Experiment) -> dict[str, Any]:
    """``quick_seconds``, ``full_seconds`` and how each is known (measured or estimated)."""
    quick, quick_how = e.quick_estimate()
    full, full_how = e.full_estimate()
    return {"quick_seconds": quick, "quick_how": quick_how, "full_seconds": full, "full_how": full_how}


def options(e: Experiment) -> dict[str, str | None]:
    """Each option of :data:`OPTIONS`: None if the experiment honours it, else why not."""
    r = runner(e)
    return {k: (r.REFUSED.get(k) if r is not None else None) for k in OPTIONS}


def listing() -> str:
    """Every experiment with the figure it stands for, its runs, how long it takes, the options it honours and
    its claims."""
    out = [f"Times: wall time with --jobs 2 on {TIMED}; the full run measured where a doc says so, else "
           "estimated."]
    for name, e in EXPERIMENTS.items():
        d = durations(e)
        runs = (f"{len(e.policies)} policies x {len(e.victims)} victims x {len(e.workloads)} workloads x "
                f"{len(e.ops)} OPs x {DEFAULT_SEEDS} seeds = {e.replays()} runs") if not e.runner else \
            f"its own runner ({e.runner}.py)"
        refused = [OPTIONS[k] for k, why in options(e).items() if why]
        out.append(f"{name}\n  figure:  {e.figure}\n  runs:    {runs}\n"
                   f"  time:    --quick {_duration(d['quick_seconds'])} ({d['quick_how']}); "
                   f"full ~{_duration(d['full_seconds'])} ({d['full_how']})\n"
                   f"  options: " + ("every one (--seeds --jobs --store --report)" if not refused else
                                     f"refuses {', '.join(refused)}") + "\n  claims:")
        out += [f"    - {c.text}" for c in e.claims]
        if e.runner:
            out.append("    (its own runner checks its claims and prints them with the numbers)")
    return "\n".join(out)


def main(name: str | None, quick: bool, as_json: bool, out_file: str | None, progress: bool, seeds: int | None = None,
         store: str | None = None, jobs: int | None = None, report: str | None = None, list_only: bool = False) -> int:
    if list_only or name is None:
        if as_json:
            print(json.dumps([{"name": n, "figure": e.figure, "description": e.description,
                               "claims": [c.text for c in e.claims], "runner": e.runner, "runs": e.replays(),
                               **durations(e), "refuses": {k: why for k, why in options(e).items() if why}}
                              for n, e in EXPERIMENTS.items()]))
        else:
            print(listing())
        return 0
    out = run(name, quick=quick, seeds=seeds, store=store, jobs=jobs, progress=progress, report=report)
    if out_file:
        with open(out_file, "w") as f:
            json.dump(out, f, indent=1)
    print(json.dumps(out) if as_json else markdown(out))
    return 0
