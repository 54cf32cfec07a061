//! `oracle-hotcold`: a perfect hot/cold split, for bounding any two-class
//! policy. A block (user- or GC-written) whose exact remaining lifetime is
//! below `threshold` goes to group 0 (hot), every other block to group 1;
//! the configured selector picks victims. Needs the run's lifetime
//! annotation ([`crate::future`]). Not from a paper: the reference point
//! the hot/cold classifiers of Shiro, SepBIT and MiDAS approximate.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{Ctx, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::error::Error;
use crate::ftl::GroupId;
use crate::future::remaining;
use crate::params;

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "oracle-hotcold",
    description: "oracle: perfect hot/cold split of user and GC blocks at a lifetime threshold (default one drive-write)",
    family: crate::policy::Family::Oracle,
    needs_future: true,
    defaults: params::defaults::<Params>,
    build: |p, geo| {
        let p: Params = params::parse("oracle-hotcold", p)?;
        let threshold = p.threshold.unwrap_or(geo.logical_blocks as u64);
        if threshold == 0 {
            return Err(Error::Parameter {
                policy: "oracle-hotcold".into(),
                reason: "threshold must be at least 1 user block".into(),
            });
        }
        Ok(Box::new(OracleHotCold { bounds: [threshold] }))
    },
};

/// Parameters.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Lifetime below which a block is hot [user blocks]; `null`: the
    /// logical capacity (one drive-write).
    pub threshold: Option<u64>,
}

/// The split.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct OracleHotCold {
    bounds: [u64; 1],
}

impl OracleHotCold {
    #[inline(always)]
    fn group(&self, lifetime: u64) -> GroupId {
        (lifetime >= self.bounds[0]) as GroupId
    }
}

impl Placement for OracleHotCold {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "oracle-hotcold"
    }
    fn groups(&self) -> usize {
        2
    }
    fn needs_future(&self) -> bool {
        true
    }
    fn place_user(&mut self, ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]) {
        for (i, (w, g)) in writes.iter().zip(out.iter_mut()).enumerate() {
            let d = ctx.batch_death(i);
            *g = self.group(remaining(d, w.time));
        }
    }
    fn place_gc(&mut self, ctx: &Ctx, b: &GcBlock) -> GroupId {
        let d = ctx.live_death(b.lba);
        self.group(remaining(d, ctx.now()))
    }
    fn class_bounds(&self, _gc: bool) -> &[u64] {
        &self.bounds
    }
    fn predicted_class(&self, group: GroupId, _gc: bool) -> Option<u8> {
        Some(group as u8)
    }
    fn state(&self) -> Option<Value> {
        Some(json!({"threshold": self.bounds[0]}))
    }
}
