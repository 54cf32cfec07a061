//! Greedy victim selection: the sealed segment with the fewest valid blocks.
//!
//! Sealed segments sit in doubly linked lists, one per valid count (bucket
//! lists over flat `u32` arrays). An invalidation moves a segment one bucket
//! down in O(1); a choice takes the head of the lowest non-empty bucket, found
//! from a cached lower bound that only moves up while scanning, so a choice is
//! amortised O(1). Ties go to the segment that entered its bucket first.

use super::VictimSelector;
use crate::device::Geometry;
use crate::ftl::{Ftl, SegState, SegmentId};

const NIL: u32 = u32::MAX;

/// Bucket lists of sealed segments by valid count.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Greedy {
    head: Vec<u32>,
    tail: Vec<u32>,
    next: Vec<u32>,
    prev: Vec<u32>,
    /// Bucket each tracked segment is in, or NIL if untracked.
    bucket: Vec<u32>,
    /// No bucket below this one is non-empty.
    min: usize,
}

impl Greedy {
    /// Empty lists for a device of this shape.
    pub fn new(geo: &Geometry) -> Self {
        let b = geo.segment_blocks as usize + 1;
        let n = geo.segments as usize;
        Greedy {
            head: vec![NIL; b],
            tail: vec![NIL; b],
            next: vec![NIL; n],
            prev: vec![NIL; n],
            bucket: vec![NIL; n],
            min: b,
        }
    }

    #[inline(always)]
    fn push(&mut self, seg: u32, b: usize) {
        let s = seg as usize;
        self.bucket[s] = b as u32;
        self.next[s] = NIL;
        self.prev[s] = self.tail[b];
        if self.tail[b] == NIL {
            self.head[b] = seg;
        } else {
            self.next[self.tail[b] as usize] = seg;
        }
        self.tail[b] = seg;
        if b < self.min {
            self.min = b;
        }
    }

    #[inline(always)]
    fn unlink(&mut self, seg: u32) {
        let s = seg as usize;
        let b = self.bucket[s] as usize;
        let (p, n) = (self.prev[s], self.next[s]);
        if p == NIL {
            self.head[b] = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NIL {
            self.tail[b] = p;
        } else {
            self.prev[n as usize] = p;
        }
        self.bucket[s] = NIL;
    }
}

impl VictimSelector for Greedy {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "greedy"
    }

    fn on_seal(&mut self, seg: SegmentId, ftl: &Ftl) {
        self.push(seg, ftl.segs.valid[seg as usize] as usize);
    }

    #[inline(always)]
    fn on_invalidate(&mut self, seg: SegmentId, valid: u32) {
        if self.bucket[seg as usize] != NIL {
            self.unlink(seg);
            self.push(seg, valid as usize);
        }
    }

    fn select(&mut self, _ftl: &Ftl, max_valid: u32) -> Option<SegmentId> {
        while self.min < self.head.len() && self.min <= max_valid as usize {
            let seg = self.head[self.min];
            if seg != NIL {
                self.unlink(seg);
                return Some(seg);
            }
            self.min += 1;
        }
        None
    }

    fn remove(&mut self, seg: SegmentId, _ftl: &Ftl) {
        if self.bucket[seg as usize] != NIL {
            self.unlink(seg);
        }
    }

    fn check(&self, ftl: &Ftl) -> Result<(), String> {
        for (seg, &b) in self.bucket.iter().enumerate() {
            let sealed = ftl.segs.state[seg] == SegState::Sealed;
            if sealed != (b != NIL) || (sealed && b != ftl.segs.valid[seg]) {
                return Err(format!(
                    "greedy: segment {seg} ({:?}, {} valid) is in bucket {b}",
                    ftl.segs.state[seg], ftl.segs.valid[seg]
                ));
            }
        }
        if (0..self.min.min(self.head.len())).any(|b| self.head[b] != NIL) {
            return Err(format!(
                "greedy: a bucket below the cached minimum {} is not empty",
                self.min
            ));
        }
        Ok(())
    }

    fn memory_bytes(&self) -> usize {
        4 * (self.head.capacity()
            + self.tail.capacity()
            + self.next.capacity()
            + self.prev.capacity()
            + self.bucket.capacity())
    }
}
