//! `sfs`: SFS's data grouping (Min et al., "SFS: Random Write Considered
//! Harmful in Solid State Drives", FAST'12, §4.2), as SepBIT's trace
//! replayer implements it (`trace_replay/.../placement/SFS.java`), the
//! reference here.
//!
//! A block's hotness is its LBA's write count over the time since the LBA's
//! last user write (a new LBA is infinitely hot); a segment's hotness is its
//! valid blocks' counts summed over their summed ages. Every write, user or
//! GC, goes to the group whose centre is nearest its hotness (ties: the
//! higher group). Before each victim's blocks move, the centres are
//! re-clustered: three rounds of k-means (from the current centres) over the
//! hotness of the sealed segments, the victim included, centres then sorted
//! hottest first; with no more sealed segments than groups, the centres are
//! those segments' hotness (repeating). Times are trace microseconds (the
//! request's time), as in the replayer.
//!
//! Segment sums follow every append and invalidation
//! ([`Placement::tracks_blocks`]). Deviation: with no more sealed segments
//! than groups, the replayer takes them in its hash map's order, here in
//! segment id order.

use super::kit::classes::{check_classes, ClassCount};
use super::{BlockEvent, Ctx, Event, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::ftl::{Ftl, GroupId, SegState, SegmentId};
use crate::params;
use crate::victim::cost_hotness::Hotness;

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "sfs",
    description: "SFS (FAST'12) as in SepBIT's replayer: writes to the nearest of k hotness centres, re-clustered over segments at each GC; 6 groups",
    family: crate::policy::Family::RuleBased,
    needs_future: false,
    defaults: params::defaults::<ClassCount>,
    build: |p, geo| {
        let p: ClassCount = params::parse("sfs", p)?;
        check_classes("sfs", p.classes, 1)?;
        Ok(Box::new(Sfs {
            centers: vec![0.0; p.classes as usize],
            h: Hotness::new(geo),
            clustered_for: None,
            hot: Vec::new(),
            quantizations: 0,
        }))
    },
};

/// K-means rounds per re-clustering.
const ROUNDS: usize = 3;

/// SFS state.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Sfs {
    /// Hotness centres, hottest first.
    centers: Vec<f64>,
    /// Per-LBA write counts and times, per-segment sums (as cost-hotness).
    h: Hotness,
    /// The victim the centres were last re-clustered for.
    clustered_for: Option<SegmentId>,
    /// Scratch: segment hotness values.
    hot: Vec<f64>,
    quantizations: u64,
}

impl Sfs {
    /// The group whose centre is nearest `hotness` (ties: the higher group).
    fn nearest(&self, hotness: f64) -> GroupId {
        let mut best = (0, f64::MAX);
        for i in (0..self.centers.len()).rev() {
            let d = (self.centers[i] - hotness).abs();
            if d < best.1 {
                best = (i, d);
            }
        }
        best.0 as GroupId
    }

    /// The replayer's `segmentQuantization`.
    fn quantize(&mut self, ftl: &Ftl) {
        self.quantizations += 1;
        let now = (ftl.now_ns / 1000) as f64;
        self.hot.clear();
        for s in 0..ftl.segs.state.len() {
            if ftl.segs.state[s] == SegState::Sealed {
                let v = ftl.segs.valid[s] as f64;
                self.hot
                    .push(self.h.seg_count[s] / (v * now - self.h.seg_last_us[s]));
            }
        }
        let k = self.centers.len();
        if self.hot.is_empty() {
            return;
        }
        if self.hot.len() <= k {
            for i in 0..k {
                self.centers[i] = self.hot[i % self.hot.len()];
            }
        } else {
            let mut sum = vec![0.0; k];
            let mut n = vec![0usize; k];
            for _ in 0..ROUNDS {
                sum.fill(0.0);
                n.fill(0);
                for &h in &self.hot {
                    let mut best = (0, f64::MAX);
                    for (i, &c) in self.centers.iter().enumerate() {
                        let d = (h - c).abs();
                        if d < best.1 {
                            best = (i, d);
                        }
                    }
                    sum[best.0] += h;
                    n[best.0] += 1;
                }
                for i in 0..k {
                    self.centers[i] = if n[i] == 0 { 0.0 } else { sum[i] / n[i] as f64 };
                }
            }
        }
        // hottest first; NaN (a sealed segment with no valid block) sorts
        // above everything, as Java's Double.compare has it
        self.centers.sort_by(|a, b| java_cmp(*b, *a));
    }
}

/// Java's `Double.compare` (NaN greatest).
fn java_cmp(a: f64, b: f64) -> std::cmp::Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => std::cmp::Ordering::Equal,
        (true, false) => std::cmp::Ordering::Greater,
        (false, true) => std::cmp::Ordering::Less,
        _ => a.partial_cmp(&b).expect("no NaN"),
    }
}

impl Placement for Sfs {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "sfs"
    }

    fn groups(&self) -> usize {
        self.centers.len()
    }

    fn place_user(&mut self, _ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]) {
        for (w, g) in writes.iter().zip(out.iter_mut()) {
            let l = w.lba as usize;
            let hotness = if self.h.count[l] == 0 {
                f64::MAX
            } else {
                self.h.count[l] as f64 / ((w.req_time_ns / 1000) as f64 - self.h.last_us[l])
            };
            *g = self.nearest(hotness);
        }
    }

    fn place_gc(&mut self, ctx: &Ctx, b: &GcBlock) -> GroupId {
        if self.clustered_for != Some(b.victim) {
            self.clustered_for = Some(b.victim);
            self.quantize(ctx.ftl);
        }
        let l = b.lba as usize;
        let now = (ctx.ftl.now_ns / 1000) as f64;
        self.nearest(self.h.count[l] as f64 / (now - self.h.last_us[l]))
    }

    fn tracks_blocks(&self) -> bool {
        true
    }

    /// GC's and the user's writes read the LBA's count and time: start
    /// loading them early (they are far larger than the caches).
    fn prefetch(&self, lba: u32) {
        crate::prefetch::prefetch(&self.h.count, lba as usize);
        crate::prefetch::prefetch(&self.h.last_us, lba as usize);
    }

    fn on_block(&mut self, lba: u32, seg: SegmentId, ev: BlockEvent, ftl: &Ftl) {
        self.h.on_block(lba, seg, ev, ftl);
    }

    fn on_event(&mut self, ctx: &Ctx, ev: &Event) {
        if let Event::Collected { seg, .. } = *ev {
            // an empty victim moved nothing: re-cluster for it now
            if self.clustered_for != Some(seg) {
                self.quantize(ctx.ftl);
            }
            self.clustered_for = None;
            self.h.forget(seg);
        }
    }

    fn state(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({
            "centers": self.centers,
            "quantizations": self.quantizations,
        }))
    }

    fn memory_bytes(&self) -> usize {
        self.h.memory_bytes()
    }
}
