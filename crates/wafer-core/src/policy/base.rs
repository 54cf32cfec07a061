//! `base`: no data separation. Every block, user- or GC-written, goes to one
//! group: the "Base" configuration the Shiro (§V) and DOGI (§5) papers
//! compare against. No parameters.

use super::{Ctx, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::ftl::GroupId;
use crate::params::{self, NoParams};

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "base",
    description: "no separation: one group for user and GC writes (Shiro/DOGI 'Base')",
    family: crate::policy::Family::Trivial,
    needs_future: false,
    defaults: params::defaults::<NoParams>,
    build: |p, _| {
        params::parse::<NoParams>("base", p)?;
        Ok(Box::new(Base))
    },
};

/// The single-group policy.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Base;

impl Placement for Base {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "base"
    }
    fn groups(&self) -> usize {
        1
    }
    #[inline(always)]
    fn place_user(&mut self, _ctx: &Ctx, _writes: &[UserWrite], out: &mut [GroupId]) {
        out.fill(0);
    }
    #[inline(always)]
    fn place_gc(&mut self, _ctx: &Ctx, _block: &GcBlock) -> GroupId {
        0
    }
    fn gc_group(&self, _from_group: GroupId) -> Option<GroupId> {
        Some(0)
    }
}
