//! The engine: the FTL state plus a placement policy and a victim selector.
//! It applies requests (write, read, trim), runs GC when free segments run
//! low, and counts everything in [`Stats`]. The placement vocabulary it
//! drives ([`Placement`] and the values it hands a policy) is in
//! [`placement`]; what a policy may ask of its run before it starts, in
//! [`service`].
//!
//! Hot path per user block: one policy call per request batch, one forward-map
//! lookup, one invalidation (reverse map + segment counter + selector update),
//! one append. No allocation: batches reuse two buffers.

pub mod placement;
pub mod service;
mod vacant;

pub(crate) use placement::forward_block_hooks;
pub use placement::{BlockEvent, Ctx, Event, GcBlock, Placement, UserWrite, VictimRow, VictimSink};
pub use service::{Replayed, RunService};

use serde::Serialize;

use crate::device::{BackgroundGc, DeviceConfig, GcMode, Geometry};
use crate::error::{Error, Result};
use crate::ftl::check;
use crate::ftl::semantics::GcSemantics;
use crate::ftl::sink::FlashOp;
use crate::ftl::stats::{Counters, Stats};
use crate::ftl::{Ftl, GroupId, SegState, SegmentId, UNMAPPED};
use crate::future::accuracy::class_of;
use crate::future::{remaining, Future, NEVER};
pub use crate::request::MAX_BATCH;
use crate::request::{Op, Request};
use crate::victim::VictimSelector;

/// How this engine runs GC, resolved from the device configuration for its
/// segment count and the policy's groups (reported in every result).
#[derive(Clone, Copy, Debug, Serialize, serde::Deserialize)]
pub struct GcSettings {
    /// Foreground GC starts when fewer segments than this are free [segments].
    pub start_below: usize,
    /// Foreground GC stops once this many segments are free [segments].
    pub stop_at: usize,
    /// The foreground watermark asked for (`gc_low_fraction`) when the
    /// device could not hold it with every logical block valid and it was
    /// lowered to `start_below` [segments].
    pub lowered_from: Option<usize>,
    /// Background GC mode (`off`, `after-request`, `idle-gap`).
    #[serde(with = "crate::codec::static_str")]
    pub background: crate::codec::Name,
    /// Background GC runs while fewer segments than this are free
    /// [segments]; 0 when off.
    pub background_below: usize,
    /// Background victims hold at most this many valid blocks [blocks].
    pub background_max_valid: u32,
}

/// Background GC as configured.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
struct Background {
    mode: BackgroundGc,
    below: usize,
    max_valid: u32,
    idle_ns: u64,
    victim_ns: u64,
}

/// How many victim slots ahead GC prefetches forward-map entries.
const GC_PREFETCH: usize = 16;
pub use crate::device::MIN_RESERVE;

/// An engine's saved state ([`Engine::save_state`]).
#[derive(Serialize, serde::Deserialize)]
pub struct EngineState {
    core: Vec<u8>,
    policy: Vec<u8>,
    victim: Vec<u8>,
    future: Option<crate::future::FutureCursor>,
}

/// An engine's state read by [`Engine::read_state`], without its policy
/// and selector.
pub struct ReadState {
    core: Engine,
    policy: Vec<u8>,
    victim: Vec<u8>,
}

/// FTL + policy + victim selector + statistics.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Engine {
    /// FTL state.
    pub ftl: Ftl,
    /// Statistics of the workload (reset after prefill).
    pub stats: Stats,
    // The policy, the selector and the future are saved by their own
    // methods (see `Engine::save_state`); a decoded engine gets the run's.
    #[serde(skip, default = "crate::engine::vacant::policy")]
    policy: Box<dyn Placement>,
    #[serde(skip, default = "crate::engine::vacant::selector")]
    victim: Box<dyn VictimSelector>,
    gc_low: usize,
    gc_high: usize,
    /// `garbage-proportion` mode: the log's garbage-proportion threshold.
    gp: Option<f64>,
    /// Victims may hold at most this many valid blocks.
    max_valid: u32,
    /// Blocks appended to non-free segments and not yet erased (the log size).
    log_blocks: u64,
    /// Mapped LBAs (valid blocks in the log).
    valid_blocks: u64,
    check_every: u64,
    /// User-write count at which periodic work (windows, warm-up, checks) is due.
    next_due: u64,
    batch: Vec<UserWrite>,
    out: Vec<GroupId>,
    /// The annotated future, when the run has one.
    #[serde(skip)]
    future: Option<Future>,
    /// The workload (the first submitted request) has started.
    started: bool,
    /// Buffer of the groups the policy retired.
    retired: Vec<GroupId>,
    /// GC-check conventions (garbage accounting, per-request checks, victims per check).
    sem: GcSemantics,
    /// With `sem.at_seal`: invalid blocks in open segments, not yet counted
    /// as garbage of the log [blocks]; always 0 otherwise.
    open_garbage: u64,
    /// The victim selector or the policy follows individual blocks
    /// ([`VictimSelector::tracks_blocks`], [`Placement::tracks_blocks`]).
    track_blocks: bool,
    /// Of those, the victim selector; and the policy.
    victim_blocks: bool,
    policy_blocks: bool,
    /// The policy follows invalidations ([`Placement::tracks_invalidations`]).
    policy_invalidations: bool,
    /// The victim selector asks the policy for a group ([`VictimSelector::needs_policy_group`]).
    victim_group: bool,
    /// Victims chosen together by a per-request check.
    picked: Vec<SegmentId>,
    /// Blocks the policy places per call at most (`placement_batch`).
    batch_max: u32,
    /// What the prefill wrote (before the statistics were reset).
    prefill: Counters,
    /// Background GC, when configured.
    bg: Option<Background>,
    /// Arrival time of the previous request [ns], once there was one.
    last_request_ns: Option<u64>,
    /// GC settings, for the result.
    gc: GcSettings,
    /// The victim selector scores by a policy's hint ([`VictimSelector::wants_hint`]).
    hinted: bool,
    /// Flash operations performed, for a timing model; `None` in WAF mode
    /// (the only mode a checkpoint holds).
    #[serde(skip)]
    flash_log: Option<Vec<FlashOp>>,
    /// Where each collected victim is reported (`--dump-gc`), and how many
    /// were collected since it was attached.
    #[serde(skip)]
    victim_sink: Option<(Box<dyn VictimSink>, u64)>,
}

impl Engine {
    /// An erased device driven by `policy`, collecting with `victim`.
    pub fn new(
        cfg: &DeviceConfig,
        geo: Geometry,
        policy: Box<dyn Placement>,
        victim: Box<dyn VictimSelector>,
    ) -> Result<Self> {
        let groups = policy.groups().max(1);
        // The free reserve is the device's, the same for every policy; the
        // open segments of the policy's groups are its own cost.
        let n = geo.segments as usize;
        let of_segments = |f: f64| (f * n as f64).ceil() as usize;
        let mut gc_low = cfg
            .gc_low_fraction
            .map_or(cfg.gc_low as usize, of_segments)
            .max(MIN_RESERVE);
        let mut gc_high = match cfg.gc_low_fraction {
            Some(lo) => of_segments(cfg.gc_high_fraction.unwrap_or(lo)),
            None => cfg.gc_high as usize,
        }
        .max(gc_low);
        let mut lowered_from = None;
        if cfg.gc_low_fraction.is_some() {
            // The most segments that can stay free beside the groups' open
            // ones while every logical block is valid (see check_reserve).
            let data = geo.logical_blocks as usize / geo.segment_blocks as usize + 1;
            let fit = n.saturating_sub(groups + data).max(MIN_RESERVE);
            if gc_low > fit {
                lowered_from = Some(gc_low);
                gc_low = fit;
            }
            gc_high = gc_high.min(fit).max(gc_low);
        }
        geo.check_reserve((gc_low + groups) as u32)?;
        if cfg.background_gc != BackgroundGc::Off && cfg.gc_mode != GcMode::Watermark {
            return Err(Error::config(
                "background_gc",
                "runs with gc_mode watermark only (a garbage-proportion log has no free-space watermark)",
            ));
        }
        let bg = (cfg.background_gc != BackgroundGc::Off).then(|| Background {
            mode: cfg.background_gc,
            below: of_segments(cfg.background_free_fraction),
            max_valid: ((1.0 - cfg.background_min_invalid) * geo.segment_blocks as f64).floor()
                as u32,
            idle_ns: cfg.idle_ns,
            victim_ns: cfg.background_victim_ns,
        });
        let hinted = victim.wants_hint();
        let (gp, max_valid) = match cfg.gc_mode {
            GcMode::Watermark => (None, geo.segment_blocks),
            GcMode::GarbageProportion => {
                // "more garbage than the threshold": valid < (1 - t) * segment
                let bound =
                    ((1.0 - cfg.segment_gp_threshold) * geo.segment_blocks as f64).ceil() as u32;
                (Some(cfg.gp_threshold), bound.saturating_sub(1))
            }
        };
        let victim_blocks = victim.tracks_blocks();
        let policy_blocks = policy.tracks_blocks();
        let policy_invalidations = policy.tracks_invalidations();
        let victim_group = victim.needs_policy_group();
        let lb = geo.logical_blocks as f64;
        let window_blocks = cfg.window_drive_writes * lb;
        let warmup_blocks = (cfg.warmup_drive_writes * lb).round() as u64;
        let mut e = Engine {
            ftl: Ftl::new(geo, groups),
            stats: Stats::new(groups, window_blocks, warmup_blocks, &geo),
            policy,
            victim,
            gc_low,
            gc_high,
            gp,
            max_valid,
            log_blocks: 0,
            valid_blocks: 0,
            check_every: cfg.check_every,
            next_due: 0,
            batch: Vec::with_capacity(MAX_BATCH),
            out: Vec::with_capacity(MAX_BATCH),
            future: None,
            started: false,
            retired: Vec::new(),
            sem: GcSemantics::new(cfg),
            open_garbage: 0,
            track_blocks: victim_blocks || policy_blocks,
            victim_blocks,
            policy_blocks,
            policy_invalidations,
            victim_group,
            picked: Vec::new(),
            batch_max: match cfg.placement_batch {
                crate::device::PlacementBatch::Request => MAX_BATCH as u32,
                crate::device::PlacementBatch::Block => 1,
            },
            prefill: Counters::default(),
            gc: GcSettings {
                start_below: gc_low,
                stop_at: gc_high,
                lowered_from,
                background: cfg.background_gc.name(),
                background_below: bg.map_or(0, |b| b.below),
                background_max_valid: bg.map_or(0, |b| b.max_valid),
            },
            bg,
            last_request_ns: None,
            hinted,
            flash_log: None,
            victim_sink: None,
        };
        e.ftl.gc_reserve = gc_low as u32;
        e.schedule();
        Ok(e)
    }

    /// The engine's complete state for a checkpoint ([`crate::checkpoint`]):
    /// FTL, statistics and counters, and the policy's, the victim
    /// selector's and the future's own states.
    pub fn save_state(&self) -> Result<EngineState> {
        if self.flash_log.is_some() {
            return Err(Error::Checkpoint {
                file: "<state>".into(),
                reason: "a timed replay cannot be checkpointed (its event queue is not saved)"
                    .into(),
            });
        }
        Ok(EngineState {
            core: crate::codec::encode(self)?,
            policy: self.policy.save_state()?,
            victim: self.victim.save_state()?,
            future: self.future.as_ref().map(Future::cursor),
        })
    }

    /// Replace this engine's state (built from the same configuration) by
    /// a saved one.
    pub fn load_state(&mut self, s: EngineState) -> Result<()> {
        let read = ReadState {
            core: crate::codec::decode(&s.core)?,
            policy: s.policy,
            victim: s.victim,
        };
        let policy = std::mem::replace(&mut self.policy, vacant::policy());
        let victim = std::mem::replace(&mut self.victim, vacant::selector());
        let mut e = Engine::from_read(read, policy, victim)?;
        e.future = self.future.take();
        match (&mut e.future, s.future) {
            (Some(f), Some(c)) => f.set_cursor(c)?,
            (None, None) => {}
            _ => {
                return Err(Error::Checkpoint {
                    file: "<state>".into(),
                    reason: "the run's annotated future does not match the checkpoint's".into(),
                })
            }
        }
        *self = e;
        Ok(())
    }

    /// The engine's state written to `w` as it is encoded, never whole in
    /// memory (a preconditioned whole drive is a gigabyte): read back by
    /// [`Engine::read_state`]. A run with an annotated future is refused
    /// (its annotation is not part of the state).
    pub fn write_state(&self, w: &mut dyn std::io::Write) -> Result<()> {
        if self.future.is_some() || self.flash_log.is_some() {
            return Err(crate::codec::unsupported(
                "a run with a future or a flash log",
            ));
        }
        let parts = (self, self.policy.save_state()?, self.victim.save_state()?);
        bincode::serialize_into(w, &parts).map_err(|e| Error::Checkpoint {
            file: "<state>".into(),
            reason: format!("cannot write the state: {e}"),
        })
    }

    /// What [`Engine::write_state`] wrote, read back; an engine once
    /// [`Engine::from_read`] gives it its policy and selector.
    pub fn read_state(r: &mut dyn std::io::Read) -> Result<ReadState> {
        let (core, policy, victim): (Engine, Vec<u8>, Vec<u8>) = bincode::deserialize_from(r)
            .map_err(|e| Error::Checkpoint {
                file: "<state>".into(),
                reason: format!("corrupt or of another wafer version ({e})"),
            })?;
        Ok(ReadState {
            core,
            policy,
            victim,
        })
    }

    /// The engine read ([`Engine::read_state`]), driven by `policy` and
    /// `victim` built for the same configuration: no fresh engine's tables
    /// beside it.
    pub fn from_read(
        s: ReadState,
        policy: Box<dyn Placement>,
        victim: Box<dyn VictimSelector>,
    ) -> Result<Engine> {
        let mut e = s.core;
        e.policy = policy;
        e.victim = victim;
        e.policy.load_state(&s.policy)?;
        e.victim.load_state(&s.victim)?;
        Ok(e)
    }

    /// Whether a checkpoint must wait (the policy trains on a thread now).
    pub fn checkpoint_busy(&self) -> bool {
        self.policy.training_in_flight()
    }

    /// Give the engine the annotated future of its request stream (before
    /// the prefill): oracles place by it, predictions are scored with it.
    pub fn attach_future(&mut self, f: Future) {
        self.future = Some(f);
    }

    /// Hint that a write of `lba` is coming (see [`Ftl::prefetch_write`]).
    #[inline(always)]
    pub fn prefetch_write(&self, lba: u32, deep: bool) {
        self.ftl.prefetch_write(lba, deep);
        if !deep {
            self.policy.prefetch(lba);
            if let Some(f) = &self.future {
                f.prefetch(lba);
            }
        }
    }

    /// Name of the placement policy.
    pub fn policy_name(&self) -> &'static str {
        self.policy.name()
    }

    /// Name of the victim selector.
    pub fn victim_name(&self) -> &'static str {
        self.victim.name()
    }

    /// Write every logical block once, in order, then reset the statistics
    /// (the logical clock keeps running).
    pub fn prefill(&mut self) -> Result<()> {
        let saved = (
            self.stats.window_blocks,
            self.stats.warmup_blocks,
            self.check_every,
        );
        self.stats = Stats::new(
            self.ftl.group_count(),
            f64::INFINITY,
            u64::MAX,
            &self.ftl.geo,
        );
        self.check_every = 0;
        self.schedule();
        let n = self.ftl.geo.logical_blocks as u64;
        let mut lba = 0;
        while lba < n {
            let len = (n - lba).min(MAX_BATCH as u64) as u32;
            self.write(lba as u32, len, 0, 0)?;
            lba += len as u64;
            if lba % (1 << 22) < len as u64 {
                crate::interrupt::check()?;
            }
        }
        self.prefill = self.stats.c;
        self.stats = Stats::new(self.ftl.group_count(), saved.0, saved.1, &self.ftl.geo);
        self.check_every = saved.2;
        self.schedule();
        Ok(())
    }

    /// Statistics start again from here (a timed replay's preconditioning
    /// is over); the device, the policy and the logical clock keep their
    /// state.
    pub fn reset_stats(&mut self) {
        let s = &self.stats;
        self.stats = Stats::new(
            self.ftl.group_count(),
            s.window_blocks,
            s.warmup_blocks,
            &self.ftl.geo,
        );
        self.schedule();
    }

    /// The workload starts now (after the prefill, if any): tell the policy.
    /// The first [`Engine::submit`] does this.
    #[cold]
    fn start_workload(&mut self) {
        self.started = true;
        self.policy.on_workload_start(&Ctx {
            ftl: &self.ftl,
            future: self.future.as_ref(),
        });
    }

    /// Apply one request. Blocks beyond the logical capacity are an error
    /// (nothing of that request is applied).
    pub fn submit(&mut self, req: &Request) -> Result<()> {
        let end = req.lba.checked_add(req.blocks as u64);
        if req.blocks == 0 || end.is_none_or(|e| e > self.ftl.geo.logical_blocks as u64) {
            return Err(Error::Simulation(format!(
                "request for blocks [{}, +{}) is outside the device's {} logical blocks",
                req.lba, req.blocks, self.ftl.geo.logical_blocks
            )));
        }
        if !self.started {
            self.start_workload();
        }
        if let Some(bg) = self.bg {
            self.idle_gc(bg, req.time_ns)?;
        }
        self.stats.c.requests += 1;
        self.ftl.now_ns = req.time_ns;
        let lba = req.lba as u32;
        match req.op {
            Op::Write | Op::Trim if self.sem.per_request => self.submit_then_collect(req, lba)?,
            Op::Write => self.write(lba, req.blocks, req.time_ns, req.tenant)?,
            Op::Read => {
                self.read(lba, req.blocks);
                self.policy.on_read(
                    &Ctx {
                        ftl: &self.ftl,
                        future: self.future.as_ref(),
                    },
                    req,
                );
            }
            Op::Trim => self.trim(lba, req.blocks)?,
        }
        if let Some(bg) = self.bg {
            if bg.mode == BackgroundGc::AfterRequest {
                self.background_gc(bg, 1)?;
            }
        }
        Ok(())
    }

    /// `idle-gap` background GC before a request arriving at `time_ns`: the
    /// gap since the previous request is idle time if long enough.
    #[inline]
    fn idle_gc(&mut self, bg: Background, time_ns: u64) -> Result<()> {
        let prev = self.last_request_ns.replace(time_ns);
        if bg.mode != BackgroundGc::IdleGap {
            return Ok(());
        }
        match prev.map(|p| time_ns.saturating_sub(p)) {
            Some(gap) if gap >= bg.idle_ns => self.background_gc(bg, (gap / bg.victim_ns).max(1)),
            _ => Ok(()),
        }
    }

    /// Collect up to `victims` victims while fewer than `bg.below` segments
    /// are free, each holding at most `bg.max_valid` valid blocks (Shiro
    /// §III-C's background GC).
    #[cold]
    #[inline(never)]
    fn background_gc(&mut self, bg: Background, victims: u64) -> Result<()> {
        for _ in 0..victims {
            if self.ftl.free.len() >= bg.below {
                break;
            }
            match self.choose_victim(bg.max_valid.min(self.max_valid))? {
                Some(v) => {
                    let valid = self.ftl.segs.valid[v as usize];
                    self.relocate(v)?;
                    self.stats.c.background_victims += 1;
                    self.stats.c.background_gc_writes += valid as u64;
                }
                None => break,
            }
        }
        Ok(())
    }

    /// A write or trim under per-request GC checks: apply it, then check once.
    #[cold]
    #[inline(never)]
    fn submit_then_collect(&mut self, req: &Request, lba: u32) -> Result<()> {
        match req.op {
            Op::Write => self.write(lba, req.blocks, req.time_ns, req.tenant)?,
            _ => self.trim(lba, req.blocks)?,
        }
        self.collect_after_request()
    }

    fn read(&mut self, lba: u32, blocks: u32) {
        self.stats.c.read_blocks += blocks as u64;
        let unmapped = (lba..lba + blocks)
            .filter(|&l| self.ftl.map[l as usize] == UNMAPPED)
            .count();
        self.stats.c.unmapped_read_blocks += unmapped as u64;
    }

    fn trim(&mut self, lba: u32, blocks: u32) -> Result<()> {
        for l in lba..lba + blocks {
            if let Some(f) = &mut self.future {
                if self.ftl.lookup(l).is_some() {
                    f.check_death(l, self.ftl.now, "trimmed")?;
                }
                f.set_live(l, NEVER);
            }
            let old = self.ftl.lookup(l);
            if let Some((seg, valid)) = self.ftl.unmap(l) {
                self.valid_blocks -= 1;
                self.victim.on_invalidate(seg, valid);
                if self.follows_invalidations() {
                    self.invalidated_extra(l, seg, old);
                }
                self.stats.c.trimmed_blocks += 1;
                self.policy.on_trim(
                    &Ctx {
                        ftl: &self.ftl,
                        future: self.future.as_ref(),
                    },
                    l,
                );
            }
        }
        Ok(())
    }

    /// User write of `blocks` blocks from `lba` (a request of `tenant`
    /// arriving at `time_ns`), in policy batches.
    fn write(&mut self, lba: u32, blocks: u32, time_ns: u64, tenant: u32) -> Result<()> {
        let mut done = 0u32;
        while done < blocks {
            let len = (blocks - done).min(self.batch_max);
            self.batch.clear();
            let now = self.ftl.now;
            self.batch.extend((0..len).map(|i| UserWrite {
                lba: lba + done + i,
                time: now + i as u64,
                req_blocks: blocks,
                req_offset: done + i,
                req_time_ns: time_ns,
                tenant,
            }));
            if let Some(f) = &mut self.future {
                f.batch.clear();
                for w in &self.batch {
                    let d = f.death_of_write(w.lba, w.time)?;
                    f.batch.push(d);
                }
            }
            self.out.clear();
            self.out.resize(len as usize, 0);
            self.policy.place_user(
                &Ctx {
                    ftl: &self.ftl,
                    future: self.future.as_ref(),
                },
                &self.batch,
                &mut self.out,
            );
            if let Some(e) = self.policy.take_error() {
                return Err(e);
            }
            if self.plain() {
                for i in 0..len as usize {
                    self.write_block::<true>(self.batch[i].lba, self.out[i])?;
                }
            } else {
                for i in 0..len as usize {
                    let (l, g) = (self.batch[i].lba, self.out[i]);
                    if self.future.is_some() {
                        self.foresee_user_write(i, l, g)?;
                    }
                    self.write_block::<false>(l, g)?;
                }
            }
            done += len;
        }
        Ok(())
    }

    /// Nothing beside the FTL follows the blocks: no annotated future, no
    /// block- or invalidation-following selector or policy, no flash log,
    /// no garbage count at sealing. The per-block loops are compiled once for this case
    /// (`PLAIN = true`) without those checks: after each call into the
    /// policy the compiler must reload every field it tests, and those
    /// reloads and branches cost `base` ~8% of its speed.
    #[inline(always)]
    fn plain(&self) -> bool {
        self.future.is_none() && self.flash_log.is_none() && !self.follows_invalidations()
    }

    /// Something beside the FTL's counts hears of invalidated copies
    /// ([`Engine::invalidated_extra`]).
    #[inline(always)]
    fn follows_invalidations(&self) -> bool {
        self.sem.at_seal || self.track_blocks || self.policy_invalidations
    }

    #[inline(always)]
    fn write_block<const PLAIN: bool>(&mut self, lba: u32, g: GroupId) -> Result<()> {
        self.ensure_group(g);
        match self.ftl.lookup(lba) {
            Some(old) => {
                let (seg, valid) = self.ftl.invalidate(old);
                self.victim.on_invalidate(seg, valid);
                if !PLAIN && self.follows_invalidations() {
                    self.invalidated_extra(lba, seg, Some(old));
                }
            }
            None => self.valid_blocks += 1,
        }
        let (pba, sealed) = self.ftl.append(g, lba).map_err(|_| self.out_of_space())?;
        self.log_blocks += 1;
        if !PLAIN {
            self.note_flash(FlashOp::Program { pba });
            if self.track_blocks {
                self.block_event(lba, pba, BlockEvent::UserWrite);
            }
        }
        if let Some(s) = sealed {
            self.sealed(s, g, self.ftl.geo.segment_blocks);
        }
        self.policy.on_user_write(lba, self.ftl.now, g);
        self.ftl.now += 1;
        self.stats.c.user_writes += 1;
        self.stats.group_user[g as usize] += 1;
        match self.gp {
            None if self.ftl.free.len() < self.gc_low
                && (!self.sem.per_request || self.ftl.free.len() < MIN_RESERVE) =>
            {
                self.collect_garbage()?
            }
            Some(gp)
                if !self.sem.per_request
                    && self.log_garbage() as f64 > gp * self.log_blocks as f64 =>
            {
                self.collect_by_garbage_proportion(gp)?
            }
            _ => {}
        }
        if self.stats.c.user_writes == self.next_due {
            self.periodic()?;
        }
        Ok(())
    }

    /// With the future known: check the overwritten copy dies now, record
    /// the new copy's death, score the policy's prediction.
    #[cold]
    #[inline(never)]
    fn foresee_user_write(&mut self, i: usize, lba: u32, g: GroupId) -> Result<()> {
        let now = self.ftl.now;
        let mapped = self.ftl.lookup(lba).is_some();
        let f = self.future.as_mut().expect("future attached");
        if mapped {
            f.check_death(lba, now, "overwritten")?;
        }
        let death = f.batch[i];
        f.set_live(lba, death);
        let pred = self.policy.predicted_user_class(i, g);
        self.score(g, false, remaining(death, now), pred);
        Ok(())
    }

    /// Record the policy's lifetime-class prediction `pred` for a block just
    /// placed in `g` against its true (remaining) lifetime.
    #[inline]
    fn score(&mut self, g: GroupId, gc: bool, lifetime: u64, pred: Option<u8>) {
        self.stats.lifetime(g, lifetime);
        if let Some(pred) = pred {
            let bounds = self.policy.class_bounds(gc);
            let truth = class_of(bounds, lifetime);
            self.stats.predicted(gc, truth, pred as usize, bounds);
        }
    }

    /// The log's garbage as the trigger counts it [blocks]: every invalid
    /// block, less those in open segments under at-seal accounting.
    #[inline(always)]
    fn log_garbage(&self) -> u64 {
        self.log_blocks - self.valid_blocks - self.open_garbage
    }

    /// Bookkeeping of an invalidated copy beyond the default engine's:
    /// at-seal accounting, selectors and policies that follow blocks or
    /// invalidations.
    #[cold]
    #[inline(never)]
    fn invalidated_extra(&mut self, lba: u32, seg: SegmentId, old: Option<u32>) {
        if self.sem.at_seal && self.ftl.segs.state[seg as usize] == SegState::Open {
            self.open_garbage += 1;
        }
        if let (true, Some(pba)) = (self.track_blocks, old) {
            self.block_event(lba, pba, BlockEvent::Invalidated);
        }
        if self.policy_invalidations {
            self.policy.on_invalidate(seg, &self.ftl);
        }
    }

    /// Tell a block-following selector or policy about `lba` at `pba`.
    #[cold]
    #[inline(never)]
    fn block_event(&mut self, lba: u32, pba: u32, ev: BlockEvent) {
        let seg = self.ftl.segment_of(pba);
        if self.victim_blocks {
            self.victim.on_block(lba, seg, ev, &self.ftl);
        }
        if self.policy_blocks {
            self.policy.on_block(lba, seg, ev, &self.ftl);
        }
    }

    #[inline(always)]
    fn ensure_group(&mut self, g: GroupId) {
        if g as usize >= self.ftl.groups.len() {
            self.ftl.ensure_group(g);
            self.stats.ensure_groups(g as usize + 1);
        }
    }

    /// `seg` of `group` was sealed after `written` appends.
    fn sealed(&mut self, seg: SegmentId, group: GroupId, written: u32) {
        if self.sem.at_seal {
            // its garbage so far joins the log's count now
            self.open_garbage -= (written - self.ftl.segs.valid[seg as usize]) as u64;
        }
        self.victim.on_seal(seg, &self.ftl);
        self.policy.on_event(
            &Ctx {
                ftl: &self.ftl,
                future: self.future.as_ref(),
            },
            &Event::Sealed { seg, group },
        );
    }

    fn out_of_space(&self) -> Error {
        Error::Simulation(format!(
            "no free segment left for an append ({} groups, {} segments of {} blocks, OP {:.3}); \
             raise op or gc_low",
            self.ftl.groups.len(),
            self.ftl.geo.segments,
            self.ftl.geo.segment_blocks,
            self.ftl.geo.op
        ))
    }

    /// SepBIT's log-structured GC: while the log's garbage proportion exceeds
    /// `gp`, collect one eligible segment; stop when none is eligible.
    #[inline(never)]
    fn collect_by_garbage_proportion(&mut self, gp: f64) -> Result<()> {
        let held = self.held_segments();
        self.stats.held(held);
        let mut rounds = 0;
        while self.log_garbage() as f64 > gp * self.log_blocks as f64 && rounds < self.sem.pick {
            rounds += 1;
            match self.choose_victim(self.max_valid)? {
                Some(v) => self.relocate(v)?,
                None => break,
            }
        }
        Ok(())
    }

    /// The per-request check: if GC is due, choose up to `pick` victims
    /// (all before any is collected, as the replayer's `GCWorker` does),
    /// then collect them.
    fn collect_after_request(&mut self) -> Result<()> {
        let due = match self.gp {
            Some(gp) => self.log_garbage() as f64 > gp * self.log_blocks as f64,
            None => self.ftl.free.len() < self.gc_low,
        };
        if !due {
            return Ok(());
        }
        let held = self.held_segments();
        self.stats.held(held);
        let mut picked = std::mem::take(&mut self.picked);
        picked.clear();
        while picked.len() < self.sem.pick as usize {
            match self.choose_victim(self.max_valid)? {
                Some(v) => {
                    // Out of the candidates until all are chosen: selectors
                    // that scan for sealed segments would choose it again.
                    self.ftl.segs.state[v as usize] = SegState::Open;
                    picked.push(v);
                }
                None => break,
            }
        }
        for &v in &picked {
            self.ftl.segs.state[v as usize] = SegState::Sealed;
        }
        for &v in &picked {
            self.relocate(v)?;
        }
        self.picked = picked;
        Ok(())
    }

    /// The policy's victim, else the selector's, among sealed segments
    /// with at most `max_valid` valid blocks.
    fn choose_victim(&mut self, max_valid: u32) -> Result<Option<SegmentId>> {
        if self.victim_group {
            let g = self.policy.victim_group(
                &Ctx {
                    ftl: &self.ftl,
                    future: self.future.as_ref(),
                },
                max_valid,
            );
            self.victim.set_policy_group(g);
        }
        match self.policy.select_victim(
            &Ctx {
                ftl: &self.ftl,
                future: self.future.as_ref(),
            },
            max_valid,
        ) {
            Some(v) => {
                let s = v as usize;
                if self.ftl.segs.state.get(s) != Some(&SegState::Sealed)
                    || self.ftl.segs.valid[s] > max_valid
                {
                    return Err(Error::Simulation(format!(
                        "policy '{}' chose segment {v} as victim, which is not sealed or not eligible",
                        self.policy.name()
                    )));
                }
                self.victim.remove(v, &self.ftl);
                Ok(Some(v))
            }
            None => {
                if self.hinted {
                    self.victim.set_hint(self.policy.victim_hint());
                }
                Ok(self.victim.select(&self.ftl, max_valid))
            }
        }
    }

    /// Append GC's copy of `lba` for group `g`, which needs a fresh segment
    /// when none is free: the block goes instead (a spill, counted) to the
    /// open segment of the nearest group. With a reserve of at least
    /// [`MIN_RESERVE`], GC starts each victim with a free segment and the
    /// victim's valid blocks fit in one, so a spill always finds room: GC
    /// never deadlocks however many groups need a fresh segment at once.
    /// Returns the group written and the append's result.
    #[cold]
    #[inline(never)]
    fn spill(&mut self, g: GroupId, lba: u32) -> Result<(GroupId, (u32, Option<SegmentId>))> {
        // The nearest group by id (policies number their groups in lifetime
        // order), the colder on a tie.
        let g = g as usize;
        let best = (0..self.ftl.groups.len())
            .filter(|&h| self.ftl.groups[h].open != crate::ftl::NO_SEGMENT)
            .min_by_key(|&h| (h.abs_diff(g), std::cmp::Reverse(h)));
        let Some(h) = best else {
            return Err(self.out_of_space());
        };
        self.stats.c.gc_spills += 1;
        let h = h as GroupId;
        let appended = self.ftl.append(h, lba).map_err(|_| self.out_of_space())?;
        Ok((h, appended))
    }

    /// Close the open segments of groups the policy retired: sealed as they
    /// are, their unwritten slots count as garbage until GC collects them.
    fn close_retired(&mut self) {
        let mut retired = std::mem::take(&mut self.retired);
        retired.clear();
        self.policy.retired_groups(&mut retired);
        for &g in &retired {
            if let Some((seg, unwritten)) = self.ftl.close_group(g) {
                self.log_blocks += unwritten as u64;
                self.stats.c.closed_segments += 1;
                self.stats.c.padded_blocks += unwritten as u64;
                self.sealed(seg, g, self.ftl.geo.segment_blocks - unwritten);
            }
        }
        self.retired = retired;
    }

    /// Segments out of use now: the free reserve and the open segments.
    fn held_segments(&self) -> u64 {
        let open = self
            .ftl
            .groups
            .iter()
            .filter(|g| g.open != crate::ftl::NO_SEGMENT)
            .count();
        (self.ftl.free.len() + open) as u64
    }

    /// Collect victims until `gc_high` segments are free.
    #[inline(never)]
    fn collect_garbage(&mut self) -> Result<()> {
        let held = self.held_segments();
        self.stats.held(held);
        let mut rounds = 0u32;
        while self.ftl.free.len() < self.gc_high {
            if rounds >= self.ftl.geo.segments {
                return Err(Error::Simulation(format!(
                    "GC collected {rounds} segments without freeing space: every sealed segment is \
                     (almost) fully valid; over-provisioning ({:.3}) is too small for {} groups",
                    self.ftl.geo.op,
                    self.ftl.groups.len()
                )));
            }
            if rounds >= self.sem.pick {
                break;
            }
            rounds += 1;
            let victim = self.choose_victim(self.max_valid)?.ok_or_else(|| {
                Error::Simulation(
                    "GC found no sealed segment to collect; the device is too small".into(),
                )
            })?;
            self.relocate(victim)?;
        }
        Ok(())
    }

    /// Move the valid blocks of `victim` to the groups the policy picks, then erase it.
    fn relocate(&mut self, victim: SegmentId) -> Result<()> {
        if self.plain() {
            self.relocate_blocks::<true>(victim)
        } else {
            self.relocate_blocks::<false>(victim)
        }
    }

    /// [`Engine::relocate`], compiled with and without the per-block
    /// checks (see [`Engine::plain`]).
    #[inline(always)]
    fn relocate_blocks<const PLAIN: bool>(&mut self, victim: SegmentId) -> Result<()> {
        let v = victim as usize;
        let valid = self.ftl.segs.valid[v];
        let from_group = self.ftl.segs.group[v];
        let base = v * self.ftl.geo.segment_blocks as usize;
        let end = base + self.ftl.geo.segment_blocks as usize;
        // A policy that places per victim is not asked per block.
        let fixed = self.policy.gc_group(from_group);
        let mut moved = 0;
        let mut off = 0;
        while moved < valid {
            if base + off + GC_PREFETCH < end {
                let ahead = self.ftl.rev[base + off + GC_PREFETCH];
                if ahead != UNMAPPED {
                    crate::prefetch::prefetch(&self.ftl.map, ahead as usize);
                    if fixed.is_none() {
                        self.policy.prefetch_gc(ahead);
                    }
                    if let (false, Some(f)) = (PLAIN, &self.future) {
                        f.prefetch(ahead);
                    }
                }
            }
            let lba = self.ftl.rev[base + off];
            off += 1;
            if lba == UNMAPPED {
                continue;
            }
            let g = match fixed {
                Some(g) => g,
                None => self.policy.place_gc(
                    &Ctx {
                        ftl: &self.ftl,
                        future: self.future.as_ref(),
                    },
                    &GcBlock {
                        lba,
                        victim,
                        from_group,
                    },
                ),
            };
            self.ensure_group(g);
            // Appending fails only when `g` needs a fresh segment and none is free.
            let (g, (pba, sealed)) = match self.ftl.append(g, lba) {
                Ok(appended) => (g, appended),
                Err(()) => self.spill(g, lba)?,
            };
            if let (false, Some(f)) = (PLAIN, &self.future) {
                let life = remaining(f.live_death(lba), self.ftl.now);
                let pred = self.policy.predicted_class(g, true);
                self.score(g, true, life, pred);
            }
            if !PLAIN {
                if self.track_blocks {
                    self.block_event(lba, pba, BlockEvent::GcWrite);
                }
                self.note_flash(FlashOp::Move {
                    from: (base + off - 1) as u32,
                    to: pba,
                });
            }
            if let Some(s) = sealed {
                self.sealed(s, g, self.ftl.geo.segment_blocks);
            }
            self.stats.group_gc[g as usize] += 1;
            moved += 1;
        }
        self.stats.c.gc_writes += valid as u64;
        self.log_blocks += valid as u64;
        self.stats.victim(valid);
        let lifespan = self.ftl.now - self.ftl.segs.open_time[v];
        self.stats.collected(from_group, valid, lifespan);
        if self.victim_sink.is_some() {
            self.report_victim(victim, valid);
        }
        // Before the erase, so the policy still sees the victim's group and times.
        self.policy.on_event(
            &Ctx {
                ftl: &self.ftl,
                future: self.future.as_ref(),
            },
            &Event::Collected { seg: victim, valid },
        );
        self.ftl.erase(victim);
        self.note_flash(FlashOp::Erase { seg: victim });
        self.log_blocks -= self.ftl.geo.segment_blocks as u64;
        Ok(())
    }

    /// Windows, warm-up snapshot and invariant checks that fell due.
    #[cold]
    #[inline(never)]
    fn periodic(&mut self) -> Result<()> {
        if let Some(index) = self.stats.tick(self.ftl.free.len(), &self.ftl.segs) {
            self.stats.set_threshold(self.policy.threshold());
            self.close_retired();
            self.policy.on_event(
                &Ctx {
                    ftl: &self.ftl,
                    future: self.future.as_ref(),
                },
                &Event::Window { index },
            );
        }
        if self.check_every > 0 && self.stats.c.user_writes.is_multiple_of(self.check_every) {
            self.check()?;
        }
        self.schedule();
        Ok(())
    }

    fn schedule(&mut self) {
        let mut due = self.stats.next_due();
        if let Some(k) = self.stats.c.user_writes.checked_div(self.check_every) {
            due = due.min((k + 1) * self.check_every);
        }
        self.next_due = due;
    }

    /// Run the full invariant checker (FTL and victim selector).
    pub fn check(&self) -> Result<()> {
        check::check(&self.ftl)?;
        let f = &self.ftl;
        let log: u64 = (0..f.geo.segments as usize)
            .map(|s| match f.segs.state[s] {
                SegState::Free => 0,
                SegState::Sealed => f.geo.segment_blocks as u64,
                SegState::Open => f.groups[f.segs.group[s] as usize].next as u64,
            })
            .sum();
        let mapped = f.map.iter().filter(|&&p| p != UNMAPPED).count() as u64;
        if (log, mapped) != (self.log_blocks, self.valid_blocks) {
            return Err(Error::Invariant(format!(
                "engine counts a log of {} blocks with {} valid; the FTL holds {log} with {mapped}",
                self.log_blocks, self.valid_blocks
            )));
        }
        if self.sem.at_seal {
            let open: u64 = f
                .groups
                .iter()
                .filter(|g| g.open != crate::ftl::NO_SEGMENT)
                .map(|g| (g.next - f.segs.valid[g.open as usize]) as u64)
                .sum();
            if open != self.open_garbage {
                return Err(Error::Invariant(format!(
                    "engine counts {} invalid blocks in open segments; the FTL holds {open}",
                    self.open_garbage
                )));
            }
        }
        self.victim.check(&self.ftl).map_err(Error::Invariant)
    }

    /// What the prefill wrote: user and GC writes before the statistics
    /// were reset (zero without a prefill).
    pub fn prefill_counters(&self) -> Counters {
        self.prefill
    }

    /// The policy's current lifetime threshold (SepBIT's ℓ), if it has one.
    pub fn policy_threshold(&self) -> Option<f64> {
        self.policy.threshold()
    }

    /// Garbage proportion of the log: invalid / (valid + invalid) blocks in
    /// non-free segments.
    pub fn log_garbage_proportion(&self) -> f64 {
        if self.log_blocks == 0 {
            0.0
        } else {
            (self.log_blocks - self.valid_blocks) as f64 / self.log_blocks as f64
        }
    }

    /// Bytes held by the engine: FTL, victim selector and batch buffers
    /// (the policy's own state is reported separately).
    pub fn memory_bytes(&self) -> usize {
        self.ftl.memory_bytes()
            + self.victim.memory_bytes()
            + MAX_BATCH * (std::mem::size_of::<UserWrite>() + std::mem::size_of::<GroupId>())
    }

    /// Bytes held by the policy (and the future it is given, if any).
    pub fn policy_memory_bytes(&self) -> usize {
        self.policy.memory_bytes() + self.future.as_ref().map_or(0, |f| f.memory_bytes())
    }

    /// Whether the run has the annotated future.
    pub fn has_future(&self) -> bool {
        self.future.is_some()
    }

    /// How GC runs on this device (watermarks, background mode).
    pub fn gc_settings(&self) -> GcSettings {
        self.gc
    }

    /// What the policy reports about its run-time decisions.
    pub fn policy_state(&self) -> Option<serde_json::Value> {
        self.policy.state()
    }

    /// What the policy's online training did, if it learns.
    pub fn policy_training(&self) -> Option<crate::model::train::TrainingStats> {
        self.policy.training()
    }

    /// The policy's current model, if it has one.
    pub fn policy_model(&self) -> Option<crate::model::Tensors> {
        self.policy.model()
    }

    /// Report every victim collected from now on to `sink` (`None`:
    /// stop), returning the one attached before.
    pub fn dump_victims(
        &mut self,
        sink: Option<Box<dyn VictimSink>>,
    ) -> Option<Box<dyn VictimSink>> {
        let sink = sink.map(|mut s| {
            s.start();
            (s, 0)
        });
        std::mem::replace(&mut self.victim_sink, sink).map(|(s, _)| s)
    }

    #[cold]
    fn report_victim(&mut self, victim: SegmentId, valid: u32) {
        let v = victim as usize;
        let segs = &self.ftl.segs;
        let row = VictimRow {
            victim: 0,
            time_ns: self.ftl.now_ns,
            now: self.ftl.now,
            segment: victim,
            group: segs.group[v] as u32,
            blocks: self.ftl.geo.segment_blocks,
            valid,
            open_time: segs.open_time[v],
            seal_time: segs.seal_time[v],
            erase_count: segs.erase_count[v],
        };
        if let Some((sink, n)) = self.victim_sink.as_mut() {
            sink.victim(&VictimRow { victim: *n, ..row });
            *n += 1;
        }
    }

    // ---- timing sink (see `sink.rs`) ----

    /// Start (or stop) recording every flash operation for a timing model.
    pub fn record_flash(&mut self, on: bool) {
        self.flash_log = on.then(|| Vec::with_capacity(1024));
    }

    /// The flash operations recorded since the last call (empty when not
    /// recording); the caller drains it.
    pub fn flash_ops(&mut self) -> Option<&mut Vec<FlashOp>> {
        self.flash_log.as_mut()
    }

    #[inline(always)]
    fn note_flash(&mut self, op: FlashOp) {
        if let Some(log) = &mut self.flash_log {
            log.push(op);
        }
    }

    /// The device has nothing to do from `now_ns` for `gap_ns` (timing mode
    /// sees the gaps between requests): the policy hears of it
    /// ([`Placement::on_idle`]). Background work done here (flash
    /// operations recorded) runs in the gap.
    pub fn idle(&mut self, now_ns: u64, gap_ns: u64) -> Result<()> {
        self.policy.on_idle(
            &Ctx {
                ftl: &self.ftl,
                future: self.future.as_ref(),
            },
            now_ns,
            gap_ns,
        );
        match self.policy.take_error() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
