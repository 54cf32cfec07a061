//! Sealed segments of each group in seal order: the queue behind the
//! "oldest segment of a group" rules (NoDaP's and DOGI's expired-segment
//! victims, size caps). Collected segments are dropped lazily: an entry
//! whose segment was erased or resealed since (its seal sequence changed)
//! is skipped when met.

use std::collections::VecDeque;

use super::Ctx;
use crate::ftl::{SegState, SegmentId};

/// Per-group FIFO of sealed segments with a live count per group.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct SealedFifo {
    fifo: Vec<VecDeque<(SegmentId, u64)>>,
    /// Sealed segments per group now.
    pub count: Vec<u32>,
}

impl SealedFifo {
    /// Queues for `groups` groups.
    pub fn new(groups: usize) -> Self {
        SealedFifo {
            fifo: vec![VecDeque::new(); groups],
            count: vec![0; groups],
        }
    }

    /// `seg` of group `g` was sealed (ignored beyond the tracked groups).
    pub fn sealed(&mut self, ctx: &Ctx, seg: SegmentId, g: usize) {
        if g < self.fifo.len() {
            self.fifo[g].push_back((seg, ctx.ftl.segs.seal_seq[seg as usize]));
            self.count[g] += 1;
        }
    }

    /// `seg` is being collected (call before the erase: its group is read).
    pub fn collected(&mut self, ctx: &Ctx, seg: SegmentId) {
        let g = ctx.ftl.segs.group[seg as usize] as usize;
        if g < self.fifo.len() {
            self.count[g] -= 1;
        }
    }

    /// Oldest sealed segment of group `g`, dropping stale entries.
    pub fn oldest(&mut self, ctx: &Ctx, g: usize) -> Option<SegmentId> {
        let segs = &ctx.ftl.segs;
        while let Some(&(s, seq)) = self.fifo[g].front() {
            let i = s as usize;
            if segs.state[i] == SegState::Sealed && segs.seal_seq[i] == seq {
                return Some(s);
            }
            self.fifo[g].pop_front();
        }
        None
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.fifo.iter().map(|q| q.capacity() * 16).sum::<usize>() + self.count.len() * 4
    }
}
