//! `fk`: future knowledge, the oracle of SepBIT's evaluation (Wang et al.,
//! FAST'22, §5.1 "FK"), as its trace replayer implements it
//! (`trace_replay/.../placement/FK.java`), the reference here: every block,
//! user- or GC-written, goes to group ⌊remaining lifetime / segment size⌋,
//! capped at `classes - 1`, so blocks that die within the same segment's
//! worth of writes share a group. A block that is never overwritten goes to
//! the last group.
//!
//! The remaining lifetimes come from wafer's lifetime annotation
//! ([`crate::future`]; the replayer reads a per-volume `.oracle` file made by
//! `annotate_future_knowledge.cc`), so `fk` is an oracle: the run annotates
//! its request stream first. Deviation: a trimmed block dies at its trim here;
//! the replayer's annotation has no trims.

use super::kit::classes::{check_classes, ClassCount};
use super::{Ctx, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::ftl::GroupId;
use crate::future::remaining;
use crate::params;

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "fk",
    description: "oracle: SepBIT's FK (FAST'22), remaining lifetime in segment sizes, from the annotated future; 6 groups",
    family: crate::policy::Family::Oracle,
    needs_future: true,
    defaults: params::defaults::<ClassCount>,
    build: |p, geo| {
        let p: ClassCount = params::parse("fk", p)?;
        check_classes("fk", p.classes, 1)?;
        Ok(Box::new(Fk {
            classes: p.classes as u64,
            seg_blocks: geo.segment_blocks as u64,
        }))
    },
};

/// FK state: nothing but the shape.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Fk {
    classes: u64,
    seg_blocks: u64,
}

impl Fk {
    #[inline(always)]
    fn group(&self, remaining: u64) -> GroupId {
        (remaining / self.seg_blocks).min(self.classes - 1) as GroupId
    }
}

impl Placement for Fk {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "fk"
    }

    fn groups(&self) -> usize {
        self.classes as usize
    }

    fn needs_future(&self) -> bool {
        true
    }

    fn place_user(&mut self, ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]) {
        for (i, (w, g)) in writes.iter().zip(out.iter_mut()).enumerate() {
            *g = self.group(remaining(ctx.batch_death(i), w.time));
        }
    }

    fn place_gc(&mut self, ctx: &Ctx, b: &GcBlock) -> GroupId {
        self.group(remaining(ctx.live_death(b.lba), ctx.now()))
    }
}
