//! The multi-stream SSD model the host-side stream policies assume (FIOS
//! §3.1, §4.3, Fig. 9; LSTM+KM §3.4), and what those policies share.
//!
//! * Streams are groups: each stream has one open segment (its append
//!   point) and takes fresh segments on demand, with no static physical
//!   partition. GC picks victims without regard to streams (the configured
//!   selector) and a relocated block keeps its stream: every stream policy's
//!   `place_gc` returns the victim's group.
//! * The number of streams K is each policy's `streams` parameter; the
//!   device's open-stream limit ([`crate::device::DeviceConfig::open_streams`])
//!   is applied by [`StreamLimit`], which folds the ids at or above the limit
//!   onto the last stream.
//! * [`Chunking`]: sector chunks (FIOS §3.1: chunk = ⌊sector / 64⌋) in the
//!   device's block units.
//! * [`Clock`]: the windows these policies keep (OFIOS's run windows,
//!   LSTM+KM's periods, vStream's remapping) in trace seconds from the
//!   request timestamps, or in drive-writes of the logical clock.

use serde_json::Value;

use crate::engine::RunService;
use crate::engine::{Ctx, Event, GcBlock, Placement, UserWrite};
use crate::error::{Error, Result};
use crate::ftl::{GroupId, SegmentId};
use crate::model::train::TrainingStats;
use crate::model::Tensors;
use crate::request::Request;
pub use crate::source::Span;

/// Bytes of one sector, the unit FIOS counts chunks in.
pub const SECTOR_BYTES: u32 = 512;

/// A policy on a device with an open-stream limit: groups `>= limit` become
/// `limit - 1` for user and GC writes alike. Everything else is the inner
/// policy's.
pub struct StreamLimit {
    inner: Box<dyn Placement>,
    limit: GroupId,
}

impl StreamLimit {
    /// Wrap `inner` for a device with `limit` (>= 1) open streams.
    pub fn new(inner: Box<dyn Placement>, limit: u32) -> Self {
        StreamLimit {
            inner,
            limit: limit.clamp(1, GroupId::MAX as u32) as GroupId,
        }
    }

    #[inline(always)]
    fn fold(&self, g: GroupId) -> GroupId {
        g.min(self.limit - 1)
    }
}

impl Placement for StreamLimit {
    fn save_state(&self) -> crate::error::Result<Vec<u8>> {
        self.inner.save_state()
    }
    fn load_state(&mut self, bytes: &[u8]) -> crate::error::Result<()> {
        self.inner.load_state(bytes)
    }
    fn training_in_flight(&self) -> bool {
        self.inner.training_in_flight()
    }
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn groups(&self) -> usize {
        self.inner.groups().min(self.limit as usize)
    }
    fn active_groups(&self) -> usize {
        self.inner.active_groups().min(self.limit as usize)
    }
    fn place_user(&mut self, ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]) {
        self.inner.place_user(ctx, writes, out);
        for g in out.iter_mut() {
            *g = self.fold(*g);
        }
    }
    fn on_user_write(&mut self, lba: u32, time: u64, group: GroupId) {
        self.inner.on_user_write(lba, time, group);
    }
    fn prefetch(&self, lba: u32) {
        self.inner.prefetch(lba);
    }
    fn place_gc(&mut self, ctx: &Ctx, block: &GcBlock) -> GroupId {
        let g = self.inner.place_gc(ctx, block);
        self.fold(g)
    }
    fn select_victim(&mut self, ctx: &Ctx, max_valid: u32) -> Option<SegmentId> {
        self.inner.select_victim(ctx, max_valid)
    }
    crate::engine::forward_block_hooks!();
    fn on_event(&mut self, ctx: &Ctx, ev: &Event) {
        self.inner.on_event(ctx, ev);
    }
    fn on_workload_start(&mut self, ctx: &Ctx) {
        self.inner.on_workload_start(ctx);
    }
    fn on_trim(&mut self, ctx: &Ctx, lba: u32) {
        self.inner.on_trim(ctx, lba);
    }
    fn on_read(&mut self, ctx: &Ctx, req: &Request) {
        self.inner.on_read(ctx, req);
    }
    fn retired_groups(&self, out: &mut Vec<GroupId>) {
        self.inner.retired_groups(out);
        let limit = self.limit;
        out.retain(|&g| g < limit);
    }
    fn memory_bytes(&self) -> usize {
        self.inner.memory_bytes()
    }
    fn state(&self) -> Option<Value> {
        self.inner.state()
    }
    fn prepare(&mut self, run: &dyn RunService) -> Result<()> {
        self.inner.prepare(run)
    }
    fn needs_future(&self) -> bool {
        self.inner.needs_future()
    }
    fn class_bounds(&self, gc: bool) -> &[u64] {
        self.inner.class_bounds(gc)
    }
    fn predicted_class(&self, group: GroupId, gc: bool) -> Option<u8> {
        self.inner.predicted_class(group, gc)
    }
    fn predicted_user_class(&self, i: usize, group: GroupId) -> Option<u8> {
        self.inner.predicted_user_class(i, group)
    }
    fn take_error(&mut self) -> Option<Error> {
        self.inner.take_error()
    }
    fn training(&self) -> Option<TrainingStats> {
        self.inner.training()
    }
    fn model(&self) -> Option<Tensors> {
        self.inner.model()
    }
}

/// Sector chunks in block units.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct Chunking {
    /// Chunk size [blocks].
    pub blocks: u32,
    /// log2(blocks) when it is a power of two (a shift instead of a division).
    shift: Option<u32>,
    /// Otherwise ceil(2^64 / blocks): a multiply-high instead of a division,
    /// exact for every 32-bit LBA (Lemire, Kaser and Kurz, "Faster remainder
    /// by direct computation", 2019).
    magic: u64,
    /// Chunks covering the logical space.
    pub chunks: u32,
}

impl Chunking {
    /// Chunks of `sectors` 512-byte sectors on a device of `logical_blocks`
    /// blocks of `block_size` bytes. A chunk must hold whole blocks.
    pub fn from_sectors(
        policy: &str,
        sectors: u32,
        block_size: u32,
        logical_blocks: u32,
    ) -> Result<Self> {
        let bad = |reason: String| Error::Parameter {
            policy: policy.into(),
            reason,
        };
        let per_block = (block_size / SECTOR_BYTES).max(1);
        if sectors == 0 {
            return Err(bad(
                "chunk_sectors = 0; a chunk holds at least one block".into()
            ));
        }
        if !sectors.is_multiple_of(per_block) {
            return Err(bad(format!(
                "chunk_sectors = {sectors} is not a whole number of {block_size}-byte blocks \
                 ({per_block} sectors each); use a multiple of {per_block}, or a smaller --block-size"
            )));
        }
        Ok(Self::from_blocks(sectors / per_block, logical_blocks))
    }

    /// Chunks of `blocks` (>= 1) blocks.
    pub fn from_blocks(blocks: u32, logical_blocks: u32) -> Self {
        let blocks = blocks.max(1);
        Chunking {
            blocks,
            shift: blocks.is_power_of_two().then(|| blocks.trailing_zeros()),
            magic: if blocks.is_power_of_two() {
                0
            } else {
                u64::MAX / blocks as u64 + 1
            },
            chunks: logical_blocks.div_ceil(blocks).max(1),
        }
    }

    /// Chunk of `lba`.
    #[inline(always)]
    pub fn of(&self, lba: u32) -> u32 {
        match self.shift {
            Some(s) => lba >> s,
            None => ((lba as u128 * self.magic as u128) >> 64) as u32,
        }
    }
}

/// Where a policy's windows are measured: trace time or the logical clock.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Clock {
    /// Trace seconds, from the request timestamps [ns per window].
    Seconds(u64),
    /// Drive-writes of the logical clock [user blocks per window].
    Blocks(u64),
}

impl Clock {
    /// A window of `seconds`, or of `drive_writes` when given (which wins).
    pub fn new(
        policy: &str,
        what: &str,
        seconds: f64,
        drive_writes: Option<f64>,
        logical_blocks: u32,
    ) -> Result<Self> {
        let bad = |reason: String| Error::Parameter {
            policy: policy.into(),
            reason,
        };
        match drive_writes {
            Some(d) if d.is_finite() && d > 0.0 => Ok(Clock::Blocks(
                ((d * logical_blocks as f64).round() as u64).max(1),
            )),
            Some(d) => Err(bad(format!("{what} = {d} drive-writes; must be > 0"))),
            None if seconds.is_finite() && seconds > 0.0 => {
                Ok(Clock::Seconds(((seconds * 1e9).round() as u64).max(1)))
            }
            None => Err(bad(format!("{what} = {seconds} s; must be > 0"))),
        }
    }

    /// Window length in its own unit (ns or user blocks).
    #[allow(clippy::len_without_is_empty)] // a clock is never empty: its length is >= 1
    pub fn len(&self) -> u64 {
        match *self {
            Clock::Seconds(n) | Clock::Blocks(n) => n,
        }
    }

    /// The reading of this clock for a write at logical `time` of a request
    /// at `time_ns`.
    #[inline(always)]
    pub fn read(&self, time_ns: u64, time: u64) -> u64 {
        match self {
            Clock::Seconds(_) => time_ns,
            Clock::Blocks(_) => time,
        }
    }

    /// The run's length in this clock's unit (ns of trace time, or user
    /// blocks), from `span`.
    pub fn run_length(&self, span: &Span) -> u64 {
        match self {
            Clock::Seconds(_) => span.duration_ns(),
            Clock::Blocks(_) => span.writes,
        }
    }

    /// This clock with windows of `len` (same unit).
    fn with_len(&self, len: u64) -> Clock {
        match self {
            Clock::Seconds(_) => Clock::Seconds(len.max(1)),
            Clock::Blocks(_) => Clock::Blocks(len.max(1)),
        }
    }

    fn show(&self, x: u64) -> String {
        match self {
            Clock::Seconds(_) => format!("{:.3} s", x as f64 * 1e-9),
            Clock::Blocks(_) => format!("{x} user blocks"),
        }
    }

    /// The window for a run of `span` that must hold at least `required`
    /// of them. If it does, this clock. If not: with [`ShortRun::Scale`]
    /// (the default), windows of 1/`target` of the run and the sentence
    /// saying so (for the result's warnings); with [`ShortRun::Refuse`]
    /// (the earlier rule), this clock if one window fits (the caller
    /// checks the rest), else an error naming the window and the run.
    pub fn fit(
        &self,
        policy: &str,
        what: &str,
        span: &Span,
        (required, target): (u64, u64),
        short: ShortRun,
    ) -> Result<(Clock, Option<String>)> {
        let (need, have) = (self.len(), self.run_length(span));
        let refuse = || Error::Parameter {
            policy: policy.into(),
            reason: format!(
                "{what} of {} is longer than the run ({}): no window would close; use a shorter \
                 window (or its drive-writes form), or short_run=scale",
                self.show(need),
                self.show(have)
            ),
        };
        let target = target.max(required).max(1);
        if have / need >= required.max(1) {
            return Ok((*self, None));
        }
        match short {
            ShortRun::Refuse if need <= have => Ok((*self, None)),
            ShortRun::Refuse => Err(refuse()),
            ShortRun::Scale if have < target => Err(refuse()),
            ShortRun::Scale => {
                let scaled = self.with_len(have / target);
                let note = format!(
                    "{what} of {} fits the run ({}) {} time(s), fewer than the {required} it needs: \
                     scaled to {} ({target} windows); set the window explicitly, or \
                     short_run=refuse for the earlier rule",
                    self.show(need),
                    self.show(have),
                    have / need,
                    self.show(scaled.len())
                );
                Ok((scaled, Some(note)))
            }
        }
    }
}

/// What a window policy does when the run holds too few of its windows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ShortRun {
    /// Shrink the window to a fraction of the run, with a warning.
    Scale,
    /// Keep the window; refuse a run shorter than one window.
    Refuse,
}

/// Windows a run too short for a window policy's window is cut into
/// ([`Clock::fit`]; OFIOS's one-hour evaluation holds 36 of its 100 s
/// windows, §6.4).
pub const MIN_WINDOWS: u64 = 10;

/// The stream of the writes a stream policy places before its first
/// table (FIOS's and OFIOS's dictionary, LSTM+KM's chunk table), from its
/// `untrained_stream` parameter: "last" (stream `streams - 1`, never the
/// hottest-looking cluster's once a table exists) or "first" (stream 0,
/// the hottest's: cold prefill data then sits in the hot stream; wafer's
/// rule before issue 49). `streams` is checked >= 1 by the caller.
pub fn untrained_stream(policy: &str, value: &str, streams: u32) -> Result<u32> {
    let last = crate::params::one_of(
        policy,
        "untrained_stream",
        value,
        &[("last", true), ("first", false)],
    )?;
    Ok(if last { streams - 1 } else { 0 })
}

/// A policy warning for the result (`policy_state.warnings`, read by
/// [`crate::run::warnings`]).
pub fn warning(code: &str, message: &str) -> Value {
    serde_json::json!({"code": code, "message": message})
}

/// Distinct tenants that issue a request in `run` (a synthetic mix's
/// tenants; 1 for a trace or a single workload), counted up to 65536.
pub fn tenants(run: &dyn RunService) -> Result<u32> {
    let mut seen: Vec<u64> = Vec::new();
    let mut n = 0;
    run.requests(&mut |r| {
        let (w, bit) = ((r.tenant / 64) as usize, 1u64 << (r.tenant % 64));
        if w < 1024 {
            if w >= seen.len() {
                seen.resize(w + 1, 0);
            }
            if seen[w] & bit == 0 {
                seen[w] |= bit;
                n += 1;
            }
        }
        true
    })?;
    Ok(n)
}

/// Renumber clusters so ids follow `order` (a permutation of cluster ids
/// sorted by the policy's criterion): `map[old] = new`.
pub fn rank_map(order: &[usize]) -> Vec<u8> {
    let mut map = vec![0u8; order.len()];
    for (new, &old) in order.iter().enumerate() {
        map[old] = new as u8;
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_of_equals_the_division() {
        let mut x: u64 = 0x9E3779B97F4A7C15;
        for d in [
            1u32,
            2,
            3,
            7,
            10,
            64,
            100,
            105,
            1000,
            4095,
            65_537,
            1 << 31,
            u32::MAX - 1,
            u32::MAX,
        ] {
            let c = Chunking::from_blocks(d, u32::MAX);
            let check = |lba: u32| assert_eq!(c.of(lba), lba / d, "{lba} / {d}");
            for lba in [0, 1, d - 1, d, d.wrapping_add(1), u32::MAX - 1, u32::MAX] {
                check(lba);
            }
            for _ in 0..20_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                check(x as u32);
            }
        }
    }

    #[test]
    fn chunks_of_sectors_in_block_units() {
        let c = Chunking::from_sectors("fios", 64, 4096, 1000).unwrap();
        assert_eq!((c.blocks, c.chunks), (8, 125));
        assert_eq!((c.of(7), c.of(8), c.of(999)), (0, 1, 124));
        let c = Chunking::from_sectors("fios", 64, 8192, 1000).unwrap();
        assert_eq!(c.blocks, 4);
        let c = Chunking::from_blocks(3, 10);
        assert_eq!((c.of(5), c.chunks), (1, 4));
        let e = Chunking::from_sectors("fios", 0, 4096, 10).unwrap_err();
        assert!(e.to_string().contains("chunk_sectors = 0"), "{e}");
        let e = Chunking::from_sectors("fios", 4, 4096, 10).unwrap_err();
        assert!(e.to_string().contains("multiple of 8"), "{e}");
    }

    #[test]
    fn clock_units() {
        let c = Clock::new("x", "run_s", 100.0, None, 1000).unwrap();
        assert_eq!(c, Clock::Seconds(100_000_000_000));
        assert_eq!(c.read(5, 7), 5);
        let c = Clock::new("x", "run_s", 100.0, Some(0.5), 1000).unwrap();
        assert_eq!(c, Clock::Blocks(500));
        assert_eq!(c.read(5, 7), 7);
        assert!(Clock::new("x", "run_s", 0.0, None, 1000).is_err());
        assert!(Clock::new("x", "run_s", 1.0, Some(-1.0), 1000).is_err());
    }

    #[test]
    fn short_runs_scale_the_window_or_refuse() {
        let span = Span {
            first_ns: 0,
            last_ns: 50_000_000_000, // 50 s
            writes: 1000,
            requests: 1000,
        };
        let c = Clock::new("x", "run_s", 100.0, None, 1000).unwrap();
        // 100 s windows in a 50 s run: a tenth of the run, with a note.
        let (k, note) = c
            .fit("x", "the run window", &span, (1, 10), ShortRun::Scale)
            .unwrap();
        assert_eq!(k, Clock::Seconds(5_000_000_000));
        assert!(note.unwrap().contains("scaled to 5.000 s"));
        // The earlier rule refuses, naming the window and the run.
        let e = c
            .fit("x", "the run window", &span, (1, 10), ShortRun::Refuse)
            .unwrap_err()
            .to_string();
        assert!(e.contains("100.000 s") && e.contains("50.000 s"), "{e}");
        // A window the run holds as often as required is kept.
        let d = Clock::new("x", "run_s", 20.0, None, 1000).unwrap();
        for short in [ShortRun::Scale, ShortRun::Refuse] {
            assert_eq!(d.fit("x", "w", &span, (1, 10), short).unwrap(), (d, None));
        }
        // Required 7 of them (LSTM+KM's k + 2): scaled to the target, or
        // left to the caller under the earlier rule.
        let (k, _) = d.fit("x", "w", &span, (7, 35), ShortRun::Scale).unwrap();
        assert_eq!(k, Clock::Seconds(50_000_000_000 / 35));
        assert_eq!(
            d.fit("x", "w", &span, (7, 35), ShortRun::Refuse).unwrap(),
            (d, None)
        );
        // Drive-writes windows scale in user blocks.
        let b = Clock::Blocks(2000);
        let (k, _) = b.fit("x", "w", &span, (1, 10), ShortRun::Scale).unwrap();
        assert_eq!(k, Clock::Blocks(100));
    }

    #[test]
    fn rank_map_inverts_an_order() {
        assert_eq!(rank_map(&[2, 0, 1]), vec![1, 2, 0]);
    }
}
