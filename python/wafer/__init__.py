"""wafer: a trace-driven laboratory for data placement in flash SSDs.

Replay a workload through a simulated flash translation layer under a
placement policy and a GC victim selector, and read the write amplification::

    import wafer
    r = wafer.replay("two-r", "zipf:1.0", device=wafer.Device(capacity="1GiB", op=0.1))
    print(r.waf, r.steady_waf)
    rows = wafer.compare(["base", "two-r"], "hotcold:0.9:0.1")

and, with ``timing="intel750"``, the latency, throughput and energy of an SSD::

    r = wafer.replay("sepbit", "zipf:1.0", timing="intel750", queue_depth=32)
    print(r.timing["write_latency"]["device"]["p99"], r.timing["energy"]["average_power_w"])
"""

from ._core import (
    CheckpointError,
    ConfigError,
    InternalError,
    ModelError,
    PolicyError,
    ResourceError,
    SimulationError,
    TraceError,
    WaferError,
    WorkloadError,
    __version__,
)
from .api import (
    DEVICE_FIELDS,
    RUN_FIELDS,
    Device,
    MultiResult,
    Run,
    compare,
    composites,
    describe_policy,
    kmeans,
    parse_size,
    policies,
    presets,
    replay,
    replay_volumes,
    resume,
    setups,
    timing_config,
    timing_presets,
    train,
    victims,
)
from .result import ResultSet, RunResult, format_table
from .traces import Selection, TraceStats

__all__ = [
    "CheckpointError",
    "ConfigError",
    "DEVICE_FIELDS",
    "Device",
    "InternalError",
    "MultiResult",
    "ModelError",
    "RUN_FIELDS",
    "Run",
    "PolicyError",
    "ResourceError",
    "ResultSet",
    "RunResult",
    "Selection",
    "SimulationError",
    "TraceError",
    "TraceStats",
    "WaferError",
    "WorkloadError",
    "__version__",
    "compare",
    "composites",
    "describe_policy",
    "format_table",
    "kmeans",
    "parse_size",
    "policies",
    "presets",
    "replay",
    "replay_volumes",
    "resume",
    "setups",
    "timing_config",
    "timing_presets",
    "train",
    "victims",
]


def __getattr__(name: str):
    # wafer.tune(...) (AutoBlox) imports numpy and friends: loaded on first use.
    if name == "tune":
        import importlib

        return importlib.import_module(".tune", __name__)
    raise AttributeError(f"module 'wafer' has no attribute {name!r}")
