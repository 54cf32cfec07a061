"""Figures for papers (matplotlib, Agg backend): the same figures as the
page, drawn from the same data (:mod:`wafer.report.prepare`), as small multiples (one panel per
workload / device / victim combination, at most ``MAX_PANELS``), written
as PNG (150 dpi) and SVG."""

from __future__ import annotations

import math
from pathlib import Path

from . import prepare
from .data import Tables
from .style import MPL_DASHES

MAX_PANELS = 12


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 9, "axes.spines.top": False, "axes.spines.right": False,
                         "svg.hashsalt": "wafer", "svg.fonttype": "none"})
    return plt


# Margins [inches]: fixed, so no layout engine has to measure every tick label (matplotlib's constrained
# layout took most of a figure's time).
_LEFT, _RIGHT, _TOP, _BOTTOM, _LEGEND_ROW = 0.75, 0.15, 0.4, 0.55, 0.22


def _grid(n: int, ncols: int, w: float = 4.2, h: float = 3.0, sharey: bool = True, bottom: float = 0.0):
    """``n`` panels on a grid of ``ncols`` columns, each ``w`` x ``h`` inches;
    ``bottom``: extra room under the panels [inches] (rotated tick labels)."""
    plt = _plt()
    rows = math.ceil(n / ncols)
    w = max(w, 6.0) if ncols == 1 else w
    fig, axes = plt.subplots(rows, ncols, figsize=(w * ncols, h * rows), squeeze=False, sharey=sharey)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    fig._wafer_bottom = _BOTTOM + bottom
    _margins(fig, 0.0)
    return fig, list(axes.flat)


def _margins(fig, legend: float) -> None:
    """Place the panels inside fixed margins, with ``legend`` inches below them for the legend."""
    width, height = fig.get_size_inches()
    bottom = fig._wafer_bottom + legend
    fig.set_size_inches(width, height + legend - getattr(fig, "_wafer_legend", 0.0))
    fig._wafer_legend = legend
    width, height = fig.get_size_inches()
    fig.subplots_adjust(left=_LEFT / width, right=1 - _RIGHT / width, top=1 - _TOP / height,
                        bottom=bottom / height, wspace=0.28, hspace=(_TOP + fig._wafer_bottom) / 2.6)


def _save(fig, out: Path, name: str, formats: tuple[str, ...]) -> list[Path]:
    paths = []
    for fmt in formats:
        p = out / f"{name}.{fmt}"
        fig.savefig(p, dpi=150, metadata={"Date": None} if fmt == "svg" else None)
        paths.append(p)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return paths


def _legend(fig, axes) -> None:
    """One legend for all panels, under them, six entries a row."""
    handles: dict = {}
    for ax in axes:
        for h, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, h)
    if handles:
        rows = math.ceil(len(handles) / 6)
        _margins(fig, rows * _LEGEND_ROW + 0.1)
        fig.legend(list(handles.values()), list(handles), loc="lower center", ncol=min(6, len(handles)),
                   frameon=False, bbox_to_anchor=(0.5, 0.0))


def steady_waf(t: Tables, out: Path, formats: tuple[str, ...]) -> list[Path]:
    """Grouped bars: mean steady WAF over seeds per workload and policy, 95% interval whiskers."""
    b = prepare.steady_waf(t)
    if b is None:
        return []
    panels, workloads, pols = b.panels[:MAX_PANELS], b.workloads, b.policies
    ncols = 1 if len(panels) == 1 else 2
    fig, axes = _grid(len(panels), ncols, w=max(4.5, 0.9 + 0.13 * len(pols) * len(workloads)), h=3.0,
                      bottom=0.3 if len(workloads) > 3 else 0.0)
    width = 0.8 / max(1, len(pols))
    for ax, panel in zip(axes, panels):
        d = b.cells[b.cells.panel == panel].set_index(["workload", "policy"])
        for j, p in enumerate(pols):
            xs = [i + (j - (len(pols) - 1) / 2) * width for i in range(len(workloads))]
            ys = [d["mean"].get((w, p), math.nan) for w in workloads]
            err = [d["half"].get((w, p), math.nan) for w in workloads]
            ax.bar(xs, ys, width, yerr=[0 if math.isnan(e) else e for e in err], color=b.styles[p]["color"], label=p,
                   error_kw={"elinewidth": 0.8, "capsize": 1.5})
        ax.set_xticks(range(len(workloads)), workloads, rotation=20 if len(workloads) > 3 else 0)
        ax.set_title(panel if panel != "all" else "", fontsize=9)
        ax.set_ylabel(b.label)
    _legend(fig, axes)
    return _save(fig, out, "steady-waf", formats)


def _plot(ax, d: prepare.Lines, panel: str, p: str, metric: str, **kw) -> None:
    line = d.get(panel, p, metric)
    if line is not None:
        s = d.styles[p]
        ax.plot(line["x"], line[metric], color=s["color"], ls=MPL_DASHES[s["dash"]], label=p, **kw)


def waf_over_time(t: Tables, out: Path, formats: tuple[str, ...]) -> list[Path]:
    """Small multiples: WAF per window against drive-writes, a row per panel, a column per family if many policies."""
    d = prepare.over_time(t, ["waf"])
    if d is None:
        return []
    cols = d.columns
    panels = d.panels[:MAX_PANELS // len(cols) or 1]
    fig, axes = _grid(len(panels) * len(cols), len(cols), w=4.0, h=2.6)
    for r, panel in enumerate(panels):
        for c, fam in enumerate(cols):
            ax = axes[r * len(cols) + c]
            for p in d.policies:
                if fam is None or d.styles[p]["family"] == fam:
                    _plot(ax, d, panel, p, "waf", lw=1.3)
            ax.set_title(" · ".join(x for x in (panel if panel != "all" else None, fam) if x), fontsize=9)
            ax.set_xlabel("drive-writes")
            if c == 0:
                ax.set_ylabel("WAF per window")
    _legend(fig, axes)
    return _save(fig, out, "waf-over-time", formats)


def accuracy(t: Tables, out: Path, formats: tuple[str, ...]) -> list[Path]:
    """Cumulative user / GC prediction accuracy against drive-writes, a row per panel."""
    d = prepare.accuracy(t)
    if d is None:
        return []
    cols = [c for c in ("cumulative_user_accuracy", "cumulative_gc_accuracy") if c in d.metrics]
    panels = d.panels[:MAX_PANELS // len(cols)]
    fig, axes = _grid(len(panels) * len(cols), len(cols), w=4.0, h=2.6)
    for r, panel in enumerate(panels):
        for c, col in enumerate(cols):
            ax = axes[r * len(cols) + c]
            for p in d.policies:
                _plot(ax, d, panel, p, col, lw=1.3)
            what = "user-written" if "user" in col else "GC-written"
            ax.set_title(" · ".join(x for x in (panel if panel != "all" else None, what) if x), fontsize=9)
            ax.set_ylim(0, 1.02)
            ax.set_xlabel("drive-writes")
            if c == 0:
                ax.set_ylabel("accuracy since start")
    _legend(fig, axes)
    return _save(fig, out, "accuracy", formats)


def group_sizes(t: Tables, out: Path, formats: tuple[str, ...]) -> list[Path]:
    """Stacked bars: segments per group at the end of the run, per policy (first seed)."""
    d = prepare.group_sizes(t)
    if d is None:
        return []
    plt = _plt()
    panels = d.panels[:MAX_PANELS]
    n = d.groups
    cmap = plt.get_cmap("viridis")
    fig, axes = _grid(len(panels), 1 if len(panels) == 1 else 2, w=max(4.5, 0.45 * d.table.policy.nunique()), h=3.0,
                      bottom=0.035 * max(len(p) for p in d.table.policy))
    for ax, panel in zip(axes, panels):
        pols = d.policies[panel]
        bottom = [0.0] * len(pols)
        for k in range(n):
            dk = d.sizes(panel, k).segments.fillna(0).tolist()
            ax.bar(range(len(pols)), dk, bottom=bottom, color=cmap(k / max(1, n - 1)), label=f"group {k}")
            bottom = [b + x for b, x in zip(bottom, dk)]
        ax.set_xticks(range(len(pols)), pols, rotation=45, ha="right")
        ax.set_ylabel("segments")
        ax.set_title(panel if panel != "all" else "", fontsize=9)
    return _save(fig, out, "group-sizes", formats)


def group_lifetimes(t: Tables, out: Path, formats: tuple[str, ...]) -> list[Path]:
    """Per group: median lifetime with the p10–p90 range [drive-writes], log scale (first seed)."""
    d = prepare.group_lifetimes(t)
    if d is None:
        return []
    panels = d.panels[:MAX_PANELS]
    fig, axes = _grid(len(panels), 1 if len(panels) == 1 else 2, w=5.0, h=3.0)
    for ax, panel in zip(axes, panels):
        for p in d.policies[panel]:
            dp = d.lifetimes(panel, p)
            ax.errorbar(dp.x, dp.lifetime_median, yerr=[dp.down, dp.up], fmt="o", ms=3.5, lw=0.9,
                        color=d.styles[p]["color"], label=p)
        ax.set_yscale("log")
        ax.set_xlabel("group")
        ax.set_ylabel("lifetime [drive-writes]")
        ax.set_title(panel if panel != "all" else "", fontsize=9)
    _legend(fig, axes)
    return _save(fig, out, "group-lifetimes", formats)


def victim_histogram(t: Tables, out: Path, formats: tuple[str, ...]) -> list[Path]:
    """Share of victims per valid-ratio bin (mean over seeds), a panel per combination."""
    d = prepare.victim_shares(t)
    if d is None:
        return []
    panels = d.panels[:MAX_PANELS]
    fig, axes = _grid(len(panels), 1 if len(panels) == 1 else 2, w=4.5, h=2.8)
    for ax, panel in zip(axes, panels):
        for p in d.policies:
            _plot(ax, d, panel, p, "share", lw=1.2, marker="o", ms=2.5)
        ax.set_xlim(0, 1)
        ax.set_xlabel("valid ratio of the victim")
        ax.set_ylabel("share of victims")
        ax.set_title(panel if panel != "all" else "", fontsize=9)
    _legend(fig, axes)
    return _save(fig, out, "victim-valid-ratios", formats)


def oracle_gap(gaps, out: Path, formats: tuple[str, ...]) -> list[Path]:
    """Stacked bars of the oracle-gap decomposition (:func:`wafer.gap.tidy`), a panel per order."""
    if gaps is None or gaps.empty:
        return []
    from .figures import GAP_COLORS

    orders = ["user first", "GC first", "average"]
    pols = list(dict.fromkeys(gaps.policy))
    fig, axes = _grid(3, 3, w=max(2.8, 0.8 * len(pols)), h=3.0)
    for ax, order in zip(axes, orders):
        d = gaps[gaps.order == order]
        up, down = [0.0] * len(pols), [0.0] * len(pols)
        for comp, color in GAP_COLORS.items():
            vals = d[d.component == comp].set_index("policy").reindex(pols).value.fillna(0).tolist()
            base = [u if v >= 0 else dn for v, u, dn in zip(vals, up, down)]
            ax.bar(range(len(pols)), vals, bottom=base, color=color, label=comp)
            up = [u + max(v, 0) for u, v in zip(up, vals)]
            down = [dn + min(v, 0) for dn, v in zip(down, vals)]
        ax.axhline(0, color="#333", lw=0.8)
        ax.set_xticks(range(len(pols)), pols, rotation=30 if len(pols) > 2 else 0)
        ax.set_title(order, fontsize=9)
    axes[0].set_ylabel("WAF above NoDaP")
    _legend(fig, axes)
    return _save(fig, out, "oracle-gap", formats)


FIGURES = [steady_waf, waf_over_time, accuracy, group_sizes, group_lifetimes, victim_histogram]


def write_all(t: Tables, out: Path, formats: tuple[str, ...] = ("png", "svg")) -> list[Path]:
    """Every static figure the data has, into ``out``; the paths written."""
    paths: list[Path] = []
    for f in FIGURES:
        paths += f(t, out, formats)
    return paths
