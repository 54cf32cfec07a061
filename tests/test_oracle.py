"""Future knowledge from Python and the CLI: --accuracy, oracles, the NoDaP
search and its reusable result, the annotation cache next to a trace."""

import json
import subprocess
import sys

import pytest

import wafer
from wafer import oracle


def wafer_cli(*args, ok=True):
    p = subprocess.run([sys.executable, "-m", "wafer", *args], capture_output=True, text=True, timeout=300)
    if ok:
        assert p.returncode == 0, p.stderr
    return p


SMALL = ["--logical-blocks", "16384", "--segment-blocks", "64", "--writes", "65536"]
DEV = wafer.Device(logical_blocks=16384, segment_blocks=64)


def test_accuracy_json_and_per_window_columns():
    out = json.loads(wafer_cli("replay", "--policy", "sepbit", "--workload", "zipf:1.0", *SMALL,
                               "--accuracy", "--json").stdout)
    user = out["accuracy"]["user"]
    assert user["classes"] == 2 and 0 < user["accuracy"] < 1
    assert sum(map(sum, user["confusion"])) == user["predictions"]
    assert set(user["binary"]) == {"precision", "recall", "f1"}
    assert out["accuracy"]["gc"] is None, "SepBIT's GC groups make no lifetime claim"
    w = out["windows"][-1]
    assert 0 < w["cumulative_user_accuracy"] < 1 and "gc_accuracy" in w
    assert out["annotation"]["writes"] == 65536  # the stream (the prefill is implied)
    assert all("lifetime" in g for g in out["groups"])


def test_accuracy_off_costs_nothing_and_reports_nothing():
    r = wafer.replay("sepbit", "zipf:1.0", writes=65536, device=DEV)
    assert r.accuracy is None and r.raw["annotation"] is None


def test_oracle_search_result_is_reusable(tmp_path):
    cfg = tmp_path / "nodap.json"
    p = wafer_cli("oracle", "search", "--workload", "hotcold:0.9:0.1", *SMALL, "-o", str(cfg), "-q")
    assert "<- chosen" in p.stdout and "--param config=" in p.stdout
    found = json.loads(cfg.read_text())
    assert found["groups"] == len(found["birs"]) + 1 and found["trials"]
    out = json.loads(wafer_cli("replay", "--policy", "nodap", "--workload", "hotcold:0.9:0.1", *SMALL,
                               "--param", f"config={cfg}", "--json").stdout)
    assert out["steady_waf"] == pytest.approx(found["waf"], abs=1e-12)
    assert out["accuracy"]["user"]["accuracy"] == 1.0


def test_nodap_replay_searches_first_and_beats_the_others():
    r = wafer.replay("nodap", "hotcold:0.9:0.1", writes=65536, device=DEV)
    assert r.raw["nodap_search"]["trials"] > 5
    assert r.policy_state["birs"] == r.raw["nodap_search"]["birs"]
    for p in ("base", "sepbit", "midas", "oracle-hotcold"):
        other = wafer.replay(p, "hotcold:0.9:0.1", writes=65536, device=DEV)
        assert r.steady_waf <= other.steady_waf, p


def test_search_api_reports_trials():
    seen = []
    res = oracle.search("zipf:1.0", writes=65536, device=DEV, max_groups=3, on_trial=seen.append)
    assert len(seen) == len(res["trials"]) and res["groups"] <= 3
    assert all(t["birs"] for t in seen)


def test_assisted_variant_and_table_columns():
    rs = wafer.compare(["midas", "midas+ngc"], "zipf:1.0", writes=65536, device=DEV, accuracy=True)
    table = wafer.format_table(rs)
    assert "user acc" in table and "midas+ngc" in table
    ngc = rs[1]
    assert ngc.policy == "midas+ngc" and 0 < ngc.accuracy["gc"]["accuracy"] <= 1
    dest = ngc.policy_state["assist"]["gc_destinations"]
    assert ngc.policy_state["assist"]["gc"] is True and len(dest["bounds"]) == len(dest["order"]) - 1
    assert ngc.accuracy["gc"]["classes"] <= len(dest["order"])


def test_trace_annotation_is_cached_in_the_cache_dir(tmp_path):
    trace = tmp_path / "t.csv"
    lines = [f"{128166372003061629 + i},hm,0,Write,{(i * 7 % 64) * 4096},4096,10" for i in range(500)]
    trace.write_text("\n".join(lines) + "\n")
    cache = tmp_path / "cache"
    first = json.loads(wafer_cli("oracle", "annotate", str(trace), "--cache-dir", str(cache), "--json").stdout)
    assert first["cached"] and not first["reused"] and first["writes"] == 500 and first["bytes"] > 0
    assert first["path"].startswith(str(cache / "t.csv.")) and (cache / first["path"].split("/")[-1]).exists()
    again = json.loads(wafer_cli("oracle", "annotate", str(trace), "--cache-dir", str(cache), "--json").stdout)
    assert again["reused"] and again["path"] == first["path"]
    r = wafer.replay("oracle-hotcold", trace=str(trace), cache_dir=cache,
                     device=wafer.Device(logical_blocks=64, segment_blocks=4, op=1.0))
    assert r.raw["annotation"]["reused"] and r.accuracy["user"]["accuracy"] == 1.0


@pytest.mark.parametrize("args, message", [
    (["replay", "--policy", "midas+xyz"], "unknown oracle assist '+xyz'"),
    (["replay", "--policy", "midas+ngrp"], "multi-class"),
    (["replay", "--policy", "nodap+nu"], "already places by the future"),
    (["replay", "--policy", "nodap", "--param", "config=/nonexistent.json"], "/nonexistent.json"),
    (["replay", "--policy", "nodap", "--param", "birs=[10,5]"], "increasing"),
])
def test_bad_oracle_input_is_a_clear_error(args, message):
    p = wafer_cli(*args, *SMALL, ok=False)
    assert p.returncode == 2 and message in p.stderr and "Traceback" not in p.stderr


def test_report_has_accuracy_curves(tmp_path):
    from wafer.report import write_report

    rs = wafer.compare(["sepbit", "nodap"], "zipf:1.0", writes=65536, device=DEV, accuracy=True,
                       params={"nodap": {"search": False}})
    page = write_report(rs, tmp_path, static_formats=()).read_text()
    assert "user-written blocks, within each window" in page
    assert "GC-written blocks, since the start" in page


def test_nodap_search_on_a_small_remapped_trace_skips_configurations_that_do_not_fit(tmp_path):
    trace = tmp_path / "t.csv"
    lines = [f"{128166372003061629 + i},hm,0,Write,{((i * 7919) % 3000) * 4096 * (1 + i % 3)},4096,10"
             for i in range(30000)]
    trace.write_text("\n".join(lines) + "\n")
    out = json.loads(wafer_cli("replay", "--trace", str(trace), "--remap", "--policy", "nodap",
                               "--segment-blocks", "32", "--json").stdout)
    assert out["nodap_search"]["groups"] >= 2 and out["steady_waf"] >= 1.0
