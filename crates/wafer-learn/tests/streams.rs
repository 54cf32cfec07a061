//! LSTM+KM end to end with the candle trainer: the LSTM is trained once
//! (reported), predicts a regularly sliding hot spot better
//! than the last value, and its model saves and reloads frozen.

use serde_json::{json, Value};
use wafer_core::{DeviceConfig, RunConfig, RunResult, Simulation};

fn cfg(workload: &str, params: Value) -> RunConfig {
    RunConfig {
        device: DeviceConfig {
            logical_blocks: 1 << 14,
            op: 0.1,
            segment_blocks: 32,
            ..Default::default()
        },
        policy: "lstm-km".into(),
        workload: workload.into(),
        writes: 12 << 14,
        seed: 3,
        params,
        ..Default::default()
    }
}

fn run(c: RunConfig) -> RunResult {
    wafer_learn::install();
    let mut sim = Simulation::new(c).expect("valid config");
    sim.run().expect("run completes");
    sim.engine().check().expect("invariants hold at the end");
    sim.result()
}

/// A 5% hot spot sliding by its length every period of 0.05 drive-writes.
const SLIDE: &str = "phase:0.95:0.05:0.05,move=slide";

fn params(predictor: &str) -> Value {
    json!({"predictor": predictor, "chunks": 200, "period_dw": 0.05, "train_frac": 0.4,
           "epochs": 30, "hidden": 32, "lr": 3e-3})
}

#[test]
fn the_lstm_predicts_a_sliding_hot_spot_better_than_the_last_value() {
    let r = run(cfg(SLIDE, params("lstm")));
    let s = r.policy_state.clone().unwrap();
    let t = r.training.unwrap();
    assert_eq!(t.trainings, 1, "trained once, then frozen");
    assert_eq!(s["trained"], true);
    assert!(!s["pcc"].as_array().unwrap().is_empty(), "{s}");
    let (model, last) = (
        s["mae_model"].as_f64().unwrap(),
        s["mae_last"].as_f64().unwrap(),
    );
    assert!(model < last, "LSTM MAE {model:.2} vs last-value {last:.2}");
}

#[test]
fn a_saved_lstm_reloads_frozen() {
    wafer_learn::install();
    let mut sim = Simulation::new(cfg(SLIDE, params("lstm"))).unwrap();
    sim.run().unwrap();
    let model = sim.engine().policy_model().expect("a trained model");
    assert_eq!(model.metadata["policy"], "lstm-km");
    let dir = std::env::temp_dir().join(format!("wafer-lstm-km-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("lstm.safetensors");
    model.save(&path).unwrap();
    let mut p = params("lstm");
    p["model"] = json!(path.to_str().unwrap());
    let r = run(cfg(SLIDE, p));
    assert!(r.training.is_none(), "a given model is not retrained");
    assert_eq!(r.policy_state.unwrap()["trained"], true);
    // A model for another mode is refused.
    let mut p = params("lstm");
    p["model"] = json!(path.to_str().unwrap());
    p["mode"] = json!("per-chunk");
    let e = Simulation::new(cfg(SLIDE, p)).err().unwrap().to_string();
    assert!(e.contains("mode"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}
