//! Window-greedy victim selection as SepBIT's trace replayer does it
//! (`selection/WindowGreedy.java`): keep the oldest ⌈90%⌉ of the eligible
//! segments by last append (sealing order here) and take the one with the
//! fewest valid blocks among them (ties: the older). The youngest tenth,
//! whose blocks may still die, is spared. O(segments) per choice.

use super::{eligible, replayer_bound, VictimSelector};
use crate::ftl::{Ftl, SegmentId};

/// Share of the eligible segments in the window, oldest first [percent]
/// (the replayer's `WINDOW_PERCENTAGE`).
const WINDOW_PERCENT: u64 = 90;

/// Greedy over the oldest 90%.
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub struct WindowGreedy {
    cands: Vec<SegmentId>,
}

impl VictimSelector for WindowGreedy {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "window-greedy"
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
        let k = ((n as u64 * WINDOW_PERCENT).div_ceil(100) as usize).clamp(1, n);
        let seq = |s: SegmentId| ftl.segs.seal_seq[s as usize];
        if k < n {
            self.cands.select_nth_unstable_by_key(k - 1, |&s| seq(s));
        }
        self.cands[..k]
            .iter()
            .copied()
            .min_by_key(|&s| (ftl.segs.valid[s as usize], seq(s)))
    }

    fn remove(&mut self, _seg: SegmentId, _ftl: &Ftl) {}

    fn memory_bytes(&self) -> usize {
        self.cands.capacity() * 4
    }
}
