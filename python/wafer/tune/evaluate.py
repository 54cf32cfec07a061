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

import functools
import hashlib
import json
import math
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

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


def to_toml(ssd: dict[str, Any], name: str, description: str, notes: list[str] | tuple[str, ...] = ()) -> str:
    """``ssd`` as a timing preset file (the layout of wafer's ``presets/*.toml``),
    ``notes`` as comments at its top (e.g. the constraints it was tuned under)."""
    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return repr(v)

    lines = [f"# {n}" for n in notes] + [f"name = {value(name)}", f"description = {value(description)}"]
    for sec, body in ssd.items():
        if isinstance(body, dict):
            lines += ["", f"[{sec}]"] + [f"{k} = {value(v)}" for k, v in body.items() if v is not None]
    return "\n".join(lines) + "\n"


#: How a validation issues requests (``--arrival``): AutoBlox's think time
#: from the trace's own rate, the trace's timestamps, or back to back.
ARRIVALS = ("think", "trace", "closed")
#: The artifact's window of trace time for a trace's rate [ns]
#: (``IO_Flow_Trace_Based.h``'s prefetch window) and its slice for a
#: category's peak rate [ns] (``estimate_device_bandwidth.py``).
THINK_WINDOW_NS = 5_000_000_000
PEAK_SLICE_NS = 1_000_000_000


def _columns(trace: str, requests: int | None) -> tuple[np.ndarray, np.ndarray]:
    """A trace's request times [ns after its first] and sizes [bytes]."""
    from .. import _core

    times, _, sizes, _, _ = _core.trace_columns(str(trace), None, requests)
    t = np.maximum.accumulate(np.asarray(times, dtype=np.int64))  # an unsorted line never goes back
    return t - (t[0] if len(t) else 0), np.asarray(sizes, dtype=np.float64)


def _cut(t: np.ndarray, span: int) -> list[tuple[int, int]]:
    """Consecutive windows of ``span`` ns of trace time, each starting at its
    first request (a gap longer than ``span`` is skipped): (first, end) indices."""
    out, i = [], 0
    while i < len(t):
        j = int(np.searchsorted(t, t[i] + span, side="left"))
        out.append((i, max(j, i + 1)))
        i = max(j, i + 1)
    return out


@functools.lru_cache(maxsize=32)
def _rates_of(trace: str, size: int, mtime_ns: int, requests: int | None) -> tuple[tuple, float]:
    """A trace's 5-s windows (start, rate) and its busiest second (see
    :func:`peak_rate`), from one read; cached per file version (``size``,
    ``mtime_ns``), so a validation's seeds and later candidates read it once."""
    t, b = _columns(trace, requests)
    windows = tuple((int(t[i]), float(b[i:j].sum()) / THINK_WINDOW_NS) for i, j in _cut(t, THINK_WINDOW_NS))
    best = 0.0
    for i, j in _cut(t, PEAK_SLICE_NS):
        if j - i < 100:
            continue
        span = t[j - 1] - t[i]
        best = max(best, float(b[i:j].sum()) / (span if span >= 0.8 * PEAK_SLICE_NS else PEAK_SLICE_NS))
    if best == 0.0 and len(t):
        best = float(b.sum()) / max(int(t[-1]), PEAK_SLICE_NS)
    return windows, best


def _rates(trace: str, requests: int | None) -> tuple[tuple, float]:
    st = os.stat(trace)
    return _rates_of(str(trace), st.st_size, st.st_mtime_ns, requests)


def peak_rate(trace: str, requests: int | None = None) -> float:
    """A trace's busiest second [bytes/ns], as the artifact estimates a
    category's "device throughput": 1-s slices, a slice of under 100
    requests skipped, one shorter than 0.8 s counted as 1 s. A trace with no
    such slice: its mean rate."""
    return _rates(trace, requests)[1]


def think_model(trace: str, peak_bytes_per_ns: float, requests: int | None = None) -> dict[str, Any]:
    """AutoBlox's think time for ``trace`` (the engine's ``timing.think``):
    its 5-s windows' rates against the category's ``peak_bytes_per_ns``."""
    windows = [list(w) for w in _rates(trace, requests)[0]]
    return {"peak_bytes_per_ns": float(peak_bytes_per_ns), "windows": windows}


@dataclass
class TimingEvaluator:
    """Validates a configuration on one trace (a path) or synthetic workload
    spec with wafer's timing model, as AutoBlox validates on MQSim;
    picklable, so a process pool or Ray can run it.

    The drive is the configuration's whole drive (``whole_drive``),
    preconditioned by the preset's ``[precondition]`` (2 drive-writes for
    every shipped preset: a sequential fill, then random overwrites until
    GC is in its steady state; the paper warms up to >= 50% occupancy) or
    ``precondition`` drive-writes, each preconditioned drive saved and
    reused by later validations of the same geometry and seed. ``arrival``
    is AutoBlox's: ``"think"`` (default) a closed loop of ``queue_depth``
    (3: MQSim's submission queue of 4, which AutoBlox's ``main.cpp``
    forces, holds 3) whose completions wait the think time of the trace's
    5-s window against its category's peak rate (``peaks``: trace -> bytes
    per ns; default the trace's own); ``"trace"`` the trace's timestamps;
    ``"closed"`` back to back. A synthetic workload has no rate of its own:
    ``think`` runs it back to back (said in ``arrival_used``).

    Each validation runs ``seeds`` seeds (the preconditioning's random
    overwrites differ) and returns their mean with every seed's metrics in
    ``samples``. ``whole_drive=False`` sizes the device to the run instead
    (quick, for tests and smoke runs; not the paper's validation).
    ``requests`` bounds a trace's replay; a workload times ``writes`` user
    blocks (on ``logical_blocks`` when the device is fitted)."""

    reference: str = "intel750"
    policy: str = "base"
    writes: int = 200_000
    logical_blocks: int = 1 << 20
    requests: int | None = None
    arrival: str = "think"
    queue_depth: int = 3
    seeds: int = 3
    seed: int = 1
    whole_drive: bool = True
    precondition: float | None = None
    peaks: dict[str, float] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.arrival not in ARRIVALS:
            raise ValueError(f"arrival '{self.arrival}'; one of {', '.join(ARRIVALS)}")
        if self.seeds < 1:
            raise ValueError(f"seeds = {self.seeds}; must be at least 1")

    def key(self) -> str:
        """What the validations depend on besides the configuration and the
        trace: AutoDB keeps results per key, so a change of evaluator never
        reuses another's results."""
        d = {k: v for k, v in self.__dict__.items()}
        return "timing:" + hashlib.sha1(json.dumps(d, sort_keys=True, default=str).encode()).hexdigest()[:16]

    def ssd(self, c: dict[str, Any]) -> dict[str, Any]:
        from .. import api

        return ssd_of(c, api.timing_config(self.reference))

    def __call__(self, c: dict[str, Any], trace: str) -> dict[str, Any]:
        runs = [self.one(c, trace, self.seed + k) for k in range(self.seeds)]
        keys = [k for k, v in runs[0].items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
        out: dict[str, Any] = {k: float(np.mean([r[k] for r in runs])) for k in keys}
        out["gc_ran"] = all(r["gc_ran"] for r in runs)
        out["arrival_used"] = runs[0]["arrival_used"]
        out["samples"] = runs
        return out

    def one(self, c: dict[str, Any], trace: str, seed: int) -> dict[str, Any]:
        """One seed's validation of ``c`` on ``trace``."""
        from .. import api

        is_trace = os.path.exists(trace)
        kw: dict[str, Any] = dict(timing=self.ssd(c), victim=VICTIMS[c.get("gc_victim", "greedy")], seed=seed,
                                  **self.extra)
        arrival = self.arrival
        if arrival == "think" and not is_trace:
            arrival = "closed"
        kw["arrival"] = "closed" if arrival == "think" else arrival
        if arrival != "trace":
            kw["queue_depth"] = self.queue_depth
        if arrival == "think":
            peak = self.peaks.get(trace) or peak_rate(trace, self.requests)
            kw["think_ns"] = think_model(trace, peak, self.requests)
        if not self.whole_drive:
            kw["fit_device"] = True
        if is_trace:
            if self.requests:
                kw["selection"] = api.Selection(max_requests=self.requests)
            pre = self.precondition if self.precondition is not None else (None if self.whole_drive else 1.0)
            r = api.replay(self.policy, trace=trace, precondition=pre, **kw)
        else:
            pre = self.precondition if self.precondition is not None else (None if self.whole_drive else 2.0)
            if not self.whole_drive:
                kw["device"] = api.Device(logical_blocks=self.logical_blocks, op=c.get("op", 0.2))
            r = api.replay(self.policy, trace, writes=self.writes, precondition=pre, **kw)
        m = metrics(r.timing, r.waf)
        m["arrival_used"] = arrival
        return m


def metrics(t: dict[str, Any], waf: float | None = None) -> dict[str, Any]:
    """What the search grades, from a run's ``timing`` result: mean latency
    over reads and writes (end to end, µs) and apart, bandwidth, energy,
    power, WAF, p99, endurance (erases per host-written page), and whether
    the validation exercised the flash: ``flash_programs`` (user pages the
    run programmed, the end's flush included) and ``gc_ran``."""
    lat = _mean_latency(t)
    bw = t["throughput"]["bandwidth_bytes_per_s"]
    if not (lat > 0 and bw > 0):
        raise ValueError(f"the run served no request (latency {lat} µs, bandwidth {bw} B/s)")
    f = t["flash"]  # its counts include the end's flush
    writes, reads = t["writes"], t["reads"]
    host_pages = max(1.0, t["write_bytes"] / 4096)
    return {"latency_us": lat, "throughput_bps": bw, "energy_j": t["energy"]["total_j"],
            "power_w": t["energy"]["average_power_w"], "waf": t.get("waf_with_mapping") or waf,
            "p99_us": max(t["read_latency"]["end_to_end"]["p99"], t["write_latency"]["end_to_end"]["p99"]),
            "read_latency_us": t["read_latency"]["end_to_end"]["mean"],
            "write_latency_us": t["write_latency"]["end_to_end"]["mean"],
            "endurance": f["erases"] / host_pages,  # per 4 KiB written by the host
            "flash_programs": f["user_programs"], "gc_ran": f["gc_programs"] > 0 or f["erases"] > 0,
            "write_share": writes / max(1, writes + reads),
            "simulated_seconds": t["simulated_seconds"], "wall_seconds": t["wall_seconds"]}


def _mean_latency(t: dict[str, Any]) -> float:
    parts = [(t[k]["end_to_end"]["count"], t[k]["end_to_end"]["mean"]) for k in ("read_latency", "write_latency")]
    n = sum(c for c, _ in parts)
    return sum(c * m for c, m in parts) / n if n else math.nan
