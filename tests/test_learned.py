"""Learned policies from Python and the CLI: DOGI trains online (reported),
`wafer train` saves a model a later run starts from, bad models and
diverging training are clear errors that keep the results so far."""

import json

import pytest

import wafer

DEV = wafer.Device(logical_blocks=1 << 14, op=0.1, segment_blocks=32)
SMALL = ["--logical-blocks", "16384", "--segment-blocks", "32", "--drive-writes", "5"]
QUICK = {"min_examples": 64, "retrain": 0.5, "epochs": 3}


def test_dogi_trains_online_and_reports_it():
    r = wafer.replay("dogi", "zipf:1.0", device=DEV, writes=5 << 14, params=QUICK, accuracy=True)
    assert r.training["trainings"] >= 3 and r.training["seconds"] > 0
    assert r.policy_state["parameters"] == 1610
    assert len(r.accuracy["user"]["confusion"]) == 11
    assert "train s" in wafer.format_table([r])
    learned = {p["name"] for p in wafer.policies() if p["family"] == "learned"}
    assert learned == {"dogi", "phftl", "ml-dt", "shiro", "shiro-ng", "lstm-km"}


def test_train_saves_a_model_that_a_later_run_starts_from(cli, tmp_path):
    model = tmp_path / "dogi.safetensors"
    out = json.loads(cli("train", "dogi", "--workload", "zipf:1.0", *SMALL, "-o", str(model),
                         "--param", "retrain=0.5", "--param", "min_examples=64", "--json").stdout)
    assert out["model"] == str(model) and model.stat().st_size > 6000
    assert out["result"]["training"]["trainings"] >= 3
    frozen = wafer.replay("dogi", "zipf:1.0", device=DEV, writes=2 << 14, params={"model": str(model), "retrain": 0})
    assert frozen.training["trainings"] == 0 and frozen.policy_state["placed"]["base"] == 0
    text = cli("train", "dogi", "--workload", "zipf:1.0", *SMALL, "-o", str(model), "-q").stdout
    assert "online training" in text and "--param model=" in text
    p = cli("train", "sepbit", "--workload", "zipf:1.0", *SMALL, ok=False)
    assert p.returncode == 2 and "does not learn" in p.stderr


def test_bad_models_are_model_errors(tmp_path):
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json}......")
    with pytest.raises(wafer.ModelError, match="bad.safetensors.*not a JSON object"):
        wafer.replay("dogi", "zipf:1.0", device=DEV, writes=1000, params={"model": str(bad)})
    with pytest.raises(wafer.ModelError, match="cannot read"):
        wafer.replay("dogi", "zipf:1.0", device=DEV, writes=1000, params={"model": str(tmp_path / "none")})


def test_diverging_training_keeps_the_results_so_far(cli):
    params = {**QUICK, "lr": 1e30, "retrain": 1.5}
    with pytest.raises(wafer.ModelError, match="diverged") as e:
        wafer.replay("dogi", "zipf:1.0", device=DEV, writes=5 << 14, params=params)
    part = e.value.partial
    assert 0 < part.user_writes < 5 << 14 and part.waf is not None
    p = cli("replay", "--policy", "dogi", "--workload", "zipf:1.0", *SMALL, "--param", "lr=1e30",
            "--param", "retrain=1.5", "--param", "min_examples=64", "--json", ok=False)
    assert p.returncode == 2 and "diverged" in p.stderr
    out = json.loads(p.stdout)
    assert "diverged" in out["error"] and out["partial"]["user_writes"] > 0


def test_dogi_configs_sweep_ranks_the_models_pick():
    from wafer import dogi_configs

    out = dogi_configs.run(quick=True, progress=False, workers=2, masks=[0, 0b11, 511], workloads=["zipf:1.0"])
    (s,) = out["summaries"]
    assert s["configurations"] == 3 and s["failed"] == 0
    assert s["best_waf"] >= 1.0 and s["best_mask"] in (0, 0b11, 511)
    assert set(s["best_per_groups"]) == {1, 3, 10}
    assert s["searched_waf"] >= 1.0 and s["pick"] is not None
    forced = [r for r in out["results"] if r["mask"] is not None]
    assert all(r["estimated_waf_chain"] is None or r["estimated_waf_chain"] >= 1.0 for r in forced)
    assert "pick's rank" in dogi_configs.markdown(out)
