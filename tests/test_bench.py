"""`wafer bench`'s frozen runs: each learned policy replays with its trained model and no training."""

import pytest

import wafer
from wafer.bench import frozen_params

LEARNED = [p["name"] for p in wafer.policies() if p["family"] == "learned"]


@pytest.mark.parametrize("name", LEARNED)
def test_every_learned_policy_can_be_frozen(name, tmp_path):
    dev = wafer.Device(logical_blocks=1 << 12, op=0.1, segment_blocks=16)
    model = tmp_path / f"{name}.safetensors"
    params = {"lstm-km": {"chunks": 64, "hidden": 8, "epochs": 1, "period_dw": 0.2}}.get(name)
    r = wafer.replay(name, "zipf:1.0", device=dev, drive_writes=3, params=params, save_model=model)
    assert model.exists(), name
    frozen = wafer.replay(name, "zipf:1.0", device=dev, drive_writes=2,
                          params={**(params or {}), "model": str(model), **frozen_params(name)})
    assert frozen.steady_waf or frozen.waf
    assert r.training is not None
    if name != "lstm-km":  # LSTM+KM trains before its periods, frozen or not
        assert not (frozen.training or {}).get("trainings"), (name, frozen.training)
