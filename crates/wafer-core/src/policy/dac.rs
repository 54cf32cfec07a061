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

use serde::{Deserialize, Serialize};

use super::{Ctx, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::error::Error;
use crate::ftl::GroupId;
use crate::params;

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "dac",
    description: "DAC (Chiang et al., SPE'99): per-LBA level, up one per overwrite, down one per GC move; 6 groups",
    family: crate::policy::Family::RuleBased,
    needs_future: false,
    defaults: params::defaults::<Params>,
    build: |p, geo| {
        let p: Params = params::parse("dac", p)?;
        check_classes("dac", p.classes, 2)?;
        Ok(Box::new(Dac {
            top: (p.classes - 1) as u8,
            level: vec![NEW; geo.logical_blocks as usize],
            classes: p.classes as usize,
        }))
    },
};

/// An error unless `classes` is in `min..=64`.
pub(super) fn check_classes(policy: &str, classes: u32, min: u32) -> crate::error::Result<()> {
    if (min..=64).contains(&classes) {
        return Ok(());
    }
    Err(Error::Parameter {
        policy: policy.into(),
        reason: format!("classes = {classes}; must be {min}..=64"),
    })
}

/// The parameters of the replayer's schemes that take only a group count
/// (DAC, FADaC, FK, SFS), with the replayer's default.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Groups (DAC: levels, one group each; SFS: hotness clusters), the
    /// replayer's `--setNumOpenSegments`.
    pub classes: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params { classes: 6 }
    }
}

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
