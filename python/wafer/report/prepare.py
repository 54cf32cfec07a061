"""Each figure's data, prepared once from the tidy tables
(:class:`wafer.report.data.Tables`) for both plot backends: the interactive
page (:mod:`wafer.report.figures`, plotly) and the paper figures
(:mod:`wafer.report.static`, matplotlib) draw from the same objects, so the
two never disagree on what a figure shows. One function per figure's data;
each returns None when the runs have none for it.

Panels: a panel is one combination of the dimensions that vary across the
runs (workload, device, victim, length); a line or bar is one policy, in
legend order (:attr:`Tables.policies`), coloured by its family
(:func:`wafer.report.style.styles_of`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..stats import summarize
from .data import Tables
from .style import families_present, panels_of, parts, styles_of, varying, with_panel

#: More lines than this in one panel: one column per family.
MAX_LINES = 8


def _first_seed(df):
    """The rows of each cell's first seed (group tables and CDFs are not averaged)."""
    first = df.groupby([c for c in ("workload", "device", "victim", "length", "policy") if c in df],
                       sort=False).seed.transform("min")
    return df[df.seed == first]


@dataclass
class Bars:
    """Steady-state WAF per (panel, workload, policy): ``cells`` has ``n``,
    ``mean``, ``half`` (95% half-width), ``lo``, ``hi`` and ``interval`` (text)."""

    metric: str
    cells: Any
    panels: list[str]
    workloads: list[str]
    policies: list[str]
    styles: dict[str, dict[str, Any]]

    @property
    def label(self) -> str:
        return "steady WAF" if self.metric == "steady_waf" else "WAF"


def steady_waf(t: Tables) -> Bars | None:
    """Mean steady WAF over seeds (the whole-run WAF if no run reached its
    warm-up) per workload and policy; one panel per other varying dimension."""
    runs = t.runs[t.runs.status == "done"]
    if runs.empty:
        return None
    metric = "steady_waf" if runs["steady_waf"].notna().any() else "waf"
    cells = summarize(with_panel(runs, varying(runs, skip=("workload",))), ["panel", "workload", "policy"], metric)
    cells["interval"] = [f"{lo:.3f} – {hi:.3f}" if n > 1 else "one seed" for n, lo, hi in
                         zip(cells.n, cells.lo, cells.hi)]
    return Bars(metric=metric, cells=cells, panels=panels_of(cells), workloads=list(dict.fromkeys(cells.workload)),
                policies=[p for p in t.policies if p in set(cells.policy)], styles=styles_of(t))


@dataclass
class Lines:
    """Lines per (panel, policy): ``lines[(panel, policy)]`` is a frame
    with ``x`` and the ``metrics`` columns (means over seeds), one row per
    point. ``columns``: the families to split the policies into (``[None]``:
    one column)."""

    keys: list[str]
    panels: list[str]
    policies: list[str]
    columns: list[str | None]
    metrics: list[str]
    lines: dict[tuple[str, str], Any]
    styles: dict[str, dict[str, Any]]

    @property
    def title(self) -> str:
        """What the panels stand for (the varying dimensions)."""
        return " · ".join(self.keys) or "runs"

    def column(self, policy: str) -> int:
        """The 0-based column of ``policy``."""
        return self.columns.index(self.styles[policy]["family"]) if self.columns[0] else 0

    def get(self, panel: str, policy: str, metric: str | None = None):
        """The line of ``policy`` in ``panel`` (None if it has no value of ``metric``, default the first)."""
        d = self.lines.get((panel, policy))
        m = metric or self.metrics[0]
        return None if d is None or d[m].isna().all() else d


def _lines(t: Tables, df, metrics: list[str], agg: dict[str, tuple[str, str]], by: str) -> Lines | None:
    metrics = [m for m in metrics if m in df and df[m].notna().any()]
    if df.empty or not metrics:
        return None
    keys = varying(df)
    df = with_panel(df, keys)
    g = parts(df.groupby(["panel", "policy", by], sort=False).agg(**agg, **{m: (m, "mean") for m in metrics}))
    styles = styles_of(t)
    pols = [p for p in t.policies if p in set(df.policy)]
    cols = families_present(styles, pols) if len(pols) > MAX_LINES else [None]
    return Lines(keys=keys, panels=panels_of(df), policies=pols, columns=cols, metrics=metrics, lines=g,
                 styles=styles)


def over_time(t: Tables, metrics: list[str]) -> Lines | None:
    """``metrics`` per time-series window against drive-writes (``x``, the
    window's end), means over seeds."""
    return _lines(t, t.windows, metrics, {"x": ("drive_writes", "mean")}, "window")


def accuracy(t: Tables) -> Lines | None:
    """User- and GC-write prediction accuracy per window, since the start
    (``cumulative_*``) and within each (runs with ``accuracy``)."""
    cols = [f"{w}{k}_accuracy" for w in ("cumulative_", "") for k in ("user", "gc")]
    cumulative = [c for c in cols[:2] if c in t.windows and t.windows[c].notna().any()]
    return over_time(t, cols) if cumulative else None


def victim_shares(t: Tables) -> Lines | None:
    """Share of GC victims per valid-ratio bin (``x``: the bin's centre),
    mean over seeds."""
    v = t.victims
    if v.empty or v.victims.sum() == 0:
        return None
    v = v.assign(x=(v.lo + v.hi) / 2)
    return _lines(t, v, ["share"], {"x": ("x", "first")}, "bin")


@dataclass
class Groups:
    """Per-group figures at the end of each run (first seed): ``table`` has
    a ``panel`` column; ``policies[panel]`` in legend order; ``groups`` the
    number of group ids."""

    keys: list[str]
    panels: list[str]
    policies: dict[str, list[str]]
    groups: int
    table: Any
    styles: dict[str, dict[str, Any]]

    def sizes(self, panel: str, group: int):
        """Group ``group``'s row of each policy of ``panel`` (NaN where it has none): ``segments``,
        ``valid_blocks``, ``user_writes``, ``gc_writes``."""
        d = self.table[(self.table.panel == panel) & (self.table.group == group)]
        return d.set_index("policy").reindex(self.policies[panel])

    def lifetimes(self, panel: str, policy: str):
        """``policy``'s groups in ``panel``: ``x`` (the group id, offset so the policies sit side by side),
        ``lifetime_median``, ``down`` and ``up`` (to p10 and p90; no upper bar when p90 outlives the run)."""
        d = self.table[(self.table.panel == panel) & (self.table.policy == policy)]
        pols = self.policies[panel]
        j = pols.index(policy)
        return d.assign(x=d.group + (j - (len(pols) - 1) / 2) * min(0.8 / max(1, len(pols)), 0.15),
                        up=(d.lifetime_p90 - d.lifetime_median).where(d.lifetime_p90.notna(), 0),
                        down=(d.lifetime_median - d.lifetime_p10).clip(lower=0))


def _groups(t: Tables, g) -> Groups:
    keys = varying(t.groups)
    g = with_panel(_first_seed(g), keys)
    panels = panels_of(g)
    pols = {panel: [p for p in t.policies if p in set(g[g.panel == panel].policy)] for panel in panels}
    return Groups(keys=keys, panels=panels, policies=pols, groups=int(g.group.max()) + 1, table=g,
                  styles=styles_of(t))


def group_sizes(t: Tables) -> Groups | None:
    """Segments each group holds at the end of the run."""
    return None if t.groups.empty else _groups(t, t.groups)


def group_lifetimes(t: Tables) -> Groups | None:
    """Lifetimes of the blocks each group received (runs with ``accuracy``), in drive-writes."""
    g = t.groups
    if g.empty or "lifetime_median" not in g or g.lifetime_median.isna().all():
        return None
    return _groups(t, g[g.lifetime_median.notna()])


@dataclass
class Cdfs:
    """Latency CDFs of timing runs (first seed): ``cdf(panel, policy, op)``
    has ``us`` and ``cdf``."""

    keys: list[str]
    panels: list[str]
    ops: list[str]
    policies: list[str]
    table: Any
    styles: dict[str, dict[str, Any]]

    def cdf(self, panel: str, policy: str, op: str):
        t = self.table
        return t[(t.panel == panel) & (t.policy == policy) & (t.op == op)]


def latency(t: Tables) -> Cdfs | None:
    """Latency CDFs per operation (results of timing runs carry them)."""
    lat = t.latency
    if lat.empty:
        return None
    keys = varying(lat)
    lat = _first_seed(with_panel(lat, keys))
    return Cdfs(keys=keys, panels=panels_of(lat), ops=list(dict.fromkeys(lat.op)),
                policies=[p for p in t.policies if p in set(lat.policy)], table=lat, styles=styles_of(t))
