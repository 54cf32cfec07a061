import json

import pytest

import wafer


def test_replay_returns_consistent_result(small):
    r = wafer.replay("two-r", "zipf:0.9", device=small, writes=100_000, seed=3)
    assert r.policy == "two-r" and r.victim == "greedy"
    assert r.user_writes == 100_000
    assert r.waf == pytest.approx((r.user_writes + r.gc_writes) / r.user_writes)
    assert r.steady_waf is not None and r.steady_waf >= 1.0
    assert r.extra_writes_per_user_write == pytest.approx(r.waf - 1)
    assert sum(g["user_writes"] for g in r.groups) == r.user_writes
    assert sum(g["gc_writes"] for g in r.groups) == r.gc_writes
    assert r.erases["max"] >= r.erases["min"]
    assert sum(r.victim_valid_histogram) == r.raw["counters"]["victims"]
    d = r.to_dict()
    for key in ("policy", "waf", "steady_waf", "user_writes", "gc_writes", "elapsed_seconds",
                "user_writes_per_second"):
        assert key in d
    json.dumps(d)


def test_same_seed_same_result(small):
    a = wafer.replay("base", "hotcold:0.9:0.1,size=1-4", device=small, writes=50_000, seed=9)
    b = wafer.replay("base", "hotcold:0.9:0.1,size=1-4", device=small, writes=50_000, seed=9)
    c = wafer.replay("base", "hotcold:0.9:0.1,size=1-4", device=small, writes=50_000, seed=10)
    assert (a.gc_writes, a.raw["windows"]) == (b.gc_writes, b.raw["windows"])
    assert a.gc_writes != c.gc_writes


def test_timeseries_is_columnar(small):
    r = wafer.replay("base", "uniform", device=small, writes=5 * (1 << 14))
    ts = r.timeseries()
    n = len(ts["window"])
    assert n == 50  # 5 drive-writes / 0.1
    assert all(len(col) == n for col in ts.values())
    assert sum(ts["user_writes"]) == r.user_writes
    assert ts["cumulative_waf"][-1] == pytest.approx(r.waf)


def test_to_arrow_and_pandas_when_installed(small):
    r = wafer.replay("base", "uniform", device=small, writes=30_000)
    pa = pytest.importorskip("pyarrow")
    t = r.to_arrow()
    assert isinstance(t, pa.Table) and t.num_rows == len(r.timeseries()["window"])


def test_compare_runs_every_policy_by_default(small):
    names = [p["name"] for p in wafer.policies()]
    rs = wafer.compare(workload="hotcold:0.9:0.1", device=small, writes=80_000, victims=("greedy", "fifo"))
    assert [(r.policy, r.victim) for r in rs] == [(n, v) for v in ("greedy", "fifo") for n in names]
    table = wafer.format_table(rs)
    assert "steady WAF" in table and all(n in table for n in names)


def test_policies_lists_names_descriptions_defaults():
    ps = {p["name"]: p for p in wafer.policies()}
    assert {"base", "two-r", "sepbit", "midas", "autostream", "equal-partition"} <= set(ps)
    assert ps["midas"]["defaults"]["last_victim"] == "cost-benefit"
    assert all(p["description"] and isinstance(p["defaults"], dict) for p in ps.values())
    assert ps["sepbit"]["defaults"] == {"window_segments": 16, "age_multiples": [4.0, 16.0],
                                        "lifespan_start": "first-write", "user_test": "exact", "classes": 6,
                                        "gc_age": "since-write", "valid_count": "written"}
    assert {v["name"] for v in wafer.victims()} == {"greedy", "cost-benefit", "fifo", "cat", "d-choices", "adjusted-greedy",
                                                   "random", "random-greedy", "window-greedy", "lru", "cost-hotness",
                                                   "multilog", "basic"}


def test_capacity_strings():
    assert wafer.parse_size("4GiB") == 4 << 30
    assert wafer.parse_size("64k") == 65536
    assert wafer.parse_size("1.5 GB") == 1_500_000_000
    assert wafer.Device(capacity="1GiB").resolved_logical_blocks() == 1 << 18
    with pytest.raises(wafer.ConfigError, match="cannot read size"):
        wafer.parse_size("lots")


def test_progress_callback_sees_every_chunk(small):
    seen = []
    wafer.replay("base", "uniform", device=small, writes=300_000, on_step=lambda w, t: seen.append((w, t)))
    assert seen and seen[-1][1] == 300_000 and all(a < b for (a, _), (b, _) in zip(seen, seen[1:]))
