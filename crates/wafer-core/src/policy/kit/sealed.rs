//! Sealed segments of each group in seal order: the queue behind the
//! "oldest segment of a group" rules (NoDaP's and DOGI's expired-segment
//! victims, size caps). Collected segments are dropped lazily: an entry
//! whose segment was erased or resealed since (its seal sequence changed)
//! is skipped when met.

use std::collections::VecDeque;

use crate::engine::Ctx;
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
            // A group whose victims are not taken oldest-first (DOGI's pool
            // groups) never pops its stale entries: drop them once they
            // outnumber the live ones, so the queue stays within twice the
            // group's sealed segments (order kept; `oldest` skips the same).
            if self.fifo[g].len() > 2 * self.count[g] as usize + 64 {
                let segs = &ctx.ftl.segs;
                self.fifo[g].retain(|&(s, seq)| {
                    segs.state[s as usize] == SegState::Sealed && segs.seal_seq[s as usize] == seq
                });
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::DeviceConfig;
    use crate::ftl::Ftl;

    #[test]
    fn a_group_collected_out_of_order_keeps_a_bounded_queue() {
        let geo = DeviceConfig {
            logical_blocks: 4000,
            segment_blocks: 4,
            ..Default::default()
        }
        .geometry()
        .unwrap();
        let mut ftl = Ftl::new(geo, 1);
        let mut q = SealedFifo::new(1);
        let n = geo.segments as usize;
        let mut seq = 0u64;
        // Seal segments round-robin and collect the newest-but-one each
        // time (never the front): stale entries pile up in the middle.
        for round in 0..20 * n {
            let s = round % n;
            seq += 1;
            ftl.segs.state[s] = SegState::Sealed;
            ftl.segs.seal_seq[s] = seq;
            q.sealed(&Ctx::new(&ftl), s as SegmentId, 0);
            if round >= 2 {
                let old = (round - 1) % n;
                if ftl.segs.state[old] == SegState::Sealed {
                    q.collected(&Ctx::new(&ftl), old as SegmentId);
                    ftl.segs.state[old] = SegState::Free;
                }
            }
            assert!(
                q.fifo[0].len() <= 2 * q.count[0] as usize + 66,
                "round {round}"
            );
        }
        // The oldest live entry is still found first.
        let want = (0..n)
            .filter(|&s| ftl.segs.state[s] == SegState::Sealed)
            .min_by_key(|&s| ftl.segs.seal_seq[s])
            .unwrap();
        assert_eq!(q.oldest(&Ctx::new(&ftl), 0), Some(want as SegmentId));
    }
}
