//! Quick engine-speed probe without Python: `cargo run --release --example
//! replay_speed -- LOGICAL_BLOCKS DRIVE_WRITES [WORKLOAD] [POLICY] [VICTIM]
//! [PARAMS_JSON]`.
//! The reported numbers in docs/PERFORMANCE.md come from `wafer bench`.
//! Lives in wafer-learn so the learned policies can train online here too.

use wafer_core::{DeviceConfig, RunConfig, Simulation};

fn main() {
    wafer_learn::install();
    let args: Vec<String> = std::env::args().collect();
    let logical: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1 << 20);
    let dw: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(8);
    let cfg = RunConfig {
        device: DeviceConfig {
            logical_blocks: logical,
            op: std::env::var("WAFER_OP")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0.1),
            ..Default::default()
        },
        workload: args.get(3).cloned().unwrap_or_else(|| "uniform".into()),
        policy: args.get(4).cloned().unwrap_or_else(|| "base".into()),
        victim: args.get(5).cloned().unwrap_or_else(|| "greedy".into()),
        writes: dw * logical,
        params: args
            .get(6)
            .map(|p| serde_json::from_str(p).expect("PARAMS_JSON is JSON"))
            .unwrap_or_default(),
        accuracy: std::env::var_os("WAFER_ACCURACY").is_some(),
        ..Default::default()
    };
    let mut sim = Simulation::new(cfg).expect("config");
    if let Err(e) = sim.run() {
        eprintln!("run failed: {e}");
    }
    let r = sim.result();
    println!(
        "{:.2} M user writes/s, steady WAF {:.3}, {:.2} s, {:.2} B/physical block",
        r.user_writes_per_second / 1e6,
        r.steady_waf.unwrap_or(f64::NAN),
        r.elapsed_seconds,
        r.engine_bytes_per_physical_block
    );
    if std::env::var_os("WAFER_GROUPS").is_some() {
        for g in &r.groups {
            println!(
                "group {}: user {} gc {} segments {} valid {}",
                g.group, g.user_writes, g.gc_writes, g.segments, g.valid_blocks
            );
        }
    }
    if let Some(t) = r.training {
        println!(
            "training: {}",
            serde_json::to_string(&t).expect("serialises")
        );
    }
    if let Some(state) = r.policy_state {
        println!("policy state: {state}");
    }
    if let Some(a) = r.accuracy {
        println!(
            "accuracy: {}",
            serde_json::to_string(&a).expect("serialises")
        );
    }
    if let Some(a) = r.annotation {
        println!(
            "annotation: {}",
            serde_json::to_string(&a).expect("serialises")
        );
    }
}
