"""``wafer bench``: the speed figures of docs/PERFORMANCE.md, re-measurable.

* engine: ``base`` + greedy, uniform random writes, 10% OP, prefilled, on a
  1Mi-block and a 32Mi-block logical device: user writes per second (GC
  included), steady-state WAF, engine bytes per physical block;
* every policy on the 1Mi-block device (zipf:1.0), so policy cost is visible;
* learned policies: training time per retraining, and replay speed with the
  trained model frozen (inference included, training not);
* every workload generator: blocks generated per second;
* trace reading: MSR text lines parsed per second, and native (Arrow IPC)
  requests read per second, on a generated 2M-request MSR trace;
* inference kernels: nanoseconds per call of the MLP, GRU, LSTM and TCN at
  the learned policies' sizes;
* stream policies (FIOS, OFIOS, vStream, AutoStream, LSTM+KM): replay speed
  with and without their rebuilds (dictionary builds, remaps, LSTM
  inference, K-means and training), and the rebuild times.
* timing mode: simulated 4 KiB host requests and flash operations per
  second of wall time, random writes with GC at queue depth 32 on the
  ``intel750`` preset (and a 70 % read mix), after one drive-write of
  preconditioning.
"""

from __future__ import annotations

import json
import os
import platform
import random
import statistics
import tempfile

from . import _core
from .api import Device, policies, preset_op, replay, timing_config

GENERATOR_SPECS = ["uniform", "zipf:0.8", "zipf:1.0", "hotcold:0.9:0.1", "seq", "phase", "mix:zipf+uniform+seq",
                   "zipf:1.0,arrivals=mmpp", "phase,move=slide", "sets,size=8"]


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _engine(logical: int, drive_writes: int, repeat: int, policy: str = "base", workload: str = "uniform",
            params: dict | None = None, save_model: str | None = None) -> dict:
    # nodap with DOGI's ladder: its offline search would replay the stream a hundred times.
    if policy == "nodap":
        params = {"search": False}
    runs = [replay(policy, workload, device=Device(logical_blocks=logical, op=0.1), writes=drive_writes * logical,
                   params=params, save_model=save_model if i == 0 else None)
            for i in range(repeat)]
    speeds = [r.user_writes_per_second for r in runs]
    r = max(runs, key=lambda x: x.user_writes_per_second)
    return {
        "policy": policy,
        "victim": "greedy",
        "workload": workload,
        "logical_blocks": logical,
        "user_writes": r.user_writes,
        "steady_waf": r.steady_waf,
        "user_writes_per_second_best": max(speeds),
        "user_writes_per_second_median": statistics.median(speeds),
        "ns_per_user_write": 1e9 / max(speeds),
        "engine_bytes_per_physical_block": r.engine_bytes_per_physical_block,
        "training": r.training,
        "elapsed_seconds": r.elapsed_seconds,
        "rebuild_seconds": _rebuild_seconds(r.policy_state or {}, r.training),
    }


#: Stream policies and where their rebuild work happens.
STREAM_POLICIES = ["equal-partition", "autostream", "autostream-pub", "fios", "ofios", "vstream", "lstm-km"]


def _rebuild_seconds(state: dict, training: dict | None) -> float:
    """Wall time a stream policy spent rebuilding inside the replay: OFIOS's
    dictionary builds, vStream's remaps, LSTM+KM's inference, K-means and
    training (FIOS builds before the replay, outside it)."""
    if "inference_seconds" in state:
        return state["inference_seconds"] + state["kmeans_seconds"] + state["training_seconds"]
    if "builds" in state or "remaps" in state:
        return (training or {}).get("seconds", 0.0)
    return 0.0


def _streams(rows: list[dict]) -> list[dict]:
    """Each stream policy's replay speed with and without its rebuilds."""
    out = []
    for e in rows:
        if e["policy"] not in STREAM_POLICIES:
            continue
        between = e["elapsed_seconds"] - e["rebuild_seconds"]
        t = e["training"] or {}
        out.append({"policy": e["policy"], "user_writes_per_second": e["user_writes_per_second_best"],
                    "between_rebuilds_per_second": e["user_writes"] / between if between > 0 else None,
                    "rebuilds": t.get("trainings", 0), "rebuild_seconds": e["rebuild_seconds"],
                    "build_seconds": t.get("seconds", 0.0)})
    return out


def frozen_params(name: str) -> dict:
    """The parameters that stop a learned policy's training: ``retrain = 0``
    for those retrained on a period (DOGI, ML-DT), ``online = false`` for
    those on Shiro's classifier (shiro, shiro-ng, phftl), none for LSTM+KM
    (it trains once, before its periods)."""
    defaults = next((p.get("defaults", {}) for p in policies() if p["name"] == name), {})
    return {"retrain": 0} if "retrain" in defaults else {"online": False} if "online" in defaults else {}


def _learned(name: str, online: dict, base: dict, logical: int, repeat: int, model: str) -> dict:
    """A learned policy's costs: its online training (from ``online``, a run
    that trained), and its replay with that run's final model frozen (no
    training), whose extra time per user write over ``base`` on the same
    workload is the inference (and feature) cost."""
    frozen = _engine(logical, 4, repeat, policy=name, workload="zipf:1.0", params={"model": model, **frozen_params(name)})
    t = online["training"] or {}
    n = max(t.get("trainings", 0), 1)
    return {
        "policy": name,
        "logical_blocks": logical,
        "trainings": t.get("trainings", 0),
        "training_seconds": t.get("seconds", 0.0),
        "seconds_per_training": t.get("seconds", 0.0) / n,
        "examples_per_training": t.get("last_examples", 0),
        "frozen_user_writes_per_second": frozen["user_writes_per_second_best"],
        "frozen_steady_waf": frozen["steady_waf"],
        "ns_per_user_write_over_base": max(frozen["ns_per_user_write"] - base["ns_per_user_write"], 0.0),
    }


def _traces(repeat: int, n: int = 2_000_000) -> list[dict]:
    from . import traces

    rnd = random.Random(1)
    out = []
    with tempfile.TemporaryDirectory() as d:
        text = os.path.join(d, "msr.csv")
        with open(text, "w") as f:
            ts = 128166372003061629
            lines = []
            for _ in range(n):
                ts += rnd.randint(1, 5000)
                op = "Write" if rnd.random() < 0.6 else "Read"
                offset, size = rnd.randrange(1 << 22) * 4096, 4096 * rnd.randint(1, 16)
                lines.append(f"{ts},hm,0,{op},{offset},{size},{rnd.randint(100, 9999)}\n")
            f.writelines(lines)
        native = os.path.join(d, "msr.arrow")
        traces.convert(text, native)
        for name, path, fmt, reps in (("msr text", text, "msr", repeat), ("native", native, "native", 5 * repeat)):
            best = max(k / s for k, s in (_core.bench_trace(path, fmt) for _ in range(reps)))
            out.append({"reader": name, "requests": n, "requests_per_second": best})
    return out


def _timing(logical: int, workload: str, repeat: int, timed_writes: float = 2.0, preset: str = "intel750",
            qd: int = 32) -> dict:
    """Timing mode's own speed: host requests and flash operations simulated
    per wall second (timed phase only; the preconditioning runs at WAF speed)."""
    dev = Device(logical_blocks=logical, op=preset_op(timing_config(preset)))
    writes = int(timed_writes * logical)
    # A device of `logical` pages, filled and overwritten once by the
    # workload before its timed writes.
    runs = [replay("base", workload, device=dev, writes=writes, timing=preset, arrival="closed", queue_depth=qd,
                   fit_device=True, precondition=2.0)
            for _ in range(repeat)]
    best = max(runs, key=lambda r: r.timing["requests_per_wall_second"])
    t = best.timing
    return {
        "preset": preset,
        "workload": workload,
        "queue_depth": qd,
        "logical_blocks": logical,
        "requests": t["requests"],
        "host_requests_per_second_best": t["requests_per_wall_second"],
        "host_requests_per_second_median": statistics.median(r.timing["requests_per_wall_second"] for r in runs),
        "flash_ops_per_second": t["flash_ops_per_wall_second"],
        "simulated_iops": t["throughput"]["iops"],
        "waf_with_mapping": t["waf_with_mapping"],
        "write_p99_us": t["write_latency"]["device"]["p99"],
    }


def run_bench(quick: bool = False, as_json: bool = False, repeat: int = 3) -> int:
    repeat = max(1, repeat)
    out: dict = {"machine": {"cpu": _cpu(), "python": platform.python_version(), "wafer": _core.__version__},
                 "engine": [], "policies": [], "generators": [], "traces": [], "kernels": []}
    out["engine"].append(_engine(1 << 20, 8, repeat))
    if not quick:
        out["engine"].append(_engine(1 << 25, 3, 1))
    out["learned"] = []
    with tempfile.TemporaryDirectory() as d:
        for p in policies():
            model = os.path.join(d, f"{p['name']}.safetensors") if p["family"] == "learned" else None
            out["policies"].append(_engine(1 << 20, 4, 1 if model else repeat, policy=p["name"], workload="zipf:1.0",
                                           save_model=model))
        base = next(e for e in out["policies"] if e["policy"] == "base")
        for p in policies():
            if p["family"] == "learned":
                online = next(e for e in out["policies"] if e["policy"] == p["name"])
                out["learned"].append(_learned(p["name"], online, base, 1 << 20, repeat,
                                               os.path.join(d, f"{p['name']}.safetensors")))
    out["streams"] = _streams(out["policies"])
    for spec in GENERATOR_SPECS:
        best = 0.0
        for _ in range(repeat):
            blocks, secs = _core.bench_workload(spec, 1 << 20, 10_000_000, 1)
            best = max(best, blocks / secs)
        out["generators"].append({"spec": spec, "blocks_per_second": best})
    out["traces"] = _traces(repeat)
    best: dict[str, float] = {}
    for _ in range(repeat):
        for name, ns in _core.bench_kernels(0.3):
            best[name] = min(ns, best.get(name, ns))
    out["kernels"] = [{"kernel": k, "ns_per_call": ns} for k, ns in best.items()]
    out["timing"] = [_timing(1 << 20, "uniform", repeat), _timing(1 << 20, "uniform,reads=0.7", 1, timed_writes=0.5)]
    if as_json:
        print(json.dumps(out))
        return 0
    print(f"machine: {out['machine']['cpu']}, python {out['machine']['python']}, wafer {out['machine']['wafer']}")
    print("\nengine (uniform random writes, 10% OP, prefilled, greedy):")
    for e in out["engine"] + out["policies"]:
        print(f"  {e['policy']:<10} {e['workload']:<9} {e['logical_blocks']:>9} blocks: "
              f"{e['user_writes_per_second_best'] / 1e6:6.2f} M user writes/s (median "
              f"{e['user_writes_per_second_median'] / 1e6:.2f}), {e['ns_per_user_write']:.0f} ns/write, "
              f"steady WAF {e['steady_waf']:.3f}, {e['engine_bytes_per_physical_block']:.2f} B/physical block")
    print("\nlearned policies (zipf:1.0, 1Mi blocks; speeds above include online training):")
    for e in out["learned"]:
        print(f"  {e['policy']:<10} frozen model: {e['frozen_user_writes_per_second'] / 1e6:6.2f} M user writes/s, "
              f"+{e['ns_per_user_write_over_base']:.0f} ns/write over base (features + inference); training: "
              f"{e['trainings']} x {e['seconds_per_training']:.2f} s ({e['examples_per_training']} examples)")
    print("\nstream policies (zipf:1.0, 1Mi blocks, 4 drive-writes; FIOS trains before the replay):")
    for e in out["streams"]:
        between = e["between_rebuilds_per_second"]
        print(f"  {e['policy']:<16} {e['user_writes_per_second'] / 1e6:6.2f} M user writes/s, between rebuilds "
              f"{(between or 0) / 1e6:6.2f} M/s; {e['rebuilds']} rebuilds, {e['rebuild_seconds']:.3f} s in the replay, "
              f"{e['build_seconds']:.3f} s building/training")
    print("\nworkload generators (requests of 1 block):")
    for g in out["generators"]:
        print(f"  {g['spec']:<22} {g['blocks_per_second'] / 1e6:7.1f} M blocks/s")
    print("\ntrace reading (parsing and selection; 2M-request MSR trace):")
    for t in out["traces"]:
        print(f"  {t['reader']:<22} {t['requests_per_second'] / 1e6:7.1f} M requests/s")
    print("\ninference kernels (learned policies' hot path):")
    for k in out["kernels"]:
        print(f"  {k['kernel']:<48} {k['ns_per_call']:9.1f} ns/call")
    print("\ntiming mode (4 KiB requests, closed loop; simulation speed per wall second):")
    for t in out["timing"]:
        print(f"  {t['preset']:<9} {t['workload']:<22} QD {t['queue_depth']:>3}: "
              f"{t['host_requests_per_second_best'] / 1e6:6.3f} M host requests/s (median "
              f"{t['host_requests_per_second_median'] / 1e6:.3f}), {t['flash_ops_per_second'] / 1e6:.3f} M flash ops/s; "
              f"simulated {t['simulated_iops']:.0f} IOPS, WAF with mapping {t['waf_with_mapping'] or 0:.3f}, "
              f"write p99 {t['write_p99_us']:.0f} us")
    return 0
