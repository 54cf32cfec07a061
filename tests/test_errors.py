"""Bad input: a clear error naming the problem; never a Rust panic."""

import pytest

import wafer


@pytest.mark.parametrize(
    "device, match",
    [
        (wafer.Device(logical_blocks=0), "logical_blocks.*zero capacity"),
        (wafer.Device(op=0.0), "op.*> 0"),
        (wafer.Device(op=-0.2), "op"),
        (wafer.Device(logical_blocks=100, segment_blocks=1000), "segment_blocks.*larger than the device"),
        (wafer.Device(logical_blocks=1000, physical_blocks=1000), "physical_blocks"),
        (wafer.Device(block_size=3000), "block_size"),
        (wafer.Device(logical_blocks=990, physical_blocks=1000, segment_blocks=100), "over-provisioning too small"),
    ],
)
def test_impossible_devices(device, match):
    with pytest.raises(wafer.ConfigError, match=match):
        wafer.replay("base", "uniform", device=device, writes=10)


def test_unknown_policy_lists_known():
    with pytest.raises(wafer.PolicyError, match=r"unknown policy 'sepbitt'; known: base, two-r"):
        wafer.replay("sepbitt", "uniform", writes=10)


def test_unknown_victim_lists_known():
    with pytest.raises(wafer.PolicyError, match="greedy, cost-benefit, fifo"):
        wafer.replay("base", "uniform", victim="lru", writes=10)


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
