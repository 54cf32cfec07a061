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
