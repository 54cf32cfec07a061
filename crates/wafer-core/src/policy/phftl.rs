//! `phftl`: PHFTL as the DOGI paper describes and evaluates it (FAST'26,
//! §2.2, Table 1): SepBIT/MiDAS's group organisation with a GRU predicting
//! whether a user-written block is short-lived, and age-ordered GC groups.
//!
//! Groups: 0 = user blocks predicted short-lived, 1 = the others, 2..6 =
//! five GC groups: 2 for blocks out of a group-0 victim, then by age
//! a = now - (last user write) against τ: a < 4τ → 3, < 16τ → 4, < 64τ → 5,
//! else 6 (SepBIT's age classes with one more step).
//! * The GRU cell (16 hidden units) keeps a hidden state per LBA and steps
//!   it once per write of that LBA on the write's inputs
//!   ([`crate::features::request`]); a linear head on the new state says
//!   short-lived or not.
//! * Training (online, as DOGI trains, through the process's trainer): one
//!   write in ten is sampled with the LBA's last `steps` inputs; its label
//!   is whether it died within τ, the median lifetime of the samples (so
//!   the two classes are balanced); retraining every 0.78 drive-writes, on a thread
//!   beside the replay, the new model taking over 0.25 drive-writes after
//!   its training started ([`super::online`]).
//! * Victims: the configured selector (the DOGI paper runs PHFTL with
//!   cost-benefit).
//!
//! Deviations / choices. This follows DOGI's description of PHFTL; PHFTL's
//! own design is in Shiro (`papers/000`), its journal extension, which
//! differs: a GRU of 32 hidden units (ours: 16) on the previous lifetime,
//! request length, sequentiality, per-chunk write/read counts and the
//! read/write ratio (ours: the four inputs of [`crate::features::request`]);
//! a threshold at the inflection point of the lifetime CDF, then adjusted
//! by logistic-regression trials (ours: the samples' median lifetime); and
//! three user types, short, long and unseen (ours: two, "unseen" goes with
//! long). Training runs the cell from a zero state over the last `steps`
//! writes of the LBA (truncated back-propagation) while inference carries
//! the state over the LBA's whole history; before the first model every
//! user block goes to group 1.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::online::Online;
use super::sampler::{Sampler, NO_PRED};
use super::{Ctx, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::device::Geometry;
use crate::error::{Error, Result};
use crate::features::request::{inputs, INPUTS};
use crate::features::LastWrite;
use crate::ftl::GroupId;
use crate::model::train::{SeqShape, TrainingStats};
use crate::model::{GruCell, Mlp, Tensors};
use crate::params;

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "phftl",
    description: "PHFTL (as in DOGI §2.2): GRU with a per-LBA hidden state predicts short-lived user blocks, trained online; 5 age-ordered GC groups",
    defaults: params::defaults::<Params>,
    build: |p, geo| Ok(Box::new(Phftl::new(params::parse("phftl", p)?, geo)?)),
};

/// PHFTL's parameters (sizes as fractions of the logical capacity C).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Hidden units of the GRU.
    pub hidden: usize,
    /// Writes of an LBA in a training sequence.
    pub steps: usize,
    /// Age bounds of GC groups 3, 4, 5, as multiples of τ.
    pub age_multiples: [f64; 3],
    /// Sample one write in this many.
    pub sample_every: u32,
    /// Samples kept [C].
    pub samples: f64,
    /// Samples kept at least.
    pub min_samples: usize,
    /// Labelled samples needed to train.
    pub min_examples: usize,
    /// Retrain every this many user writes [C]; 0 = never (needs `model`).
    pub retrain: f64,
    /// A new model takes effect this long after its training started [C]
    /// (the training runs beside the replay meanwhile; DOGI's default);
    /// 0 = synchronously.
    pub deploy: f64,
    /// Training epochs.
    pub epochs: usize,
    /// Training batch.
    pub batch: usize,
    /// AdamW learning rate.
    pub lr: f64,
    /// A trained model (`wafer train phftl ...`) to start from.
    pub model: Option<String>,
    /// Seed of the trainings.
    pub seed: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            hidden: 16,
            steps: 4,
            age_multiples: [4.0, 16.0, 64.0],
            sample_every: 10,
            samples: 0.009,
            min_samples: 20_000,
            min_examples: 256,
            retrain: 0.78,
            deploy: 0.25,
            epochs: 5,
            batch: 128,
            lr: 1e-2,
            model: None,
            seed: 1,
        }
    }
}

fn bad(reason: impl Into<String>) -> Error {
    Error::Parameter {
        policy: "phftl".into(),
        reason: reason.into(),
    }
}

/// The trained pieces.
struct Model {
    cell: GruCell,
    head: Mlp,
}

impl Model {
    fn load(t: &Tensors, hidden: usize) -> Result<Self> {
        Ok(Model {
            cell: GruCell::load(t, "gru.cell", INPUTS, hidden)?,
            head: Mlp::load(t, "gru.head", &[hidden, 2])?,
        })
    }
}

/// PHFTL state.
pub struct Phftl {
    p: Params,
    capacity: u32,
    last: LastWrite,
    /// Hidden state per LBA [hidden].
    h: Vec<f32>,
    /// Inputs of each LBA's last `steps` writes, oldest first [steps × INPUTS].
    hist: Vec<f32>,
    model: Option<Model>,
    tau: u64,
    bound: [u64; 1],
    online: Online,
}

impl Phftl {
    fn new(p: Params, geo: &Geometry) -> Result<Self> {
        if p.hidden == 0 || p.steps == 0 || p.sample_every == 0 || p.epochs == 0 || p.batch == 0 {
            return Err(bad(
                "hidden, steps, sample_every, epochs and batch must be at least 1",
            ));
        }
        if !(p.retrain.is_finite() && p.retrain >= 0.0) {
            return Err(bad(format!(
                "retrain must be >= 0 drive-writes, got {}",
                p.retrain
            )));
        }
        let c = geo.logical_blocks;
        let mut tau = (c as u64 / 10).max(1);
        let model = match &p.model {
            Some(path) => {
                let t = Tensors::load_for(path, "phftl")?;
                if let Some(v) = t.metadata.get("tau").and_then(|v| v.parse().ok()) {
                    tau = v;
                }
                Some(Model::load(&t, p.hidden)?)
            }
            None => None,
        };
        let retrain_every = (p.retrain * c as f64).round() as u64;
        let cap = ((p.samples * c as f64) as usize).max(p.min_samples);
        let width = p.steps * INPUTS;
        let samples = Sampler::new(width, cap, c);
        let online = Online::new(
            "phftl",
            samples,
            p.sample_every,
            retrain_every,
            model.is_some(),
        )?
        .with_deploy_delay((p.deploy.max(0.0) * c as f64).round() as u64);
        Ok(Phftl {
            capacity: c,
            last: LastWrite::new(c),
            h: vec![0.0; c as usize * p.hidden],
            hist: vec![0.0; c as usize * width],
            model,
            tau,
            bound: [tau],
            online,
            p,
        })
    }

    fn retrain(&mut self, now: u64) {
        let examples: Vec<_> = self.online.samples.examples(now, 0).collect();
        if examples.len() < self.p.min_examples {
            return;
        }
        let mut lives: Vec<u64> = examples.iter().map(|e| e.life).collect();
        lives.sort_unstable();
        let tau = lives[lives.len() / 2].max(1);
        let (mut x, mut y) = (Vec::new(), Vec::new());
        for e in &examples {
            if e.alive && e.life < tau {
                continue;
            }
            x.extend_from_slice(e.x);
            y.push((e.life >= tau) as u32);
        }
        if y.len() < self.p.min_examples || y.iter().all(|&c| c == y[0]) {
            return;
        }
        let Some(trainer) = self.online.trainer() else {
            return;
        };
        let shape = SeqShape {
            inputs: INPUTS,
            steps: self.p.steps,
            width: self.p.hidden,
            classes: 2,
        };
        let spec = self
            .online
            .spec(self.p.epochs, self.p.batch, self.p.lr, self.p.seed);
        let hidden = self.p.hidden;
        self.online.spawn(now, y.len(), move || {
            let (t, loss) = trainer.train_gru("gru", shape, &x, &y, &spec)?;
            Ok(((Model::load(&t, hidden)?, tau), loss))
        });
    }
}

impl Placement for Phftl {
    fn name(&self) -> &'static str {
        "phftl"
    }

    fn groups(&self) -> usize {
        7
    }

    fn place_user(&mut self, ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]) {
        if let Some((m, tau)) = self.online.ready::<(Model, u64)>(ctx.now()) {
            self.model = Some(m);
            self.tau = tau;
            self.bound = [tau];
        }
        if self.online.due(ctx.now()) {
            self.retrain(ctx.now());
        }
        let (hd, width) = (self.p.hidden, self.p.steps * INPUTS);
        self.online.begin_batch();
        for (w, g) in writes.iter().zip(out.iter_mut()) {
            let x = inputs(&self.last, w, self.capacity);
            let l = w.lba as usize;
            // The LBA's history, this write last.
            let hist = &mut self.hist[l * width..(l + 1) * width];
            hist.copy_within(INPUTS.., 0);
            hist[width - INPUTS..].copy_from_slice(&x);
            let mut pred = NO_PRED;
            if let Some(m) = self.model.as_mut() {
                let h = &mut self.h[l * hd..(l + 1) * hd];
                m.cell.step(&x, h);
                pred = m.head.classify(h) as u8;
            }
            *g = match pred {
                0 => 0,
                _ => 1,
            };
            self.online.offer(hist, pred, w.time, w.lba);
        }
    }

    fn on_user_write(&mut self, lba: u32, time: u64, _group: GroupId) {
        self.online.written(lba, time);
        self.last.record(lba, time);
    }

    fn prefetch(&self, lba: u32) {
        self.last.prefetch(lba);
        self.online.samples.prefetch(lba);
        crate::ftl::prefetch::prefetch(&self.h, lba as usize * self.p.hidden);
    }

    fn on_trim(&mut self, ctx: &Ctx, lba: u32) {
        self.online.samples.died(lba, ctx.now());
    }

    fn place_gc(&mut self, ctx: &Ctx, b: &GcBlock) -> GroupId {
        if b.from_group == 0 {
            return 2;
        }
        let age = self.last.since(b.lba, ctx.now()).unwrap_or(0) as f64;
        let tau = self.tau as f64;
        match self.p.age_multiples.iter().position(|&m| age < m * tau) {
            Some(k) => 3 + k as GroupId,
            None => 6,
        }
    }

    fn on_workload_start(&mut self, ctx: &Ctx) {
        self.online.start(ctx.now());
    }

    fn take_error(&mut self) -> Option<Error> {
        self.online.take_error()
    }

    fn training(&self) -> Option<TrainingStats> {
        Some(self.online.training)
    }

    fn model(&self) -> Option<Tensors> {
        let m = self.model.as_ref()?;
        let mut t = Tensors::default();
        m.cell.store(&mut t, "gru.cell");
        m.head.store(&mut t, "gru.head");
        t.metadata.insert("policy".into(), "phftl".into());
        t.metadata.insert("model".into(), "gru".into());
        t.metadata.insert("tau".into(), self.tau.to_string());
        Some(t)
    }

    /// Groups 0 and 1 predict "dies within τ" and "lives τ or more" once a
    /// model runs.
    fn class_bounds(&self, _gc: bool) -> &[u64] {
        &self.bound
    }

    fn predicted_class(&self, group: GroupId, gc: bool) -> Option<u8> {
        (!gc && group < 2 && self.model.is_some()).then_some(group as u8)
    }

    fn memory_bytes(&self) -> usize {
        self.last.memory_bytes()
            + (self.h.capacity() + self.hist.capacity()) * 4
            + self.online.samples.memory_bytes()
    }

    fn state(&self) -> Option<Value> {
        Some(json!({
            "tau": self.tau,
            "model_on": self.model.is_some(),
                        "samples": self.online.samples.len(),
            "training": self.online.training,
        }))
    }
}
