//! Geometry and configuration of the simulated device.
//!
//! The user gives a [`DeviceConfig`] (serde, so it round-trips through JSON /
//! TOML); [`DeviceConfig::geometry`] validates it into a [`Geometry`], the
//! fixed shape the FTL works on.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Free segments the GC reserve holds at least (`gc_low`): GC starts with
/// one free segment left for its first destination.
pub const MIN_RESERVE: usize = 2;

/// Largest block count the engine addresses (block ids are `u32`; `u32::MAX`
/// marks "unmapped").
pub const MAX_BLOCKS: u64 = u32::MAX as u64 - 1;

/// When GC runs: the two evaluation setups of the field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcMode {
    /// A fixed-capacity SSD: GC starts when fewer than `gc_low` segments are
    /// free and stops at `gc_high` (MiDAS, Shiro, DOGI).
    #[default]
    Watermark,
    /// The log-structured store of SepBIT's evaluation: while the garbage
    /// proportion of the whole log exceeds `gp_threshold`, one sealed segment
    /// whose own garbage proportion exceeds `segment_gp_threshold` is
    /// collected (checked after each user block by default). The log has no
    /// fixed capacity: unless `physical_blocks` is given, the device is sized
    /// so it never runs out (OP is not used). This is the replayer's trigger
    /// only; its other conventions (no prefill, garbage counted at seal, one
    /// victim per request) are the `sepbit-replayer` setup
    /// ([`crate::run::Setup`]).
    GarbageProportion,
}

/// When an overwritten block's old copy counts as garbage of the log (the
/// garbage proportion that triggers GC in `garbage-proportion` mode).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GarbageAccounting {
    /// At once, wherever the old copy is (wafer).
    #[default]
    Immediate,
    /// A copy in a sealed segment at once; a copy in an open segment only
    /// when that segment is sealed (SepBIT's trace replayer, `Log.java`: an
    /// open segment's garbage joins the log's count in `sealSegment`).
    AtSeal,
}

/// When the engine checks whether GC is due.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcCheck {
    /// After every user block, collecting until the trigger clears
    /// (`pick_segments`, if given, caps the victims per check) (wafer,
    /// MiDAS-Simulation).
    #[default]
    Block,
    /// After every write or trim request, collecting at most
    /// `pick_segments` victims (default 1), chosen together before any is
    /// collected (SepBIT's trace replayer: `GCScheduler.schedule` after each
    /// request, `pickSegAmount` segments per `GCWorker.doJob`). In
    /// `watermark` mode GC also runs per block while fewer than 2 segments
    /// are free, so a large request cannot run out of space.
    Request,
}

/// How many of a request's blocks a policy places at once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PlacementBatch {
    /// A request's blocks together (up to 256 per call), before any of
    /// them is applied (wafer).
    #[default]
    Request,
    /// One block at a time, after the previous block's invalidation, append
    /// and seal (SepBIT's trace replayer, `Log.append`: a block is
    /// classified after the previous block of its request sealed a segment,
    /// so a policy that resets a class's state at a seal, or counts the
    /// log's valid blocks, sees it mid-request).
    Block,
}

/// Background GC: collection between requests, on top of the foreground GC
/// that a write triggers (Shiro §III-C: "during system idle time, ... if
/// the proportion of free superblocks is below 25%").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BackgroundGc {
    /// None: only the writes' foreground GC (wafer's default; a trace
    /// replayed as a stress load has no idle time).
    #[default]
    Off,
    /// FEMU's rule, whose page-level FTL Shiro ported (§IV): after each
    /// request, while free segments are below `background_free_fraction`,
    /// collect one victim that has at least `background_min_invalid` of its
    /// blocks invalid.
    AfterRequest,
    /// Idle time from the requests' timestamps: when the gap before a
    /// request is at least `idle_ns`, collect up to gap / `background_victim_ns`
    /// victims (at least one) while free segments are below
    /// `background_free_fraction`, each with at least `background_min_invalid`
    /// of its blocks invalid.
    IdleGap,
}

impl BackgroundGc {
    /// The mode's name, as in configs and results.
    pub fn name(self) -> &'static str {
        match self {
            BackgroundGc::Off => "off",
            BackgroundGc::AfterRequest => "after-request",
            BackgroundGc::IdleGap => "idle-gap",
        }
    }
}

/// What the user asks for. Every field has a default, so `{}` is a valid
/// config (a 4 GiB device of 4 KiB blocks with 10% over-provisioning).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DeviceConfig {
    /// Logical (user-visible) capacity [blocks].
    pub logical_blocks: u64,
    /// Physical capacity [blocks]. When given, it is used exactly and `op` is
    /// ignored; otherwise it is `logical_blocks * (1 + op)`.
    pub physical_blocks: Option<u64>,
    /// Over-provisioning ratio: (physical - logical) / logical.
    pub op: f64,
    /// Block (page) size [bytes]; requests are split into blocks of this size.
    pub block_size: u32,
    /// Segment (superblock, erase unit) size [blocks].
    pub segment_blocks: u32,
    /// The GC reserve: GC starts when fewer than this many segments are free
    /// [segments], the same for every policy (the open segments of a
    /// policy's groups come on top, as its own cost). Default 4, the free
    /// reserve of MiDAS-Simulation; at least 2. When GC needs more fresh
    /// segments at once than are free, it spills into the nearest open
    /// group (counted as `gc_spills`) instead of stopping.
    pub gc_low: u32,
    /// GC stops once this many segments are free [segments]; at least `gc_low`.
    pub gc_high: u32,
    /// Foreground GC starts when fewer than this fraction of all segments
    /// are free, replacing `gc_low` (Shiro §III-C: 0.05) [fraction of
    /// segments]. A watermark the device could not hold with every logical
    /// block valid is lowered to the highest it can (the result's
    /// `gc.lowered_from` says so).
    pub gc_low_fraction: Option<f64>,
    /// Foreground GC stops once this fraction of all segments is free,
    /// replacing `gc_high`; default: `gc_low_fraction` [fraction of segments].
    pub gc_high_fraction: Option<f64>,
    /// Background GC between requests (default off).
    pub background_gc: BackgroundGc,
    /// Background GC runs while fewer than this fraction of all segments
    /// are free (Shiro §III-C: 0.25) [fraction of segments].
    pub background_free_fraction: f64,
    /// Background GC only collects a victim with at least this fraction of
    /// its blocks invalid (FEMU: 1/8) [fraction of a segment].
    pub background_min_invalid: f64,
    /// `idle-gap`: a gap between requests this long is idle time [ns].
    pub idle_ns: u64,
    /// `idle-gap`: idle time one background victim takes [ns].
    pub background_victim_ns: u64,
    /// Write the whole logical space once, sequentially, before the workload
    /// (statistics start after it, as in MiDAS, Shiro and DOGI).
    pub prefill: bool,
    /// Drive-writes of the workload excluded from the steady-state WAF [drive-writes].
    pub warmup_drive_writes: f64,
    /// Length of one time-series window [drive-writes].
    pub window_drive_writes: f64,
    /// Run the full FTL invariant checker every this many user writes (0 = never).
    pub check_every: u64,
    /// When GC runs.
    pub gc_mode: GcMode,
    /// `garbage-proportion` mode: GC while garbage / log size exceeds this.
    pub gp_threshold: f64,
    /// `garbage-proportion` mode: only segments with more garbage than this
    /// fraction are collected.
    pub segment_gp_threshold: f64,
    /// When an overwritten copy counts as garbage of the log
    /// (`garbage-proportion` mode's trigger).
    pub garbage_accounting: GarbageAccounting,
    /// When GC is checked: after every block or after every request.
    pub gc_check: GcCheck,
    /// Victims collected per GC check at most [segments]; `None`: until the
    /// trigger clears with `gc_check = block`, 1 with `gc_check = request`.
    pub pick_segments: Option<u32>,
    /// How many of a request's blocks a policy places at once.
    pub placement_batch: PlacementBatch,
    /// Shrink `segment_blocks` (halving, down to [`FIT_MIN_SEGMENT_BLOCKS`])
    /// until the spare space holds [`FIT_SPARE_SEGMENTS`] segments: set when
    /// the user gave no segment size and the device is small (a trace's
    /// footprint), so that GC has segments to choose from. The result's
    /// geometry and warnings say what was used.
    pub fit_segments: bool,
    /// Open-stream limit of a multi-stream SSD [streams]: the device keeps
    /// at most this many append points, and a write (user or GC) a policy
    /// sends to group `g >= open_streams` goes to the last stream,
    /// `open_streams - 1` (stream policies number their streams hottest
    /// first, so the coldest share one). `None`: as many as the policy asks.
    pub open_streams: Option<u32>,
}

/// Spare segments (physical minus logical space) a fitted device has at least.
pub const FIT_SPARE_SEGMENTS: u64 = 32;
/// Smallest segment a fitted device gets [blocks].
pub const FIT_MIN_SEGMENT_BLOCKS: u32 = 16;

/// Segments of slack a `garbage-proportion` log gets beyond
/// logical / (1 - gp_threshold): room for the groups' open segments and the
/// victim in flight.
pub const LOG_SLACK_SEGMENTS: u64 = 64;

impl Default for DeviceConfig {
    fn default() -> Self {
        DeviceConfig {
            logical_blocks: 1 << 20,
            physical_blocks: None,
            op: 0.10,
            block_size: 4096,
            segment_blocks: 256,
            gc_low: 4,
            gc_high: 4,
            gc_low_fraction: None,
            gc_high_fraction: None,
            background_gc: BackgroundGc::Off,
            background_free_fraction: 0.25,
            background_min_invalid: 0.125,
            idle_ns: 1_000_000,
            background_victim_ns: 10_000_000,
            prefill: true,
            warmup_drive_writes: 1.0,
            window_drive_writes: 0.1,
            check_every: 0,
            gc_mode: GcMode::Watermark,
            gp_threshold: 0.15,
            segment_gp_threshold: 0.15,
            garbage_accounting: GarbageAccounting::Immediate,
            gc_check: GcCheck::Block,
            pick_segments: None,
            placement_batch: PlacementBatch::Request,
            fit_segments: false,
            open_streams: None,
        }
    }
}

/// One field of [`DeviceConfig`], described for the Python side
/// (`wafer.Device` is built from [`FIELDS`]; a test checks the table
/// against the struct's serde form).
pub struct FieldInfo {
    /// Its name in JSON / TOML / Python.
    pub name: &'static str,
    /// Its JSON type: `int`, `float`, `bool` or `str` (one of `choices`).
    pub kind: &'static str,
    /// Whether it may be null (`None`: unset, see the doc).
    pub optional: bool,
    /// Its unit (`blocks`, `bytes`, `segments`, `fraction`, `ns`,
    /// `drive-writes`, `user writes`, `streams`), or empty.
    pub unit: &'static str,
    /// The values a `str` field takes.
    pub choices: &'static [&'static str],
    /// One line: what it sets.
    pub doc: &'static str,
}

const fn field(
    name: &'static str,
    kind: &'static str,
    optional: bool,
    unit: &'static str,
    doc: &'static str,
) -> FieldInfo {
    FieldInfo {
        name,
        kind,
        optional,
        unit,
        choices: &[],
        doc,
    }
}

const fn choice(
    name: &'static str,
    choices: &'static [&'static str],
    doc: &'static str,
) -> FieldInfo {
    FieldInfo {
        name,
        kind: "str",
        optional: false,
        unit: "",
        choices,
        doc,
    }
}

/// Every field of [`DeviceConfig`], in its order.
pub const FIELDS: &[FieldInfo] = &[
    field("logical_blocks", "int", false, "blocks", "logical (user-visible) capacity"),
    field("physical_blocks", "int", true, "blocks", "physical capacity, used exactly (op is then ignored); unset: logical * (1 + op)"),
    field("op", "float", false, "fraction", "over-provisioning, (physical - logical) / logical"),
    field("block_size", "int", false, "bytes", "block (page) size; requests are split into blocks of it (a power of two >= 512)"),
    field("segment_blocks", "int", false, "blocks", "segment (superblock, erase unit) size"),
    field("gc_low", "int", false, "segments", "the GC reserve: GC starts below this many free segments, the same for every policy (at least 2)"),
    field("gc_high", "int", false, "segments", "GC stops once this many segments are free (at least gc_low; a run not given it: the larger of this default and gc_low)"),
    field("gc_low_fraction", "float", true, "fraction", "foreground GC starts below this share of free segments, replacing gc_low (Shiro: 0.05)"),
    field("gc_high_fraction", "float", true, "fraction", "foreground GC stops at this share of free segments, replacing gc_high; unset: gc_low_fraction"),
    choice("background_gc", &["off", "after-request", "idle-gap"], "background GC between requests: off, FEMU's rule after each request, or in idle gaps of the timestamps"),
    field("background_free_fraction", "float", false, "fraction", "background GC runs while fewer than this share of segments are free (Shiro: 0.25)"),
    field("background_min_invalid", "float", false, "fraction", "background GC only collects a victim with at least this share of its blocks invalid (FEMU: 1/8)"),
    field("idle_ns", "int", false, "ns", "idle-gap: a gap between requests this long is idle time"),
    field("background_victim_ns", "int", false, "ns", "idle-gap: idle time one background victim takes"),
    field("prefill", "bool", false, "", "write the whole logical space once before the workload (statistics start after it)"),
    field("warmup_drive_writes", "float", false, "drive-writes", "workload excluded from the steady-state WAF"),
    field("window_drive_writes", "float", false, "drive-writes", "length of one time-series window"),
    field("check_every", "int", false, "user writes", "run the FTL invariant checker every this many user writes (0: never)"),
    choice("gc_mode", &["watermark", "garbage-proportion"], "when GC runs: below gc_low free segments (an SSD), or while the log's garbage exceeds gp_threshold (SepBIT's store)"),
    field("gp_threshold", "float", false, "fraction", "garbage-proportion: GC while garbage / log size exceeds this"),
    field("segment_gp_threshold", "float", false, "fraction", "garbage-proportion: only segments with more garbage than this are collected"),
    choice("garbage_accounting", &["immediate", "at-seal"], "when an overwritten copy counts as garbage: at once, or (in an open segment) when its segment is sealed"),
    choice("gc_check", &["block", "request"], "when GC is checked: after every block (until the trigger clears) or after every request"),
    field("pick_segments", "int", true, "segments", "victims per GC check at most; unset: until the trigger clears (block), 1 (request)"),
    choice("placement_batch", &["request", "block"], "how many of a request's blocks a policy places at once: all together (wafer), or one at a time after the previous one's seal (SepBIT's replayer; set by --setup sepbit-replayer)"),
    field("fit_segments", "bool", false, "", "halve segment_blocks until the spare space holds 32 segments (a trace's small footprint); a run not given it: on for a trace that sizes the device, without a segment size"),
    field("open_streams", "int", true, "streams", "open-stream limit of a multi-stream SSD: groups at or above it share the last stream; unset: no limit"),
];

/// [`FIELDS`] as JSON, each with its default (from [`DeviceConfig::default`]).
pub fn fields_json() -> serde_json::Value {
    let defaults =
        serde_json::to_value(DeviceConfig::default()).expect("a device config serialises");
    serde_json::Value::Array(
        FIELDS
            .iter()
            .map(|f| {
                serde_json::json!({"name": f.name, "type": f.kind, "optional": f.optional, "unit": f.unit,
                                   "choices": f.choices, "doc": f.doc, "default": defaults[f.name]})
            })
            .collect(),
    )
}

/// The validated shape of the device.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Geometry {
    /// Logical capacity [blocks].
    pub logical_blocks: u32,
    /// Segment size [blocks].
    pub segment_blocks: u32,
    /// Number of segments.
    pub segments: u32,
    /// Usable physical capacity = segments * segment_blocks [blocks]; a
    /// remainder smaller than one segment is not used.
    pub physical_blocks: u64,
    /// Block size [bytes].
    pub block_size: u32,
    /// Effective over-provisioning: physical / logical - 1.
    pub op: f64,
    /// The segment size asked for [blocks]; larger than `segment_blocks`
    /// when [`DeviceConfig::fit_segments`] shrank it.
    pub requested_segment_blocks: u32,
}

impl DeviceConfig {
    /// Validate and derive the geometry; every impossible setting is an error
    /// naming the field and what would be accepted.
    pub fn geometry(&self) -> Result<Geometry> {
        if self.logical_blocks == 0 {
            return Err(Error::config(
                "logical_blocks",
                "must be at least 1 (zero capacity)",
            ));
        }
        if self.logical_blocks > MAX_BLOCKS {
            return Err(Error::config(
                "logical_blocks",
                format!(
                    "{} exceeds the engine's limit of {MAX_BLOCKS} blocks",
                    self.logical_blocks
                ),
            ));
        }
        if !self.block_size.is_power_of_two() || self.block_size < 512 {
            return Err(Error::config(
                "block_size",
                format!("{} bytes; must be a power of two >= 512", self.block_size),
            ));
        }
        for (field, v) in [
            ("gp_threshold", self.gp_threshold),
            ("segment_gp_threshold", self.segment_gp_threshold),
        ] {
            if !(v.is_finite() && v > 0.0 && v < 1.0) {
                return Err(Error::config(
                    field,
                    format!("{v}; must be a garbage proportion in (0, 1)"),
                ));
            }
        }
        if self.segment_blocks == 0 {
            return Err(Error::config("segment_blocks", "must be at least 1"));
        }
        let physical = match self.physical_blocks {
            Some(p) => p,
            None if self.gc_mode == GcMode::GarbageProportion => {
                let log = (self.logical_blocks as f64 / (1.0 - self.gp_threshold)).ceil() as u64;
                log + LOG_SLACK_SEGMENTS * self.segment_blocks as u64
            }
            None => {
                if !self.op.is_finite() || self.op <= 0.0 {
                    return Err(Error::config(
                        "op",
                        format!(
                            "{}; over-provisioning must be a ratio > 0 (e.g. 0.07, 0.1, 0.28)",
                            self.op
                        ),
                    ));
                }
                (self.logical_blocks as f64 * (1.0 + self.op)).floor() as u64
            }
        };
        if physical <= self.logical_blocks {
            return Err(Error::config(
                "physical_blocks",
                format!(
                    "{physical} physical blocks leave no over-provisioning over {} logical blocks",
                    self.logical_blocks
                ),
            ));
        }
        if physical > MAX_BLOCKS {
            return Err(Error::config(
                "physical_blocks",
                format!("{physical} exceeds the engine's limit of {MAX_BLOCKS} blocks"),
            ));
        }
        if self.segment_blocks == 0 {
            return Err(Error::config("segment_blocks", "must be at least 1"));
        }
        // A fitted device's segments are checked once fitted (below).
        if !self.fit_segments && self.segment_blocks as u64 > physical {
            return Err(Error::config(
                "segment_blocks",
                format!(
                    "{} blocks is larger than the device ({physical} physical blocks)",
                    self.segment_blocks
                ),
            ));
        }
        if (self.gc_low as usize) < MIN_RESERVE {
            // Once ran as 2 silently: GC needs one free segment left for its
            // first destination when it starts.
            return Err(Error::config(
                "gc_low",
                format!(
                    "{}; must be at least {} free segments (GC starts with one left for its \
                     first destination)",
                    self.gc_low, MIN_RESERVE
                ),
            ));
        }
        if self.pick_segments == Some(0) {
            return Err(Error::config(
                "pick_segments",
                "must be at least 1 segment per GC (or null: until the trigger clears)",
            ));
        }
        if self.gc_high < self.gc_low {
            return Err(Error::config(
                "gc_high",
                format!(
                    "{} is below gc_low ({}); GC stops at gc_high >= gc_low",
                    self.gc_high, self.gc_low
                ),
            ));
        }
        for (field, v) in [
            ("gc_low_fraction", self.gc_low_fraction),
            ("gc_high_fraction", self.gc_high_fraction),
            (
                "background_free_fraction",
                Some(self.background_free_fraction),
            ),
            ("background_min_invalid", Some(self.background_min_invalid)),
        ] {
            if let Some(v) = v {
                if !(v.is_finite() && (0.0..1.0).contains(&v)) {
                    return Err(Error::config(
                        field,
                        format!("{v}; must be a fraction of segments in [0, 1)"),
                    ));
                }
            }
        }
        if let (Some(lo), Some(hi)) = (self.gc_low_fraction, self.gc_high_fraction) {
            if hi < lo {
                return Err(Error::config(
                    "gc_high_fraction",
                    format!("{hi} is below gc_low_fraction ({lo}); GC stops at a fraction >= where it starts"),
                ));
            }
        }
        if self.gc_high_fraction.is_some() && self.gc_low_fraction.is_none() {
            return Err(Error::config(
                "gc_high_fraction",
                "needs gc_low_fraction (fractions replace gc_low and gc_high together)",
            ));
        }
        if self.background_gc == BackgroundGc::IdleGap
            && (self.idle_ns == 0 || self.background_victim_ns == 0)
        {
            return Err(Error::config(
                if self.idle_ns == 0 {
                    "idle_ns"
                } else {
                    "background_victim_ns"
                },
                "must be at least 1 ns with background_gc idle-gap",
            ));
        }
        for (field, v, allow_zero) in [
            ("warmup_drive_writes", self.warmup_drive_writes, true),
            ("window_drive_writes", self.window_drive_writes, false),
        ] {
            if !v.is_finite() || v < 0.0 || (!allow_zero && v == 0.0) {
                let bound = if allow_zero { ">= 0" } else { "> 0" };
                return Err(Error::config(
                    field,
                    format!("{v}; must be a finite number {bound}"),
                ));
            }
        }
        if self.open_streams == Some(0) {
            return Err(Error::config(
                "open_streams",
                "must be at least 1 stream (or unset for no limit)",
            ));
        }
        let mut segment_blocks = self.segment_blocks;
        if self.fit_segments {
            let spare = physical - self.logical_blocks;
            while segment_blocks > FIT_MIN_SEGMENT_BLOCKS
                && spare / (segment_blocks as u64) < FIT_SPARE_SEGMENTS
            {
                segment_blocks = (segment_blocks / 2).max(FIT_MIN_SEGMENT_BLOCKS);
            }
            if segment_blocks as u64 > physical {
                return Err(Error::config(
                    "segment_blocks",
                    format!(
                        "even the smallest fitted segment ({segment_blocks} blocks) is larger than \
                         the device ({physical} physical blocks): the trace's footprint is too small \
                         for a log (give --capacity, or more --op)"
                    ),
                ));
            }
        }
        let segments = physical / segment_blocks as u64;
        let usable = segments * segment_blocks as u64;
        Ok(Geometry {
            logical_blocks: self.logical_blocks as u32,
            segment_blocks,
            requested_segment_blocks: self.segment_blocks,
            segments: segments as u32,
            physical_blocks: usable,
            block_size: self.block_size,
            op: usable as f64 / self.logical_blocks as f64 - 1.0,
        })
    }
}

impl Geometry {
    /// Check that `reserved` segments can stay free (GC reserve plus one open
    /// segment per group) while all logical data still fits.
    pub fn check_reserve(&self, reserved: u32) -> Result<()> {
        let fits = |segments: u64, seg: u64| {
            segments.saturating_sub(reserved as u64) * seg > self.logical_blocks as u64
        };
        if fits(self.segments as u64, self.segment_blocks as u64) {
            return Ok(());
        }
        // The flags that would fit: a smaller segment (halving), or more OP.
        let logical = self.logical_blocks as u64;
        let mut seg = self.segment_blocks as u64;
        while seg > 1 && !fits(self.physical_blocks / seg, seg) {
            seg /= 2;
        }
        let smaller = if fits(self.physical_blocks / seg, seg) {
            format!("--segment-blocks {seg}, or ")
        } else {
            String::new()
        };
        let need = (reserved as u64 + logical / self.segment_blocks as u64 + 1)
            * self.segment_blocks as u64;
        let op = ((need as f64 / logical as f64 - 1.0) * 100.0).ceil() / 100.0;
        Err(Error::config(
            "op",
            format!(
                "over-provisioning too small: {} segments of {} blocks minus {reserved} kept free or open \
                 cannot hold {} logical blocks plus room for GC; pass {smaller}--op {op:.2} \
                 (or --physical-blocks {need})",
                self.segments, self.segment_blocks, self.logical_blocks
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_table_is_the_config() {
        let v = serde_json::to_value(DeviceConfig::default()).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        let names: Vec<&str> = FIELDS.iter().map(|f| f.name).collect();
        let (mut a, mut b) = (keys.clone(), names.clone());
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b, "FIELDS must list every DeviceConfig field once");
        for f in FIELDS {
            let d = &v[f.name];
            let ok = match f.kind {
                "int" => d.is_u64(),
                "float" => d.is_f64(),
                "bool" => d.is_boolean(),
                "str" => d.as_str().is_some_and(|s| f.choices.contains(&s)),
                _ => false,
            };
            assert!(
                ok || (f.optional && d.is_null()),
                "{}: {} default {d}",
                f.name,
                f.kind
            );
            assert_eq!(f.optional && d.is_null(), d.is_null(), "{}", f.name);
            assert_eq!(f.kind == "str", !f.choices.is_empty(), "{}", f.name);
            // Every choice parses, and an optional field takes a value of its type.
            for c in f.choices {
                let mut w = v.clone();
                w[f.name] = serde_json::json!(c);
                serde_json::from_value::<DeviceConfig>(w)
                    .unwrap_or_else(|e| panic!("{}={c}: {e}", f.name));
            }
            if f.optional {
                let mut w = v.clone();
                w[f.name] = if f.kind == "int" {
                    serde_json::json!(3)
                } else {
                    serde_json::json!(0.5)
                };
                serde_json::from_value::<DeviceConfig>(w)
                    .unwrap_or_else(|e| panic!("{}: {e}", f.name));
            }
        }
        assert_eq!(fields_json().as_array().unwrap().len(), FIELDS.len());
    }

    #[test]
    fn default_is_a_4gib_device_with_10pct_op() {
        let g = DeviceConfig::default().geometry().unwrap();
        assert_eq!(g.logical_blocks, 1 << 20);
        assert_eq!(g.segments, ((1u64 << 20) as f64 * 1.1) as u32 / 256);
        assert!((g.op - 0.1).abs() < 1e-3);
    }

    #[test]
    fn exact_physical_size_is_used_as_given() {
        let c = DeviceConfig {
            logical_blocks: 1000,
            physical_blocks: Some(1280),
            segment_blocks: 64,
            ..Default::default()
        };
        let g = c.geometry().unwrap();
        assert_eq!((g.segments, g.physical_blocks), (20, 1280));
    }

    #[test]
    fn impossible_devices_are_errors_naming_the_field() {
        let bad = [
            (
                DeviceConfig {
                    logical_blocks: 0,
                    ..Default::default()
                },
                "logical_blocks",
            ),
            (
                DeviceConfig {
                    op: 0.0,
                    ..Default::default()
                },
                "op",
            ),
            (
                DeviceConfig {
                    op: -0.1,
                    ..Default::default()
                },
                "op",
            ),
            (
                DeviceConfig {
                    op: f64::NAN,
                    ..Default::default()
                },
                "op",
            ),
            (
                DeviceConfig {
                    logical_blocks: 100,
                    segment_blocks: 1000,
                    ..Default::default()
                },
                "segment_blocks",
            ),
            (
                DeviceConfig {
                    segment_blocks: 0,
                    ..Default::default()
                },
                "segment_blocks",
            ),
            (
                DeviceConfig {
                    block_size: 1000,
                    ..Default::default()
                },
                "block_size",
            ),
            (
                DeviceConfig {
                    gc_low: 4,
                    gc_high: 3,
                    ..Default::default()
                },
                "gc_high",
            ),
            (
                DeviceConfig {
                    window_drive_writes: 0.0,
                    ..Default::default()
                },
                "window_drive_writes",
            ),
            (
                DeviceConfig {
                    physical_blocks: Some(10),
                    logical_blocks: 10,
                    ..Default::default()
                },
                "physical_blocks",
            ),
        ];
        for (cfg, field) in bad {
            match cfg.geometry() {
                Err(Error::Config { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{field}: expected a config error, got {other:?}"),
            }
        }
    }

    #[test]
    fn fractions_out_of_range_are_errors_naming_the_field() {
        for (cfg, field) in [
            (
                DeviceConfig {
                    gc_low_fraction: Some(1.5),
                    ..Default::default()
                },
                "gc_low_fraction",
            ),
            (
                DeviceConfig {
                    gc_low_fraction: Some(0.1),
                    gc_high_fraction: Some(0.05),
                    ..Default::default()
                },
                "gc_high_fraction",
            ),
            (
                DeviceConfig {
                    gc_high_fraction: Some(0.1),
                    ..Default::default()
                },
                "gc_high_fraction",
            ),
            (
                DeviceConfig {
                    background_free_fraction: -0.1,
                    ..Default::default()
                },
                "background_free_fraction",
            ),
            (
                DeviceConfig {
                    background_gc: BackgroundGc::IdleGap,
                    idle_ns: 0,
                    ..Default::default()
                },
                "idle_ns",
            ),
        ] {
            match cfg.geometry() {
                Err(Error::Config { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{field}: expected a config error, got {other:?}"),
            }
        }
    }

    #[test]
    fn unknown_config_keys_are_rejected() {
        let e = serde_json::from_str::<DeviceConfig>(r#"{"logical_blockz": 5}"#).unwrap_err();
        assert!(e.to_string().contains("logical_blockz"));
    }
}
