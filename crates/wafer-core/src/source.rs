//! Where a replay's requests come from: a synthetic workload, or a trace
//! replayed once or several times, and how a trace sizes the device.
//!
//! A trace sizes the device from its **footprint** by default: the blocks
//! the selected requests read or write, mapped densely (in address order) to
//! `0..footprint`. `address_space` keeps the trace's own addresses and sizes
//! the device to its highest block instead; a capacity given by the user is
//! used as given (and the trace must fit in it). The footprint pass runs
//! once per configuration: its result travels with the [`TraceConfig`]
//! (cloned runs, such as the oracle search's replays, reuse it).

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::device::{DeviceConfig, Geometry, MAX_BLOCKS};
use crate::error::{Error, Result};
use crate::request::{Op, Request};
use crate::trace::extend::{ContinuationStats, Plan};
use crate::trace::{self, BlockSource, Extent, ReadStats, Remap, Selection};
use crate::workload::{self, Workload};

/// The part of a run's configuration that makes its request stream: what a
/// source, the footprint pass and the lifetime annotation read.
#[derive(Clone, Debug)]
pub struct StreamSpec {
    /// Synthetic workload spec (see [`crate::workload`]); unused with a trace.
    pub workload: String,
    /// The trace to replay instead of the workload.
    pub trace: Option<TraceConfig>,
    /// Seed of the workload generator.
    pub seed: u64,
    /// User blocks the replay writes [blocks]: the stream is cut at the
    /// write request that reaches them.
    pub writes: u64,
    /// The device (its logical size and block size shape the stream; a
    /// trace may size it, see [`resolve`]).
    pub device: DeviceConfig,
}

impl StreamSpec {
    /// Run the trace's footprint pass and size the device from it where
    /// asked ([`resolve`]).
    pub fn resolve(&mut self) -> Result<()> {
        resolve(self.trace.as_mut(), &mut self.device, self.seed)
    }

    /// The request source and the device shape (resolving the trace first:
    /// `self` is updated then).
    pub(crate) fn open(&mut self) -> Result<(Source, Geometry)> {
        self.resolve()?;
        let geo = self.device.geometry()?;
        let src = match &self.trace {
            Some(t) => {
                let resolved = Arc::clone(t.resolved.as_ref().expect("resolved above"));
                let src = open_blocks(t, geo.block_size, &resolved)?;
                Source::Trace(Box::new(TraceStream {
                    cfg: t.clone(),
                    block_size: geo.block_size,
                    src,
                    resolved,
                    pass: 0,
                    offset_ns: 0,
                    last_ns: 0,
                    pass_requests: 0,
                    duration_ns: 0,
                    max_gap_ns: 0,
                    done: ReadStats::default(),
                }))
            }
            None => Source::Synthetic(workload::parse(
                &self.workload,
                geo.logical_blocks as u64,
                geo.block_size,
                self.seed,
            )?),
        };
        Ok((src, geo))
    }

    /// Visit, in order, the requests a replay of this stream applies after
    /// its prefill: the same source (trace passes or seeded generator), cut
    /// where the replay cuts it (the write request that reaches `writes`
    /// user blocks is shortened, and nothing after it is applied). `f`
    /// returns false to stop early. A policy trained on the whole stream
    /// reads it before the replay (through
    /// [`crate::engine::RunService::requests`]).
    pub fn for_each(&self, f: &mut dyn FnMut(&Request) -> bool) -> Result<()> {
        let mut spec = self.clone();
        let (mut src, _) = spec.open()?;
        let mut written = 0u64;
        while written < spec.writes {
            let Some(mut r) = src.next()? else {
                break;
            };
            if r.op == Op::Write {
                let room = spec.writes - written;
                if r.blocks as u64 > room {
                    r.blocks = room as u32;
                }
                written += r.blocks as u64;
            }
            if !f(&r) {
                break;
            }
        }
        Ok(())
    }
}

/// What one pass over a request stream found out.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct Span {
    /// Timestamp of the first request [ns].
    pub first_ns: u64,
    /// Timestamp of the last request [ns].
    pub last_ns: u64,
    /// User blocks written.
    pub writes: u64,
    /// Requests.
    pub requests: u64,
}

impl Span {
    /// Count one more request of the stream.
    pub fn add(&mut self, r: &Request) {
        if self.requests == 0 {
            self.first_ns = r.time_ns;
        }
        self.requests += 1;
        self.last_ns = r.time_ns;
        if r.op == Op::Write {
            self.writes += r.blocks as u64;
        }
    }

    /// Time from the first to the last request [ns].
    pub fn duration_ns(&self) -> u64 {
        self.last_ns - self.first_ns
    }
}

/// A trace to replay instead of a synthetic workload.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TraceConfig {
    /// Trace file (text, optionally gzip/xz/zstd, or native).
    pub path: String,
    /// Format name; `None` detects it.
    pub format: Option<String>,
    /// What part of the trace to replay.
    pub selection: Selection,
    /// Map the touched blocks to a dense range 0..footprint (implied when
    /// the trace sizes the device from its footprint).
    pub remap: bool,
    /// Size the device's logical space from the trace instead of
    /// `device.logical_blocks`: its footprint, or its address space with
    /// `address_space`.
    pub capacity_from_trace: bool,
    /// With `capacity_from_trace`: size the device to the highest block the
    /// trace addresses (its own address space, blocks kept where they are)
    /// instead of its footprint.
    pub address_space: bool,
    /// Replay the selected trace this many times in a row, each pass's
    /// timestamps shifted to follow the previous pass [passes, >= 1].
    pub repeat: u32,
    /// Extend the trace to this many drive-writes in all with a
    /// continuation that keeps its lifetimes, sizes, mix and locality
    /// ([`trace::extend`], seeded by the run's seed); `None`: as it is.
    pub extend: Option<f64>,
    /// The footprint pass, once [`resolve`] has run (not part of the
    /// configuration; leave `None`).
    #[serde(skip)]
    pub resolved: Option<Arc<Resolved>>,
}

impl Default for TraceConfig {
    fn default() -> Self {
        TraceConfig {
            path: String::new(),
            format: None,
            selection: Selection::default(),
            remap: false,
            capacity_from_trace: false,
            address_space: false,
            repeat: 1,
            extend: None,
            resolved: None,
        }
    }
}

/// How the logical capacity of a trace replay was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Sizing {
    /// The trace's footprint, blocks mapped densely.
    Footprint,
    /// The trace's address space (highest block + 1).
    AddressSpace,
    /// The capacity the user gave.
    Given,
}

/// What the footprint pass found (shared by the runs of one configuration).
#[derive(Debug)]
pub struct Resolved {
    /// Dense map of the touched blocks, when blocks are remapped.
    remap: Option<Remap>,
    /// Distinct blocks the selected requests touch.
    footprint: u64,
    /// Highest block touched + 1.
    address_space: u64,
    sizing: Sizing,
    format: String,
    /// The continuation after the trace, when extended.
    extension: Option<Plan>,
    /// The records the footprint pass parsed, replayed from memory instead
    /// of reading a text trace again (`None`: native, or over the budget).
    recording: Option<Arc<trace::recording::Recording>>,
}

/// Figures of the trace a run replays, reported with its result.
#[derive(Clone, Debug, Serialize)]
pub struct TraceSummary {
    /// Reading and selection counts, summed over the passes.
    #[serde(flatten)]
    pub read: ReadStats,
    /// Format read.
    pub format: String,
    /// Passes over the trace the replay reached (`repeat`, or fewer if
    /// `writes` ended the run; the last may be partial).
    pub passes: u32,
    /// How the logical capacity was chosen.
    pub sizing: Sizing,
    /// The blocks the trace touches were mapped densely to `0..footprint`
    /// (its addresses kept otherwise).
    pub remapped: bool,
    /// Distinct blocks the selected requests touch [blocks].
    pub footprint_blocks: u64,
    /// Highest block the selected requests touch + 1 [blocks].
    pub address_space_blocks: u64,
    /// Time from the first to the last request of one pass [s].
    pub duration_seconds: f64,
    /// Longest gap between two consecutive requests [s].
    pub max_gap_seconds: f64,
    /// The continuation replayed after the trace (`extend`), if any.
    pub extension: Option<ContinuationStats>,
}

/// A trace's requests, pass after pass.
pub(crate) struct TraceStream {
    cfg: TraceConfig,
    block_size: u32,
    src: BlockSource,
    resolved: Arc<Resolved>,
    /// Pass under way (0-based).
    pass: u32,
    /// Added to this pass's timestamps [ns].
    offset_ns: u64,
    /// Timestamp of the last request served [ns, run time].
    last_ns: u64,
    /// Requests served in this pass, and the first one's time.
    pass_requests: u64,
    /// One pass's duration and the longest gap seen [ns].
    duration_ns: u64,
    max_gap_ns: u64,
    /// Counts of the finished passes.
    done: ReadStats,
}

impl TraceStream {
    #[inline]
    fn next(&mut self) -> Result<Option<Request>> {
        Ok(self.next_extent()?.map(|(r, _)| r))
    }

    #[inline]
    fn next_extent(&mut self) -> Result<Option<(Request, Extent)>> {
        loop {
            if let Some((mut r, extent)) = self.src.next_request_extent()? {
                let t = r.time_ns;
                if self.pass == 0 {
                    if self.pass_requests > 0 {
                        self.max_gap_ns = self.max_gap_ns.max(t - self.duration_ns);
                    }
                    self.duration_ns = t;
                }
                self.pass_requests += 1;
                r.time_ns = t + self.offset_ns;
                self.last_ns = r.time_ns;
                return Ok(Some((r, extent)));
            }
            if self.pass + 1 >= self.cfg.repeat || self.pass_requests == 0 {
                return Ok(None);
            }
            // The next pass starts one mean inter-arrival time after this one.
            let gap = self.duration_ns / (self.pass_requests - 1).max(1);
            self.offset_ns = self.last_ns + gap.max(1);
            add(&mut self.done, &self.src.stats());
            self.src = open_blocks(&self.cfg, self.block_size, &self.resolved)?;
            self.pass += 1;
            self.pass_requests = 0;
        }
    }

    /// What was read so far, `applied` requests of it by the engine (the
    /// source reads a few ahead).
    pub(crate) fn summary(&self, applied: u64) -> TraceSummary {
        let mut read = self.done;
        add(&mut read, &self.src.stats());
        let r = &self.resolved;
        let per_pass = if self.pass == 0 {
            self.pass_requests
        } else {
            self.done.requests / self.pass as u64
        };
        TraceSummary {
            read,
            format: r.format.clone(),
            passes: applied.div_ceil(per_pass.max(1)).max(1) as u32,
            sizing: r.sizing,
            remapped: r.remap.is_some(),
            footprint_blocks: r.footprint,
            address_space_blocks: r.address_space,
            duration_seconds: self.duration_ns as f64 * 1e-9,
            max_gap_seconds: self.max_gap_ns as f64 * 1e-9,
            extension: self.src.continuation_stats(),
        }
    }
}

fn add(total: &mut ReadStats, s: &ReadStats) {
    total.lines += s.lines;
    total.requests += s.requests;
    total.skipped_bad += s.skipped_bad;
    total.zero_size += s.zero_size;
    total.backwards_timestamps += s.backwards_timestamps;
    total.filtered += s.filtered;
    total.truncated |= s.truncated;
    total.unkept_events += s.unkept_events;
    total.load_end = total.load_end.or(s.load_end);
}

fn open_blocks(t: &TraceConfig, block_size: u32, r: &Resolved) -> Result<BlockSource> {
    let sel = match &r.recording {
        Some(rec) => trace::open_recorded(Arc::clone(rec), &t.selection)?,
        None => trace::open_selected(&t.path, Some(&r.format), &t.selection)?.0,
    };
    Ok(BlockSource::new(sel, block_size, r.remap.clone(), &t.path)
        .with_continuation(r.extension.as_ref().map(Plan::continuation)))
}

/// Where requests come from.
pub(crate) enum Source {
    Synthetic(Box<dyn Workload>),
    Trace(Box<TraceStream>),
}

impl Source {
    #[inline]
    pub(crate) fn next(&mut self) -> Result<Option<Request>> {
        match self {
            Source::Synthetic(w) => Ok(Some(w.next_request())),
            Source::Trace(t) => t.next(),
        }
    }

    /// The next request written into `out`; `false` at the end (see
    /// [`Workload::next_into`]).
    #[inline]
    pub(crate) fn next_into(&mut self, out: &mut Request) -> Result<bool> {
        match self {
            Source::Synthetic(w) => {
                w.next_into(out);
                Ok(true)
            }
            Source::Trace(t) => Ok(t.next()?.map(|r| *out = r).is_some()),
        }
    }

    /// The next request and where its bytes sit in its blocks (a synthetic
    /// workload's requests are whole blocks).
    #[inline]
    pub(crate) fn next_extent(&mut self, block_size: u32) -> Result<Option<(Request, Extent)>> {
        match self {
            Source::Synthetic(w) => {
                let r = w.next_request();
                let bytes = r.blocks as u64 * block_size as u64;
                Ok(Some((r, Extent { head: 0, bytes })))
            }
            Source::Trace(t) => t.next_extent(),
        }
    }

    /// The trace's figures, for a trace replay of which the engine
    /// applied `applied` requests.
    pub(crate) fn trace_summary(&self, applied: u64) -> Option<TraceSummary> {
        match self {
            Source::Trace(t) => Some(t.summary(applied)),
            Source::Synthetic(_) => None,
        }
    }
}

/// Run the footprint pass of `trace` (once: later calls and clones reuse
/// it) and size `device` from it where asked.
pub fn resolve(
    trace: Option<&mut TraceConfig>,
    device: &mut DeviceConfig,
    seed: u64,
) -> Result<()> {
    let Some(t) = trace else {
        return Ok(());
    };
    if t.resolved.is_some() {
        return Ok(());
    }
    if t.repeat == 0 {
        return Err(Error::config(
            "repeat",
            "must be at least 1 (passes over the trace)",
        ));
    }
    if let Some(k) = t.extend.filter(|k| !(k.is_finite() && *k > 0.0)) {
        return Err(Error::config(
            "extend",
            format!("{k}; must be a number of drive-writes > 0"),
        ));
    }
    if t.extend.is_some() && t.repeat > 1 {
        return Err(Error::config(
            "extend",
            "give repeat or extend, not both (extend continues the trace with its own lifetimes)",
        ));
    }
    let bs = device.block_size;
    if !bs.is_power_of_two() || bs < 512 {
        device.geometry()?;
    }
    let format = match &t.format {
        Some(f) => f.clone(),
        None => trace::detect(&t.path)?,
    };
    let (address_space, map, error, recording) = trace::footprint_recorded(
        &t.path,
        Some(&format),
        &t.selection,
        bs,
        Some(trace::recording::budget()).filter(|&b| b > 0),
    )?;
    let footprint = map.blocks();
    if let (0, Some(e)) = (footprint, error) {
        // Nothing before the bad input: nothing to replay.
        return Err(e);
    }
    if footprint == 0 {
        return Err(Error::trace(
            &t.path,
            None,
            "no request selected: the trace is empty for this selection",
        ));
    }
    let sizing = match (t.capacity_from_trace, t.address_space) {
        (false, _) => Sizing::Given,
        (true, false) => Sizing::Footprint,
        (true, true) => Sizing::AddressSpace,
    };
    // A trace touching every block below its highest one maps onto itself:
    // no remapping then (the same stream, the same annotation).
    // A capacity given (or a timed run's whole drive) that the trace's
    // addresses exceed but its footprint fits: placed densely inside it.
    let placed = sizing == Sizing::Given
        && address_space > device.logical_blocks
        && footprint <= device.logical_blocks;
    let dense = (t.remap || placed || sizing == Sizing::Footprint) && footprint < address_space;
    match sizing {
        Sizing::Footprint => device.logical_blocks = footprint,
        Sizing::AddressSpace => {
            if address_space > MAX_BLOCKS {
                return Err(Error::trace(
                    &t.path,
                    None,
                    format!(
                        "the trace addresses {address_space} blocks, beyond the engine's {MAX_BLOCKS} \
                         block limit; drop --address-space to size the device from the {footprint} blocks \
                         it touches"
                    ),
                ));
            }
            device.logical_blocks = address_space;
        }
        Sizing::Given => {
            let need = if dense { footprint } else { address_space };
            if need > device.logical_blocks {
                return Err(Error::trace(
                    &t.path,
                    None,
                    format!(
                        "the trace {} {need} blocks of {bs} bytes, more than the device's {} logical \
                         blocks; drop --capacity/--logical-blocks to size the device from its \
                         {footprint}-block footprint (timed: a larger preset, or --fit-device)",
                        if dense { "touches" } else { "addresses" },
                        device.logical_blocks,
                    ),
                ));
            }
        }
    }
    t.remap = dense;
    let extension = match t.extend {
        Some(n) => Some(Plan::new(
            &t.path,
            Some(&format),
            &t.selection,
            bs,
            device.logical_blocks,
            n,
            seed,
        )?),
        None => None,
    };
    t.resolved = Some(Arc::new(Resolved {
        remap: dense.then_some(map),
        footprint,
        address_space,
        sizing,
        format,
        extension,
        recording: recording.map(Arc::new),
    }));
    Ok(())
}
