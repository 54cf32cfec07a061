//! Cost-benefit victim selection (Rosenblum & Ousterhout, LFS, SOSP'91):
//! maximise benefit/cost = (1 - u) * age / (1 + u), with u the segment's valid
//! ratio and age the logical time since the segment was sealed (the write time
//! of its youngest block). A segment with no valid block is taken at once.
//!
//! The choice scans the sealed segments (O(segments) per GC, over flat arrays);
//! scores change with time, so no cheaper exact index exists.

use super::{best_by_score, VictimSelector};
use crate::ftl::{Ftl, SegmentId};

/// Stateless apart from the segments it has handed out.
#[derive(Default)]
pub struct CostBenefit;

impl VictimSelector for CostBenefit {
    fn name(&self) -> &'static str {
        "cost-benefit"
    }

    fn on_seal(&mut self, _seg: SegmentId, _ftl: &Ftl) {}

    fn select(&mut self, ftl: &Ftl, max_valid: u32) -> Option<SegmentId> {
        best_by_score(ftl, max_valid, score)
    }

    fn remove(&mut self, _seg: SegmentId, _ftl: &Ftl) {}

    fn memory_bytes(&self) -> usize {
        0
    }
}

/// LFS's benefit/cost of collecting a segment with valid ratio `u`, sealed
/// `age` ago.
#[inline(always)]
pub(crate) fn score(u: f64, age: f64, _erases: u32) -> f64 {
    (1.0 - u) * age / (1.0 + u)
}
