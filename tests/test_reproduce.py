import importlib

import pandas as pd

from wafer import reproduce as rp


def cells(rows):
    """A sweep table from (workload, op, victim, policy, seed, steady_waf[, user_accuracy, gc_accuracy])."""
    df = pd.DataFrame([dict(zip(("workload", "op", "victim", "policy", "seed", "steady_waf", "user_accuracy",
                                 "gc_accuracy"), r)) for r in rows])
    df["status"] = "done"
    df["policy_name"] = df.policy
    for c in ("user_accuracy", "gc_accuracy"):
        if c not in df:
            df[c] = None
    return rp.Cells(df)


def test_orders_and_lowest_decide_on_the_means():
    c = cells([("zipf:1.0", 0.1, "greedy", p, s, w + s * 0.01) for s in (1, 2) for p, w in
               (("sepbit", 3.0), ("two-r", 3.5), ("base", 5.0))])
    holds, numbers = rp.order(["sepbit", "two-r", "base"], ["zipf:1.0"])(c)
    assert holds is True and "sepbit 3.015 < two-r 3.515 < base 5.015" in numbers
    holds, numbers = rp.lowest("base", ["zipf:1.0"])(c)
    assert holds is False and "1 of 1 settings do not" in numbers and "sepbit 3.015" in numbers


def test_a_claim_over_missing_runs_is_undecided_not_failed():
    c = cells([("zipf:1.0", 0.1, "greedy", "sepbit", 1, 3.0)])
    holds, numbers = rp.order(["sepbit", "two-r"], ["zipf:1.0"])(c)
    assert holds is None and "two-r -" in numbers


def test_victims_variants_and_accuracy_claims():
    rows = [("zipf:1.0", 0.1, v, p, 1, w, a, g) for v, p, w, a, g in (
        ("greedy", "sepbit", 4.0, 0.88, None), ("cost-benefit", "sepbit", 3.4, 0.88, None),
        ("greedy", "sepbit+ngc", 2.5, 0.88, 0.7), ("cost-benefit", "sepbit+ngc", 2.4, 0.88, 0.7),
        ("greedy", "nodap", 1.4, 1.0, 1.0), ("cost-benefit", "nodap", 1.3, 1.0, 1.0))]
    c = cells(rows)
    assert rp.better_victim("sepbit", ["zipf:1.0"], "cost-benefit", "greedy")(c)[0] is True
    holds, numbers = rp.lowers("sepbit+ngc", "sepbit", ["zipf:1.0"], 0.1)(c)
    assert holds is True and "38% lower" in numbers
    assert rp.accuracy_at_least("nodap", "user", ["zipf:1.0"], 1.0)(c)[0] is True
    assert rp.accuracy_at_least("sepbit", "user", ["zipf:1.0"], 0.9)(c)[0] is False
    # With the baselines stored, the claim's numbers show them beside the accuracy.
    df = c.df.copy()
    df["user_majority"], df["user_balanced_accuracy"] = 0.7, 0.55
    holds, numbers = rp.accuracy_at_least("sepbit", "user", ["zipf:1.0"], 0.9)(rp.Cells(df))
    assert holds is False and "0.880 (commonest class 0.700, balanced 0.550)" in numbers
    assert rp.lowest("nodap", ["zipf:1.0"], among="practical")(c)[0] is True


def test_every_experiment_is_a_valid_study_with_claims():
    from wafer.sweep import load

    for name, e in rp.EXPERIMENTS.items():
        if e.runner:  # its own module runs it (not a sweep)
            assert e.figure and importlib.import_module(f"wafer.{e.runner}").markdown
            continue
        s = load(e.study(name, quick=True, seeds=2))
        assert len(s.jobs()) == len(s.policies) * len(e.victims) * len(e.workloads) * len(e.ops) * 2
        assert e.claims and e.figure
        out = rp.check_claims(name, cells([("uniform", 0.1, "greedy", "base", 1, 2.0)]))
        assert {c["status"] for c in out} <= {"holds", "fails", "undecided"}


def test_every_runner_follows_the_protocol():
    import pytest

    import wafer

    value = {"seeds": 2, "jobs": 1, "store": "x.sqlite", "report": "rep"}
    runners = [n for n, e in rp.EXPERIMENTS.items() if e.runner]
    assert set(runners) == {"streams", "autoblox", "timing", "dogi-configs"}
    for name in runners:
        r = rp.runner(rp.EXPERIMENTS[name])
        assert set(r.REFUSED) <= set(rp.OPTIONS) and callable(r.reproduce) and callable(r.markdown)
        for k in r.REFUSED:
            with pytest.raises(wafer.ConfigError, match=f"reproduce {name}: {rp.OPTIONS[k]} is not honoured"):
                rp.run(name, quick=True, progress=False, **{k: value[k]})


def test_a_refused_flag_is_an_error_naming_it(cli):
    p = cli("reproduce", "timing", "--quick", "--store", "t.sqlite", ok=False)
    assert p.returncode == 2 and "--store is not honoured" in p.stderr


def test_list_shows_each_experiments_time_and_options(cli):
    import json

    text = cli("reproduce", "--list").stdout
    for name in rp.EXPERIMENTS:
        assert f"\n{name}\n" in f"\n{text}"
    assert text.count("  time:    --quick ") == len(rp.EXPERIMENTS) and "refuses --seeds" in text
    listed = json.loads(cli("reproduce", "--list", "--json").stdout)
    assert all(e["quick_seconds"] and e["full_seconds"] and e["full_how"] for e in listed)


def test_a_failing_claim_prints_its_verdict(monkeypatch):
    """Issue 49 item 5: a claim that fails carries FIDELITY's verdict (fixed / regime / does not reproduce)
    in reproduce's output; a claim that holds does not."""
    c = cells([("zipf:1.0", 0.1, "greedy", "sepbit", 1, 3.0, 0.5, None)])
    claim = rp.Claim("accuracy >= 80%", rp.accuracy_at_least("sepbit", "user", ["zipf:1.0"], 0.8),
                     verdict="regime: memoryless rewrites")
    monkeypatch.setitem(rp.EXPERIMENTS, "probe", rp.Experiment("d", "f", ["sepbit"], ["greedy"], ["zipf:1.0"],
                                                               [0.1], claims=[claim]))
    (row,) = rp.check_claims("probe", c)
    assert row["status"] == "fails" and row["verdict"] == "regime: memoryless rewrites"
    ok = rp.Claim("accuracy >= 40%", rp.accuracy_at_least("sepbit", "user", ["zipf:1.0"], 0.4), verdict="x")
    monkeypatch.setitem(rp.EXPERIMENTS, "probe", rp.Experiment("d", "f", ["sepbit"], ["greedy"], ["zipf:1.0"],
                                                               [0.1], claims=[ok]))
    assert "verdict" not in rp.check_claims("probe", c)[0]
    from wafer import repro_streams as rs

    out = {"seeds": [1], "quick": True, "combos": [], "knee": {}, "overheads": [], "results": [],
           "claims": [{"claim": 5, "text": "auto", "holds": False, "numbers": "n"},
                      {"claim": 4, "text": "knee", "holds": True, "numbers": "n"}]}
    lines = rs.markdown(out).splitlines()
    (five,) = [x for x in lines if x.startswith("| 5 |")]
    (four,) = [x for x in lines if x.startswith("| 4 |")]
    assert "fails; **verdict: regime:" in five and "verdict" not in four
