"""``wafer tune`` / ``wafer.tune(...)``: AutoBlox end to end on a trace or a
synthetic workload.

1. **Which cluster** (§3.1): the target's windows are classified against
   the clustering kept in AutoDB. A target in a cluster whose search has
   finished gets that cluster's best configuration at once (no simulation).
   Otherwise the clustering is refitted on every category the database has
   seen plus this one, and the search runs for it.
2. **Search** (§3.3-3.4, :func:`.search.tune`): validations on wafer's
   timing model (:class:`.evaluate.TimingEvaluator`) on a process pool or a
   Ray cluster, every result in AutoDB (a killed run resumes), optional
   pruning first (:func:`.search.prune`), a what-if goal (§4.5: e.g. 3x
   lower latency) with widened value ranges.
3. **Report**: the best configuration as a timing preset file, its
   parameters next to the reference's, speedups on the target and the other
   categories, energy and power, the grade over the iterations (a plot), the
   time per validation and per search step; JSON for scripts.
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from . import clustering as C
from . import space as S
from .autodb import AutoDB
from .evaluate import TimingEvaluator, ssd_of, to_toml
from .objective import alpha_for, parse_objective
from .search import Study, default_order, evaluator_key, prune, tune

#: Requests of a synthetic workload used to place it in a cluster.
CLUSTER_REQUESTS = 30_000


@dataclass
class TuneReport:
    """What ``wafer tune`` found (``to_json()`` for scripts, ``table()`` to read)."""

    target: str
    cluster: str
    reference: str
    best: dict[str, Any]
    reference_params: dict[str, Any]
    scores: dict[str, Any]
    metrics: dict[str, dict[str, Any]]
    history: list[dict[str, Any]]
    groups: list[list[str]]
    stopped: str
    from_database: bool
    classification: dict[str, Any] | None
    preset: str
    seconds: float
    seconds_per_validation: float | None
    seconds_per_step: float | None
    validations: int
    pruning: dict[str, Any] | None = None
    constraints: dict[str, Any] = field(default_factory=dict)

    def changed(self) -> list[tuple[str, Any, Any]]:
        """Parameters the tuned configuration changed: (name, reference, tuned)."""
        return [(k, self.reference_params[k], v) for k, v in self.best.items() if self.reference_params.get(k) != v]

    @property
    def significant(self) -> bool:
        """Whether the tuned configuration's gain is beyond the seeds' spread."""
        return bool(self.scores.get("significant"))

    def to_json(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["significant"] = self.significant
        d["validation"] = self.scores.get("validation")
        d["changed"] = [{"parameter": n, "reference": a, "tuned": b} for n, a, b in self.changed()]
        return d

    def write_preset(self, path: str | os.PathLike) -> Path:
        p = Path(path)
        p.write_text(self.preset)
        return p

    def table(self) -> str:
        s = self.scores
        c = self.constraints
        budget = (f"{c['power_watts']} W" if c.get("power_watts") else
                  f"+{(c['power_ratio'] - 1) * 100:.0f}% of the reference's" if c.get("power_ratio") else "none")
        lines = [f"wafer tune: target {self.target} (cluster {self.cluster}), reference {self.reference}",
                 f"constraints {c.get('name', '?')}, power budget {budget}" if c else "",
                 ("the cluster's configuration from AutoDB (no search)" if self.from_database else
                  f"{len(self.history)} iterations, {self.validations} validations, {self.seconds:.0f} s; "
                  f"stopped: {self.stopped}"), ""]
        ch = self.changed()
        if ch:
            w = max(len(n) for n, _, _ in ch)
            lines.append(f"{'parameter':<{w}}  {'reference':>14}  {'tuned':>14}")
            lines.append(f"{'-' * w}  {'-' * 14}  {'-' * 14}")
            lines += [f"{n:<{w}}  {_fmt(a):>14}  {_fmt(b):>14}" for n, a, b in ch]
        else:
            lines.append("no parameter changed: the reference is the best configuration found")
        ci = s.get("grade_ci95")
        spread = (f", 95% interval [{ci[0]:+.4f}, {ci[1]:+.4f}] over {s['seeds']} seeds, the reference's own "
                  f"spread ±{s['reference_spread']:.4f}" if ci and s.get("seeds", 1) > 1 else " (one seed: no interval)")
        verdict = ("a significant improvement" if self.significant else
                   "no significant improvement" + ("" if self.changed() else " (the reference is best)"))
        lines += ["", f"grade {s['grade']:+.4f} (Eq. 2; the reference's is 0){spread}", f"verdict: {verdict}"]
        for why in s.get("flagged") or []:
            lines.append(f"not counted: {why}")
        lines += ["",
                  f"target:     latency speedup {s['target_latency_speedup']:.3f}x, "
                  f"throughput speedup {s['target_throughput_speedup']:.3f}x",
                  f"non-target: latency speedup {s['nontarget_latency_speedup']:.3f}x, "
                  f"throughput speedup {s['nontarget_throughput_speedup']:.3f}x"]
        for who in ("reference", "tuned"):
            m = self.metrics.get(who)
            if m:
                lines.append(f"{who + ':':<11} mean latency {m['latency_us']:.1f} µs, bandwidth "
                             f"{m['throughput_bps'] / 1e6:.1f} MB/s, energy {m['energy_j']:.3f} J, "
                             f"power {m['power_w']:.2f} W (target traces, mean)")
        if self.seconds_per_validation:
            lines.append(f"time: {self.seconds_per_validation:.2f} s per validation"
                         + (f", {self.seconds_per_step:.2f} s per search step" if self.seconds_per_step else ""))
        return "\n".join(lines)

    def plot(self, path: str | os.PathLike) -> Path:
        """The grade of each iteration and the best so far (PNG or SVG by suffix)."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        n = [h["n"] + 1 for h in self.history]
        g = [h["grade"] if h["grade"] is not None else np.nan for h in self.history]
        best = np.fmax.accumulate(np.nan_to_num(np.array(g, dtype=float), nan=-np.inf)) if g else []
        fig, ax = plt.subplots(figsize=(6, 3.2))
        ax.plot(n, g, "o", ms=3, alpha=0.6, label="validated configuration")
        ax.step(n, best, where="post", label="best so far")
        ax.axhline(0, color="grey", lw=0.8, ls="--", label=f"reference ({self.reference})")
        ax.set_xlabel("iteration")
        ax.set_ylabel("grade (Eq. 2)")
        ax.set_title(f"AutoBlox on {self.target}")
        ax.legend(fontsize=8)
        fig.tight_layout()
        p = Path(path)
        fig.savefig(p)
        plt.close(fig)
        return p


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, int) and v >= 1 << 20 and v % (1 << 20) == 0:
        return f"{v >> 20} MiB"
    return str(v)


def _as_list(x: str | os.PathLike | list | tuple) -> list[str]:
    return [str(t) for t in x] if isinstance(x, (list, tuple)) else [str(x)]


def _windows(spec: str, *, logical_blocks: int, seed: int) -> np.ndarray:
    """Clustering windows of a trace file or a synthetic workload spec."""
    if os.path.exists(spec):
        return C.trace_windows(spec, max_windows=50)
    from .. import _core

    t, lba, blocks, ops, tenant = _core.workload_requests(spec, logical_blocks, 4096, CLUSTER_REQUESTS, seed)
    return C.windows_of(np.asarray(t), np.asarray(lba) * 4096, np.asarray(blocks) * 4096, ops, np.asarray(tenant))


def widened(params: tuple[S.Param, ...], factor: int = 4) -> tuple[S.Param, ...]:
    """The space with each numeric non-layout parameter's values extended
    ``factor``x beyond both ends (geometric steps), for what-if studies
    (§4.5: "we relax the bounds"). Layout parameters keep their lists
    (capacity and the chip limits bind them anyway)."""
    out = []
    for p in params:
        if p.kind in ("continuous", "discrete") and not p.group and all(isinstance(v, (int, float)) for v in p.values) \
                and min(p.values) > 0:
            lo, hi = min(p.values), max(p.values)
            extra_lo = [lo / 2 ** k for k in range(1, factor.bit_length()) if lo / 2 ** k > 0]
            extra_hi = [hi * 2 ** k for k in range(1, factor.bit_length())]
            cast = int if all(isinstance(v, int) for v in p.values) else float
            vals = sorted({cast(v) for v in [*extra_lo, *p.values, *extra_hi]})
            out.append(replace(p, values=tuple(vals)))
        else:
            out.append(p)
    return tuple(out)


def run(target: str | os.PathLike | list, others: dict[str, list[str]] | list[str] | None = None, *,
        reference: str = "intel750", db: str | os.PathLike = "autoblox.sqlite", max_iterations: int = 100,
        target_metric: str | None = None, alpha: float = 0.5, beta: float = 0.1,
        power_budget: float | str | None = "+10%", constraints: str | None = "realistic",
        objective: str | dict[str, float] | None = None,
        backend: str = "local", address: str | None = None, jobs: int | None = None,
        goal: tuple[str, float] | None = None, widen: int | None = None, prune_first: bool = False,
        seed: int = 1, evaluator: Any = None, policy: str = "base", writes: int = 200_000,
        logical_blocks: int = 1 << 20, requests: int | None = None, arrival: str = "think", seeds: int = 3,
        whole_drive: bool = True, precondition: float | None = None, progress: bool = True) -> TuneReport:
    """Tune an SSD configuration for ``target`` (a trace path or a workload
    spec, or a list of them: one category) against ``reference`` (a timing
    preset), with ``others`` as the non-target categories (a dict name ->
    traces/specs, or a list: one category each), weighted by ``beta``
    (Eq. 2). ``target_metric`` ``"latency"`` / ``"throughput"`` sets alpha to
    0 / 1. ``goal=("latency", 3.0)`` stops once the target's latency speedup
    reaches 3x (what-if, §4.5; ``widen=4`` extends the value ranges 4x).
    Every validation goes to AutoDB ``db``; rerunning resumes. Returns a
    :class:`TuneReport`.

    Validations are AutoBlox's (:class:`.evaluate.TimingEvaluator`): the
    candidate's whole drive (``whole_drive=False``: sized to the run,
    quick, not the paper's), preconditioned to GC's steady state, the
    traces replayed with ``arrival`` ``"think"`` (the artifact's think time
    from each category's peak rate), ``"trace"`` or ``"closed"``, on
    ``seeds`` seeds; the grade has a 95% interval and ``significant`` says
    whether the gain is beyond the seeds' spread. A database answer is
    given only for the very same settings (flags included)."""
    from ..progress import Progress

    t0 = time.perf_counter()
    if max_iterations < 1:
        raise ValueError(f"max_iterations = {max_iterations}; must be at least 1")
    if backend not in ("local", "ray"):
        raise ValueError(f"backend '{backend}'; one of local, ray")
    if goal is not None and (goal[0] not in ("latency", "throughput") or not goal[1] > 0):
        raise ValueError(f"goal {goal!r}; expected ('latency' | 'throughput', factor > 0)")
    tgt = _as_list(target)
    if isinstance(others, dict):
        cats = {str(k): _as_list(v) for k, v in others.items()}
    else:
        cats = {f"other{i + 1}": [str(o)] for i, o in enumerate(others or [])}
    if evaluator is None:
        from .evaluate import peak_rate

        peaks: dict[str, float] = {}
        if arrival == "think":
            # Each trace thinks against its category's busiest second.
            for traces in [tgt, *cats.values()]:
                files = [t for t in traces if os.path.exists(t)]
                if files:
                    peak = max(peak_rate(t, requests) for t in files)
                    peaks.update({t: peak for t in files})
        ev = TimingEvaluator(reference=reference, policy=policy, writes=writes, logical_blocks=logical_blocks,
                             requests=requests, seed=seed, arrival=arrival, seeds=seeds, whole_drive=whole_drive,
                             precondition=precondition, peaks=peaks)
    else:
        ev = evaluator
    from .. import api

    ref_ssd = api.timing_config(reference) if evaluator is None else None
    adb = AutoDB(db)
    try:
        # 1. Which cluster.
        known = adb.meta("categories", {})
        clustering = adb.meta("clustering")
        win = {"target": np.vstack([_windows(t, logical_blocks=logical_blocks, seed=seed) for t in tgt])}
        cls = C.Clustering.from_json(clustering).classify(win["target"]) if clustering else None
        finished = adb.meta("finished", {})
        name = cls["cluster"] if cls and cls["cluster"] else None
        if cls is None:
            # Fewer than two categories cannot be clustered (k-means needs a
            # second centre to set the distance rule): the database answers
            # only for the very same traces or workload specs.
            name = next((k for k, v in known.items() if v == tgt), None)
        params = widened(S.PARAMS, widen) if widen else S.PARAMS
        cons = S.Constraints.of(constraints, **power_of(power_budget, reference if evaluator is None else None))
        terms = parse_objective(objective)
        if terms and {"write_latency", "endurance"} & set(terms) and not any(_writes(t) for t in tgt):
            raise ValueError(f"--objective {','.join(terms)}: the target ({', '.join(tgt)}) writes nothing, so "
                             "its write latency and endurance say nothing")

        def study_of(cluster: str) -> Study:
            return Study(target=cluster, workloads={cluster: tgt, **cats}, constraints=cons,
                         alpha=alpha_for(target_metric, alpha), beta=beta, max_iterations=max_iterations, seed=seed,
                         goal=goal, params=params, evaluator=evaluator_key(ev), objective=terms,
                         extra={"reference": reference, "prune": prune_first})

        # AutoDB answers for a cluster only what a search with these very
        # settings found (a what-if flag, another arrival or seed count
        # searches again).
        if name and name in finished and finished[name].get("search") == study_of(name).search_id():
            f = finished[name]
            cfg = adb.config(f["config_id"])
            return TuneReport(target=", ".join(tgt), cluster=name, reference=reference, best=cfg["params"],
                              reference_params=S.reference(), scores=f["scores"], metrics=f.get("metrics", {}),
                              history=[], groups=[], stopped="known cluster", from_database=True,
                              classification=cls, preset=cfg["preset"], seconds=time.perf_counter() - t0,
                              seconds_per_validation=None, seconds_per_step=None, validations=0)
        name = name or f"cluster{len(known) + 1}"
        known[name] = tgt
        for cat, traces in cats.items():
            win[cat] = np.vstack([_windows(t, logical_blocks=logical_blocks, seed=seed) for t in traces])
        fit_on = {name: win["target"], **{c: w for c, w in win.items() if c != "target"}}
        for k, traces in known.items():
            if k not in fit_on:
                fit_on[k] = np.vstack([_windows(t, logical_blocks=logical_blocks, seed=seed) for t in traces])
        if len(fit_on) >= 2:
            adb.set_meta("clustering", C.Clustering.fit(fit_on, seed=seed).to_json())
        adb.set_meta("categories", known)

        # 2. Search.
        study = study_of(name)

        def preset(c: dict[str, Any]) -> str:
            if ref_ssd is None:
                return json.dumps(c)
            budget = (f"{cons.power_watts} W" if cons.power_watts else
                      f"{cons.power_ratio:.2f}x the reference's power" if cons.power_ratio else "none")
            notes = [f"wafer tune: constraints {cons.name}, power budget {budget}; every rule held:"]
            notes += [f"  {h['parameter']}: {h['rule']} ({h['source']})" for h in cons.held()]
            return to_toml(ssd_of(c, ref_ssd), f"autoblox-{name}", f"AutoBlox-tuned for {name} from {reference}",
                           notes)

        n_jobs = jobs or os.cpu_count() or 1
        pruning = None
        order = None
        if prune_first:
            pruning = prune(study, adb, ev, preset, jobs=n_jobs)
            order = pruning["order"]
        if progress and isinstance(ev, TimingEvaluator):
            n_runs = sum(len(v) for v in study.workloads.values()) * ev.seeds
            import sys

            print(f"wafer tune: each configuration is validated {n_runs} times ({ev.seeds} seeds x "
                  f"{n_runs // ev.seeds} traces), "
                  + ("on its whole drive, preconditioned (the first of each drive takes ~30 s; "
                     "then it is reused)" if ev.whole_drive else "on a device sized to the run")
                  + f"; arrival {ev.arrival}", file=sys.stderr)
        bar = Progress(max_iterations, f"wafer tune {name}", enabled=progress, unit="iterations")

        def tick(p: dict[str, Any]) -> None:
            bar.update(p["iteration"])

        steps_t0 = time.perf_counter()
        out = tune(study, adb, ev, preset, order=order or default_order(params), jobs=n_jobs, backend=backend,
                   address=address, progress=tick)
        bar.close()
        steps = len(out.history)
        metrics = {"reference": _mean_metrics(adb, out.reference_id, tgt),
                   "tuned": _mean_metrics(adb, out.best_id, tgt)}
        finished[name] = {"config_id": out.best_id, "scores": out.scores, "reference": reference,
                          "metrics": metrics, "search": study.search_id()}
        adb.set_meta("finished", finished)
        validations = adb.count()
        return TuneReport(target=", ".join(tgt), cluster=name, reference=reference, best=out.best,
                          reference_params=S.reference(), scores=out.scores, metrics=metrics, history=out.history,
                          groups=out.groups, stopped=out.stopped, from_database=False, classification=cls,
                          preset=adb.config(out.best_id)["preset"], seconds=time.perf_counter() - t0,
                          seconds_per_validation=out.seconds_per_validation,
                          seconds_per_step=(time.perf_counter() - steps_t0) / steps if steps else None,
                          validations=validations, pruning=pruning,
                          constraints={"name": cons.name, "power_watts": cons.power_watts,
                                       "power_ratio": cons.power_ratio, "dram_bytes": cons.dram_bytes,
                                       "held": cons.held()})
    finally:
        adb.close()


def _writes(spec: str) -> bool:
    """Whether a trace file or workload spec writes anything."""
    from .. import _core

    if os.path.exists(spec):
        ops = _core.trace_columns(str(spec), None, None)[3]
    else:
        ops = _core.workload_requests(spec, 1 << 16, 4096, 4096, 1)[3]
    ops = np.frombuffer(ops, dtype=np.uint8) if isinstance(ops, (bytes, bytearray)) else np.asarray(ops)
    return bool((ops == 1).any())


def power_of(budget: float | str | None, reference: str | None = None) -> dict[str, float | None]:
    """``--power-budget``: watts (``12``, ``"12W"``), a share over the
    reference's power on the same trace (``"+10%"``, the default), or
    ``"none"``. A budget in watts below the ``reference`` preset's idle
    power (its chips, DRAM and controller at rest) can admit nothing."""
    if budget is None or (isinstance(budget, str) and budget.strip().lower() == "none"):
        return {"power_watts": None, "power_ratio": None}
    if isinstance(budget, str) and budget.strip().endswith("%"):
        try:
            pct = float(budget.strip().rstrip("%"))
        except ValueError:
            raise ValueError(f"--power-budget {budget}: a share is like +10%") from None
        if not (math.isfinite(pct) and pct > -100):
            raise ValueError(f"--power-budget {budget}: the share must be above -100%")
        return {"power_watts": None, "power_ratio": 1 + pct / 100}
    try:
        watts = float(str(budget).strip().rstrip("Ww"))
    except ValueError:
        raise ValueError(f"--power-budget {budget}: watts (12), a share (+10%) or none") from None
    if not (math.isfinite(watts) and watts > 0):
        raise ValueError(f"--power-budget {budget}: watts must be > 0")
    if reference is not None:
        from .. import api

        ssd = api.timing_config(reference)
        e, f = ssd["energy"], ssd["flash"]
        idle = (f["channels"] * f["chips_per_channel"] * e["idle_mw_per_chip"] + e["dram_mw"]
                + e["controller_mw"]) / 1000
        if watts < idle:
            raise ValueError(f"--power-budget {budget}: below {reference}'s idle power of {idle:.2f} W (its chips, "
                             "DRAM and controller at rest): no configuration could meet it")
    return {"power_watts": watts, "power_ratio": None}


def _mean_metrics(adb: AutoDB, cid: int, traces: list[str]) -> dict[str, Any]:
    rows = [adb.validation(cid, t) for t in traces]
    rows = [r for r in rows if r and r["status"] == "ok"]
    if not rows:
        return {}
    keys = ("latency_us", "throughput_bps", "energy_j", "power_w", "p99_us", "endurance")
    return {k: float(np.mean([r[k] for r in rows])) for k in keys if all(r.get(k) is not None for r in rows)}
