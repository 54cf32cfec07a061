//! `equal-partition`: the "equal partition" stream assignment the FIOS paper
//! (§6, Fig. 11) compares against: the logical address space is cut into
//! `streams` equal ranges and a block's stream is the range it falls in.
//!
//! Host-side streams on a multi-stream SSD (docs/ARCHITECTURE.md): GC keeps a block in
//! its stream's group. Default 8 streams (FIOS notes 16 on recent drives;
//! set `streams` to match the device studied).

use serde::{Deserialize, Serialize};

use super::{Ctx, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::error::Error;
use crate::ftl::GroupId;
use crate::params;

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "equal-partition",
    description:
        "FIOS baseline: stream = which of N equal LBA ranges a block is in; GC keeps streams apart",
    family: crate::policy::Family::Stream,
    needs_future: false,
    defaults: params::defaults::<Params>,
    build: |p, geo| {
        let p: Params = params::parse("equal-partition", p)?;
        if p.streams == 0 || p.streams > 1024 {
            return Err(Error::Parameter {
                policy: "equal-partition".into(),
                reason: format!("streams = {}; must be 1..=1024", p.streams),
            });
        }
        Ok(Box::new(EqualPartition {
            streams: p.streams as u64,
            logical: geo.logical_blocks as u64,
        }))
    },
};

/// Parameters.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Number of streams (groups).
    pub streams: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params { streams: 8 }
    }
}

/// Stream by address range.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct EqualPartition {
    streams: u64,
    logical: u64,
}

impl Placement for EqualPartition {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "equal-partition"
    }
    fn groups(&self) -> usize {
        self.streams as usize
    }
    fn place_user(&mut self, _ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]) {
        for (w, g) in writes.iter().zip(out.iter_mut()) {
            *g = (w.lba as u64 * self.streams / self.logical) as GroupId;
        }
    }
    fn place_gc(&mut self, _ctx: &Ctx, b: &GcBlock) -> GroupId {
        b.from_group
    }
}
