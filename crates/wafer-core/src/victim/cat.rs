//! Cost-Age-Times (CAT) victim selection (Chiang, Lee & Chang, "Using data
//! clustering to improve cleaning performance for flash memory", Software:
//! Practice and Experience 1999): the sealed segment with the lowest
//! cleaning cost u/(1-u) x 1/age x erases, so cold, little-worn segments with
//! few valid blocks go first (wear is part of the choice).
//!
//! u = valid ratio, age = logical time since sealing + 1, erases = the
//! segment's erase count + 1 (+1 so that never-erased segments still compare).
//! A segment with no valid block costs 0 and is taken at once. O(segments)
//! per choice, like cost-benefit.

use super::{best_by_score, VictimSelector};
use crate::ftl::{Ftl, SegmentId};

/// Stateless scan.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Cat;

impl VictimSelector for Cat {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "cat"
    }

    fn on_seal(&mut self, _seg: SegmentId, _ftl: &Ftl) {}

    fn select(&mut self, ftl: &Ftl, max_valid: u32) -> Option<SegmentId> {
        // Lowest cost = highest negated cost.
        best_by_score(ftl, max_valid, |u, age, erases| {
            -(u / (1.0 - u).max(1e-12) / age * (erases as f64 + 1.0))
        })
    }

    fn remove(&mut self, _seg: SegmentId, _ftl: &Ftl) {}

    fn memory_bytes(&self) -> usize {
        0
    }
}
