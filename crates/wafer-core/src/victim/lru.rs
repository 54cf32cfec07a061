//! LRU victim selection as SepBIT's trace replayer does it
//! (`selection/Lru.java`): the eligible segment (one with an invalid block,
//! as all the replayer's candidates) appended to least recently.
//! A sealed segment's last append is the one that sealed it, so this is the
//! oldest eligible segment in sealing order (the `fifo` selector keeps a
//! queue for the same order; this one scans, O(segments) per choice, like
//! the replayer's sort).

use super::{replayer_bound, VictimSelector};
use crate::ftl::{Ftl, SegState, SegmentId};

/// Least recently appended first.
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub struct Lru;

impl VictimSelector for Lru {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "lru"
    }

    fn on_seal(&mut self, _seg: SegmentId, _ftl: &Ftl) {}

    fn select(&mut self, ftl: &Ftl, max_valid: u32) -> Option<SegmentId> {
        oldest(ftl, max_valid, |_| true)
    }

    fn remove(&mut self, _seg: SegmentId, _ftl: &Ftl) {}

    fn memory_bytes(&self) -> usize {
        0
    }
}

/// The eligible segment `keep` accepts that was sealed first (with an
/// invalid block, as the replayer's candidates).
pub(crate) fn oldest(ftl: &Ftl, max_valid: u32, keep: impl Fn(usize) -> bool) -> Option<SegmentId> {
    let max_valid = replayer_bound(ftl, max_valid);
    let segs = &ftl.segs;
    (0..segs.state.len())
        .filter(|&s| segs.state[s] == SegState::Sealed && segs.valid[s] <= max_valid && keep(s))
        .min_by_key(|&s| segs.seal_seq[s])
        .map(|s| s as SegmentId)
}
