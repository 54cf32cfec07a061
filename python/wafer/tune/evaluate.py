"""AutoBlox's validation on wafer's timing model: a configuration of the
tuning space (:mod:`.space`) becomes a timing SSD (the reference preset with
the configuration's values written over it), the trace or workload replays
through the FTL and the discrete-event model, and the run's mean latency,
bandwidth, energy, average power and WAF are the metrics the search grades.

Names of the space -> keys of the timing configuration (``[section] key``):
the DRAM sizes are bytes in the space and MiB in the preset; the LSB/MSB
read and program times are the two entries of ``read_ns`` / ``program_ns``
(MLC); ``op`` is ``flash.overprovisioning``; ``gc_victim`` picks wafer's
victim selector: ``greedy`` and ``fifo`` as named, MQSim's ``rga``
(randomized greedy, d = 16 samples) as wafer's ``d-choices``, and the three
random schemes as ``d-choices`` with d = 1, 2 (random-p) and 4 (random-pp),
the nearest wafer has (a deviation: MQSim's RANDOM_P and RANDOM_PP skip
blocks under a valid-page bound instead of sampling more).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any

from .space import MIB

#: space name -> (section, key) of the timing configuration, same value.
DIRECT: dict[str, tuple[str, str]] = {
    "pcie_lane_gbps": ("host", "pcie_lane_gbps"),
    "pcie_lanes": ("host", "pcie_lanes"),
    "dram_row_bytes": ("cache", "dram_row_bytes"),
    "dram_rate_mts": ("cache", "dram_rate_mts"),
    "dram_burst": ("cache", "dram_burst_bytes"),
    "dram_trcd_ns": ("cache", "dram_trcd_ns"),
    "dram_tcl_ns": ("cache", "dram_tcl_ns"),
    "dram_trp_ns": ("cache", "dram_trp_ns"),
    "plane_allocation": ("flash", "allocation"),
    "op": ("flash", "overprovisioning"),
    "gc_threshold": ("gc", "exec_threshold"),
    "gc_hard_threshold": ("gc", "hard_threshold"),
    "copyback": ("flash", "copyback"),
    "preemptible_gc": ("gc", "preemptible"),
    "channels": ("flash", "channels"),
    "channel_width_bytes": ("flash", "channel_width_bytes"),
    "channel_rate_mts": ("flash", "channel_rate_mts"),
    "chips_per_channel": ("flash", "chips_per_channel"),
    "suspension": ("flash", "suspend"),
    "dies_per_chip": ("flash", "dies_per_chip"),
    "planes_per_die": ("flash", "planes_per_die"),
    "blocks_per_plane": ("flash", "blocks_per_plane"),
    "pages_per_block": ("flash", "pages_per_block"),
    "erase_ns": ("flash", "erase_ns"),
}

#: gc_victim -> wafer's victim selector.
VICTIMS: dict[str, str] = {
    "greedy": "greedy",
    "fifo": "fifo",
    "rga": "d-choices:16",
    "random": "d-choices:1",
    "random-p": "d-choices:2",
    "random-pp": "d-choices:4",
}


def ssd_of(c: dict[str, Any], reference: dict[str, Any]) -> dict[str, Any]:
    """The timing SSD (a dict as :func:`wafer.timing_config` returns) of
    configuration ``c``: ``reference`` with every value of ``c`` written in."""
    ssd = {k: (dict(v) if isinstance(v, dict) else v) for k, v in reference.items()}
    for name, value in c.items():
        if name in DIRECT:
            sec, key = DIRECT[name]
            ssd[sec][key] = value
        elif name == "cache_bytes":
            ssd["cache"]["capacity_mib"] = value / MIB
        elif name == "cmt_bytes":
            ssd["mapping"]["cmt_mib"] = value / MIB
        elif name in ("read_lsb_ns", "read_msb_ns", "program_lsb_ns", "program_msb_ns"):
            key = "read_ns" if name.startswith("read") else "program_ns"
            times = list(ssd["flash"][key]) + [ssd["flash"][key][-1]] * 2
            times[0 if "lsb" in name else 1] = value
            ssd["flash"][key] = times[:2]
        elif name != "gc_victim":
            raise ValueError(f"parameter {name}: no timing key for it")
    return ssd


def to_toml(ssd: dict[str, Any], name: str, description: str) -> str:
    """``ssd`` as a timing preset file (the layout of wafer's ``presets/*.toml``)."""
    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return repr(v)

    lines = [f"name = {value(name)}", f"description = {value(description)}"]
    for sec, body in ssd.items():
        if isinstance(body, dict):
            lines += ["", f"[{sec}]"] + [f"{k} = {value(v)}" for k, v in body.items() if v is not None]
    return "\n".join(lines) + "\n"


@dataclass
class TimingEvaluator:
    """Validates a configuration on one trace (a path) or synthetic workload
    spec with wafer's timing model; picklable, so a process pool or Ray can
    run it. ``requests`` bounds a trace's replay (None: all of it); a
    workload is preconditioned for one drive-write, then ``writes`` user
    blocks are timed on a device of ``logical_blocks`` (4 GiB by default:
    larger than the reference's 800 MiB data cache, else every request is a
    cache hit and no flash parameter matters).

    Replay is closed loop at queue depth 4, as AutoBlox runs MQSim (its
    ``main.cpp`` forces ``IO_Queue_Depth`` to 4), so the device's speed, not
    the trace's arrival rate, sets throughput; the artifact's think time
    from each category's bandwidth is left out (a deviation: requests are
    issued back to back). ``arrival="trace"`` replays the timestamps."""

    reference: str = "intel750"
    policy: str = "base"
    writes: int = 200_000
    logical_blocks: int = 1 << 20
    requests: int | None = None
    arrival: str | None = "closed"
    queue_depth: int | None = 4
    seed: int = 1
    extra: dict[str, Any] = field(default_factory=dict)

    def ssd(self, c: dict[str, Any]) -> dict[str, Any]:
        from .. import api

        return ssd_of(c, api.timing_config(self.reference))

    def __call__(self, c: dict[str, Any], trace: str) -> dict[str, Any]:
        from .. import api

        # A device sized to the run (the whole-drive validation of issue 34
        # is not here yet): a trace's footprint, filled in order; a workload
        # filled and overwritten once by itself before its timed writes.
        kw: dict[str, Any] = dict(timing=self.ssd(c), victim=VICTIMS[c.get("gc_victim", "greedy")], seed=self.seed,
                                  fit_device=True, **self.extra)
        if self.arrival:
            kw["arrival"] = self.arrival
        if self.queue_depth:
            kw["queue_depth"] = self.queue_depth
        if os.path.exists(trace):
            if self.requests:
                kw["selection"] = api.Selection(max_requests=self.requests)
            r = api.replay(self.policy, trace=trace, precondition=1.0, **kw)
        else:
            r = api.replay(self.policy, trace, writes=self.writes, precondition=2.0,
                           device=api.Device(logical_blocks=self.logical_blocks, op=c.get("op", 0.2)), **kw)
        return metrics(r.timing, r.waf)


def metrics(t: dict[str, Any], waf: float | None = None) -> dict[str, Any]:
    """What the search grades, from a run's ``timing`` result: mean latency
    over reads and writes (end to end, µs), bandwidth, energy, power, WAF."""
    lat = _mean_latency(t)
    bw = t["throughput"]["bandwidth_bytes_per_s"]
    if not (lat > 0 and bw > 0):
        raise ValueError(f"the run served no request (latency {lat} µs, bandwidth {bw} B/s)")
    return {"latency_us": lat, "throughput_bps": bw, "energy_j": t["energy"]["total_j"],
            "power_w": t["energy"]["average_power_w"], "waf": t.get("waf_with_mapping") or waf,
            "p99_us": max(t["read_latency"]["end_to_end"]["p99"], t["write_latency"]["end_to_end"]["p99"]),
            "simulated_seconds": t["simulated_seconds"], "wall_seconds": t["wall_seconds"]}


def _mean_latency(t: dict[str, Any]) -> float:
    parts = [(t[k]["end_to_end"]["count"], t[k]["end_to_end"]["mean"]) for k in ("read_latency", "write_latency")]
    n = sum(c for c, _ in parts)
    return sum(c * m for c, m in parts) / n if n else math.nan
