//! `uw`: SepBIT's user-write ablation "UW" (Wang et al., FAST'22, §5.3,
//! Exp#4), as its trace replayer implements it
//! (`trace_replay/.../placement/UW.java`), the reference here: SepBIT's
//! user-write separation (short-lived blocks in group 0, the rest in group 1,
//! by the replayer's FIFO test against ℓ; see [`super::sepbit`]) and all GC
//! writes in one group (2). ℓ is the mean lifespan of the last 16 collected
//! group-0 segments, measured from the previous seal of group 0 as in the
//! replayer. The FIFO's cap counts the LBAs written (`valid_count =
//! "written"`, wafer's) or, as the replayer, its log's count (`"log"`, see
//! [`super::sepbit`]). `classes` is the replayer's open segments per log: UW
//! writes to 3 of them whatever the count, which only changes the order in
//! which the replayer lists segments (`--setup sepbit-replayer`'s ties).

use serde::{Deserialize, Serialize};

use super::kit::lifespan::Ell;
use super::kit::log_valid::{log_valid, LogValid};
use super::kit::recent_writes::RecentWrites;
use super::{Ctx, Event, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::features::LastWrite;
use crate::ftl::GroupId;
use crate::params;

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "uw",
    description: "SepBIT's UW ablation (FAST'22 Exp#4): SepBIT's user-write split, all GC writes in one group; 3 groups",
    family: crate::policy::Family::RuleBased,
    needs_future: false,
    defaults: params::defaults::<Params>,
    build: |p, geo| {
        let p: Params = params::parse("uw", p)?;
        super::kit::classes::check_classes("uw", p.classes, 3)?;
        Ok(Box::new(Uw {
            last: LastWrite::new(geo.logical_blocks),
            fifo: RecentWrites::new(geo.logical_blocks),
            ell: Ell::new(p.window_segments, true, geo.segments),
            log: log_valid("uw", &p.valid_count)?,
        }))
    },
};

/// UW's parameters (SepBIT's defaults).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// The replayer's open segments per log (UW uses 3 of them) [segments].
    pub classes: u32,
    /// Collected group-0 segments averaged into ℓ [segments].
    pub window_segments: u32,
    /// The valid-block count that caps the FIFO: "written" or "log".
    pub valid_count: String,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            classes: 6,
            window_segments: 16,
            valid_count: "written".into(),
        }
    }
}

/// UW state.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Uw {
    last: LastWrite,
    fifo: RecentWrites,
    ell: Ell,
    log: Option<LogValid>,
}

impl Placement for Uw {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "uw"
    }

    fn groups(&self) -> usize {
        3
    }

    fn place_user(&mut self, ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]) {
        for (w, g) in writes.iter().zip(out.iter_mut()) {
            let first = self.last.get(w.lba) == LastWrite::NEVER;
            let valid = self.log.as_mut().map(|l| {
                l.user_block(w);
                l.before_append(ctx, w.lba)
            });
            let short = self
                .fifo
                .test(w.lba, w.time + 1, first, self.ell.ell, valid);
            *g = if short { 0 } else { 1 };
        }
    }

    fn on_user_write(&mut self, lba: u32, time: u64, _group: GroupId) {
        self.last.record(lba, time);
    }

    fn place_gc(&mut self, _ctx: &Ctx, _b: &GcBlock) -> GroupId {
        2
    }

    fn on_event(&mut self, ctx: &Ctx, ev: &Event) {
        if let Some(l) = &mut self.log {
            l.on_event(ctx, ev);
        }
        self.ell.on_event(ctx, ev);
    }

    fn tracks_invalidations(&self) -> bool {
        self.log.is_some()
    }

    fn on_invalidate(&mut self, seg: crate::ftl::SegmentId, ftl: &crate::ftl::Ftl) {
        if let Some(l) = &mut self.log {
            l.invalidated(seg, ftl);
        }
    }

    fn threshold(&self) -> Option<f64> {
        self.ell.get()
    }

    fn memory_bytes(&self) -> usize {
        self.last.memory_bytes() + self.fifo.memory_bytes() + self.ell.memory_bytes()
    }
}
