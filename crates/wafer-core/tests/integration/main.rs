//! wafer-core integration tests, one binary (build once, run all).

mod analytic;
mod checkpoint;
mod errors;
mod extend;
mod future;
mod golden;
mod invariants;
mod layers;
mod peers;
mod real_traces;
mod reserve;
mod runs;
mod streams;
mod timing;
mod traces;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use wafer_core::{DeviceConfig, RunConfig, RunResult, Simulation};

/// A scratch folder under the system's temp dir, removed with everything in
/// it when dropped: tests leave nothing behind.
pub struct Scratch(PathBuf);

impl Scratch {
    /// A fresh folder whose name starts with `tag`.
    pub fn new(tag: &str) -> Self {
        static N: AtomicU64 = AtomicU64::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("wafer-{tag}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// The path of `name` in the folder.
    pub fn join(&self, name: &str) -> String {
        self.0.join(name).to_str().unwrap().to_string()
    }

    /// Write `bytes` to `name` in the folder; returns the file's path.
    pub fn file(&self, name: &str, bytes: impl AsRef<[u8]>) -> String {
        let p = self.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }

    /// The folder's path as a string (e.g. for `cache_dir`).
    pub fn dir(&self) -> String {
        self.0.to_str().unwrap().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

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
