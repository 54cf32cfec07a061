//! Timing mode: a discrete-event SSD model driven by wafer's FTL, placement
//! policy and victim selector (modelled on MQSim, Tavakkol et al. FAST'18; docs/FIDELITY.md, "Timing", says where it differs).
//!
//! In timing mode a [`Driver`] holds the replay: host requests arrive (trace
//! timestamps, a closed loop of queue depth and think time, or as fast as
//! the device admits them) through the host intake (`intake`) and the host
//! interface ([`host`]), pass the DRAM write cache (`write_cache`, over the
//! LRU of [`cache`]) and the cached mapping table (`mapping`), and the
//! pages the cache flushes reach the FTL through a narrow port
//! ([`port::FtlPort`]); the requests come from a [`port::RequestFeed`]. Every flash operation the FTL performs
//! (user program, GC read and program, erase; mapping reads and writes come
//! from the mapping-table cache) becomes a timed operation on its channel,
//! chip, die and plane ([`flash`], [`layout`]), so GC interferes with host
//! I/O. Results: latency percentiles, throughput, utilisation, hit rates,
//! WAF with mapping writes and energy ([`result`]).
//!
//! The device is the preset's whole drive ([`whole_device`]: whole
//! superblocks, the preset's capacity; a trace is placed inside it), or,
//! with `fit_device`, one sized to the run ([`fit_device`]). Before timing
//! starts the FTL runs in WAF mode (no timing, full speed) to a steady
//! state: a sequential fill, then random overwrites
//! (`precondition_drive_writes`, the preset's `[precondition]` by
//! default), never the trace's requests, warming the cache and the mapping
//! table on the way; statistics start afresh with the first timed request.
//! At the end the dirty cache is flushed and timed (`flush`).
//!
//! The device's presets are TOML files ([`config`]); MQSim's defects that the
//! spec lists are not reproduced (docs/FIDELITY.md, "Timing").

pub mod cache;
pub mod config;
pub mod driver;
pub mod events;
pub mod flash;
pub mod hist;
pub mod host;
mod intake;
pub mod keymap;
pub mod layout;
mod mapping;
pub mod port;
pub mod result;
mod write_cache;

use serde::{Deserialize, Serialize};

pub use config::SsdConfig;
pub use driver::Driver;
pub use port::{FtlPort, RequestFeed};
pub use result::TimingResult;

use crate::device::DeviceConfig;
use crate::error::{Error, Result};

/// When host requests arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arrival {
    /// Open loop: at the trace's (or workload's) timestamps.
    Trace,
    /// Closed loop: `queue_depth` requests outstanding, each completion
    /// issues the next after `think_ns` (how AutoBlox runs MQSim).
    Closed,
    /// As fast as the device admits them: a closed loop as deep as the
    /// device's queue, no think time.
    Afap,
}

/// A timed replay's settings: the SSD and how requests arrive.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimingRun {
    /// The SSD (a preset's content; [`SsdConfig::load`] reads one).
    pub ssd: SsdConfig,
    /// How requests arrive.
    pub arrival: Arrival,
    /// Closed loop: requests the host keeps outstanding.
    pub queue_depth: u32,
    /// Closed loop: host time between a completion and the next request [ns].
    pub think_ns: u64,
    /// Closed loop: AutoBlox's think time from the trace's own rate
    /// instead of `think_ns` ([`Think`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub think: Option<Think>,
    /// Drive-writes of preconditioning before the first timed request
    /// (a sequential fill counts as the first, then overwrites by
    /// `precondition_workload`; WAF mode, never the trace's requests);
    /// `None`: the preset's `[precondition]`.
    pub precondition_drive_writes: Option<f64>,
    /// The overwrites' workload spec; `None`: a synthetic run's own
    /// workload (its steady state), a trace replay's preset's. Its blocks
    /// are the preset's pages (a timed run's block size), so `uniform`
    /// overwrites whole pages, not 4 KiB host writes on a 16 KiB-page drive.
    /// Writes stay whole pages there (no read-modify-write), which is what
    /// a preconditioning is for: the FTL's steady state.
    pub precondition_workload: Option<String>,
    /// Size the device to the run's logical capacity (a trace's footprint,
    /// or the capacity given) instead of the preset's whole drive: fewer
    /// superblocks, each with fewer pages per block when the device is too
    /// small for whole ones (erase time and energy scale with them then).
    /// Quick, but not the preset's drive: LSB pages take a larger share
    /// and the cache may exceed the device.
    pub fit_device: bool,
    /// At the end, write the dirty cache to flash and time it
    /// (`timing.flush`); false: leave it (`timing.cache.dirty_pages_at_end`).
    pub flush: bool,
    /// A gap without requests at least this long is an idle period the
    /// policy is told about (open loop) [ns].
    pub idle_ns: u64,
    /// Save the preconditioned drive for later runs of the same drive and
    /// preconditioning, and load it when saved (`true`: in the cache
    /// folder's `precondition/`; a folder; `false`: never). Only
    /// preconditionings of at least `run::precondition::MIN_WRITES` page
    /// writes are saved: smaller ones are quicker to run again.
    pub precondition_cache: PreconditionCache,
}

/// AutoBlox's arrival model (its patched MQSim's trace flow,
/// `IO_Flow_Trace_Based.cpp`): a closed loop in which a completed request
/// of `b` bytes issues the next after `max(0, b / window_rate - b /
/// peak_rate)`: the time the trace spent on those bytes, less the time the
/// category's busiest second would have. The trace is cut into windows of
/// 5 s of trace time, each starting at its first request, whose rate is
/// their bytes over 5 s; `peak_rate` is the category's busiest 1-s slice.
/// A window is looked up by the completed request's own timestamp (MQSim
/// uses the window its generator is reading, the same one or the next at
/// its queue depth of 3). A window without bytes issues at once (MQSim
/// divides by zero there).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Think {
    /// The category's peak rate [bytes/ns].
    pub peak_bytes_per_ns: f64,
    /// The trace's windows: (start [ns after the first request], rate
    /// [bytes/ns]), by start.
    pub windows: Vec<(u64, f64)>,
}

impl Think {
    /// The think time after a request of `bytes` with timestamp `at` [ns
    /// after the first request] completes [ns].
    pub fn delay(&self, at: u64, bytes: u64) -> u64 {
        let i = self
            .windows
            .partition_point(|w| w.0 <= at)
            .saturating_sub(1);
        let rate = self.windows.get(i).map_or(0.0, |w| w.1);
        if rate <= 0.0 {
            return 0;
        }
        let b = bytes as f64;
        (b / rate - b / self.peak_bytes_per_ns).max(0.0).ceil() as u64
    }

    fn validate(&self) -> Result<()> {
        if !(self.peak_bytes_per_ns.is_finite() && self.peak_bytes_per_ns > 0.0) {
            return Err(Error::config(
                "timing.think.peak_bytes_per_ns",
                format!("{}; must be a rate > 0", self.peak_bytes_per_ns),
            ));
        }
        if self.windows.is_empty() {
            return Err(Error::config("timing.think.windows", "no window"));
        }
        if let Some(w) = self
            .windows
            .iter()
            .find(|w| !(w.1.is_finite() && w.1 >= 0.0))
        {
            return Err(Error::config(
                "timing.think.windows",
                format!("window at {} ns has rate {}; rates are >= 0", w.0, w.1),
            ));
        }
        if self.windows.windows(2).any(|w| w[1].0 <= w[0].0) {
            return Err(Error::config(
                "timing.think.windows",
                "starts must increase",
            ));
        }
        Ok(())
    }
}

/// Where a timed run's preconditioned drive is kept
/// ([`TimingRun::precondition_cache`]): JSON `true`, `false` or a folder.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PreconditionCache {
    /// In the cache folder (`true`), or not at all (`false`).
    On(bool),
    /// In this folder.
    Dir(String),
}

impl Default for PreconditionCache {
    fn default() -> Self {
        PreconditionCache::On(true)
    }
}

impl Default for TimingRun {
    fn default() -> Self {
        TimingRun {
            ssd: SsdConfig::default(),
            arrival: Arrival::Closed,
            queue_depth: 32,
            think_ns: 0,
            think: None,
            precondition_drive_writes: None,
            precondition_workload: None,
            fit_device: false,
            flush: true,
            idle_ns: 1_000_000,
            precondition_cache: PreconditionCache::default(),
        }
    }
}

impl TimingRun {
    /// Preconditioning drive-writes: the run's, else the preset's.
    pub fn precondition(&self) -> f64 {
        self.precondition_drive_writes
            .unwrap_or(self.ssd.precondition.drive_writes)
    }

    /// The overwrites' workload given, else the preset's.
    pub fn precondition_workload(&self) -> &str {
        self.precondition_workload
            .as_deref()
            .unwrap_or(&self.ssd.precondition.workload)
    }

    /// Settings for preset (or file) `spec` with the defaults.
    pub fn preset(spec: &str) -> Result<TimingRun> {
        Ok(TimingRun {
            ssd: SsdConfig::load(spec)?,
            ..Default::default()
        })
    }

    /// Check the settings; errors name the key.
    pub fn validate(&self) -> Result<()> {
        self.ssd.validate()?;
        if self.queue_depth == 0 {
            return Err(Error::config(
                "timing.queue_depth",
                "must be at least 1 request",
            ));
        }
        if let Some(t) = &self.think {
            if self.arrival != Arrival::Closed {
                return Err(Error::config(
                    "timing.think",
                    "a think time from the trace's rate needs a closed loop (arrival closed)",
                ));
            }
            t.validate()?;
        }
        if let Some(p) = self.precondition_drive_writes {
            if !(p.is_finite() && p >= 0.0) {
                return Err(Error::config(
                    "timing.precondition_drive_writes",
                    format!("{p}; must be a finite number >= 0"),
                ));
            }
        }
        crate::workload::parse(self.precondition_workload(), 1024, 4096, 0).map_err(|e| {
            Error::config(
                "timing.precondition_workload",
                format!("{}: {e}", self.precondition_workload()),
            )
        })?;
        Ok(())
    }
}

/// Shape the device of a timed run as the preset's whole drive: the block
/// size is the page size, a segment is a superblock (one whole block per
/// plane, so a page's type follows its row in its physical block), every
/// block is used, and the user capacity is the raw capacity less the
/// preset's over-provisioning (`flash.overprovisioning`, MQSim's
/// `Overprovisioning_Ratio`). The GC reserve is at least the preset's
/// execution threshold.
pub fn whole_device(dev: &mut DeviceConfig, ssd: &SsdConfig) -> Result<Fit> {
    if dev.gc_mode != crate::device::GcMode::Watermark {
        return Err(Error::config(
            "gc_mode",
            "timing mode simulates a fixed-capacity SSD: use the watermark GC mode",
        ));
    }
    let segment_pages = ssd.planes() as u64 * ssd.flash.pages_per_block as u64;
    if segment_pages > u32::MAX as u64 {
        return Err(Error::config(
            "timing.flash.pages_per_block",
            format!("a superblock of {segment_pages} pages is more than the engine addresses"),
        ));
    }
    let raw = ssd.raw_pages();
    let logical = (raw as f64 * (1.0 - ssd.flash.overprovisioning)).floor() as u64;
    if raw > crate::device::MAX_BLOCKS || logical == 0 {
        return Err(Error::config(
            "timing.flash.blocks_per_plane",
            format!(
                "preset '{}' has {raw} pages, beyond the engine's {} page limit; \
                 use fewer blocks per plane or --fit-device",
                ssd.name,
                crate::device::MAX_BLOCKS
            ),
        ));
    }
    let segments = ssd.flash.blocks_per_plane as u64;
    dev.block_size = ssd.flash.page_bytes;
    dev.fit_segments = false;
    dev.logical_blocks = logical;
    dev.physical_blocks = Some(raw);
    dev.segment_blocks = segment_pages as u32;
    let reserve = ((ssd.gc.exec_threshold * segments as f64).ceil() as u32).max(dev.gc_low);
    dev.gc_low = reserve;
    dev.gc_high = dev.gc_high.max(reserve);
    if let Err(e) = dev.geometry() {
        return Err(Error::config(
            "timing.flash.overprovisioning",
            format!(
                "preset '{}' as a whole drive: {logical} user pages in {segments} superblocks of \
                 {segment_pages} pages leave too few spare superblocks for GC at over-provisioning \
                 {} ({e}); raise flash.overprovisioning or flash.blocks_per_plane in the preset, \
                 or size the device to the run with --fit-device",
                ssd.name, ssd.flash.overprovisioning
            ),
        ));
    }
    Ok(Fit {
        slice: ssd.flash.pages_per_block,
        segment_pages: segment_pages as u32,
    })
}

/// Spare segments (beyond the GC reserve) a device in timing mode keeps at
/// least when its segments are fitted.
pub const FIT_SPARE_SEGMENTS: u64 = 32;

/// How the FTL's segments map onto the preset's superblocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Fit {
    /// Pages of a segment on each plane (the preset's pages per block
    /// unless the device is too small for whole superblocks).
    pub slice: u32,
    /// Segment size = planes x slice [pages].
    pub segment_pages: u32,
}

/// Shape the device of a timed run from the preset: the block size is the
/// page size; a segment is a superblock (one block per plane), with fewer
/// pages per plane when the device is too small to hold enough spare
/// superblocks for GC (the erase time scales with the slice then); the GC
/// reserve is at least the preset's execution threshold. Run after the
/// logical capacity is known (a trace's footprint) and before the geometry.
pub fn fit_device(dev: &mut DeviceConfig, ssd: &SsdConfig) -> Result<Fit> {
    if dev.gc_mode != crate::device::GcMode::Watermark {
        return Err(Error::config(
            "gc_mode",
            "timing mode simulates a fixed-capacity SSD: use the watermark GC mode",
        ));
    }
    let planes = ssd.planes() as u64;
    let ppb = ssd.flash.pages_per_block as u64;
    dev.block_size = ssd.flash.page_bytes;
    dev.fit_segments = false;
    let logical = dev.logical_blocks;
    let physical = match dev.physical_blocks {
        Some(p) => p,
        None => {
            if !(dev.op.is_finite() && dev.op > 0.0) {
                dev.geometry()?;
            }
            (logical as f64 * (1.0 + dev.op)).floor() as u64
        }
    };
    if physical <= logical {
        dev.geometry()?;
    }
    let exec = ssd.gc.exec_threshold;
    let mut slice = ppb;
    loop {
        let seg = planes * slice;
        let segments = physical / seg;
        let spare = segments.saturating_sub(logical.div_ceil(seg));
        let reserve = (exec * segments as f64).ceil() as u64;
        if slice == 1 || spare >= FIT_SPARE_SEGMENTS + reserve {
            break;
        }
        slice /= 2;
    }
    let segment_pages = planes * slice;
    if segment_pages > u32::MAX as u64 {
        return Err(Error::config(
            "timing.flash.pages_per_block",
            format!("a superblock of {segment_pages} pages is more than the engine addresses"),
        ));
    }
    let segments = physical / segment_pages;
    if segments < 3 {
        return Err(Error::config(
            "logical_blocks",
            format!(
                "{logical} logical pages on a {} with {planes} planes leave {segments} superblocks; \
                 give a larger capacity or a preset with fewer planes",
                ssd.name
            ),
        ));
    }
    let raw = ssd.raw_pages();
    if segments * segment_pages > raw {
        return Err(Error::config(
            "timing.flash.blocks_per_plane",
            format!(
                "the device needs {} physical pages, more than the {raw} of preset '{}' \
                 ({} blocks per plane); raise blocks_per_plane or replay a smaller device",
                segments * segment_pages,
                ssd.name,
                ssd.flash.blocks_per_plane
            ),
        ));
    }
    dev.segment_blocks = segment_pages as u32;
    let reserve = ((exec * segments as f64).ceil() as u32).max(dev.gc_low);
    dev.gc_low = reserve;
    dev.gc_high = dev.gc_high.max(reserve);
    Ok(Fit {
        slice: slice as u32,
        segment_pages: segment_pages as u32,
    })
}
