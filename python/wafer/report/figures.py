"""The interactive figures (plotly), one function per figure, each drawn
from its data as :mod:`wafer.report.prepare` makes it for both backends; a
function returns None when the runs have no data for its figure.

Panels: a figure shows one combination of workload, device, victim and
length at a time (a menu switches between them) or one panel per
combination (bars); lines are coloured by policy family and, when more than
eight policies share a panel, split into one column per family."""

from __future__ import annotations

import math
from typing import Any

from . import prepare
from .data import Tables

_LAYOUT = dict(template="plotly_white", margin=dict(l=60, r=20, t=70, b=50),
               legend=dict(groupclick="toggleitem", tracegroupgap=6), font=dict(size=12))


def _go():
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    return go, make_subplots


def _selector(fig, trace_panels: list[str], panels: list[str], what: str) -> None:
    """A menu choosing which panel's traces are visible (nothing with one panel)."""
    if len(panels) <= 1:
        return
    prefix = f"{what}: " if " · " not in what else ""
    buttons = [dict(label=prefix + p, method="restyle", args=[{"visible": [tp == p for tp in trace_panels]}])
               for p in panels]
    # Above the subplot titles, below the figure's title: 36 px over the plot area (call after the height is set).
    top, bottom = 105, _LAYOUT["margin"]["b"]
    plot = (fig.layout.height or 450) - top - bottom
    fig.update_layout(margin_t=top, updatemenus=[dict(buttons=buttons, direction="down", showactive=True, x=1.0,
                                                      xanchor="right", y=1 + 36 / plot, yanchor="bottom",
                                                      pad=dict(r=4, t=0, b=0))])


def _legend(styles: dict[str, dict[str, Any]], policy: str, show: bool = True) -> dict[str, Any]:
    """A legend entry in its family's group (every trace carries the group's
    title, so it shows whichever panel is visible)."""
    fam = styles[policy]["family"]
    return dict(name=policy, legendgroup=fam, legendgrouptitle_text=fam, showlegend=show)


def _height(t: Tables, base: int) -> int:
    """A figure's height [px]: ``base``, or more when the legend (policies and
    family titles) would not fit beside the plot."""
    return max(base, 190 + 21 * (len(t.policies) + t.runs.family.nunique()))


def _first(seen: set, *key: str) -> bool:
    """True the first time ``key`` is seen (one legend entry per policy and panel)."""
    if key in seen:
        return False
    seen.add(key)
    return True


def steady_waf(t: Tables):
    """Steady-state WAF per policy (mean over seeds, 95% t-interval), grouped
    by workload; one panel per device / victim / length combination."""
    import plotly.express as px

    b = prepare.steady_waf(t)
    if b is None:
        return None
    wrap = 1 if len(b.panels) == 1 else 2
    rows = math.ceil(len(b.panels) / wrap)
    fig = px.bar(b.cells, x="workload", y="mean", color="policy", barmode="group", error_y="half",
                 facet_col="panel" if len(b.panels) > 1 else None, facet_col_wrap=wrap if len(b.panels) > 1 else 0,
                 facet_row_spacing=min(0.12, 0.5 / rows), facet_col_spacing=0.05,
                 category_orders={"policy": t.policies, "panel": b.panels},
                 color_discrete_map={p: s["color"] for p, s in b.styles.items()},
                 hover_data={"n": True, "interval": True, "panel": False},
                 labels={"mean": b.label, "n": "seeds"})
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=", 1)[-1]))
    fig.update_layout(**_LAYOUT, height=120 + 320 * rows, legend_title_text="policy",
                      title=("Steady-state WAF" if b.metric == "steady_waf" else "WAF (warm-up never reached)")
                      + " per policy: mean over seeds, 95% interval")
    fig.update_yaxes(rangemode="tozero")
    return fig


def _line_figure(t: Tables, d: prepare.Lines, metric: str, hover: str, height: int, width: float = 2.0,
                 markers: bool = False):
    """One line per policy of ``d``'s ``metric``, a column per family if many, a menu over the panels."""
    go, make_subplots = _go()
    cols = d.columns
    fig = make_subplots(rows=1, cols=len(cols), shared_yaxes=True, horizontal_spacing=0.02,
                        subplot_titles=[c for c in cols] if cols[0] else None)
    traces, where, trace_panels = [], [], []
    for i, panel in enumerate(d.panels):
        for p in d.policies:
            line = d.get(panel, p, metric)
            if line is None:
                continue
            s = d.styles[p]
            traces.append(go.Scatter(x=line["x"], y=line[metric], mode="lines+markers" if markers else "lines",
                                     visible=i == 0, line=dict(color=s["color"], dash=s["dash"], width=width),
                                     marker=dict(size=5) if markers else None,
                                     hovertemplate=f"{p}<br>{hover}<extra></extra>", **_legend(d.styles, p)))
            where.append(d.column(p) + 1)
            trace_panels.append(panel)
    fig.add_traces(traces, rows=[1] * len(traces), cols=where)
    fig.update_layout(**_LAYOUT, height=_height(t, height))
    return fig, trace_panels


def over_time(t: Tables, metric: str = "waf", title: str | None = None, ylabel: str | None = None):
    """``metric`` per window against drive-writes, mean over seeds, one line
    per policy; a menu picks the workload / device / victim."""
    d = prepare.over_time(t, [metric])
    if d is None:
        return None
    fig, trace_panels = _line_figure(t, d, metric, "%{x:.2f} drive-writes<br>%{y:.3f}", 460)
    fig.update_layout(title=title or f"{metric} per window (mean over seeds)")
    _selector(fig, trace_panels, d.panels, d.title)
    fig.update_xaxes(title_text="drive-writes")
    fig.update_yaxes(title_text=ylabel or metric, col=1)
    return fig


def waf_over_time(t: Tables):
    """WAF within each window against drive-writes (the warm-up and the steady state)."""
    return over_time(t, "waf", "WAF within each window, mean over seeds", "WAF")


def accuracy(t: Tables):
    """Lifetime-prediction accuracy of user-written and GC-written blocks
    against drive-writes: since the start (top) and within each window
    (bottom), mean over seeds (runs with ``accuracy``)."""
    go, make_subplots = _go()
    d = prepare.accuracy(t)
    if d is None:
        return None
    kinds = [k for k in ("user", "gc") if f"cumulative_{k}_accuracy" in d.metrics]
    what = {"user": "user-written blocks", "gc": "GC-written blocks"}
    rows = [("cumulative_{}_accuracy", "since the start"), ("{}_accuracy", "within each window")]
    fig = make_subplots(rows=2, cols=len(kinds), shared_xaxes=True, shared_yaxes=True, horizontal_spacing=0.03,
                        vertical_spacing=0.1, subplot_titles=[f"{what[k]}, {when}" for _, when in rows for k in kinds])
    seen: set = set()
    traces, where, trace_panels = [], [], []
    for i, panel in enumerate(d.panels):
        for p in d.policies:
            for r, (col, _) in enumerate(rows):
                for j, k in enumerate(kinds):
                    c = col.format(k)
                    line = d.get(panel, p, c) if c in d.metrics else None
                    if line is None:
                        continue
                    s = d.styles[p]
                    traces.append(go.Scatter(x=line["x"], y=line[c], mode="lines", visible=i == 0,
                                             line=dict(color=s["color"], dash=s["dash"], width=1.8),
                                             hovertemplate=f"{p}<br>%{{x:.2f}} drive-writes<br>%{{y:.3f}}<extra></extra>",
                                             **_legend(d.styles, p, show=_first(seen, panel, p))))
                    where.append((r + 1, j + 1))
                    trace_panels.append(panel)
    if not traces:
        return None
    fig.add_traces(traces, rows=[r for r, _ in where], cols=[c for _, c in where])
    fig.update_layout(**_LAYOUT, height=640, title="Lifetime-prediction accuracy (share of predictions that were right)")
    _selector(fig, trace_panels, d.panels, d.title)
    fig.update_xaxes(title_text="drive-writes", row=2)
    fig.update_yaxes(title_text="accuracy", range=[0, 1.02], col=1)
    return fig


def group_sizes(t: Tables):
    """Segments each group holds at the end of the run, stacked per policy (first seed)."""
    go, _ = _go()
    import plotly.colors as pc

    d = prepare.group_sizes(t)
    if d is None:
        return None
    n = d.groups
    colours = pc.sample_colorscale("Viridis", [i / max(1, n - 1) for i in range(n)])
    fig = go.Figure()
    traces, trace_panels = [], []
    for i, panel in enumerate(d.panels):
        pols = d.policies[panel]
        for k in range(n):
            dk = d.sizes(panel, k)
            if dk.segments.fillna(0).sum() == 0:
                continue
            traces.append(go.Bar(x=pols, y=dk.segments, name=f"group {k}", marker_color=colours[k], visible=i == 0,
                                 legendgroup=f"g{k}", customdata=dk[["valid_blocks", "user_writes", "gc_writes"]],
                                 hovertemplate="%{x}, group " + str(k) + ": %{y} segments<br>valid %{customdata[0]}"
                                               " blocks; wrote %{customdata[1]} user + %{customdata[2]} GC"
                                               "<extra></extra>"))
            trace_panels.append(panel)
    fig.add_traces(traces)
    fig.update_layout(**_LAYOUT, barmode="stack", height=440, yaxis_title="segments",
                      title="Group sizes at the end of the run (segments per group; first seed)")
    _selector(fig, trace_panels, d.panels, " · ".join(d.keys) or "runs")
    return fig


def group_windows(t: Tables):
    """Each group's sealed segments over the run, one line per group, for the first seed of each policy and
    setting (a menu picks the run); the hover has the window's victims and their valid ratio, what
    MiDAS-Simulation prints per group every GB."""
    go, _ = _go()
    import plotly.colors as pc

    g = t.group_windows
    if g is None or g.empty:
        return None
    first = g[g.seed == g.seed.min()]
    keys = [k for k in ("workload", "device", "victim", "length") if first[k].nunique() > 1]
    runs = []
    for _run, d in first.groupby("run", sort=True):
        setting = " · ".join(str(d[k].iloc[0]) for k in keys)
        runs.append((f"{d.policy.iloc[0]}" + (f" · {setting}" if setting else ""), d))
    n = int(first.group.max()) + 1
    colours = pc.sample_colorscale("Viridis", [i / max(1, n - 1) for i in range(n)])
    fig = go.Figure()
    traces, trace_panels = [], []
    for i, (label, d) in enumerate(runs):
        for k, dk in d.groupby("group", sort=True):
            if (dk.sealed_segments + dk.open_segments).sum() == 0 and dk.victims.sum() == 0:
                continue
            traces.append(go.Scatter(
                x=dk.drive_writes, y=dk.sealed_segments, mode="lines", name=f"group {k}", visible=i == 0,
                line_color=colours[int(k)], legendgroup=f"g{k}",
                customdata=dk[["victims", "victim_valid_ratio", "valid_blocks"]].fillna(-1),
                hovertemplate="group " + str(k) + " at %{x:.2f} drive-writes: %{y} sealed segments<br>"
                              "%{customdata[0]} victims, valid ratio %{customdata[1]:.3f}; %{customdata[2]} valid "
                              "blocks<extra></extra>"))
            trace_panels.append(label)
    if not traces:
        return None
    fig.add_traces(traces)
    fig.update_layout(**_LAYOUT, height=440, xaxis_title="drive-writes", yaxis_title="sealed segments",
                      title="Group sizes over the run (sealed segments per group; first seed)")
    _selector(fig, trace_panels, [label for label, _ in runs], "run")
    return fig


def group_lifetimes(t: Tables):
    """Lifetimes of the blocks each group received: median with the p10–p90
    range, in drive-writes, log scale (runs with ``accuracy``; first seed)."""
    go, _ = _go()
    d = prepare.group_lifetimes(t)
    if d is None:
        return None
    fig = go.Figure()
    traces, trace_panels = [], []
    for i, panel in enumerate(d.panels):
        for p in d.policies[panel]:
            dp = d.lifetimes(panel, p)
            s = d.styles[p]
            traces.append(go.Scatter(x=dp.x, y=dp.lifetime_median, mode="markers", visible=i == 0,
                                     marker=dict(color=s["color"], size=8),
                                     error_y=dict(type="data", array=dp.up, arrayminus=dp.down, thickness=1.2),
                                     customdata=dp[["group", "lifetime_p10", "lifetime_p90"]],
                                     hovertemplate=f"{p}, group %{{customdata[0]}}<br>median %{{y:.3g}} "
                                                   "drive-writes<br>p10 %{customdata[1]:.3g}, p90 %{customdata[2]:.3g}"
                                                   "<extra></extra>",
                                     **_legend(d.styles, p)))
            trace_panels.append(panel)
    fig.add_traces(traces)
    fig.update_layout(**_LAYOUT, height=_height(t, 460), xaxis_title="group", yaxis_title="lifetime [drive-writes]",
                      title="Lifetime of the blocks each group received: median, p10–p90 "
                            "(no upper bar: p90 outlives the run; first seed)")
    _selector(fig, trace_panels, d.panels, " · ".join(d.keys) or "runs")
    fig.update_yaxes(type="log")
    fig.update_xaxes(dtick=1)
    return fig


def victim_histogram(t: Tables):
    """Share of GC victims per valid-ratio bin (mean over seeds): where the
    mass sits near 0, GC found nearly empty segments."""
    d = prepare.victim_shares(t)
    if d is None:
        return None
    fig, trace_panels = _line_figure(t, d, "share", "valid %{x:.3f}<br>%{y:.1%} of victims", 420, width=1.8,
                                     markers=True)
    fig.update_layout(title="Valid ratio of the segments GC collected (share of victims)")
    _selector(fig, trace_panels, d.panels, d.title)
    fig.update_xaxes(title_text="valid blocks / segment size", range=[0, 1])
    fig.update_yaxes(title_text="share of victims", tickformat=".0%", col=1)
    return fig


def latency_cdf(t: Tables):
    """Latency CDFs per operation (results of timing runs carry them)."""
    go, make_subplots = _go()
    d = prepare.latency(t)
    if d is None:
        return None
    fig = make_subplots(rows=1, cols=len(d.ops), shared_yaxes=True, subplot_titles=d.ops, horizontal_spacing=0.03)
    seen: set = set()
    trace_panels = []
    for i, panel in enumerate(d.panels):
        for p in d.policies:
            for j, op in enumerate(d.ops):
                c = d.cdf(panel, p, op)
                if c.empty:
                    continue
                s = d.styles[p]
                fig.add_trace(go.Scatter(x=c.us, y=c.cdf, mode="lines", visible=i == 0,
                                         line=dict(color=s["color"], dash=s["dash"]),
                                         **_legend(d.styles, p, show=_first(seen, panel, p))),
                              row=1, col=j + 1)
                trace_panels.append(panel)
    fig.update_layout(**_LAYOUT, height=_height(t, 420), title="Latency CDF (first seed)")
    _selector(fig, trace_panels, d.panels, " · ".join(d.keys) or "runs")
    fig.update_xaxes(type="log", title_text="latency [µs]")
    fig.update_yaxes(title_text="share of requests", range=[0, 1], col=1)
    return fig


GAP_COLORS = {"user placement": "#1f77b4", "GC relocation": "#ff7f0e", "group configuration": "#7f7f7f"}


def oracle_gap(gaps):
    """Stacked bars: each policy's distance to NoDaP split into user placement,
    GC relocation and group configuration (:func:`wafer.gap.tidy`'s table),
    one panel per order of the decomposition."""
    import plotly.express as px

    if gaps is None or gaps.empty:
        return None
    fig = px.bar(gaps, x="policy", y="value", color="component", facet_col="order", barmode="relative",
                 color_discrete_map=GAP_COLORS, category_orders={"order": ["user first", "GC first", "average"],
                                                                 "component": list(GAP_COLORS)},
                 labels={"value": "WAF above NoDaP"}, hover_data={"half": ":.3f"})
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=", 1)[-1]))
    fig.update_layout(**_LAYOUT, height=440, title="Distance to NoDaP by component (steady WAF)")
    return fig


#: The page's figures in order: (anchor, heading, function).
FIGURES = [
    ("steady-waf", "Steady-state WAF", steady_waf),
    ("waf-over-time", "WAF over time", waf_over_time),
    ("accuracy", "Prediction accuracy", accuracy),
    ("group-sizes", "Group sizes", group_sizes),
    ("group-windows", "Group sizes over time", group_windows),
    ("group-lifetimes", "Group lifetimes", group_lifetimes),
    ("victims", "Victim valid ratios", victim_histogram),
    ("latency", "Latency", latency_cdf),
]
