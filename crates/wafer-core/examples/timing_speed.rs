//! Replay-speed probe of the engine crate alone: `cargo run --release
//! --example timing_speed -- MODE [LOGICAL_BLOCKS] [DRIVE_WRITES] [REPEAT]
//! [QUEUE_DEPTH] [WORKLOAD]`, MODE `waf` (WAF mode: `base` + greedy,
//! uniform random writes, 10% OP, prefilled; user writes per second) or a
//! timing preset (timing mode, closed loop at QUEUE_DEPTH, the preset's OP;
//! simulated host requests and flash operations per wall second). Best of
//! REPEAT runs. `wafer bench` reports the same figures from Python.

use wafer_core::timing::TimingRun;
use wafer_core::{DeviceConfig, RunConfig, Simulation};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).cloned().unwrap_or_else(|| "waf".into());
    let logical: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1 << 20);
    let dw: f64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(8.0);
    let repeat: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(5);
    let qd: u32 = args.get(5).and_then(|s| s.parse().ok()).unwrap_or(32);
    let workload = args.get(6).cloned().unwrap_or_else(|| "uniform".into());
    let mut best = (0.0f64, 0.0f64);
    for _ in 0..repeat {
        let timing = (mode != "waf").then(|| {
            let mut t = TimingRun::preset(&mode).expect("preset");
            t.queue_depth = qd;
            // A device of `logical` pages (the preset's whole drive is
            // `wafer bench`'s other row).
            t.fit_device = true;
            t
        });
        let op = timing.as_ref().map_or(0.1, |t| {
            let p = t.ssd.flash.overprovisioning;
            p / (1.0 - p)
        });
        let cfg = RunConfig {
            device: DeviceConfig {
                logical_blocks: logical,
                op,
                ..Default::default()
            },
            workload: workload.clone(),
            writes: (dw * logical as f64) as u64,
            timing,
            ..Default::default()
        };
        let mut sim = Simulation::new(cfg).expect("config");
        sim.run().expect("run");
        let r = sim.result();
        match &r.timing {
            None => {
                best.0 = best.0.max(r.user_writes_per_second);
                println!(
                    "waf base: {:.2} M user writes/s, steady WAF {:.4}",
                    r.user_writes_per_second / 1e6,
                    r.steady_waf.unwrap_or(f64::NAN)
                );
            }
            Some(t) => {
                best.0 = best.0.max(t.requests_per_wall_second);
                best.1 = best.1.max(t.flash_ops_per_wall_second);
                println!(
                    "timing {mode}: {:.3} M host requests/s, {:.3} M flash ops/s ({} requests, {:.2} s wall); \
                     {:.0} IOPS, write mean {:.1} us p99 {:.1} us, read mean {:.1} us; WAF with mapping {:.3}, \
                     cmt hit {:.3}, cache hit {:.3}, power {:.2} W, violations {}",
                    t.requests_per_wall_second / 1e6,
                    t.flash_ops_per_wall_second / 1e6,
                    t.requests,
                    t.wall_seconds,
                    t.throughput.iops,
                    t.write_latency.device.mean,
                    t.write_latency.device.p99,
                    t.read_latency.device.mean,
                    t.waf_with_mapping.unwrap_or(f64::NAN),
                    t.hits.cmt_hit_rate.unwrap_or(f64::NAN),
                    t.hits.cache_hit_rate.unwrap_or(f64::NAN),
                    t.energy.average_power_w,
                    t.invariant_violations
                );
            }
        }
    }
    println!(
        "best {:.3} M/s ({:.3} M flash ops/s)",
        best.0 / 1e6,
        best.1 / 1e6
    );
}
