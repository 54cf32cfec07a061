"""AutoBlox's objective (§3.4, Eq. 1 and Eq. 2).

Performance of configuration c on workload category W, against the
reference SSD on the same traces::

    Perf_W(c) = (1 - alpha) * log(Lat_ref / Lat_c) + alpha * log(Thpt_c / Thpt_ref)     (Eq. 1)

with each ratio the geometric mean over the category's traces, and the grade
that also looks at the other categories::

    Grade_W(c) = (1 - beta) * Perf_W(c) + beta * mean_{W' != W} Perf_W'(c)             (Eq. 2)

alpha = 0.5 and beta = 0.1 are the paper's defaults (Figs. 11-12). Latency is
the mean device response time and throughput the bandwidth, as MQSim
reports them; a ``target`` of ``"latency"`` or ``"throughput"`` sets alpha to 0
or 1.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

ALPHA = 0.5
BETA = 0.1


def geomean(xs: Iterable[float]) -> float:
    xs = list(xs)
    if not xs or any(x <= 0 for x in xs):
        raise ValueError(f"a geometric mean needs positive values, got {xs}")
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def speedups(runs: list[tuple[dict, dict]]) -> tuple[float, float]:
    """Geomean latency speedup (ref / c) and throughput speedup (c / ref) over
    ``(candidate, reference)`` metric pairs of one category's traces."""
    lat = geomean(r["latency_us"] / c["latency_us"] for c, r in runs)
    thpt = geomean(c["throughput_bps"] / r["throughput_bps"] for c, r in runs)
    return lat, thpt


#: ``--objective`` terms: metric of a validation, and whether higher is better.
TERMS: dict[str, tuple[str, bool]] = {
    "latency": ("latency_us", False),
    "read_latency": ("read_latency_us", False),
    "write_latency": ("write_latency_us", False),
    "p99": ("p99_us", False),
    "throughput": ("throughput_bps", True),
    "endurance": ("endurance", False),
}


def parse_objective(spec: str | dict[str, float] | None) -> dict[str, float] | None:
    """``--objective``: terms with weights (``latency=0.25,p99=0.25,
    throughput=0.5``), or names alone (equal weights); the weights are
    normalised to sum 1. None: Eq. 1 (alpha)."""
    if spec is None or spec == "":
        return None
    items = spec.items() if isinstance(spec, dict) else (
        (p.partition("=")[0].strip(), p.partition("=")[2].strip() or "1") for p in str(spec).split(","))
    out: dict[str, float] = {}
    for name, w in items:
        if name not in TERMS:
            raise ValueError(f"--objective: '{name}' is not a term; terms: {', '.join(TERMS)}")
        try:
            w = float(w)
        except ValueError:
            raise ValueError(f"--objective: {name}={w}: the weight is not a number") from None
        if not (math.isfinite(w) and w >= 0):
            raise ValueError(f"--objective: {name}={w}: a weight is a finite number >= 0")
        out[name] = out.get(name, 0.0) + w
    total = sum(out.values())
    if total <= 0:
        raise ValueError("--objective: every weight is 0")
    return {k: v / total for k, v in out.items() if v > 0}


def ratios(runs: list[tuple[dict, dict]], terms: dict[str, float]) -> dict[str, float]:
    """Each term's geomean gain over ``(candidate, reference)`` pairs (> 1: better)."""
    out = {}
    for name in terms:
        key, higher = TERMS[name]
        if any(c.get(key) is None or r.get(key) is None for c, r in runs):
            raise ValueError(f"--objective {name}: the validations do not report {key}")
        # A metric at 0 on both sides (no erase at all) is no change.
        out[name] = geomean((c[key] / r[key] if higher else r[key] / c[key]) if c[key] and r[key] else 1.0
                            for c, r in runs)
    return out


def weighted(gains: dict[str, float], terms: dict[str, float]) -> float:
    """Eq. 1 over the objective's terms: sum of weight x log(gain)."""
    return sum(w * math.log(gains[k]) for k, w in terms.items())


def performance(lat_speedup: float, thpt_speedup: float, alpha: float = ALPHA) -> float:
    """Eq. 1."""
    return (1 - alpha) * math.log(lat_speedup) + alpha * math.log(thpt_speedup)


def grade(target: float, others: list[float], beta: float = BETA) -> float:
    """Eq. 2: the target category's performance and the others' mean."""
    if not others:
        return target
    return (1 - beta) * target + beta * sum(others) / len(others)


def alpha_for(target: str | None, alpha: float = ALPHA) -> float:
    """alpha for an optimisation target: latency only (0), throughput only (1), or the balance."""
    return {"latency": 0.0, "throughput": 1.0, None: alpha, "balanced": alpha}[target]


def half_width(xs: list[float]) -> float:
    """Half the width of the 95% t-interval of the mean of ``xs`` (0 for one value)."""
    if len(xs) < 2:
        return 0.0
    from scipy.stats import t

    sd = float(np.std(xs, ddof=1))
    return float(t.ppf(0.975, len(xs) - 1)) * sd / math.sqrt(len(xs))


def interval(xs: list[float]) -> tuple[float, float]:
    """The 95% t-interval of the mean of ``xs`` (a point for one value)."""
    m = float(np.mean(xs))
    h = half_width(xs)
    return m - h, m + h
