import json
import subprocess
import sys

import pytest


def wafer(*args, ok=True):
    p = subprocess.run([sys.executable, "-m", "wafer", *args], capture_output=True, text=True, timeout=300)
    if ok:
        assert p.returncode == 0, p.stderr
    return p


SMALL = ["--logical-blocks", "16384", "--segment-blocks", "32", "--writes", "60000"]


def test_replay_json_has_the_documented_keys():
    out = json.loads(wafer("replay", "--policy", "two-r", "--workload", "zipf:1.0", *SMALL, "--json").stdout)
    for key in ("policy", "waf", "steady_waf", "user_writes", "gc_writes", "elapsed_seconds",
                "user_writes_per_second"):
        assert key in out
    assert out["policy"] == "two-r" and out["user_writes"] == 60000


def test_replay_human_output_and_timeseries(tmp_path):
    csv = tmp_path / "ts.csv"
    p = wafer("replay", "--workload", "hotcold:0.9:0.1", "--victim", "cost-benefit", "--op", "0.28",
              *SMALL, "--seed", "4", "--timeseries", str(csv), "-q")
    assert "steady-state WAF" in p.stdout and "base / cost-benefit" in p.stdout
    lines = csv.read_text().splitlines()
    assert lines[0].startswith("window,drive_writes") and len(lines) > 10


def test_capacity_flag_and_drive_writes():
    out = json.loads(wafer("replay", "--capacity", "64MiB", "--drive-writes", "2", "--json").stdout)
    assert out["geometry"]["logical_blocks"] == 16384 and out["user_writes"] == 32768


def test_compare_json_and_report(tmp_path):
    p = wafer("compare", "--workload", "uniform", "--victims", "greedy,fifo", *SMALL, "--json",
              "--report", str(tmp_path))
    res = json.loads(p.stdout)["results"]
    # The representative set by default (`--policies all` runs every one: test_api's compare test).
    names = ["base", "two-r", "sepbit", "midas", "dogi", "nodap"]
    assert [(r["policy"], r["victim"]) for r in res] == [(a, b) for b in ("greedy", "fifo") for a in names]
    # Bars, WAF over time, group sizes (at the end and over time), victims; the oracles bring accuracy curves
    # and group lifetimes.
    assert (tmp_path / "report.html").read_text().count("Plotly.newPlot") == 7
    assert (tmp_path / "figures" / "steady-waf.svg").exists()
    assert json.loads((tmp_path / "results.json").read_text())["results"]


def test_policies_listing():
    p = wafer("policies", "--defaults")
    assert "base" in p.stdout and "two-r" in p.stdout and "cost-benefit" in p.stdout
    js = json.loads(wafer("policies", "--json").stdout)
    assert {x["name"] for x in js["policies"]} >= {"base", "two-r"}


def test_demo_quick_covers_every_family_and_resumes(tmp_path):
    p = wafer("demo", "--quick", "--out", str(tmp_path / "rep"), "-q")
    assert "steady WAF" in p.stdout and "two-r" in p.stdout
    page = (tmp_path / "rep" / "report.html").read_text()
    for family in ("no separation", "rule-based", "learned", "oracle"):
        assert f">{family}<" in page
    out = json.loads(wafer("demo", "--quick", "--out", str(tmp_path / "rep"), "--json").stdout)
    assert len(out["results"]) == 14 and {r["runs"] for r in out["results"]} == {1}, "the second demo reuses the runs"


@pytest.mark.parametrize(
    "args, message",
    [
        (["replay", "--policy", "nope"], "unknown policy 'nope'"),
        (["replay", "--workload", "zipf:oops"], "not a number"),
        (["replay", "--op", "0"], "op"),
        (["replay", "--logical-blocks", "100", "--segment-blocks", "1000"], "segment_blocks"),
        (["replay", "--param", "x=1"], "unknown parameter 'x'"),
        (["replay", "--capacity", "huge"], "cannot read size"),
    ],
)
def test_bad_input_is_a_clear_error_without_traceback(args, message):
    p = wafer(*args, ok=False)
    assert p.returncode == 2
    assert message in p.stderr and "Traceback" not in p.stderr and "panicked" not in p.stderr


def test_workload_naming_a_file_replays_it_as_a_trace(tmp_path):
    f = tmp_path / "trace.csv"
    f.write_text("".join(f"128166372003061629,hm,0,Write,{(i % 100) * 4096},4096,0\n" for i in range(400)))
    out = json.loads(wafer("replay", "--workload", str(f), "--op", "0.5", "--segment-blocks", "4", "--json").stdout)
    assert out["trace_format"] == "msr" and out["user_writes"] == 400


def test_help_teaches():
    p = wafer("replay", "--help")
    assert "zipf[:THETA]" in p.stdout and "--victim" in p.stdout and "--warmup-drive-writes" in p.stdout
    assert "--trace FILE" in p.stdout and "blkparse" in p.stdout


def test_log_structured_setup_and_segment_size():
    out = json.loads(wafer("replay", "--policy", "sepbit", "--victim", "cost-benefit", "--workload", "zipf:1.0",
                           "--gc-mode", "garbage-proportion", "--segment-size", "256KiB", "--logical-blocks", "16384",
                           "--drive-writes", "4", "--json").stdout)
    g = out["geometry"]
    assert g["segment_blocks"] == 64
    # sized as logical / (1 - 0.15) plus 64 segments of slack, whatever --op says
    assert g["physical_blocks"] == (-(-16384 * 100 // 85) + 64 * 64) // 64 * 64
    hist = out["victim_valid_histogram"]
    assert sum(hist[17:]) == 0, "no victim with 85% or more valid blocks"
    e = wafer("replay", "--gc-mode", "garbage-proportion", "--gp-threshold", "1.5", ok=False)
    assert e.returncode == 2 and "gp_threshold" in e.stderr


def test_midas_reports_the_configuration_its_model_chose():
    args = ("replay", "--policy", "midas", "--workload", "zipf:1.0", "--logical-blocks", "16384",
            "--segment-blocks", "16", "--drive-writes", "4")
    out = json.loads(wafer(*args, "--json").stdout)
    state = out["policy_state"]
    assert state["configured"] and state["model_runs"] >= 2
    assert len(state["group_segments"]) == len(state["predicted_valid_ratios"]) >= 2
    assert "policy state" in wafer(*args).stdout
    e = wafer("replay", "--policy", "midas", "--param", "last_victim=lru", ok=False)
    assert e.returncode == 2 and "cost-benefit, greedy" in e.stderr


def test_reproduce_quick_gives_a_table_claims_and_json(tmp_path):
    out = tmp_path / "r.json"
    store = tmp_path / "r.sqlite"
    p = wafer("reproduce", "rule-based", "--quick", "--seeds", "1", "-q", "--out", str(out), "--store", str(store))
    assert "#### OP 7%, victim `greedy`" in p.stdout and "`sepbit`" in p.stdout
    assert "#### Claims" in p.stdout and p.stdout.count("* **holds**") + p.stdout.count("* **fails**") == 3
    d = json.loads(out.read_text())
    assert d["experiment"] == "rule-based" and d["quick"] is True and d["seeds"] == [1]
    combos = {(r["op"], r["victim"], r["workload"], r["policy"]) for r in d["results"]}
    assert len(combos) == len(d["results"]) == 3 * 2 * 5 * len(d["policies"])
    assert all(r["steady_waf"] >= 1.0 for r in d["results"])
    assert {c["status"] for c in d["claims"]} <= {"holds", "fails"} and d["ran"] == len(d["results"])
    again = json.loads(wafer("reproduce", "rule-based", "--quick", "--seeds", "1", "--json", "--store", str(store)).stdout)
    assert again["ran"] == 0 and again["reused"] == len(d["results"]), "a rerun resumes from the store"


def test_reproduce_lists_every_experiment_with_its_figure():
    listing = json.loads(wafer("reproduce", "--list", "--json").stdout)
    assert [e["name"] for e in listing] == ["rule-based", "oracle", "learned", "gap", "streams", "oracle-assist",
                                           "autoblox", "timing", "shiro", "shiro-fresh", "dogi-configs"]
    assert all(e["figure"] and (e["claims"] or e["runner"]) for e in listing)
    assert "DOGI Fig. 14" in wafer("reproduce", "--list").stdout


def test_reproduce_shiro_quick_prints_its_claims(tmp_path):
    out = wafer("reproduce", "shiro", "--quick", "--seeds", "1", "--store", str(tmp_path / "s.sqlite"), "-q").stdout
    assert "`shiro-ng`" in out and "Fig. 9's ablation order" in out
    assert out.count("**holds**") + out.count("**fails**") + out.count("**undecided**") == 10


def test_reproduce_shiro_fresh_runs_a_fresh_partial_drive(tmp_path):
    d = json.loads(wafer("reproduce", "shiro-fresh", "--quick", "--seeds", "1", "--json",
                         "--store", str(tmp_path / "f.sqlite")).stdout)
    assert {r["workload"] for r in d["results"]} == {"zipf:1.0,region=0.7", "hotcold:0.9:0.1,region=0.7",
                                                     "phase,region=0.7"}
    assert len(d["claims"]) == 7 and "extra writes" in d["claims"][2]["claim"]
