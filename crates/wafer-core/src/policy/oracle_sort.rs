//! `oracle-sort`: groups by death time, for bounding any policy. Time is
//! cut into windows of `window` user blocks; a block (user- or GC-written)
//! whose exact death falls in window k goes to group k mod `groups`, so a
//! segment holds blocks that die together and is all garbage once its
//! window has passed. Blocks that die `groups - 1` windows or more ahead
//! (or never) share one more group, the last. The configured selector picks
//! victims (greedy takes the dead segments first). Needs the run's lifetime
//! annotation ([`crate::future`]). In the spirit of the "future knowledge"
//! baselines of SepBIT (FK) and Lange et al.'s death-time sorting; window
//! and group count are ours: by default 8 windows of 1/4 drive-write
//! (two drive-writes ahead).

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{Ctx, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::error::Error;
use crate::ftl::GroupId;
use crate::future::NEVER;
use crate::params;

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "oracle-sort",
    description: "oracle: blocks grouped by the window of their exact death time (8 windows of 1/4 drive-write), far deaths in one cold group",
    family: crate::policy::Family::Oracle,
    needs_future: true,
    defaults: params::defaults::<Params>,
    build: |p, geo| {
        let p: Params = params::parse("oracle-sort", p)?;
        let window = p.window.unwrap_or((geo.logical_blocks as u64 / 4).max(1));
        if window == 0 || !(2..=1024).contains(&p.groups) {
            return Err(Error::Parameter {
                policy: "oracle-sort".into(),
                reason: format!(
                    "window must be at least 1 user block and groups in 2..=1024 (got {window}, {})",
                    p.groups
                ),
            });
        }
        Ok(Box::new(OracleSort {
            window,
            groups: p.groups as u64,
        }))
    },
};

/// Parameters.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Death-time windows (groups besides the far group).
    pub groups: u32,
    /// Window length [user blocks]; `null`: 1/4 of the logical capacity.
    pub window: Option<u64>,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            groups: 8,
            window: None,
        }
    }
}

/// The sort.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct OracleSort {
    window: u64,
    groups: u64,
}

impl OracleSort {
    #[inline(always)]
    fn group(&self, death: u64, now: u64) -> GroupId {
        let (k, now_k) = (death / self.window, now / self.window);
        if death == NEVER || k >= now_k + self.groups - 1 {
            self.groups as GroupId
        } else {
            (k % self.groups) as GroupId
        }
    }
}

impl Placement for OracleSort {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "oracle-sort"
    }
    fn groups(&self) -> usize {
        self.groups as usize + 1
    }
    fn needs_future(&self) -> bool {
        true
    }
    fn place_user(&mut self, ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]) {
        for (i, (w, g)) in writes.iter().zip(out.iter_mut()).enumerate() {
            let d = ctx.batch_death(i);
            *g = self.group(d, w.time);
        }
    }
    fn place_gc(&mut self, ctx: &Ctx, b: &GcBlock) -> GroupId {
        let d = ctx.live_death(b.lba);
        self.group(d, ctx.now())
    }
    fn state(&self) -> Option<Value> {
        Some(json!({"window": self.window, "groups": self.groups}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_cycle_and_far_deaths_share_the_last_group() {
        let o = OracleSort {
            window: 10,
            groups: 4,
        };
        assert_eq!(o.group(5, 0), 0);
        assert_eq!(o.group(15, 0), 1);
        assert_eq!(o.group(29, 0), 2);
        assert_eq!(o.group(30, 0), 4, "3 windows ahead is far with 4 groups");
        assert_eq!(
            o.group(45, 40),
            0,
            "window 4 reuses group 0 once window 0 is past"
        );
        assert_eq!(o.group(NEVER, 0), 4);
    }
}
