import json

import pandas as pd
import pytest

from wafer import gap


def table(wafs_by_seed):
    rows = []
    for seed, wafs in wafs_by_seed.items():
        for policy, w in wafs.items():
            rows.append({"policy": policy, "seed": seed, "status": "done", "steady_waf": w, "waf": w, "error": None})
    return pd.DataFrame(rows)


def test_the_decomposition_adds_up_in_both_orders():
    w = {"p": 4.0, "p+nu": 3.5, "p+ngc": 2.5, "p+nu+ngc": 2.2, "nodap": 1.4}
    g = gap.decompose(table({1: w, 2: {k: v + 0.1 for k, v in w.items()}}), "p")
    assert g["complete"] and g["seeds"] == [1, 2] and g["metric"] == "steady_waf"
    assert g["gap"]["mean"] == pytest.approx(2.6) and g["gap"]["half"] == pytest.approx(0.0, abs=1e-9)
    uf, gf, av = g["user_first"], g["gc_first"], g["average"]
    assert uf["user"]["mean"] == pytest.approx(0.5) and uf["gc"]["mean"] == pytest.approx(1.3)
    assert gf["gc"]["mean"] == pytest.approx(1.5) and gf["user"]["mean"] == pytest.approx(0.3)
    assert uf["configuration"]["mean"] == gf["configuration"]["mean"] == pytest.approx(0.8)
    for order in (uf, gf, av):
        assert sum(order[c]["mean"] for c in gap.COMPONENTS) == pytest.approx(g["gap"]["mean"])
    assert sum(g["shares"].values()) == pytest.approx(1.0)
    t = gap.tidy([g])
    assert len(t) == 9 and set(t.order) == {"user first", "GC first", "average"}


def test_a_missing_variant_leaves_it_incomplete_with_the_error():
    df = table({1: {"p": 4.0, "p+nu": 3.5, "nodap": 1.4}})
    df = pd.concat([df, pd.DataFrame([{"policy": "p+ngc", "seed": 1, "status": "failed", "steady_waf": None,
                                       "waf": None, "error": "no free segment"}])])
    g = gap.decompose(df, "p")
    assert not g["complete"] and g["errors"] == {"p+ngc": "no free segment"}
    assert "incomplete" in gap.format_gap(g) and gap.tidy([g]).empty


def test_gap_cli_runs_the_five_variants(cli, tmp_path):
    p = cli("gap", "sepbit", "--workload", "zipf:1.0", "--logical-blocks", "16384", "--segment-blocks", "32",
            "--drive-writes", "3", "--warmup-drive-writes", "1", "--nodap-ladder", "--json",
            "--store", str(tmp_path / "g.sqlite"))
    g = json.loads(p.stdout)["gaps"][0]
    assert g["complete"] and set(g["waf"]) == {"sepbit", "sepbit+nu", "sepbit+ngc", "sepbit+nu+ngc", "nodap"}
    assert g["waf"]["nodap"]["mean"] < g["waf"]["sepbit"]["mean"]
    text = cli("gap", "sepbit", "--workload", "zipf:1.0", "--logical-blocks", "16384", "--segment-blocks", "32",
               "--drive-writes", "3", "--warmup-drive-writes", "1", "--nodap-ladder",
               "--store", str(tmp_path / "g.sqlite")).stdout
    assert "distance to NoDaP" in text and "group configuration" in text and "GC first" in text
    assert "user = W(P) - W(P+nu)" in cli("gap", "--help").stdout


def test_a_report_of_runs_holding_a_decomposition_draws_it(cli, tmp_path):
    from wafer.report import write_report

    cli("gap", "two-r", "--workload", "zipf:1.0", "--logical-blocks", "16384", "--segment-blocks", "32",
        "--drive-writes", "3", "--warmup-drive-writes", "1", "--nodap-ladder", "--json",
        "--store", str(tmp_path / "g.sqlite"))
    page = write_report(tmp_path / "g.sqlite", tmp_path / "r", static_formats=()).read_text()
    assert 'id="oracle-gap"' in page and (tmp_path / "r" / "gap.csv").read_text().count("two-r") == 9
