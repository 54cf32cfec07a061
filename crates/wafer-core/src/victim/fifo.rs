//! FIFO victim selection: the segment sealed longest ago (the log's tail, as
//! in a circular log; "LRW" in Desnoyers' analysis); with an eligibility
//! bound, the oldest eligible one. Segments chosen by a
//! policy are skipped lazily: a queue entry is stale when the segment's seal
//! tag no longer matches.

use std::collections::VecDeque;

use super::VictimSelector;
use crate::device::Geometry;
use crate::ftl::{Ftl, SegState, SegmentId};

/// Sealing-order queue of (segment, seal tag).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Fifo {
    queue: VecDeque<(SegmentId, u64)>,
}

impl Fifo {
    /// Empty queue sized for the device.
    pub fn new(geo: &Geometry) -> Self {
        Fifo {
            queue: VecDeque::with_capacity(geo.segments as usize),
        }
    }
}

impl VictimSelector for Fifo {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "fifo"
    }

    fn on_seal(&mut self, seg: SegmentId, ftl: &Ftl) {
        self.queue.push_back((seg, ftl.segs.seal_seq[seg as usize]));
    }

    fn select(&mut self, ftl: &Ftl, max_valid: u32) -> Option<SegmentId> {
        let current = |&(seg, tag): &(SegmentId, u64)| {
            let s = seg as usize;
            ftl.segs.state[s] == SegState::Sealed && ftl.segs.seal_seq[s] == tag
        };
        // Drop stale entries at the front, then take the oldest eligible one.
        while self.queue.front().is_some_and(|e| !current(e)) {
            self.queue.pop_front();
        }
        let i = self
            .queue
            .iter()
            .position(|e| current(e) && ftl.segs.valid[e.0 as usize] <= max_valid)?;
        self.queue.remove(i).map(|(seg, _)| seg)
    }

    fn remove(&mut self, _seg: SegmentId, _ftl: &Ftl) {}

    fn memory_bytes(&self) -> usize {
        self.queue.capacity() * 16
    }
}
