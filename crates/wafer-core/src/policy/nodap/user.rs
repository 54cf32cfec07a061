//! `nodap+POLICY-user`: NoDaP with a practical policy's user-write
//! predictions, DOGI §3.2, Fig. 2(a): NoDaP^{+SeU}, ^{+MiU}, ^{+PHU} and
//! ^{+MLU} are `nodap+sepbit-user`, `nodap+midas-user`, `nodap+phftl-user`
//! and `nodap+ml-dt-user` (any registered practical policy works, e.g.
//! `nodap+dogi-user`). NoDaP's searched groups, its relocation of GC-written
//! blocks by their exact remaining lifetime and its victims stay; only the
//! group of a user-written block comes from POLICY's prediction. The
//! mirror image, POLICY with NoDaP's user placement, is `POLICY+nu`
//! ([`crate::policy::assisted`]).
//!
//! How a prediction becomes a NoDaP group (the paper does not say):
//! * POLICY first replays the same request stream on its own, exactly as in
//!   its own run (its groups, GC and victims, so its feedback loops, such
//!   as SepBIT's ℓ, MiDAS's configuration or DOGI's μ and models, behave as
//!   they do there), and the class it predicts for every user write
//!   ([`Placement::predicted_user_class`]: short/long for SepBIT, MiDAS and
//!   PHFTL, lifetime classes for ML-DT, hot and c1..c10 for DOGI) is kept,
//!   one byte per write.
//! * Each class maps to the NoDaP group whose BIR holds the median actual
//!   lifetime of the blocks POLICY put in that class (DOGI gives MiDAS's
//!   and ML-DT's groups the lifetime range of their blocks in the same way
//!   for +NGC). So the policy's claim is read as "like the blocks I called
//!   this before", which is as generous as a fixed class-to-group map can
//!   be.
//! * A write POLICY made no prediction for (before its first model, or a
//!   block it places without a class) goes to NoDaP's last group.
//!
//! Parameters: NoDaP's; the predictor's go under `predictor` (an object).

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use super::NoDap;
use crate::device::Geometry;
use crate::engine::RunService;
use crate::error::{Error, Result};
use crate::ftl::{GroupId, SegmentId};
use crate::future::{accuracy::class_of, remaining, NEVER};
use crate::model::train::TrainingStats;
use crate::policy::{self, Ctx, Event, GcBlock, Placement, UserWrite};

/// No class predicted for a write.
const NONE: u8 = u8::MAX;

/// Lifetime histogram bins per power of two.
const PER_OCTAVE: f64 = 4.0;

/// The predictor's recorded classes and, per class, its blocks' lifetimes.
#[derive(Default)]
struct Recording {
    /// Class of each user write, by logical time ([`NONE`]: none).
    classes: Vec<u8>,
    /// Per class: lifetimes in bins of a quarter octave, and how many never died.
    lifetimes: Vec<(Vec<u64>, u64)>,
}

impl Recording {
    fn record(&mut self, time: u64, class: Option<u8>, lifetime: u64) {
        let t = time as usize;
        if self.classes.len() <= t {
            self.classes.resize(t + 1, NONE);
        }
        let Some(c) = class.filter(|&c| c != NONE) else {
            return;
        };
        self.classes[t] = c;
        if self.lifetimes.len() <= c as usize {
            self.lifetimes.resize(c as usize + 1, Default::default());
        }
        let (bins, never) = &mut self.lifetimes[c as usize];
        if lifetime == NEVER {
            *never += 1;
        } else {
            let b = (((lifetime + 1) as f64).log2() * PER_OCTAVE) as usize;
            if bins.len() <= b {
                bins.resize(b + 1, 0);
            }
            bins[b] += 1;
        }
    }

    /// Median lifetime of each class ([`NEVER`] if most never die; `None`
    /// for a class never predicted), to a quarter octave.
    fn medians(&self) -> Vec<Option<u64>> {
        self.lifetimes
            .iter()
            .map(|(bins, never)| {
                let n = bins.iter().sum::<u64>() + never;
                if n == 0 {
                    return None;
                }
                let mut seen = 0;
                for (b, &k) in bins.iter().enumerate() {
                    seen += k;
                    if 2 * seen >= n {
                        return Some((2f64.powf((b as f64 + 0.5) / PER_OCTAVE) - 1.0) as u64);
                    }
                }
                Some(NEVER)
            })
            .collect()
    }
}

/// Wraps the predictor in its own replay and records its classes.
struct Recorder {
    inner: Box<dyn Placement>,
    out: Arc<Mutex<Recording>>,
}

impl Placement for Recorder {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn groups(&self) -> usize {
        self.inner.groups()
    }
    fn active_groups(&self) -> usize {
        self.inner.active_groups()
    }
    fn place_user(&mut self, ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]) {
        self.inner.place_user(ctx, writes, out);
        let mut rec = self.out.lock().unwrap_or_else(|e| e.into_inner());
        for (i, (w, &g)) in writes.iter().zip(out.iter()).enumerate() {
            let life = remaining(ctx.batch_death(i), w.time);
            rec.record(w.time, self.inner.predicted_user_class(i, g), life);
        }
    }
    fn on_user_write(&mut self, lba: u32, time: u64, group: GroupId) {
        self.inner.on_user_write(lba, time, group);
    }
    fn prefetch(&self, lba: u32) {
        self.inner.prefetch(lba);
    }
    fn place_gc(&mut self, ctx: &Ctx, b: &GcBlock) -> GroupId {
        self.inner.place_gc(ctx, b)
    }
    fn select_victim(&mut self, ctx: &Ctx, max_valid: u32) -> Option<SegmentId> {
        self.inner.select_victim(ctx, max_valid)
    }
    crate::policy::forward_block_hooks!();
    fn on_event(&mut self, ctx: &Ctx, ev: &Event) {
        self.inner.on_event(ctx, ev);
    }
    fn on_workload_start(&mut self, ctx: &Ctx) {
        self.inner.on_workload_start(ctx);
    }
    fn on_trim(&mut self, ctx: &Ctx, lba: u32) {
        self.inner.on_trim(ctx, lba);
    }
    fn on_read(&mut self, ctx: &Ctx, req: &crate::request::Request) {
        self.inner.on_read(ctx, req);
    }
    fn retired_groups(&self, out: &mut Vec<GroupId>) {
        self.inner.retired_groups(out);
    }
    fn take_error(&mut self) -> Option<Error> {
        self.inner.take_error()
    }
    fn training(&self) -> Option<TrainingStats> {
        self.inner.training()
    }
    fn state(&self) -> Option<Value> {
        self.inner.state()
    }
}

/// NoDaP placing user writes by another policy's predictions.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct NoDapUser {
    nodap: NoDap,
    #[serde(with = "crate::codec::static_str")]
    name: crate::codec::Name,
    predictor: String,
    #[serde(with = "crate::codec::as_json")]
    predictor_params: Value,
    /// The predictor's class of each user write, by logical time.
    classes: Vec<u8>,
    /// NoDaP group of each class.
    class_group: Vec<GroupId>,
    medians: Vec<Option<u64>>,
    /// Whether each block of the batch just placed had a prediction.
    predicted: Vec<bool>,
    /// The predictor's own replay: its WAF and training.
    predictor_waf: Option<f64>,
    predictor_training: Option<TrainingStats>,
}

impl NoDapUser {
    /// `nodap+PREDICTOR-user` with `params` (NoDaP's, the predictor's under
    /// `predictor`); `predictor` as [`policy::PolicyName`] checked it (a
    /// registered practical policy).
    pub fn build(name: &str, predictor: &str, params: &Value, geo: &Geometry) -> Result<Self> {
        let bad = |reason: String| Error::Parameter {
            policy: name.into(),
            reason,
        };
        let mut own = params.clone();
        let predictor_params = match own.as_object_mut() {
            Some(m) => m.remove("predictor").unwrap_or(Value::Null),
            None => Value::Null,
        };
        // Fail now on a bad parameter.
        let p = policy::build(predictor, &predictor_params, geo)?;
        if p.needs_future() {
            return Err(bad(format!("'{predictor}' places by the future")));
        }
        let nodap_params = if own.is_null() { Value::Null } else { own };
        let nodap = NoDap::new(crate::params::parse("nodap", &nodap_params)?, geo)?;
        Ok(NoDapUser {
            nodap,
            name: crate::codec::static_str::intern(name),
            predictor: predictor.into(),
            predictor_params,
            classes: Vec::new(),
            class_group: Vec::new(),
            medians: Vec::new(),
            predicted: Vec::new(),
            predictor_waf: None,
            predictor_training: None,
        })
    }

    fn last(&self) -> GroupId {
        (self.nodap.n() - 1) as GroupId
    }
}

impl Placement for NoDapUser {
    fn name(&self) -> &'static str {
        self.name
    }
    fn groups(&self) -> usize {
        self.nodap.groups()
    }
    fn needs_future(&self) -> bool {
        true
    }

    fn prepare(&mut self, run: &dyn RunService) -> Result<()> {
        self.nodap.prepare(run)?;
        let rec = Arc::new(Mutex::new(Recording::default()));
        let r = run.replay(
            &self.predictor,
            Some(&self.predictor_params),
            &mut |inner| {
                Box::new(Recorder {
                    inner,
                    out: rec.clone(),
                })
            },
        )?;
        self.predictor_waf = r.steady_waf.or(r.waf);
        self.predictor_training = r.training;
        let rec = std::mem::take(&mut *rec.lock().unwrap_or_else(|e| e.into_inner()));
        self.medians = rec.medians();
        let last = self.last();
        self.class_group = self
            .medians
            .iter()
            .map(|m| m.map_or(last, |m| class_of(&self.nodap.birs, m) as GroupId))
            .collect();
        self.classes = rec.classes;
        Ok(())
    }

    fn place_user(&mut self, _ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]) {
        self.predicted.clear();
        let last = self.last();
        for (w, g) in writes.iter().zip(out.iter_mut()) {
            let c = self.classes.get(w.time as usize).copied().unwrap_or(NONE);
            let group = self.class_group.get(c as usize).copied();
            self.predicted.push(group.is_some());
            *g = group.unwrap_or(last);
        }
    }
    fn place_gc(&mut self, ctx: &Ctx, b: &GcBlock) -> GroupId {
        self.nodap.place_gc(ctx, b)
    }
    fn select_victim(&mut self, ctx: &Ctx, max_valid: u32) -> Option<SegmentId> {
        self.nodap.select_victim(ctx, max_valid)
    }
    fn on_event(&mut self, ctx: &Ctx, ev: &Event) {
        self.nodap.on_event(ctx, ev);
    }
    fn class_bounds(&self, gc: bool) -> &[u64] {
        self.nodap.class_bounds(gc)
    }
    fn predicted_class(&self, group: GroupId, gc: bool) -> Option<u8> {
        self.nodap.predicted_class(group, gc)
    }
    fn predicted_user_class(&self, i: usize, group: GroupId) -> Option<u8> {
        self.predicted[i].then_some(group as u8)
    }
    fn memory_bytes(&self) -> usize {
        self.nodap.memory_bytes() + self.classes.capacity()
    }
    fn training(&self) -> Option<TrainingStats> {
        self.predictor_training
    }
    fn state(&self) -> Option<Value> {
        Some(json!({
            "nodap": self.nodap.state(),
            "predictor": self.predictor,
            "predictor_steady_waf": self.predictor_waf,
            "class_median_lifetimes": self.medians,
            "class_groups": self.class_group,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_of_the_recorded_classes() {
        let mut r = Recording::default();
        for (t, life) in [(0, 10), (1, 12), (2, 14), (3, NEVER)] {
            r.record(t, Some(0), life);
        }
        r.record(4, Some(2), NEVER);
        r.record(6, None, 5);
        let m = r.medians();
        assert_eq!(m.len(), 3);
        let m0 = m[0].unwrap();
        assert!((9..=15).contains(&m0), "{m0}");
        assert_eq!(m[1], None);
        assert_eq!(m[2], Some(NEVER));
        assert_eq!(r.classes, vec![0, 0, 0, 0, 2, NONE, NONE]);
    }
}
