//! `multiqueue`: AutoStream's MultiQueue (Yang et al., "AutoStream:
//! Automatic Stream Management for Multi-streamed SSDs", SYSTOR'17, §3.2),
//! as SepBIT's trace replayer implements it
//! (`trace_replay/.../placement/MultiQueue.java`), the reference here.
//!
//! The address space is cut into 1 MiB chunks (256 blocks). Each chunk
//! written joins queue ⌊ln(its write count)⌋ (capped at `classes - 2`), and
//! a user block goes to the group of its chunk's queue; GC writes go to the
//! last group (`classes - 1`). The device lifetime is the time since the
//! hottest chunk's previous write, taken when a chunk becomes the hottest; a
//! chunk not written within that lifetime expires: each chunk write checks
//! the head of every queue and moves an expired head down one queue (the
//! head of queue 0 to its tail), renewing its expiry. Time counts chunk
//! writes.
//!
//! The replayer's queues are insertion-ordered sets and its demotion does
//! not update the queue a chunk's blocks are placed by, so a demoted chunk
//! keeps its placement and may sit in two queues; both are kept here as
//! they are, since they decide which heads expire and so the lifetime.
//! No deviation from the replayer.

use serde::{Deserialize, Serialize};

use super::kit::classes::check_classes;
use super::{Ctx, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::ftl::GroupId;
use crate::params;

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "multiqueue",
    description: "AutoStream MultiQueue (SYSTOR'17) as in SepBIT's replayer: 1 MiB chunks in ln(write count) queues with expiry; GC writes apart; 6 groups",
    family: crate::policy::Family::RuleBased,
    needs_future: false,
    defaults: params::defaults::<Params>,
    build: |p, geo| {
        let p: Params = params::parse("multiqueue", p)?;
        check_classes("multiqueue", p.classes, 2)?;
        let chunk = p.chunk_blocks.max(1) as u64;
        Ok(Box::new(MultiQueue::new(
            p.classes as usize,
            chunk,
            (geo.logical_blocks as u64).div_ceil(chunk) as usize,
        )))
    },
};

/// MultiQueue's parameters (the replayer's defaults).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Groups: `classes - 1` queues and the GC group.
    pub classes: u32,
    /// Chunk size [blocks] (256: 1 MiB of 4 KiB blocks).
    pub chunk_blocks: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            classes: 6,
            chunk_blocks: 256,
        }
    }
}

const NIL: u32 = u32::MAX;
/// Not a member of the queue.
const OUT: u32 = u32::MAX - 1;

/// An insertion-ordered set of chunks (Java's `LinkedHashSet`): a doubly
/// linked list over chunk ids.
#[derive(serde::Serialize, serde::Deserialize)]
struct OrderedSet {
    head: u32,
    tail: u32,
    next: Vec<u32>,
    prev: Vec<u32>,
    len: usize,
}

impl OrderedSet {
    fn new(chunks: usize) -> Self {
        OrderedSet {
            head: NIL,
            tail: NIL,
            next: vec![OUT; chunks],
            prev: vec![OUT; chunks],
            len: 0,
        }
    }

    fn contains(&self, c: u32) -> bool {
        self.next[c as usize] != OUT
    }

    /// Append `c` unless it is a member already (then it keeps its place).
    fn add(&mut self, c: u32) {
        if self.contains(c) {
            return;
        }
        self.prev[c as usize] = self.tail;
        self.next[c as usize] = NIL;
        if self.tail == NIL {
            self.head = c;
        } else {
            self.next[self.tail as usize] = c;
        }
        self.tail = c;
        self.len += 1;
    }

    fn remove(&mut self, c: u32) {
        if !self.contains(c) {
            return;
        }
        let (p, n) = (self.prev[c as usize], self.next[c as usize]);
        if p == NIL {
            self.head = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NIL {
            self.tail = p;
        } else {
            self.prev[n as usize] = p;
        }
        self.next[c as usize] = OUT;
        self.prev[c as usize] = OUT;
        self.len -= 1;
    }
}

/// Never written.
const NEW: u64 = u64::MAX;

/// MultiQueue state.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct MultiQueue {
    classes: usize,
    chunk: u64,
    /// Per chunk: writes ([`NEW`] if never), time of the last write, expiry,
    /// and the queue its blocks are placed by.
    writes: Vec<u64>,
    last: Vec<u64>,
    expire: Vec<u64>,
    queue: Vec<u8>,
    queues: Vec<OrderedSet>,
    /// Chunk writes so far (the clock).
    total: u64,
    lifetime: u64,
    max_writes: u64,
    hottest: Option<u32>,
}

impl MultiQueue {
    fn new(classes: usize, chunk: u64, chunks: usize) -> Self {
        MultiQueue {
            classes,
            chunk,
            writes: vec![NEW; chunks],
            last: vec![0; chunks],
            expire: vec![0; chunks],
            queue: vec![0; chunks],
            queues: (0..classes).map(|_| OrderedSet::new(chunks)).collect(),
            total: 0,
            lifetime: 0,
            max_writes: 0,
            hottest: None,
        }
    }

    fn promote(&mut self, c: u32) {
        let i = c as usize;
        self.total += 1;
        let (writes, last, prev, q) = if self.writes[i] == NEW {
            (1, 0, None, 0)
        } else {
            let w = self.writes[i] + 1;
            let q = ((w as f64).ln() as usize).min(self.classes - 2);
            (w, self.last[i], Some(self.queue[i] as usize), q)
        };
        if writes > self.max_writes {
            self.hottest = Some(c);
            self.lifetime = self.total - last;
            self.max_writes = writes;
        }
        if let Some(p) = prev {
            self.queues[p].remove(c);
        }
        self.queues[q].add(c);
        self.writes[i] = writes;
        self.last[i] = self.total;
        self.expire[i] = self.total + self.lifetime;
        self.queue[i] = q as u8;
    }

    fn demote(&mut self) {
        for i in 0..self.queues.len() {
            let head = self.queues[i].head;
            if head == NIL || self.expire[head as usize] >= self.total {
                continue;
            }
            self.expire[head as usize] = self.total + self.lifetime;
            self.queues[i].remove(head);
            if self.hottest == Some(head) {
                let next = self.queues[i].head;
                if next != NIL {
                    self.max_writes = self.writes[next as usize];
                    self.hottest = Some(next);
                }
            }
            self.queues[i.saturating_sub(1)].add(head);
        }
    }
}

impl Placement for MultiQueue {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "multiqueue"
    }

    fn groups(&self) -> usize {
        self.classes
    }

    fn place_user(&mut self, _ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]) {
        for (w, g) in writes.iter().zip(out.iter_mut()) {
            if w.req_offset == 0 {
                let end = w.lba as u64 + w.req_blocks as u64;
                let mut c = w.lba as u64 / self.chunk;
                while c * self.chunk < end {
                    self.promote(c as u32);
                    self.demote();
                    c += 1;
                }
            }
            *g = self.queue[(w.lba as u64 / self.chunk) as usize] as GroupId;
        }
    }

    fn place_gc(&mut self, _ctx: &Ctx, _b: &GcBlock) -> GroupId {
        (self.classes - 1) as GroupId
    }

    fn state(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({
            "lifetime_chunk_writes": self.lifetime,
            "max_writes": self.max_writes,
            "queue_lengths": self.queues.iter().map(|q| q.len).collect::<Vec<_>>(),
        }))
    }

    fn memory_bytes(&self) -> usize {
        self.writes.capacity() * 25 + self.queues.len() * self.writes.capacity() * 8
    }
}
