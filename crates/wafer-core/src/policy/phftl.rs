//! `phftl`: PHFTL (Sun et al., DAC'23), Shiro's predecessor, built on
//! Shiro's page classifier with the groups and victims the DOGI paper gives
//! PHFTL. The DAC'23 paper is not in the set (Shiro, TCAD'25, is its journal
//! version); each part comes from:
//!
//! | part | source |
//! |---|---|
//! | the classifier: one GRU layer of 32 units, six features in 24 hex digits, a hidden state cached per page (one GRU step per write), write windows of 5% of the capacity, Algorithm 1's threshold T, training until convergence and then one epoch per window on 10% of the samples | Shiro (TCAD'25) §III-B, §III-D, §V-E, the journal version of PHFTL ([`super::kit::page_classifier`]; its choices are documented there) |
//! | groups: 2 user groups (predicted short-lived / the others) and 5 GC groups by age | DOGI (FAST'26) §2.2, Table 1 |
//! | GC groups "similar to SepBIT and MiDAS": group 2 takes the blocks of short-lived victims, 3..6 the others by age a = now - (last user write): a < 4T, < 16T, < 64T, else | DOGI §2.2 with SepBIT's age classes (FAST'22 §3.3), one more step; T is the classifier's threshold |
//! | victims: cost-benefit | DOGI §5.1 (the configured selector: run with `--victim cost-benefit`) |
//!
//! Group 1 also takes pages with no prediction (first writes, and every
//! write before the first model), as PHFTL has no UNSEEN group. With
//! `--accuracy`, groups 0 and 1 are scored against lifetime < T when the
//! classifier predicted them.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::kit::page_classifier::classifier::{Classifier, Pred};
use super::kit::page_classifier::params::{out_of_range, ClassifierParams};
use super::{Ctx, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::device::Geometry;
use crate::error::{Error, Result};
use crate::ftl::GroupId;
use crate::model::train::TrainingStats;
use crate::model::Tensors;
use crate::params;
use crate::request::Request;

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "phftl",
    description: "PHFTL (DAC'23, as in DOGI §2.2): Shiro's GRU page classifier, 2 user groups + 5 age-ordered GC groups, cost-benefit victims (configured)",
    family: crate::policy::Family::Learned,
    needs_future: false,
    defaults: params::defaults::<Params>,
    build: |p, geo| Ok(Box::new(Phftl::new(params::parse("phftl", p)?, geo)?)),
};

/// PHFTL's parameters: Shiro's classifier (the same struct, flattened) and
/// the GC age classes.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Params {
    /// The page classifier (see [`ClassifierParams`]).
    #[serde(flatten)]
    pub classifier: ClassifierParams,
    /// Age bounds of GC groups 3, 4, 5, as multiples of T.
    pub age_multiples: [f64; 3],
}

impl Default for Params {
    fn default() -> Self {
        Params {
            classifier: ClassifierParams::default(),
            age_multiples: [4.0, 16.0, 64.0],
        }
    }
}

/// PHFTL state.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Phftl {
    age_multiples: [f64; 3],
    classifier: Classifier,
    /// Prediction of each block of the batch being placed (accuracy).
    batch: Vec<Option<u8>>,
}

impl Phftl {
    fn new(p: Params, geo: &Geometry) -> Result<Self> {
        if p.age_multiples
            .windows(2)
            .any(|w| !(w[0] > 0.0 && w[0] < w[1] && w[1].is_finite()))
        {
            return Err(out_of_range(
                "phftl",
                "age_multiples",
                format!("{:?}", p.age_multiples),
                "three increasing multiples > 0",
            ));
        }
        let config = p.classifier.config("phftl", geo)?;
        Ok(Phftl {
            classifier: Classifier::new(config, geo.logical_blocks, geo.block_size)?,
            batch: Vec::new(),
            age_multiples: p.age_multiples,
        })
    }
}

impl Placement for Phftl {
    crate::checkpoint_by_serde!();
    fn training_in_flight(&self) -> bool {
        self.classifier.in_flight()
    }
    fn name(&self) -> &'static str {
        "phftl"
    }

    fn groups(&self) -> usize {
        7
    }

    fn place_user(&mut self, ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]) {
        if self.classifier.window_due(ctx.now()) {
            self.classifier.end_window(ctx.now());
        }
        self.batch.clear();
        for (w, g) in writes.iter().zip(out.iter_mut()) {
            let pred = self.classifier.classify(w);
            *g = (pred != Pred::Short) as GroupId;
            self.batch
                .push((pred != Pred::Unseen).then_some(pred as u8));
        }
    }

    fn on_user_write(&mut self, lba: u32, time: u64, _group: GroupId) {
        self.classifier.written(lba, time);
    }

    fn prefetch(&self, lba: u32) {
        self.classifier.prefetch(lba);
    }

    fn place_gc(&mut self, ctx: &Ctx, b: &GcBlock) -> GroupId {
        if b.from_group == 0 {
            return 2;
        }
        let age = self.classifier.age(b.lba, ctx.now()).unwrap_or(0) as f64;
        let t = self.classifier.threshold().unwrap_or(u64::MAX) as f64;
        match self.age_multiples.iter().position(|&m| age < m * t) {
            Some(k) => 3 + k as GroupId,
            None => 6,
        }
    }

    fn on_workload_start(&mut self, ctx: &Ctx) {
        self.classifier.start(ctx.now());
    }

    fn on_read(&mut self, _ctx: &Ctx, req: &Request) {
        self.classifier.read(req);
    }

    fn take_error(&mut self) -> Option<Error> {
        self.classifier.take_error()
    }

    fn training(&self) -> Option<TrainingStats> {
        Some(self.classifier.training())
    }

    fn model(&self) -> Option<Tensors> {
        self.classifier.model_tensors()
    }

    /// Class 0: lifetime below T; 1: T or more.
    fn class_bounds(&self, gc: bool) -> &[u64] {
        if gc {
            &[]
        } else {
            self.classifier.bounds()
        }
    }

    fn predicted_user_class(&self, i: usize, _group: GroupId) -> Option<u8> {
        self.batch.get(i).copied().flatten()
    }

    fn memory_bytes(&self) -> usize {
        self.classifier.memory_bytes()
    }

    fn state(&self) -> Option<Value> {
        let mut s = self.classifier.state();
        s["age_multiples"] = json!(self.age_multiples);
        Some(s)
    }
}
