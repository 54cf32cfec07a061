//! Training beside the replay is deterministic: a model is deployed at a
//! fixed logical time, so a run does not depend on how fast its training
//! thread is. Its own test binary, because the artificial slowdown is
//! process-wide.

use std::time::Duration;

use serde_json::json;
use wafer_core::model::train::set_slowdown;
use wafer_core::{DeviceConfig, RunConfig, RunResult, Simulation};

fn run(policy: &str) -> RunResult {
    wafer_learn::install();
    let params = if policy == "dogi" {
        json!({"min_examples": 32, "min_samples": 2000, "retrain": 0.3, "deploy": 0.2, "epochs": 2})
    } else {
        json!({"min_examples": 64, "retrain": 0.5, "deploy": 0.3, "epochs": 1})
    };
    let mut sim = Simulation::new(RunConfig {
        device: DeviceConfig {
            logical_blocks: 1 << 13,
            op: 0.1,
            segment_blocks: 16,
            ..Default::default()
        },
        policy: policy.into(),
        victim: "greedy".into(),
        workload: "zipf:1.0".into(),
        writes: 4 << 13,
        seed: 3,
        params,
        ..Default::default()
    })
    .unwrap();
    sim.run().unwrap();
    sim.engine().check().unwrap();
    sim.result()
}

#[test]
fn same_seed_same_run_however_slow_the_training_thread() {
    // PHFTL trains Shiro's classifier in line with the replay (one epoch
    // per window), so only the thread-trained policies are checked here.
    for policy in ["dogi", "ml-dt"] {
        set_slowdown(Duration::ZERO);
        let fast = run(policy);
        set_slowdown(Duration::from_millis(40));
        let slow = run(policy);
        set_slowdown(Duration::ZERO);
        let (tf, ts) = (fast.training.unwrap(), slow.training.unwrap());
        assert!(tf.trainings >= 2, "{policy}: {tf:?}");
        assert_eq!(tf.trainings, ts.trainings, "{policy}");
        assert_eq!(tf.last_loss, ts.last_loss, "{policy}");
        assert_eq!(fast.gc_writes, slow.gc_writes, "{policy}");
        assert_eq!(fast.counters.user_writes, slow.counters.user_writes);
        // The slowed trainings were not done at their deployment time.
        assert!(ts.waited_seconds >= 0.03, "{policy}: {ts:?}");
        let state = |r: &RunResult| {
            let mut s = r.policy_state.clone().unwrap();
            s.as_object_mut().unwrap().remove("training");
            s
        };
        assert_eq!(state(&fast), state(&slow), "{policy}");
    }
}

#[test]
fn every_trainer_stops_when_cancelled() {
    // The flag Online sets when its run ends: the native MLP trainer and
    // candle's loop stop at their next batch with an error.
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    let spec = wafer_core::model::train::TrainSpec {
        cancel: Some(Arc::new(AtomicBool::new(true))),
        ..Default::default()
    };
    let (x, y) = (vec![0.5f32; 8], vec![0u32, 1, 0, 1]);
    for r in [
        wafer_learn::train_mlp("mlp", &[2, 4, 2], &x, &y, &spec),
        wafer_learn::train_mlp_candle("mlp", &[2, 4, 2], &x, &y, &spec),
    ] {
        let e = r.unwrap_err().to_string();
        assert!(e.contains("cancelled"), "{e}");
    }
}
