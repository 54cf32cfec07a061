//! Checks against theory: Desnoyers' model of FIFO (LRW) cleaning under
//! uniform random writes, and sequential overwrites.

use super::{device, run};
use wafer_core::RunConfig;

/// Valid fraction X of the FIFO victim, solving X = exp(-a (1 - X))
/// (Desnoyers, "Analytic modeling of SSD write performance", SYSTOR'12).
fn desnoyers_x(a: f64) -> f64 {
    let mut x: f64 = 0.5;
    for _ in 0..10_000 {
        x = (-a * (1.0 - x)).exp();
    }
    x
}

fn uniform(logical: u64, op: f64, victim: &str, seed: u64) -> wafer_core::RunResult {
    run(RunConfig {
        device: wafer_core::DeviceConfig {
            warmup_drive_writes: 3.0,
            ..device(logical, op, 64)
        },
        policy: "base".into(),
        victim: victim.into(),
        workload: "uniform".into(),
        writes: 12 * logical,
        seed,
        ..Default::default()
    })
}

#[test]
fn fifo_matches_desnoyers_model_within_1_5_percent() {
    for a in [1.1, 1.28] {
        let r = uniform(1 << 18, a - 1.0, "fifo", 5);
        let model = 1.0 / (1.0 - desnoyers_x(a));
        let sim = r.steady_waf.unwrap();
        let err = (sim - model).abs() / model;
        println!(
            "a={a}: model WAF {model:.4}, simulated {sim:.4}, error {:.2}%",
            err * 100.0
        );
        assert!(err < 0.015, "a={a}: model {model:.4} vs simulated {sim:.4}");
    }
}

#[test]
fn greedy_is_not_worse_than_fifo_under_uniform_writes() {
    for a in [1.1, 1.28] {
        let fifo = uniform(1 << 17, a - 1.0, "fifo", 6).steady_waf.unwrap();
        let greedy = uniform(1 << 17, a - 1.0, "greedy", 6).steady_waf.unwrap();
        assert!(greedy <= fifo, "a={a}: greedy {greedy} > fifo {fifo}");
    }
}

#[test]
fn sequential_overwrites_have_waf_one() {
    for victim in ["greedy", "cost-benefit", "fifo"] {
        for policy in ["base", "two-r"] {
            for spec in ["seq", "seq,size=8", "seq,size=300"] {
                let r = run(RunConfig {
                    device: device(50_000, 0.07, 128),
                    policy: policy.into(),
                    victim: victim.into(),
                    workload: spec.into(),
                    writes: 250_000,
                    ..Default::default()
                });
                assert_eq!(r.gc_writes, 0, "{policy}/{victim}/{spec}");
                assert_eq!(r.waf, Some(1.0));
                assert!(
                    r.counters.victims > 0,
                    "GC ran and found only empty segments"
                );
            }
        }
    }
}

#[test]
fn log_structured_mode_keeps_the_garbage_proportion_and_collects_only_eligible_segments() {
    use wafer_core::{DeviceConfig, GcMode, Simulation};
    for victim in ["greedy", "cost-benefit", "fifo", "cat", "d-choices"] {
        for policy in ["base", "sepbit", "midas"] {
            let cfg = RunConfig {
                device: DeviceConfig {
                    logical_blocks: 1 << 15,
                    segment_blocks: 64,
                    gc_mode: GcMode::GarbageProportion,
                    ..Default::default()
                },
                policy: policy.into(),
                victim: victim.into(),
                workload: "zipf:0.9".into(),
                writes: 6 << 15,
                ..Default::default()
            };
            let mut sim = Simulation::new(cfg).unwrap();
            let mut worst = 0.0f64;
            while !sim.step(997).unwrap() {
                worst = worst.max(sim.engine().log_garbage_proportion());
            }
            sim.engine().check().unwrap();
            let r = sim.result();
            // GC runs after each user write until GP <= 15%, so between writes it
            // exceeds the threshold by at most one block's worth.
            assert!(
                worst <= 0.15 + 1e-4,
                "{policy}/{victim}: GP reached {worst}"
            );
            // no victim held 85% or more valid blocks (the top three bins of 1/20)
            let hist = r.victim_valid_histogram;
            assert_eq!(
                hist[17] + hist[18] + hist[19],
                0,
                "{policy}/{victim}: {hist:?}"
            );
            assert!(r.counters.victims > 0 && r.waf.unwrap() > 1.0);
        }
    }
}
