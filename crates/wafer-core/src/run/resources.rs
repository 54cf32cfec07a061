//! Memory a replay will need, checked before anything large is allocated:
//! a run that does not fit is refused with what it needs, what the machine
//! has and which flags help, instead of aborting in the allocator.
//!
//! The estimate: the engine's flat tables (4 bytes per logical and per
//! physical block, a few words per segment), the policy's per-block state
//! (measured by building the policy on a small probe device and scaling
//! its `memory_bytes` to the real one), and the annotated future when the
//! run has one (two 8-byte words per logical block, plus the annotator's
//! table while it is built).

use serde::Serialize;

use super::RunConfig;
use crate::device::{DeviceConfig, Geometry};
use crate::error::{Error, Result};

/// Bytes of engine state per segment (metadata arrays, free queue, victim
/// selector bookkeeping), rounded up.
const SEGMENT_BYTES: u64 = 64;
/// Bytes per logical block of the annotated future during a replay.
const FUTURE_BYTES: u64 = 16;
/// Logical blocks of the probe device the policy is measured on.
const PROBE_BLOCKS: u64 = 1 << 16;

/// What a run is expected to hold in memory [bytes].
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Estimate {
    /// Forward and reverse maps, segment tables, victim selector.
    pub engine: u64,
    /// The policy's own state.
    pub policy: u64,
    /// The annotated future (oracles, `accuracy`).
    pub future: u64,
}

impl Estimate {
    /// All of it.
    pub fn total(&self) -> u64 {
        self.engine + self.policy + self.future
    }
}

/// The memory `cfg` will need on `geo`.
pub fn estimate(cfg: &RunConfig, geo: &Geometry) -> Estimate {
    let l = geo.logical_blocks as u64;
    let mut engine = 4 * l + 4 * geo.physical_blocks + SEGMENT_BYTES * geo.segments as u64;
    if let Some(t) = &cfg.timing {
        engine += timing_bytes(t, l);
    }
    let (per_block, oracle) = probe(cfg, geo);
    let future = if cfg.accuracy || oracle {
        FUTURE_BYTES * l
    } else {
        0
    };
    Estimate {
        engine,
        policy: (per_block * l as f64) as u64,
        future,
    }
}

/// A timed run's DRAM tables over `l` logical pages: the write cache (a
/// hash index, at most 32 B, and a 24-byte slot per entry, plus the same
/// hash twice while preconditioning) and the mapping table (an index of 4 B
/// per page and a 16-byte slot per entry; a table that holds every entry
/// keeps 2 bits a page instead).
fn timing_bytes(t: &crate::timing::TimingRun, l: u64) -> u64 {
    let page = t.ssd.flash.page_bytes.max(1) as u64;
    let pages = (t.ssd.cache.capacity_mib * 1048576.0) as u64 / page;
    let cache = 24 * pages.min(l) + 3 * 32 * pages.min(l);
    let m = &t.ssd.mapping;
    let map = if m.ideal {
        0
    } else {
        // At least 8 bytes an entry (MQSim's size for drives this large).
        let entries = (m.cmt_mib * 1048576.0 / 8.0) as u64;
        match entries {
            0 => 0,
            e if e >= l => l / 4,
            e => 4 * l + 16 * e,
        }
    };
    cache + map
}

/// Bytes per logical block of the policy's state, and whether it reads the
/// future, from the policy built on a small device like `geo`.
fn probe(cfg: &RunConfig, geo: &Geometry) -> (f64, bool) {
    let small = DeviceConfig {
        logical_blocks: PROBE_BLOCKS,
        physical_blocks: None,
        op: geo.op.max(0.05),
        segment_blocks: geo.segment_blocks.min(64),
        fit_segments: false,
        ..cfg.device.clone()
    };
    let Ok(g) = small.geometry() else {
        return (0.0, false);
    };
    match crate::policy::build(&cfg.policy, &cfg.params, &g) {
        Ok(p) => (
            p.memory_bytes() as f64 / PROBE_BLOCKS as f64,
            p.needs_future(),
        ),
        Err(_) => (0.0, false),
    }
}

pub use crate::host::{available, disk_free};

fn gib(b: u64) -> String {
    format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
}

/// Refuse `cfg` on `geo` if its estimate exceeds `cfg.memory_limit` (or
/// the memory available when no limit is set).
pub fn check(cfg: &RunConfig, geo: &Geometry) -> Result<Estimate> {
    let est = estimate(cfg, geo);
    let (limit, what) = match cfg.memory_limit {
        Some(m) => (m, "the memory limit (--memory-limit) is"),
        None => match available() {
            Some(m) => m,
            None => return Ok(est),
        },
    };
    if est.total() <= limit {
        return Ok(est);
    }
    let trace = cfg.trace.as_ref();
    let sized_by_trace = trace.is_some_and(|t| t.capacity_from_trace && !t.address_space);
    let mut help = Vec::new();
    if let Some(t) = trace {
        if t.address_space {
            help.push("drop --address-space to size the device from the blocks the trace touches");
        } else if !sized_by_trace {
            help.push(
                "drop --capacity/--logical-blocks to size the device from the trace's footprint",
            );
        }
    } else {
        help.push("use a smaller --capacity/--logical-blocks");
    }
    help.push("use larger blocks (--block-size)");
    help.push("or raise --memory-limit if the estimate is too cautious");
    Err(Error::Resources(format!(
        "this run needs about {} (engine {} for {} logical and {} physical blocks, policy '{}' {}, \
         annotated future {}) but {what} {}; {}",
        gib(est.total()),
        gib(est.engine),
        geo.logical_blocks,
        geo.physical_blocks,
        cfg.policy,
        gib(est.policy),
        gib(est.future),
        gib(limit),
        help.join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timed_run_counts_its_dram_tables() {
        let mut cfg = RunConfig::default();
        cfg.device.logical_blocks = 1 << 20;
        let geo = cfg.device.geometry().unwrap();
        let plain = estimate(&cfg, &geo).engine;
        cfg.timing = Some(crate::timing::TimingRun::preset("intel750").unwrap());
        let timed = estimate(&cfg, &geo).engine;
        // Both tables' indexes at least: 8 bytes per logical page more.
        assert!(timed >= plain + 8 * (1 << 20), "{timed} vs {plain}");
    }
}
