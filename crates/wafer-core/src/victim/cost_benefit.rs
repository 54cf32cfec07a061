//! Cost-benefit victim selection (Rosenblum & Ousterhout, LFS, SOSP'91):
//! maximise benefit/cost = (1 - u) * age / (1 + u), with u the segment's valid
//! ratio and age the logical time since the segment was sealed (the write time
//! of its youngest block). A segment with no valid block is taken at once.
//!
//! The choice scans the sealed segments (O(segments) per GC, over flat arrays);
//! scores change with time, so no cheaper exact index exists.

use super::VictimSelector;
use crate::ftl::{Ftl, SegState, SegmentId};

/// Stateless apart from the segments it has handed out.
#[derive(Default)]
pub struct CostBenefit;

impl VictimSelector for CostBenefit {
    fn name(&self) -> &'static str {
        "cost-benefit"
    }

    fn on_seal(&mut self, _seg: SegmentId, _ftl: &Ftl) {}

    fn select(&mut self, ftl: &Ftl, max_valid: u32) -> Option<SegmentId> {
        let blocks = ftl.geo.segment_blocks as f64;
        let mut best: Option<(f64, SegmentId)> = None;
        for (seg, (&state, &valid)) in ftl.segs.state.iter().zip(&ftl.segs.valid).enumerate() {
            if state != SegState::Sealed || valid > max_valid {
                continue;
            }
            if valid == 0 {
                return Some(seg as SegmentId);
            }
            let u = valid as f64 / blocks;
            let age = (ftl.now - ftl.segs.seal_time[seg]) as f64 + 1.0;
            let score = (1.0 - u) * age / (1.0 + u);
            if best.is_none_or(|(b, _)| score > b) {
                best = Some((score, seg as SegmentId));
            }
        }
        best.map(|(_, s)| s)
    }

    fn remove(&mut self, _seg: SegmentId, _ftl: &Ftl) {}

    fn memory_bytes(&self) -> usize {
        0
    }
}
