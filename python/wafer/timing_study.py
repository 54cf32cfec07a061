"""``wafer reproduce timing``: what timing mode shows on synthetic workloads
(docs/FIDELITY.md, "Timing").

* latency vs queue depth on the Intel 750 preset (closed loop, 70 % random
  4 KiB reads, 30 % writes, after preconditioning): IOPS and mean / p99 read
  and write latency per depth;
* GC's effect on tail latency by placement policy on Shiro's FEMU device
  (zipf:1.0 writes with 20 % reads, closed loop): the shape of Shiro's
  Figs. 11-12, better placement -> less GC -> lower tail;
* host stream policies (FIOS, OFIOS, vStream, LSTM + K-means, AutoStream)
  against legacy placement on the same device: throughput and tail. Stream
  policies not registered yet are listed as missing, so the table fills in
  as they land.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ._core import WaferError
from .api import Device, policies, preset_op, replay, timing_config
from .progress import Progress

#: Host-side stream policies (FIOS-style); ``base`` is the legacy device.
STREAM_POLICIES = ["fios", "ofios", "vstream", "lstm-km", "autostream"]

#: Windows in drive-writes of the logical clock: a closed-loop run lasts
#: seconds of simulated time, shorter than the papers' 100 s (OFIOS, vStream)
#: and 5 s (LSTM+KM) windows; LSTM+KM smaller than its defaults to train in
#: seconds on a CPU (as in ``wafer reproduce streams``).
STREAM_PARAMS: dict[str, dict[str, Any]] = {
    "ofios": {"window_dw": 0.25},
    "vstream": {"remap_dw": 0.25},
    "lstm-km": {"period_dw": 0.05, "chunks": 1000, "hidden": 64, "epochs": 20},
}


def _claim(claims: list[dict[str, Any]], text: str, holds: bool | None, numbers: str) -> None:
    claims.append({"claim": text, "status": {True: "holds", False: "fails", None: "undecided"}[holds],
                   "numbers": numbers})


def claims_of(out: dict[str, Any]) -> list[dict[str, Any]]:
    """The shapes the study is meant to show, checked on its numbers."""
    claims: list[dict[str, Any]] = []
    qd = [r for r in out["queue_depth"] if "error" not in r]
    if len(qd) >= 2:
        iops = [r["iops"] for r in qd]
        _claim(claims, "IOPS rise with the queue depth until the device saturates (within 5%)",
               all(b >= 0.95 * a for a, b in zip(iops, iops[1:])),
               ", ".join(f"QD {r['queue_depth']}: {r['iops']:.0f}" for r in qd))
    gc = sorted((r for r in out["gc"] if "error" not in r), key=lambda r: r["waf"])
    if len(gc) >= 3:
        lo, hi = gc[0], gc[-1]
        _claim(claims, "better placement, less GC, more throughput: the lowest-WAF policy serves more IOPS than "
               "the highest-WAF one (Shiro Figs. 11-12's shape)", lo["iops"] > hi["iops"],
               f"{lo['policy']} WAF {lo['waf']:.2f} at {lo['iops']:.0f} IOPS, "
               f"{hi['policy']} WAF {hi['waf']:.2f} at {hi['iops']:.0f} IOPS")
        _claim(claims, "... and a lower p99.9 write latency", lo["write_p999_us"] < hi["write_p999_us"],
               f"{lo['policy']} {lo['write_p999_us']:.0f} us, {hi['policy']} {hi['write_p999_us']:.0f} us")
    st = {r["policy"]: r for r in out["streams"] if "error" not in r}
    if "base" in st and len(st) > 1:
        better = [p for p, r in st.items() if p != "base" and r["waf"] < st["base"]["waf"]]
        _claim(claims, "host stream policies write less than the legacy device on tenants of different lifetimes",
               len(better) == len(st) - 1,
               ", ".join(f"{p} WAF {r['waf']:.2f}" for p, r in st.items()))
    return claims


@dataclass
class TimingExperiment:
    """The three studies above, with their sizes and seed."""

    description: str
    depths: list[int] = field(default_factory=lambda: [1, 2, 4, 8, 16, 32, 64, 128])
    gc_policies: list[str] = field(default_factory=lambda: ["base", "two-r", "sepbit", "midas", "shiro"])
    seed: int = 1
    full: dict[str, Any] = field(default_factory=lambda: {
        "qd_capacity": "16GiB", "qd_drive_writes": 1.5, "gc_capacity": "32GiB", "gc_drive_writes": 3.0})
    quick: dict[str, Any] = field(default_factory=lambda: {
        "qd_capacity": "512MiB", "qd_drive_writes": 1.5, "gc_capacity": "1GiB", "gc_drive_writes": 2.5})

    def run(self, quick: bool = False, progress: bool = True) -> dict[str, Any]:
        size = self.quick if quick else self.full
        known = {p["name"] for p in policies()}
        gc_pols = [p for p in self.gc_policies if p in known]
        streams = [p for p in STREAM_POLICIES if p in known]
        depths = self.depths[:4] if quick else self.depths
        total = len(depths) + len(gc_pols) + len(streams) + 1
        bar = Progress(total, "reproduce timing", enabled=progress)
        done = 0
        out: dict[str, Any] = {"experiment": "timing", "description": self.description, "quick": quick,
                               "settings": size, "seed": self.seed, "queue_depth": [], "gc": [], "streams": []}

        def run_one(policy: str, workload: str, preset: str, capacity: str, dw: float, **kw: Any) -> dict[str, Any]:
            nonlocal done
            ssd = timing_config(preset)
            dev = Device(capacity=capacity, op=preset_op(ssd))
            row: dict[str, Any] = {"policy": policy, "preset": preset, "workload": workload}
            try:
                # A device of `capacity`, filled and overwritten once by the
                # workload, then dw - 1 drive-writes timed.
                r = replay(policy, workload, device=dev, victim="cost-benefit", seed=self.seed,
                           drive_writes=dw - 1.0, timing=preset, arrival="closed", params=STREAM_PARAMS.get(policy),
                           fit_device=True, precondition=2.0, **kw)
            except WaferError as e:
                row["error"] = str(e)
            else:
                t = r.timing
                row.update({
                    "waf": r.steady_waf or r.waf, "waf_with_mapping": t["waf_with_mapping"],
                    "iops": t["throughput"]["iops"],
                    "bandwidth_mb_s": t["throughput"]["bandwidth_bytes_per_s"] / 1e6,
                    "read_mean_us": t["read_latency"]["device"]["mean"],
                    "read_p99_us": t["read_latency"]["device"]["p99"],
                    "write_mean_us": t["write_latency"]["device"]["mean"],
                    "write_p99_us": t["write_latency"]["device"]["p99"],
                    "write_p999_us": t["write_latency"]["device"]["p999"],
                    "gc_programs": t["flash"]["gc_programs"], "power_w": t["energy"]["average_power_w"],
                })
            done += 1
            bar.update(done)
            return row

        for qd in depths:
            row = run_one("base", "uniform,reads=0.7", "intel750", size["qd_capacity"], size["qd_drive_writes"],
                          queue_depth=qd)
            out["queue_depth"].append({"queue_depth": qd, **row})
        for p in gc_pols:
            out["gc"].append(run_one(p, "zipf:1.0,reads=0.2", "femu", size["gc_capacity"], size["gc_drive_writes"],
                                     queue_depth=16))
        for p in ["base", *streams]:
            out["streams"].append(run_one(p, "mix:zipf:1.0,size=4,region=0.5+seq,size=32+uniform,size=1", "femu",
                                          size["gc_capacity"], size["gc_drive_writes"], queue_depth=16))
        bar.close()
        out["missing_policies"] = [p for p in self.gc_policies + STREAM_POLICIES if p not in known]
        out["claims"] = claims_of(out)
        return out

    @staticmethod
    def markdown(out: dict[str, Any]) -> str:
        def fmt(x: Any, d: int = 1) -> str:
            return "-" if x is None else (f"{x:.{d}f}" if isinstance(x, float) else str(x))

        def table(title: str, key: str, rows: list[dict[str, Any]], cols: list[tuple[str, str, int]]) -> list[str]:
            lines = [f"#### {title}\n", "| " + " | ".join([key] + [c[1] for c in cols]) + " |",
                     "|---|" + "---|" * len(cols)]
            for r in rows:
                cells = [str(r.get(key))] + (["failed: " + r["error"]] + [""] * (len(cols) - 1) if "error" in r
                                             else [fmt(r.get(c[0]), c[2]) for c in cols])
                lines.append("| " + " | ".join(cells) + " |")
            return lines + [""]

        lat = [("iops", "IOPS", 0), ("read_mean_us", "read mean us", 1), ("read_p99_us", "read p99 us", 1),
               ("write_mean_us", "write mean us", 1), ("write_p99_us", "write p99 us", 1)]
        gc = [("waf", "WAF", 3), ("iops", "IOPS", 0), ("write_mean_us", "write mean us", 1),
              ("write_p99_us", "write p99 us", 1), ("write_p999_us", "write p99.9 us", 1),
              ("read_p99_us", "read p99 us", 1), ("power_w", "W", 2)]
        lines = table("Latency vs queue depth (intel750, uniform 70 % reads, closed loop)", "queue_depth",
                      out["queue_depth"], lat)
        lines += table("GC and tail latency by placement (femu, zipf:1.0 with 20 % reads, QD 16, cost-benefit)",
                       "policy", out["gc"], gc)
        lines += table("Host streams vs legacy (femu, three tenants, QD 16)", "policy", out["streams"],
                       [("bandwidth_mb_s", "MB/s", 1)] + gc)
        if out.get("claims"):
            lines += ["#### Claims\n", "| claim | holds | numbers |", "|---|---|---|"]
            lines += [f"| {c['claim']} | {c['status']} | {c['numbers']} |" for c in out["claims"]]
            lines.append("")
        if out["missing_policies"]:
            lines.append("Not registered yet, so not in the tables: "
                         + ", ".join(f"`{p}`" for p in out["missing_policies"]))
        return "\n".join(lines)

    def main(self, quick: bool, as_json: bool, out_file: str | None, progress: bool) -> int:
        out = self.run(quick=quick, progress=progress)
        if out_file:
            with open(out_file, "w") as f:
                json.dump(out, f, indent=1)
        print(json.dumps(out) if as_json else self.markdown(out))
        return 0


TIMING = TimingExperiment(
    description="Timing mode (issue 20): latency vs queue depth on intel750; GC's effect on tail latency by "
                "placement policy on Shiro's femu device (better placement, less GC, lower tail); host stream "
                "policies vs legacy (filled in as they are registered).",
)


#: The runner protocol of :mod:`wafer.reproduce`: the options this experiment cannot honour, and why.
REFUSED = {"seeds": "each of its timed runs is one replay on seed 1",
           "jobs": "its timed replays run one after the other in this process",
           "store": "its rows are timing summaries, not kept in a store",
           "report": "its tables are latency studies, not runs of one sweep; use --out FILE.json for its numbers"}


def runs(quick: bool) -> int:
    """Timed replays of the whole experiment."""
    return len(TIMING.depths[:4] if quick else TIMING.depths) + len(TIMING.gc_policies) + 1 + len(STREAM_POLICIES)


def work(quick: bool) -> int:
    """User blocks of the whole experiment, preconditioning included (``wafer reproduce --list`` scales its
    estimate by them): 16 KiB femu pages, 4 KiB intel750 blocks."""
    from .api import parse_size

    size = TIMING.quick if quick else TIMING.full
    depths = len(TIMING.depths[:4] if quick else TIMING.depths)
    qd = depths * parse_size(size["qd_capacity"]) // 4096 * (1 + size["qd_drive_writes"])
    runs = len(TIMING.gc_policies) + 1 + len(STREAM_POLICIES)
    return int(qd + runs * parse_size(size["gc_capacity"]) // 16384 * (1 + size["gc_drive_writes"]))


def reproduce(options) -> dict[str, Any]:
    """The runner protocol of :mod:`wafer.reproduce` (quick, progress)."""
    return TIMING.run(quick=options.quick, progress=options.progress)


def run(quick: bool = False, progress: bool = True) -> dict[str, Any]:
    """The experiment (see :data:`TIMING`)."""
    return TIMING.run(quick=quick, progress=progress)


def markdown(out: dict[str, Any]) -> str:
    return TIMING.markdown(out)
