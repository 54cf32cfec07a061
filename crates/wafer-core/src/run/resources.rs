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

/// Memory this process can still have [bytes], and which limit says so:
/// the smallest of the machine's `MemAvailable`, what the address-space
/// limit (`ulimit -v`, `RLIMIT_AS`) leaves above the process's size, and
/// what its cgroup's memory limit leaves (v2 `memory.max`, v1
/// `memory.limit_in_bytes`). A run over any of them would die by a signal
/// (an allocation abort or the OOM killer) rather than with an error.
pub fn available() -> Option<(u64, &'static str)> {
    [
        mem_available().map(|m| (m, "the machine has")),
        address_space_left().map(|m| (m, "the address-space limit (ulimit -v) leaves")),
        cgroup_left().map(|m| (m, "the cgroup's memory limit leaves")),
    ]
    .into_iter()
    .flatten()
    .min_by_key(|&(m, _)| m)
}

/// Bytes free for this user on the file system holding `dir`, `None` when
/// it cannot be asked.
pub fn disk_free(dir: &std::path::Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::zeroed();
    // SAFETY: `c` is a NUL-terminated path and `st` a writable statvfs;
    // statvfs writes only into `st` and its result is read only on success.
    #[allow(unsafe_code)]
    let st = unsafe {
        if libc::statvfs(c.as_ptr(), st.as_mut_ptr()) != 0 {
            return None;
        }
        st.assume_init()
    };
    Some((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// `RLIMIT_AS`'s soft limit less the process's virtual size (from /proc:
/// no system call, no `unsafe`).
fn address_space_left() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    let soft: u64 = line
        .trim_start_matches("Max address space")
        .split_whitespace()
        .next()?
        .parse()
        .ok()?; // "unlimited" does not parse: no limit
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let vm = status.lines().find(|l| l.starts_with("VmSize:"))?;
    let kib: u64 = vm.split_whitespace().nth(1)?.parse().ok()?;
    Some(soft.saturating_sub(kib * 1024))
}

/// The cgroup's memory limit less its usage (v2, then v1); `None` when
/// unlimited or not visible.
fn cgroup_left() -> Option<u64> {
    let read = |p: &str| -> Option<u64> { std::fs::read_to_string(p).ok()?.trim().parse().ok() };
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let path_of = |ctrl: &str| {
        own.lines()
            .find_map(|l| {
                let mut f = l.splitn(3, ':');
                let (_, c, p) = (f.next()?, f.next()?, f.next()?);
                (c == ctrl).then(|| p.to_string())
            })
            .unwrap_or_default()
    };
    let v2 = path_of("");
    let v1 = path_of("memory");
    let candidates = [
        (
            format!("/sys/fs/cgroup{v2}/memory.max"),
            format!("/sys/fs/cgroup{v2}/memory.current"),
        ),
        (
            "/sys/fs/cgroup/memory.max".into(),
            "/sys/fs/cgroup/memory.current".into(),
        ),
        (
            format!("/sys/fs/cgroup/memory{v1}/memory.limit_in_bytes"),
            format!("/sys/fs/cgroup/memory{v1}/memory.usage_in_bytes"),
        ),
        (
            "/sys/fs/cgroup/memory/memory.limit_in_bytes".into(),
            "/sys/fs/cgroup/memory/memory.usage_in_bytes".into(),
        ),
    ];
    candidates.iter().find_map(|(max, cur)| {
        // "max" (v2) does not parse; v1 writes a huge number for none.
        let max = read(max).filter(|&m| m < 1 << 60)?;
        Some(max.saturating_sub(read(cur).unwrap_or(0)))
    })
}

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
    fn the_guard_takes_the_smallest_limit_it_can_see() {
        // On Linux at least MemAvailable is there; the smallest wins.
        let (m, what) = available().expect("a limit on Linux");
        assert!(m <= mem_available().unwrap(), "{m} from {what}");
        if let Some(a) = address_space_left() {
            assert!(m <= a);
        }
    }

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
