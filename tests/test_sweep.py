import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

import wafer
import wafer.sweep as sweep
from wafer.store import Store

TINY = {"logical_blocks": 1 << 14, "segment_blocks": 32, "warmup_drive_writes": 0.5}


def study(**over):
    d = {"name": "t", "workloads": ["zipf:1.0", "uniform"], "victims": ["greedy", "cost-benefit"],
         "policies": ["base", {"name": "sepbit", "grid": {"window_segments": [8, 16]}}],
         "devices": [{**TINY, "op": [0.1, 0.28]}], "seeds": 2, "drive_writes": 2}
    d.update(over)
    return d


def test_a_study_is_the_cartesian_product_with_stable_ids():
    s = sweep.load(study())
    jobs = s.jobs()
    assert len(jobs) == 2 * 2 * 3 * 2 * 2  # seeds x workloads x policies x victims x OPs
    assert len({j.id for j in jobs}) == len(jobs)
    assert [j.id for j in sweep.load(study()).jobs()] == [j.id for j in jobs], "ids are stable"
    labels = {(j.labels["policy"], j.labels["device"]) for j in jobs}
    assert ("sepbit[window_segments=8]", "op=0.1") in labels and ("base", "op=0.28") in labels
    assert [j.labels["seed"] for j in jobs[:24]] == [1] * 24, "seeds outermost: every cell once first"
    # Anything that changes the run changes the id; the same run in another study keeps it.
    other = {j.id for j in sweep.load(study(drive_writes=3)).jobs()}
    assert not other & {j.id for j in jobs}
    renamed = {j.id for j in sweep.load(study(name="u")).jobs()}
    assert renamed == {j.id for j in jobs}


def test_a_study_file_with_traces_relative_to_it(tmp_path):
    (tmp_path / "t.csv").write_text("".join(f"128166372003061629,hm,0,Write,{(i % 50) * 4096},4096,0\n"
                                            for i in range(300)))
    f = tmp_path / "s.toml"
    f.write_text('name = "tr"\ntraces = [{ path = "t.csv", label = "hm" }]\npolicies = ["base"]\n'
                 '[[devices]]\nop = 0.5\nsegment_blocks = 4\n')
    s = sweep.load(f)
    assert s.workloads[0]["trace"]["path"] == str(tmp_path / "t.csv")
    df = sweep.run(f, progress=False)
    assert (tmp_path / "s.sqlite").exists(), "default store beside the study"
    assert df.status.tolist() == ["done"] and df.user_writes.tolist() == [300] and df.workload.tolist() == ["hm"]


@pytest.mark.parametrize("over, message", [
    ({"colour": 1}, "unknown key(s) colour"),
    ({"policies": ["nope"]}, "unknown policy 'nope'"),
    ({"policies": [{"name": "sepbit", "params": {"x": 1}}]}, "unknown parameter 'x'"),
    ({"devices": [{"timing": "nvme"}]}, "timing presets are not implemented yet"),
    ({"devices": [{"opp": 0.1}]}, "unknown field(s) opp"),
    ({"devices": [{"op": 0}]}, "op"),
    ({"metrics": ["speed"]}, "metrics: unknown speed"),
    ({"seeds": 0}, "seeds"),
    ({"writes": 10, "drive_writes": 1}, "not both"),
    ({"traces": ["missing.csv"]}, "no such file"),
    # wrong types: refused, never read character by character or turned into something else
    ({"policies": [1, 2]}, "policies: 1 is an integer"),
    ({"workloads": "zipf:1.0"}, 'workloads: "zipf:1.0" is a string; give a list'),
    ({"victims": "greedy"}, 'victims: "greedy" is a string; give a list'),
    ({"devices": {"op": 0.1}}, "devices: {\"op\": 0.1} is a table; give a list"),
    ({"seeds": [1, "2"]}, 'seeds: "2" is a string'),
    ({"seeds": True}, "seeds: true is a boolean"),
    ({"accuracy": "no"}, 'accuracy: "no" is a string; give true or false'),
    ({"name": 5}, "name: 5 is an integer"),
    ({"drive_writes": "2"}, 'drive_writes: "2" is a string'),
    ({"writes": True, "drive_writes": None}, "writes: true is a boolean"),
    ({"policies": [{"name": "sepbit", "params": 3}]}, "policies: sepbit: params: 3 is an integer"),
    ({"policies": [{"name": 7}]}, "policies: name 7 is an integer"),
    # empty lists: refused, never the default in their place
    ({"workloads": []}, "workloads: an empty list"),
    ({"traces": []}, "traces: an empty list"),
    ({"policies": []}, "policies: an empty list"),
    ({"victims": []}, "victims: an empty list"),
    ({"devices": []}, "devices: an empty list"),
    ({"metrics": []}, "metrics: an empty list"),
    ({"seeds": []}, "seeds: an empty list"),
    ({"policies": [{"name": "sepbit", "grid": {"window_segments": []}}]}, "grid.window_segments must be a non-empty"),
    # values the engine refuses, found before anything runs
    ({"victims": ["greedy", "nope"]}, 'victims: "nope": unknown victim selector \'nope\''),
    ({"workloads": ["zipf:1.0", "zipf:abc"]}, 'workloads: "zipf:abc": workload spec \'zipf:abc\''),
    ({"workloads": ["nonsense"]}, "unknown workload 'nonsense'"),
    ({"policies": [{"name": "sepbit", "grid": {"window_segments": [8, "x"]}}]},
     'policies: sepbit[window_segments=x]: policy \'sepbit\': bad parameter value'),
    ({"policies": [{"name": "sepbit", "grid": {"user_test": ["exact", "zzz"]}}]},
     "policies: sepbit[user_test=zzz]: policy 'sepbit': user_test = 'zzz'; known: exact, fifo"),
    ({"policies": [{"name": "sepbit", "params": {"window_segments": -1}}]}, "bad parameter value"),
])
def test_study_errors_name_what_is_wrong(over, message):
    with pytest.raises(wafer.ConfigError, match="invalid study") as e:
        sweep.load({k: v for k, v in study(**over).items() if v is not None})  # None: leave the key out
    assert message in str(e.value)


BAD_STUDY_FILES = [
    # (the file's text, the line the error names, what it says)
    ('name = "b"\nworkloads = ["zipf:1.0",\n  "zipf:0.8"\npolicies = ["base"]\n', 4, "Unclosed array"),
    ('name = "b"\n\npolicies = [\n  "base",\n  { name = "sepbit", grid = { window_segments = [8, "x"] } },\n]\n',
     3, "policies: sepbit[window_segments=x]"),
    ('name = "b"\nvictims = ["greedy", "nope"]\n', 2, 'victims: "nope"'),
    ('# a study\nname = "b"\nworkloads = "zipf:1.0"\n', 3, 'workloads: "zipf:1.0" is a string'),
    ('name = "b"\ncolour = 1\n', 2, "unknown key(s) colour"),
    ('name = "b"\n[[devices]]\nlogical_blocks = 16384\n[[devices]]\nop = "x"\n', 4, "devices[1]"),
]


@pytest.mark.parametrize("text, line, message", BAD_STUDY_FILES)
def test_a_bad_study_file_is_refused_whole_naming_the_line_before_the_store_is_touched(
        text, line, message, tmp_path, cli):
    f = tmp_path / "b.toml"
    f.write_text(text)
    with pytest.raises(wafer.ConfigError) as e:
        sweep.load(f)
    assert str(e.value).startswith(f"invalid study: {f}:{line}: ") and message in str(e.value), str(e.value)
    p = cli("sweep", "run", str(f), "-q", ok=False)
    assert p.returncode == 2 and "Traceback" not in p.stderr and message in p.stderr, p.stderr
    assert not (tmp_path / "b.sqlite").exists(), "a refused study never opens its store"


def test_a_binary_study_file_is_refused(tmp_path, cli):
    f = tmp_path / "b.toml"
    f.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff" * 10)
    with pytest.raises(wafer.ConfigError, match="b.toml: not a text file"):
        sweep.load(f)
    p = cli("sweep", "run", str(f), ok=False)
    assert p.returncode == 2 and "Traceback" not in p.stderr and "not a text file" in p.stderr, p.stderr
    assert not (tmp_path / "b.sqlite").exists()


def test_run_returns_a_table_and_resumes(tmp_path):
    db = tmp_path / "s.sqlite"
    df = sweep.run(study(metrics=["steady_waf", "user_accuracy"]), db)
    assert len(df) == 48 and set(df.status) == {"done"}
    assert (df.steady_waf >= 1).all() and df[df.policy_name == "sepbit"].user_accuracy.between(0, 1).all()
    # The accuracy comes with what it is read against (issue 49 item 2).
    sb = df[df.policy_name == "sepbit"]
    assert sb.user_majority.between(0, 1).all() and sb.user_balanced_accuracy.between(0, 1).all()
    again = sweep.run(study(metrics=["steady_waf", "user_accuracy"]), db)
    assert again.runs.tolist() == [1] * 48, "nothing ran twice"
    assert again.finished.tolist() == df.finished.tolist()
    with Store(db) as st:
        ts = st.timeseries()
        assert len(ts) == 48 * 20 and {"job", "policy", "seed", "window", "waf"} <= set(ts.columns)
        assert st.to_arrow().num_rows == 48
        r = st.results()[0]
        assert r.labels["workload"] == "zipf:1.0" and r.config["device"]["logical_blocks"] == 1 << 14


def test_a_failed_job_keeps_its_error_and_partial_results(tmp_path):
    trace = tmp_path / "bad.csv"
    good = "".join(f"128166372003061629,hm,0,Write,{(i % 200) * 4096},4096,0\n" for i in range(200))
    trace.write_text(good + "garbage line\n" + good)
    s = {"name": "f", "traces": [str(trace)], "policies": ["base", "two-r"],
         "devices": [{"op": 0.5, "segment_blocks": 4}]}
    db = tmp_path / "f.sqlite"
    df = sweep.run(s, db)
    assert set(df.status) == {"failed"} and df.error.str.contains("bad.csv:201").all()
    assert df.user_writes.tolist() == [200, 200], "the partial results are kept"
    again = sweep.run(s, db)
    assert again.runs.tolist() == [1, 1], "failed jobs are not rerun by default"
    assert sweep.run(s, db, retry_failed=True).runs.tolist() == [2, 2]


def test_a_sweep_or_compare_with_a_failed_job_exits_1(tmp_path, cli):
    """Scripts notice a failed job: `wafer sweep run` and `wafer compare` exit 1 (the row says why)."""
    trace = tmp_path / "bad.csv"
    good = "".join(f"128166372003061629,hm,0,Write,{(i % 200) * 4096},4096,0\n" for i in range(200))
    trace.write_text(good + "garbage line\n" + good)
    study = tmp_path / "f.toml"
    study.write_text(f'name = "f"\ntraces = ["{trace}"]\npolicies = ["base"]\n'
                     '[[devices]]\nop = 0.5\nsegment_blocks = 4\n')
    p = cli("sweep", "run", str(study), "--store", str(tmp_path / "f.sqlite"), "-q", ok=False)
    assert p.returncode == 1 and "bad.csv:201" in p.stdout, p.stdout + p.stderr
    p = cli("compare", "--trace", str(trace), "--policies", "base", "--segment-blocks", "4", "--op", "0.5", "-q",
            ok=False)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr


BIG = {"name": "big", "workloads": ["zipf:1.0", "zipf:0.8", "uniform", "hotcold:0.9:0.1", "phase"],
       "policies": ["base", "two-r", "sepbit", "equal-partition"], "victims": ["greedy", "cost-benefit"],
       "devices": [{**TINY, "op": [0.07, 0.1, 0.15, 0.2, 0.28]}], "drive_writes": 1.5}


def _write_toml(path, d):
    def val(v):
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, list):
            return "[" + ", ".join(val(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{k} = {val(x)}" for k, x in v.items()) + " }"
        return json.dumps(v)

    path.write_text("".join(f"{k} = {val(v)}\n" for k, v in d.items()))


def _done(db):
    if not db.exists():
        return {}
    con = sqlite3.connect(db, timeout=30)
    try:
        return {r[0]: (r[1], r[2]) for r in con.execute("SELECT id, finished, runs FROM jobs WHERE status = 'done'")}
    except sqlite3.OperationalError:  # not created yet
        return {}
    finally:
        con.close()


def test_a_200_job_study_killed_midway_resumes_without_redoing_finished_jobs(tmp_path):
    f = tmp_path / "big.toml"
    _write_toml(f, BIG)
    db = tmp_path / "big.sqlite"
    p = subprocess.Popen([sys.executable, "-m", "wafer", "sweep", "run", str(f), "--jobs", "2", "-q"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 120
    while len(_done(db)) < 40 and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    os.killpg(p.pid, signal.SIGKILL)  # the sweep and its workers, mid-way
    p.wait()
    before = _done(db)
    assert 40 <= len(before) < 200, f"killed after {len(before)} jobs"
    out = subprocess.run([sys.executable, "-m", "wafer", "sweep", "run", str(f), "--jobs", "2", "--json"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert len(rows) == 200 and {r["status"] for r in rows} == {"done"}
    after = {r["job"]: r for r in rows}
    for jid, (finished, runs) in before.items():
        assert after[jid]["runs"] == runs == 1 and after[jid]["finished"] == finished, "a finished job reran"
    assert max(r["runs"] for r in rows) <= 2, "a job the killed sweep held ran once more at most"
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
    rep = subprocess.run([sys.executable, "-m", "wafer", "report", str(db), "-o", str(tmp_path / "rep"),
                          "--no-static"], capture_output=True, text=True, timeout=300)
    assert rep.returncode == 0, rep.stderr
    page = (tmp_path / "rep" / "report.html").read_text()  # rendering in a browser: test_report.py
    assert "Plotly.newPlot" in page and page.count("<tr") > 5 * 4 * 2


def test_two_sweeps_on_one_store_share_the_jobs(tmp_path):
    f = tmp_path / "two.toml"
    _write_toml(f, {**BIG, "name": "two", "workloads": ["zipf:1.0", "uniform"], "victims": ["greedy"]})
    cmd = [sys.executable, "-m", "wafer", "sweep", "run", str(f), "--jobs", "1", "-q"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    con = sqlite3.connect(tmp_path / "two.sqlite")
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    rows = con.execute("SELECT status, runs, owner FROM jobs").fetchall()
    con.close()
    assert len(rows) == 40 and {r[0] for r in rows} == {"done"} and {r[1] for r in rows} == {1}
    assert len({r[2] for r in rows}) == 2, "both sweeps ran jobs"


def test_sweep_cli_status_export_and_dry_run(tmp_path, cli):
    f = tmp_path / "c.toml"
    _write_toml(f, study(name="c", seeds=1, workloads=["zipf:1.0"]))
    dry = cli("sweep", "run", str(f), "--dry-run").stdout
    assert "12 jobs; 0 done" in dry
    out = cli("sweep", "run", str(f), "--jobs", "2").stdout
    assert "12 ran (0 failed)" in out and "sepbit[window_segments=16]" in out and "steady_waf" in out
    assert "12 jobs; 12 done" in cli("sweep", "run", str(f), "--dry-run").stdout
    db = tmp_path / "c.sqlite"
    st = json.loads(cli("sweep", "status", str(db), "--json").stdout)
    assert st["done"] == 12 and st["failed"] == 0 and st["studies"] == ["c"]
    cli("sweep", "export", str(db), "-o", str(tmp_path / "a.parquet"))
    cli("sweep", "export", str(db), "-o", str(tmp_path / "w.csv"), "--timeseries")
    import pandas as pd

    assert len(pd.read_parquet(tmp_path / "a.parquet")) == 12
    assert len(pd.read_csv(tmp_path / "w.csv")) == 12 * 20
    bad = cli("sweep", "status", str(f), ok=False)
    assert bad.returncode == 2 and "not a wafer store" in bad.stderr
    assert "name =" in cli("sweep", "example").stdout


KILLED = ('name = "k"\nworkloads = ["zipf:1.0", "uniform"]\npolicies = ["base", "two-r"]\ndrive_writes = 20\n'
          "[[devices]]\nlogical_blocks = 262144\nsegment_blocks = 64\n")


def _children(pid):
    """Processes whose parent is ``pid`` (from /proc)."""
    out = []
    for d in os.listdir("/proc"):
        try:
            stat = open(f"/proc/{d}/stat").read() if d.isdigit() else ""
        except OSError:
            continue
        if stat and int(stat[stat.rindex(")") + 2:].split()[1]) == pid:
            out.append(int(d))
    return out


def _alive(pid):
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"  # a zombie has ended


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_workers_and_the_resource_tracker_end_when_the_sweep_is_killed_and_status_says_orphaned(tmp_path, cli):
    f = tmp_path / "k.toml"
    f.write_text(KILLED)
    db = tmp_path / "k.sqlite"
    p = subprocess.Popen([sys.executable, "-m", "wafer", "sweep", "run", str(f), "--jobs", "2", "-q"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    kids = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and p.poll() is None:
            try:
                con = sqlite3.connect(db, timeout=5)
                running = con.execute("SELECT COUNT(*) FROM jobs WHERE status = 'running'").fetchone()[0]
                con.close()
            except sqlite3.Error:
                running = 0
            kids = _children(p.pid)
            if running and len(kids) >= 3:  # two workers and the resource tracker
                break
            time.sleep(0.05)
        assert p.poll() is None and len(kids) >= 3, f"no job running: {kids}"
        time.sleep(0.3)  # the workers are inside their first jobs
        kids = _children(p.pid)
        p.kill()  # SIGKILL: no handler, no cleanup of its own
        p.wait()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(_alive(k) for k in kids):
            time.sleep(0.05)
        assert not [k for k in kids if _alive(k)], "a worker or the resource tracker outlived the sweep"
    finally:
        for k in kids:
            if _alive(k):
                os.kill(k, signal.SIGKILL)
    st = json.loads(cli("sweep", "status", str(db), "--json").stdout)
    assert st["orphaned"] >= 1 and st["running"] == 0 and all(r["orphaned"] for r in st["running_jobs"]), st
    text = cli("sweep", "status", str(db)).stdout
    assert "orphaned" in text and "0 running" in text and "running " not in text.split("\n", 1)[1], text


def test_the_example_study_parses():
    from wafer.sweep.cli import EXAMPLE
    from wafer.sweep.study import parse, tomllib

    s = parse(tomllib.loads(EXAMPLE), base=None)
    assert len(s.jobs()) == 2 * 2 * 3 * 4 * 3


def test_ray_backend_runs_the_same_study(tmp_path_factory, monkeypatch):
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'wafer[ray]')")
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    tmp = tmp_path_factory.mktemp("r")  # short: Ray's socket paths must fit in 107 bytes
    # A fleet study too (issue 47 item 3): volumes x policies on the cluster.
    monkeypatch.setenv("WAFER_CACHE_DIR", str(tmp / "cache"))
    fleet = tmp / "fleet.csv"
    fleet.write_text("".join(f"{128166372003061629 + i * 1000},hm,{i % 3},Write,{(i * 7919 % 3000) * 4096},4096,1\n"
                             for i in range(9000)))
    fleet_study = {"traces": [{"path": str(fleet), "volumes": "all"}], "policies": ["base", "sepbit"],
                   "devices": [{"logical_blocks": 4096, "segment_blocks": 32}]}
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _temp_dir=str(tmp))
    try:
        df = sweep.run(study(seeds=1), tmp / "ray.sqlite", backend="ray")
        on_ray = sweep.run(fleet_study, tmp / "fleet-ray.sqlite", backend="ray")
    finally:
        ray.shutdown()
    local = sweep.run(study(seeds=1), tmp / "local.sqlite")
    assert set(df.status) == {"done"} and len(df) == 24
    assert df.steady_waf.tolist() == local.steady_waf.tolist(), "same jobs, same results"
    here = sweep.run(fleet_study, tmp / "fleet.sqlite")
    assert len(on_ray) == 6 and set(on_ray.status) == {"done"}
    assert on_ray.sort_values(["workload", "policy"]).waf.tolist() == \
        here.sort_values(["workload", "policy"]).waf.tolist()


def test_the_progress_bar_counts_jobs_with_an_eta():
    import io

    from wafer.progress import Progress

    out = io.StringIO()
    bar = Progress(200, "sweep big", stream=out, delay=0.0, unit="jobs")
    time.sleep(0.01)
    bar.update(50)
    bar.close()
    line = out.getvalue()
    assert "50/200 jobs" in line and "ETA" in line and "25.0%" in line


SCRIPT = """import wafer.sweep
df = wafer.sweep.run({"name": "u", "policies": ["base"], "seeds": 3, "drive_writes": 1,
                      "devices": [{"logical_blocks": 16384, "segment_blocks": 32}]}, None, jobs=2)
print(df.status.tolist())
"""


def test_a_sweep_from_stdin_runs_and_an_unguarded_script_gets_a_clear_error(tmp_path):
    p = subprocess.run([sys.executable, "-"], input=SCRIPT, capture_output=True, text=True, timeout=300,
                       cwd=tmp_path)
    assert p.returncode == 0 and "['done', 'done', 'done']" in p.stdout, p.stderr[-2000:]
    script = tmp_path / "unguarded.py"
    script.write_text(SCRIPT)
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert p.returncode != 0 and 'Guard its sweep with `if __name__ == "__main__":`' in p.stderr


def test_a_trace_is_annotated_once_before_the_workers_start(tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text("".join(f"128166372003061629,hm,0,Write,{((i * 7919) % 3000) * 4096},4096,0\n"
                             for i in range(20000)))
    s = {"name": "ann", "traces": [str(trace)], "cache_dir": str(tmp_path / "cache"), "seeds": 2,
         "policies": [{"name": "nodap", "params": {"search": False}}, "sepbit", "sepbit+ngc"],
         "metrics": ["steady_waf", "user_accuracy"], "devices": [{"op": 0.2, "segment_blocks": 8}]}
    df = sweep.run(s, tmp_path / "a.sqlite", jobs=2)
    assert set(df.status) == {"done"}, df.error.tolist()
    assert len(list((tmp_path / "cache").glob("*.wlife"))) == 1
    with Store(tmp_path / "a.sqlite") as st:
        assert all(r.raw["annotation"]["reused"] for r in st.results()), "every job read the cached annotation"


def test_a_study_names_its_setup(tmp_path):
    """Issue 47 item 1: `setup` per study and per trace entry; an unknown
    setup is an error naming its line; wafer's own keeps older job ids."""
    from wafer.sweep import study as S

    trace = tmp_path / "t.csv"
    trace.write_text("".join(f"{128166372003061629 + i * 1000},hm,0,Write,{(i * 7919 % 4096) * 4096},4096,1\n"
                             for i in range(3000)))
    f = tmp_path / "s.toml"
    f.write_text('workloads = ["zipf:1.0"]\nsetup = "sepbit-replayer"\n'
                 f'traces = [{{ path = "{trace}", label = "own", setup = "midas-sim" }}]\n'
                 '[[devices]]\nlogical_blocks = 8192\nsegment_blocks = 64\n')
    jobs = S.load(f).jobs()
    by = {j.labels["workload"]: j for j in jobs}
    assert by["zipf:1.0"].config["setup"] == "sepbit-replayer" and by["own"].config["setup"] == "midas-sim"
    plain = tmp_path / "p.toml"
    plain.write_text('workloads = ["zipf:1.0"]\n[[devices]]\nlogical_blocks = 8192\nsegment_blocks = 64\n')
    explicit = tmp_path / "e.toml"
    explicit.write_text('workloads = ["zipf:1.0"]\nsetup = "wafer"\n[[devices]]\nlogical_blocks = 8192\n'
                        'segment_blocks = 64\n')
    assert [j.id for j in S.load(plain).jobs()] == [j.id for j in S.load(explicit).jobs()]
    assert "setup" not in S.load(plain).jobs()[0].spec
    bad = tmp_path / "b.toml"
    bad.write_text('workloads = ["zipf:1.0"]\n\nsetup = "replayer"\n')
    with pytest.raises(wafer.ConfigError, match=r"b.toml:3: setup: setup 'replayer' is not one wafer knows"):
        S.load(bad)
    bad.write_text(f'traces = [{{ path = "{trace}", setup = 3 }}]\n')
    with pytest.raises(wafer.ConfigError, match="setup: 3 is an integer"):
        S.load(bad)


def test_a_study_over_the_volumes_of_a_fleet_trace(tmp_path, monkeypatch):
    """Issue 47 item 1: traces = [{ path, volumes = "all" | "top:N" | [ids] }]:
    one workload per volume, split once into the cache and reused, every id
    checked against the file with the study's line."""
    import os

    from wafer.sweep import study as S

    monkeypatch.setenv("WAFER_CACHE_DIR", str(tmp_path / "cache"))
    lines = []
    for i in range(9000):
        v = (0, 0, 0, 1, 1, 2)[i % 6]  # volume 0 writes most, then 1, then 2
        lines.append(f"{128166372003061629 + i * 1000},hm,{v},Write,{(i * 7919 % 3000) * 4096},4096,1\n")
    trace = tmp_path / "fleet.csv"
    trace.write_text("".join(lines))
    f = tmp_path / "s.toml"

    def study(volumes):
        f.write_text(f'traces = [{{ path = "{trace}", volumes = {volumes} }}]\n'
                     '[[devices]]\nlogical_blocks = 4096\nsegment_blocks = 32\n')
        return S.load(f)

    every = study('"all"')
    assert [w["label"] for w in every.workloads] == ["fleet.csv#0", "fleet.csv#1", "fleet.csv#2"]
    files = [w["trace"]["path"] for w in every.workloads]
    stamps = [os.stat(p).st_mtime_ns for p in files]
    assert [w["label"] for w in study('"top:2"').workloads] == ["fleet.csv#0", "fleet.csv#1"]
    assert [w["label"] for w in study("[2, 0]").workloads] == ["fleet.csv#2", "fleet.csv#0"]
    assert [os.stat(p).st_mtime_ns for p in files] == stamps, "the split is reused"
    # Same size, same modification time, other bytes: split again (the key is the content).
    st = os.stat(trace)
    edited = trace.read_text().replace(lines[0], lines[0].replace(",hm,0,", ",hm,2,"), 1)
    assert len(edited) == st.st_size
    trace.write_text(edited)
    os.utime(trace, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert [w["trace"]["path"] for w in study('"all"').workloads] != files
    trace.write_text("".join(lines))
    for bad, why in (("[7]", r"s.toml:1: traces: .*volumes: no volume 7 in the file \(its volumes: 0, 1, 2\)"),
                     ('"top:0"', "top:N"), ("[]", "the list is empty"), ('"some"', "give \"all\"")):
        with pytest.raises(wafer.ConfigError, match=why):
            study(bad)
    df = sweep.run(every, tmp_path / "s.sqlite", jobs=1, progress=False)
    assert set(df.status) == {"done"} and sorted(df.workload) == ["fleet.csv#0", "fleet.csv#1", "fleet.csv#2"]
    assert (df.user_writes > 0).all()


def test_a_thousand_volume_fleet_runs_and_resumes(tmp_path, monkeypatch):
    """Issue 47's goal at test size: a generated 1,000-volume file with skewed
    volume sizes, under the replayer's conventions, every volume a job per
    policy; a second run of the study (after a partial one) runs only what
    is missing and gives the same numbers."""
    import random

    monkeypatch.setenv("WAFER_CACHE_DIR", str(tmp_path / "cache"))
    rng = random.Random(5)
    fp = [40 + 4000 // (v + 1) for v in range(1000)]
    reqs = sorted((rng.random(), v) for v in range(1000) for _ in range(2 * fp[v]))
    trace = tmp_path / "fleet.csv"
    trace.write_text("".join(f"{128166372003061629 + i * 100},vol,{v},Write,{int(fp[v] * rng.random()) * 4096},"
                             f"4096,1\n" for i, (_, v) in enumerate(reqs)))

    def study(volumes):
        return {"setup": "sepbit-replayer", "policies": ["base", "sepbit"],
                "traces": [{"path": str(trace), "volumes": volumes}]}

    db = tmp_path / "f.sqlite"
    part = sweep.run(study("top:100"), db, jobs=2, progress=False)
    assert len(part) == 200 and set(part.status) == {"done"}
    every = sweep.run(study("all"), db, jobs=2, progress=False)
    assert len(every) == 2000 and set(every.status) == {"done"}
    assert (every.runs == 1).all(), "the first 100 volumes' jobs were not run again"
    merged = every.set_index(["workload", "policy"]).waf
    assert merged.loc[part.set_index(["workload", "policy"]).index].tolist() == \
        part.set_index(["workload", "policy"]).waf.tolist()
