//! Randomized greedy, "d-choices" (Van Houdt, "A mean field model for a class
//! of garbage collection algorithms in flash-based solid state drives",
//! SIGMETRICS'13): sample `d` sealed segments uniformly (with replacement)
//! and collect the one with the fewest valid blocks. O(d) per choice; d = 1
//! is random selection, large d approaches greedy. Named `d-choices` (d = 10)
//! or `d-choices:D`. Seeded from the run's seed. With an eligibility bound
//! (log-structured mode) and no eligible sample, the fewest-valid eligible
//! segment is taken.

use super::VictimSelector;
use crate::ftl::{Ftl, SegmentId};
use crate::rng::Rng;

const NIL: u32 = u32::MAX;

/// The sealed segments as a dense array (swap-remove), for uniform sampling.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct DChoices {
    d: u32,
    ids: Vec<SegmentId>,
    pos: Vec<u32>,
    rng: Rng,
}

impl DChoices {
    /// `d` samples per choice, for `segments` segments.
    pub fn new(d: u32, segments: u32, seed: u64) -> Self {
        DChoices {
            d: d.max(1),
            ids: Vec::with_capacity(segments as usize),
            pos: vec![NIL; segments as usize],
            rng: Rng::derive(seed, 0xdc),
        }
    }

    fn take(&mut self, seg: SegmentId) {
        let i = self.pos[seg as usize];
        if i == NIL {
            return;
        }
        let last = *self.ids.last().expect("tracked segment is in the list");
        self.ids.swap_remove(i as usize);
        if last != seg {
            self.pos[last as usize] = i;
        }
        self.pos[seg as usize] = NIL;
    }
}

impl VictimSelector for DChoices {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "d-choices"
    }

    fn on_seal(&mut self, seg: SegmentId, _ftl: &Ftl) {
        self.pos[seg as usize] = self.ids.len() as u32;
        self.ids.push(seg);
    }

    fn select(&mut self, ftl: &Ftl, max_valid: u32) -> Option<SegmentId> {
        if self.ids.is_empty() {
            return None;
        }
        let valid = |s: SegmentId| ftl.segs.valid[s as usize];
        let mut best = None::<SegmentId>;
        for _ in 0..self.d {
            let s = self.ids[self.rng.below(self.ids.len() as u64) as usize];
            if valid(s) <= max_valid && best.is_none_or(|b| valid(s) < valid(b)) {
                best = Some(s);
            }
        }
        // No eligible segment among the samples: the fewest-valid eligible one.
        let best = best.or_else(|| {
            self.ids
                .iter()
                .copied()
                .filter(|&s| valid(s) <= max_valid)
                .min_by_key(|&s| valid(s))
        })?;
        self.take(best);
        Some(best)
    }

    fn remove(&mut self, seg: SegmentId, _ftl: &Ftl) {
        self.take(seg);
    }

    fn memory_bytes(&self) -> usize {
        self.ids.capacity() * 4 + self.pos.capacity() * 4
    }
}
