//! `dac`: DAC, Dynamic dAta Clustering (Chiang, Lee & Chang, "Using Data
//! Clustering to Improve Cleaning Performance for Flash Memory",
//! Software: Practice and Experience 29(3), 1999, §3), as SepBIT's trace
//! replayer implements it (`trace_replay/.../placement/DAC.java`), the
//! reference here.
//!
//! Every LBA has a level, its class: a new LBA starts at 0, each user
//! overwrite promotes it one level (up to `classes - 1`), each GC move
//! demotes it one level (down to 0). Hot data climbs, cold data sinks.
//! No deviation from the replayer.

use super::kit::classes::{check_classes, ClassCount};
use super::{Ctx, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::ftl::GroupId;
use crate::params;

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "dac",
    description: "DAC (Chiang et al., SPE'99): per-LBA level, up one per overwrite, down one per GC move; 6 groups",
    family: crate::policy::Family::RuleBased,
    needs_future: false,
    defaults: params::defaults::<ClassCount>,
    build: |p, geo| {
        let p: ClassCount = params::parse("dac", p)?;
        check_classes("dac", p.classes, 2)?;
        Ok(Box::new(Dac {
            top: (p.classes - 1) as u8,
            level: vec![NEW; geo.logical_blocks as usize],
            classes: p.classes as usize,
        }))
    },
};

/// Level of an LBA never written.
const NEW: u8 = u8::MAX;

/// DAC state: one level per LBA.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Dac {
    top: u8,
    level: Vec<u8>,
    classes: usize,
}

impl Placement for Dac {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "dac"
    }

    fn groups(&self) -> usize {
        self.classes
    }

    fn place_user(&mut self, _ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]) {
        for (w, g) in writes.iter().zip(out.iter_mut()) {
            let l = &mut self.level[w.lba as usize];
            *l = if *l == NEW { 0 } else { (*l + 1).min(self.top) };
            *g = *l as GroupId;
        }
    }

    fn place_gc(&mut self, _ctx: &Ctx, b: &GcBlock) -> GroupId {
        let l = &mut self.level[b.lba as usize];
        *l = if *l == NEW { 0 } else { l.saturating_sub(1) };
        *l as GroupId
    }

    fn memory_bytes(&self) -> usize {
        self.level.capacity()
    }
}
