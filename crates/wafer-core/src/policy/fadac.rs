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
//! Deviation: V is the number of LBAs written before the request; the
//! replayer's log count also holds its open segments' garbage.

use super::dac::{check_classes, Params};
use super::{Ctx, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::ftl::GroupId;
use crate::params;

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
            if w.req_offset == 0 && self.written > 0 {
                let v = self.written as f64;
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

    fn state(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({"fading_average": self.avg}))
    }

    fn memory_bytes(&self) -> usize {
        self.count.capacity() * 4
    }
}
