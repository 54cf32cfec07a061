//! `gw`: SepBIT's GC-write ablation "GW" (Wang et al., FAST'22, §5.3,
//! Exp#4), as its trace replayer implements it
//! (`trace_replay/.../placement/GW.java`), the reference here: all user
//! writes in one group (0) and SepBIT's GC-write separation by age: a moved
//! block of age a (user writes since its last user write) goes to group 1 if
//! a < 4ℓ, 2 if a < 16ℓ, and so on by factors of 4 up to the last group.
//! Unlike SepBIT, blocks from group-0 victims get no group of their own. ℓ is
//! the mean lifespan of the last 16 collected group-0 segments, measured
//! from the previous seal of group 0 as in the replayer.
//!
//! Two conventions follow the replayer only when asked (`--setup
//! sepbit-replayer` does): a moved block's age counts from its last write
//! excluded (`gc_age = "access-id"`, the replayer's `accessId -
//! lastAccess`, one less than wafer's), and a collected group-0 segment
//! joins ℓ before its blocks move (`ell_update = "before-moves"`: the
//! replayer's `collectSegment` runs before its `gcAppend`s, so the victim
//! that completes a window of 16 moves its blocks under the new ℓ).

use serde::{Deserialize, Serialize};

use super::kit::classes::check_classes;
use super::kit::lifespan::Ell;
use super::{Ctx, Event, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::features::LastWrite;
use crate::ftl::GroupId;
use crate::params;

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "gw",
    description: "SepBIT's GW ablation (FAST'22 Exp#4): one user group, GC writes by age in multiples of 4ℓ; 6 groups",
    family: crate::policy::Family::RuleBased,
    needs_future: false,
    defaults: params::defaults::<Params>,
    build: |p, geo| {
        let p: Params = params::parse("gw", p)?;
        check_classes("gw", p.classes, 2)?;
        let bad = |k: &str, v: &str, known: &str| crate::error::Error::Parameter {
            policy: "gw".into(),
            reason: format!("{k} = '{v}'; known: {known}"),
        };
        if !["since-write", "access-id"].contains(&p.gc_age.as_str()) {
            return Err(bad("gc_age", &p.gc_age, "since-write, access-id"));
        }
        if !["after-moves", "before-moves"].contains(&p.ell_update.as_str()) {
            return Err(bad("ell_update", &p.ell_update, "after-moves, before-moves"));
        }
        Ok(Box::new(Gw {
            classes: p.classes as usize,
            access_id: p.gc_age == "access-id",
            early: p.ell_update == "before-moves",
            collecting: None,
            last: LastWrite::new(geo.logical_blocks),
            ell: Ell::new(p.window_segments, true, geo.segments),
        }))
    },
};

/// GW's parameters (the replayer's defaults).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Groups: the user group and `classes - 1` GC groups.
    pub classes: u32,
    /// Collected group-0 segments averaged into ℓ [segments].
    pub window_segments: u32,
    /// A moved block's age: "since-write" (user writes since its last
    /// write, that write included) or "access-id" (the replayer's, one
    /// less).
    pub gc_age: String,
    /// When a collected segment joins ℓ: "after-moves" (wafer's) or
    /// "before-moves" (the replayer's).
    pub ell_update: String,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            classes: 6,
            window_segments: 16,
            gc_age: "since-write".into(),
            ell_update: "after-moves".into(),
        }
    }
}

/// Age factor between GC groups.
const FACTOR: f64 = 4.0;

/// GW state.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Gw {
    classes: usize,
    /// `gc_age = access-id`.
    access_id: bool,
    /// `ell_update = before-moves`.
    early: bool,
    /// The victim being moved, once counted in ℓ (`before-moves`).
    collecting: Option<crate::ftl::SegmentId>,
    last: LastWrite,
    ell: Ell,
}

impl Placement for Gw {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "gw"
    }

    fn groups(&self) -> usize {
        self.classes
    }

    fn place_user(&mut self, _ctx: &Ctx, _writes: &[UserWrite], out: &mut [GroupId]) {
        out.fill(0);
    }

    fn on_user_write(&mut self, lba: u32, time: u64, _group: GroupId) {
        self.last.record(lba, time);
    }

    fn place_gc(&mut self, ctx: &Ctx, b: &GcBlock) -> GroupId {
        if self.early && self.collecting != Some(b.victim) {
            self.collecting = Some(b.victim);
            self.ell.on_event(
                ctx,
                &Event::Collected {
                    seg: b.victim,
                    valid: 0,
                },
            );
        }
        let since = self.last.since(b.lba, ctx.now()).unwrap_or(0);
        let age = since.saturating_sub(self.access_id as u64) as f64;
        let mut base = self.ell.ell * FACTOR;
        let mut level = 1;
        while age >= base && level < self.classes - 1 {
            base *= FACTOR;
            level += 1;
        }
        level as GroupId
    }

    fn on_event(&mut self, ctx: &Ctx, ev: &Event) {
        if let Event::Collected { seg, .. } = *ev {
            // counted already when its first block moved (`before-moves`)
            if self.early && self.collecting.take() == Some(seg) {
                return;
            }
        }
        self.ell.on_event(ctx, ev);
    }

    fn threshold(&self) -> Option<f64> {
        self.ell.get()
    }

    fn memory_bytes(&self) -> usize {
        self.last.memory_bytes() + self.ell.memory_bytes()
    }
}
