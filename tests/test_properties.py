"""Hypothesis: for any small device, policy, selector and workload the run
completes, the invariant checker passes throughout, WAF >= 1 and the
accounting adds up."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wafer

specs = st.sampled_from(["uniform", "zipf:0.8", "zipf:1.2,size=1-8", "hotcold:0.8:0.2", "seq,size=5",
                         "phase:0.9:0.1:0.5", "uniform,reads=0.3", "mix:zipf,size=4+seq,iops=50"])


@settings(max_examples=40, deadline=None)
@given(
    policy=st.sampled_from(["base", "two-r"]),
    victim=st.sampled_from(["greedy", "cost-benefit", "fifo"]),
    spec=specs,
    logical=st.integers(200, 3000),
    op=st.floats(0.15, 0.5),
    seg=st.sampled_from([4, 8, 16]),
    prefill=st.booleans(),
    seed=st.integers(0, 2**32),
)
def test_any_run_keeps_the_invariants(policy, victim, spec, logical, op, seg, prefill, seed):
    dev = wafer.Device(logical_blocks=logical, op=op, segment_blocks=seg, prefill=prefill, check_every=97)
    groups = 1 if policy == "base" else 2
    segments = int(logical * (1 + op)) // seg
    reserved = dev.gc_low + groups  # the GC reserve (the same for every policy) + one open segment per group
    if (segments - reserved) * seg <= logical:
        with pytest.raises(wafer.ConfigError, match="over-provisioning too small"):
            wafer.replay(policy, spec, device=dev, victim=victim, writes=5 * logical, seed=seed)
        return
    r = wafer.replay(policy, spec, device=dev, victim=victim, writes=5 * logical, seed=seed)
    assert r.user_writes == 5 * logical
    assert r.waf is None or r.waf >= 1.0
    assert r.raw["counters"]["victim_valid_blocks"] == r.gc_writes
    assert sum(g["valid_blocks"] for g in r.groups) <= logical


@settings(max_examples=300, deadline=None)
@given(
    logical=st.integers(-5, 5000),
    physical=st.one_of(st.none(), st.integers(-5, 6000)),
    op=st.floats(allow_nan=True, allow_infinity=True),
    seg=st.integers(-1, 300),
    block=st.sampled_from([0, 1, 512, 1000, 4096]),
    gc_low=st.integers(-1, 20),
    gc_high=st.integers(-1, 20),
    warm=st.floats(allow_nan=True, allow_infinity=True),
    window=st.floats(allow_nan=True, allow_infinity=True),
    spec=st.one_of(specs, st.text(max_size=30),
                   st.from_regex(r"(zipf|hotcold|phase|mix):[-0-9.:,=a-z+]{0,20}", fullmatch=True)),
    writes=st.integers(-1, 5000),
)
def test_bad_input_never_panics(logical, physical, op, seg, block, gc_low, gc_high, warm, window, spec, writes):
    try:
        dev = wafer.Device(logical_blocks=logical, physical_blocks=physical, op=op, segment_blocks=seg,
                           block_size=block, gc_low=gc_low, gc_high=gc_high, warmup_drive_writes=warm,
                           window_drive_writes=window)
        wafer.replay("two-r", spec, device=dev, writes=writes)
    except wafer.WaferError:
        pass  # a clear error is fine; a PanicException (a BaseException) or anything else fails the test
