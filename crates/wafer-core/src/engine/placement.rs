//! The placement vocabulary: the trait every placement policy implements
//! and the values the engine hands it ([`UserWrite`], [`GcBlock`],
//! [`Event`], the read-only [`Ctx`]). It lives beside the engine that drives
//! it; the policies themselves and their registry are in [`crate::policy`].
//!
//! Which hooks matter when (every hook but `name`, `groups`, `place_user`
//! and `place_gc` has a default that does nothing):
//!
//! | when | hooks | who uses them |
//! |---|---|---|
//! | building the run | `needs_future`, `memory_bytes` | oracles (the run annotates the future first); the memory estimate |
//! | before the prefill | `prepare` ([`RunService`]) | NoDaP's search, FIOS `train=full`, windowed policies checking their window fits, oracle assists |
//! | after the prefill | `on_workload_start` | learned policies start sampling here |
//! | each user write batch | `place_user`, then `on_user_write` per block; `take_error` after the batch | every policy |
//! | each block GC moves | `prefetch_gc`, `place_gc` (or once per victim: `gc_group`) | every policy |
//! | each GC victim choice | `select_victim`, `victim_hint`, `victim_group` | policies with their own victims (MiDAS, DOGI, NoDaP); Adjusted Greedy; MultiLog |
//! | each append / invalidation | `on_block`, `on_invalidate` (only if `tracks_blocks` / `tracks_invalidations`) | policies that follow blocks into segments (SepBIT, MiDAS, DOGI) |
//! | segment sealed, GC victim collected, window closed | `on_event`; `retired_groups` once per window | re-configuring and re-training policies |
//! | reads, trims, idle gaps | `on_read`, `on_trim`, `on_idle` (timing mode) | Shiro and FIOS (reads), Shiro (idle-time GC) |
//! | results | `state`, `threshold`, `class_bounds`, `predicted_class`, `predicted_user_class`, `training`, `model` | the run's result and accuracy report |
//! | checkpoints | `save_state`, `load_state`, `training_in_flight` | every registered policy |

use serde_json::Value;

use super::service::RunService;
use crate::device::Geometry;
use crate::error::{Error, Result};
use crate::ftl::{Ftl, GroupId, SegmentId};
use crate::future::{Future, NEVER};
use crate::model::train::TrainingStats;
use crate::model::Tensors;
pub use crate::victim::BlockEvent;

/// One user-written block, as the policy sees it.
#[derive(Clone, Copy, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct UserWrite {
    /// Logical block written.
    pub lba: u32,
    /// Logical time of this write [user blocks] (the clock before it ticks).
    pub time: u64,
    /// Length of the request the block came from [blocks].
    pub req_blocks: u32,
    /// Position of the block inside its request [blocks].
    pub req_offset: u32,
    /// Arrival time of the request the block came from [ns since the
    /// workload's start] (a trace's timestamps; a synthetic workload's
    /// arrival process).
    pub req_time_ns: u64,
    /// Tenant that issued the request (see [`crate::request::Request::tenant`]).
    pub tenant: u32,
}

/// One valid block that GC moves out of a victim.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct GcBlock {
    /// Logical block moved.
    pub lba: u32,
    /// Victim segment it comes from.
    pub victim: SegmentId,
    /// Group of the victim segment.
    pub from_group: GroupId,
}

/// Things that happen in the engine that a policy may react to.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub enum Event {
    /// A segment of `group` became full and was sealed.
    Sealed {
        /// The segment.
        seg: SegmentId,
        /// Its group.
        group: GroupId,
    },
    /// GC moved the `valid` blocks out of `seg` and is about to erase it
    /// (its group and times are still readable).
    Collected {
        /// The victim.
        seg: SegmentId,
        /// Blocks it moved.
        valid: u32,
    },
    /// A statistics window closed (retraining / re-configuration point).
    Window {
        /// Index of the window that closed.
        index: u64,
    },
}

/// The block-following hooks of a policy that wraps another (`inner`),
/// passed on to it: GC prefetch, block events and invalidations.
macro_rules! forward_block_hooks {
    () => {
        fn prefetch_gc(&self, lba: u32) {
            self.inner.prefetch_gc(lba);
        }
        fn tracks_blocks(&self) -> bool {
            self.inner.tracks_blocks()
        }
        fn on_block(
            &mut self,
            lba: u32,
            seg: $crate::ftl::SegmentId,
            ev: $crate::engine::BlockEvent,
            ftl: &$crate::ftl::Ftl,
        ) {
            self.inner.on_block(lba, seg, ev, ftl);
        }
        fn tracks_invalidations(&self) -> bool {
            self.inner.tracks_invalidations()
        }
        fn on_invalidate(&mut self, seg: $crate::ftl::SegmentId, ftl: &$crate::ftl::Ftl) {
            self.inner.on_invalidate(seg, ftl);
        }
    };
}
pub(crate) use forward_block_hooks;

/// Read-only view of the engine handed to policies.
#[derive(Clone, Copy)]
pub struct Ctx<'a> {
    /// The FTL state: mapping, segments, clock.
    pub ftl: &'a Ftl,
    /// The annotated future, when the run has one. Only oracles may place by
    /// it (a real policy that reads it is cheating).
    pub future: Option<&'a Future>,
}

impl<'a> Ctx<'a> {
    /// A view of `ftl` without future knowledge.
    pub fn new(ftl: &'a Ftl) -> Self {
        Ctx { ftl, future: None }
    }
    /// Logical clock [user blocks].
    #[inline(always)]
    pub fn now(&self) -> u64 {
        self.ftl.now
    }
    /// Device shape.
    #[inline(always)]
    pub fn geometry(&self) -> &Geometry {
        &self.ftl.geo
    }
    /// Death [run clock] of the `i`-th block of the user-write batch being
    /// placed; [`NEVER`] without the future. Oracles only.
    #[inline(always)]
    pub fn batch_death(&self, i: usize) -> u64 {
        self.future.map_or(NEVER, |f| f.batch_death(i))
    }
    /// Death [run clock] of the live copy of `lba`; [`NEVER`] without the
    /// future. Oracles only.
    #[inline(always)]
    pub fn live_death(&self, lba: u32) -> u64 {
        self.future.map_or(NEVER, |f| f.live_death(lba))
    }
}

/// A placement policy (see docs/ARCHITECTURE.md and docs/EXTENDING.md); its methods grouped by
/// when the engine calls them (the table above).
pub trait Placement: Send {
    // --- Who the policy is ---

    /// Registry name.
    fn name(&self) -> &'static str;

    /// Groups the policy uses at start; it may return higher ids later (the
    /// engine adds groups on demand).
    fn groups(&self) -> usize;

    /// Groups the policy uses now (ids `0..n`); more than [`Placement::groups`]
    /// for a policy that grows its groups at run time. Oracle assists place
    /// blocks only into these.
    fn active_groups(&self) -> usize {
        self.groups()
    }

    /// Whether the policy places by the annotated future (an oracle): the
    /// run then annotates its request stream first.
    fn needs_future(&self) -> bool {
        false
    }

    /// Bytes of the policy's own state.
    fn memory_bytes(&self) -> usize {
        0
    }

    // --- Before the workload ---

    /// Offline preparation before the run (and before its prefill), given
    /// what the run offers ([`RunService`]): its request stream and span (a
    /// policy trained on the whole trace, FIOS `train=full`, or one with
    /// time windows that must fit the trace), its annotated future when it
    /// has one (NoDaP searches its configuration here), and replays of the
    /// same stream under another policy. Called once for every run.
    fn prepare(&mut self, _run: &dyn RunService) -> Result<()> {
        Ok(())
    }

    /// The workload starts now (after the prefill, if the run has one):
    /// learned policies begin sampling and training here, so no example
    /// comes from prefilled blocks.
    fn on_workload_start(&mut self, _ctx: &Ctx) {}

    // --- Placing blocks (the hot path) ---

    /// Group of each block of a batch of user writes (one request, or part of
    /// it); `out` has the same length as `writes`. The blocks are applied in
    /// order after the call.
    fn place_user(&mut self, ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]);

    /// A user write of `lba` at logical time `time` into `group` was applied
    /// (after the old copy was invalidated and before any GC it triggers):
    /// the place to update per-LBA history, which must not run ahead of the
    /// engine while a batch is being applied.
    #[inline(always)]
    fn on_user_write(&mut self, _lba: u32, _time: u64, _group: GroupId) {}

    /// Hint: `lba` will be written or moved soon; start loading its per-LBA
    /// state (the engine calls this where it prefetches its own tables).
    #[inline(always)]
    fn prefetch(&self, _lba: u32) {}

    /// Hint: GC will move `lba` soon; start loading what
    /// [`Placement::place_gc`] reads of it (by default what
    /// [`Placement::prefetch`] loads).
    #[inline(always)]
    fn prefetch_gc(&self, lba: u32) {
        self.prefetch(lba);
    }

    /// Group of a valid block moved by GC.
    fn place_gc(&mut self, ctx: &Ctx, block: &GcBlock) -> GroupId;

    /// The group of every valid block GC moves out of a victim of
    /// `from_group`, for a policy that decides per victim and not per
    /// block: the engine then moves the victim's blocks there without
    /// calling [`Placement::place_gc`] or [`Placement::prefetch_gc`] per
    /// block. `None` (the default): ask per block.
    #[inline(always)]
    fn gc_group(&self, _from_group: GroupId) -> Option<GroupId> {
        None
    }

    // --- Choosing GC victims ---

    /// Choose the GC victim among sealed segments with at most `max_valid`
    /// valid blocks; `None` leaves it to the configured selector.
    fn select_victim(&mut self, _ctx: &Ctx, _max_valid: u32) -> Option<SegmentId> {
        None
    }

    /// What a victim selector that scores by the policy's predictions
    /// (Adjusted Greedy) should know before its next choice; `None` if the
    /// policy has nothing to say. Asked only when such a selector runs.
    fn victim_hint(&self) -> Option<crate::victim::VictimHint> {
        None
    }

    /// The group whose segments the `multilog` victim selector should
    /// choose among (MultiLog's model); `None` leaves the choice open. Asked
    /// before each choice, only when that selector runs.
    fn victim_group(&mut self, _ctx: &Ctx, _max_valid: u32) -> Option<GroupId> {
        None
    }

    // --- Following blocks into segments ---

    /// Whether the policy follows individual blocks into segments
    /// ([`Placement::on_block`]); asked once, so the engine skips the calls
    /// for the others.
    fn tracks_blocks(&self) -> bool {
        false
    }

    /// `lba`'s copy in `seg` was appended or invalidated (only if
    /// [`Placement::tracks_blocks`]); an invalidation comes before the
    /// append of the new copy. `ftl.now_ns` is the request's time.
    fn on_block(&mut self, _lba: u32, _seg: SegmentId, _ev: BlockEvent, _ftl: &Ftl) {}

    /// Whether the policy follows invalidations
    /// ([`Placement::on_invalidate`]); asked once, so the engine skips the
    /// calls for the others.
    fn tracks_invalidations(&self) -> bool {
        false
    }

    /// One of `seg`'s blocks became invalid, by an overwrite or a trim
    /// (only if [`Placement::tracks_invalidations`]);
    /// `ftl.segs.valid[seg]` no longer counts it.
    fn on_invalidate(&mut self, _seg: SegmentId, _ftl: &Ftl) {}

    // --- What else happens ---

    /// React to an engine event.
    fn on_event(&mut self, _ctx: &Ctx, _ev: &Event) {}

    /// A trim invalidated `lba`.
    fn on_trim(&mut self, _ctx: &Ctx, _lba: u32) {}

    /// The workload read `blocks` blocks from `lba` (policies whose features
    /// count reads: Shiro, FIOS). Once per read request.
    #[inline(always)]
    fn on_read(&mut self, _ctx: &Ctx, _req: &crate::request::Request) {}

    /// The device is idle from `now_ns` for `gap_ns` [ns] (timing mode
    /// only: the gap before the next request arrives). Shiro runs
    /// background GC in such gaps.
    fn on_idle(&mut self, _ctx: &Ctx, _now_ns: u64, _gap_ns: u64) {}

    /// Groups the policy no longer writes to (a configuration shrank): the
    /// engine closes their open segments, so they stop holding space. Asked once per
    /// statistics window; a group may be used again later.
    fn retired_groups(&self, _out: &mut Vec<GroupId>) {}

    // --- Predictions and reports ---

    /// The policy's current lifetime threshold [user blocks] (SepBIT's ℓ),
    /// recorded in every time-series window; `None` if it has none (yet).
    fn threshold(&self) -> Option<f64> {
        None
    }

    /// Upper bounds [user blocks] of the lifetime classes the policy
    /// predicts for user-written blocks (`gc` false) or the remaining
    /// lifetimes of GC-written ones: class k holds `[bounds[k-1], bounds[k])`,
    /// the last class is unbounded. Empty for a policy that predicts none.
    /// They may change during a run; a prediction is judged by the bounds of
    /// its time.
    fn class_bounds(&self, _gc: bool) -> &[u64] {
        &[]
    }

    /// The lifetime class the policy predicted for the block it just placed
    /// in `group` (for a GC-written block, `gc`, the class of its remaining
    /// lifetime); `None` when it makes no prediction for such a block.
    fn predicted_class(&self, _group: GroupId, _gc: bool) -> Option<u8> {
        None
    }

    /// The lifetime class predicted for the `i`-th block of the batch last
    /// placed by [`Placement::place_user`], which went to `group`. By
    /// default the group's class; a policy whose classes are finer than its
    /// groups (several classes per group) overrides it.
    fn predicted_user_class(&self, _i: usize, group: GroupId) -> Option<u8> {
        self.predicted_class(group, false)
    }

    /// What the policy decided at run time (configuration, thresholds), for
    /// the run's result; `None` if there is nothing to report.
    fn state(&self) -> Option<Value> {
        None
    }

    /// What the policy's online training did (learned policies).
    fn training(&self) -> Option<TrainingStats> {
        None
    }

    /// The policy's current model, ready to save (learned policies).
    fn model(&self) -> Option<Tensors> {
        None
    }

    /// An error the policy met that stops the run (e.g. its online training
    /// diverged); the engine asks after every [`Placement::place_user`] and
    /// stops before applying that batch, so the results so far stand.
    fn take_error(&mut self) -> Option<Error> {
        None
    }

    // --- Checkpoints ---

    /// The policy's complete state for a checkpoint ([`crate::codec`]):
    /// everything it needs to go on exactly as if never stopped. Every
    /// registered policy has one (most by [`crate::checkpoint_by_serde`]).
    fn save_state(&self) -> Result<Vec<u8>> {
        Err(crate::codec::unsupported(self.name()))
    }

    /// Replace the state of this policy (built from the same configuration)
    /// by one saved with [`Placement::save_state`].
    fn load_state(&mut self, _bytes: &[u8]) -> Result<()> {
        Err(crate::codec::unsupported(self.name()))
    }

    /// A training runs on a thread now: a checkpoint waits until it is
    /// deployed (its model is not state yet).
    fn training_in_flight(&self) -> bool {
        false
    }
}

/// One collected victim, as the engine saw it just before the erase (for
/// `--dump-gc`: [`VictimSink`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct VictimRow {
    /// Victims collected before this one in the run (0, 1, ...).
    pub victim: u64,
    /// Trace time of the request being served [ns].
    pub time_ns: u64,
    /// User blocks written so far (the engine's logical clock, the prefill
    /// included).
    pub now: u64,
    /// The victim segment.
    pub segment: u32,
    /// The group (class) that wrote it.
    pub group: u32,
    /// Blocks per segment.
    pub blocks: u32,
    /// Its valid blocks (those moved).
    pub valid: u32,
    /// When it was opened and sealed [user blocks, the same clock as `now`].
    pub open_time: u64,
    /// See `open_time`.
    pub seal_time: u64,
    /// Erases it had before this one.
    pub erase_count: u32,
}

/// Where the engine reports each collected victim (`--dump-gc`): called
/// once per victim, off the per-block path.
pub trait VictimSink: Send {
    /// The workload starts: victims are reported from now on.
    fn start(&mut self) {}
    /// One victim.
    fn victim(&mut self, row: &VictimRow);
    /// The run is over: write what is buffered; the first error met, if
    /// any (a sink never stops the run).
    fn finish(&mut self) -> Result<(), String> {
        Ok(())
    }
}
