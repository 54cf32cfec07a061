//! FIFO victim selection: the segment sealed longest ago (the log's tail, as
//! in a circular log; "LRW" in Desnoyers' analysis). Segments chosen by a
//! policy are skipped lazily: a queue entry is stale when the segment's seal
//! tag no longer matches.

use std::collections::VecDeque;

use super::VictimSelector;
use crate::device::Geometry;
use crate::ftl::{Ftl, SegState, SegmentId};

/// Sealing-order queue of (segment, seal tag).
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
    fn name(&self) -> &'static str {
        "fifo"
    }

    fn on_seal(&mut self, seg: SegmentId, ftl: &Ftl) {
        self.queue.push_back((seg, ftl.segs.seal_seq[seg as usize]));
    }

    fn select(&mut self, ftl: &Ftl) -> Option<SegmentId> {
        while let Some((seg, tag)) = self.queue.pop_front() {
            let s = seg as usize;
            if ftl.segs.state[s] == SegState::Sealed && ftl.segs.seal_seq[s] == tag {
                return Some(seg);
            }
        }
        None
    }

    fn remove(&mut self, _seg: SegmentId, _ftl: &Ftl) {}

    fn memory_bytes(&self) -> usize {
        self.queue.capacity() * 16
    }
}
