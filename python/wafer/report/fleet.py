"""Per-volume results of a fleet study (issue 47 item 6): when a report's
runs are the volumes of multi-volume traces (workloads labelled
``FILE#ID``, as ``volumes = ...`` in a study makes them), the distribution
of WAF over volumes per policy, the share of volumes on which one policy
beats another (with a 95% Wilson interval), the volumes on which the
policies disagree most, and a table of every volume's figures.

Means over volumes are given both ways and labelled: unweighted (each
volume counts once, as SepBIT's and MiDAS's per-volume CDFs count them)
and write-weighted (Σ (user + GC) / Σ user writes: the fleet's own WAF)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

#: Fewest volumes a fleet section is drawn for.
MIN_VOLUMES = 2


@dataclass
class Fleet:
    """``volumes``: one row per volume x policy (``volume``, ``policy``,
    ``waf``, ``user_writes``, ``gc_writes``); ``summary``: one row per
    policy (volumes, unweighted and write-weighted mean WAF, median, p90);
    ``pairs``: one row per ordered pair (``a``, ``b``, volumes where a's WAF
    is lower, share, 95% interval); ``disagree``: the volumes where the
    policies' WAF differ most (max / min)."""

    volumes: Any
    summary: Any
    pairs: Any
    disagree: Any


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a share k / n."""
    if n == 0:
        return (math.nan, math.nan)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def of(runs) -> Fleet | None:
    """The fleet tables of a report's runs, or None when they are no fleet
    (fewer than :data:`MIN_VOLUMES` volumes ``FILE#ID`` of finished runs)."""
    import pandas as pd

    r = runs[(runs.status == "done") & runs.workload.astype(str).str.contains("#")] if "status" in runs else runs
    if r.empty:
        return None
    r = r.assign(volume=r.workload.astype(str))
    # The first seed of each volume x policy (seeds are a separate question).
    if "seed" in r:
        r = r.sort_values("seed").drop_duplicates(["volume", "policy"])
    if r.volume.nunique() < MIN_VOLUMES:
        return None
    vols = r[["volume", "policy", "waf", "user_writes", "gc_writes"]].reset_index(drop=True)
    rows = []
    for p, g in vols.groupby("policy", sort=False):
        w = g.waf.dropna()
        rows.append({"policy": p, "volumes": len(g), "mean_waf_unweighted": float(w.mean()),
                     "mean_waf_write_weighted": float((g.user_writes + g.gc_writes).sum() / g.user_writes.sum())
                     if g.user_writes.sum() > 0 else math.nan,
                     "median_waf": float(w.median()), "p90_waf": float(w.quantile(0.9))})
    summary = pd.DataFrame(rows)
    wide = vols.pivot_table(index="volume", columns="policy", values="waf")
    pairs = []
    names = list(summary.policy)
    for a in names:
        for b in names:
            if a == b:
                continue
            both = wide[[a, b]].dropna()
            k, n = int((both[a] < both[b]).sum()), len(both)
            lo, hi = wilson(k, n)
            pairs.append({"a": a, "b": b, "volumes": n, "a_lower": k, "share": k / n if n else math.nan,
                          "ci95_low": lo, "ci95_high": hi})
    spread = (wide.max(axis=1) / wide.min(axis=1)).rename("max_over_min").reset_index()
    disagree = spread.sort_values("max_over_min", ascending=False).head(10)
    return Fleet(volumes=vols, summary=summary, pairs=pd.DataFrame(pairs), disagree=disagree)


def cdf_figure(f: Fleet, styles: dict[str, dict[str, Any]]):
    """WAF over the fleet's volumes, one CDF per policy (plotly)."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for p, g in f.volumes.groupby("policy", sort=False):
        w = sorted(g.waf.dropna())
        s = styles.get(p, {})
        fig.add_trace(go.Scatter(x=w, y=[(i + 1) / len(w) for i in range(len(w))], mode="lines",
                                 line=dict(shape="hv", color=s.get("color"), dash=s.get("dash")), name=p))
    fig.update_layout(template="plotly_white", height=420, title="WAF over the volumes (CDF, first seed)",
                      xaxis_title="WAF of a volume", yaxis_title="share of volumes")
    return fig


def box_figure(f: Fleet, styles: dict[str, dict[str, Any]]):
    """WAF over the fleet's volumes, one box per policy (median, quartiles, whiskers at 1.5 IQR, the
    volumes beyond them as points; plotly)."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for p, g in f.volumes.groupby("policy", sort=False):
        fig.add_trace(go.Box(y=g.waf.dropna(), name=p, boxpoints="outliers",
                             marker_color=styles.get(p, {}).get("color"),
                             text=g.volume, hovertemplate="%{text}: WAF %{y:.3f}<extra></extra>"))
    fig.update_layout(template="plotly_white", height=420, showlegend=False,
                      title="WAF over the volumes (box per policy, first seed)", yaxis_title="WAF of a volume")
    return fig


def table_figure(f: Fleet):
    """Per policy: unweighted and write-weighted means, median, p90; the
    pairwise shares with their intervals (a plotly table)."""
    import plotly.graph_objects as go

    s = f.summary
    head = ["policy", "volumes", "mean WAF (unweighted)", "mean WAF (write-weighted)", "median", "p90"]
    cells = [s.policy, s.volumes] + [[f"{x:.3f}" for x in s[c]] for c in
                                     ("mean_waf_unweighted", "mean_waf_write_weighted", "median_waf", "p90_waf")]
    fig = go.Figure(go.Table(header=dict(values=head), cells=dict(values=cells)))
    fig.update_layout(height=120 + 30 * len(s), margin=dict(l=10, r=10, t=40, b=10),
                      title="Per policy over the volumes")
    return fig


def pairs_figure(f: Fleet):
    """The share of volumes on which A's WAF is below B's, with its 95% interval."""
    import plotly.graph_objects as go

    p = f.pairs
    text = [f"{k}/{n} = {s:.0%} [{lo:.0%}, {hi:.0%}]" for k, n, s, lo, hi in
            zip(p.a_lower, p.volumes, p.share, p.ci95_low, p.ci95_high)]
    fig = go.Figure(go.Table(header=dict(values=["A", "B", "volumes where A's WAF < B's (95% Wilson interval)"]),
                             cells=dict(values=[p.a, p.b, text])))
    fig.update_layout(height=120 + 24 * len(p), margin=dict(l=10, r=10, t=40, b=10),
                      title="Which policy wins on how many volumes")
    return fig


def disagree_figure(f: Fleet):
    """The volumes on which the policies' WAF differ most (largest max / min)."""
    import plotly.graph_objects as go

    d = f.disagree
    wide = f.volumes.pivot_table(index="volume", columns="policy", values="waf")
    cols = list(wide.columns)
    rows = wide.loc[d.volume]
    fig = go.Figure(go.Table(header=dict(values=["volume", "max / min WAF", *cols]),
                             cells=dict(values=[d.volume, [f"{x:.3f}" for x in d.max_over_min],
                                                *[[f"{x:.3f}" for x in rows[c]] for c in cols]])))
    fig.update_layout(height=120 + 24 * len(d), margin=dict(l=10, r=10, t=40, b=10),
                      title="Volumes where the policies disagree most")
    return fig
