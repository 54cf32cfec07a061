import json
import os
import shutil
import subprocess

import pytest

import wafer
from wafer.report import family, from_results, write_report
from wafer.report import figures as figs

DEV = dict(logical_blocks=1 << 14, op=0.1, segment_blocks=32)


@pytest.fixture(scope="module")
def runs():
    """Four policies of three families under two victims, with accuracy."""
    dev = wafer.Device(**DEV)
    return wafer.compare(["base", "sepbit", "midas", "nodap"], "zipf:1.0", victims=("greedy", "cost-benefit"),
                         device=dev, writes=3 << 14, accuracy=True, params={"nodap": {"search": False}})


def test_families():
    assert [family(p) for p in ("base", "two-r", "sepbit", "dogi", "dogi+User", "phftl", "nodap", "oracle-sort",
                                "midas+ngc", "ml-dt+ngrp")] == [
        "no separation", "rule-based", "rule-based", "learned", "learned", "learned", "oracle", "oracle",
        "oracle-assisted", "oracle-assisted"]


def test_tables_are_tidy(runs):
    t = from_results(runs)
    assert len(t.runs) == 8 and set(t.runs.family) == {"no separation", "rule-based", "oracle"}
    assert len(t.windows) == 8 * 30 and {"run", "policy", "victim", "window", "waf"} <= set(t.windows.columns)
    assert len(t.victims) == 8 * 20 and t.victims.groupby("run").share.sum().round(6).eq(1).all()
    sep = t.groups[(t.groups.policy == "sepbit") & (t.groups.victim == "greedy")]
    assert len(sep) == 6 and sep.lifetime_median.notna().any(), "per-group lifetimes [drive-writes]"
    assert t.policies == ["base", "sepbit", "midas", "nodap"], "legend order: by family"


def test_group_windows_add_up_to_the_runs_groups(runs, tmp_path):
    """Each group's part of each window (MiDAS-Simulation's per-group lines): the windows' victims and writes
    add up to the run's per-group totals, and the last window's segments are the groups' at the end."""
    t = from_results(runs)
    g = t.group_windows
    assert len(g) and {"window", "group", "victims", "victim_valid_ratio", "sealed_segments", "open_segments",
                       "valid_blocks", "drive_writes"} <= set(g.columns)
    for r_i, r in enumerate(runs):
        mine = g[g.run == r_i]
        for grp in r.raw["groups"]:
            rows = mine[mine.group == grp["group"]]
            assert rows.victims.sum() == grp["victims"], (r.policy, grp["group"])
            assert rows.user_writes.sum() == grp["user_writes"] and rows.gc_writes.sum() == grp["gc_writes"]
            last = rows[rows.window == rows.window.max()].iloc[0]
            assert last.sealed_segments + last.open_segments == grp["segments"]
    midas = g[(g.policy == "midas") & (g.victim == "greedy")]
    assert midas.group.nunique() > 2, "MiDAS's chain of groups, each with its own series"
    r = runs[0]
    ts = r.group_timeseries()
    assert len(ts["window"]) == len(r.raw["group_windows"]) and set(ts) >= {"sealed_segments", "victims"}


def test_every_figure_has_its_data(runs):
    t = from_results(runs)
    made = {a: f(t) for a, _, f in figs.FIGURES}
    assert made["latency"] is None, "no timing runs, no latency figure"
    assert all(made[a] is not None for a in made if a != "latency")
    bars = made["steady-waf"]
    assert {tr.name for tr in bars.data} == {"base", "sepbit", "midas", "nodap"}
    assert all(tr.error_y is not None for tr in bars.data)
    # One panel shown at a time, a menu to switch victims.
    waf = made["waf-over-time"]
    assert sum(1 for tr in waf.data if tr.visible) == 4 and len(waf.layout.updatemenus[0].buttons) == 2


def test_latency_cdfs_when_results_carry_them(runs):
    timed = []
    for r in runs[:2]:
        c = wafer.RunResult.from_dict(r.to_dict())
        c.raw["latency"] = {"read": {"us": [50, 80, 120, 900], "cdf": [0.2, 0.6, 0.9, 1.0]},
                            "write": {"us": [20, 40, 3000], "cdf": [0.5, 0.95, 1.0]}}
        timed.append(c)
    t = from_results(timed)
    assert len(t.latency) == 2 * 7 and set(t.latency.op) == {"read", "write"}
    fig = figs.latency_cdf(t)
    assert fig is not None and len(fig.data) == 4 and fig.layout.xaxis.type == "log"


def test_many_policies_are_split_by_family(runs):
    many = []
    for i in range(5):
        for r in runs[:4]:
            c = wafer.RunResult.from_dict(r.to_dict())
            c.labels = {"policy": f"{r.policy}-{i}", "policy_name": r.policy}
            many.append(c)
    t = from_results(many)
    fig = figs.waf_over_time(t)
    assert len(fig.layout.annotations) >= 3, "one column per family"
    per_col = {}
    for tr in fig.data:
        per_col[tr.xaxis] = per_col.get(tr.xaxis, 0) + 1
    assert max(per_col.values()) <= 10


def test_write_report_from_results_json_and_store(runs, tmp_path):
    page = write_report(runs, tmp_path / "a", title="t")
    html = page.read_text()
    assert html.count("Plotly.newPlot") == 7 and "<svg" not in html.split("<body>")[1].split("<script")[0]
    assert html.count("<tr>") == 1 + 8 and 'class="runs"' in html
    for name in ("steady-waf", "waf-over-time", "accuracy", "group-sizes", "group-lifetimes", "victim-valid-ratios"):
        assert (tmp_path / "a" / "figures" / f"{name}.png").stat().st_size > 1000
        assert (tmp_path / "a" / "figures" / f"{name}.svg").read_text().startswith("<?xml")
    again = write_report(tmp_path / "a" / "results.json", tmp_path / "b", static_formats=())
    assert again.read_text().count("Plotly.newPlot") == 7
    assert (tmp_path / "a" / "group_timeseries.csv").read_text().count("\n") > 8
    (tmp_path / "one.json").write_text(json.dumps(runs[0].to_dict()))
    assert "Plotly.newPlot" in write_report(tmp_path / "one.json", tmp_path / "c", static_formats=()).read_text()


def test_report_cli_rejects_what_it_cannot_read(tmp_path, cli):
    (tmp_path / "x.json").write_text('{"a": 1}')
    p = cli("report", str(tmp_path / "x.json"), "-o", str(tmp_path / "r"), ok=False)
    assert p.returncode == 2 and "not wafer results" in p.stderr
    p = cli("report", str(tmp_path / "missing.sqlite"), "-o", str(tmp_path / "r"), ok=False)
    assert p.returncode == 2 and "no such file" in p.stderr


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("CI"):
        pytest.fail("chromium is missing in CI: .ci/run installs it (apt-get install chromium)")
    pytest.skip("chromium is not installed here (apt-get install chromium); CI runs this test")


def _browse(page, tmp_path):
    """Open ``page`` in headless Chromium; return its DOM after scripts ran and its console lines."""
    home = tmp_path / "browser"
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / "config"),
           "XDG_CACHE_HOME": str(home / "cache")}
    p = subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
                        "--virtual-time-budget=5000", f"--user-data-dir={home / 'profile'}", "--dump-dom",
                        page.as_uri()], capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout, [line for line in p.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]


def test_the_report_renders_in_a_real_browser(runs, tmp_path):
    page = write_report(runs, tmp_path / "rep", static_formats=())
    # After loading, click "steady WAF" twice (descending) as a reader would, to check the table sorts.
    click = ("<script>var th = [].find.call(document.querySelectorAll('th'), function (h) "
             "{ return h.textContent === 'steady WAF'; }); th.click(); th.click();</script></body>")
    page.write_text(page.read_text().replace("</body>", click))
    dom, console = _browse(page, tmp_path)
    assert not console, "the page logged to the console:\n" + "\n".join(console)
    assert dom.count('class="main-svg"') >= 2 * 6, "every plotly figure drew its SVG"
    assert dom.count('class="updatemenu-container"') >= 4, "panel menus drawn"
    body = dom.split("<tbody>")[1]
    assert 'aria-sort="descending"' in dom and body.split("</tr>")[0].count(">base<") == 1, "highest WAF first"


def test_a_fleet_study_reports_per_volume_figures(tmp_path, monkeypatch):
    """Issue 47 item 6: a study over volumes gets the WAF CDF over volumes,
    means unweighted and write-weighted, pairwise shares with Wilson
    intervals, the most disputed volumes, and volumes.csv."""
    import csv

    import wafer.sweep as sweep
    from wafer.report import fleet, write_report

    monkeypatch.setenv("WAFER_CACHE_DIR", str(tmp_path / "cache"))
    trace = tmp_path / "fleet.csv"
    trace.write_text("".join(f"{128166372003061629 + i * 1000},hm,{i % 4},Write,"
                             f"{((i * 7919) % (1500 + 700 * (i % 4))) * 4096},4096,1\n" for i in range(16000)))
    study = {"traces": [{"path": str(trace), "volumes": "all"}], "policies": ["base", "sepbit"],
             "devices": [{"logical_blocks": 4096, "segment_blocks": 32}]}
    db = tmp_path / "f.sqlite"
    sweep.run(study, db, jobs=1, progress=False)
    page = write_report(db, tmp_path / "rep", static_formats=())
    html = page.read_text()
    assert "WAF over the volumes" in html and "Which policy wins on how many volumes" in html
    assert "WAF over the volumes, per policy" in html  # the box plot
    rows = list(csv.DictReader(open(tmp_path / "rep" / "volumes.csv")))
    assert len(rows) == 8 and {r["policy"] for r in rows} == {"base", "sepbit"}
    import pyarrow.feather as feather

    arrow = feather.read_table(tmp_path / "rep" / "volumes.arrow")
    assert arrow.num_rows == 8 and sorted(arrow.column("waf").to_pylist()) == sorted(float(r["waf"]) for r in rows)
    pairs = list(csv.DictReader(open(tmp_path / "rep" / "volume_pairs.csv")))
    assert {(p["a"], p["b"]) for p in pairs} == {("base", "sepbit"), ("sepbit", "base")}
    assert all(float(p["ci95_low"]) <= float(p["share"]) <= float(p["ci95_high"]) for p in pairs)
    lo, hi = fleet.wilson(8, 10)
    assert round(lo, 3) == 0.490 and round(hi, 3) == 0.943
