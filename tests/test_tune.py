"""AutoBlox's machinery on an analytic device model (the timing simulator is
exercised in the end-to-end test): clustering separates workload categories,
the space's constraints reject what they must, the search beats the
reference, respects a power budget, and resumes from AutoDB."""

import math

import numpy as np
import pytest

from wafer.tune import AutoDB, Clustering, Constraints, Study, prune, reference, tune
from wafer.tune import space as S
from wafer.tune.clustering import windows_of
from wafer.tune.objective import grade, performance


def analytic(c, trace):
    """A toy device: latency falls with parallelism and cache, throughput rises
    with channel bandwidth, and so does power. Traces scale it."""
    scale = {"light": 1.0, "heavy": 3.0, "other": 2.0}[trace.split(":")[0]]
    par = c["channels"] * c["chips_per_channel"] * min(c["dies_per_chip"] * c["planes_per_die"], 8)
    lat = scale * (50 + 2e5 / par + 4e10 / c["cache_bytes"] + 1e3 / c["dram_rate_mts"])
    thpt = 1e6 * c["channels"] * c["channel_width_bytes"] * c["channel_rate_mts"] / scale
    power = 2.0 + 0.004 * c["channels"] * c["channel_width_bytes"] * c["channel_rate_mts"]
    return {"latency_us": lat, "throughput_bps": thpt, "power_w": power, "energy_j": power, "waf": 1.0}


def preset(c):
    return "\n".join(f"{k} = {v!r}" for k, v in c.items())


def study(**kw):
    return Study(target="light", workloads={"light": ["light:1", "light:2"], "heavy": ["heavy:1"],
                                            "other": ["other:1"]}, max_iterations=kw.pop("max_iterations", 12), **kw)


#: A short tuning order for the tests: the bandwidth knobs, then the DRAM split.
ORDER = [["channel_rate_mts", "channel_width_bytes"], list(S.DRAM)]


def test_grade_is_eq1_and_eq2():
    assert performance(2.0, 1.0, alpha=0.5) == pytest.approx(0.5 * math.log(2))
    assert performance(2.0, 4.0, alpha=0.0) == pytest.approx(math.log(2))
    assert grade(1.0, [0.0, 0.5], beta=0.1) == pytest.approx(0.9 + 0.1 * 0.25)


def test_constraints_reject_and_neighbours_repair():
    cons = Constraints()
    ref = reference()
    assert cons.violations(ref) == []
    assert any("cache + CMT" in v for v in cons.violations(dict(ref, cache_bytes=ref["cache_bytes"] + 64 * S.MIB)))
    assert any("capacity" in v for v in cons.violations(dict(ref, blocks_per_plane=128)))
    assert any("[40, 80]" in v for v in cons.violations(dict(ref, channels=4, blocks_per_plane=1024,
                                                              pages_per_block=1024)))
    for n in S.neighbours(ref, list(S.DRAM) + list(S.LAYOUT) + ["plane_allocation", "copyback"], cons):
        assert cons.violations(n) == [], n
    moved = S.neighbours(ref, ["cache_bytes"], cons)
    assert moved and all(n["cache_bytes"] + n["cmt_bytes"] == cons.dram_bytes for n in moved)
    assert cons.power_violation(30.0) is None
    assert "budget" in Constraints(power_watts=3.0).power_violation(4.0)


def test_encoding_and_distance():
    ref = reference()
    other = dict(ref, plane_allocation="PDWC", channels=ref["channels"] + 4)
    assert S.distance(ref, other) == 1 + 2
    assert len(S.encode(ref)) == len(S.PARAMS) - 3 + 24 + 6 + 4


def test_search_beats_the_reference_and_resumes(tmp_path):
    db = AutoDB(tmp_path / "autodb.sqlite")
    out = tune(study(), db, analytic, preset, order=ORDER)
    assert out.scores["grade"] > 0.05, out.scores
    assert out.scores["target_throughput_speedup"] > 1.05
    assert Constraints().violations(out.best) == []
    assert db.best(study().search_id())["grade"] == pytest.approx(out.scores["grade"])


def test_a_killed_search_resumes_where_it_stopped(tmp_path):
    db = AutoDB(tmp_path / "autodb.sqlite")
    short = tune(study(max_iterations=3), db, analytic, preset, order=ORDER)
    assert (len(short.history), short.stopped) == (3, "iteration cap")
    calls = []

    def counting(c, t):
        calls.append(t)
        return analytic(c, t)

    # The same evaluator, counted: it says so by its key (AutoDB keeps
    # validations per evaluator; another one would validate everything again).
    from wafer.tune.search import evaluator_key

    counting.key = lambda: evaluator_key(analytic)
    again = tune(study(max_iterations=5), db, counting, preset, order=ORDER)
    assert len(again.history) == 5 and again.history[:3] == short.history
    assert len(calls) <= 2 * 4, "only the two new configurations were validated"
    fresh = tune(study(max_iterations=5), AutoDB(tmp_path / "fresh.sqlite"), analytic, preset, order=ORDER)
    assert [h["config_id"] for h in fresh.history] == [h["config_id"] for h in again.history]


def test_power_budget_binds(tmp_path):
    free = tune(study(), AutoDB(tmp_path / "a.sqlite"), analytic, preset, order=ORDER)
    power = analytic(free.best, "light:1")["power_w"]
    budget = analytic(reference(), "light:1")["power_w"] + 0.01
    assert power > budget, "the unconstrained search goes past the budget"
    db = AutoDB(tmp_path / "b.sqlite")
    bound = tune(study(constraints=Constraints(power_watts=budget)), db, analytic, preset, order=ORDER)
    assert analytic(bound.best, "light:1")["power_w"] <= budget
    assert db.db.execute("SELECT count(*) FROM runs WHERE status = 'invalid'").fetchone()[0] > 0


def test_crashed_configurations_are_recorded(tmp_path):
    def flaky(c, t):
        if c["channels"] != reference()["channels"]:
            raise RuntimeError("simulator refused the layout")
        return analytic(c, t)

    db = AutoDB(tmp_path / "c.sqlite")
    out = tune(study(max_iterations=6), db, flaky, preset, order=[["channels", "chips_per_channel"]])
    crashed = db.db.execute("SELECT count(*), min(error) FROM runs WHERE status = 'crashed'").fetchone()
    assert crashed[0] > 0 and "refused the layout" in crashed[1]
    assert out.best["channels"] == reference()["channels"]


def test_pruning_orders_sensitive_parameters_first(tmp_path):
    res = prune(study(), AutoDB(tmp_path / "p.sqlite"), analytic, preset)
    assert res["order"][:2] == [list(S.LAYOUT), list(S.DRAM)]
    assert "channel_width_bytes" in res["kept"] and "copyback" in res["pruned"]
    assert res["sensitivity"]["channel_rate_mts"] > 0


def synthetic_windows(kind, n, rng):
    """Windows of a synthetic category: random small reads, sequential large writes, bursts."""
    w = 3000 * n
    if kind == "random":
        t = np.cumsum(rng.exponential(1e5, w))
        off = rng.integers(0, 1 << 30, w) * 4096
        size = np.full(w, 4096)
        ops = (rng.random(w) < 0.7).astype(int) ^ 1
    elif kind == "sequential":
        t = np.cumsum(rng.exponential(1e6, w))
        off = (np.arange(w) * 131072) % (1 << 36)
        size = np.full(w, 131072)
        ops = np.ones(w, dtype=int)
    else:
        t = np.cumsum(np.where(rng.random(w) < 0.05, 1e9, 1e3))
        off = rng.integers(0, 1 << 20, w) * 4096
        size = rng.choice([4096, 8192, 65536], w)
        ops = (rng.random(w) < 0.5).astype(int)
    return windows_of(t.astype(np.int64), off, size, ops, np.zeros(w, dtype=int))


def test_clustering_separates_categories_and_persists(tmp_path):
    rng = np.random.default_rng(3)
    train = {k: synthetic_windows(k, 8, rng) for k in ("random", "sequential", "bursty")}
    cl = Clustering.fit(train)
    share = cl.own_cluster_share({k: synthetic_windows(k, 4, rng) for k in train})
    assert min(share.values()) >= 0.95, share
    cl.save(tmp_path / "c.json")
    again = Clustering.load(tmp_path / "c.json")
    got = again.classify(synthetic_windows("sequential", 3, rng))
    assert got["cluster"] == "sequential" and got["distance"] < got["threshold"]


def toy(c, trace):
    """The analytic device keyed by synthetic workload specs (for wafer.tune end to end)."""
    return analytic(c, {"zipf:1.0": "light", "seq": "heavy"}.get(trace, "other") + ":1")


def test_wafer_tune_end_to_end_then_from_the_database(tmp_path):
    import wafer

    db = tmp_path / "a.sqlite"
    r = wafer.tune("zipf:1.0", {"seq": ["seq"]}, db=db, max_iterations=6, evaluator=toy, progress=False, jobs=1)
    assert not r.from_database and len(r.history) == 6 and r.validations > 6
    assert r.scores["grade"] >= 0 and r.metrics["tuned"]["latency_us"] <= r.metrics["reference"]["latency_us"]
    assert "grade" in r.table() and r.to_json()["changed"] == [
        {"parameter": n, "reference": a, "tuned": b} for n, a, b in r.changed()]
    png = r.plot(tmp_path / "g.png")
    assert png.stat().st_size > 1000
    # The same workload again: its cluster is known and answered from AutoDB, no validation.
    again = wafer.tune("zipf:1.0", {"seq": ["seq"]}, db=db, max_iterations=6, evaluator=toy, progress=False)
    assert again.from_database and again.best == r.best and again.classification["cluster"] == r.cluster


def test_wafer_tune_rejects_bad_settings_and_widens_for_what_if(tmp_path):
    import wafer
    from wafer.tune.runner import widened

    with pytest.raises(ValueError, match="max_iterations"):
        wafer.tune("zipf:1.0", db=tmp_path / "x.sqlite", max_iterations=0, evaluator=toy)
    with pytest.raises(ValueError, match="goal"):
        wafer.tune("zipf:1.0", db=tmp_path / "x.sqlite", goal=("iops", 2.0), evaluator=toy)
    wide = {p.name: p for p in widened(S.PARAMS, 4)}
    assert max(wide["channel_rate_mts"].values) == 4 * max(S.BY_NAME["channel_rate_mts"].values)
    assert wide["channels"].values == S.BY_NAME["channels"].values  # layout keeps its list
    r = wafer.tune("zipf:1.0", db=tmp_path / "w.sqlite", max_iterations=30, evaluator=toy, progress=False, jobs=1,
                   goal=("latency", 1.05), widen=4)
    assert r.stopped == "goal reached" and r.scores["target_latency_speedup"] >= 1.05


def categories_toy(c, trace):
    """The analytic device, one scale per synthetic category of `wafer reproduce autoblox`."""
    from wafer.repro_autoblox import CATEGORIES

    name = {s: k for k, s in CATEGORIES.items()}[trace]
    return analytic(c, {"database": "light", "analytics": "heavy"}.get(name, "other") + ":1")


def test_reproduce_autoblox_checks_its_claims(tmp_path):
    from wafer import repro_autoblox

    out = repro_autoblox.run(quick=True, progress=False, evaluator=categories_toy, db=tmp_path / "a.sqlite", jobs=1)
    assert {c["n"] for c in out["claims"]} == {1, 2, 3}
    assert all(c["status"] in ("holds", "fails", "undecided") for c in out["claims"])
    assert set(out["cluster_share"]) == set(repro_autoblox.CATEGORIES)
    assert [(r["target"], r["beta"]) for r in out["results"]] == [("database", 0.1), ("database", 0.0),
                                                                 ("analytics", 0.1)]
    md = repro_autoblox.markdown(out)
    assert "own-cluster share" in md and ("HOLDS" in md or "FAILS" in md)


def test_wafer_tune_cli_on_the_timing_model(tmp_path):
    """The real evaluator: validations run the timing model, the preset the
    command writes loads as a timing preset, and a rerun answers from AutoDB."""
    import json
    import subprocess
    import sys

    import wafer

    args = [sys.executable, "-m", "wafer", "tune", "--workload", "uniform,reads=0.5", "--max-iterations", "2",
            "--writes", "3000", "--logical-blocks", "32768", "--db", str(tmp_path / "t.sqlite"), "--jobs", "1",
            "-o", str(tmp_path / "best.toml"), "--json", "-q", "--fit-device", "--seeds", "2"]
    p = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    ref = out["metrics"]["reference"]
    assert out["scores"]["seeds"] == 2 and isinstance(out["significant"], bool)
    lo, hi = out["scores"]["grade_ci95"]
    assert lo <= out["scores"]["grade"] <= hi or math.isclose(lo, hi)
    assert out["validation"]["flash_programs"] > 0
    assert ref["latency_us"] > 0 and ref["throughput_bps"] > 0 and ref["power_w"] > 0 and ref["energy_j"] > 0
    assert out["validations"] >= 3
    ssd = wafer.timing_config(tmp_path / "best.toml")
    assert ssd["flash"]["channels"] >= 1
    again = json.loads(subprocess.run(args, capture_output=True, text=True, timeout=600).stdout)
    assert again["from_database"] and again["best"] == out["best"]
    other = [x if x != "uniform,reads=0.5" else "seq,reads=0.5" for x in args]
    other[other.index("--max-iterations") + 1] = "1"
    assert not json.loads(subprocess.run(other, capture_output=True, text=True, timeout=600).stdout)["from_database"]
    # Another seed count is another evaluator: AutoDB does not answer with the other's search.
    more = [x if x != "2" else "1" for x in args]
    assert not json.loads(subprocess.run(more, capture_output=True, text=True, timeout=600).stdout)["from_database"]
    bad = subprocess.run(args[:3] + ["tune", "--workload", "uniform", "--max-iterations", "0", "--db",
                                     str(tmp_path / "x.sqlite")], capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "max-iterations" in bad.stderr
    small = subprocess.run(args[:3] + ["tune", "--workload", "uniform", "--logical-blocks", "8192", "--max-iterations",
                                       "1", "--db", str(tmp_path / "s.sqlite"), "-q", "--fit-device", "--seeds", "1"],
                           capture_output=True, text=True, timeout=300)
    assert small.returncode == 2 and "too small for the reference's superblocks" in small.stderr


def test_wafer_tune_on_a_trace_file(tmp_path):
    """A real trace layout as the target (clustering reads it through wafer's readers)."""
    import json
    import subprocess
    import sys

    trace = tmp_path / "t.csv"
    run = [sys.executable, "-m", "wafer"]
    subprocess.run(run + ["traces", "sample", str(trace), "--workload", "zipf:0.9,size=1-4,reads=0.5",
                          "--requests", "60000"], check=True, capture_output=True, timeout=120)
    p = subprocess.run(run + ["tune", str(trace), "--max-iterations", "1", "--db", str(tmp_path / "t.sqlite"),
                              "--jobs", "1", "--json", "-q", "--fit-device", "--seeds", "1"],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["target"] == str(trace) and out["metrics"]["reference"]["latency_us"] > 0


def test_tune_validates_on_a_ray_cluster_as_on_the_process_pool(tmp_path_factory, monkeypatch):
    """--backend ray: the same validations on Ray workers, the same search."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'wafer[ray]')")
    import wafer
    from wafer.tune.evaluate import TimingEvaluator

    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    tmp = tmp_path_factory.mktemp("t")  # short: Ray's socket paths must fit in 107 bytes
    ev = TimingEvaluator(writes=2000, logical_blocks=32768, whole_drive=False, seeds=1)
    kw = dict(max_iterations=2, evaluator=ev, progress=False, jobs=2)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _temp_dir=str(tmp))
    try:
        on_ray = wafer.tune("uniform,reads=0.5", {"seq": ["seq"]}, db=tmp / "ray.sqlite", backend="ray", **kw)
    finally:
        ray.shutdown()
    local = wafer.tune("uniform,reads=0.5", {"seq": ["seq"]}, db=tmp / "local.sqlite", **kw)
    assert on_ray.validations == local.validations > 2
    assert on_ray.best == local.best and on_ray.scores == local.scores


def test_what_if_flags_and_another_evaluator_are_never_answered_from_the_database(tmp_path):
    """Issue 44 item 4: --goal, --widen, the evaluator: each searches again."""
    import wafer

    db = tmp_path / "a.sqlite"
    kw = dict(db=db, max_iterations=3, progress=False, jobs=1)
    first = wafer.tune("zipf:1.0", {"seq": ["seq"]}, evaluator=toy, **kw)
    assert wafer.tune("zipf:1.0", {"seq": ["seq"]}, evaluator=toy, **kw).from_database
    assert not wafer.tune("zipf:1.0", {"seq": ["seq"]}, evaluator=toy, goal=("latency", 1.01), **kw).from_database
    assert not wafer.tune("zipf:1.0", {"seq": ["seq"]}, evaluator=toy, widen=2, **kw).from_database

    def toy_again(c, trace):
        return toy(c, trace)

    other = wafer.tune("zipf:1.0", {"seq": ["seq"]}, evaluator=toy_again, **kw)
    assert not other.from_database and other.validations > 0
    assert other.best == first.best  # the same device, validated again under its own key


def _seeded(c, trace):
    """The analytic device with three seeds that move the target's latency
    ±30%, the reference's one way and every other configuration's the other."""
    m = toy(c, trace)
    noise = (0.3 if c == reference() else -0.3) if trace == "zipf:1.0" else 0.0
    samples = [dict(m, latency_us=m["latency_us"] * (1 + noise * k)) for k in (-1, 0, 1)]
    return dict(m, samples=samples)


def test_a_gain_inside_the_seeds_spread_is_not_significant(tmp_path):
    """Issue 44 item 3: the grade's interval over seeds and the verdict."""
    import wafer

    r = wafer.tune("zipf:1.0", {"seq": ["seq"]}, db=tmp_path / "n.sqlite", max_iterations=4, evaluator=_seeded,
                   progress=False, jobs=1)
    s = r.scores
    assert s["seeds"] == 3 and s["grade_ci95"][0] <= s["grade"] <= s["grade_ci95"][1]
    assert not r.changed() or s["grade_ci95"][0] < s["grade_ci95"][1]
    # The reference's own seeds differ by ±30%: no search step here beats that.
    assert s["reference_spread"] > 0.05 and not r.significant and r.to_json()["significant"] is False
    assert "no significant improvement" in r.table()
    quiet = wafer.tune("zipf:1.0", {"seq": ["seq"]}, db=tmp_path / "q.sqlite", max_iterations=4, evaluator=toy,
                       progress=False, jobs=1)
    assert quiet.scores["seeds"] == 1 and not quiet.significant and "one seed" in quiet.table()


def test_a_validation_whose_writes_never_reached_flash_is_not_a_gain(tmp_path):
    """Issue 44 item 1: validation.flash_programs / gc_ran flag a run; a flagged one never counts."""
    import wafer

    def cached(c, trace):
        m = toy(c, trace)
        # Every configuration but the reference keeps its writes in DRAM.
        held = c != reference()
        return dict(m, flash_programs=0 if held else 100, gc_ran=not held, write_share=0.6)

    r = wafer.tune("zipf:1.0", {"seq": ["seq"]}, db=tmp_path / "f.sqlite", max_iterations=4, evaluator=cached,
                   progress=False, jobs=1)
    assert r.best == reference() and not r.changed()
    assert r.to_json()["validation"] == {"flash_programs": 100, "gc_ran": True}


def test_think_time_model_of_a_trace(tmp_path):
    """The artifact's rates: 5-s windows from each window's first request,
    the busiest 1-s slice of at least 100 requests as the peak."""
    from wafer.tune.evaluate import peak_rate, think_model

    lines = []
    t0 = 128166372003061629  # MSR times are 100 ns units
    # 200 requests of 4 KiB in the first second (a burst), then 10 a second for 9 s.
    times = [i * 5_000_000 // 200 for i in range(200)] + [10_000_000 + k * 1_000_000 for k in range(90)]
    for i, t in enumerate(times):
        lines.append(f"{t0 + t},hm,0,Write,{(i % 512) * 4096},4096,1\n")
    trace = tmp_path / "burst.csv"
    trace.write_text("".join(lines))
    peak = peak_rate(str(trace))
    burst_s = (times[199] - times[0]) * 100 / 1e9  # 0.5 s: counted as 1 s
    assert burst_s < 0.8 and peak == pytest.approx(200 * 4096 / 1e9, rel=1e-9)
    m = think_model(str(trace), peak)
    assert m["peak_bytes_per_ns"] == peak and m["windows"][0][0] == 0
    # The first window (0-5 s) holds the burst and the 10/s requests that follow it.
    in_first = sum(1 for t in times if t * 100 < 5e9)
    assert m["windows"][0][1] == pytest.approx(in_first * 4096 / 5e9)
    assert all(b[0] > a[0] for a, b in zip(m["windows"], m["windows"][1:]))


def test_the_think_arrival_waits_where_the_trace_was_idle(tmp_path):
    """Validations under think time run slower than back to back on a trace
    far below its peak, as AutoBlox's MQSim does."""
    import subprocess
    import sys

    from wafer.tune.evaluate import TimingEvaluator

    trace = tmp_path / "t.csv"
    subprocess.run([sys.executable, "-m", "wafer", "traces", "sample", str(trace), "--workload",
                    "zipf:0.9,size=1-4,reads=0.5", "--requests", "20000"], check=True, capture_output=True, timeout=120)
    kw = dict(whole_drive=False, seeds=1, precondition=1.0)
    closed = TimingEvaluator(arrival="closed", **kw)(reference(), str(trace))
    think = TimingEvaluator(arrival="think", **kw)(reference(), str(trace))
    assert think["arrival_used"] == "think" and closed["arrival_used"] == "closed"
    assert think["simulated_seconds"] > closed["simulated_seconds"]
    assert think["flash_programs"] > 0 and 0 < think["write_share"] < 1
    with pytest.raises(ValueError, match="arrival"):
        TimingEvaluator(arrival="nosuch")


def test_realistic_constraints_keep_to_shipped_parts(tmp_path):
    """Issue 44 item 2: --constraints realistic (the default), none, a file."""
    real = Constraints.of("realistic")
    ref = reference()
    assert real.violations(ref) == []
    for name, v in (("channel_width_bytes", 2), ("planes_per_die", 4), ("dies_per_chip", 16), ("pcie_lanes", 16),
                    ("pages_per_block", 384), ("channels", 32)):
        assert any(name in w for w in real.violations(dict(ref, **{name: v}))), name
    # Over-provisioning cannot buy speed by shrinking the drive.
    assert any("user capacity" in w for w in real.violations(dict(ref, op=0.3)))
    assert Constraints.of("none").violations(dict(ref, channel_width_bytes=2)) == []
    for n in S.neighbours(ref, list(S.LAYOUT), real):
        assert real.violations(n) == []
    assert all(h["source"] for h in real.held())
    f = tmp_path / "c.toml"
    f.write_text('extends = "realistic"\nchannels = { max = 12, source = "my board" }\n')
    mine = Constraints.of(str(f))
    assert any("channels" in w for w in mine.violations(dict(ref, channels=14)))
    assert mine.rules["planes_per_die"] == S.REALISTIC["planes_per_die"]
    for text, why in (('nosuch = { max = 1 }', "not a parameter"), ('channels = { max = 8 }', "the reference's 12"),
                      ('channels = { min = 40 }', "no value"), ('user_capacity = [2, 1]', "user_capacity"),
                      ('channels = 3', "a table"), ('extends = "x"', "extends")):
        f.write_text(text + "\n")
        with pytest.raises(ValueError, match=why):
            Constraints.of(str(f))
    with pytest.raises(ValueError, match="cannot read"):
        Constraints.of(str(tmp_path / "none.toml"))


def test_power_budget_relative_to_the_reference(tmp_path):
    """--power-budget W|+P%|none; +10% (the default) compares each
    validation with the reference's on the same trace."""
    from wafer.tune.runner import power_of

    assert power_of("+10%") == {"power_watts": None, "power_ratio": pytest.approx(1.1)}
    assert power_of("none") == {"power_watts": None, "power_ratio": None}
    assert power_of("12W", "intel750") == {"power_watts": 12.0, "power_ratio": None}
    with pytest.raises(ValueError, match="idle power"):
        power_of(1.0, "intel750")
    for bad in ("abc", "-5", "-150%", "x%"):
        with pytest.raises(ValueError, match="--power-budget"):
            power_of(bad)
    cons = Constraints(power_ratio=1.1)
    assert cons.power_violation(10.0, 10.0) is None and "1.10x" in cons.power_violation(11.5, 10.0)
    db = AutoDB(tmp_path / "p.sqlite")
    out = tune(study(constraints=Constraints(power_ratio=1.05), max_iterations=10), db, analytic, preset, order=ORDER)
    ref_power = analytic(reference(), "light:1")["power_w"]
    assert analytic(out.best, "light:1")["power_w"] <= 1.05 * ref_power + 1e-9


def test_tune_cli_names_a_bad_budget_or_constraints_file(tmp_path):
    import subprocess
    import sys

    base = [sys.executable, "-m", "wafer", "tune", "--workload", "uniform", "--db", str(tmp_path / "x.sqlite"), "-q"]
    for extra, flag in ((["--power-budget", "1"], "--power-budget"), (["--power-budget", "abc"], "--power-budget"),
                        (["--constraints", str(tmp_path / "none.toml")], "--constraints")):
        p = subprocess.run(base + extra, capture_output=True, text=True, timeout=120)
        assert p.returncode == 2 and flag in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_objective_terms_and_weights(tmp_path):
    """Issue 44 item 3: --objective latency,p99,throughput,endurance with weights."""
    import wafer
    from wafer.tune.objective import parse_objective, ratios, weighted

    assert parse_objective("latency=0.25,p99=0.25,throughput=0.5") == {"latency": 0.25, "p99": 0.25,
                                                                       "throughput": 0.5}
    assert parse_objective("latency,throughput") == {"latency": 0.5, "throughput": 0.5}
    assert parse_objective(None) is None
    for bad, why in (("iops", "not a term"), ("latency=x", "not a number"), ("latency=-1", ">= 0"),
                     ("latency=0", "every weight")):
        with pytest.raises(ValueError, match=why):
            parse_objective(bad)
    c = {"latency_us": 50.0, "throughput_bps": 2e6, "p99_us": 100.0, "endurance": 0.1}
    r = {"latency_us": 100.0, "throughput_bps": 1e6, "p99_us": 100.0, "endurance": 0.2}
    g = ratios([(c, r)], {"latency": 1, "throughput": 1, "p99": 1, "endurance": 1})
    assert g == {"latency": 2.0, "throughput": 2.0, "p99": 1.0, "endurance": 2.0}
    assert weighted(g, {"latency": 0.5, "p99": 0.5}) == pytest.approx(0.5 * math.log(2))

    def with_p99(c, trace):
        m = toy(c, trace)
        return dict(m, p99_us=m["latency_us"] * 3, endurance=0.01)

    r = wafer.tune("zipf:1.0", {"seq": ["seq"]}, db=tmp_path / "o.sqlite", max_iterations=3, evaluator=with_p99,
                   progress=False, jobs=1, objective="latency=0.5,p99=0.5")
    assert set(r.scores["target_gains"]) >= {"latency", "p99", "throughput", "endurance"}
    with pytest.raises(ValueError, match="writes nothing"):
        wafer.tune("uniform,reads=1.0", db=tmp_path / "w.sqlite", max_iterations=1, evaluator=with_p99,
                   progress=False, objective="write_latency")
    with pytest.raises(ValueError, match="do not report"):
        wafer.tune("zipf:1.0", db=tmp_path / "e.sqlite", max_iterations=1, evaluator=toy, progress=False,
                   objective="endurance")
