"""Peer setups (issue 14) seen from the CLI and the API: `--setup`, the
semantic flags, multi-volume replays. The parity numbers themselves are
checked in Rust (crates/wafer-core/tests/integration/peers.rs)."""

import json
import subprocess
import sys

import pytest

import wafer


def cli(*args, ok=True):
    p = subprocess.run([sys.executable, "-m", "wafer", *args], capture_output=True, text=True, timeout=300)
    if ok:
        assert p.returncode == 0, p.stderr
    return p


@pytest.fixture(scope="module")
def two_volume_trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("peers")
    path = d / "mix.csv"
    cli("traces", "sample", str(path), "--format", "alibaba", "--workload",
        "mix:zipf:0.9,size=1-8+hotcold:0.9:0.1,size=1-4", "--requests", "20000", "--logical-blocks", "8192")
    return path


def test_setup_sets_the_replayers_conventions(two_volume_trace):
    out = json.loads(cli("replay", "--trace", str(two_volume_trace), "--device", "0", "--setup", "sepbit-replayer",
                         "--policy", "sepbit", "--victim", "cost-benefit", "--segment-blocks", "64", "--json").stdout)
    c = out["conventions"]
    assert c["setup"] == "sepbit-replayer" and c["gc_mode"] == "garbage-proportion" and not c["prefill"]
    assert c["garbage_accounting"] == "at-seal" and c["gc_check"] == "request" and c["pick_segments"] == 1
    assert c["cost_benefit"] == {"form": "sqrt", "clock": "trace-time"}
    assert any(g["victims"] for g in out["groups"]) and "mean_victim_garbage" in out["groups"][0]


def test_a_setup_refuses_a_flag_it_fixes():
    p = cli("replay", "--setup", "midas-sim", "--gc-check", "request", ok=False)
    assert p.returncode == 2 and "--gc-check" in p.stderr and "Traceback" not in p.stderr


def test_semantic_flags_without_a_setup():
    base = ["replay", "--workload", "hotcold:0.8:0.2,size=1-8", "--logical-blocks", "8192", "--segment-blocks", "64",
            "--writes", "40000", "--gc-mode", "garbage-proportion", "--no-prefill", "--json"]
    a = json.loads(cli(*base).stdout)
    b = json.loads(cli(*base, "--gc-check", "request", "--pick-segments", "2", "--garbage-accounting", "at-seal",
                       "--victim", "cost-benefit", "--cost-benefit", "sqrt", "--cost-benefit-clock",
                       "trace-time").stdout)
    assert b["conventions"]["pick_segments"] == 2 and a["gc_writes"] != b["gc_writes"]
    p = cli("replay", "--pick-segments", "0", ok=False)
    assert p.returncode == 2


def test_volumes_from_all_devices_and_from_files(two_volume_trace, tmp_path):
    args = ["--setup", "sepbit-replayer", "--policy", "base", "--segment-blocks", "64", "--json"]
    m = json.loads(cli("replay", "--trace", str(two_volume_trace), "--all-devices", *args).stdout)
    assert len(m["volumes"]) == 2
    assert m["user_writes"] == sum(v["user_writes"] for v in m["volumes"])
    total = sum(v["user_writes"] + v["gc_writes"] for v in m["volumes"])
    assert m["waf"] == pytest.approx(total / m["user_writes"])
    # the same volumes as two files give the same numbers
    lines = two_volume_trace.read_text().splitlines(keepends=True)
    files = []
    for dev in ("0", "1"):
        f = tmp_path / f"{dev}.csv"
        f.write_text("".join(line for line in lines if line.startswith(dev + ",")))
        files += ["--trace", str(f)]
    m2 = json.loads(cli("replay", *files, *args).stdout)
    assert [v["gc_writes"] for v in m2["volumes"]] == [v["gc_writes"] for v in m["volumes"]]


def test_volumes_recorded_one_after_another_hold_one_engine_at_a_time(tmp_path):
    """Issue 47 item 5: volumes run one after another, each engine dropped when its trace ends, so a fleet
    keeps one in memory whether its volumes were recorded one after another or interleave request by
    request. Each volume's result is the one it gets replayed alone, either way."""
    rows, t = [], 128166372000000000
    for v in range(4):
        for i in range(3000):
            t += 10000
            rows.append(f"{t},vol,{v},Write,{(i * 37 + v) % 2000 * 4096},4096,1")
    seq = tmp_path / "seq.csv"
    seq.write_text("\n".join(rows) + "\n")
    mixed = tmp_path / "mixed.csv"  # the same requests, the volumes taking turns
    by_volume = [rows[v * 3000:(v + 1) * 3000] for v in range(4)]
    turns = [r.split(",", 1)[1] for i in range(3000) for v in range(4) for r in [by_volume[v][i]]]
    mixed.write_text("".join(f"{128166372000000000 + k * 10000},{r}\n" for k, r in enumerate(turns)))
    m = wafer.replay_volumes("base", all_devices=seq, format="msr")
    assert len(m.volumes) == 4 and m.peak_volumes_in_memory == 1
    alone = wafer.replay("base", trace=seq, format="msr", selection=wafer.Selection(device="2"))
    assert (m.volumes[2].user_writes, m.volumes[2].gc_writes) == (alone.user_writes, alone.gc_writes)
    mm = wafer.replay_volumes("base", all_devices=mixed, format="msr")
    assert mm.peak_volumes_in_memory == 1
    assert [(v.user_writes, v.gc_writes) for v in mm.volumes] == [(v.user_writes, v.gc_writes) for v in m.volumes]


def test_api_setups_and_replay_volumes(two_volume_trace):
    names = [s["name"] for s in wafer.setups()]
    assert names == ["wafer", "sepbit-replayer", "midas-sim", "mqsim"]
    m = wafer.replay_volumes("sepbit", all_devices=two_volume_trace, setup="sepbit-replayer",
                             device=wafer.Device(segment_blocks=64))
    assert len(m.volumes) == 2 and m.waf > 1
    r = wafer.replay("base", "zipf:1.0", writes=20000, device=wafer.Device(logical_blocks=8192, segment_blocks=64),
                     setup="midas-sim")
    assert r.raw["conventions"]["waf_counts_prefill"] and r.waf < r.raw["workload_waf"]


def test_a_volume_too_small_for_a_log_is_skipped_with_a_note(tmp_path):
    """Issue 47 item 4: --all-devices over volumes of very different sizes
    runs every volume that can hold a log and names the ones it left out
    (a fitted segment bigger than the tiny device used to end the run)."""
    import random

    rng = random.Random(1)
    sizes = [40, 6000, 9000]
    lines = []
    for i in range(30000):
        v = rng.randrange(3)
        lines.append(f"{128166372003061629 + i * 1000},hm,{v},Write,{int(sizes[v] * rng.random()) * 4096},4096,1\n")
    path = tmp_path / "fleet.csv"
    path.write_text("".join(lines))
    m = json.loads(cli("replay", "--trace", str(path), "--all-devices", "--policy", "base", "--json").stdout)
    assert sorted(v["workload"].rsplit("#", 1)[1] for v in m["volumes"]) == ["1", "2"]
    assert [s["volume"].rsplit("#", 1)[1] for s in m["skipped"]] == ["0"]
    assert "over-provisioning too small" in m["skipped"][0]["why"]
    text = cli("replay", "--trace", str(path), "--all-devices", "--policy", "base").stdout
    assert "skipped 1 volume(s)" in text and "fleet.csv#0" in text
    # A single volume that small is still an error, naming what would fit.
    p = cli("replay", "--trace", str(path), "--device", "0", ok=False)
    assert p.returncode == 2 and "--op" in p.stderr and "Traceback" not in p.stderr


def test_all_devices_through_the_split_gives_the_same_volumes(two_volume_trace):
    """--all-devices replays the file's cached split volumes; each volume's
    result equals the one-pass-per-device path (still taken with a time window)."""
    from wafer.traces import Selection

    kw = dict(setup="sepbit-replayer", device=wafer.Device(segment_blocks=64))
    split = wafer.replay_volumes("base", all_devices=two_volume_trace, **kw)
    direct = wafer.replay_volumes("base", all_devices=two_volume_trace, selection=Selection(max_requests=10**9), **kw)
    assert [(v.workload, v.user_writes, v.gc_writes) for v in split.volumes] == \
        [(v.workload, v.user_writes, v.gc_writes) for v in direct.volumes]
    assert split.waf == direct.waf and split.volumes[0].workload.endswith("#0")


def test_volumes_written_one_after_another_keep_their_own_clocks(tmp_path):
    """Issue 46 item 3: a file whose volumes come one after another (each with its own times, the second's
    earlier than the first's last) used to have its times raised to the file's running maximum before the
    split, flattening every later volume's clock: cost-benefit's ages became 0 (multilog and sepbit under the
    replayer's setup +10-17%). Each volume now keeps its own clock: --all-devices gives each volume what
    --device gives it."""
    import random

    rng = random.Random(7)
    lines = []
    for v in range(2):
        t = 1_600_000_000_000_000  # both volumes start at the same time: volume 1 goes back in the file
        for i in range(6000):
            t += rng.choice([50, 80, 120]) if i % 500 else 3_600_000_000  # bursts, an hour idle between
            blk = int(1500 * rng.random() ** 2)
            lines.append(f"{v},W,{blk * 4096},4096,{t}")
    path = tmp_path / "concat.csv"
    path.write_text("\n".join(lines) + "\n")
    kw = dict(format="alibaba", setup="sepbit-replayer", victim="cost-benefit", device=wafer.Device(segment_blocks=32))
    m = wafer.replay_volumes("sepbit", all_devices=path, **kw)
    for v in range(2):
        alone = wafer.replay("sepbit", trace=path, selection=wafer.Selection(device=str(v)), **kw)
        got = m.volumes[v]
        assert (got.user_writes, got.gc_writes) == (alone.user_writes, alone.gc_writes), v
    assert m.volumes[1].raw["trace"]["backwards_timestamps"] == 0
