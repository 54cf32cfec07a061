"""A real trace with default flags, as a new user runs it: the device is the
trace's footprint, a short trace is repeated, warnings say when numbers mean
little, compare keeps going past a policy that does not fit, and bad flags
name themselves."""

import json

import pytest

import wafer


def msr_lines(blocks: int, n: int) -> str:
    """An MSR Cambridge CSV: ``n`` 4 KiB writes cycling over ``blocks`` blocks
    scattered over a 4 TB volume, 1 ms apart."""
    t0 = 128166372003061629
    return "".join(
        f"{t0 + i * 10_000},hm,0,Write,{(i * 7919 % blocks) * 1_000_003 * 4096},4096,100\n" for i in range(n)
    )


@pytest.fixture
def hm(tmp_path):
    p = tmp_path / "hm_0.csv"
    p.write_text(msr_lines(3000, 12_000))
    return p


def test_default_flags_size_the_device_from_the_footprint(hm):
    r = wafer.replay("sepbit", trace=hm)
    t = r.raw["trace"]
    assert (t["sizing"], t["footprint_blocks"]) == ("footprint", 3000)
    assert r.raw["geometry"]["logical_blocks"] == 3000
    assert r.raw["geometry"]["segment_blocks"] < 256
    assert r.gc_writes > 0 and r.waf > 1.0
    assert "segments-fitted" in {w["code"] for w in r.warnings}


def test_repeat_reaches_a_steady_state(hm):
    once = wafer.replay("two-r", trace=hm)
    many = wafer.replay("two-r", trace=hm, repeat=5)
    assert many.user_writes == 5 * once.user_writes
    assert many.raw["trace"]["passes"] == 5
    assert "short-steady-state" not in {w["code"] for w in many.warnings}


def test_gc_never_ran_is_a_warning(tmp_path):
    p = tmp_path / "short.csv"
    p.write_text(msr_lines(100, 50))
    r = wafer.replay("base", trace=p, device=wafer.Device(logical_blocks=10_000, segment_blocks=16), remap=True)
    codes = {w["code"] for w in r.warnings}
    assert {"gc-never-ran", "warm-up-not-reached", "device-larger-than-footprint"} <= codes


def test_compare_returns_a_result_set_and_keeps_going(hm):
    rs = wafer.compare(["base", "sepbit", "nosuch"], trace=hm, device=wafer.Device(segment_blocks=256))
    assert isinstance(rs, wafer.ResultSet) and len(rs) == 3
    failed = [r for r in rs if r.error]
    assert {r.policy for r in failed} == {"base", "sepbit", "nosuch"}
    assert "--segment-blocks" in failed[0].error
    rs = wafer.compare(["base", "sepbit"], trace=hm)
    df = rs.to_pandas()
    assert list(df["policy"]) == ["base", "sepbit"]
    assert {"steady_waf", "warnings", "error"} <= set(df.columns)
    assert rs.to_arrow().num_rows == 2
    table = wafer.format_table(rs)
    assert "sorted by steady WAF" in table and "warning (all runs)" in table


def test_memory_refusal(hm):
    with pytest.raises(wafer.ResourceError, match="--address-space"):
        wafer.replay("base", trace=hm, address_space=True, memory_limit="1GiB")


def test_bad_devices_fail_at_construction():
    for kw in ({"op": 0}, {"op": -0.1}, {"block_size": 1000}, {"segment_blocks": 0}, {"capacity": "lots"}):
        with pytest.raises(wafer.ConfigError):
            wafer.Device(**kw)


def test_replay_and_train_share_the_default_workload():
    import inspect

    assert inspect.signature(wafer.replay).parameters["workload"].default == "zipf:1.0"
    assert inspect.signature(wafer.train).parameters["workload"].default == "zipf:1.0"


def test_cli_real_trace(cli, hm, tmp_path):
    p = cli("replay", "--trace", str(hm), "--policy", "sepbit", "--repeat", "3", "--json", "-q")
    r = json.loads(p.stdout)
    assert r["trace"]["passes"] == 3 and r["trace"]["sizing"] == "footprint"
    assert r["warnings"] and all({"code", "message"} <= set(w) for w in r["warnings"])
    p = cli("compare", "--trace", str(hm), "--policies", "base,two-r", "-q")
    assert "sorted by steady WAF" in p.stdout
    p = cli("replay", "--trace", str(hm), "--address-space", "--memory-limit", "1GiB", ok=False)
    assert p.returncode == 2 and "not enough memory" in p.stderr and "--address-space" in p.stderr


@pytest.mark.parametrize("args,flag", [
    (["--writes", "-5"], "--writes"),
    (["--drive-writes", "0"], "--drive-writes"),
    (["--repeat", "0"], "--repeat"),
    (["--extend", "0"], "--extend"),
    (["--segment-blocks", "0"], "--segment-blocks"),
])
def test_cli_bad_numbers_name_the_flag(cli, args, flag):
    p = cli("replay", *args, ok=False)
    assert p.returncode == 2 and flag in p.stderr, p.stderr
