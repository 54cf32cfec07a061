//! `midas`: MiDAS, "Minimizing Write Amplification in Log-Structured Systems
//! through Adaptive Group Number and Size Configuration" (Oh et al., FAST'24),
//! as the DOGI (§2.2, Table 1, §5.1) and Shiro (§II-B, §V) papers use it. The
//! paper's public simulator (MiDAS-Simulation) fixed what the text leaves open.
//!
//! Groups form a chain: a hot group G0, the user group G1, FIFO GC groups
//! G2..G(k-1) and a last group Gk (group ids are chain positions). User writes
//! go to G1, or to G0 when the hot filter admits them. GC of Gi moves its
//! valid blocks to G(i+1) (G0 -> G1; the last group keeps its own).
//! Victims (DOGI §5.1: "FIFO combined with cost-benefit"): the hottest group
//! holding more segments than its configured size gives up its oldest sealed
//! segment; otherwise the last group's best segment by cost-benefit (or
//! greedy, `last_victim`).
//!
//! Run-time configuration ([`model`]): every `uid_window` drive-writes (the
//! first window opens at the first overwrite, so a prefill does not count),
//! the update-interval distribution (UID) of the sampled LBAs feeds MCAM,
//! which picks the hot group size, the number of groups and every size. The
//! chain is then relabelled: growing moves the old last group's segments to
//! the new last group (the new groups start empty), shrinking moves the
//! dropped groups' segments there. As in the simulator, when 25 victims in a
//! row together free less than one segment, the last two groups merge; with
//! two groups left MiDAS falls back to its start-up mode.
//!
//! Hot filter: a 2-bit saturating counter per LBA, kept while a hot group
//! exists. An overwrite whose old copy is in G0, or in G1 and sealed less than
//! τ ago, counts up; an older G1 copy counts down; a valid block moved out of
//! a G1 victim counts down by one, out of a G0 victim by two. At 3 the block
//! is hot. τ starts at the hot group's residence time predicted by the model
//! and then follows the mean lifespan of the collected G0 segments (halfway
//! each model run, at most ×1.5 at once), as the simulator does.
//!
//! Until the first model run MiDAS runs as two groups (user, GC) under the
//! configured victim selector, i.e. as 2R (`startup_groups` makes that chain
//! longer).
//!
//! MiDAS-Simulation's conventions, each a parameter (`--setup midas-sim`
//! sets them all; the defaults keep the behaviour above): its start-up
//! "naive MiDA" chain of 4 groups with victims over all sealed segments
//! (`startup_groups`), its hot filter running from the start with its own
//! τ schedule (`hot_filter = "always"`), its first model window opened after
//! 2 logical device sizes of writes, the prefill included (`first_window`),
//! 4 physical device sizes long (`uid_window`, `window_unit`), the model's
//! budget of all segments but its 4 free ones (`model_reserve`), its
//! last-group victims by the run's selector in its forms (`last_victim`:
//! greedy, the sqrt cost-benefit, or FIFO), and when a configuration takes
//! effect: at the next GB (physical device size of writes) after the
//! window, where its model thread's result is picked up (`apply_at`), only
//! if predicted no worse than the last GB's measured WAF (`apply_gate`,
//! `check_applying_config`), the start-up segments joining its last group
//! (`startup_to_last`), G1 collected one segment early (`g1_one_less`).
//!
//! Deviations:
//! * MCAM's chain is solved in closed form (its stationary flow) instead of
//!   2000 matrix-vector iterations; same fixed point.
//! * Blocks the ideal hot filter leaves in G1 enter it with age 0 and an
//!   interval conditioned on exceeding G0's residence time; the simulator
//!   shifts G1's start time by that residence instead.
//! * In the simulator's "real" mode (a running G0 taking under 15% of the
//!   writes or keeping over 10% valid) G0's measured share t and valid ratio
//!   v replace the prediction: the share t(1 - v) dying there is taken to be
//!   the shortest intervals, the rest enter G1.
//! * Group sizes are swept coarse-to-fine (64 probes, then 8× finer), not one
//!   probe per segment; the order of the search is the simulator's.
//! * The UID is the Kaplan-Meier estimate over the window's writes, those
//!   still alive at its end counted as censored; the simulator puts them in
//!   its last bin and rescales the bins for the window's truncation.
//! * No group merge on a >10% valid-ratio misprediction: the model re-runs
//!   every window instead. Nor the simulator's window doubling after a
//!   failed model run, or its model stopping for good after a configuration
//!   of two groups or fewer.
//! * The last group's victims come from the 8 best segments of one scan; the
//!   segments are re-scanned when those are used (an exact scan per GC took
//!   half the run time; the others' scores change little in between).
//! * LBA sampling is 1 in a power of two (at most 128, a smaller stride on
//!   small devices so that at least 65,536 LBAs are sampled) instead of 1 in
//!   100: a mask.
//! * Open segments of groups dropped by a shrinking configuration are closed
//!   at the next statistics window (the engine pads them; DOGI review §2.1).
//!
//! `midas-ng` (Shiro §V-B, Fig. 9: GC-written data not separated) is MiDAS
//! with `max_groups` fixed at 2: the hot group, the user group and one GC
//! group.

pub(crate) mod model;

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{Ctx, Event, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::device::Geometry;
use crate::error::{Error, Result};
use crate::ftl::{GroupId, SegState, SegmentId};
use crate::params;
use crate::prefetch;
use crate::victim::{cost_benefit_score, cost_benefit_sqrt_score, top_by_score};
use model::{Config, Limits, Model, Prediction, Uid};

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "midas",
    description: "MiDAS (FAST'24): chain of FIFO groups sized at run time by a Markov-chain WAF model over sampled update intervals, hot filter",
    family: crate::policy::Family::RuleBased,
    needs_future: false,
    defaults: params::defaults::<Params>,
    build: |p, geo| Ok(Box::new(Midas::new(params::parse("midas", p)?, geo)?)),
};

/// MiDAS-NG (Shiro §V-B, Fig. 9): GC-written data not separated further,
/// i.e. the chain cut to the user group and one GC group (plus the hot
/// group); `max_groups` is fixed at 2.
pub(in crate::policy) const INFO_NG: PolicyInfo = PolicyInfo {
    name: "midas-ng",
    description:
        "MiDAS-NG (Shiro Fig. 9): MiDAS with one GC group (chain of hot, user and one GC group)",
    family: crate::policy::Family::RuleBased,
    needs_future: false,
    defaults: params::defaults::<Params>,
    build: |p, geo| {
        let mut p: Params = params::parse("midas-ng", p)?;
        if p.max_groups != Params::default().max_groups && p.max_groups != 2 {
            return Err(Error::Parameter {
                policy: "midas-ng".into(),
                reason: format!(
                    "max_groups = {}; midas-ng fixes it at 2 (user and one GC group)",
                    p.max_groups
                ),
            });
        }
        p.max_groups = 2;
        let mut m = Midas::new(p, geo)?;
        m.name = "midas-ng";
        Ok(Box::new(m))
    },
};

/// MiDAS's parameters (the simulator's defaults where the paper has one).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Time between model runs, and the longest update interval the UID
    /// resolves (longer ones share its last bin) [drive-writes]. Bins are a
    /// quarter segment wide (the simulator's).
    pub uid_window: f64,
    /// Largest LBA sampling stride, rounded down to a power of two [LBAs].
    pub sample: u32,
    /// Most groups in the chain besides the hot group (G1..Gk).
    pub max_groups: u32,
    /// Largest hot group [segments].
    pub max_hot_segments: u32,
    /// Least predicted WAF gain that justifies a hot group.
    pub hot_gain: f64,
    /// Victim selection inside the last group: "cost-benefit" (the LFS
    /// form, (1-u)·age/(1+u)), "cost-benefit-sqrt" ((1-u)/u·√age on user
    /// writes, MiDAS-Simulation's `CB_VS`), "greedy", or "fifo" (the last
    /// group's oldest sealed segment, as the simulator does under its `fifo`
    /// selector).
    pub last_victim: String,
    /// Groups of the start-up chain, used until the first configuration and
    /// again when merges leave two groups: user writes to G1, a GC move one
    /// group deeper, the deepest keeping its own, and every victim chosen
    /// among all sealed segments by the run's selector. 2 (default) is 2R;
    /// MiDAS-Simulation starts as a chain of 4 (its "naive MiDA" mode,
    /// groups 1-4 sharing one victim queue).
    pub startup_groups: u32,
    /// When the first UID window opens [drive-writes of the logical space
    /// since the start, the prefill included]; 0 (default): at the first
    /// overwrite of a sampled LBA. MiDAS-Simulation opens it after 2 (its
    /// `load_timing` counts the sequential fill and one more device size).
    pub first_window: f64,
    /// What `uid_window` counts: drive-writes of the "logical" space
    /// (default) or of the "physical" one (MiDAS-Simulation's window is 4
    /// GiB of writes on its 1 GiB device: `uid_window` 4, "physical").
    pub window_unit: String,
    /// Segments kept out of the model's budget; null (default): the free
    /// segments at the model run, at least `max_groups` + 2.
    /// MiDAS-Simulation: 4 (its `FREENUM`; the configurations it searches
    /// share `SEGNUM - FREENUM` segments).
    pub model_reserve: Option<u32>,
    /// When the hot filter runs: "model" (default): while the configuration
    /// has a hot group, τ set from the model's hot-group residence time and
    /// then following the G0 lifespans (from opening) at each model run.
    /// "always": MiDAS-Simulation's (`hf.cpp`): from the start, G0 taking the
    /// admitted writes in the start-up chain too; the counters move only
    /// after a cold period of one logical device size of filter events
    /// (overwrites and moves out of G0/G1 victims); τ starts at one logical
    /// device size and, every τ overwrites once a G0 segment was collected,
    /// follows the mean age since sealing of the collected G0 segments (the
    /// same halfway / ×1.5 rule); the first model run takes the start-up G0
    /// as measured (one segment, its share of the writes and valid ratio).
    pub hot_filter: String,
    /// When a configuration the model found takes effect: "window"
    /// (default) at once, at the model window's end; "gb": at the next
    /// boundary of a physical device size of writes (the prefill counted),
    /// as in MiDAS-Simulation, whose model thread's result is picked up at
    /// the per-GB pause (`sleep(5)` in its write loop) that follows the
    /// window: deterministic here, in user writes.
    pub apply_at: String,
    /// Apply a configuration only if its predicted WAF is at most the WAF
    /// measured over the last whole physical device size of writes (user
    /// and GC writes over user writes, the prefill counted), as
    /// MiDAS-Simulation's `check_applying_config`; a refused one is counted
    /// (`gated`) and the start-up or current configuration stays until the
    /// next window.
    pub apply_gate: bool,
    /// At the first configuration, move every start-up segment into the new
    /// last group without copies (the hot group keeps its newest `hot - 1`
    /// segments), as MiDAS-Simulation regroups; false (default): the
    /// start-up groups stay in place and drain through GC.
    pub startup_to_last: bool,
    /// Collect G1 one segment before its configured size (MiDAS-Simulation
    /// compares G1's count against its size less 2 where the other groups
    /// use less 1).
    pub g1_one_less: bool,
    /// How the last group's greedy or sqrt cost-benefit victim is found:
    /// "candidates" (default): the best of an id-order scan, 8 kept per
    /// scan; "queue": MiDAS-Simulation's (`GREEDY_VS`, `CB_VS`): every
    /// sealed segment of the group in a queue, scanned from its oldest,
    /// the candidate replaced only by a strictly better one (ties to the
    /// older in queue order), every loser re-queued at the newest end (so
    /// the order drifts from sealing order), and under cost-benefit a
    /// fully invalid segment taken at once; age is user writes since
    /// sealing, without wafer's +1.
    pub last_scan: String,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            uid_window: 1.0,
            sample: 128,
            max_groups: 9,
            max_hot_segments: 29,
            hot_gain: 0.05,
            last_victim: "cost-benefit".into(),
            startup_groups: 2,
            first_window: 0.0,
            window_unit: "logical".into(),
            model_reserve: None,
            hot_filter: "model".into(),
            apply_at: "window".into(),
            apply_gate: false,
            startup_to_last: false,
            g1_one_less: false,
            last_scan: "candidates".into(),
        }
    }
}

/// Fewest LBAs sampled when the device allows.
const MIN_SAMPLED: u32 = 1 << 16;
/// Most UID bins (the bin width grows beyond).
const MAX_BINS: u64 = 1 << 20;
/// Counter value of a hot LBA (2-bit counter).
const HOT: u8 = 3;
/// Sampled-LBA stamp: never written.
const NEVER: u64 = u64::MAX;
/// Sampled-LBA stamp: trimmed since its last write.
const TRIMMED: u64 = u64::MAX - 1;
/// Label of a segment that is not sealed.
const UNSEALED: u8 = u8::MAX;
/// Victims of the last group kept from one scan.
const CANDIDATES: usize = 8;
/// Victims in a row that free less than one segment together before the
/// last two groups merge (the simulator's ILOOP).
const STUCK_VICTIMS: u32 = 25;

/// τ after measuring a mean G0 lifespan of `measured`: halfway there, at
/// most ×1.5 at once (the simulator's rule).
fn follow(tau: f64, measured: f64) -> f64 {
    if measured >= 2.0 * tau {
        1.5 * tau
    } else {
        0.5 * (measured + tau)
    }
}

/// How the last group's victims are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum LastVictim {
    CostBenefit,
    CostBenefitSqrt,
    Greedy,
    Fifo,
}

/// MiDAS state.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Midas {
    /// Registry name (`midas`, or `midas-ng`).
    #[serde(with = "crate::codec::static_str")]
    name: crate::codec::Name,
    p: Params,
    last_victim: LastVictim,
    /// Chain positions besides the hot group that labels may take
    /// (`max_groups`, or the start-up chain's length if longer).
    deepest: u32,
    /// Start of the first window [user blocks], if it opens at a fixed time.
    first_window_at: Option<u64>,
    /// `hot_filter = "always"`.
    hot_always: bool,
    /// With `hot_always`: filter events left in the cold period, and
    /// overwrites left before τ may follow the G0 ages again.
    cold: u64,
    tau_left: f64,
    geo: Geometry,
    /// log2 of the LBA sampling stride.
    shift: u32,
    /// Last write of each sampled LBA [user blocks], or NEVER / TRIMMED.
    stamp: Vec<u64>,
    uid: Uid,
    /// Window length [user blocks].
    window: u64,
    /// Start of the current window, `None` before the first overwrite.
    window_start: Option<u64>,
    /// A model run is due at the next batch.
    due: bool,
    /// Victims collected in a row that together freed less than a segment,
    /// and the blocks they freed.
    stuck: (u32, u64),
    cfg: Option<Config>,
    pred: Option<Prediction>,
    /// Id of the last group.
    last: GroupId,
    /// Chain position of each sealed segment.
    label: Vec<u8>,
    /// Sealed segments per chain position.
    count: Vec<u32>,
    /// Sealing-order queues (segment, seal tag) of the hot and FIFO groups.
    fifo: Vec<VecDeque<(SegmentId, u64)>>,
    /// Next victims of the last group, best last.
    candidates: Vec<SegmentId>,
    /// Valid blocks and victims collected per chain position since the
    /// configuration was applied (measured valid ratios).
    collected: Vec<(u64, u64)>,
    /// Hot-filter counter per LBA.
    heat: Vec<u8>,
    /// Hot-filter age threshold τ [user blocks].
    tau: f64,
    /// [τ] as a lifetime-class bound, refreshed per batch (G0 predicts a
    /// lifetime below τ).
    tau_bound: [u64; 1],
    g0_lifespan: (f64, u32),
    /// User writes placed in G0, and all user writes, since the last model run.
    hot_writes: (u64, u64),
    model_runs: u32,
    merges: u32,
    /// `apply_at = "gb"`.
    apply_at_gb: bool,
    /// The physical device size of writes being counted: (where it ends
    /// [user writes], its user writes, its GC writes), and the WAF of the
    /// last whole one (0 before).
    gb: (u64, u64, u64),
    last_gb_waf: f64,
    /// A configuration found and waiting for the next GB boundary, and
    /// whether that boundary passed.
    pending: Option<(Config, Prediction)>,
    apply_due: bool,
    /// Configurations `apply_gate` refused.
    gated: u32,
    /// `last_scan = "queue"` (with a greedy or sqrt cost-benefit last group).
    queue_scan: bool,
}

impl Midas {
    fn new(p: Params, geo: &Geometry) -> Result<Self> {
        let bad = |reason: String| Error::Parameter {
            policy: "midas".into(),
            reason,
        };
        let last_victim = params::one_of(
            "midas",
            "last_victim",
            &p.last_victim,
            &[
                ("cost-benefit", LastVictim::CostBenefit),
                ("greedy", LastVictim::Greedy),
                ("cost-benefit-sqrt", LastVictim::CostBenefitSqrt),
                ("fifo", LastVictim::Fifo),
            ],
        )?;
        if !(2..=32).contains(&p.startup_groups) {
            return Err(bad(format!(
                "startup_groups = {}; must be 2..=32",
                p.startup_groups
            )));
        }
        if !(p.first_window.is_finite() && p.first_window >= 0.0) {
            return Err(bad(format!(
                "first_window = {}; must be >= 0",
                p.first_window
            )));
        }
        let hot_always = params::one_of(
            "midas",
            "hot_filter",
            &p.hot_filter,
            &[("model", false), ("always", true)],
        )?;
        let window_space = params::one_of(
            "midas",
            "window_unit",
            &p.window_unit,
            &[
                ("logical", geo.logical_blocks as f64),
                ("physical", geo.physical_blocks as f64),
            ],
        )?;
        if !(2..=32).contains(&p.max_groups) {
            return Err(bad(format!(
                "max_groups = {}; must be 2..=32",
                p.max_groups
            )));
        }
        if !(p.uid_window.is_finite() && p.uid_window > 0.0) {
            return Err(bad(format!("uid_window = {}; must be > 0", p.uid_window)));
        }
        if p.sample == 0 || !(p.hot_gain.is_finite() && p.hot_gain >= 0.0) {
            return Err(bad("sample must be >= 1 and hot_gain >= 0".into()));
        }
        let logical = geo.logical_blocks;
        let mut shift = 31 - p.sample.leading_zeros();
        while shift > 0 && (logical >> shift) < MIN_SAMPLED {
            shift -= 1;
        }
        let window = ((p.uid_window * window_space) as u64).max(1);
        let unit = (geo.segment_blocks as u64 / 4)
            .max(1)
            .max(window.div_ceil(MAX_BINS));
        let apply_at_gb = params::one_of(
            "midas",
            "apply_at",
            &p.apply_at,
            &[("window", false), ("gb", true)],
        )?;
        let queue_scan = params::one_of(
            "midas",
            "last_scan",
            &p.last_scan,
            &[("candidates", false), ("queue", true)],
        )? && matches!(
            last_victim,
            LastVictim::Greedy | LastVictim::CostBenefitSqrt
        );
        let n = geo.segments as usize;
        let deepest = p.max_groups.max(p.startup_groups);
        let positions = deepest as usize + 1;
        Ok(Midas {
            name: "midas",
            last_victim,
            deepest,
            first_window_at: (p.first_window > 0.0)
                .then(|| (p.first_window * logical as f64).round() as u64),
            hot_always,
            cold: logical as u64,
            tau_left: logical as f64,
            geo: *geo,
            shift,
            stamp: vec![NEVER; (logical as usize >> shift) + 1],
            uid: Uid::new(unit, window.div_ceil(unit) as usize),
            window,
            window_start: None,
            due: false,
            stuck: (0, 0),
            cfg: None,
            pred: None,
            last: p.startup_groups as GroupId,
            label: vec![UNSEALED; n],
            count: vec![0; positions],
            fifo: vec![VecDeque::new(); positions],
            candidates: Vec::with_capacity(CANDIDATES),
            collected: vec![(0, 0); positions],
            heat: vec![0; logical as usize],
            tau: if hot_always { logical as f64 } else { 0.0 },
            tau_bound: [0],
            g0_lifespan: (0.0, 0),
            hot_writes: (0, 0),
            model_runs: 0,
            merges: 0,
            apply_at_gb,
            gb: (2 + geo.physical_blocks, 0, 0),
            last_gb_waf: 0.0,
            pending: None,
            apply_due: false,
            gated: 0,
            queue_scan,
            p,
        })
    }

    /// Mean valid ratio of the victims collected from chain position `g`
    /// since the configuration was applied.
    fn measured_valid(&self, g: usize) -> Option<f64> {
        let (v, n) = self.collected[g];
        (n > 0).then(|| v as f64 / (n as f64 * self.geo.segment_blocks as f64))
    }

    /// Index of `lba`'s stamp if it is a sampled LBA.
    #[inline(always)]
    fn sampled(&self, lba: u32) -> Option<usize> {
        (lba & ((1 << self.shift) - 1) == 0).then_some((lba >> self.shift) as usize)
    }

    /// Whether hot/FIFO group `g` holds more segments than its size.
    fn over_size(&self, g: usize) -> bool {
        self.cfg.as_ref().is_some_and(|c| {
            let mut size = if g == 0 { c.hot } else { c.sizes[g - 1] };
            if g == 1 && self.p.g1_one_less {
                size = size.saturating_sub(1);
            }
            self.count[g] > 0 && self.count[g] >= size
        })
    }

    fn hot_on(&self) -> bool {
        self.hot_always || self.cfg.as_ref().is_some_and(|c| c.hot > 0)
    }

    /// With `hot_filter = "always"`, one filter event (an overwrite, or a
    /// block moved out of a G0/G1 victim): whether the counters may move
    /// (the cold period is over). τ follows the collected G0 segments'
    /// ages every τ overwrites.
    fn filter_event(&mut self, overwrite: bool) -> bool {
        if self.cold > 0 {
            self.cold -= 1;
            return false;
        }
        let (sum, n) = self.g0_lifespan;
        if self.tau_left <= 0.0 && n > 0 {
            self.g0_lifespan = (0.0, 0);
            self.tau = follow(self.tau, sum / n as f64);
            self.tau_left = self.tau - 1.0;
        }
        if overwrite {
            self.tau_left -= 1.0;
        }
        true
    }

    /// Chain position of a non-free segment.
    fn position(&self, ctx: &Ctx, seg: SegmentId) -> u8 {
        let s = seg as usize;
        match self.label[s] {
            UNSEALED => ctx.ftl.segs.group[s].min(self.last) as u8,
            l => l,
        }
    }

    /// Hot-filter update for an overwrite whose old copy is at `pba`.
    fn heat_on_overwrite(&mut self, ctx: &Ctx, lba: u32, pba: u32, now: u64) {
        if self.hot_always && !self.filter_event(true) {
            return;
        }
        let seg = ctx.ftl.segment_of(pba);
        let pos = self.position(ctx, seg);
        let h = &mut self.heat[lba as usize];
        match pos {
            0 => *h = (*h + 1).min(HOT),
            1 => {
                let s = seg as usize;
                let age = match ctx.ftl.segs.state[s] {
                    SegState::Sealed => now.saturating_sub(ctx.ftl.segs.seal_time[s]),
                    _ => 0,
                };
                if (age as f64) <= self.tau {
                    *h = (*h + 1).min(HOT);
                } else {
                    *h = h.saturating_sub(1);
                }
            }
            _ => {}
        }
    }

    /// Run the model on the UID collected so far and apply its configuration.
    #[cold]
    #[inline(never)]
    fn reconfigure(&mut self, ctx: &Ctx) {
        self.due = false;
        self.model_runs += 1;
        // τ follows the lifespan of collected G0 segments
        if !self.hot_always {
            let (sum, n) = std::mem::take(&mut self.g0_lifespan);
            if n > 0 && self.tau > 0.0 {
                self.tau = follow(self.tau, sum / n as f64);
            }
        }
        // writes of the window still alive: censored at their age
        let start = self.window_start.replace(ctx.now()).unwrap_or(0);
        let mut censored = vec![0u64; self.uid.len()];
        for &t in &self.stamp {
            if t < TRIMMED && t >= start {
                censored[self.uid.bin(ctx.now() - t)] += 1;
            }
        }
        let live: u64 = ctx.ftl.segs.valid.iter().map(|&v| v as u64).sum();
        let dist = self.uid.distribution(&censored, live as f64);
        self.uid.clear();
        let Some(dist) = dist else {
            return;
        };
        let Some(budget) = self.budget(ctx) else {
            return;
        };
        // the simulator's "real" mode: a running hot group that takes under
        // 15% of the writes or keeps over 10% valid is modelled as measured,
        // at its current size
        let hot = match &self.cfg {
            Some(c) => c.hot,
            // the start-up G0 of an "always" filter: its open segment
            None if self.hot_always => 1,
            None => 0,
        };
        let (hot_writes, writes) = std::mem::take(&mut self.hot_writes);
        let traffic = hot_writes as f64 / writes.max(1) as f64;
        let valid = self.measured_valid(0).unwrap_or(0.0);
        let measured = hot > 0 && writes > 0 && (traffic < 0.15 || valid > 0.1);
        let m = Model {
            dist: &dist,
            seg_blocks: self.geo.segment_blocks as f64,
            live: live as f64,
            measured_hot: measured.then_some((traffic, valid)),
        };
        let lim = Limits {
            max_groups: self.p.max_groups as usize,
            max_hot: self.p.max_hot_segments,
            hot_gain: self.p.hot_gain,
            fixed_hot: measured.then_some(hot),
        };
        if let Some((cfg, pred)) = model::search(&m, budget as u32, lim) {
            if self.apply_at_gb {
                self.pending = Some((cfg, pred));
            } else {
                self.offer(ctx, cfg, pred);
            }
        }
    }

    /// Apply `cfg` unless `apply_gate` refuses it (its predicted WAF above
    /// the last whole GB's measured one).
    fn offer(&mut self, ctx: &Ctx, cfg: Config, pred: Prediction) {
        if self.p.apply_gate && pred.waf > self.last_gb_waf {
            self.gated += 1;
            return;
        }
        if self.p.startup_to_last && self.cfg.is_none() {
            self.startup_into_last(ctx, &cfg);
        }
        self.apply(ctx, cfg, pred);
    }

    /// Leaving the start-up chain (`startup_to_last`): every sealed segment
    /// joins the new last group, but the hot group's newest `hot - 1`.
    fn startup_into_last(&mut self, ctx: &Ctx, cfg: &Config) {
        let new_last = cfg.sizes.len() as u8;
        let keep_hot = cfg.hot.saturating_sub(1) as usize;
        let mut hot: Vec<(u64, usize)> = Vec::new();
        for s in 0..self.label.len() {
            match self.label[s] {
                UNSEALED => {}
                0 => hot.push((ctx.ftl.segs.seal_seq[s], s)),
                _ => self.label[s] = new_last,
            }
        }
        hot.sort_unstable();
        let n = hot.len();
        for &(_, s) in hot.iter().take(n.saturating_sub(keep_hot)) {
            self.label[s] = new_last;
        }
    }

    /// Segments the model may give the groups: all but `model_reserve`, or
    /// by default all but the free ones (at least `max_groups` + 2).
    fn budget(&self, ctx: &Ctx) -> Option<usize> {
        let reserve = match self.p.model_reserve {
            Some(r) => r as usize,
            None => ctx.ftl.free_segments().max(self.p.max_groups as usize + 2),
        };
        (self.geo.segments as usize).checked_sub(reserve)
    }

    /// Switch to `cfg`: relabel the chain and rebuild the FIFO queues.
    fn apply(&mut self, ctx: &Ctx, cfg: Config, pred: Prediction) {
        let new_last = cfg.sizes.len() as u8;
        let old_last = self.last as u8;
        let segs = &ctx.ftl.segs;
        let mut order: Vec<(u64, SegmentId)> = Vec::new();
        self.count.fill(0);
        self.candidates.clear();
        self.collected.fill((0, 0));
        for q in &mut self.fifo {
            q.clear();
        }
        for s in 0..self.label.len() {
            let l = &mut self.label[s];
            if *l == UNSEALED {
                continue;
            }
            if *l >= old_last || *l >= new_last {
                *l = new_last;
            }
            self.count[*l as usize] += 1;
            if *l < new_last || self.last_victim == LastVictim::Fifo || self.queue_scan {
                order.push((segs.seal_seq[s], s as SegmentId));
            }
        }
        order.sort_unstable();
        for (tag, seg) in order {
            self.fifo[self.label[seg as usize] as usize].push_back((seg, tag));
        }
        let old_hot = self.cfg.as_ref().map_or(0, |c| c.hot);
        if cfg.hot > 0 && cfg.hot != old_hot && !self.hot_always {
            self.tau = pred.hot_interval;
        }
        if cfg.hot == 0 && !self.hot_always {
            self.heat.fill(0);
        }
        self.last = new_last as GroupId;
        self.cfg = Some(cfg);
        self.pred = Some(pred);
    }

    /// Merge the last two groups (the simulator's answer to GC that frees
    /// nothing); with two groups left, return to the start-up chain.
    #[cold]
    fn merge_last(&mut self, ctx: &Ctx) {
        let Some(mut cfg) = self.cfg.clone() else {
            return;
        };
        let pred = self
            .pred
            .clone()
            .expect("a configuration comes with its prediction");
        if cfg.sizes.len() > 2 {
            let last = cfg.sizes.pop().unwrap();
            *cfg.sizes.last_mut().unwrap() += last;
            self.apply(ctx, cfg, pred);
        } else {
            // relabel into the start-up chain
            self.apply(
                ctx,
                Config {
                    hot: 0,
                    sizes: vec![1; self.p.startup_groups as usize],
                },
                pred,
            );
            self.cfg = None;
            self.pred = None;
        }
        self.merges += 1;
    }

    /// Refill `candidates` with the last group's best segments by the victim
    /// score (cost-benefit or greedy), the best at the end.
    fn scan_last(&mut self, ctx: &Ctx, max_valid: u32) {
        let score: fn(f64, f64, u32) -> f64 = match self.last_victim {
            LastVictim::Greedy | LastVictim::Fifo => |u, _, _| -u,
            LastVictim::CostBenefit => cost_benefit_score,
            LastVictim::CostBenefitSqrt => cost_benefit_sqrt_score,
        };
        let (label, last) = (&self.label, self.last as u8);
        let top = top_by_score::<CANDIDATES>(ctx.ftl, max_valid, |s| label[s] == last, score);
        self.candidates.clear();
        self.candidates
            .extend(top.iter().rev().flatten().map(|&(_, s)| s));
    }

    /// The last group's victim as MiDAS-Simulation's `GREEDY_VS` / `CB_VS`
    /// find it (`last_scan = "queue"`): the queue scanned from its oldest
    /// entry, a strictly better segment replacing the candidate, every
    /// loser re-queued at the newest end; under cost-benefit a fully invalid
    /// segment is taken at once, the rest of the queue left as it is.
    fn scan_queue(&mut self, ctx: &Ctx, max_valid: u32) -> Option<SegmentId> {
        let g = self.last as usize;
        let segs = &ctx.ftl.segs;
        let label = &self.label;
        let blocks = self.geo.segment_blocks as f64;
        let now = ctx.now();
        let greedy = self.last_victim == LastVictim::Greedy;
        let q = &mut self.fifo[g];
        q.retain(|&(seg, tag)| {
            let s = seg as usize;
            segs.state[s] == SegState::Sealed && segs.seal_seq[s] == tag && label[s] as usize == g
        });
        let mut cand: Option<((SegmentId, u64), f64)> = None;
        for _ in 0..q.len() {
            let e = q.pop_front().expect("counted");
            let s = e.0 as usize;
            if segs.valid[s] > max_valid {
                q.push_back(e);
                continue;
            }
            let invalid = blocks - segs.valid[s] as f64;
            let score = if greedy {
                invalid
            } else if segs.valid[s] == 0 {
                if let Some((c, _)) = cand {
                    q.push_back(c);
                }
                return Some(e.0);
            } else {
                let age = now.saturating_sub(segs.seal_time[s]) as f64;
                invalid * age.sqrt() / (blocks - invalid)
            };
            match cand {
                Some((c, best)) if score > best => {
                    q.push_back(c);
                    cand = Some((e, score));
                }
                Some(_) => q.push_back(e),
                None => cand = Some((e, score)),
            }
        }
        cand.map(|(e, _)| e.0)
    }

    /// Oldest sealed segment of hot/FIFO group `g` (or of the last group
    /// under `last_victim = "fifo"`), if it may be collected.
    fn pop_oldest(&mut self, ctx: &Ctx, g: usize, max_valid: u32) -> Option<SegmentId> {
        let segs = &ctx.ftl.segs;
        let label = &self.label;
        let q = &mut self.fifo[g];
        let current = |&(seg, tag): &(SegmentId, u64)| {
            let s = seg as usize;
            segs.state[s] == SegState::Sealed && segs.seal_seq[s] == tag && label[s] as usize == g
        };
        while q.front().is_some_and(|e| !current(e)) {
            q.pop_front();
        }
        let &(seg, _) = q.front()?;
        (segs.valid[seg as usize] <= max_valid).then(|| {
            q.pop_front();
            seg
        })
    }
}

impl Placement for Midas {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        self.name
    }

    fn groups(&self) -> usize {
        3
    }

    fn active_groups(&self) -> usize {
        self.last as usize + 1
    }

    fn retired_groups(&self, out: &mut Vec<GroupId>) {
        out.extend(self.last + 1..=self.deepest as GroupId);
    }

    fn place_user(&mut self, ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]) {
        if self.due {
            self.reconfigure(ctx);
        }
        if self.apply_due {
            self.apply_due = false;
            if let Some((cfg, pred)) = self.pending.take() {
                self.offer(ctx, cfg, pred);
            }
        }
        if !self.hot_on() {
            out.fill(1);
            return;
        }
        self.tau_bound = [self.tau.ceil() as u64];
        for (w, g) in writes.iter().zip(out.iter_mut()) {
            if let Some(pba) = ctx.ftl.lookup(w.lba) {
                self.heat_on_overwrite(ctx, w.lba, pba, w.time);
            }
            let hot = self.heat[w.lba as usize] >= HOT;
            self.hot_writes.0 += hot as u64;
            *g = if hot { 0 } else { 1 };
        }
        self.hot_writes.1 += writes.len() as u64;
    }

    /// With a hot group, user writes predict "dies within τ" (G0) or not
    /// (G1); GC moves blocks along the chain by age, no lifetime claim.
    fn class_bounds(&self, _gc: bool) -> &[u64] {
        &self.tau_bound
    }

    fn predicted_class(&self, group: GroupId, gc: bool) -> Option<u8> {
        (!gc && self.hot_on()).then_some(group.min(1) as u8)
    }

    fn on_user_write(&mut self, lba: u32, time: u64, _group: GroupId) {
        // Physical device sizes of writes (MiDAS-Simulation's "GB"; its
        // count starts 2 writes in), for `apply_gate` and `apply_at`: one
        // comparison per write, the next boundary found only when it passes.
        if time >= self.gb.0 {
            let (_, user, gc) = self.gb;
            if user > 0 {
                self.last_gb_waf = (user + gc) as f64 / user as f64;
            }
            let phys = self.geo.physical_blocks;
            self.gb = (2 + ((time - 2) / phys + 1) * phys, 0, 0);
            self.apply_due = self.pending.is_some();
        }
        self.gb.1 += 1;
        if self.window_start.is_none() && self.first_window_at.is_some_and(|t| time >= t) {
            self.window_start = Some(time);
        }
        let Some(i) = self.sampled(lba) else {
            return;
        };
        let st = &mut self.stamp[i];
        if *st < TRIMMED {
            let start = match self.window_start {
                Some(s) => s,
                None if self.first_window_at.is_none() => *self.window_start.insert(time),
                None => {
                    *st = time;
                    return;
                }
            };
            if *st >= start {
                self.uid.record(time - *st);
            }
            if time >= start + self.window {
                self.due = true;
            }
        }
        *st = time;
    }

    fn on_trim(&mut self, ctx: &Ctx, lba: u32) {
        if let Some(i) = self.sampled(lba) {
            let st = &mut self.stamp[i];
            if *st < TRIMMED && self.window_start.is_some_and(|w| *st >= w) {
                self.uid.record(ctx.now() - *st);
            }
            *st = TRIMMED;
        }
    }

    fn prefetch(&self, lba: u32) {
        if self.hot_on() {
            prefetch::prefetch(&self.heat, lba as usize);
        }
    }

    fn place_gc(&mut self, _ctx: &Ctx, b: &GcBlock) -> GroupId {
        self.gb.2 += 1;
        let from = self.label[b.victim as usize];
        if self.hot_on() && !(self.hot_always && from <= 1 && !self.filter_event(false)) {
            let h = &mut self.heat[b.lba as usize];
            match from {
                0 => *h = h.saturating_sub(2),
                1 => *h = h.saturating_sub(1),
                _ => {}
            }
        }
        match from {
            0 => 1,
            l => (l as GroupId + 1).min(self.last),
        }
    }

    fn select_victim(&mut self, ctx: &Ctx, max_valid: u32) -> Option<SegmentId> {
        self.cfg.as_ref()?;
        // the hottest group over its size gives up its oldest segment
        for g in 0..self.last as usize {
            if self.over_size(g) {
                if let Some(v) = self.pop_oldest(ctx, g, max_valid) {
                    return Some(v);
                }
            }
        }
        if self.last_victim == LastVictim::Fifo {
            return self.pop_oldest(ctx, self.last as usize, max_valid);
        }
        if self.queue_scan {
            return self.scan_queue(ctx, max_valid);
        }
        // the last group's best, from the candidates of the latest scan
        let segs = &ctx.ftl.segs;
        while let Some(v) = self.candidates.pop() {
            let s = v as usize;
            if segs.state[s] == SegState::Sealed
                && self.label[s] == self.last as u8
                && segs.valid[s] <= max_valid
            {
                return Some(v);
            }
        }
        self.scan_last(ctx, max_valid);
        self.candidates.pop()
    }

    fn on_event(&mut self, ctx: &Ctx, ev: &Event) {
        match *ev {
            Event::Sealed { seg, group } => {
                let l = group.min(self.last) as u8;
                self.label[seg as usize] = l;
                self.count[l as usize] += 1;
                let queued =
                    l < self.last as u8 || self.last_victim == LastVictim::Fifo || self.queue_scan;
                if self.cfg.is_some() && queued {
                    let tag = ctx.ftl.segs.seal_seq[seg as usize];
                    self.fifo[l as usize].push_back((seg, tag));
                }
            }
            Event::Collected { seg, valid } => {
                let s = seg as usize;
                let l = std::mem::replace(&mut self.label[s], UNSEALED);
                if l != UNSEALED {
                    self.count[l as usize] -= 1;
                    let c = &mut self.collected[l as usize];
                    *c = (c.0 + valid as u64, c.1 + 1);
                }
                if l == 0 {
                    let since = if self.hot_always {
                        ctx.ftl.segs.seal_time[s]
                    } else {
                        ctx.ftl.segs.open_time[s]
                    };
                    self.g0_lifespan.0 += (ctx.now() - since) as f64;
                    self.g0_lifespan.1 += 1;
                }
                if self.cfg.is_some() {
                    let b = self.geo.segment_blocks as u64;
                    let (n, freed) = self.stuck;
                    let freed = freed + (b - valid as u64);
                    self.stuck = if freed >= b { (0, 0) } else { (n + 1, freed) };
                    if self.stuck.0 >= STUCK_VICTIMS {
                        self.stuck = (0, 0);
                        self.merge_last(ctx);
                    }
                }
            }
            Event::Window { .. } => {}
        }
    }

    fn state(&self) -> Option<Value> {
        Some(json!({
            "model_runs": self.model_runs,
            "gated": self.gated,
            "merges": self.merges,
            "configured": self.cfg.is_some(),
            "hot_segments": self.cfg.as_ref().map_or(0, |c| c.hot),
            "group_segments": self.cfg.as_ref().map(|c| c.sizes.clone()),
            "predicted_waf": self.pred.as_ref().map(|p| p.waf),
            "predicted_valid_ratios": self.pred.as_ref().map(|p| p.valid.clone()),
            "measured_valid_ratios": self.cfg.as_ref().map(|c| {
                (1..=c.sizes.len())
                    .map(|g| self.measured_valid(g))
                    .collect::<Vec<_>>()
            }),
            "hot_traffic": self.pred.as_ref().map(|p| p.hot_traffic),
            "hot_threshold": self.hot_on().then_some(self.tau),
            "sampled_one_in": 1u32 << self.shift,
        }))
    }

    fn memory_bytes(&self) -> usize {
        self.stamp.capacity() * 8
            + self.uid.memory_bytes()
            + self.label.capacity()
            + self.heat.capacity()
            + self.fifo.iter().map(|q| q.capacity() * 16).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::DeviceConfig;
    use crate::ftl::Ftl;

    fn setup() -> (Ftl, Midas) {
        with(json!({}))
    }

    fn pred(k: usize, hot_interval: f64) -> Prediction {
        Prediction {
            waf: 2.0,
            valid: vec![0.5; k],
            hot_traffic: 0.1,
            hot_interval,
        }
    }

    fn gc(lba: u32, victim: SegmentId) -> GcBlock {
        GcBlock {
            lba,
            victim,
            from_group: 0,
        }
    }

    #[test]
    fn the_chain_is_relabelled_when_it_grows_and_shrinks() {
        let (mut ftl, mut m) = setup();
        // start-up: two in G1, two in G2 (the last group)
        for (s, l) in [(0, 1), (1, 1), (2, 2), (3, 2)] {
            ftl.segs.state[s] = SegState::Sealed;
            ftl.segs.seal_seq[s] = s as u64 + 1;
            m.label[s] = l;
        }
        let ctx = Ctx::new(&ftl);
        assert_eq!(m.place_gc(&ctx, &gc(0, 0)), 2);
        assert_eq!(
            m.select_victim(&ctx, 4),
            None,
            "start-up: the selector decides"
        );
        m.apply(
            &ctx,
            Config {
                hot: 0,
                sizes: vec![1, 1, 10],
            },
            pred(3, 0.0),
        );
        assert_eq!(
            &m.label[..4],
            &[1, 1, 3, 3],
            "old last group -> new last group"
        );
        assert_eq!(&m.count[..4], &[0, 2, 0, 2]);
        assert_eq!(m.place_gc(&ctx, &gc(0, 0)), 2, "G1 -> G2");
        assert_eq!(
            m.place_gc(&ctx, &gc(0, 2)),
            3,
            "the last group keeps its own"
        );
        // G1 holds two sealed segments (plus its open one) over a size of 1: FIFO
        assert_eq!(m.select_victim(&ctx, 4), Some(0));
        m.apply(
            &ctx,
            Config {
                hot: 0,
                sizes: vec![1, 10],
            },
            pred(2, 0.0),
        );
        assert_eq!(&m.label[..4], &[1, 1, 2, 2], "dropped groups -> last group");
    }

    #[test]
    fn the_hot_filter_admits_after_three_young_overwrites_and_penalises_moves() {
        let (mut ftl, mut m) = setup();
        ftl.append(1, 7).unwrap(); // LBA 7 in G1's open segment
        let seg = ftl.segment_of(ftl.lookup(7).unwrap());
        let ctx = Ctx::new(&ftl);
        m.apply(
            &ctx,
            Config {
                hot: 2,
                sizes: vec![2, 10],
            },
            pred(2, 100.0),
        );
        assert_eq!(m.tau, 100.0);
        let w = UserWrite {
            lba: 7,
            time: 10,
            req_blocks: 1,
            req_offset: 0,
            ..Default::default()
        };
        let mut out = [9];
        for want in [1, 1, 0] {
            m.place_user(&ctx, &[w], &mut out);
            assert_eq!(out[0], want, "heat {}", m.heat[7]);
        }
        m.label[seg as usize] = 1;
        m.place_gc(&ctx, &gc(7, seg));
        assert_eq!(m.heat[7], 2, "moved out of a G1 victim: -1");
        m.label[seg as usize] = 0;
        assert_eq!(m.place_gc(&ctx, &gc(7, seg)), 1, "G0 -> G1");
        assert_eq!(m.heat[7], 0, "moved out of a G0 victim: -2");
        // an overwrite of a copy sealed in G1 long ago cools the LBA down
        m.heat[7] = 2;
        m.label[seg as usize] = 1;
        ftl.segs.state[seg as usize] = SegState::Sealed;
        ftl.segs.seal_time[seg as usize] = 0;
        let ctx = Ctx::new(&ftl);
        m.place_user(&ctx, &[UserWrite { time: 1000, ..w }], &mut out);
        assert_eq!((out[0], m.heat[7]), (1, 1));
    }

    fn with(params: Value) -> (Ftl, Midas) {
        let geo = DeviceConfig {
            logical_blocks: 1000,
            segment_blocks: 4,
            ..Default::default()
        }
        .geometry()
        .unwrap();
        (
            Ftl::new(geo, 3),
            Midas::new(params::parse("midas", &params).unwrap(), &geo).unwrap(),
        )
    }

    /// MiDAS-Simulation's configuration timing (`--setup midas-sim`): a
    /// configuration found waits for the next physical device size of
    /// writes, is applied only if its prediction is no worse than the last
    /// one's measured WAF, and takes the start-up segments into its last
    /// group; G1 is collected one segment early.
    #[test]
    fn the_simulators_configuration_timing_and_gate() {
        let (mut ftl, mut m) = with(json!({
            "apply_at": "gb", "apply_gate": true, "startup_to_last": true, "g1_one_less": true,
            "startup_groups": 4, "first_window": 1000.0,
        }));
        let phys = m.geo.physical_blocks;
        // start-up: G0 (two, seal order 1 and 3), G1, G2, G3 sealed
        for (s, l, seq) in [(0, 0, 1), (1, 1, 2), (2, 0, 3), (3, 2, 4), (4, 3, 5)] {
            ftl.segs.state[s] = SegState::Sealed;
            ftl.segs.seal_seq[s] = seq;
            m.label[s] = l;
        }
        let ctx = Ctx::new(&ftl);
        // one GB of writes at WAF 1.5 (half as many GC writes as user writes)
        for t in 2..2 + phys {
            m.on_user_write(1, t, 1);
            if t % 2 == 0 {
                m.place_gc(&ctx, &gc(1, 4));
            }
        }
        let cfg = |hot| Config {
            hot,
            sizes: vec![3, 2, 10],
        };
        let mut p = pred(3, 0.0);
        p.waf = 1.4;
        m.pending = Some((cfg(2), p.clone()));
        let mut out = [0; 1];
        m.place_user(&ctx, &[], &mut out);
        assert!(m.cfg.is_none(), "found, but waits for the GB's end");
        m.on_user_write(1, 2 + phys, 1); // the first GB closes: WAF 1.5
        assert!((m.last_gb_waf - 1.5).abs() < 1e-2, "{}", m.last_gb_waf);
        m.place_user(&ctx, &[], &mut out);
        assert_eq!(
            m.cfg.as_ref().map(|c| c.hot),
            Some(2),
            "1.4 <= 1.5: applied"
        );
        // every start-up segment joined the last group (3) but G0's newest
        assert_eq!(&m.label[..5], &[3, 3, 0, 3, 3]);
        // G1 over its size of 3 with 2 sealed segments
        m.label[1] = 1;
        m.count[1] = 2;
        assert!(m.over_size(1), "collected one segment early");
        // a worse prediction than measured is refused, and counted
        p.waf = 1.6;
        m.pending = Some((cfg(1), p));
        m.apply_due = true;
        m.place_user(&ctx, &[], &mut out);
        assert_eq!((m.cfg.as_ref().map(|c| c.hot), m.gated), (Some(2), 1));
    }

    /// `last_scan = "queue"`: MiDAS-Simulation's greedy scan of the last
    /// group's queue: ties to the older, losers re-queued at the newest end.
    #[test]
    fn the_simulators_queue_scan_breaks_ties_to_the_older() {
        let (mut ftl, mut m) = with(json!({"last_scan": "queue", "last_victim": "greedy"}));
        for (s, valid) in [(0, 2), (1, 1), (2, 1), (3, 3)] {
            ftl.segs.state[s] = SegState::Sealed;
            ftl.segs.seal_seq[s] = s as u64 + 1;
            ftl.segs.valid[s] = valid;
            m.label[s] = 2;
        }
        let ctx = Ctx::new(&ftl);
        m.apply(
            &ctx,
            Config {
                hot: 0,
                sizes: vec![1, 10],
            },
            pred(2, 0.0),
        );
        assert_eq!(m.select_victim(&ctx, 4), Some(1), "1 and 2 tie: the older");
        let order: Vec<_> = m.fifo[2].iter().map(|e| e.0).collect();
        assert_eq!(order, [0, 2, 3], "the losers, re-queued in scan order");
        m.label[1] = UNSEALED;
        assert_eq!(m.select_victim(&ctx, 4), Some(2));
        assert_eq!(m.fifo[2].iter().map(|e| e.0).collect::<Vec<_>>(), [0, 3]);
    }

    #[test]
    fn the_start_up_chain_has_startup_groups_levels() {
        for (n, want) in [(2, [2, 2, 2]), (4, [3, 4, 4])] {
            let (mut ftl, mut m) = with(json!({"startup_groups": n}));
            for (s, l) in [(0, 2), (1, 3), (2, 4)] {
                ftl.segs.state[s] = SegState::Sealed;
                m.label[s] = l.min(n) as u8;
            }
            let ctx = Ctx::new(&ftl);
            let got: Vec<GroupId> = (0..3).map(|s| m.place_gc(&ctx, &gc(0, s))).collect();
            assert_eq!(got, want, "startup_groups = {n}");
            assert_eq!(m.select_victim(&ctx, 4), None, "the selector over all");
            // merges back to the start-up chain restore its length
            m.apply(
                &ctx,
                Config {
                    hot: 0,
                    sizes: vec![1, 10],
                },
                pred(2, 0.0),
            );
            assert_eq!(m.last, 2);
            m.merge_last(&ctx);
            assert_eq!((m.last, m.cfg.is_none()), (n as GroupId, true));
        }
    }

    #[test]
    fn first_window_opens_the_window_at_a_fixed_time() {
        let sampled = 0; // LBA 0 is always sampled
        let (_, mut m) = with(json!({}));
        m.on_user_write(sampled, 10, 1);
        m.on_user_write(sampled, 20, 1);
        assert_eq!(m.window_start, Some(20), "default: at the first overwrite");
        let (_, mut m) = with(json!({"first_window": 2.0}));
        m.on_user_write(sampled, 10, 1);
        m.on_user_write(sampled, 20, 1);
        assert_eq!(m.window_start, None, "not before 2 logical device sizes");
        m.on_user_write(1, 2000, 1);
        assert_eq!(m.window_start, Some(2000), "any write opens it then");
    }

    #[test]
    fn window_unit_counts_the_physical_space() {
        let (ftl, m) = with(json!({"uid_window": 2.0}));
        assert_eq!(m.window, 2000);
        let (_, p) = with(json!({"uid_window": 2.0, "window_unit": "physical"}));
        assert_eq!(p.window, 2 * ftl.geo.physical_blocks);
        assert!(p.window > m.window);
    }

    #[test]
    fn model_reserve_fixes_the_model_budget() {
        let (ftl, m) = with(json!({}));
        let ctx = Ctx::new(&ftl);
        let n = ftl.geo.segments as usize;
        assert_eq!(m.budget(&ctx), Some(n - ftl.free_segments()));
        let (_, m) = with(json!({"model_reserve": 4}));
        assert_eq!(m.budget(&ctx), Some(n - 4));
    }

    #[test]
    fn last_victim_chooses_in_the_last_group() {
        // segment 0: sealed first, 3 of 4 valid, old; segment 1: 1 of 4
        // valid, young. LFS cost-benefit takes the old one, the sqrt form
        // the young one, greedy the emptier, FIFO the older.
        for (last_victim, want) in [
            ("cost-benefit", 0),
            ("cost-benefit-sqrt", 1),
            ("greedy", 1),
            ("fifo", 0),
        ] {
            let (mut ftl, mut m) = with(json!({"last_victim": last_victim}));
            for (s, valid, sealed) in [(0, 3, 0), (1, 1, 4900)] {
                ftl.segs.state[s] = SegState::Sealed;
                ftl.segs.valid[s] = valid;
                ftl.segs.seal_time[s] = sealed;
                ftl.segs.seal_seq[s] = s as u64 + 1;
                m.label[s] = 2;
            }
            ftl.now = 5000;
            let ctx = Ctx::new(&ftl);
            m.apply(
                &ctx,
                Config {
                    hot: 0,
                    sizes: vec![10, 10],
                },
                pred(2, 0.0),
            );
            assert_eq!(m.select_victim(&ctx, 4), Some(want), "{last_victim}");
        }
    }

    #[test]
    fn hot_filter_always_runs_from_the_start_after_a_cold_period() {
        let (_, m) = with(json!({}));
        assert!(!m.hot_on(), "model: no hot group before a configuration");
        let (mut ftl, mut m) = with(json!({"hot_filter": "always"}));
        assert!(m.hot_on() && m.cfg.is_none());
        assert_eq!((m.tau, m.cold), (1000.0, 1000), "one logical device size");
        ftl.append(1, 7).unwrap(); // LBA 7 in G1's open segment
        let ctx = Ctx::new(&ftl);
        let w = UserWrite {
            lba: 7,
            time: 10,
            req_blocks: 1,
            ..Default::default()
        };
        let mut out = [9];
        m.place_user(&ctx, &[w], &mut out);
        assert_eq!((m.heat[7], m.cold), (0, 999), "cold: counted, not moved");
        m.cold = 0;
        for want in [1, 1, 0] {
            m.place_user(&ctx, &[w], &mut out);
            assert_eq!(out[0], want, "heat {}", m.heat[7]);
        }
        // τ follows the collected G0 segments' ages every τ overwrites
        m.g0_lifespan = (200.0, 2);
        m.tau_left = 0.0;
        m.place_user(&ctx, &[w], &mut out);
        assert_eq!(m.tau, 0.5 * (100.0 + 1000.0));
        assert_eq!(m.g0_lifespan, (0.0, 0));
    }

    #[test]
    fn bad_parameters_are_errors() {
        let geo = DeviceConfig::default().geometry().unwrap();
        for bad in [
            serde_json::json!({"last_victim": "lru"}),
            serde_json::json!({"max_groups": 1}),
            serde_json::json!({"uid_window": 0.0}),
            serde_json::json!({"sample": 0}),
            serde_json::json!({"startup_groups": 1}),
            serde_json::json!({"first_window": -1.0}),
            serde_json::json!({"window_unit": "bytes"}),
            serde_json::json!({"hot_filter": "never"}),
        ] {
            assert!((INFO.build)(&bad, &geo).is_err(), "{bad}");
        }
    }
}
