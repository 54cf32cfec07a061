//! Statistics belong to the engine, not to the policies: policies decide, the
//! engine counts. Counters are plain integers bumped on the hot path; derived
//! figures (WAF, windows) are computed at window boundaries and at the end.

use serde::Serialize;

use crate::device::Geometry;
use crate::ftl::{GroupId, SegState, Segments};
use crate::future::accuracy::{f1, ratio, Confusion};

/// Bins of the victim valid-ratio histogram ([0, 0.05), [0.05, 0.1), ... [0.95, 1]).
pub const VICTIM_BINS: usize = 20;

/// Monotone counters, all in blocks unless named otherwise.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Counters {
    /// Blocks written by the user (the workload).
    pub user_writes: u64,
    /// Blocks written by GC relocation.
    pub gc_writes: u64,
    /// Blocks read by the user.
    pub read_blocks: u64,
    /// Of those, blocks that were never written or were trimmed.
    pub unmapped_read_blocks: u64,
    /// Blocks trimmed that held data.
    pub trimmed_blocks: u64,
    /// Requests seen (reads, writes, trims).
    pub requests: u64,
    /// Segments collected by GC.
    pub victims: u64,
    /// GC writes that went to another group's open segment because their
    /// own group needed a fresh segment and none was free (see the engine).
    pub gc_spills: u64,
    /// Open segments closed because their group was retired by the policy.
    pub closed_segments: u64,
    /// Unwritten slots of those segments (garbage from then on) [blocks].
    pub padded_blocks: u64,
    /// Valid blocks found in collected segments (= gc_writes).
    pub victim_valid_blocks: u64,
    /// User-written blocks whose lifetime class the policy predicted (runs
    /// with the annotated future only).
    pub predicted_user: u64,
    /// Of those, predicted right.
    pub predicted_user_right: u64,
    /// GC-written blocks whose remaining-lifetime class the policy predicted.
    pub predicted_gc: u64,
    /// Of those, predicted right (the block dies within its destination's range).
    pub predicted_gc_right: u64,
    /// User-written blocks predicted in class 0 (the shortest lifetimes:
    /// "short-lived", "hot"), for precision and recall of that class.
    pub predicted_user_short: u64,
    /// Predicted user-written blocks whose true class is 0.
    pub actual_user_short: u64,
    /// Of those, predicted in class 0.
    pub predicted_user_short_right: u64,
    /// Victims collected by background GC (included in `victims`).
    pub background_victims: u64,
    /// Blocks moved by background GC (included in `gc_writes`).
    pub background_gc_writes: u64,
}

impl Counters {
    /// (user + gc) / user of the interval since `earlier`; `None` with no user write.
    pub fn waf_since(&self, earlier: &Counters) -> Option<f64> {
        let u = self.user_writes - earlier.user_writes;
        let g = self.gc_writes - earlier.gc_writes;
        (u > 0).then(|| (u + g) as f64 / u as f64)
    }
}

/// One closed time-series window.
#[derive(Clone, Copy, Debug, Serialize, serde::Deserialize)]
pub struct WindowRow {
    /// Workload drive-writes at the window's end [drive-writes].
    pub drive_writes: f64,
    /// User writes in the window [blocks].
    pub user_writes: u64,
    /// GC writes in the window [blocks].
    pub gc_writes: u64,
    /// WAF within the window.
    pub waf: Option<f64>,
    /// WAF from the workload's start to the window's end.
    pub cumulative_waf: Option<f64>,
    /// Segments collected in the window.
    pub victims: u64,
    /// Mean valid ratio of the window's victims.
    pub victim_valid_ratio: Option<f64>,
    /// Free segments at the window's end.
    pub free_segments: u64,
    /// Accuracy of the window's user-write predictions (with the future only).
    pub user_accuracy: Option<f64>,
    /// Accuracy of the user-write predictions from the start to the window's end.
    pub cumulative_user_accuracy: Option<f64>,
    /// Precision of the window's user-write predictions of class 0 (the
    /// short-lived class): right / predicted short.
    pub user_precision: Option<f64>,
    /// Recall of class 0 in the window: found / truly short.
    pub user_recall: Option<f64>,
    /// F1 of class 0 in the window.
    pub user_f1: Option<f64>,
    /// Precision of class 0 from the start to the window's end.
    pub cumulative_user_precision: Option<f64>,
    /// Recall of class 0 from the start to the window's end.
    pub cumulative_user_recall: Option<f64>,
    /// F1 of class 0 from the start to the window's end.
    pub cumulative_user_f1: Option<f64>,
    /// Accuracy of the window's GC-write predictions.
    pub gc_accuracy: Option<f64>,
    /// Accuracy of the GC-write predictions from the start to the window's end.
    pub cumulative_gc_accuracy: Option<f64>,
    /// The policy's lifetime threshold at the window's end (SepBIT's ℓ)
    /// [user blocks]; `None` for a policy without one, or before it has one.
    pub threshold: Option<f64>,
}

/// One group's part of a closed window: what MiDAS-Simulation prints per
/// group every GB (`simul_info`: `GROUP g[sealed segments]: victims' valid
/// ratio (ERASE: victims)`), with the group's writes and valid blocks.
#[derive(Clone, Copy, Debug, Default, Serialize, serde::Deserialize)]
pub struct GroupWindowRow {
    /// Index of the window in `windows`.
    pub window: u64,
    /// Group.
    pub group: u32,
    /// User writes placed in the group in the window [blocks].
    pub user_writes: u64,
    /// GC writes placed in the group in the window [blocks].
    pub gc_writes: u64,
    /// Segments of the group collected in the window (MiDAS's `ERASE`).
    pub victims: u64,
    /// Mean valid ratio of those victims (MiDAS's `VPG/EPG`).
    pub victim_valid_ratio: Option<f64>,
    /// Sealed segments the group holds at the window's end (MiDAS's
    /// `[TOTAL_GNUM]`).
    pub sealed_segments: u64,
    /// Open segments it holds (its append points).
    pub open_segments: u64,
    /// Valid blocks in its segments at the window's end.
    pub valid_blocks: u64,
}

/// A group's running totals when the last window closed.
#[derive(Clone, Copy, Debug, Default, Serialize, serde::Deserialize)]
struct GroupMark {
    user: u64,
    gc: u64,
    victims: u64,
    victim_valid: u64,
}

/// Everything the engine counts during the workload (prefill excluded).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Stats {
    /// Running totals.
    pub c: Counters,
    /// Victim valid-ratio histogram.
    #[serde(with = "crate::codec::array")]
    pub victim_hist: [u64; VICTIM_BINS],
    /// User writes per group.
    pub group_user: Vec<u64>,
    /// GC writes per group.
    pub group_gc: Vec<u64>,
    /// Per group (the victim's own), victims collected, the valid blocks
    /// they held, and their summed lifespans (collection minus opening
    /// time [user blocks]).
    pub group_victims: Vec<GroupVictims>,
    /// Closed windows.
    pub windows: Vec<WindowRow>,
    /// Each group's part of each closed window.
    #[serde(default)]
    pub group_windows: Vec<GroupWindowRow>,
    /// Each group's totals when the last window closed.
    #[serde(default)]
    group_marks: Vec<GroupMark>,
    /// Counters when the last window closed.
    window_start: Counters,
    /// Window length [user blocks]; fractional, so that boundaries fall at
    /// exact multiples of the window's drive-writes (rounded per boundary).
    pub window_blocks: f64,
    /// Warm-up length [user blocks].
    pub warmup_blocks: u64,
    /// Counters at the end of warm-up, once reached.
    pub warm: Option<Counters>,
    logical_blocks: f64,
    segment_blocks: u64,
    /// Predictions of user-written blocks' lifetime classes vs the truth.
    pub confusion_user: Confusion,
    /// Predictions of GC-written blocks' remaining-lifetime classes vs the truth.
    pub confusion_gc: Confusion,
    /// Per group, (remaining) lifetimes of the blocks written into it, in
    /// power-of-two bins (bin k: [2^(k-1), 2^k); the last bin: never dies).
    /// Filled only with the annotated future.
    #[serde(with = "crate::codec::arrays")]
    pub group_life: Vec<[u64; LIFE_BINS]>,
    /// Segments held out of use (free reserve + open) at each GC start:
    /// sum, count, max.
    pub held: HeldSegments,
}

/// Segments held out of use (the free reserve and the groups' open
/// segments), sampled each time GC starts.
#[derive(Clone, Copy, Debug, Default, Serialize, serde::Deserialize)]
pub struct HeldSegments {
    /// Mean over the samples [segments].
    pub mean: Option<f64>,
    /// Largest sample [segments].
    pub max: u64,
    /// Samples taken (GC starts).
    pub samples: u64,
    /// Sum of the samples [segments].
    pub sum: u64,
}

/// What GC collected from one group.
#[derive(Clone, Copy, Debug, Default, Serialize, serde::Deserialize)]
pub struct GroupVictims {
    /// Segments collected.
    pub victims: u64,
    /// Valid blocks they held [blocks].
    pub valid_blocks: u64,
    /// Sum of their lifespans: collection minus opening time [user blocks].
    pub lifespan_sum: u64,
}

/// Bins of the per-group lifetime histograms.
pub const LIFE_BINS: usize = 66;

/// Bin of a lifetime in the per-group histograms.
#[inline(always)]
pub fn life_bin(lifetime: u64) -> usize {
    if lifetime == u64::MAX {
        LIFE_BINS - 1
    } else {
        (64 - lifetime.leading_zeros()) as usize
    }
}

/// Per-group figures at the end of a run.
#[derive(Clone, Debug, Serialize)]
pub struct GroupResult {
    /// Group index.
    pub group: usize,
    /// User writes into the group [blocks].
    pub user_writes: u64,
    /// GC writes into the group [blocks].
    pub gc_writes: u64,
    /// Segments the group holds (open + sealed).
    pub segments: u64,
    /// Valid blocks in the group.
    pub valid_blocks: u64,
    /// Segments GC collected from the group.
    pub victims: u64,
    /// Mean garbage proportion of those victims (1 - valid ratio).
    pub mean_victim_garbage: Option<f64>,
    /// Mean lifespan of those victims: collection minus opening time [user blocks].
    pub mean_lifespan: Option<f64>,
    /// Share of the user writes that went to the group.
    pub user_write_share: Option<f64>,
    /// Share of the valid blocks the group holds at the end.
    pub valid_share: Option<f64>,
    /// (Remaining) lifetimes of the blocks written into the group, when the
    /// run has the annotated future.
    pub lifetime: Option<LifetimeProfile>,
}

/// Quantiles of the lifetimes of the blocks a group received [user blocks],
/// to a power of two (`null`: never dies).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct LifetimeProfile {
    /// 10th percentile.
    pub p10: Option<u64>,
    /// Median.
    pub median: Option<u64>,
    /// 90th percentile.
    pub p90: Option<u64>,
}

impl Stats {
    /// Per-group figures of the FTL `ftl` these statistics describe.
    pub fn group_results(&self, ftl: &crate::ftl::Ftl) -> Vec<GroupResult> {
        let c = &self.c;
        let geo = ftl.geo;
        let segs = &ftl.segs;
        let ratio = |a: f64, b: f64| (b > 0.0).then(|| a / b);
        let mut groups: Vec<GroupResult> = (0..self.group_user.len())
            .map(|g| GroupResult {
                group: g,
                user_writes: self.group_user[g],
                gc_writes: self.group_gc[g],
                segments: 0,
                valid_blocks: 0,
                victims: self.group_victims[g].victims,
                mean_victim_garbage: ratio(
                    self.group_victims[g].valid_blocks as f64,
                    (self.group_victims[g].victims * geo.segment_blocks as u64) as f64,
                )
                .map(|v| 1.0 - v),
                mean_lifespan: ratio(
                    self.group_victims[g].lifespan_sum as f64,
                    self.group_victims[g].victims as f64,
                ),
                user_write_share: ratio(self.group_user[g] as f64, c.user_writes as f64),
                valid_share: None,
                lifetime: self.life_quantile(g, 0.5).map(|_| {
                    let q = |x| self.life_quantile(g, x).filter(|&v| v != u64::MAX);
                    LifetimeProfile {
                        p10: q(0.1),
                        median: q(0.5),
                        p90: q(0.9),
                    }
                }),
            })
            .collect();
        for s in 0..geo.segments as usize {
            if segs.state[s] != crate::ftl::SegState::Free {
                let g = &mut groups[segs.group[s] as usize];
                g.segments += 1;
                g.valid_blocks += segs.valid[s] as u64;
            }
        }
        let valid_total: u64 = groups.iter().map(|g| g.valid_blocks).sum();
        for g in &mut groups {
            g.valid_share = ratio(g.valid_blocks as f64, valid_total as f64);
        }
        groups
    }

    /// Fresh statistics for `groups` groups.
    pub fn new(groups: usize, window_blocks: f64, warmup_blocks: u64, geo: &Geometry) -> Self {
        Stats {
            c: Counters::default(),
            victim_hist: [0; VICTIM_BINS],
            group_user: vec![0; groups],
            group_gc: vec![0; groups],
            group_victims: vec![GroupVictims::default(); groups],
            windows: Vec::new(),
            group_windows: Vec::new(),
            group_marks: Vec::new(),
            window_start: Counters::default(),
            window_blocks: window_blocks.max(1.0),
            warmup_blocks,
            warm: (warmup_blocks == 0).then(Counters::default),
            logical_blocks: geo.logical_blocks as f64,
            segment_blocks: geo.segment_blocks as u64,
            confusion_user: Confusion::default(),
            confusion_gc: Confusion::default(),
            group_life: Vec::new(),
            held: HeldSegments::default(),
        }
    }

    /// User-write count at which [`Stats::tick`] has something to do.
    pub fn next_due(&self) -> u64 {
        let next_window = self.window_end(self.windows.len());
        match self.warm {
            None => next_window.min(self.warmup_blocks),
            Some(_) => next_window,
        }
    }

    /// Record the warm-up snapshot and close windows that are due. Returns
    /// the index of a window that closed, if one did.
    pub fn tick(&mut self, free_segments: usize, segs: &Segments) -> Option<u64> {
        if self.warm.is_none() && self.c.user_writes >= self.warmup_blocks {
            self.warm = Some(self.c);
        }
        if self.c.user_writes >= self.window_end(self.windows.len()) {
            self.close_window(free_segments, segs);
            return Some(self.windows.len() as u64 - 1);
        }
        None
    }

    /// User-write count at which window `k` ends.
    fn window_end(&self, k: usize) -> u64 {
        let end = ((k + 1) as f64 * self.window_blocks).round();
        if end >= u64::MAX as f64 {
            u64::MAX
        } else {
            end as u64
        }
    }

    /// Close the current window (also used for the partial last one).
    pub fn close_window(&mut self, free_segments: usize, segs: &Segments) {
        let (c, s) = (self.c, self.window_start);
        if c.user_writes == s.user_writes && c.gc_writes == s.gc_writes {
            return;
        }
        self.close_group_windows(segs);
        let victims = c.victims - s.victims;
        let moved = c.victim_valid_blocks - s.victim_valid_blocks;
        self.windows.push(WindowRow {
            drive_writes: c.user_writes as f64 / self.logical_blocks,
            user_writes: c.user_writes - s.user_writes,
            gc_writes: c.gc_writes - s.gc_writes,
            waf: c.waf_since(&s),
            cumulative_waf: c.waf_since(&Counters::default()),
            victims,
            victim_valid_ratio: (victims > 0)
                .then(|| moved as f64 / (victims * self.segment_blocks) as f64),
            free_segments: free_segments as u64,
            user_accuracy: ratio(
                c.predicted_user_right - s.predicted_user_right,
                c.predicted_user - s.predicted_user,
            ),
            cumulative_user_accuracy: ratio(c.predicted_user_right, c.predicted_user),
            user_precision: ratio(
                c.predicted_user_short_right - s.predicted_user_short_right,
                c.predicted_user_short - s.predicted_user_short,
            ),
            user_recall: ratio(
                c.predicted_user_short_right - s.predicted_user_short_right,
                c.actual_user_short - s.actual_user_short,
            ),
            user_f1: f1(
                ratio(
                    c.predicted_user_short_right - s.predicted_user_short_right,
                    c.predicted_user_short - s.predicted_user_short,
                ),
                ratio(
                    c.predicted_user_short_right - s.predicted_user_short_right,
                    c.actual_user_short - s.actual_user_short,
                ),
            ),
            cumulative_user_precision: ratio(c.predicted_user_short_right, c.predicted_user_short),
            cumulative_user_recall: ratio(c.predicted_user_short_right, c.actual_user_short),
            cumulative_user_f1: f1(
                ratio(c.predicted_user_short_right, c.predicted_user_short),
                ratio(c.predicted_user_short_right, c.actual_user_short),
            ),
            gc_accuracy: ratio(
                c.predicted_gc_right - s.predicted_gc_right,
                c.predicted_gc - s.predicted_gc,
            ),
            cumulative_gc_accuracy: ratio(c.predicted_gc_right, c.predicted_gc),
            threshold: None,
        });
        self.window_start = c;
    }

    /// Each group's part of the window closing now (one pass over the
    /// segments: windows are few).
    fn close_group_windows(&mut self, segs: &Segments) {
        let groups = self.group_user.len();
        let mut rows = vec![GroupWindowRow::default(); groups];
        for (i, &st) in segs.state.iter().enumerate() {
            let Some(r) = rows.get_mut(segs.group[i] as usize) else {
                continue;
            };
            match st {
                SegState::Free => continue,
                SegState::Open => r.open_segments += 1,
                SegState::Sealed => r.sealed_segments += 1,
            }
            r.valid_blocks += segs.valid[i] as u64;
        }
        self.group_marks.resize(groups, GroupMark::default());
        let window = self.windows.len() as u64;
        for (g, mut r) in rows.into_iter().enumerate() {
            let now = GroupMark {
                user: self.group_user[g],
                gc: self.group_gc[g],
                victims: self.group_victims[g].victims,
                victim_valid: self.group_victims[g].valid_blocks,
            };
            let was = std::mem::replace(&mut self.group_marks[g], now);
            r.window = window;
            r.group = g as u32;
            r.user_writes = now.user - was.user;
            r.gc_writes = now.gc - was.gc;
            r.victims = now.victims - was.victims;
            r.victim_valid_ratio = (r.victims > 0).then(|| {
                (now.victim_valid - was.victim_valid) as f64
                    / (r.victims * self.segment_blocks) as f64
            });
            self.group_windows.push(r);
        }
    }

    /// Record the segments held out of use as GC starts.
    #[inline]
    pub fn held(&mut self, segments: u64) {
        let h = &mut self.held;
        h.sum += segments;
        h.samples += 1;
        h.max = h.max.max(segments);
        h.mean = Some(h.sum as f64 / h.samples as f64);
    }

    /// Record one collected victim that held `valid` blocks.
    #[inline]
    pub fn victim(&mut self, valid: u32) {
        self.c.victims += 1;
        self.c.victim_valid_blocks += valid as u64;
        let bin =
            (valid as usize * VICTIM_BINS / self.segment_blocks as usize).min(VICTIM_BINS - 1);
        self.victim_hist[bin] += 1;
    }

    /// Record that GC collected a segment of group `g` holding `valid`
    /// blocks, `lifespan` user writes after it was opened.
    #[inline]
    pub fn collected(&mut self, g: GroupId, valid: u32, lifespan: u64) {
        let v = &mut self.group_victims[g as usize];
        v.victims += 1;
        v.valid_blocks += valid as u64;
        v.lifespan_sum += lifespan;
    }

    /// Set the policy's threshold on the window that just closed.
    pub fn set_threshold(&mut self, threshold: Option<f64>) {
        if let Some(w) = self.windows.last_mut() {
            w.threshold = threshold;
        }
    }

    /// Record a lifetime-class prediction (true class, predicted class,
    /// under `bounds`).
    #[inline]
    pub fn predicted(&mut self, gc: bool, truth: usize, pred: usize, bounds: &[u64]) {
        let right = (truth == pred) as u64;
        let m = if gc {
            self.c.predicted_gc += 1;
            self.c.predicted_gc_right += right;
            &mut self.confusion_gc
        } else {
            self.c.predicted_user += 1;
            self.c.predicted_user_right += right;
            self.c.predicted_user_short += (pred == 0) as u64;
            self.c.actual_user_short += (truth == 0) as u64;
            self.c.predicted_user_short_right += (pred == 0 && truth == 0) as u64;
            &mut self.confusion_user
        };
        m.record(truth, pred);
        m.set_bounds(bounds);
    }

    /// A block with (remaining) lifetime `lifetime` was written into `g`.
    #[inline]
    pub fn lifetime(&mut self, g: GroupId, lifetime: u64) {
        let g = g as usize;
        if self.group_life.len() <= g {
            self.group_life.resize(g + 1, [0; LIFE_BINS]);
        }
        self.group_life[g][life_bin(lifetime)] += 1;
    }

    /// Quantile `q` of group `g`'s lifetimes, as its bin's upper bound
    /// (`None`: no data; `Some(u64::MAX)`: never dies).
    pub fn life_quantile(&self, g: usize, q: f64) -> Option<u64> {
        let h = self.group_life.get(g)?;
        let n: u64 = h.iter().sum();
        if n == 0 {
            return None;
        }
        let want = (q * n as f64).ceil().max(1.0) as u64;
        let mut acc = 0;
        for (k, &c) in h.iter().enumerate() {
            acc += c;
            if acc >= want {
                return Some(if k == LIFE_BINS - 1 {
                    u64::MAX
                } else {
                    1u64.checked_shl(k as u32).unwrap_or(u64::MAX - 1)
                });
            }
        }
        None
    }

    /// Grow the per-group counters to `groups` groups.
    pub fn ensure_groups(&mut self, groups: usize) {
        if self.group_user.len() < groups {
            self.group_user.resize(groups, 0);
            self.group_gc.resize(groups, 0);
            self.group_victims.resize(groups, GroupVictims::default());
        }
    }

    /// Steady-state WAF: after warm-up, `None` if warm-up was not passed.
    pub fn steady_waf(&self) -> Option<f64> {
        self.warm.and_then(|w| self.c.waf_since(&w))
    }
}
