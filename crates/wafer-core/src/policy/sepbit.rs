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
//! Four rules have the replayer's variant as an option (the `sepbit-replayer`
//! setup sets them all):
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
//! * `valid_count`, the valid blocks that cap the `fifo` test: the LBAs
//!   written (`written`, default) or the replayer's count of its log
//!   (`log`, [`LogValid`]: its blocks less the garbage it has counted, which
//!   holds the open segments' garbage and lags a request behind).
//! * `gc_age`: a moved block's age counts its last user write (`since-write`,
//!   default) or not (`access-id`, the replayer's `accessId - lastAccess`).
//!
//! `classes` (default 6, the replayer's `--setNumOpenSegments`) sets the GC
//! classes by age: group 3 below 4ℓ, each further group 4 times the previous
//! bound, the last one open-ended. The replayer's variants are policies of
//! their own: `bit-half` and `bit-double` (ℓ halved / doubled,
//! `BITHalf.java`, `BITDouble.java`) and `bit-gw` (GC classes 3-5 by age
//! against ℓ3 and ℓ3 + ℓ4, the mean lifespans of GC classes 3 and 4 themselves,
//! `BITGW.java`).
//!
//! Deviation: the GC class follows the victim's own group (the replayer's
//! too); the prototype (`prototype/`) tests the previously collected
//! segment's class.

use serde::{Deserialize, Serialize};

use super::kit::lifespan::Ell;
use super::kit::log_valid::{log_valid, LogValid};
use super::kit::recent_writes::RecentWrites;
use super::{Ctx, Event, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::error::Error;
use crate::features::LastWrite;
use crate::ftl::GroupId;
use crate::params;

/// Build SepBIT or one of its variants from checked parameters.
fn build(
    name: &'static str,
    variant: Variant,
    p: &serde_json::Value,
    geo: &crate::device::Geometry,
) -> crate::error::Result<Box<dyn Placement>> {
    let p: Params = params::parse(name, p)?;
    let bad = |k: &str, v: &str, known: &str| Error::Parameter {
        policy: name.into(),
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
    if !["since-write", "access-id"].contains(&p.gc_age.as_str()) {
        return Err(bad("gc_age", &p.gc_age, "since-write, access-id"));
    }
    let least = if variant == Variant::Gw { 6 } else { 4 };
    if p.classes < least || p.classes > 64 {
        return Err(Error::Parameter {
            policy: name.into(),
            reason: format!(
                "classes = {}; {name} needs {least}..=64 (user classes 0-1, the GC class of \
                 group-0 victims 2, GC classes by age from 3)",
                p.classes
            ),
        });
    }
    let log = log_valid(name, &p.valid_count)?;
    let mut s = SepBit::new(p, geo);
    s.name = name;
    s.variant = variant;
    s.log = log;
    if variant == Variant::Gw {
        // BITGW: every class has its own threshold (classes 3 and 4 bound
        // the GC ages), lifespans from the class's previous seal
        s.class_ell = (0..s.p.classes as GroupId)
            .map(|g| Ell::of_group(g, s.p.window_segments, true, geo.segments, g < 2))
            .collect();
    }
    Ok(Box::new(s))
}

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "sepbit",
    description: "SepBIT (FAST'22): user blocks by inferred lifetime vs ℓ, GC blocks by age in 4 classes; 6 groups",
    family: crate::policy::Family::RuleBased,
    needs_future: false,
    defaults: params::defaults::<Params>,
    build: |p, geo| build("sepbit", Variant::SepBit, p, geo),
};

/// SepBIT-NG (Shiro §V-B, Fig. 9): SepBIT's user separation, one GC group.
pub(super) const INFO_NG: PolicyInfo = PolicyInfo {
    name: "sepbit-ng",
    description:
        "SepBIT-NG (Shiro Fig. 9): SepBIT's two user groups, one GC group (no GC separation)",
    family: crate::policy::Family::RuleBased,
    needs_future: false,
    defaults: params::defaults::<Params>,
    build: |p, geo| build("sepbit-ng", Variant::Ng, p, geo),
};

/// BITHalf (the replayer's `placement/BITHalf.java`): SepBIT with ℓ half
/// the mean group-0 lifespan.
pub(super) const INFO_HALF: PolicyInfo = PolicyInfo {
    name: "bit-half",
    description:
        "SepBIT's BITHalf (its replayer): SepBIT with ℓ = half the mean group-0 lifespan; 6 groups",
    family: crate::policy::Family::RuleBased,
    needs_future: false,
    defaults: params::defaults::<Params>,
    build: |p, geo| build("bit-half", Variant::Half, p, geo),
};

/// BITDouble (`placement/BITDouble.java`): SepBIT with ℓ twice the mean
/// group-0 lifespan.
pub(super) const INFO_DOUBLE: PolicyInfo = PolicyInfo {
    name: "bit-double",
    description: "SepBIT's BITDouble (its replayer): SepBIT with ℓ = twice the mean group-0 lifespan; 6 groups",
    family: crate::policy::Family::RuleBased,
    needs_future: false,
    defaults: params::defaults::<Params>,
    build: |p, geo| build("bit-double", Variant::Double, p, geo),
};

/// BITGW (`placement/BITGW.java`): SepBIT's user separation; GC blocks
/// from group-0 victims to group 2, the others by age against the mean
/// lifespans ℓ3, ℓ4 of GC classes 3 and 4 themselves: a <= ℓ3 to group 3,
/// a <= ℓ3 + ℓ4 to group 4, else group 5.
pub(super) const INFO_GW: PolicyInfo = PolicyInfo {
    name: "bit-gw",
    description: "SepBIT's BITGW (its replayer): SepBIT's user split, GC classes by age against their own measured lifespans; 6 groups",
    family: crate::policy::Family::RuleBased,
    needs_future: false,
    defaults: params::defaults::<Params>,
    build: |p, geo| build("bit-gw", Variant::Gw, p, geo),
};

/// SepBIT and the variants of its replayer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
enum Variant {
    SepBit,
    Ng,
    Half,
    Double,
    Gw,
}

/// SepBIT's parameters (paper defaults).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Groups (the replayer's `--setNumOpenSegments`): user classes 0-1,
    /// group 2 for blocks from group-0 victims, GC classes by age from 3 to
    /// `classes - 1` (each bound `age_multiples[1] / age_multiples[0]` times
    /// the previous). At least 4.
    pub classes: u32,
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
    /// The valid-block count that caps the `fifo` test: "written" (LBAs
    /// written) or "log" (the replayer's log count).
    pub valid_count: String,
    /// A GC-moved block's age: "since-write" (user writes since its last
    /// write, that write included) or "access-id" (the replayer's:
    /// `accessId - lastAccess`, one less).
    pub gc_age: String,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            classes: 6,
            window_segments: 16,
            age_multiples: [4.0, 16.0],
            user_test: "exact".into(),
            lifespan_start: "first-write".into(),
            valid_count: "written".into(),
            gc_age: "since-write".into(),
        }
    }
}

/// SepBIT state.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct SepBit {
    #[serde(with = "crate::codec::static_str")]
    name: crate::codec::Name,
    p: Params,
    variant: Variant,
    last: LastWrite,
    ell: Ell,
    /// BITGW: each class's own threshold.
    class_ell: Vec<Ell>,
    /// The victim whose blocks are being moved, once its collection was
    /// counted (BITGW counts it before the moves, as the replayer).
    collecting: Option<crate::ftl::SegmentId>,
    /// [ℓ] as a lifetime-class bound (group 0 predicts a lifetime below ℓ).
    ell_bound: [u64; 1],
    /// The replayer's FIFO (`user_test = fifo`).
    fifo: Option<RecentWrites>,
    /// The replayer's valid-block count (`valid_count = log`).
    log: Option<LogValid>,
}

impl SepBit {
    fn new(p: Params, geo: &crate::device::Geometry) -> Self {
        SepBit {
            name: "sepbit",
            variant: Variant::SepBit,
            last: LastWrite::new(geo.logical_blocks),
            ell: Ell::new(
                p.window_segments,
                p.lifespan_start == "previous-seal",
                geo.segments,
            ),
            class_ell: Vec::new(),
            collecting: None,
            ell_bound: [u64::MAX],
            fifo: (p.user_test == "fifo").then(|| RecentWrites::new(geo.logical_blocks)),
            log: None,
            p,
        }
    }

    /// The threshold ℓ the rules use now.
    fn ell(&self) -> f64 {
        match self.variant {
            Variant::Half => self.ell.ell / 2.0,
            Variant::Double => self.ell.ell * 2.0,
            Variant::Gw => self.class_ell[0].ell,
            Variant::SepBit | Variant::Ng => self.ell.ell,
        }
    }

    /// A GC-moved block's age [user blocks].
    fn age(&self, lba: u32, now: u64) -> f64 {
        let a = self.last.since(lba, now).unwrap_or(0);
        if self.p.gc_age == "access-id" {
            a.saturating_sub(1) as f64
        } else {
            a as f64
        }
    }

    /// BITGW: count the collection of `seg` in its class's threshold.
    fn count_collection(&mut self, ctx: &Ctx, seg: crate::ftl::SegmentId) {
        let ev = Event::Collected { seg, valid: 0 };
        for e in &mut self.class_ell {
            e.on_event(ctx, &ev);
        }
    }
}

impl Placement for SepBit {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        self.name
    }

    fn groups(&self) -> usize {
        match self.variant {
            Variant::Ng => 3,
            _ => self.p.classes as usize,
        }
    }

    fn place_user(&mut self, ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]) {
        let ell = self.ell();
        for (w, g) in writes.iter().zip(out.iter_mut()) {
            let since = self.last.since(w.lba, w.time);
            let valid = self.log.as_mut().map(|l| {
                l.user_block(w);
                l.before_append(ctx, w.lba)
            });
            let short = match &mut self.fifo {
                Some(f) => f.test(w.lba, w.time + 1, since.is_none(), ell, valid),
                None => since.is_some_and(|v| (v as f64) < ell),
            };
            *g = if short { 0 } else { 1 };
        }
    }

    fn threshold(&self) -> Option<f64> {
        let ell = self.ell();
        ell.is_finite().then_some(ell)
    }

    fn prefetch(&self, lba: u32) {
        self.last.prefetch(lba);
    }

    fn on_user_write(&mut self, lba: u32, time: u64, _group: GroupId) {
        self.last.record(lba, time);
    }

    fn place_gc(&mut self, ctx: &Ctx, b: &GcBlock) -> GroupId {
        if b.from_group == 0 || self.variant == Variant::Ng {
            return 2;
        }
        let age = self.age(b.lba, ctx.now());
        if self.variant == Variant::Gw {
            if self.collecting != Some(b.victim) {
                self.collecting = Some(b.victim);
                self.count_collection(ctx, b.victim);
            }
            let (l3, l4) = (self.class_ell[3].ell, self.class_ell[4].ell);
            return if age <= l3 {
                3
            } else if age <= l3 + l4 {
                4
            } else {
                5
            };
        }
        let ell = self.ell();
        let step = self.p.age_multiples[1] / self.p.age_multiples[0];
        let mut base = self.p.age_multiples[0] * ell;
        let mut level = 3;
        while age >= base && level + 1 < self.p.classes {
            base *= step;
            level += 1;
        }
        level as GroupId
    }

    fn tracks_invalidations(&self) -> bool {
        self.log.is_some()
    }

    fn on_invalidate(&mut self, seg: crate::ftl::SegmentId, ftl: &crate::ftl::Ftl) {
        if let Some(l) = &mut self.log {
            l.invalidated(seg, ftl);
        }
    }

    fn on_event(&mut self, ctx: &Ctx, ev: &Event) {
        if let Some(l) = &mut self.log {
            l.on_event(ctx, ev);
        }
        if self.variant == Variant::Gw {
            match *ev {
                Event::Collected { seg, .. } => {
                    if self.collecting.take() != Some(seg) {
                        self.count_collection(ctx, seg);
                    }
                }
                _ => {
                    for e in &mut self.class_ell {
                        e.on_event(ctx, ev);
                    }
                }
            }
            self.ell_bound = [self.ell().ceil() as u64];
            return;
        }
        if self.ell.on_event(ctx, ev) {
            self.ell_bound = [self.ell().ceil() as u64];
        }
    }

    fn memory_bytes(&self) -> usize {
        self.last.memory_bytes()
            + self.fifo.as_ref().map_or(0, RecentWrites::memory_bytes)
            + self.ell.memory_bytes()
            + self.class_ell.iter().map(Ell::memory_bytes).sum::<usize>()
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
