"""Timing mode seen from Python and the CLI: presets, results, time series, errors."""

import json
import subprocess
import sys

import pytest

import wafer


def cli(*args, ok=True):
    p = subprocess.run([sys.executable, "-m", "wafer", *args], capture_output=True, text=True, timeout=300)
    if ok:
        assert p.returncode == 0, p.stderr
    return p


def small_femu(**kw):
    ssd = wafer.timing_config("femu")
    op = ssd["flash"]["overprovisioning"] / (1 - ssd["flash"]["overprovisioning"])
    return wafer.replay("two-r", "zipf:1.0,reads=0.3", device=wafer.Device(capacity="512MiB", op=op),
                        drive_writes=2.0, timing="femu", fit_device=True, **kw)


def test_presets_are_listed_and_load():
    names = {p["name"] for p in wafer.timing_presets()}
    assert {"intel750", "mqsim-default", "femu", "850pro", "zssd"} <= names
    c = wafer.timing_config("intel750")
    assert c["flash"]["channels"] == 12 and c["host"]["interface"] == "nvme"


def test_a_preset_file_with_an_unknown_key_names_it(tmp_path):
    p = tmp_path / "mine.toml"
    p.write_text("[flash]\nchanels = 4\n")
    with pytest.raises(wafer.ConfigError, match="chanels"):
        wafer.timing_config(p)
    p.write_text("[flash]\nallocation = \"CWDX\"\n")
    with pytest.raises(wafer.ConfigError, match="flash.allocation"):
        wafer.timing_config(p)


def test_timed_replay_reports_latency_throughput_and_energy():
    r = small_femu(queue_depth=8)
    t = r.timing
    assert t["preset"] == "femu" and t["arrival"] == "closed"
    for kind in ("read_latency", "write_latency"):
        for view in ("device", "end_to_end"):
            s = t[kind][view]
            assert s["count"] > 0 and s["min"] <= s["p50"] <= s["p99"] <= s["p999"] <= s["max"]
    assert t["throughput"]["iops"] > 0 and t["energy"]["average_power_w"] > 0
    assert t["requests"] == t["arrived"] and t["invariant_violations"] == 0
    assert len(t["utilisation"]["dies"]) == 64
    ts = r.timeseries()
    assert "write_p99_us" in ts and any(x is not None for x in ts["write_p99_us"])
    row = r.summary()
    assert row["write_p99_us"] == t["write_latency"]["device"]["p99"]


def test_timed_runs_repeat_exactly():
    a, b = small_femu(queue_depth=4).timing, small_femu(queue_depth=4).timing
    for k in ("requests_per_wall_second", "flash_ops_per_wall_second", "wall_seconds", "precondition_seconds"):
        a.pop(k), b.pop(k)
    assert a == b


def test_cli_timing_json_table_and_presets(tmp_path):
    args = ["--timing", "femu", "--fit-device", "--capacity", "512MiB", "--drive-writes", "2", "--queue-depth", "8"]
    out = json.loads(cli("replay", "--workload", "uniform,reads=0.5", *args, "--json").stdout)
    assert out["timing"]["throughput"]["iops"] > 0
    text = cli("replay", "--workload", "uniform", *args, "-q").stdout
    assert "write latency (device)" in text and "energy" in text and "p99.9" in text
    table = cli("compare", "--policies", "base,two-r", "--workload", "zipf:1.0", *args, "-q").stdout
    assert "write p99 us" in table
    listing = cli("presets").stdout
    assert "intel750" in listing and "zssd" in listing
    toml = cli("presets", "intel750").stdout
    assert "channels = 12" in toml
    assert "[precondition]" in toml and "drive_writes = 2" in toml
    mine = tmp_path / "mine.toml"
    mine.write_text(toml.replace("channels = 12", "channels = 6"))
    out = json.loads(cli("replay", "--workload", "uniform", "--timing", str(mine), "--fit-device", "--capacity",
                         "256MiB", "--drive-writes", "1.5", "--json").stdout)
    assert len(out["timing"]["utilisation"]["channels"]) == 6


def test_arrival_without_timing_is_an_error():
    p = cli("replay", "--arrival", "closed", "--logical-blocks", "4096", ok=False)
    assert p.returncode == 2 and "--arrival" in p.stderr


def test_a_capacity_counts_the_presets_pages():
    """femu's pages are 16 KiB: 512 MiB is 32,768 of them, not 131,072 blocks of 4 KiB."""
    r = small_femu(queue_depth=4)
    assert r.to_dict()["geometry"]["logical_blocks"] == (512 << 20) // 16384
    assert r.to_dict()["geometry"]["block_size"] == 16384


def test_a_timed_run_uses_the_whole_drive_unless_fitted(tmp_path):
    """A device size needs --fit-device; a trace replayed with the defaults is placed inside the preset's
    whole drive, preconditioned apart from it, and its writes reach flash (the end's flush)."""
    p = cli("replay", "--workload", "uniform", "--timing", "femu", "--capacity", "512MiB", ok=False)
    assert p.returncode == 2 and "--capacity" in p.stderr and "--fit-device" in p.stderr
    with pytest.raises(wafer.ConfigError, match="fit_device"):
        wafer.replay("base", "uniform", timing="femu", device=wafer.Device(logical_blocks=4096))
    trace = tmp_path / "hm_0.csv"
    trace.write_text("".join(f"{128166372003061629 + i * 1000},hm,0,Write,{(1 << 40) + i * 16384},16384,1\n"
                             for i in range(300)))
    out = json.loads(cli("replay", "--trace", str(trace), "--policy", "base", "--timing", "femu",
                         "--precondition", "1", "--json").stdout)
    t, geo = out["timing"], out["geometry"]
    ssd = wafer.timing_config("femu")["flash"]
    raw = (ssd["channels"] * ssd["chips_per_channel"] * ssd["dies_per_chip"] * ssd["planes_per_die"]
           * ssd["blocks_per_plane"] * ssd["pages_per_block"])
    assert geo["physical_blocks"] == raw and not t["fit_device"]
    assert out["trace"]["remapped"] and t["requests"] == 300
    assert t["precondition_writes"] == geo["logical_blocks"]
    # femu's 2 MiB cache holds 128 of the 300 pages: the rest reached flash while requests ran.
    cap = t["cache"]["capacity_pages"]
    assert cap == 128 and t["flush"]["pages"] == cap and t["flush"]["user_programs"] == cap
    assert t["flash"]["user_programs"] == 300
    codes = {w["code"] for w in out["warnings"]}
    assert "writes-stayed-in-cache" not in codes and "device-larger-than-footprint" not in codes
    text = cli("replay", "--trace", str(trace), "--policy", "base", "--timing", "femu", "--precondition", "1",
               "--no-flush", "-q").stdout
    assert "whole drive" in text and "128 dirty pages left" in text


def test_a_huge_queue_depth_costs_only_the_requests_it_holds():
    # A closed loop's free slots are a count: --queue-depth 1e9 for a few
    # thousand requests once allocated 8 GB.
    code = (
        "import resource, wafer\n"
        "r = wafer.replay('base', 'uniform', writes=3277, device=wafer.Device(logical_blocks=1 << 20, op=0.3),"
        " timing='intel750', fit_device=True, precondition=0, queue_depth=10**9, arrival='closed')\n"
        "assert r.timing['requests'] > 0\n"
        # VmHWM, not ru_maxrss: Linux carries ru_maxrss over exec from the
        # forking parent (the test runner's own peak), VmHWM is this process's.
        "print(next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM')))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert int(p.stdout.split()[-1]) < 1_000_000, p.stdout  # KiB
