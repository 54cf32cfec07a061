//! Cost-hotness victim selection (Min et al., "SFS: Random Write Considered
//! Harmful in Solid State Drives", FAST'12, §4.3), as SepBIT's trace replayer
//! scores it (`selection/CostHotness.java`): maximise (1 - u) / (u · H), with
//! u the valid ratio and H the segment's hotness, the sum of its valid
//! blocks' write counts over the sum of their ages:
//! H = Σ count / (valid · now − Σ last-write time), times in trace
//! microseconds. A segment with no valid block is taken at once.
//!
//! Each LBA's write count (user writes) and last user-write time are kept
//! here, and each segment's sums over its valid blocks follow every append
//! and invalidation ([`VictimSelector::tracks_blocks`]). Deviation: the
//! replayer keeps those sums only under its SFS placement (under any other
//! every score is infinite and the order is its hash map's); here they hold
//! under every placement.

use super::{replayer_bound, BlockEvent, VictimSelector};
use crate::device::Geometry;
use crate::ftl::{Ftl, SegState, SegmentId};

/// SFS's hotness bookkeeping (also the `sfs` placement's): per-LBA write
/// counts and times, per-segment sums over the valid blocks.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Hotness {
    /// User writes of each LBA (0: never written).
    pub count: Vec<u32>,
    /// Time of each LBA's last user write [µs].
    pub last_us: Vec<f64>,
    /// Per segment, Σ count over its valid blocks.
    pub seg_count: Vec<f64>,
    /// Per segment, Σ last-write time over its valid blocks [µs].
    pub seg_last_us: Vec<f64>,
}

impl Hotness {
    /// Empty tables for a device of this shape.
    pub fn new(geo: &Geometry) -> Self {
        let (l, n) = (geo.logical_blocks as usize, geo.segments as usize);
        Hotness {
            count: vec![0; l],
            last_us: vec![0.0; l],
            seg_count: vec![0.0; n],
            seg_last_us: vec![0.0; n],
        }
    }

    /// Follow one block event (a user write also counts and times the LBA).
    #[inline]
    pub fn on_block(&mut self, lba: u32, seg: SegmentId, ev: BlockEvent, ftl: &Ftl) {
        let (l, s) = (lba as usize, seg as usize);
        match ev {
            BlockEvent::Invalidated => {
                self.seg_count[s] -= self.count[l] as f64;
                self.seg_last_us[s] -= self.last_us[l];
            }
            BlockEvent::UserWrite | BlockEvent::GcWrite => {
                if ev == BlockEvent::UserWrite {
                    self.count[l] += 1;
                    self.last_us[l] = (ftl.now_ns / 1000) as f64;
                }
                self.seg_count[s] += self.count[l] as f64;
                self.seg_last_us[s] += self.last_us[l];
            }
        }
    }

    /// A victim's blocks move out without invalidations: its sums restart
    /// at zero for its next life.
    pub fn forget(&mut self, seg: SegmentId) {
        self.seg_count[seg as usize] = 0.0;
        self.seg_last_us[seg as usize] = 0.0;
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.count.capacity() * 4
            + (self.last_us.capacity() + self.seg_count.capacity() + self.seg_last_us.capacity())
                * 8
    }
}

/// The selector: the hotness sums and the replayer's score.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct CostHotness {
    h: Hotness,
}

impl CostHotness {
    /// Empty tables for a device of this shape.
    pub fn new(geo: &Geometry) -> Self {
        CostHotness {
            h: Hotness::new(geo),
        }
    }
}

impl VictimSelector for CostHotness {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "cost-hotness"
    }

    fn on_seal(&mut self, _seg: SegmentId, _ftl: &Ftl) {}

    fn tracks_blocks(&self) -> bool {
        true
    }

    fn on_block(&mut self, lba: u32, seg: SegmentId, ev: BlockEvent, ftl: &Ftl) {
        self.h.on_block(lba, seg, ev, ftl);
    }

    fn select(&mut self, ftl: &Ftl, max_valid: u32) -> Option<SegmentId> {
        let blocks = ftl.geo.segment_blocks as f64;
        let max_valid = replayer_bound(ftl, max_valid);
        let now_us = (ftl.now_ns / 1000) as f64;
        let mut best: Option<(f64, SegmentId)> = None;
        for (s, (&state, &valid)) in ftl.segs.state.iter().zip(&ftl.segs.valid).enumerate() {
            if state != SegState::Sealed || valid > max_valid {
                continue;
            }
            if valid == 0 {
                best = Some((f64::INFINITY, s as SegmentId));
                break;
            }
            let u = valid as f64 / blocks;
            let hotness = self.h.seg_count[s] / (valid as f64 * now_us - self.h.seg_last_us[s]);
            let x = (1.0 - u) / (u * hotness);
            if best.is_none_or(|(b, _)| x > b || (b.is_nan() && !x.is_nan())) {
                best = Some((x, s as SegmentId));
            }
        }
        let (_, victim) = best?;
        self.h.forget(victim);
        Some(victim)
    }

    fn remove(&mut self, seg: SegmentId, _ftl: &Ftl) {
        self.h.forget(seg);
    }

    fn memory_bytes(&self) -> usize {
        self.h.memory_bytes()
    }
}
