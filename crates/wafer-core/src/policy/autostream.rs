//! `autostream`: the multi-queue (MQ) stream assignment of AutoStream (Yang
//! et al., "AutoStream: Automatic stream management for multi-streamed SSDs",
//! SYSTOR'17), the baseline of the FIOS (§6.4, Fig. 15) paper. (The LSTM+KM
//! paper's "AutoStream" is a different thing, T'(t+1) = T(t): `lstm-km`
//! with `predictor=last`.)
//!
//! The address space is cut into chunks. Each chunk has a write count and
//! sits in one of `streams` LRU queues: queue q holds chunks whose count is in
//! [b^q, b^(q+1)) for base b (the last queue everything above). A write to a
//! chunk increments its count and moves it to the recent end of its
//! (possibly higher) queue: promotion. At every write the oldest chunk of
//! each queue q ≥ 1 is checked: one whose expiry time has passed is demoted
//! one queue (decay) and its expiry restarts. A block's stream is its
//! chunk's queue.
//!
//! Two variants, by parameters:
//! * `autostream` (wafer's default, unchanged): base 2, a fixed lifetime of
//!   one drive-write, the count reset to the lower bound of the queue a
//!   chunk is demoted to, the stream taken after the promotion, every block
//!   looked up by its own chunk.
//! * `autostream-pub`: the public implementation's behaviour [R] (the
//!   bdbm_drv multi-stream driver's `autostream.c`, read for the algorithm
//!   only): base 10 queues, a **dynamic** lifetime (`lifetime=hottest`:
//!   whenever a chunk's count exceeds the largest count so far, the
//!   lifetime becomes that chunk's re-access interval; it starts at the
//!   fixed lifetime), counts kept on demotion, the stream taken before the
//!   promotion, and one lookup per request (its first block's chunk, time
//!   counted in requests).
//!
//! Host-side streams on a multi-stream SSD (`policy::kit::streams`): GC keeps a
//! block in its stream's group.
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
    family: crate::policy::Family::Stream,
    needs_future: false,
    defaults: params::defaults::<Params>,
    build: |p, geo| {
        let p: Params = params::parse("autostream", p)?;
        build("autostream", &p, geo.logical_blocks)
    },
};

pub(super) const INFO_PUB: PolicyInfo = PolicyInfo {
    name: "autostream-pub",
    description: "AutoStream as its public code runs it: log10 queues, lifetime = the hottest chunk's re-access interval, counts kept on demotion, one lookup per request",
    family: crate::policy::Family::Stream,
    needs_future: false,
    defaults: params::defaults::<PubParams>,
    build: |p, geo| {
        let p: PubParams = params::parse("autostream-pub", p)?;
        build("autostream-pub", &p.0, geo.logical_blocks)
    },
};

fn build(
    name: &'static str,
    p: &Params,
    logical_blocks: u32,
) -> crate::error::Result<Box<dyn Placement>> {
    let bad = |reason: String| Error::Parameter {
        policy: name.into(),
        reason,
    };
    if p.streams == 0 || p.streams > 64 {
        return Err(bad(format!("streams = {}; must be 1..=64", p.streams)));
    }
    if p.chunk_blocks == 0 {
        return Err(bad("chunk_blocks must be >= 1".into()));
    }
    if !(p.lifetime_drive_writes.is_finite() && p.lifetime_drive_writes > 0.0) {
        return Err(bad(format!(
            "lifetime_drive_writes = {}; must be > 0",
            p.lifetime_drive_writes
        )));
    }
    if p.base < 2 {
        return Err(bad(format!("base = {}; must be >= 2 (2 or 10)", p.base)));
    }
    let lifetime = (p.lifetime_drive_writes * logical_blocks as f64).max(1.0) as u64;
    Ok(Box::new(AutoStream::new(name, p, logical_blocks, lifetime)))
}

/// How the demotion lifetime is set.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Lifetime {
    /// `lifetime_drive_writes`.
    Fixed,
    /// The re-access interval of the hottest chunk (public code).
    Hottest,
}

/// Which queue a write's stream is.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum StreamOf {
    /// The chunk's queue after this write's promotion.
    After,
    /// Its queue before the promotion (public code).
    Before,
}

/// Parameters.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Number of streams (queues, groups).
    pub streams: u32,
    /// Chunk size [blocks].
    pub chunk_blocks: u32,
    /// A chunk not written for this long is demoted [drive-writes] (with
    /// `lifetime=hottest`: the lifetime until a hottest chunk is known).
    pub lifetime_drive_writes: f64,
    /// Queue q holds counts in [base^q, base^(q+1)).
    pub base: u32,
    /// "fixed" or "hottest".
    pub lifetime: Lifetime,
    /// One lookup per request (its first block's chunk) instead of per block.
    pub per_request: bool,
    /// A demoted chunk's count drops to its new queue's lower bound.
    pub demote_reset: bool,
    /// "after" or "before" the promotion.
    pub stream: StreamOf,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            streams: 8,
            chunk_blocks: 256,
            lifetime_drive_writes: 1.0,
            base: 2,
            lifetime: Lifetime::Fixed,
            per_request: false,
            demote_reset: true,
            stream: StreamOf::After,
        }
    }
}

/// The public code's defaults (`autostream-pub`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PubParams(pub Params);

impl Default for PubParams {
    fn default() -> Self {
        PubParams(Params {
            base: 10,
            lifetime: Lifetime::Hottest,
            per_request: true,
            demote_reset: false,
            stream: StreamOf::Before,
            ..Params::default()
        })
    }
}

const NIL: u32 = u32::MAX;

/// Multi-queue state over flat per-chunk arrays.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct AutoStream {
    #[serde(with = "crate::codec::static_str")]
    name: crate::codec::Name,
    chunk_blocks: u32,
    lifetime: u64,
    base: u32,
    /// base^1, base^2, ... up to the last queue (within u32): a count's
    /// queue by comparisons instead of divisions.
    powers: Vec<u64>,
    hottest: bool,
    per_request: bool,
    demote_reset: bool,
    before: bool,
    count: Vec<u32>,
    queue: Vec<u8>,
    /// Time at which each chunk's current stay expires.
    exp: Vec<u64>,
    /// Time of each chunk's last write (`lifetime=hottest`).
    last: Vec<u64>,
    /// Largest count so far (`lifetime=hottest`).
    max_ref: u32,
    /// Writes (or requests) so far (`lifetime=hottest`, `per_request`).
    total: u64,
    /// Stream of the request being placed (`per_request`).
    req_stream: GroupId,
    /// LRU lists, head = most recent.
    next: Vec<u32>,
    prev: Vec<u32>,
    head: Vec<u32>,
    tail: Vec<u32>,
}

impl AutoStream {
    fn new(name: &'static str, p: &Params, logical_blocks: u32, lifetime: u64) -> Self {
        let chunks = (logical_blocks as usize).div_ceil(p.chunk_blocks as usize);
        let q = p.streams as usize;
        AutoStream {
            name,
            chunk_blocks: p.chunk_blocks,
            lifetime,
            base: p.base,
            powers: (1..q.max(1) as u32)
                .map_while(|k| {
                    (p.base as u64)
                        .checked_pow(k)
                        .filter(|&b| b <= u32::MAX as u64)
                })
                .collect(),
            hottest: p.lifetime == Lifetime::Hottest,
            per_request: p.per_request,
            demote_reset: p.demote_reset,
            before: p.stream == StreamOf::Before,
            count: vec![0; chunks],
            queue: vec![0; chunks],
            exp: vec![0; chunks],
            last: if p.lifetime == Lifetime::Hottest {
                vec![0; chunks]
            } else {
                Vec::new()
            },
            max_ref: 0,
            total: 0,
            req_stream: 0,
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

    /// Queue of a write count: floor(log_base(count)), capped.
    fn level(&self, count: u32) -> usize {
        let q = if self.base == 2 {
            (31 - count.max(1).leading_zeros()) as usize
        } else {
            self.powers
                .iter()
                .take_while(|&&b| b <= count as u64)
                .count()
        };
        q.min(self.head.len() - 1)
    }

    /// A write to chunk `c` at `now`; returns its stream.
    fn touch(&mut self, c: u32, now: u64) -> GroupId {
        let ci = c as usize;
        let before = self.queue[ci] as GroupId;
        let fresh = self.count[ci] == 0;
        self.count[ci] = self.count[ci].saturating_add(1);
        if self.hottest {
            if self.count[ci] > self.max_ref {
                self.max_ref = self.count[ci];
                if !fresh {
                    self.lifetime = (now - self.last[ci]).max(1);
                }
            }
            self.last[ci] = now;
        }
        if !fresh {
            self.unlink(c);
        }
        let q = self.level(self.count[ci]);
        self.push_head(c, q);
        self.exp[ci] = now + self.lifetime;
        for q in 1..self.head.len() {
            let t = self.tail[q];
            if t != NIL && self.exp[t as usize] < now {
                self.unlink(t);
                if self.demote_reset {
                    self.count[t as usize] = self.base.saturating_pow(q as u32 - 1);
                }
                self.push_head(t, q - 1);
                self.exp[t as usize] = now + self.lifetime;
            }
        }
        if self.before {
            before
        } else {
            self.queue[ci] as GroupId
        }
    }
}

impl Placement for AutoStream {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        self.name
    }
    fn groups(&self) -> usize {
        self.head.len()
    }
    fn place_user(&mut self, _ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]) {
        if self.per_request {
            for (w, g) in writes.iter().zip(out.iter_mut()) {
                if w.req_offset == 0 {
                    self.total += 1;
                    self.req_stream = self.touch(w.lba / self.chunk_blocks, self.total);
                }
                *g = self.req_stream;
            }
            return;
        }
        for (w, g) in writes.iter().zip(out.iter_mut()) {
            *g = self.touch(w.lba / self.chunk_blocks, w.time);
        }
    }
    fn place_gc(&mut self, _ctx: &Ctx, b: &GcBlock) -> GroupId {
        b.from_group
    }
    fn memory_bytes(&self) -> usize {
        self.count.len() * (4 + 1 + 8 + 4 + 4) + self.last.len() * 8
    }
    fn state(&self) -> Option<serde_json::Value> {
        self.hottest
            .then(|| serde_json::json!({"lifetime": self.lifetime, "max_ref": self.max_ref}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wafer_default(streams: u32) -> AutoStream {
        let p = Params {
            streams,
            chunk_blocks: 10,
            ..Params::default()
        };
        AutoStream::new("autostream", &p, 100, 50)
    }

    #[test]
    fn a_count_s_queue_is_floor_log_base_capped() {
        for (base, streams) in [(10, 16), (10, 4), (3, 32), (7, 2)] {
            let p = Params {
                streams,
                base,
                chunk_blocks: 10,
                ..Params::default()
            };
            let a = AutoStream::new("autostream", &p, 100, 50);
            let mut counts: Vec<u32> = (0..5000).collect();
            for k in 1..=20u32 {
                if let Some(b) = base.checked_pow(k) {
                    counts.extend([b - 1, b, b + 1]);
                }
            }
            counts.extend([u32::MAX - 1, u32::MAX]);
            for c in counts {
                let (mut q, mut x) = (0usize, c.max(1) / base);
                while x > 0 {
                    q += 1;
                    x /= base;
                }
                assert_eq!(
                    a.level(c),
                    q.min(streams as usize - 1),
                    "base {base}, count {c}"
                );
            }
        }
    }

    #[test]
    fn promotes_by_log2_count_and_decays_idle_chunks() {
        let mut a = wafer_default(4);
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

    #[test]
    fn public_variant_log10_hottest_lifetime_stream_before_promotion() {
        let p = Params {
            streams: 4,
            chunk_blocks: 10,
            ..PubParams::default().0
        };
        let mut a = AutoStream::new("autostream-pub", &p, 1000, 1_000_000);
        let mut t = 0;
        let mut write = |a: &mut AutoStream, c| {
            t += 1;
            a.touch(c, t)
        };
        for _ in 0..9 {
            write(&mut a, 0);
        }
        assert_eq!(a.queue[0], 0, "count 9 -> log10 queue 0");
        assert_eq!(
            write(&mut a, 0),
            0,
            "the 10th write's stream is the queue before promotion"
        );
        assert_eq!(a.queue[0], 1, "count 10 -> queue 1");
        // Chunk 0 is the hottest, re-accessed every step: lifetime 1.
        assert_eq!(a.lifetime, 1);
        // Idle: demoted from queue 1, count kept.
        write(&mut a, 3);
        write(&mut a, 3);
        assert_eq!(a.queue[0], 0);
        assert_eq!(a.count[0], 10, "counts are kept on demotion");
        // The next write promotes it straight back.
        assert_eq!(write(&mut a, 0), 0);
        assert_eq!(a.queue[0], 1);
    }

    #[test]
    fn per_request_lookup_uses_the_first_block() {
        let mut a = match build("autostream-pub", &PubParams::default().0, 1 << 12) {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        };
        let ftl = crate::ftl::Ftl::new(
            crate::device::DeviceConfig {
                logical_blocks: 1 << 12,
                segment_blocks: 16,
                ..Default::default()
            }
            .geometry()
            .unwrap(),
            1,
        );
        let w: Vec<UserWrite> = (0..4)
            .map(|i| UserWrite {
                lba: 250 + i,
                req_offset: i,
                req_blocks: 4,
                ..Default::default()
            })
            .collect();
        let mut out = [9; 4];
        a.place_user(&Ctx::new(&ftl), &w, &mut out);
        assert!(out.iter().all(|&g| g == out[0]), "{out:?}");
    }
}
