//! `two-r`: "2R" separates GC-written blocks from user-written ones (two
//! groups), on the heuristic that a block that survived until GC lives long.
//! As described by the Shiro paper (§V-A, baseline [7]) and used in the SepBIT
//! and DOGI evaluations. No parameters.

use super::{Ctx, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::ftl::GroupId;
use crate::params::{self, NoParams};

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "two-r",
    description: "2R: user writes in group 0, GC writes in group 1",
    family: crate::policy::Family::RuleBased,
    needs_future: false,
    defaults: params::defaults::<NoParams>,
    build: |p, _| {
        params::parse::<NoParams>("two-r", p)?;
        Ok(Box::new(TwoR))
    },
};

/// User group 0, GC group 1.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct TwoR;

impl Placement for TwoR {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "two-r"
    }
    fn groups(&self) -> usize {
        2
    }
    #[inline(always)]
    fn place_user(&mut self, _ctx: &Ctx, _writes: &[UserWrite], out: &mut [GroupId]) {
        out.fill(0);
    }
    #[inline(always)]
    fn place_gc(&mut self, _ctx: &Ctx, _block: &GcBlock) -> GroupId {
        1
    }
}
