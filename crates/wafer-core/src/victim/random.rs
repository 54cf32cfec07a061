//! Random victim selection: a uniformly random eligible segment, as SepBIT's
//! trace replayer's `Random` (`selection/Random.java`: shuffle the eligible
//! segments, take the first). Seeded from the run's seed; O(segments) per
//! choice. Deviation: wafer's generator, not `java.util.Random`.

use super::{eligible, replayer_bound, VictimSelector};
use crate::ftl::{Ftl, SegmentId};
use crate::rng::Rng;

/// Random choice among the eligible segments.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Random {
    rng: Rng,
    cands: Vec<SegmentId>,
}

impl Random {
    /// Seeded from `seed`.
    pub fn new(seed: u64) -> Self {
        Random {
            rng: Rng::derive(seed, 0x7a),
            cands: Vec::new(),
        }
    }
}

impl VictimSelector for Random {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "random"
    }

    fn on_seal(&mut self, _seg: SegmentId, _ftl: &Ftl) {}

    fn select(&mut self, ftl: &Ftl, max_valid: u32) -> Option<SegmentId> {
        eligible(
            ftl,
            replayer_bound(ftl, max_valid),
            |_| true,
            &mut self.cands,
        );
        if self.cands.is_empty() {
            return None;
        }
        Some(self.cands[self.rng.below(self.cands.len() as u64) as usize])
    }

    fn remove(&mut self, _seg: SegmentId, _ftl: &Ftl) {}

    fn memory_bytes(&self) -> usize {
        self.cands.capacity() * 4
    }
}
