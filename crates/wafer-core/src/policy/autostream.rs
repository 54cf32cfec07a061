//! `autostream`: the multi-queue (MQ) stream assignment of AutoStream (Yang
//! et al., "AutoStream: Automatic stream management for multi-streamed SSDs",
//! SYSTOR'17), the baseline of the FIOS (§6, Fig. 15) and LSTM+K-means papers.
//!
//! The address space is cut into chunks. Each chunk has a write count and
//! sits in one of `streams` LRU queues: queue q holds chunks whose count is in
//! [2^q, 2^(q+1)) (the last queue everything above). A write to a chunk
//! increments its count and moves it to the head of its (possibly higher)
//! queue: promotion. At every write the tail of each queue is checked: a chunk
//! not written for `lifetime` user blocks is demoted one queue, its count set
//! to that queue's lower bound and its clock restarted (decay). A block's
//! stream is its chunk's queue.
//!
//! Host-side streams on a multi-stream SSD (DESIGN.md): GC keeps a block in
//! its stream's group.
//!
//! Choices where the sources leave values open: chunk 1 MiB (256 blocks of
//! 4 KiB), 8 streams, lifetime one drive-write.

use serde::{Deserialize, Serialize};

use super::{Ctx, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::error::Error;
use crate::ftl::GroupId;
use crate::params;

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "autostream",
    description: "AutoStream multi-queue (SYSTOR'17): chunk write counts in log2 queues with promotion and decay",
    defaults: params::defaults::<Params>,
    build: |p, geo| {
        let p: Params = params::parse("autostream", p)?;
        let bad = |reason: String| Error::Parameter { policy: "autostream".into(), reason };
        if p.streams == 0 || p.streams > 64 {
            return Err(bad(format!("streams = {}; must be 1..=64", p.streams)));
        }
        if p.chunk_blocks == 0 {
            return Err(bad("chunk_blocks must be >= 1".into()));
        }
        if !(p.lifetime_drive_writes.is_finite() && p.lifetime_drive_writes > 0.0) {
            return Err(bad(format!("lifetime_drive_writes = {}; must be > 0", p.lifetime_drive_writes)));
        }
        let lifetime = (p.lifetime_drive_writes * geo.logical_blocks as f64).max(1.0) as u64;
        Ok(Box::new(AutoStream::new(&p, geo.logical_blocks, lifetime)))
    },
};

/// Parameters.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Number of streams (queues, groups).
    pub streams: u32,
    /// Chunk size [blocks].
    pub chunk_blocks: u32,
    /// A chunk not written for this long is demoted [drive-writes].
    pub lifetime_drive_writes: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            streams: 8,
            chunk_blocks: 256,
            lifetime_drive_writes: 1.0,
        }
    }
}

const NIL: u32 = u32::MAX;

/// Multi-queue state over flat per-chunk arrays.
pub struct AutoStream {
    chunk_blocks: u32,
    lifetime: u64,
    count: Vec<u32>,
    queue: Vec<u8>,
    last: Vec<u64>,
    /// LRU lists, head = most recent.
    next: Vec<u32>,
    prev: Vec<u32>,
    head: Vec<u32>,
    tail: Vec<u32>,
}

impl AutoStream {
    fn new(p: &Params, logical_blocks: u32, lifetime: u64) -> Self {
        let chunks = (logical_blocks as usize).div_ceil(p.chunk_blocks as usize);
        let q = p.streams as usize;
        AutoStream {
            chunk_blocks: p.chunk_blocks,
            lifetime,
            count: vec![0; chunks],
            queue: vec![0; chunks],
            last: vec![0; chunks],
            next: vec![NIL; chunks],
            prev: vec![NIL; chunks],
            head: vec![NIL; q],
            tail: vec![NIL; q],
        }
    }

    fn unlink(&mut self, c: u32) {
        let (q, p, n) = (
            self.queue[c as usize] as usize,
            self.prev[c as usize],
            self.next[c as usize],
        );
        if p == NIL {
            if self.head[q] == c {
                self.head[q] = n;
            }
        } else {
            self.next[p as usize] = n;
        }
        if n == NIL {
            if self.tail[q] == c {
                self.tail[q] = p;
            }
        } else {
            self.prev[n as usize] = p;
        }
        self.prev[c as usize] = NIL;
        self.next[c as usize] = NIL;
    }

    fn push_head(&mut self, c: u32, q: usize) {
        self.queue[c as usize] = q as u8;
        self.prev[c as usize] = NIL;
        self.next[c as usize] = self.head[q];
        if self.head[q] != NIL {
            self.prev[self.head[q] as usize] = c;
        } else {
            self.tail[q] = c;
        }
        self.head[q] = c;
    }

    /// Queue of a write count: floor(log2(count)), capped.
    fn level(&self, count: u32) -> usize {
        ((31 - count.max(1).leading_zeros()) as usize).min(self.head.len() - 1)
    }

    /// A write to chunk `c` at `now`; returns its stream.
    fn touch(&mut self, c: u32, now: u64) -> GroupId {
        let ci = c as usize;
        let fresh = self.count[ci] == 0;
        self.count[ci] = self.count[ci].saturating_add(1);
        if !fresh {
            self.unlink(c);
        }
        let q = self.level(self.count[ci]);
        self.push_head(c, q);
        self.last[ci] = now;
        for q in 1..self.head.len() {
            let t = self.tail[q];
            if t != NIL && now - self.last[t as usize] > self.lifetime {
                self.unlink(t);
                self.count[t as usize] = 1 << (q - 1);
                self.push_head(t, q - 1);
                self.last[t as usize] = now;
            }
        }
        self.queue[ci] as GroupId
    }
}

impl Placement for AutoStream {
    fn name(&self) -> &'static str {
        "autostream"
    }
    fn groups(&self) -> usize {
        self.head.len()
    }
    fn place_user(&mut self, _ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]) {
        for (w, g) in writes.iter().zip(out.iter_mut()) {
            *g = self.touch(w.lba / self.chunk_blocks, w.time);
        }
    }
    fn place_gc(&mut self, _ctx: &Ctx, b: &GcBlock) -> GroupId {
        b.from_group
    }
    fn memory_bytes(&self) -> usize {
        self.count.len() * (4 + 1 + 8 + 4 + 4)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn promotes_by_log2_count_and_decays_idle_chunks() {
        let p = Params {
            streams: 4,
            chunk_blocks: 10,
            lifetime_drive_writes: 1.0,
        };
        let mut a = AutoStream::new(&p, 100, 50);
        let mut t = 0;
        let mut write = |a: &mut AutoStream, c| {
            t += 1;
            a.touch(c, t)
        };
        assert_eq!(write(&mut a, 0), 0, "count 1 -> queue 0");
        assert_eq!(write(&mut a, 0), 1, "count 2 -> queue 1");
        write(&mut a, 0);
        assert_eq!(write(&mut a, 0), 2, "count 4 -> queue 2");
        for _ in 0..20 {
            write(&mut a, 0);
        }
        assert_eq!(a.queue[0], 3, "capped at the last queue");
        // chunk 0 idles past the lifetime: each write elsewhere may demote it once
        for _ in 0..60 {
            write(&mut a, 5);
        }
        assert_eq!(a.queue[0], 2, "demoted one queue after the lifetime");
        assert_eq!(a.count[0], 4);
    }
}
