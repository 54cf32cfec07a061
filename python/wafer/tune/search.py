"""AutoBlox's search (§3.3-§3.4): pruning, tuning order, and the loop of
grading, neighbour expansion, Gaussian-process choice and validation.

The loop, per tuning group (§3.3's order: the chip layout together, the two
DRAM sizes together, then the other parameters by sensitivity):

1. **Root**: one of the three best graded configurations whose non-target
   latency and throughput speedups are both at least 0.9, at random.
2. **Neighbours** of the root over the group's parameters, repaired to the
   constraints (:func:`wafer.tune.space.neighbours`); configurations already
   validated or rejected are left out, and so is any farther than the
   Manhattan bound (5 index steps) from every validated one (§3.4).
3. **GPR** (scikit-learn; the artifact's kernel 1e3·RBF(10) + 1e3·RQ(1, 1) +
   White(1e3), a constant mean via ``normalize_y``) fitted on every validated
   configuration's grade picks the candidate with the best upper confidence
   bound μ + 8σ (ties within 5% at random).
4. **Validation**: the candidate runs on every trace of the target category
   and of the others (in parallel), is graded by Eq. 2, and goes into AutoDB.
   A run over the power budget is rejected.
5. The group ends after ``max(15, 4·|group|)`` iterations without a 1% gain
   or once more than 20 configurations are within 1% of the best; the search
   ends after the last group or ``max_iterations``.

Deviations: every trace of each category is validated (wafer's validations
take seconds, so the artifact's one-new-trace-per-iteration sampling is not
needed); the neighbour step is ±1 value index (the artifact's window test is
always true, so it takes any value); the Manhattan bound the artifact left
as a TODO is applied. A killed search resumes from AutoDB: its validated
configurations and the steps taken are read back, and every random choice
is seeded by (seed, iteration), so the resumed search continues as the
uninterrupted one would.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import objective as G
from . import space as S
from .autodb import AutoDB

#: Manhattan bound on exploration (§3.4).
MANHATTAN = 5
#: UCB exploration weight (the artifact's ``var_coeff``).
KAPPA = 8.0

Evaluator = Callable[[dict[str, Any], str], dict[str, Any]]


@dataclass
class Study:
    """What to tune for: the ``target`` category and the traces (paths or
    workload specs) of every category, the constraints, the objective's
    weights, and the budget."""

    target: str
    workloads: dict[str, list[str]]
    constraints: S.Constraints = field(default_factory=S.Constraints)
    alpha: float = G.ALPHA
    beta: float = G.BETA
    max_iterations: int = 100
    seed: int = 1
    #: Stop as soon as the target's latency (or throughput) speedup reaches this (what-if, §4.5).
    goal: tuple[str, float] | None = None
    params: tuple[S.Param, ...] = S.PARAMS
    #: ``--objective``'s terms and weights instead of Eq. 1's alpha (:func:`.objective.parse_objective`).
    objective: dict[str, float] | None = None
    #: The evaluator's key (its settings; :meth:`AutoDB` scopes validations by it).
    evaluator: str = ""
    #: Anything else that changes the search (the tuning order, pruning).
    extra: dict[str, Any] = field(default_factory=dict)

    def search_id(self) -> str:
        """The key of this search in AutoDB: every setting that changes what
        the search does or finds (a what-if flag included), so a cached
        answer is never one found under other settings."""
        d = json.dumps({"target": self.target, "workloads": self.workloads, "alpha": self.alpha,
                        "beta": self.beta, "constraints": self.constraints.__dict__, "seed": self.seed,
                        "objective": self.objective,
                        "goal": self.goal, "max_iterations": self.max_iterations, "evaluator": self.evaluator,
                        "params": [[p.name, list(p.values)] for p in self.params], "extra": self.extra},
                       sort_keys=True, default=str)
        return f"{self.target}:{hashlib.sha1(d.encode()).hexdigest()[:12]}"


class Validator:
    """Runs configurations on the study's traces (in parallel), keeps every
    result in AutoDB and grades them against the reference."""

    def __init__(self, study: Study, db: AutoDB, evaluate: Evaluator, preset: Callable[[dict], str],
                 jobs: int = 1, backend: str = "local", address: str | None = None):
        self.study, self.db, self.evaluate, self.preset = study, db, evaluate, preset
        self.jobs, self.backend, self.address = jobs, backend, address
        db.evaluator = evaluator_key(evaluate)
        self.reference = S.reference()
        self.seconds: list[float] = []

    def _pending(self, cid: int) -> list[tuple[str, str]]:
        return [(cat, t) for cat, traces in self.study.workloads.items() for t in traces
                if self.db.validation(cid, t) is None]

    def run(self, c: dict[str, Any]) -> int:
        """Validate ``c`` on every trace it has not run yet; returns its id."""
        cid = self.db.config_id(S.key(c), c, self.preset(c))
        todo = self._pending(cid)
        t0 = time.perf_counter()
        ref_id = None if c == self.reference else self.db.config_id(S.key(self.reference), self.reference,
                                                                      self.preset(self.reference))
        for (cat, trace), (status, metrics, error, secs) in zip(todo, self._map(c, [t for _, t in todo])):
            if status == "ok":
                ref = self.db.validation(ref_id, trace) if ref_id is not None else None
                why = self.study.constraints.power_violation(metrics.get("power_w"), (ref or {}).get("power_w"))
                if why:
                    status, error = "invalid", why
            self.db.record(cid, cat, trace, status, metrics, error, secs)
        if todo:
            self.seconds.append(time.perf_counter() - t0)
        return cid

    def _map(self, c: dict[str, Any], traces: list[str]) -> list[tuple]:
        if self.backend == "ray":
            import ray

            if not ray.is_initialized():
                ray.init(address=self.address, ignore_reinit_error=True, log_to_driver=False)
            task = ray.remote(_validate_one)
            return ray.get([task.remote(self.evaluate, c, t) for t in traces])
        if self.jobs <= 1 or len(traces) <= 1:
            return [_validate_one(self.evaluate, c, t) for t in traces]
        with ProcessPoolExecutor(max_workers=min(self.jobs, len(traces))) as pool:
            return list(pool.map(_validate_one, [self.evaluate] * len(traces), [c] * len(traces), traces))

    def scores(self, cid: int, ref: int) -> dict[str, Any] | None:
        """Grade and speedups of a validated configuration against the
        reference, or None if it was rejected on any trace.

        Besides the grade of the mean metrics (Eq. 2): the grade of each
        seed's runs against the reference's runs of the same seed, their
        95% interval (``grade_ci95``), the reference's own spread (its
        seeds graded against its mean), and ``significant``: the interval
        is above 0 and the grade above that spread (never with one seed).
        ``flagged`` lists why the validation does not count (writes that
        never reached flash; a write-heavy category on which GC never ran)."""
        runs_of: dict[str, list[tuple[dict, dict]]] = {}
        for cat, traces in self.study.workloads.items():
            runs = []
            for t in traces:
                a, b = self.db.validation(cid, t), self.db.validation(ref, t)
                if a is None or b is None or a["status"] != "ok" or b["status"] != "ok":
                    return None
                runs.append((a, b))
            runs_of[cat] = runs
        target, alpha, beta = self.study.target, self.study.alpha, self.study.beta
        others = [cat for cat in runs_of if cat != target]

        terms = self.study.objective

        def graded(pairs: dict[str, list[tuple[dict, dict]]]) -> tuple[float, dict[str, tuple[float, float]]]:
            sp = {cat: G.speedups(r) for cat, r in pairs.items()}
            if terms:
                perf = {cat: G.weighted(G.ratios(r, terms), terms) for cat, r in pairs.items()}
            else:
                perf = {cat: G.performance(lat, thpt, alpha) for cat, (lat, thpt) in sp.items()}
            return G.grade(perf[target], [perf[o] for o in others], beta), sp

        grade, per_cat = graded(runs_of)
        n = min(len(x["samples"] or [x]) for runs in runs_of.values() for pair in runs for x in pair)
        seed_grades = [graded({cat: [(_sample(a, k), _sample(b, k)) for a, b in runs]
                               for cat, runs in runs_of.items()})[0] for k in range(n)]
        ref_grades = [graded({cat: [(_sample(b, k), b) for _, b in runs] for cat, runs in runs_of.items()})[0]
                      for k in range(n)]
        lo, hi = G.interval(seed_grades)
        spread = G.half_width(ref_grades)
        flagged = []
        for cat, runs in runs_of.items():
            for (a, _), t in zip(runs, self.study.workloads[cat]):
                if a.get("flash_programs") == 0 and (a.get("write_share") or 0) > 0:
                    flagged.append(f"{t}: its writes never reached flash (all stayed in the cache)")
                elif a.get("gc_ran") is False and (a.get("write_share") or 0) >= 0.5:
                    flagged.append(f"{t}: GC never ran on a write-heavy trace (the drive was not in steady state)")
        non_lat = G.geomean(per_cat[o][0] for o in others) if others else 1.0
        non_thpt = G.geomean(per_cat[o][1] for o in others) if others else 1.0
        tgt_runs = [a for a, _ in runs_of[target]]
        return {
            "grade": grade,
            "grade_ci95": [lo, hi],
            "seeds": n,
            "reference_spread": spread,
            "significant": bool(n >= 2 and lo > 0 and grade > spread and not flagged),
            "flagged": flagged,
            "validation": {"flash_programs": sum(a.get("flash_programs") or 0 for a in tgt_runs),
                           "gc_ran": all(a.get("gc_ran") is not False for a in tgt_runs)},
            "target_latency_speedup": per_cat[target][0],
            "target_throughput_speedup": per_cat[target][1],
            "nontarget_latency_speedup": non_lat,
            "nontarget_throughput_speedup": non_thpt,
            "per_category": {k: {"latency_speedup": v[0], "throughput_speedup": v[1]} for k, v in per_cat.items()},
            "target_gains": _gains(runs_of[target]),
        }


def _gains(runs: list[tuple[dict, dict]]) -> dict[str, float]:
    """Every objective term's gain on these runs that the validations report."""
    out = {}
    for name, (key, _) in G.TERMS.items():
        if all(c.get(key) is not None and r.get(key) is not None for c, r in runs):
            out[name] = G.ratios(runs, {name: 1.0})[name]
    return out


def _sample(m: dict[str, Any], k: int) -> dict[str, Any]:
    """Seed ``k``'s metrics of a validation (the validation itself when it has one seed)."""
    return m["samples"][k] if m.get("samples") else m


def evaluator_key(evaluate: Evaluator) -> str:
    """The key AutoDB scopes an evaluator's validations by: its own
    ``key()``, else its qualified name (a plain function)."""
    key = getattr(evaluate, "key", None)
    if callable(key):
        return str(key())
    return f"{getattr(evaluate, '__module__', '')}.{getattr(evaluate, '__qualname__', type(evaluate).__name__)}"


def _validate_one(evaluate: Evaluator, c: dict[str, Any], trace: str) -> tuple:
    """(status, metrics, error, seconds) of one run; a failure is a result."""
    t0 = time.perf_counter()
    try:
        m = evaluate(c, trace)
        return "ok", m, None, time.perf_counter() - t0
    except Exception as e:  # a configuration the simulator refuses is recorded, not fatal
        return "crashed", {}, f"{type(e).__name__}: {e}", time.perf_counter() - t0


def default_order(params: tuple[S.Param, ...] = S.PARAMS) -> list[list[str]]:
    """The tuning order without pruning data: layout, DRAM, then the rest."""
    rest = [[p.name] for p in params if not p.pruned and p.group == ""]
    return [list(S.LAYOUT), list(S.DRAM)] + rest


def _gpr(seed: int):
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, RationalQuadratic, WhiteKernel

    b = (1e-20, 1e10)
    kernel = (ConstantKernel(1e3, b) * RBF(10.0, b) + ConstantKernel(1e3, b) * RationalQuadratic(1.0, 1.0, b, b)
              + WhiteKernel(1e3, b))
    return GaussianProcessRegressor(kernel=kernel, normalize_y=True, random_state=seed)


def pick(candidates: list[dict[str, Any]], seen: list[tuple[dict[str, Any], float]], rng: random.Random,
         seed: int, params: tuple[S.Param, ...] = S.PARAMS) -> dict[str, Any]:
    """The candidate with the best upper confidence bound under a GP fitted
    on the validated configurations (``seen``: config, grade)."""
    if len(seen) < 2:
        return rng.choice(candidates)
    x = np.array([S.encode(c, params) for c, _ in seen])
    y = np.array([g for _, g in seen])
    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings():
        # The paper's kernel bounds are wide; with few points the optimiser
        # ends on one of them, which is expected and says nothing to a user.
        warnings.simplefilter("ignore", ConvergenceWarning)
        gp = _gpr(seed).fit(x, y)
    mu, sd = gp.predict(np.array([S.encode(c, params) for c in candidates]), return_std=True)
    ucb = mu + KAPPA * sd
    best = ucb.max()
    band = 0.05 * abs(best) if best != 0 else 1e-12
    ties = [c for c, u in zip(candidates, ucb) if u >= best - band]
    return rng.choice(ties)


@dataclass
class Outcome:
    """What a search found."""

    best: dict[str, Any]
    best_id: int
    scores: dict[str, Any]
    reference_id: int
    history: list[dict[str, Any]]
    groups: list[list[str]]
    stopped: str
    seconds_per_validation: float | None


def tune(study: Study, db: AutoDB, evaluate: Evaluator, preset: Callable[[dict], str], *,
         order: list[list[str]] | None = None, jobs: int = 1, backend: str = "local", address: str | None = None,
         progress: Callable[[dict[str, Any]], None] | None = None) -> Outcome:
    """Run (or resume) the search of ``study``; every validation goes to ``db``."""
    cons = study.constraints
    groups = order or default_order(study.params)
    val = Validator(study, db, evaluate, preset, jobs, backend, address)
    ref = val.run(val.reference)
    if val.scores(ref, ref) is None:
        errors = {t: (db.validation(ref, t) or {}).get("error") for ts in study.workloads.values() for t in ts}
        hint = ""
        if any(e and "over-provisioning too small" in e for e in errors.values()):
            # The engine's advice names replay flags; what helps here is a bigger device.
            hint = (" (the device is too small for the reference's superblocks: give a synthetic workload more "
                    "--logical-blocks, or a trace that touches more blocks)")
        raise ValueError("the reference configuration failed its own validation: "
                         + "; ".join(f"{t}: {e}" for t, e in errors.items() if e) + hint)
    sid = study.search_id()
    hist = db.iterations(sid)
    explored: dict[int, dict[str, Any]] = {ref: val.reference}
    graded: dict[int, dict[str, Any]] = {ref: val.scores(ref, ref)}
    for h in hist:
        c = db.config(h["config_id"])["params"]
        explored[h["config_id"]] = c
        s = val.scores(h["config_id"], ref)
        if s is not None:
            graded[h["config_id"]] = s
    n = len(hist)
    g_idx = hist[-1]["group"] if hist else 0
    stall = hist[-1]["stall"] if hist else 0
    best_grade = max(s["grade"] for c, s in graded.items() if c == ref or not s["flagged"])
    stopped = "iteration cap"
    while n < study.max_iterations:
        if g_idx >= len(groups):
            stopped = "every tuning group converged"
            break
        if _goal_met(study, graded):
            stopped = "goal reached"
            break
        group = groups[g_idx]
        rng = random.Random(f"{study.seed}:{n}")
        eligible = [(cid, s) for cid, s in graded.items() if not s["flagged"]
                    if s["nontarget_latency_speedup"] >= 0.9 and s["nontarget_throughput_speedup"] >= 0.9]
        top = sorted(eligible or graded.items(), key=lambda kv: -kv[1]["grade"])[:3]
        root = explored[rng.choice(top)[0]]
        rejected = db.rejected()
        seen_keys = {S.key(c) for c in explored.values()}
        cands = [c for c in S.neighbours(root, group, cons, study.params) if S.key(c) not in seen_keys]
        cands = [c for c in cands if min(S.distance(c, e, study.params) for e in explored.values()) <= MANHATTAN]
        if not cands:
            g_idx, stall = g_idx + 1, 0
            continue
        choice = pick(cands, [(explored[c], s["grade"]) for c, s in graded.items()], rng, study.seed + n,
                      study.params)
        cid = val.run(choice)
        explored[cid] = choice
        s = None if cid in rejected else val.scores(cid, ref)
        if s is not None:
            graded[cid] = s
        # A flagged validation (writes that never reached flash, no GC on a
        # write-heavy trace) never counts as a gain.
        counts = s is not None and not s["flagged"]
        improved = counts and s["grade"] > best_grade + 0.01 * abs(best_grade)
        if counts:
            best_grade = max(best_grade, s["grade"])
        stall = 0 if improved else stall + 1
        near = sum(1 for x in graded.values() if x["grade"] >= best_grade - 0.01 * abs(best_grade))
        db.add_iteration(sid, n, cid, s["grade"] if s else None, g_idx, stall)
        n += 1
        if progress:
            progress({"iteration": n, "group": g_idx, "groups": len(groups), "grade": s["grade"] if s else None,
                      "best": best_grade, "stall": stall})
        if stall > max(15, 4 * len(group)) or near > 20:
            g_idx, stall = g_idx + 1, 0
    fair = {cid: s for cid, s in graded.items() if cid == ref or not s["flagged"]}
    final = [(cid, s) for cid, s in fair.items()
             if s["nontarget_latency_speedup"] >= 1.0 and s["nontarget_throughput_speedup"] >= 1.0] or \
        list(fair.items())
    best_id, best_scores = max(final, key=lambda kv: kv[1]["grade"])
    sec = sum(val.seconds) / len(val.seconds) if val.seconds else None
    return Outcome(best=explored[best_id], best_id=best_id, scores=best_scores, reference_id=ref,
                   history=db.iterations(sid), groups=groups, stopped=stopped, seconds_per_validation=sec)


def _goal_met(study: Study, graded: dict[int, dict[str, Any]]) -> bool:
    if study.goal is None:
        return False
    what, factor = study.goal
    k = "target_latency_speedup" if what == "latency" else "target_throughput_speedup"
    return any(s[k] >= factor for s in graded.values())


def prune(study: Study, db: AutoDB, evaluate: Evaluator, preset: Callable[[dict], str], *, jobs: int = 1,
          threshold: float = 0.001, join: float = 0.5) -> dict[str, Any]:
    """Coarse and Ridge-based fine pruning (§3.3) on the target category.

    Each numeric parameter is swept alone over five values spread across its
    list (up to 16x the reference, constraints ignored as the paper does),
    each boolean and categorical over all its values; the score of a point is
    log(lat_speedup^0.9 · thpt_speedup^0.1) (the artifact's weights). A 1-D
    Ridge fit of score against value index gives a numeric parameter's
    sensitivity (|slope|); a boolean's or categorical's is the range of its
    scores. Parameters under ``threshold`` are pruned. The tuning order:
    the layout and DRAM groups first, then the kept parameters by
    sensitivity, a parameter joining the group before it when its
    sensitivity is at least ``join`` times that group's."""
    from sklearn.linear_model import Ridge

    target = Study(**{**study.__dict__, "workloads": {study.target: study.workloads[study.target]}})
    val = Validator(target, db, evaluate, preset, jobs)
    ref = val.run(val.reference)
    sens: dict[str, float] = {}
    for p in study.params:
        if p.group or p.pruned:
            continue
        if p.kind in ("continuous", "discrete"):
            idx = sorted({round(k * (len(p.values) - 1) / 4) for k in range(5)})
        else:
            idx = list(range(len(p.values)))
        xs, ys = [], []
        for i in idx:
            c = dict(val.reference, **{p.name: p.values[i]})
            s = val.scores(val.run(c), ref)
            if s is None:
                continue
            lat, thpt = s["target_latency_speedup"], s["target_throughput_speedup"]
            xs.append(i)
            ys.append(0.9 * math.log(lat) + 0.1 * math.log(thpt))
        if len(ys) < 2:
            sens[p.name] = 0.0
        elif p.kind in ("continuous", "discrete"):
            sens[p.name] = abs(float(Ridge(alpha=1.0).fit(np.array(xs)[:, None], ys).coef_[0]))
        else:
            sens[p.name] = float(max(ys) - min(ys))
    kept = sorted((n for n, v in sens.items() if v >= threshold), key=lambda n: -sens[n])
    order: list[list[str]] = [list(S.LAYOUT), list(S.DRAM)]
    lead = None
    for name in kept:
        if lead is not None and sens[name] >= join * sens[lead] and len(order) > 2:
            order[-1].append(name)
        else:
            order.append([name])
            lead = name
    return {"sensitivity": sens, "kept": kept, "pruned": sorted(set(sens) - set(kept)) +
            [p.name for p in study.params if p.pruned], "order": order}
