//! `fadac`: FADaC, "A Self-adapting Data Classifier for Flash Memory"
//! (Kremer & Brinkmann, SYSTOR'19), as SepBIT's trace replayer implements
//! it (`trace_replay/.../placement/FADaC.java`), the reference here.
//!
//! Each LBA has a write count: +1 per user write, -1 per GC move (not below
//! 0). A fading average of the request size over the valid blocks,
//! a ← a + len/V - a/V per write request (V: valid blocks before it), scales
//! the classes: a block, user- or GC-written, goes to the first group k with
//! count ≤ a·10^k (capped at `classes - 1`; group 0 while a = 0).
//!
//! V is the number of LBAs written before the request (`valid_count =
//! "written"`, wafer's), or the replayer's log count (`"log"`, which also
//! holds its open segments' garbage; see [`super::sepbit`]).

use serde::{Deserialize, Serialize};

use super::kit::classes::check_classes;
use super::kit::log_valid::{log_valid, LogValid};
use super::{Ctx, Event, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::ftl::GroupId;
use crate::params;

/// FADaC's parameters (the replayer's defaults).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Groups, the replayer's `--setNumOpenSegments`.
    pub classes: u32,
    /// The valid-block count V of the fading average: "written" or "log".
    pub valid_count: String,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            classes: 6,
            valid_count: "written".into(),
        }
    }
}

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "fadac",
    description: "FADaC (SYSTOR'19) as in SepBIT's replayer: per-LBA write counts in decades of a fading average; 6 groups",
    family: crate::policy::Family::RuleBased,
    needs_future: false,
    defaults: params::defaults::<Params>,
    build: |p, geo| {
        let p: Params = params::parse("fadac", p)?;
        check_classes("fadac", p.classes, 1)?;
        Ok(Box::new(Fadac {
            classes: p.classes as usize,
            count: vec![NEW; geo.logical_blocks as usize],
            avg: 0.0,
            written: 0,
            log: log_valid("fadac", &p.valid_count)?,
        }))
    },
};

/// Count of an LBA never written.
const NEW: u32 = u32::MAX;

/// FADaC state.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Fadac {
    classes: usize,
    count: Vec<u32>,
    /// Fading average request size over the valid blocks.
    avg: f64,
    /// LBAs written so far.
    written: u64,
    /// The replayer's valid-block count (`valid_count = log`).
    log: Option<LogValid>,
}

impl Fadac {
    fn class(&self, count: u32) -> GroupId {
        let count = if count == NEW { 0 } else { count } as f64;
        let (mut base, mut level) = (self.avg, 0);
        if base != 0.0 {
            while count > base {
                base *= 10.0;
                level += 1;
            }
        }
        level.min(self.classes - 1) as GroupId
    }
}

impl Placement for Fadac {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "fadac"
    }

    fn groups(&self) -> usize {
        self.classes
    }

    fn place_user(&mut self, _ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]) {
        for (w, g) in writes.iter().zip(out.iter_mut()) {
            let v = match &mut self.log {
                Some(l) => {
                    l.user_block(w);
                    l.at_request_start()
                }
                None => self.written as f64,
            };
            if w.req_offset == 0 && v != 0.0 {
                self.avg = self.avg + w.req_blocks as f64 / v - self.avg / v;
            }
            let c = &mut self.count[w.lba as usize];
            if *c == NEW {
                *c = 1;
                self.written += 1;
            } else {
                *c += 1;
            }
            let c = *c;
            *g = self.class(c);
        }
    }

    fn place_gc(&mut self, _ctx: &Ctx, b: &GcBlock) -> GroupId {
        let c = &mut self.count[b.lba as usize];
        if *c != NEW && *c > 0 {
            *c -= 1;
        }
        let c = *c;
        self.class(c)
    }

    fn tracks_invalidations(&self) -> bool {
        self.log.is_some()
    }

    fn on_invalidate(&mut self, seg: crate::ftl::SegmentId, ftl: &crate::ftl::Ftl) {
        if let Some(l) = &mut self.log {
            l.invalidated(seg, ftl);
        }
    }

    fn on_event(&mut self, ctx: &Ctx, ev: &Event) {
        if let Some(l) = &mut self.log {
            l.on_event(ctx, ev);
        }
    }

    fn state(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({"fading_average": self.avg}))
    }

    fn memory_bytes(&self) -> usize {
        self.count.capacity() * 4
    }
}
