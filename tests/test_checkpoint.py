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
    # A flag at its default value is still a flag given: refused, not ignored.
    p = cli("replay", "--resume", str(ck), "--policy", "base", "--seed", "1", ok=False)
    assert p.returncode == 2 and "drop --policy, --seed" in p.stderr, p.stderr
    p = cli("replay", "--resume", str(ck), "--quiet", "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["policy"] == "two-r"
    with pytest.raises(wafer.CheckpointError, match="timed replay"):
        # (a timed run's segment is the preset's superblock: a device without a segment size)
        wafer.replay("base", device=wafer.Device(logical_blocks=small.logical_blocks), writes=1000,
                     timing="intel750", fit_device=True, checkpoint=tmp_path / "t.ckpt")
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


def _stopped_at_first_checkpoint(ck, *args, **kw):
    """Run ``wafer.replay(*args, **kw)`` checkpointing to ``ck`` and stop it
    right after its first checkpoint (an error raised from ``on_step``)."""
    class Stop(Exception):
        pass

    def stop(written, total):
        if os.path.exists(ck):
            raise Stop
    with pytest.raises(Stop):
        wafer.replay(*args, **kw, checkpoint=ck, on_step=stop)


def test_a_trace_edited_in_place_after_a_checkpoint_is_refused(cli, tmp_path):
    # Issue 42 item 3: the same size used to resume (rc 0, another result).
    lines = [f"{128166372000000000 + i * 1000},hm,0,{'Read' if i % 5 == 0 else 'Write'},"
             f"{(i * 7919) % 3000 * 4096},4096,0\n" for i in range(20_000)]
    trace = tmp_path / "hm_0.csv"
    trace.write_text("".join(lines))
    ck = tmp_path / "t.ckpt"
    _stopped_at_first_checkpoint(ck, "sepbit", trace=trace, device=wafer.Device(segment_blocks=16),
                                 checkpoint_every=1.0)
    # One digit of the third request's offset, the size kept.
    text = trace.read_text()
    at = text.index(",Write,", len(lines[0]) + len(lines[1])) + len(",Write,")
    digit = text[at]
    edited = text[:at] + ("7" if digit != "7" else "8") + text[at + 1:]
    assert len(edited) == len(text)
    trace.write_text(edited)
    p = cli("replay", "--resume", str(ck), ok=False)
    assert p.returncode != 0
    assert "t.ckpt" in p.stderr and str(trace) in p.stderr and "changed" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr
    # The original trace resumes.
    trace.write_text(text)
    assert wafer.resume(ck).user_writes > 0


def test_a_corrupt_checkpoint_is_refused_before_it_is_decoded(tmp_path, small):
    ck = tmp_path / "run.ckpt"
    wafer.replay("two-r", device=small, drive_writes=1, checkpoint=ck)
    stored = json.loads(wafer._core.checkpoint_config(str(ck)))
    assert stored["policy"] == "two-r" and stored["device"]["logical_blocks"] == small.logical_blocks
    b = bytearray(ck.read_bytes())
    b[len(b) // 2] ^= 0x10
    bad = tmp_path / "flipped.ckpt"
    bad.write_bytes(bytes(b))
    for call in (lambda: wafer.resume(bad), lambda: wafer._core.checkpoint_config(str(bad))):
        with pytest.raises(wafer.CheckpointError, match="flipped.ckpt: corrupt: the checksum"):
            call()


SPEC = {"policy": "sepbit", "workload": "zipf:1.0", "device": {"logical_blocks": 1 << 14, "op": 0.1,
        "segment_blocks": 32}, "victim": "greedy", "seed": 2, "params": {}, "accuracy": False,
        "writes": 1 << 17, "drive_writes": None}


def test_a_sweep_never_adopts_a_foreign_or_corrupt_checkpoint(tmp_path, capsys):
    ctx = JobContext(checkpoint_dir=str(tmp_path / "ck"), checkpoint_min_writes=1 << 16)
    ck = checkpoint_path("j", SPEC, ctx)
    os.makedirs(os.path.dirname(ck))
    plain = run_job("j", SPEC)
    # Another job's checkpoint (another seed) at this job's path.
    other = {**SPEC, "seed": 3}
    policy, workload, kw = wafer.sweep.study.replay_args(other)
    _stopped_at_first_checkpoint(ck, policy, workload, **kw, checkpoint_every=2)
    out = run_job("j", SPEC, ctx)
    assert out["status"] == "done" and not out.get("resumed"), out
    assert "not this job's" in out["checkpoint_error"] and "seed" in out["checkpoint_error"]
    assert deterministic(out["result"]) == deterministic(plain["result"])
    assert "starting the job over" in capsys.readouterr().err
    # A corrupt file is treated as absent too (a real checkpoint's header, this wafer's format, then nothing).
    _stopped_at_first_checkpoint(ck, policy, workload, **kw, checkpoint_every=2)
    with open(ck, "rb") as f:
        head = f.read(12)
    with open(ck, "wb") as f:
        f.write(head + bytes(40))
    out = run_job("j", SPEC, ctx)
    assert out["status"] == "done" and not out.get("resumed"), out
    assert "corrupt" in out["checkpoint_error"], out["checkpoint_error"]
    assert deterministic(out["result"]) == deterministic(plain["result"])
    # Its own checkpoint is adopted.
    policy, workload, kw = wafer.sweep.study.replay_args(SPEC)
    _stopped_at_first_checkpoint(ck, policy, workload, **kw, checkpoint_every=2)
    out = run_job("j", SPEC, ctx)
    assert out["status"] == "done" and out.get("resumed") and "checkpoint_error" not in out, out
    assert deterministic(out["result"]) == deterministic(plain["result"])


def test_a_nodap_job_adopts_its_own_checkpoint_despite_the_parameters_its_search_added(monkeypatch):
    from wafer.api import run_config
    from wafer.sweep import runner

    spec = {**SPEC, "policy": "nodap", "params": {"max_groups": 3}}
    policy, workload, kw = wafer.sweep.study.replay_args(spec)
    cfg = json.loads(wafer._core.canonical_config_json(json.dumps(run_config(policy, workload, **kw))))
    # What replay() stores: the job's parameters and the configuration the search found.
    found = {**cfg, "params": {"max_groups": 3, "birs": [0.5, 2.0], "sizes": [0.5, 0.5], "search": False}}
    monkeypatch.setattr(runner._core, "checkpoint_config", lambda path: json.dumps(found))
    assert runner.foreign_checkpoint("j.ckpt", spec) is None
    other = {**spec, "params": {"max_groups": 4}}
    assert "params" in runner.foreign_checkpoint("j.ckpt", other)
    assert "policy" in runner.foreign_checkpoint("j.ckpt", {**spec, "policy": "sepbit"})


def test_a_panic_is_an_internal_error_and_one_failed_job(monkeypatch):
    import concurrent.futures as cf
    import multiprocessing
    import pickle

    with pytest.raises(wafer.InternalError, match="internal error.*boom") as e:
        wafer._core._panic("boom")
    assert isinstance(e.value, RuntimeError) and not isinstance(e.value, wafer.WaferError)
    again = pickle.loads(pickle.dumps(e.value))
    assert type(again) is wafer.InternalError and str(again) == str(e.value)
    # Raised in a worker process, it reaches the parent as itself (not a broken pool).
    with cf.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        with pytest.raises(wafer.InternalError, match="in a worker"):
            pool.submit(wafer._core._panic, "in a worker").result()
    # A job that panics is a failed job with the message; the next job runs.
    monkeypatch.setattr(wafer.api, "replay", lambda *a, **k: wafer._core._panic("engine bug"))
    out = run_job("j", SPEC)
    assert out["status"] == "failed" and "InternalError" in out["error"] and "engine bug" in out["error"], out


def test_stale_temporary_files_of_killed_writers_are_removed_at_the_start(cli, tmp_path):
    ck = tmp_path / "run.ckpt"
    dead = tmp_path / ".run.ckpt.tmp-999999999"
    live = tmp_path / f".run.ckpt.tmp-{os.getpid()}"
    for f in (dead, live):
        f.write_bytes(b"half a checkpoint")
    p = cli("replay", "--policy", "base", "--logical-blocks", "4096", "--segment-blocks", "16",
            "--drive-writes", "1", "--checkpoint", str(ck))
    assert not dead.exists() and live.exists(), "only a dead process's file goes"
    assert p.stderr.count("stale temporary checkpoint file") == 1 and str(dead) in p.stderr
    assert ck.exists()
    # On resume too.
    dead.write_bytes(b"half a checkpoint")
    p = cli("replay", "--resume", str(ck))
    assert not dead.exists() and "stale temporary checkpoint file" in p.stderr
