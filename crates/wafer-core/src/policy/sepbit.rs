//! `sepbit`: SepBIT, "Separating Data via Block Invalidation Time Inference
//! for Write Amplification Reduction in Log-Structured Storage" (Wang et al.,
//! FAST'22), as the Shiro (§II-B, §V) and DOGI (§2.2, Table 1) papers use it.
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
//! Deviations: (1) lifetimes are exact, from a per-LBA last-write table, where
//! SepBIT's prototype keeps a FIFO of the last ℓ written LBAs to save memory;
//! the classification rule is the same. (2) The GC class follows the victim's
//! own group; the prototype tests the previously collected segment's class.

use serde::{Deserialize, Serialize};

use super::{Ctx, Event, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::features::LastWrite;
use crate::ftl::GroupId;
use crate::params;

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "sepbit",
    description: "SepBIT (FAST'22): user blocks by inferred lifetime vs ℓ, GC blocks by age in 4 classes; 6 groups",
    defaults: params::defaults::<Params>,
    build: |p, geo| Ok(Box::new(SepBit::new(params::parse("sepbit", p)?, geo.logical_blocks))),
};

/// SepBIT-NG (Shiro §V-B, Fig. 9): SepBIT's user separation, one GC group.
pub(super) const INFO_NG: PolicyInfo = PolicyInfo {
    name: "sepbit-ng",
    description:
        "SepBIT-NG (Shiro Fig. 9): SepBIT's two user groups, one GC group (no GC separation)",
    defaults: params::defaults::<Params>,
    build: |p, geo| {
        let mut s = SepBit::new(params::parse("sepbit-ng", p)?, geo.logical_blocks);
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
}

impl Default for Params {
    fn default() -> Self {
        Params {
            window_segments: 16,
            age_multiples: [4.0, 16.0],
        }
    }
}

/// SepBIT state.
pub struct SepBit {
    p: Params,
    /// SepBIT-NG: every GC-written block goes to group 2.
    ng: bool,
    last: LastWrite,
    /// Threshold ℓ [user blocks].
    ell: f64,
    lifespan_sum: u64,
    lifespan_n: u32,
    /// [ℓ] as a lifetime-class bound (group 0 predicts a lifetime below ℓ).
    ell_bound: [u64; 1],
}

impl SepBit {
    fn new(p: Params, logical_blocks: u32) -> Self {
        SepBit {
            p,
            ng: false,
            last: LastWrite::new(logical_blocks),
            ell: f64::INFINITY,
            lifespan_sum: 0,
            lifespan_n: 0,
            ell_bound: [u64::MAX],
        }
    }
}

impl Placement for SepBit {
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
            let short = self
                .last
                .since(w.lba, w.time)
                .is_some_and(|v| (v as f64) < self.ell);
            *g = if short { 0 } else { 1 };
        }
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
        if age < self.p.age_multiples[0] * self.ell {
            3
        } else if age < self.p.age_multiples[1] * self.ell {
            4
        } else {
            5
        }
    }

    fn on_event(&mut self, ctx: &Ctx, ev: &Event) {
        if let Event::Collected { seg, .. } = *ev {
            let s = seg as usize;
            if ctx.ftl.segs.group[s] == 0 {
                self.lifespan_sum += ctx.now() - ctx.ftl.segs.open_time[s];
                self.lifespan_n += 1;
                if self.lifespan_n >= self.p.window_segments.max(1) {
                    self.ell = self.lifespan_sum as f64 / self.lifespan_n as f64;
                    self.ell_bound = [self.ell.ceil() as u64];
                    self.lifespan_sum = 0;
                    self.lifespan_n = 0;
                }
            }
        }
    }

    fn memory_bytes(&self) -> usize {
        self.last.memory_bytes()
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
        let mut s = SepBit::new(Params::default(), 100);
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
        s.ell = 20.0;
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
