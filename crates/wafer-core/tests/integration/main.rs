//! wafer-core integration tests, one binary (build once, run all).

mod analytic;
mod errors;
mod future;
mod golden;
mod invariants;
mod runs;
mod traces;

use wafer_core::{DeviceConfig, RunConfig, RunResult, Simulation};

/// Run `cfg` to the end, with the invariant checker at the end.
pub fn run(cfg: RunConfig) -> RunResult {
    let mut sim = Simulation::new(cfg).expect("valid config");
    sim.run().expect("run completes");
    sim.engine().check().expect("invariants hold at the end");
    sim.result()
}

/// A small device with the given OP and segment size.
pub fn device(logical: u64, op: f64, segment_blocks: u32) -> DeviceConfig {
    DeviceConfig {
        logical_blocks: logical,
        op,
        segment_blocks,
        ..Default::default()
    }
}
