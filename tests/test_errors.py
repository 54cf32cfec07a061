"""Bad input: a clear error naming the problem; never a Rust panic."""

import pytest

import wafer


@pytest.mark.parametrize(
    "device, match",
    [
        (dict(logical_blocks=0), "logical_blocks.*zero capacity"),
        (dict(op=0.0), "op.*> 0"),
        (dict(op=-0.2), "op"),
        (dict(logical_blocks=100, segment_blocks=1000), "segment_blocks.*larger than the device"),
        (dict(logical_blocks=1000, physical_blocks=1000), "physical_blocks"),
        (dict(block_size=3000), "block_size"),
    ],
)
def test_impossible_devices_fail_at_construction(device, match):
    with pytest.raises(wafer.ConfigError, match=match):
        wafer.Device(**device)


def test_a_device_too_small_for_the_policy_names_the_flags():
    # The device itself is valid; what does not fit is the reserve plus the policy's open segments.
    device = wafer.Device(logical_blocks=990, physical_blocks=1000, segment_blocks=100)
    with pytest.raises(wafer.ConfigError, match="over-provisioning too small.*--op"):
        wafer.replay("base", "uniform", device=device, writes=10)


def test_unknown_policy_lists_known():
    with pytest.raises(wafer.PolicyError, match=r"unknown policy 'sepbitt'; known: base, two-r"):
        wafer.replay("sepbitt", "uniform", writes=10)


def test_unknown_victim_lists_known():
    with pytest.raises(wafer.PolicyError, match="greedy, cost-benefit, fifo"):
        wafer.replay("base", "uniform", victim="lfu", writes=10)


def test_unknown_parameter():
    with pytest.raises(wafer.PolicyError, match="unknown parameter 'groups'"):
        wafer.replay("base", "uniform", params={"groups": 3}, writes=10)


@pytest.mark.parametrize(
    "spec, match",
    [("zipfian", "unknown workload 'zipfian'; known: uniform"), ("zipf:x", "not a number"),
     ("uniform,size=0", "size"), ("hotcold:2:0.1", r"\(0, 1\)"), ("uniform,colour=red", "unknown key 'colour'")],
)
def test_bad_workload_specs(spec, match):
    with pytest.raises(wafer.WorkloadError, match=match):
        wafer.replay("base", spec, writes=10)


def test_errors_share_a_base_class():
    for cls in (wafer.ConfigError, wafer.PolicyError, wafer.WorkloadError, wafer.SimulationError):
        assert issubclass(cls, wafer.WaferError)


def test_errors_cross_process_boundaries():
    """A worker's error reaches its pool's parent (pickled by its module path, wafer._core)."""
    import pickle

    for cls in (wafer.PolicyError, wafer.ConfigError, wafer.TraceError, wafer.CheckpointError):
        assert cls.__module__ == "wafer._core"
        e = pickle.loads(pickle.dumps(cls("what went wrong")))
        assert type(e) is cls and str(e) == "what went wrong"


@pytest.mark.parametrize(
    "args, flag",
    [
        (["--timing", "intel750", "--precondition", "nan"], "--precondition"),
        (["--timing", "intel750", "--precondition", "-1"], "--precondition"),
        (["--timing", "intel750", "--think-us", "nan"], "--think-us"),
        (["--timing", "intel750", "--think-us", "1e16"], "--think-us"),
        (["--op", "inf"], "--op"),
        (["--warmup-drive-writes", "nan"], "--warmup-drive-writes"),
        (["--timing", "intel750", "--segment-blocks", "64"], "--segment-blocks"),
        (["--timing", "intel750", "--block-size", "8192"], "--block-size"),
        (["--capacity", "1GiB", "--gc-reserve", "1"], "--gc-reserve"),  # once ran as 2, silently
    ],
)
def test_bad_numbers_and_shapes_name_the_flag(cli, args, flag):
    """NaN, inf, negative and out-of-range values, and device shapes a timed run replaces, are refused
    naming the flag (rc 2, no traceback), never a serde column or a silently changed run."""
    p = cli("replay", "--workload", "uniform", "--writes", "100", *args, ok=False)
    assert p.returncode == 2, p.stderr
    assert flag in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_an_address_space_limit_is_a_clear_error_not_a_signal():
    """Under `ulimit -v` a run too large for it is refused naming the limit (it died by SIGABRT)."""
    import resource
    import subprocess
    import sys

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))

    p = subprocess.run([sys.executable, "-m", "wafer", "replay", "--workload", "uniform", "--capacity", "4TiB",
                        "--writes", "1000"], capture_output=True, text=True, timeout=120, preexec_fn=limit)
    assert p.returncode == 2, p.stderr
    assert "address-space limit" in p.stderr and "Traceback" not in p.stderr, p.stderr
