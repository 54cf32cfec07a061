//! `multilog`: MultiLog (Stoica & Ailamaki, "Improving Flash Write
//! Performance by Using Update Frequency", VLDB'13), as SepBIT's trace
//! replayer implements it (`trace_replay/.../placement/MultiLog.java`), the
//! reference here.
//!
//! Every LBA has a level, its group: a new LBA starts at 0; a block moved by
//! GC rises one level (from the highest level in use only once that level
//! holds a segment's worth of valid blocks, opening the next one); a user
//! overwrite sinks it one level with probability (E - d)/E, d its update
//! distance (user writes since its last write) and E half the level's valid
//! blocks times the share of its collected blocks that were valid.
//!
//! With the `multilog` victim selector, the victim comes from the level
//! whose growth lowers the predicted WAF most: the replayer's derivative of
//! its two-partition model, over the levels that hold an eligible segment
//! ([`Placement::victim_group`]); the selector then takes that level's least
//! recently appended segment. The replayer passes the model's arguments in a
//! different order than its signature names them; kept as it is.
//!
//! The model's valid block total is the sum of the levels' counts
//! (`valid_count = "written"`, wafer's) or the replayer's count of the log
//! (`"log"`, which also holds its open segments' garbage; see
//! [`super::sepbit`]).
//!
//! Deviations: the random draws are seeded (`seed`, the run's `--seed`
//! unless given; the replayer's `new Random()` is not); trims are not counted
//! against a level (the replayer replays no trims).

use serde::{Deserialize, Serialize};

use super::kit::classes::check_classes;
use super::kit::log_valid::{log_valid, LogValid};
use super::{Ctx, Event, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::ftl::{GroupId, SegState};
use crate::params;
use crate::rng::Rng;

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "multilog",
    description: "MultiLog (VLDB'13) as in SepBIT's replayer: levels rise with GC moves, sink with short update distances; its own victim model with --victim multilog; 6 groups",
    family: crate::policy::Family::RuleBased,
    needs_future: false,
    defaults: params::defaults::<Params>,
    build: |p, geo| {
        let p: Params = params::parse("multilog", p)?;
        check_classes("multilog", p.classes, 2)?;
        let k = p.classes as usize;
        Ok(Box::new(MultiLog {
            classes: k,
            seg_blocks: geo.segment_blocks as u64,
            gp_threshold: p.segment_gp_threshold,
            level: vec![NEW; geo.logical_blocks as usize],
            last: vec![0; geo.logical_blocks as usize],
            max_level: 0,
            valid: vec![0; k],
            total: vec![0; k],
            user: vec![0; k],
            collected: vec![0; k],
            collected_invalid: vec![0; k],
            user_writes: 0,
            rng: Rng::derive(p.seed, 0x3d),
            log: log_valid("multilog", &p.valid_count)?,
        }))
    },
};

/// MultiLog's parameters (the replayer's defaults).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Levels, one group each.
    pub classes: u32,
    /// Garbage proportion the model assumes of a victim (the replayer takes
    /// its segment threshold, 0.15).
    pub segment_gp_threshold: f64,
    /// Seed of the sinking draws (the run's `--seed` unless given).
    pub seed: u64,
    /// The model's valid block total: "written" (the levels' sum) or "log"
    /// (the replayer's log count).
    pub valid_count: String,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            classes: 6,
            segment_gp_threshold: 0.15,
            seed: 1,
            valid_count: "written".into(),
        }
    }
}

/// Level of an LBA never written.
const NEW: u8 = u8::MAX;

/// MultiLog state; per-level counters as the replayer's `Separator` keeps them.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct MultiLog {
    classes: usize,
    seg_blocks: u64,
    gp_threshold: f64,
    level: Vec<u8>,
    /// Write number of each LBA's last user write.
    last: Vec<u64>,
    max_level: usize,
    /// Per level: valid blocks, blocks written and not collected, user
    /// writes, blocks collected, invalid blocks collected.
    valid: Vec<i64>,
    total: Vec<i64>,
    user: Vec<u64>,
    collected: Vec<u64>,
    collected_invalid: Vec<u64>,
    user_writes: u64,
    rng: Rng,
    /// The replayer's valid-block count (`valid_count = log`).
    log: Option<LogValid>,
}

/// The replayer's stand-in for W(-(1+α)·e^-(1+α)).
fn lambert(alpha: f64) -> f64 {
    -(-0.9 * alpha).exp()
}

/// The replayer's `computeDerivative(alpha, beta, f1, s1, f2, s2)`.
fn derivative(alpha: f64, beta: f64, f1: f64, s1: f64, f2: f64, s2: f64) -> f64 {
    let (z1, z2) = (1.0 + beta / s1, 1.0 + (alpha - beta) / s2);
    let (w1, w2) = (lambert(z1 - 1.0), lambert(z2 - 1.0));
    f1 * w1 / (s1 * (w1 + 1.0) * (w1 + z1)) - f2 * w2 / (s2 * (w2 + 1.0) * (w2 + z2))
}

impl Placement for MultiLog {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "multilog"
    }

    fn groups(&self) -> usize {
        self.classes
    }

    fn place_user(&mut self, ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]) {
        for (w, g) in writes.iter().zip(out.iter_mut()) {
            let l = w.lba as usize;
            if let Some(log) = &mut self.log {
                log.user_block(w);
            }
            // the old copy's level loses a valid block
            if let Some(pba) = ctx.ftl.lookup(w.lba) {
                let old = ctx.ftl.segs.group[ctx.ftl.segment_of(pba) as usize] as usize;
                if old < self.classes {
                    self.valid[old] -= 1;
                }
            }
            self.user_writes += 1;
            let id = self.user_writes;
            if self.level[l] == NEW {
                self.level[l] = 0;
            } else {
                let d = id - self.last[l];
                let lv = self.level[l] as usize;
                let kept = 1.0 - self.collected_invalid[lv] as f64 / self.collected[lv] as f64;
                let expected = self.valid[lv] as f64 * kept / 2.0;
                let p = (expected - d as f64) / expected;
                if p > 0.0 && lv > 0 && self.rng.next_f64() < p {
                    self.level[l] -= 1;
                }
            }
            self.last[l] = id;
            let lv = self.level[l] as usize;
            self.valid[lv] += 1;
            self.total[lv] += 1;
            self.user[lv] += 1;
            *g = lv as GroupId;
        }
    }

    fn place_gc(&mut self, _ctx: &Ctx, b: &GcBlock) -> GroupId {
        let l = b.lba as usize;
        let mut lv = if self.level[l] == NEW {
            0
        } else {
            self.level[l] as usize
        };
        if lv == self.max_level {
            if self.max_level + 1 < self.classes && self.valid[lv] >= self.seg_blocks as i64 {
                lv += 1;
                self.max_level += 1;
            }
        } else {
            lv += 1;
        }
        self.level[l] = lv as u8;
        self.valid[lv] += 1;
        self.total[lv] += 1;
        lv as GroupId
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
        if let Event::Collected { seg, valid } = *ev {
            let g = ctx.ftl.segs.group[seg as usize] as usize;
            if g < self.classes {
                let b = self.seg_blocks;
                self.valid[g] -= valid as i64;
                self.total[g] -= b as i64;
                self.collected[g] += b;
                self.collected_invalid[g] += b - valid as u64;
            }
        }
    }

    fn victim_group(&mut self, ctx: &Ctx, max_valid: u32) -> Option<GroupId> {
        let segs = &ctx.ftl.segs;
        let max_valid = crate::victim::replayer_bound(ctx.ftl, max_valid);
        let mut exists = vec![false; self.classes];
        for s in 0..segs.state.len() {
            if segs.state[s] == SegState::Sealed && segs.valid[s] <= max_valid {
                if let Some(e) = exists.get_mut(segs.group[s] as usize) {
                    *e = true;
                }
            }
        }
        let alpha = self.gp_threshold / (1.0 - self.gp_threshold);
        let valid_total = match &self.log {
            // between requests, where GC runs
            Some(l) => l.settled(),
            None => self.valid.iter().sum::<i64>() as f64,
        };
        // the replayer starts at class 0 with Double.MAX_VALUE: a NaN
        // derivative is never chosen, and class 0 stands if none is
        let mut best = (0, f64::MAX);
        for i in (0..self.classes).filter(|&i| exists[i]) {
            let beta = (self.total[i] - self.valid[i]) as f64 / self.valid[i] as f64;
            let s1 = self.valid[i] as f64 / valid_total;
            let f1 = self.user[i] as f64 / self.user_writes as f64;
            // the replayer's call passes (s1, f1, s2, f2) where its signature
            // names (f1, s1, f2, s2)
            let d = derivative(alpha, beta, s1, f1, 1.0 - s1, 1.0 - f1);
            if d < best.1 {
                best = (i, d);
            }
        }
        Some(best.0 as GroupId)
    }

    fn state(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({"levels": self.max_level + 1}))
    }

    fn memory_bytes(&self) -> usize {
        self.level.capacity() + self.last.capacity() * 8
    }
}
