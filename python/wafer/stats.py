"""Means and 95% confidence intervals over seeds (Student's t), without scipy.

A sweep repeats every cell (workload x device x policy x victim) over a few
seeds; a figure or table shows the mean and the interval that holds the true
mean with 95% confidence if the seeds' results are roughly normal:
``mean +- t(0.975, n-1) * s / sqrt(n)``. One seed has no interval (NaN)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

# Two-sided 95% quantiles t(0.975, df) of Student's t distribution.
_T975 = {
    1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
    11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093,
    20: 2.086, 21: 2.080, 22: 2.074, 23: 2.069, 24: 2.064, 25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048,
    29: 2.045, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980,
}


def t975(df: int) -> float:
    """t(0.975, df); between tabulated degrees of freedom the smaller one's
    (wider, so conservative) value; 1.960 beyond 120."""
    if df < 1:
        return math.nan
    if df in _T975:
        return _T975[df]
    if df > 120:
        return 1.960
    return _T975[max(k for k in _T975 if k < df)]


def mean_interval(values: Iterable[float | None]) -> tuple[int, float, float]:
    """``(n, mean, half_width)`` of the finite values: the 95% interval is
    ``mean +- half_width`` (NaN for fewer than two values; mean NaN for none)."""
    xs = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    n = len(xs)
    if n == 0:
        return 0, math.nan, math.nan
    m = sum(xs) / n
    if n < 2:
        return n, m, math.nan
    s = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    return n, m, t975(n - 1) * s / math.sqrt(n)


def summarize(df, by: Sequence[str], value: str):
    """One row per group of ``by``: ``n``, ``mean``, ``half`` (95% half-width),
    ``lo``, ``hi`` of column ``value`` (a pandas DataFrame in, one out; groups
    keep their first-seen order)."""
    import pandas as pd

    rows = []
    for key, g in df.groupby(list(by), sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        n, m, h = mean_interval(g[value].tolist())
        rows.append({**dict(zip(by, key)), "n": n, "mean": m, "half": h,
                     "lo": m - h if n > 1 else m, "hi": m + h if n > 1 else m})
    return pd.DataFrame(rows, columns=[*by, "n", "mean", "half", "lo", "hi"])


def fmt_interval(mean: float, half: float, digits: int = 3) -> str:
    """``"3.412 ± 0.041"``, or the mean alone without an interval, ``"-"`` for NaN."""
    if mean is None or not math.isfinite(mean):
        return "-"
    if half is None or not math.isfinite(half):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {half:.{digits}f}"
