"""Reports: a self-contained HTML page (table + SVG charts, no plotting
library needed), the results as JSON and the time series as CSV."""

from __future__ import annotations

import csv
import html
import json
import time
from pathlib import Path

from .result import RunResult, format_table

_COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f"]


def _chart(series: list[tuple[str, list[float], list[float]]], title: str, ylabel: str) -> str:
    """An SVG line chart of (label, xs, ys) series."""
    w, h, ml, mr, mt, mb = 720, 300, 60, 190, 30, 40
    pts = [(x, y) for _, xs, ys in series for x, y in zip(xs, ys) if y is not None]
    if not pts:
        return ""
    x0, x1 = 0.0, max(x for x, _ in pts) or 1.0
    y0, y1 = min(1.0, min(y for _, y in pts)), max(y for _, y in pts)
    y1 = y1 + 0.05 * (y1 - y0 or 1.0)

    def sx(x: float) -> float:
        return ml + (x - x0) / (x1 - x0) * (w - ml - mr)

    def sy(y: float) -> float:
        return mt + (1 - (y - y0) / (y1 - y0)) * (h - mt - mb)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">',
           f'<text x="{w / 2 - mr / 2}" y="16" text-anchor="middle" font-size="13">{html.escape(title)}</text>',
           f'<line x1="{ml}" y1="{h - mb}" x2="{w - mr}" y2="{h - mb}" stroke="#333"/>',
           f'<line x1="{ml}" y1="{mt}" x2="{ml}" y2="{h - mb}" stroke="#333"/>']
    for i in range(6):
        yv = y0 + (y1 - y0) * i / 5
        xv = x0 + (x1 - x0) * i / 5
        out.append(f'<text x="{ml - 6}" y="{sy(yv) + 4:.1f}" text-anchor="end">{yv:.2f}</text>')
        out.append(f'<line x1="{ml}" y1="{sy(yv):.1f}" x2="{w - mr}" y2="{sy(yv):.1f}" stroke="#eee"/>')
        out.append(f'<text x="{sx(xv):.1f}" y="{h - mb + 16}" text-anchor="middle">{xv:.1f}</text>')
    out.append(f'<text x="{(ml + w - mr) / 2}" y="{h - 6}" text-anchor="middle">drive-writes</text>')
    out.append(f'<text x="14" y="{(mt + h - mb) / 2}" transform="rotate(-90 14 {(mt + h - mb) / 2})" '
               f'text-anchor="middle">{html.escape(ylabel)}</text>')
    for i, (label, xs, ys) in enumerate(series):
        color = _COLORS[i % len(_COLORS)]
        path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in zip(xs, ys) if y is not None)
        out.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.8" points="{path}"/>')
        ly = mt + 14 * i + 8
        out.append(f'<line x1="{w - mr + 12}" y1="{ly}" x2="{w - mr + 30}" y2="{ly}" stroke="{color}" stroke-width="3"/>')
        out.append(f'<text x="{w - mr + 36}" y="{ly + 4}">{html.escape(label)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def write_report(results: list[RunResult], out_dir: str | Path, title: str = "wafer report") -> Path:
    """Write report.html, results.json and timeseries.csv into ``out_dir``; return the HTML path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps({"results": [r.to_dict() for r in results]}, indent=1))
    with open(out / "timeseries.csv", "w", newline="") as f:
        wr = csv.writer(f)
        header_written = False
        for r in results:
            ts = r.timeseries()
            if not header_written:
                wr.writerow(["policy", "victim", *ts.keys()])
                header_written = True
            for row in zip(*ts.values()):
                wr.writerow([r.policy, r.victim, *row])
    series = [(f"{r.policy}/{r.victim}", r.timeseries().get("drive_writes", []), r.timeseries().get("waf", []))
              for r in results]
    cumulative = [(f"{r.policy}/{r.victim}", r.timeseries().get("drive_writes", []),
                   r.timeseries().get("cumulative_waf", [])) for r in results]
    accuracy = ""
    for col, label in (("user_accuracy", "user-write"), ("gc_accuracy", "GC-write")):
        for kind in ("", "cumulative_"):
            acc = [(f"{r.policy}/{r.victim}", r.timeseries().get("drive_writes", []),
                    r.timeseries().get(kind + col, [])) for r in results if r.accuracy]
            what = "since the start" if kind else "within each window"
            chart = _chart(acc, f"{label} lifetime-prediction accuracy {what}", "accuracy")
            if chart:
                accuracy += f"<h2>{label[0].upper() + label[1:]} prediction accuracy, {what}</h2>\n{chart}\n"
    geo = results[0].raw["geometry"] if results else {}
    meta = (f"workload <code>{html.escape(results[0].workload)}</code>, seed {results[0].seed}, "
            f"{geo.get('logical_blocks')} logical blocks of {geo.get('block_size')} B, "
            f"{geo.get('segments')} segments of {geo.get('segment_blocks')} blocks, "
            f"OP {geo.get('op', 0):.3f}") if results else ""
    page = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>body{{font-family:sans-serif;max-width:980px;margin:2em auto;color:#222}}
pre{{background:#f6f6f6;padding:1em;overflow-x:auto}}</style></head>
<body><h1>{html.escape(title)}</h1>
<p>{meta}. Generated {time.strftime("%Y-%m-%d %H:%M:%S")}.</p>
<p>WAF = (user writes + GC writes) / user writes; steady-state WAF excludes the warm-up.
Rows are sorted by steady-state WAF, lowest first.</p>
<pre>{html.escape(format_table(results))}</pre>
<h2>WAF per window</h2>
{_chart(series, "WAF within each window", "WAF")}
<h2>Cumulative WAF</h2>
{_chart(cumulative, "WAF since the start of the workload", "cumulative WAF")}
{accuracy}<p>Data: <a href="results.json">results.json</a>, <a href="timeseries.csv">timeseries.csv</a>.</p>
</body></html>
"""
    path = out / "report.html"
    path.write_text(page)
    return path
