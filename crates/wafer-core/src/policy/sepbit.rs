//! `sepbit`: SepBIT, "Separating Data via Block Invalidation Time Inference
//! for Write Amplification Reduction in Log-Structured Storage" (Wang et al.,
//! FAST'22), as the Shiro (§II-B, §V) and DOGI (§2.2, Table 1) papers use it,
//! with the paper's own trace replayer (`trace_replay/.../placement/SepBIT.java`
//! in github.com/fallfish/sepbit) as the reference for what the text leaves
//! open.
//!
//! Six groups (the paper's Classes 1-6 are groups 0-5 here):
//! * user-written blocks: a block that overwrites one whose lifetime
//!   v = now - (previous write of the LBA) is below the threshold ℓ goes to
//!   group 0 (short-lived); new LBAs and long lifetimes to group 1 (§3.2);
//! * GC-written blocks from a group-0 victim go to group 2; others by age
//!   a = now - (last user write of the LBA): a < 4ℓ to group 3,
//!   4ℓ <= a < 16ℓ to group 4, else group 5 (§3.3);
//! * ℓ is the mean lifespan (collection time minus creation time) of the
//!   last 16 collected group-0 segments, recomputed every 16 such segments;
//!   ℓ = ∞ until then (so every overwrite starts short-lived).
//!
//! Victim selection: SepBIT defines none of its own; its evaluation uses
//! Greedy and Cost-Benefit, so it uses the configured selector (the papers
//! that compare against it use cost-benefit).
//!
//! `sepbit-ng` (Shiro §V-B, Fig. 9) keeps groups 0 and 1 and sends every
//! GC-written block to group 2.
//!
//! Two rules have the replayer's variant as an option (the `sepbit-replayer`
//! setup sets both):
//! * `user_test`: `exact` (default) tests the exact lifetime, from a per-LBA
//!   last-write table, against ℓ. `fifo` is the replayer's test: a FIFO of the
//!   most recent writes, capped at min(valid blocks, ℓ) entries (it shrinks
//!   by at most two per write), and a block is short-lived iff its previous
//!   write is still in the FIFO and its lifetime is below min(ℓ, FIFO size).
//!   The two differ while the FIFO is shorter than ℓ (start-up, and after ℓ
//!   grows) and when ℓ is above the valid block count.
//! * `lifespan_start`: a group-0 segment's life starts at its first write
//!   (`first-write`, default) or, as in the replayer, which opens the next
//!   segment of a class when it seals the last, at the previous seal of
//!   group 0 (`previous-seal`).
//!
//! Deviations: (1) the GC class follows the victim's own group (the
//! replayer's too); the prototype (`prototype/`) tests the previously
//! collected segment's class. (2) Under `fifo` the valid block count is the
//! number of LBAs written; the replayer's is its log's block count less the
//! garbage it has counted, which includes open segments' garbage and lags a
//! request behind.

use serde::{Deserialize, Serialize};

use std::collections::VecDeque;

use super::{Ctx, Event, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::error::Error;
use crate::features::LastWrite;
use crate::ftl::GroupId;
use crate::params;

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "sepbit",
    description: "SepBIT (FAST'22): user blocks by inferred lifetime vs ℓ, GC blocks by age in 4 classes; 6 groups",
    family: crate::policy::Family::RuleBased,
    needs_future: false,
    defaults: params::defaults::<Params>,
    build: |p, geo| {
        let p: Params = params::parse("sepbit", p)?;
        let bad = |k: &str, v: &str, known: &str| Error::Parameter {
            policy: "sepbit".into(),
            reason: format!("{k} = '{v}'; known: {known}"),
        };
        if !["exact", "fifo"].contains(&p.user_test.as_str()) {
            return Err(bad("user_test", &p.user_test, "exact, fifo"));
        }
        if !["first-write", "previous-seal"].contains(&p.lifespan_start.as_str()) {
            return Err(bad(
                "lifespan_start",
                &p.lifespan_start,
                "first-write, previous-seal",
            ));
        }
        Ok(Box::new(SepBit::new(p, geo)))
    },
};

/// SepBIT-NG (Shiro §V-B, Fig. 9): SepBIT's user separation, one GC group.
pub(super) const INFO_NG: PolicyInfo = PolicyInfo {
    name: "sepbit-ng",
    description:
        "SepBIT-NG (Shiro Fig. 9): SepBIT's two user groups, one GC group (no GC separation)",
    family: crate::policy::Family::RuleBased,
    needs_future: false,
    defaults: params::defaults::<Params>,
    build: |p, geo| {
        let mut s = SepBit::new(params::parse("sepbit-ng", p)?, geo);
        s.ng = true;
        Ok(Box::new(s))
    },
};

/// SepBIT's parameters (paper defaults).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Collected group-0 segments averaged into ℓ [segments].
    pub window_segments: u32,
    /// Age bounds of GC groups 3 and 4, as multiples of ℓ.
    pub age_multiples: [f64; 2],
    /// How a user write is tested: "exact" (lifetime vs ℓ) or "fifo" (the
    /// replayer's FIFO of recent writes).
    pub user_test: String,
    /// Start of a group-0 segment's lifespan: "first-write" or
    /// "previous-seal" (the replayer's).
    pub lifespan_start: String,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            window_segments: 16,
            age_multiples: [4.0, 16.0],
            user_test: "exact".into(),
            lifespan_start: "first-write".into(),
        }
    }
}

/// Marks an LBA whose last write has left the FIFO.
const OUT: u64 = u64::MAX;

/// The replayer's FIFO of recent user writes (`user_test = fifo`; UW's test).
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct RecentWrites {
    /// LBAs of the most recent writes, oldest first.
    lbas: VecDeque<u32>,
    /// Per LBA, the write number (1-based) of its write in the FIFO, or [`OUT`].
    pos: Vec<u64>,
    /// LBAs written so far (the valid block count without trims).
    written: u64,
}

impl RecentWrites {
    /// An empty FIFO for `logical_blocks` LBAs.
    pub(super) fn new(logical_blocks: u32) -> Self {
        RecentWrites {
            lbas: VecDeque::new(),
            pos: vec![OUT; logical_blocks as usize],
            written: 0,
        }
    }

    /// Whether a user write of `lba`, write number `id` (1-based; `first`:
    /// the LBA's first write), is short-lived under threshold `ell`; then
    /// the FIFO takes it and sheds at most two of its oldest entries while
    /// it holds more than min(LBAs written, ℓ).
    pub(super) fn test(&mut self, lba: u32, id: u64, first: bool, ell: f64) -> bool {
        if first {
            self.written += 1;
        }
        let prev = self.pos[lba as usize];
        let short = prev != OUT && ((id - prev) as f64) < ell.min(self.lbas.len() as f64);
        self.pos[lba as usize] = id;
        self.lbas.push_back(lba);
        if self.lbas.len() as f64 > (self.written as f64).min(ell) {
            let head = id + 1 - self.lbas.len() as u64;
            for (round, number) in (head..head + 2).enumerate() {
                if round == 1 && self.lbas.len() as f64 <= ell {
                    break;
                }
                let old = self.lbas.pop_front().expect("non-empty fifo");
                if self.pos[old as usize] == number {
                    self.pos[old as usize] = OUT;
                }
            }
        }
        short
    }

    /// Bytes held.
    pub(super) fn memory_bytes(&self) -> usize {
        self.lbas.capacity() * 4 + self.pos.capacity() * 8
    }
}

/// ℓ: the mean lifespan of the last `window` collected group-0 segments,
/// ∞ until there are that many (shared by SepBIT and its ablations UW, GW).
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct Ell {
    /// Threshold ℓ [user blocks].
    pub(super) ell: f64,
    window: u32,
    sum: u64,
    n: u32,
    /// `previous-seal` lifespans: when the open group-0 segment's life
    /// began, and that start for every sealed segment [user blocks].
    created: Option<(u64, Vec<u64>)>,
}

impl Ell {
    /// ℓ over `window` segments; lifespans from the previous group-0 seal if
    /// `previous_seal`, else from the segment's first write.
    pub(super) fn new(window: u32, previous_seal: bool, segments: u32) -> Self {
        Ell {
            ell: f64::INFINITY,
            window: window.max(1),
            sum: 0,
            n: 0,
            created: previous_seal.then(|| (0, vec![0; segments as usize])),
        }
    }

    /// Follow an engine event; true when ℓ was recomputed.
    pub(super) fn on_event(&mut self, ctx: &Ctx, ev: &Event) -> bool {
        match *ev {
            Event::Sealed { seg, group: 0 } => {
                if let Some((start, created)) = &mut self.created {
                    // group 0 seals on user writes: the replayer's clock has ticked
                    created[seg as usize] = *start;
                    *start = ctx.now() + 1;
                }
                false
            }
            Event::Collected { seg, .. } if ctx.ftl.segs.group[seg as usize] == 0 => {
                let s = seg as usize;
                let born = match &self.created {
                    Some((_, created)) => created[s],
                    None => ctx.ftl.segs.open_time[s],
                };
                self.sum += ctx.now().saturating_sub(born);
                self.n += 1;
                if self.n < self.window {
                    return false;
                }
                self.ell = self.sum as f64 / self.n as f64;
                self.sum = 0;
                self.n = 0;
                true
            }
            _ => false,
        }
    }

    /// ℓ if known.
    pub(super) fn get(&self) -> Option<f64> {
        self.ell.is_finite().then_some(self.ell)
    }

    /// Bytes held.
    pub(super) fn memory_bytes(&self) -> usize {
        self.created.as_ref().map_or(0, |(_, c)| c.capacity() * 8)
    }
}

/// SepBIT state.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct SepBit {
    p: Params,
    /// SepBIT-NG: every GC-written block goes to group 2.
    ng: bool,
    last: LastWrite,
    ell: Ell,
    /// [ℓ] as a lifetime-class bound (group 0 predicts a lifetime below ℓ).
    ell_bound: [u64; 1],
    /// The replayer's FIFO (`user_test = fifo`).
    fifo: Option<RecentWrites>,
}

impl SepBit {
    fn new(p: Params, geo: &crate::device::Geometry) -> Self {
        SepBit {
            ng: false,
            last: LastWrite::new(geo.logical_blocks),
            ell: Ell::new(
                p.window_segments,
                p.lifespan_start == "previous-seal",
                geo.segments,
            ),
            ell_bound: [u64::MAX],
            fifo: (p.user_test == "fifo").then(|| RecentWrites::new(geo.logical_blocks)),
            p,
        }
    }
}

impl Placement for SepBit {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        if self.ng {
            "sepbit-ng"
        } else {
            "sepbit"
        }
    }

    fn groups(&self) -> usize {
        if self.ng {
            3
        } else {
            6
        }
    }

    fn place_user(&mut self, _ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]) {
        for (w, g) in writes.iter().zip(out.iter_mut()) {
            let since = self.last.since(w.lba, w.time);
            let ell = self.ell.ell;
            let short = match &mut self.fifo {
                Some(f) => f.test(w.lba, w.time + 1, since.is_none(), ell),
                None => since.is_some_and(|v| (v as f64) < ell),
            };
            *g = if short { 0 } else { 1 };
        }
    }

    fn threshold(&self) -> Option<f64> {
        self.ell.get()
    }

    fn prefetch(&self, lba: u32) {
        self.last.prefetch(lba);
    }

    fn on_user_write(&mut self, lba: u32, time: u64, _group: GroupId) {
        self.last.record(lba, time);
    }

    fn place_gc(&mut self, ctx: &Ctx, b: &GcBlock) -> GroupId {
        if b.from_group == 0 || self.ng {
            return 2;
        }
        let age = self.last.since(b.lba, ctx.now()).unwrap_or(0) as f64;
        let ell = self.ell.ell;
        if age < self.p.age_multiples[0] * ell {
            3
        } else if age < self.p.age_multiples[1] * ell {
            4
        } else {
            5
        }
    }

    fn on_event(&mut self, ctx: &Ctx, ev: &Event) {
        if self.ell.on_event(ctx, ev) {
            self.ell_bound = [self.ell.ell.ceil() as u64];
        }
    }

    fn memory_bytes(&self) -> usize {
        self.last.memory_bytes()
            + self.fifo.as_ref().map_or(0, RecentWrites::memory_bytes)
            + self.ell.memory_bytes()
    }

    /// User writes: group 0 predicts "dies within ℓ", group 1 "lives ℓ or
    /// more". GC groups are chosen by age, not a lifetime claim.
    fn class_bounds(&self, _gc: bool) -> &[u64] {
        &self.ell_bound
    }

    fn predicted_class(&self, group: GroupId, gc: bool) -> Option<u8> {
        (!gc).then_some(group as u8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::DeviceConfig;
    use crate::ftl::Ftl;

    #[test]
    fn classifies_by_lifetime_then_by_age() {
        let geo = DeviceConfig {
            logical_blocks: 100,
            segment_blocks: 4,
            ..Default::default()
        }
        .geometry()
        .unwrap();
        let ftl = Ftl::new(geo, 6);
        let ctx = Ctx::new(&ftl);
        let mut s = SepBit::new(Params::default(), &geo);
        let w = |lba, time| UserWrite {
            lba,
            time,
            req_blocks: 1,
            req_offset: 0,
            ..Default::default()
        };
        let mut out = [9u16; 1];
        let mut write = |s: &mut SepBit, lba, time| {
            s.place_user(&ctx, &[w(lba, time)], &mut out);
            s.on_user_write(lba, time, out[0]);
            out[0]
        };
        assert_eq!(write(&mut s, 5, 0), 1, "a new LBA is long-lived");
        assert_eq!(
            write(&mut s, 5, 10),
            0,
            "ℓ = ∞ at first: an overwrite is short-lived"
        );
        s.ell.ell = 20.0;
        assert_eq!(write(&mut s, 5, 25), 0, "lifetime 15 < ℓ");
        assert_eq!(write(&mut s, 5, 50), 1, "lifetime 25 >= ℓ");
        // GC: victim of group 0 -> 2; else by age vs 4ℓ = 80 and 16ℓ = 320 (now = 0 in this FTL)
        let gc = |lba, from_group| GcBlock {
            lba,
            victim: 0,
            from_group,
        };
        assert_eq!(s.place_gc(&ctx, &gc(5, 0)), 2);
        s.last.record(7, 0);
        assert_eq!(s.place_gc(&ctx, &gc(7, 1)), 3);
    }
}
