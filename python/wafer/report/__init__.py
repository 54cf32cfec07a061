"""Reports: a self-contained HTML page (sortable table, interactive plotly
figures with plotly's JavaScript embedded, usable offline), figures for
papers (PNG and SVG, matplotlib) and the data behind them (JSON, CSV).

    wafer.report.write_report(store_or_results_or_json, "report/")

The data is first turned into tidy tables (:mod:`wafer.report.data`); each
figure is one function over them (:mod:`wafer.report.figures` for the page,
:mod:`wafer.report.static` for papers)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from . import figures, fleet, static
from .data import Tables, family, from_results, load
from .page import render

__all__ = ["Tables", "family", "from_results", "load", "write_report"]


def write_report(
    source: Any,
    out_dir: str | os.PathLike,
    title: str | None = None,
    *,
    study: str | None = None,
    jobs: list[str] | None = None,
    static_formats: tuple[str, ...] = ("png", "svg"),
    extra: list[tuple[str, str, Any]] | None = None,
    notes: list[str] | None = None,
    gaps: Any = None,
) -> Path:
    """Write ``report.html`` and its data into ``out_dir``; return the page's path.

    ``source``: a results store (path or open :class:`wafer.store.Store`; only
    ``study`` or the ``jobs`` ids if given), a results JSON file, or a list of :class:`wafer.RunResult`.
    Also written: ``results.json`` (every run), ``runs.csv`` (one row per run),
    ``timeseries.csv`` (one row per run x window), ``groups.csv``, ``group_timeseries.csv`` (one row per run x window x
    group) and, for each
    figure the data has, ``figures/NAME.png`` and ``.svg`` (``static_formats=()``
    skips them). ``extra``: more (anchor, heading, plotly figure) sections;
    ``notes``: paragraphs under the title; ``gaps``: an oracle-gap table
    (:func:`wafer.gap.tidy`) drawn first, as stacked bars (by default the
    decompositions the runs hold: a policy with its +nu, +ngc, +nu+ngc
    variants and NoDaP in one setting)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tables, results = load(source, study=study, title=title, jobs=jobs)
    tables.notes = list(notes or [])
    (out / "results.json").write_text(json.dumps({"results": [_with_labels(r) for r in results]}))
    tables.runs.to_csv(out / "runs.csv", index=False)
    tables.windows.to_csv(out / "timeseries.csv", index=False)
    tables.groups.to_csv(out / "groups.csv", index=False)
    tables.group_windows.to_csv(out / "group_timeseries.csv", index=False)
    links = [("results.json", "every run, in full"), ("runs.csv", "one row per run"),
             ("timeseries.csv", "one row per run and window"), ("groups.csv", "one row per run and group"),
             ("group_timeseries.csv", "one row per run, window and group (MiDAS-Simulation's per-group lines)")]
    sections = []
    if gaps is None:  # runs that hold a decomposition (wafer gap's five variants) get its figure
        from ..gap import find, tidy

        gaps = tidy(find(tables.runs))
    if not gaps.empty:
        gaps.to_csv(out / "gap.csv", index=False)
        links.append(("gap.csv", "the decomposition, one row per policy, order and component"))
        sections.append(("oracle-gap", "Distance to NoDaP by component", figures.oracle_gap(gaps)))
    sections += [(a, h, fig) for a, h, f in figures.FIGURES if (fig := f(tables)) is not None]
    fl = fleet.of(tables.runs)
    if fl is not None:  # the volumes of multi-volume traces: per-volume figures
        import pyarrow as pa
        import pyarrow.feather as feather

        fl.volumes.to_csv(out / "volumes.csv", index=False)
        feather.write_feather(pa.Table.from_pandas(fl.volumes, preserve_index=False), out / "volumes.arrow")
        fl.pairs.to_csv(out / "volume_pairs.csv", index=False)
        links += [("volumes.csv", "one row per volume and policy"),
                  ("volumes.arrow", "the same, Arrow IPC (pyarrow.feather.read_table, pandas.read_feather)"),
                  ("volume_pairs.csv", "per pair of policies, the volumes where each wins")]
        from .prepare import styles_of

        sections += [("fleet-cdf", "WAF over the volumes", fleet.cdf_figure(fl, styles_of(tables))),
                     ("fleet-box", "WAF over the volumes, per policy", fleet.box_figure(fl, styles_of(tables))),
                     ("fleet-means", "Means over the volumes", fleet.table_figure(fl)),
                     ("fleet-pairs", "Which policy wins on how many volumes", fleet.pairs_figure(fl)),
                     ("fleet-disagree", "Volumes where the policies disagree most", fleet.disagree_figure(fl))]
    sections += list(extra or [])
    note = ""
    if static_formats:
        (out / "figures").mkdir(exist_ok=True)
        written = static.write_all(tables, out / "figures", static_formats)
        written += static.oracle_gap(gaps, out / "figures", static_formats)
        names = sorted({p.stem for p in written})
        note = (f"Figures for papers (matplotlib, {' and '.join(f.upper() for f in static_formats)}): "
                + ", ".join(f"figures/{n}" for n in names) + f"; at most {static.MAX_PANELS} panels each.")
    path = out / "report.html"
    path.write_text(render(tables, results, sections, links, note))
    return path


def _with_labels(r) -> dict[str, Any]:
    d = r.to_dict()
    if r.labels:
        d["labels"] = r.labels
    return d
