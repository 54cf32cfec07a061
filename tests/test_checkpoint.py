"""Resumable long replays (issue 15, item 3): a replay killed with SIGKILL at
a random point resumes from its checkpoint to the uninterrupted run's
result; bad checkpoints and conflicting flags are clear errors; sweeps
checkpoint their long jobs and resume them."""

import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest

import wafer
from wafer.sweep.runner import JobContext, checkpoint_path, run_job

#: What measures the process rather than the run: wall-clock times and
#: allocated memory (a resumed process allocates its own).
PROCESS_KEYS = ("seconds", "_ms", "memory", "user_writes_per_second", "bytes_per_physical_block", "path")


def deterministic(d):
    """A result dict without the process's measurements, as canonical JSON bytes."""
    def drop(v):
        if isinstance(v, dict):
            return {k: drop(x) for k, x in v.items() if not any(p in k for p in PROCESS_KEYS)}
        if isinstance(v, list):
            return [drop(x) for x in v]
        return v
    return json.dumps(drop(d), sort_keys=True).encode()


RUN = ["replay", "--policy", "sepbit", "--victim", "cost-benefit", "--workload", "hotcold:0.9:0.1,size=1-8",
       "--logical-blocks", str(1 << 17), "--op", "0.1", "--segment-blocks", "64", "--drive-writes", "40",
       "--seed", "5", "--json"]


def test_a_replay_killed_with_sigkill_resumes_to_the_identical_result(cli, tmp_path):
    whole = json.loads(cli(*RUN).stdout)
    ck = tmp_path / "run.ckpt"
    p = subprocess.Popen([sys.executable, "-m", "wafer", *RUN, "--checkpoint", str(ck), "--checkpoint-every", "2"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not ck.exists() and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert ck.exists(), p.stderr.read().decode() if p.poll() is not None else "no checkpoint in 120 s"
    time.sleep(random.Random(os.getpid()).uniform(0.0, 0.5))
    killed = p.poll() is None
    p.send_signal(signal.SIGKILL)
    p.wait()
    resumed = json.loads(cli("replay", "--resume", str(ck), "--json").stdout)
    assert resumed["user_writes"] == whole["user_writes"]
    assert killed, "the run ended before the kill: make it longer"
    assert deterministic(resumed) == deterministic(whole)
    # The checkpoint of the finished run resumes to the same result at once.
    again = json.loads(cli("replay", "--resume", str(ck), "--json").stdout)
    assert deterministic(again) == deterministic(whole)


def test_a_trace_replay_resumes_from_its_position(tmp_path):
    lines = []
    rng = random.Random(3)
    for i in range(60_000):
        op = "Read" if i % 9 == 0 else "Write"
        lines.append(f"{128166372000000000 + i * 1000},hm,0,{op},{rng.randrange(4000) * 4096},"
                     f"{4096 * rng.randint(1, 4)},0\n")
    trace = tmp_path / "hm_0.csv"
    trace.write_text("".join(lines))
    dev = wafer.Device(segment_blocks=32)
    whole = wafer.replay("midas", trace=trace, device=dev, victim="cost-benefit")
    ck = tmp_path / "t.ckpt"
    # Stop after the first checkpoint: an error raised from on_step ends the run there.
    class Stop(Exception):
        pass

    def stop(written, total):
        if ck.exists():
            raise Stop
    with pytest.raises(Stop):
        wafer.replay("midas", trace=trace, device=dev, victim="cost-benefit", checkpoint=ck,
                     checkpoint_every=0.5, on_step=stop)
    resumed = wafer.resume(ck)
    assert resumed.user_writes == whole.user_writes
    assert deterministic(resumed.to_dict()) == deterministic(whole.to_dict())


def test_bad_checkpoints_and_conflicting_flags_are_clear_errors(cli, tmp_path, small):
    junk = tmp_path / "junk.ckpt"
    junk.write_text("not a checkpoint")
    with pytest.raises(wafer.CheckpointError, match="junk.ckpt: not a wafer checkpoint"):
        wafer.resume(junk)
    ck = tmp_path / "run.ckpt"
    wafer.replay("two-r", device=small, drive_writes=2, checkpoint=ck, checkpoint_every=0.5)
    torn = tmp_path / "torn.ckpt"
    torn.write_bytes(ck.read_bytes()[: ck.stat().st_size // 2])
    with pytest.raises(wafer.CheckpointError, match="torn.ckpt: corrupt"):
        wafer.resume(torn)
    p = cli("replay", "--resume", str(ck), "--policy", "sepbit", "--seed", "3", ok=False)
    assert p.returncode != 0
    assert "drop --policy, --seed" in p.stderr and "run.ckpt" in p.stderr
    with pytest.raises(wafer.CheckpointError, match="timed replay"):
        wafer.replay("base", device=small, writes=1000, timing="intel750", fit_device=True,
                     checkpoint=tmp_path / "t.ckpt")
    with pytest.raises(wafer.ConfigError, match="checkpoint_every"):
        wafer.replay("base", device=small, writes=1000, checkpoint=tmp_path / "x.ckpt", checkpoint_every=0)


def test_a_sweep_job_resumes_from_its_checkpoint_and_removes_it(tmp_path):
    spec = {"policy": "sepbit", "workload": "zipf:1.0", "device": {"logical_blocks": 1 << 14, "op": 0.1,
            "segment_blocks": 32}, "victim": "greedy", "seed": 2, "params": {}, "accuracy": False,
            "writes": 1 << 17, "drive_writes": None}
    ctx = JobContext(checkpoint_dir=str(tmp_path / "ck"), checkpoint_min_writes=1 << 16)
    short = JobContext(checkpoint_dir=str(tmp_path / "ck"), checkpoint_min_writes=1 << 20)
    assert checkpoint_path("j", spec, short) is None, "short jobs do not checkpoint"
    ck = checkpoint_path("j", spec, ctx)
    plain = run_job("j", spec)
    # A worker killed mid-job left its checkpoint (here: one taken half-way).
    os.makedirs(os.path.dirname(ck))

    class Stop(Exception):
        pass

    def stop(written, total):
        if os.path.exists(ck):
            raise Stop
    policy, workload, kw = wafer.sweep.study.replay_args(spec)
    with pytest.raises(Stop):
        wafer.replay(policy, workload, **kw, checkpoint=ck, checkpoint_every=2, on_step=stop)
    out = run_job("j", spec, ctx)
    assert out["status"] == "done" and out.get("resumed"), out
    assert not os.path.exists(ck), "the checkpoint goes once the job is recorded"
    assert deterministic(out["result"]) == deterministic(plain["result"])
