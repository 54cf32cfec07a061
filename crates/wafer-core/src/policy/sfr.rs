//! `sfr`: AutoStream's SFR, sequentiality, frequency and recency (Yang et
//! al., "AutoStream: Automatic Stream Management for Multi-streamed SSDs",
//! SYSTOR'17, §3.3), as SepBIT's trace replayer implements it
//! (`trace_replay/.../placement/SFR.java`), the reference here.
//!
//! The address space is cut into 2 MiB chunks (512 blocks) with a write
//! count that halves every 16,384 user blocks without a write of the chunk
//! (recency) and grows by one per request that touches it (frequency). A
//! user block goes to group ⌊ln(its chunk's count)⌋ (capped at
//! `classes - 2`); a request that starts where the previous one ended
//! (sequential) takes the previous request's group instead. GC writes go to
//! the last group. No deviation from the replayer.

use serde::{Deserialize, Serialize};

use super::kit::classes::check_classes;
use super::{Ctx, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::ftl::GroupId;
use crate::params;

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "sfr",
    description: "AutoStream SFR (SYSTOR'17) as in SepBIT's replayer: 2 MiB chunks by decayed write count, sequential runs kept together; GC apart; 6 groups",
    family: crate::policy::Family::RuleBased,
    needs_future: false,
    defaults: params::defaults::<Params>,
    build: |p, geo| {
        let p: Params = params::parse("sfr", p)?;
        check_classes("sfr", p.classes, 2)?;
        let chunk = p.chunk_blocks.max(1) as u64;
        let chunks = (geo.logical_blocks as u64).div_ceil(chunk) as usize;
        Ok(Box::new(Sfr {
            classes: p.classes as usize,
            chunk,
            decay: p.decay_blocks.max(1),
            writes: vec![NEW; chunks],
            last: vec![0; chunks],
            prev_end: 0,
            prev_level: 0,
            sequential: false,
        }))
    },
};

/// SFR's parameters (the replayer's defaults).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Groups: `classes - 1` for user writes and the GC group.
    pub classes: u32,
    /// Chunk size [blocks] (512: 2 MiB of 4 KiB blocks).
    pub chunk_blocks: u32,
    /// Idle time that halves a chunk's count [user blocks] (64 MiB).
    pub decay_blocks: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            classes: 6,
            chunk_blocks: 512,
            decay_blocks: 16384,
        }
    }
}

/// Never written.
const NEW: u64 = u64::MAX;

/// SFR state.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Sfr {
    classes: usize,
    chunk: u64,
    decay: u64,
    /// Per chunk: decayed write count ([`NEW`] if never) and last write time [user blocks].
    writes: Vec<u64>,
    last: Vec<u64>,
    prev_end: u64,
    prev_level: usize,
    /// The request being placed started where the previous one ended.
    sequential: bool,
}

impl Sfr {
    fn promote(&mut self, c: usize, now: u64) {
        let (count, last) = match self.writes[c] {
            NEW => (0, now),
            w => (w, self.last[c]),
        };
        let halvings = (now - last) / self.decay;
        // the replayer divides by 2^halvings in floating point and truncates
        let count = (count as f64 / 2f64.powi(halvings.min(1 << 20) as i32)) as u64 + 1;
        self.writes[c] = count;
        self.last[c] = now;
    }
}

impl Placement for Sfr {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "sfr"
    }

    fn groups(&self) -> usize {
        self.classes
    }

    fn place_user(&mut self, _ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]) {
        for (w, g) in writes.iter().zip(out.iter_mut()) {
            let lba = w.lba as u64;
            if w.req_offset == 0 {
                let end = lba + w.req_blocks as u64;
                self.sequential = lba == self.prev_end;
                self.prev_end = end;
                // the replayer's clock: user blocks written before the request
                let now = w.time;
                let mut c = lba / self.chunk;
                while c * self.chunk < end {
                    self.promote(c as usize, now);
                    c += 1;
                }
            }
            let level = if self.sequential {
                self.prev_level
            } else {
                let count = self.writes[(lba / self.chunk) as usize];
                let l = ((count as f64).ln() as usize).min(self.classes - 2);
                self.prev_level = l;
                l
            };
            *g = level as GroupId;
        }
    }

    fn place_gc(&mut self, _ctx: &Ctx, _b: &GcBlock) -> GroupId {
        (self.classes - 1) as GroupId
    }

    fn memory_bytes(&self) -> usize {
        self.writes.capacity() * 16
    }
}
