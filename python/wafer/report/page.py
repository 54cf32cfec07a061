"""The HTML page: a sortable summary table, the interactive figures
(plotly's JavaScript embedded once, so the page works offline), failures,
warnings and links to the data."""

from __future__ import annotations

import html
import math
import time
from typing import Any

from ..stats import mean_interval
from .data import Tables
from .style import styles_of, varying

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:1280px;margin:1.5em auto;
padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
.meta{color:#555;font-size:.92em}
.tablewrap{overflow-x:auto}
table.runs{border-collapse:collapse;width:100%;font-size:13px;font-variant-numeric:tabular-nums}
table.runs th,table.runs td{padding:3px 7px;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}
table.runs td.txt{white-space:normal;overflow-wrap:anywhere;min-width:4em}
table.runs td.small{font-size:11px;color:#666;white-space:normal;overflow-wrap:anywhere}
table.runs th{position:sticky;top:0;background:#f7f7f7;cursor:pointer;user-select:none;text-align:right;
white-space:normal;vertical-align:bottom}
table.runs th.txt,table.runs td.txt{text-align:left}
table.runs th[aria-sort=ascending]::after{content:" \\25B2"}table.runs th[aria-sort=descending]::after{content:" \\25BC"}
table.runs tr:hover td{background:#f3f8ff}
.sw{display:inline-block;width:.8em;height:.8em;border-radius:2px;margin-right:.4em;vertical-align:-1px}
.best{font-weight:600}
.figure{margin:1em 0 2em}
.note{color:#555;font-size:.9em}
ul.warn li{margin:.2em 0}
nav a{margin-right:1em}
"""

# Click a header to sort by it (numbers by value, empty cells last); click again to reverse.
SORT_JS = """
document.querySelectorAll("table.runs").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, col) {
    th.addEventListener("click", function () {
      var asc = th.getAttribute("aria-sort") !== "ascending";
      table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", asc ? "ascending" : "descending");
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      function key(r) { var c = r.cells[col], v = c.getAttribute("data-v"); return v === null ? c.textContent : v; }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b), nx = parseFloat(x), ny = parseFloat(y);
        if (x === "" || y === "") { return x === y ? 0 : (x === "" ? 1 : -1); }
        var d = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : String(x).localeCompare(String(y));
        return asc ? d : -d;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
"""

#: Table columns: (header, metric, digits, tooltip).
METRIC_COLUMNS = [
    ("steady WAF", "steady_waf", 3, "(user + GC writes) / user writes after the warm-up; mean ± 95% interval over seeds"),
    ("WAF", "waf", 3, "(user + GC writes) / user writes over the whole run"),
    ("victim valid", "mean_victim_valid_ratio", 3, "mean share of valid blocks in the segments GC collected"),
    ("user acc", "user_accuracy", 3, "share of user-write lifetime predictions that were right"),
    ("GC acc", "gc_accuracy", 3, "share of GC-write lifetime predictions that were right"),
    ("train s", "train_seconds", 2, "seconds of online model training (part of the run's wall time)"),
    ("M writes/s", "mwps", 2, "million user block writes per second of wall time"),
]


def _cell(value: Any, text: str | None = None, cls: str = "") -> str:
    v = "" if value is None or (isinstance(value, float) and math.isnan(value)) else value
    shown = html.escape(text if text is not None else str(v))
    attr = f' class="{cls}"' if cls else ""
    return f'<td{attr} data-v="{html.escape(str(v))}">{shown}</td>'


def table(t: Tables) -> str:
    """The summary table: one row per cell (policy x workload x device x
    victim x length), metrics as mean ± half-width of the 95% interval over
    seeds; the lowest steady WAF of each workload / device / victim in bold."""
    runs = t.runs[t.runs.status == "done"].copy()
    if runs.empty:
        return "<p>No run finished.</p>"
    runs["mwps"] = runs["user_writes_per_second"] / 1e6
    styles = styles_of(t)
    keys = varying(runs)
    cols = [m for _, m, _, _ in METRIC_COLUMNS if runs[m].notna().any()]
    rows = []
    for key, g in runs.groupby([*keys, "policy"], sort=False):
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip([*keys, "policy"], key))
        row["family"] = g.family.iloc[0]
        row["seeds"] = len(g)
        for m in cols:
            row[m] = mean_interval(g[m].tolist())
        row["warnings"] = sorted({w for ws in g.warnings.fillna("") for w in ws.split(";") if w})
        rows.append(row)
    metric = "steady_waf" if "steady_waf" in cols else "waf"
    best: dict[tuple, float] = {}
    for r in rows:
        k = tuple(r[x] for x in keys)
        m = r[metric][1]
        if not math.isnan(m):
            best[k] = min(best.get(k, math.inf), m)
    order = {k: {v: i for i, v in enumerate(dict.fromkeys(runs[k]))} for k in keys}
    rows.sort(key=lambda r: (tuple(order[k][r[k]] for k in keys),
                             r[metric][1] if not math.isnan(r[metric][1]) else math.inf))
    head = ['<th class="txt">policy</th>', '<th class="txt">family</th>']
    head += [f'<th class="txt">{html.escape(k)}</th>' for k in keys]
    head.append('<th title="runs with different seeds">seeds</th>')
    head += [f'<th title="{html.escape(tip)}">{html.escape(h)}</th>' for h, m, _, tip in METRIC_COLUMNS if m in cols]
    head.append('<th class="txt" title="see the warnings below">warnings</th>')
    body = []
    for r in rows:
        sw = f'<span class="sw" style="background:{styles[r["policy"]]["color"]}"></span>'
        cells = [f'<td class="txt" data-v="{html.escape(r["policy"])}">{sw}{html.escape(r["policy"])}</td>',
                 _cell(r["family"], cls="txt")]
        cells += [_cell(r[k], cls="txt") for k in keys]
        cells.append(_cell(r["seeds"]))
        for _, m, digits, _ in METRIC_COLUMNS:
            if m not in cols:
                continue
            n, mean, half = r[m]
            if n == 0:
                cells.append(_cell(None, "-"))
                continue
            text = f"{mean:.{digits}f}" + (f" ± {half:.{digits}f}" if n > 1 else "")
            is_best = m == metric and mean == best.get(tuple(r[x] for x in keys))
            cells.append(_cell(round(mean, 6), text, "best" if is_best else ""))
        cells.append(_cell(" ".join(r["warnings"]), cls="txt small"))
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (f'<div class="tablewrap"><table class="runs"><thead><tr>{"".join(head)}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>')


def problems(t: Tables, results) -> str:
    """Failed runs and every distinct warning, with the runs it concerns."""
    out = []
    failed = t.runs[t.runs.status == "failed"]
    if len(failed):
        items = "".join(f"<li><b>{html.escape(str(r.policy))}</b> / {html.escape(str(r.victim))} on "
                        f"{html.escape(str(r.workload))}, {html.escape(str(r.device))}, seed {r.seed}: "
                        f"{html.escape(str(r.error).splitlines()[0])}</li>" for r in failed.itertuples())
        out.append(f"<h2 id='failed'>Runs that failed ({len(failed)})</h2><p class='note'>Their figures up to "
                   f"the error, if any, are in the data files, not in the table.</p><ul class='warn'>{items}</ul>")
    seen: dict[str, list[str]] = {}
    for r in results:
        for w in r.warnings:
            seen.setdefault(w["message"], []).append(f"{r.policy}/{r.victim}")
    if seen:
        items = []
        for msg, who in seen.items():
            whom = "all runs" if len(who) == len(results) and len(results) > 1 else ", ".join(sorted(set(who))[:12])
            items.append(f"<li>{html.escape(msg)} <span class='note'>({html.escape(whom)})</span></li>")
        out.append(f"<h2 id='warnings'>Warnings</h2><ul class='warn'>{''.join(items)}</ul>")
    return "".join(out)


def meta(t: Tables, results) -> str:
    if not results:
        return ""
    geo = results[0].raw.get("geometry") or {}
    def n(count: int, word: str, plural: str | None = None) -> str:
        return f"{count} {word if count == 1 else plural or word + 's'}"

    parts = [n(len(results), "run"), n(t.runs.policy.nunique(), "policy", "policies"),
             n(t.runs.workload.nunique(), "workload")]
    if geo:
        parts.append(f"first run's device: {geo.get('logical_blocks')} logical blocks of {geo.get('block_size')} B, "
                     f"{geo.get('segments')} segments of {geo.get('segment_blocks')} blocks, OP {geo.get('op', 0):.3f}")
    return "; ".join(parts)


def render(t: Tables, results, figures: list[tuple[str, str, Any]], links: list[tuple[str, str]],
           static_note: str = "") -> str:
    """The whole page. ``figures``: (anchor, heading, plotly figure); ``links``: (file, what)."""
    from plotly.offline import get_plotlyjs

    nav = " ".join(f'<a href="#{a}">{html.escape(h)}</a>' for a, h, _ in figures)
    figs = []
    for anchor, heading, fig in figures:
        div = fig.to_html(full_html=False, include_plotlyjs=False, div_id=f"fig-{anchor}",
                          config={"responsive": True, "displaylogo": False}, default_width="100%")
        figs.append(f'<h2 id="{anchor}">{html.escape(heading)}</h2><div class="figure">{div}</div>')
    notes = "".join(f"<p class='note'>{html.escape(n)}</p>" for n in t.notes)
    data = " · ".join(f'<a href="{html.escape(f)}">{html.escape(f)}</a> ({html.escape(w)})' for f, w in links)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(t.title)}</title><style>{CSS}</style>
<script type="text/javascript">{get_plotlyjs()}</script></head>
<body><h1>{html.escape(t.title)}</h1>
<p class="meta">{html.escape(meta(t, results))}. Generated {time.strftime("%Y-%m-%d %H:%M")}.</p>
{notes}
<nav><a href="#summary">Summary</a> {nav}</nav>
<h2 id="summary">Summary</h2>
<p class="note">One row per policy and setting; numbers are the mean over seeds ± the half-width of its 95%
interval (Student's t). WAF = (user + GC writes) / user writes; steady WAF excludes the warm-up. Colours group
policies by family. Click a column to sort; the lowest steady WAF of each setting is bold.</p>
{table(t)}
{"".join(figs)}
{problems(t, results)}
<h2 id="data">Data</h2><p class="note">{data}</p>{f"<p class='note'>{html.escape(static_note)}</p>" if static_note else ""}
<script>{SORT_JS}</script>
</body></html>
"""
