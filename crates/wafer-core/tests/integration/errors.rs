//! Bad input: clear errors, never a panic.

use wafer_core::{DeviceConfig, Error, RunConfig, Simulation};

fn err(cfg: RunConfig) -> String {
    match Simulation::new(cfg) {
        Err(e) => e.to_string(),
        Ok(mut s) => s
            .run()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_else(|| "no error".into()),
    }
}

#[test]
fn unknown_names_list_the_known_ones() {
    let e = err(RunConfig {
        policy: "sepbitt".into(),
        ..Default::default()
    });
    assert!(
        e.contains("unknown policy 'sepbitt'") && e.contains("base, two-r"),
        "{e}"
    );
    let e = err(RunConfig {
        victim: "greed".into(),
        ..Default::default()
    });
    assert!(
        e.contains("unknown victim selector 'greed'") && e.contains("greedy, cost-benefit, fifo"),
        "{e}"
    );
    let e = err(RunConfig {
        params: serde_json::json!({"groups": 3}),
        ..Default::default()
    });
    assert!(e.contains("unknown parameter 'groups'"), "{e}");
    let e = err(RunConfig {
        workload: "zipf:x".into(),
        ..Default::default()
    });
    assert!(e.contains("workload spec 'zipf:x'"), "{e}");
}

#[test]
fn too_little_op_for_the_groups_is_an_error_not_a_hang() {
    // 10 segments of 100 blocks for 990 logical blocks: no room for GC.
    let cfg = RunConfig {
        device: DeviceConfig {
            logical_blocks: 990,
            physical_blocks: Some(1000),
            segment_blocks: 100,
            ..Default::default()
        },
        ..Default::default()
    };
    assert!(matches!(Simulation::new(cfg), Err(Error::Config { .. })));
    // Barely enough room to start; GC must stop with an error, not loop.
    let cfg = RunConfig {
        device: DeviceConfig {
            logical_blocks: 1000,
            physical_blocks: Some(1001 + 3 * 64),
            segment_blocks: 64,
            gc_low: 2,
            gc_high: 2,
            ..Default::default()
        },
        policy: "two-r".into(),
        writes: 100_000,
        ..Default::default()
    };
    let e = err(cfg);
    assert!(
        e.contains("over-provisioning") || e.contains("no free segment") || e == "no error",
        "{e}"
    );
}

#[test]
fn zero_writes_is_an_error() {
    let e = err(RunConfig {
        writes: 0,
        ..Default::default()
    });
    assert!(e.contains("writes"), "{e}");
}

#[test]
fn a_learned_policy_without_a_trainer_is_a_clear_error() {
    // wafer-core alone links no trainer (wafer-learn installs candle's).
    let cfg = RunConfig {
        device: DeviceConfig {
            logical_blocks: 4096,
            segment_blocks: 16,
            op: 0.3,
            ..Default::default()
        },
        policy: "dogi".into(),
        writes: 20_000,
        params: serde_json::json!({"min_examples": 16, "retrain": 1.5}),
        ..Default::default()
    };
    let mut sim = Simulation::new(cfg).unwrap();
    let e = sim.run().unwrap_err().to_string();
    assert!(e.contains("no trainer") && e.contains("dogi"), "{e}");
    // The writes before the training point stand.
    assert!(
        sim.result().user_writes >= 6144 - 4096,
        "{}",
        sim.result().user_writes
    );
    let e = err(RunConfig {
        policy: "dogi".into(),
        params: serde_json::json!({"retrain": 0}),
        ..Default::default()
    });
    assert!(e.contains("needs a trained model"), "{e}");
}

#[test]
fn a_workload_that_never_writes_is_refused_not_a_hang() {
    for spec in [
        "uniform,reads=1.0",
        "mix:uniform,reads=1.0+zipf:1.0,reads=1.0",
    ] {
        let e = err(RunConfig {
            workload: spec.into(),
            drive_writes: Some(2.0),
            ..Default::default()
        });
        assert!(
            e.contains("workload") && e.contains("never end"),
            "{spec}: {e}"
        );
    }
    // Mostly reads is fine.
    let mut sim = Simulation::new(RunConfig {
        device: DeviceConfig {
            logical_blocks: 4096,
            segment_blocks: 16,
            op: 0.3,
            ..Default::default()
        },
        workload: "uniform,reads=0.99".into(),
        writes: 1000,
        ..Default::default()
    })
    .unwrap();
    sim.run().unwrap();
}
