//! Cost-benefit victim selection. Two forms, each with a selectable clock:
//!
//! * `lfs` (default): Rosenblum & Ousterhout, LFS, SOSP'91: maximise
//!   benefit/cost = (1 - u) * age / (1 + u);
//! * `sqrt`: (1 - u) / u * sqrt(age), the form of SepBIT's trace replayer
//!   (`selection/CostBenefit.java`) and of MiDAS-Simulation (`CB_VS` in
//!   `ssdsimul.cpp`);
//!
//! with u the segment's valid ratio and age on one of two clocks:
//!
//! * `user-writes` (default): user-written blocks since the segment was
//!   sealed, plus one (wafer's; MiDAS-Simulation's `cur_wp - seg_stamp`);
//! * `trace-time`: trace microseconds since the segment's last append, the
//!   replayer's `globalTimestampInUs - timestampModifiedInUs` (for a sealed
//!   segment, the request that filled it). A segment with no valid block is
//!   taken at once under every form and clock.
//!
//! The choice scans the sealed segments (O(segments) per GC, over flat arrays);
//! scores change with time, so no cheaper exact index exists. Equal scores go
//! to the lower segment id (the replayer's order is its hash map's).

use serde::{Deserialize, Serialize};

use super::{best_by_score, VictimSelector};
use crate::device::Geometry;
use crate::ftl::{Ftl, SegState, SegmentId};

/// Formula of `cost-benefit`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CostBenefitForm {
    /// (1-u)·age/(1+u) (LFS).
    #[default]
    Lfs,
    /// (1-u)/u·√age (SepBIT's replayer, MiDAS-Simulation).
    Sqrt,
}

/// Clock of the age in `cost-benefit`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CostBenefitClock {
    /// User-written blocks since sealing, plus one.
    #[default]
    UserWrites,
    /// Trace microseconds since the segment's last append.
    TraceTime,
}

/// What `cost-benefit` computes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CostBenefitConfig {
    /// Formula.
    pub form: CostBenefitForm,
    /// Clock of the age.
    pub clock: CostBenefitClock,
}

/// Cost-benefit in the configured form and clock.
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub struct CostBenefit {
    cfg: CostBenefitConfig,
    /// With the trace clock: time of each segment's last append (its
    /// sealing request) [ns].
    sealed_ns: Vec<u64>,
}

impl CostBenefit {
    /// A selector for a device of this shape.
    pub fn new(cfg: CostBenefitConfig, geo: &Geometry) -> Self {
        let n = match cfg.clock {
            CostBenefitClock::TraceTime => geo.segments as usize,
            CostBenefitClock::UserWrites => 0,
        };
        CostBenefit {
            cfg,
            sealed_ns: vec![0; n],
        }
    }
}

impl VictimSelector for CostBenefit {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "cost-benefit"
    }

    fn on_seal(&mut self, seg: SegmentId, ftl: &Ftl) {
        if let Some(t) = self.sealed_ns.get_mut(seg as usize) {
            *t = ftl.now_ns;
        }
    }

    fn select(&mut self, ftl: &Ftl, max_valid: u32) -> Option<SegmentId> {
        match (self.cfg.form, self.cfg.clock) {
            (CostBenefitForm::Lfs, CostBenefitClock::UserWrites) => {
                best_by_score(ftl, max_valid, score)
            }
            (CostBenefitForm::Sqrt, CostBenefitClock::UserWrites) => {
                best_by_score(ftl, max_valid, sqrt_score)
            }
            (form, CostBenefitClock::TraceTime) => {
                let f = match form {
                    CostBenefitForm::Lfs => score,
                    CostBenefitForm::Sqrt => sqrt_score,
                };
                best_by_trace_age(ftl, max_valid, &self.sealed_ns, f)
            }
        }
    }

    fn remove(&mut self, _seg: SegmentId, _ftl: &Ftl) {}

    fn memory_bytes(&self) -> usize {
        self.sealed_ns.capacity() * 8
    }
}

/// The eligible sealed segment maximising `f(u, age [µs])`, an empty one at once.
fn best_by_trace_age(
    ftl: &Ftl,
    max_valid: u32,
    sealed_ns: &[u64],
    f: fn(f64, f64, u32) -> f64,
) -> Option<SegmentId> {
    let blocks = ftl.geo.segment_blocks as f64;
    let mut best: Option<(f64, SegmentId)> = None;
    for (seg, (&state, &valid)) in ftl.segs.state.iter().zip(&ftl.segs.valid).enumerate() {
        if state != SegState::Sealed || valid > max_valid {
            continue;
        }
        if valid == 0 {
            return Some(seg as SegmentId);
        }
        let age_us = (ftl.now_ns.saturating_sub(sealed_ns[seg]) / 1000) as f64;
        let x = f(valid as f64 / blocks, age_us, 0);
        if best.is_none_or(|(b, _)| x > b) {
            best = Some((x, seg as SegmentId));
        }
    }
    best.map(|(_, s)| s)
}

/// LFS's benefit/cost of collecting a segment with valid ratio `u`, sealed
/// `age` ago.
#[inline(always)]
pub(crate) fn score(u: f64, age: f64, _erases: u32) -> f64 {
    (1.0 - u) * age / (1.0 + u)
}

/// The replayer's and MiDAS-Simulation's (1-u)/u·√age.
#[inline(always)]
pub(crate) fn sqrt_score(u: f64, age: f64, _erases: u32) -> f64 {
    (1.0 - u) / u * age.sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_forms_rank_differently() {
        // a young emptier segment against an old fuller one
        let (young, old) = ((0.1, 100.0), (0.6, 10_000.0));
        assert!(score(old.0, old.1, 0) > score(young.0, young.1, 0));
        assert!(sqrt_score(young.0, young.1, 0) > sqrt_score(old.0, old.1, 0));
    }
}
