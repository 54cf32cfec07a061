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
