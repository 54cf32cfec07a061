//! `phftl`: PHFTL (Sun et al., DAC'23), Shiro's predecessor, built on
//! Shiro's page classifier with the groups and victims the DOGI paper gives
//! PHFTL. PHFTL's own paper is not in the set; each part comes from:
//!
//! | part | source |
//! |---|---|
//! | the classifier: one GRU layer of 32 units, six features in 24 hex digits, a hidden state cached per page (one GRU step per write), write windows of 5% of the capacity, Algorithm 1's threshold T, training until convergence and then one epoch per window on 10% of the samples | Shiro (TCAD'25) §III-B, §III-D, §V-E, the journal version of PHFTL ([`super::shiro::classifier`]; its choices are documented there) |
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

use super::shiro::classifier::{Classifier, Pred};
use super::shiro::ClassifierParams;
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

/// PHFTL's parameters: Shiro's classifier (see `shiro` for each) and the
/// GC age classes.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// GRU hidden units.
    pub hidden: usize,
    /// Longest training sequence [writes of a page].
    pub seq_len: usize,
    /// Write window [fraction of the logical capacity].
    pub window: f64,
    /// Earlier windows training histories may reach.
    pub history_windows: u64,
    /// Share of a window's lifetime samples trained on.
    pub train_fraction: f64,
    /// Most epochs of the first training.
    pub bootstrap_epochs: usize,
    /// Convergence: smallest loss improvement per epoch.
    pub converge_delta: f32,
    /// Convergence: epochs without it before stopping.
    pub converge_patience: usize,
    /// Training minibatch [sequences].
    pub batch: usize,
    /// Adam learning rate.
    pub lr: f64,
    /// Balance the two classes of a training set.
    pub balance: bool,
    /// Hidden states kept as `int8` or `f32`.
    pub state: String,
    /// Algorithm 1's first step [percentile points].
    pub step: u32,
    /// Algorithm 1's largest step [percentile points].
    pub max_step: u32,
    /// Light model: samples per class.
    pub light_samples: usize,
    /// Age bounds of GC groups 3, 4, 5, as multiples of T.
    pub age_multiples: [f64; 3],
    /// Train online at each window's end; false needs `model`.
    pub online: bool,
    /// A trained model (`wafer train phftl ...`) to start from.
    pub model: Option<String>,
    /// Seed.
    pub seed: u64,
}

impl Default for Params {
    fn default() -> Self {
        let s = super::shiro::Params::default();
        Params {
            hidden: s.hidden,
            seq_len: s.seq_len,
            window: s.window,
            history_windows: s.history_windows,
            train_fraction: s.train_fraction,
            bootstrap_epochs: s.bootstrap_epochs,
            converge_delta: s.converge_delta,
            converge_patience: s.converge_patience,
            batch: s.batch,
            lr: s.lr,
            balance: s.balance,
            state: s.state,
            step: s.step,
            max_step: s.max_step,
            light_samples: s.light_samples,
            age_multiples: [4.0, 16.0, 64.0],
            online: s.online,
            model: None,
            seed: s.seed,
        }
    }
}

/// PHFTL state.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Phftl {
    p: Params,
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
            return Err(super::shiro::out_of_range(
                "phftl",
                "age_multiples",
                format!("{:?}", p.age_multiples),
                "three increasing multiples > 0",
            ));
        }
        let config = ClassifierParams {
            policy: "phftl",
            hidden: p.hidden,
            seq_len: p.seq_len,
            window: p.window,
            history_windows: p.history_windows,
            train_fraction: p.train_fraction,
            bootstrap_epochs: p.bootstrap_epochs,
            converge_delta: p.converge_delta,
            converge_patience: p.converge_patience,
            batch: p.batch,
            lr: p.lr,
            balance: p.balance,
            state: &p.state,
            step: p.step,
            max_step: p.max_step,
            light_samples: p.light_samples,
            online: p.online,
            model: p.model.as_deref(),
            seed: p.seed,
        }
        .config(geo)?;
        Ok(Phftl {
            classifier: Classifier::new(config, geo.logical_blocks, geo.block_size)?,
            batch: Vec::new(),
            p,
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
        match self.p.age_multiples.iter().position(|&m| age < m * t) {
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
        s["age_multiples"] = json!(self.p.age_multiples);
        Some(s)
    }
}
