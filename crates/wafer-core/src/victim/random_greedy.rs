//! Random-greedy victim selection as SepBIT's trace replayer does it
//! (`selection/RandomGreedy.java`): sample max(⌈20% of the eligible⌉, 2)
//! eligible segments without replacement and take the one with the fewest
//! valid blocks (ties: the lower id). Compare `d-choices`, which samples a
//! fixed d with replacement. Seeded from the run's seed; O(segments) per
//! choice. Deviation: wafer's generator, not `java.util.Random`.

use super::{eligible, replayer_bound, VictimSelector};
use crate::ftl::{Ftl, SegmentId};
use crate::rng::Rng;

/// Share of the eligible segments sampled [percent] (the replayer's `RANDOM_PERCENTAGE`).
const SAMPLE_PERCENT: u64 = 20;

/// Greedy over a random sample.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct RandomGreedy {
    rng: Rng,
    cands: Vec<SegmentId>,
}

impl RandomGreedy {
    /// Seeded from `seed`.
    pub fn new(seed: u64) -> Self {
        RandomGreedy {
            rng: Rng::derive(seed, 0x76),
            cands: Vec::new(),
        }
    }
}

impl VictimSelector for RandomGreedy {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "random-greedy"
    }

    fn on_seal(&mut self, _seg: SegmentId, _ftl: &Ftl) {}

    fn select(&mut self, ftl: &Ftl, max_valid: u32) -> Option<SegmentId> {
        eligible(
            ftl,
            replayer_bound(ftl, max_valid),
            |_| true,
            &mut self.cands,
        );
        let n = self.cands.len();
        if n == 0 {
            return None;
        }
        let k = ((n as u64 * SAMPLE_PERCENT).div_ceil(100).max(2) as usize).min(n);
        // partial Fisher-Yates: the first k entries become the sample
        for i in 0..k {
            let j = i + self.rng.below((n - i) as u64) as usize;
            self.cands.swap(i, j);
        }
        let valid = |s: SegmentId| ftl.segs.valid[s as usize];
        self.cands[..k]
            .iter()
            .copied()
            .min_by_key(|&s| (valid(s), s))
    }

    fn remove(&mut self, _seg: SegmentId, _ftl: &Ftl) {}

    fn memory_bytes(&self) -> usize {
        self.cands.capacity() * 4
    }
}
