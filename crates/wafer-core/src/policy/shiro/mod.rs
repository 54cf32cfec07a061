//! `shiro`: Shiro, "Efficient and Accurate In-Storage Data Lifetime
//! Separation for NAND Flash SSDs" (Sun et al., IEEE TCAD 2025; the
//! journal version of PHFTL, DAC'23), §III, Algorithm 1, Eq. 1, Table I.
//!
//! Groups (superblock types, Table I): 0 = user SHORT, 1 = user LONG,
//! 2 = user UNSEEN, 3.. = GC levels GC0..GC(L-1) (L = `gc_levels`, 5).
//! A logical page is the device's block: the paper's device has 16 KiB
//! pages (`wafer --preset shiro`, [`crate::device`]).
//!
//! * **User writes** (§III-B, [`classifier`], [`features`]): a GRU of 32
//!   units over six features split into 24 hex digits, with a hidden state
//!   cached per page so a write costs one GRU step, predicts whether the
//!   page lives less than T (SHORT) or not (LONG); a page with no
//!   prediction (its first write, or before the first model) is UNSEEN.
//! * **Threshold and training** (§III-B, Algorithm 1, [`threshold`]): every
//!   5% of the capacity written (a window), the window's lifetime samples
//!   give T (the inflection point the first time, then the best of three
//!   candidates by a class-balanced logistic regression, with the step
//!   rules), and 10% of them train the GRU: until convergence the first
//!   time, then one epoch per window. Model and T serve the next window.
//! * **Victims** (§III-C, Eq. 1): Adjusted Greedy
//!   ([`crate::victim::adjusted_greedy`]): greedy on the invalid share I,
//!   discounted to I/(1 + V·T/C) for SHORT superblocks sealed C pages ago.
//!   With `own_victims = false` the configured selector chooses (and
//!   `adjusted-greedy` gets T and the SHORT group as its hint).
//! * **GC migration** (§III-C, Table I, [`qlearn`]): a Q-learning agent
//!   picks each valid page's GC level from its age, the victim's valid
//!   share and type, the page's last prediction and its previous GC level;
//!   ε = 1%; reward: the mean invalid share of the next 200 victims; the
//!   table starts as the hierarchical rule (user → GC0, GCk → GCk+1).
//! * **GC triggering** (§III-C) is the device's: `--preset shiro` sets
//!   foreground GC below 5% free superblocks (`gc_low_fraction`) and
//!   background GC below 25% (`background_gc`, off by default: a replay at
//!   full speed has no idle time).
//! * **Metadata** (§III-D, [`metadata`]): the on-flash meta pages and their
//!   LRU cache (1% of the meta pages) are modelled and reported (hit rate,
//!   extra flash reads, RAM per page) under `policy_state.metadata`;
//!   they do not change placement or WAF.
//! * **Accuracy** (§V-C, Table V, Fig. 8): with `--accuracy` the engine
//!   scores SHORT (class 0, lifetime < T) and LONG predictions against the
//!   true lifetimes, per window and cumulatively (accuracy, precision,
//!   recall, F1 of the short class); UNSEEN pages are not scored.
//!   `seq_len = 1` is §V-C's ablation (one-step sequences, no cached state).
//!
//! `shiro-ng` (Fig. 9): the same user side and victims, and a single GC
//! group (no GC separation, no agent).
//!
//! Choices where the paper is silent (the spec's [U] points, with the
//! likely choice): feature units and digit counts ([`features`]); the
//! window counts logical capacity; samples are pairs of writes inside one
//! window; the training history comes from a log of the last
//! `history_windows` + 1 windows; the classes of a training set are
//! balanced; lr 1e-3, batch 256, at most 50 bootstrap epochs stopping after
//! 3 epochs improving the loss by < 1e-3; Algorithm 1's light model and
//! percentile conventions ([`threshold`]); the Q update is the bandit form
//! with α = 0.1 once per distinct (state, action) per GC; ε ties go to the
//! lowest level; "previous action" is kept across user rewrites; C in
//! Eq. 1 counts user pages since sealing (at least 1); I and V count all
//! of a superblock's slots.

pub mod classifier;
pub mod features;
pub mod metadata;
pub mod qlearn;
pub mod threshold;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{Ctx, Event, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::device::Geometry;
use crate::error::{Error, Result};
use crate::ftl::{GroupId, SegmentId};
use crate::model::train::{Convergence, TrainingStats};
use crate::model::Tensors;
use crate::params;
use crate::request::Request;
use crate::victim::{adjusted_greedy, VictimHint};
use classifier::{Classifier, Config, Pred};
use metadata::MetaCache;
use qlearn::{Agent, State};

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "shiro",
    description: "Shiro (TCAD'25): GRU page classifier (cached state, hex features, Algorithm 1 threshold) into SHORT/LONG/UNSEEN, Q-learning GC migration over 5 levels, Adjusted Greedy victims",
    family: crate::policy::Family::Learned,
    needs_future: false,
    defaults: params::defaults::<Params>,
    build: |p, geo| Ok(Box::new(Shiro::new(params::parse("shiro", p)?, geo, false)?)),
};

pub(super) const INFO_NG: PolicyInfo = PolicyInfo {
    name: "shiro-ng",
    description:
        "Shiro-NG (Shiro Fig. 9): Shiro's user separation and Adjusted Greedy, one GC group",
    family: crate::policy::Family::Learned,
    needs_future: false,
    defaults: params::defaults::<Params>,
    build: |p, geo| {
        Ok(Box::new(Shiro::new(
            params::parse("shiro-ng", p)?,
            geo,
            true,
        )?))
    },
};

/// Shiro's parameters (the paper's defaults; [U]: our choice, see the
/// module doc).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// GRU hidden units (§III-B: 32).
    pub hidden: usize,
    /// Longest training sequence [writes of a page] (§V-E: 20); 1 is
    /// §V-C's ablation and also drops the cached state at inference.
    pub seq_len: usize,
    /// Write window [fraction of the logical capacity] (§III-B: 0.05).
    pub window: f64,
    /// Earlier windows whose writes training histories may reach [U: 4].
    pub history_windows: u64,
    /// Share of a window's lifetime samples trained on (§V-E: 0.1).
    pub train_fraction: f64,
    /// Most epochs of the first ("until convergence") training [U: 50].
    pub bootstrap_epochs: usize,
    /// Convergence: smallest loss improvement per epoch [U: 1e-3].
    pub converge_delta: f32,
    /// Convergence: epochs without it before stopping [U: 3].
    pub converge_patience: usize,
    /// Training minibatch [sequences] [U: 256].
    pub batch: usize,
    /// Adam learning rate [U: 1e-3].
    pub lr: f64,
    /// Balance the two classes of a training set [U: true].
    pub balance: bool,
    /// Hidden states kept as `int8` (§III-D: 32 B per page) or `f32`.
    pub state: String,
    /// Algorithm 1's first step [percentile points] (5).
    pub step: u32,
    /// Algorithm 1's largest step [percentile points] (10).
    pub max_step: u32,
    /// Light model: samples per class [U: 5000].
    pub light_samples: usize,
    /// GC levels (§III-C: 5).
    pub gc_levels: usize,
    /// Exploration probability ε (§III-C: 0.01).
    pub epsilon: f64,
    /// Q-learning rate α [U: 0.1].
    pub alpha: f64,
    /// Reward horizon [GC operations] (§III-C: 200).
    pub reward_horizon: u64,
    /// Q update `per-pair` (once per distinct state-action per GC) or
    /// `per-page` [U: per-pair].
    pub q_update: String,
    /// Choose victims by Adjusted Greedy (Eq. 1); false: the configured
    /// selector.
    pub own_victims: bool,
    /// Model the metadata cache (reported only).
    pub metadata: bool,
    /// Metadata cache [fraction of all meta pages] (§III-D: 0.01).
    pub meta_cache: f64,
    /// Train online at each window's end; false needs `model`.
    pub online: bool,
    /// A trained model (`wafer train shiro ...`) to start from.
    pub model: Option<String>,
    /// Seed of training, sampling and exploration.
    pub seed: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            hidden: 32,
            seq_len: 20,
            window: 0.05,
            history_windows: 4,
            train_fraction: 0.1,
            bootstrap_epochs: 50,
            converge_delta: 1e-3,
            converge_patience: 3,
            batch: 256,
            lr: 1e-3,
            balance: true,
            state: "int8".into(),
            step: 5,
            max_step: 10,
            light_samples: 5000,
            gc_levels: 5,
            epsilon: 0.01,
            alpha: 0.1,
            reward_horizon: 200,
            q_update: "per-pair".into(),
            own_victims: true,
            metadata: true,
            meta_cache: 0.01,
            online: true,
            model: None,
            seed: 1,
        }
    }
}

/// The parameter error of `policy`, naming the parameter and its range.
pub(crate) fn out_of_range(
    policy: &str,
    name: &str,
    value: impl std::fmt::Display,
    range: &str,
) -> Error {
    Error::Parameter {
        policy: policy.into(),
        reason: format!("{name} = {value} is out of range; accepted: {range}"),
    }
}

/// The classifier parameters every GRU policy built on Shiro's classifier
/// shares, checked.
pub(crate) struct ClassifierParams<'a> {
    pub policy: &'static str,
    pub hidden: usize,
    pub seq_len: usize,
    pub window: f64,
    pub history_windows: u64,
    pub train_fraction: f64,
    pub bootstrap_epochs: usize,
    pub converge_delta: f32,
    pub converge_patience: usize,
    pub batch: usize,
    pub lr: f64,
    pub balance: bool,
    pub state: &'a str,
    pub step: u32,
    pub max_step: u32,
    pub light_samples: usize,
    pub online: bool,
    pub model: Option<&'a str>,
    pub seed: u64,
}

impl ClassifierParams<'_> {
    /// The classifier's config for `geo`, or the first parameter out of range.
    pub fn config(&self, geo: &Geometry) -> Result<Config> {
        let p = self.policy;
        let bad =
            |name: &str, v: &dyn std::fmt::Display, range: &str| out_of_range(p, name, v, range);
        if !(1..=256).contains(&self.hidden) {
            return Err(bad("hidden", &self.hidden, "1 to 256 units"));
        }
        if !(1..=64).contains(&self.seq_len) {
            return Err(bad("seq_len", &self.seq_len, "1 to 64 steps"));
        }
        if !(self.window.is_finite() && self.window > 0.0 && self.window <= 1.0) {
            return Err(bad(
                "window",
                &self.window,
                "(0, 1] of the logical capacity",
            ));
        }
        if !(self.train_fraction.is_finite()
            && self.train_fraction > 0.0
            && self.train_fraction <= 1.0)
        {
            return Err(bad("train_fraction", &self.train_fraction, "(0, 1]"));
        }
        if self.bootstrap_epochs == 0 {
            return Err(bad("bootstrap_epochs", &0, "1 or more"));
        }
        if self.batch == 0 {
            return Err(bad("batch", &0, "1 or more sequences"));
        }
        if !(self.lr.is_finite() && self.lr > 0.0) {
            return Err(bad("lr", &self.lr, "a learning rate > 0"));
        }
        if !(self.converge_delta.is_finite() && self.converge_delta >= 0.0) {
            return Err(bad("converge_delta", &self.converge_delta, ">= 0"));
        }
        if self.converge_patience == 0 {
            return Err(bad("converge_patience", &0, "1 or more epochs"));
        }
        if self.max_step == 0 || self.max_step > 50 {
            return Err(bad("max_step", &self.max_step, "1 to 50 percentile points"));
        }
        if self.step > self.max_step {
            return Err(bad(
                "step",
                &self.step,
                &format!("0 to max_step ({})", self.max_step),
            ));
        }
        if self.light_samples < 2 {
            return Err(bad(
                "light_samples",
                &self.light_samples,
                "2 or more per class",
            ));
        }
        let int8 = match self.state {
            "int8" => true,
            "f32" => false,
            other => return Err(bad("state", &format!("'{other}'"), "'int8' or 'f32'")),
        };
        let window = ((self.window * geo.logical_blocks as f64).round() as u64).max(1);
        let model = match self.model {
            Some(path) => {
                let t = Tensors::load_for(path, p)?;
                let threshold = t.metadata.get("threshold").and_then(|v| v.parse().ok());
                Some((t, threshold))
            }
            None => None,
        };
        if !self.online && model.is_none() {
            return Err(Error::Parameter {
                policy: p.into(),
                reason: "online = false (no training) needs a trained model: give model=PATH"
                    .into(),
            });
        }
        Ok(Config {
            policy: p,
            hidden: self.hidden,
            seq_len: self.seq_len,
            window,
            history_windows: self.history_windows,
            train_fraction: self.train_fraction,
            bootstrap_epochs: self.bootstrap_epochs,
            converge: Convergence {
                min_delta: self.converge_delta,
                patience: self.converge_patience,
            },
            batch: self.batch,
            lr: self.lr,
            balance: self.balance,
            int8,
            step: self.step,
            max_step: self.max_step,
            light_per_class: self.light_samples,
            online: self.online,
            model,
            seed: self.seed,
        })
    }
}

/// Group ids.
const SHORT: GroupId = 0;
const LONG: GroupId = 1;
const UNSEEN: GroupId = 2;
const GC0: GroupId = 3;

/// Per-page byte: the last prediction (bits 0-1), the previous GC level
/// plus one (bits 2-5; 0 = never GC'ed).
const PRED_MASK: u8 = 0b11;

/// Shiro state.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Shiro {
    p: Params,
    #[serde(with = "crate::codec::static_str")]
    name: crate::codec::Name,
    levels: usize,
    segment_blocks: u32,
    classifier: Classifier,
    agent: Option<Agent>,
    page: Vec<u8>,
    meta: Option<MetaCache>,
}

impl Shiro {
    fn new(p: Params, geo: &Geometry, ng: bool) -> Result<Self> {
        let name = if ng { "shiro-ng" } else { "shiro" };
        let bad = |n: &str, v: &dyn std::fmt::Display, r: &str| out_of_range(name, n, v, r);
        if !(1..=8).contains(&p.gc_levels) {
            return Err(bad("gc_levels", &p.gc_levels, "1 to 8 GC levels"));
        }
        if !(p.epsilon.is_finite() && (0.0..=1.0).contains(&p.epsilon)) {
            return Err(bad("epsilon", &p.epsilon, "[0, 1]"));
        }
        if !(p.alpha.is_finite() && p.alpha > 0.0 && p.alpha <= 1.0) {
            return Err(bad("alpha", &p.alpha, "(0, 1]"));
        }
        if p.reward_horizon == 0 {
            return Err(bad("reward_horizon", &0, "1 or more GC operations"));
        }
        let per_pair = match p.q_update.as_str() {
            "per-pair" => true,
            "per-page" => false,
            other => {
                return Err(bad(
                    "q_update",
                    &format!("'{other}'"),
                    "'per-pair' or 'per-page'",
                ))
            }
        };
        if !(p.meta_cache.is_finite() && p.meta_cache > 0.0 && p.meta_cache <= 1.0) {
            return Err(bad("meta_cache", &p.meta_cache, "(0, 1] of the meta pages"));
        }
        let config = ClassifierParams {
            policy: name,
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
        let levels = if ng { 1 } else { p.gc_levels };
        let agent = (!ng).then(|| {
            Agent::new(
                levels,
                p.epsilon,
                p.alpha,
                p.reward_horizon,
                per_pair,
                p.seed,
            )
        });
        let meta = p.metadata.then(|| {
            MetaCache::new(
                geo.segments,
                geo.segment_blocks,
                geo.block_size,
                geo.logical_blocks,
                p.meta_cache,
            )
        });
        Ok(Shiro {
            classifier: Classifier::new(config, geo.logical_blocks, geo.block_size)?,
            name,
            levels,
            segment_blocks: geo.segment_blocks,
            agent,
            page: vec![Pred::Unseen as u8; geo.logical_blocks as usize],
            meta,
            p,
        })
    }

    fn hint(&self) -> VictimHint {
        VictimHint {
            threshold: self.classifier.threshold().unwrap_or(0),
            short_groups: 1 << SHORT,
        }
    }
}

impl Placement for Shiro {
    crate::checkpoint_by_serde!();
    fn training_in_flight(&self) -> bool {
        self.classifier.in_flight()
    }
    fn name(&self) -> &'static str {
        self.name
    }

    fn groups(&self) -> usize {
        GC0 as usize + self.levels
    }

    fn place_user(&mut self, ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]) {
        if self.classifier.window_due(ctx.now()) {
            self.classifier.end_window(ctx.now());
        }
        for (w, g) in writes.iter().zip(out.iter_mut()) {
            if let Some(m) = &mut self.meta {
                if let Some(old) = ctx.ftl.lookup(w.lba) {
                    m.lookup(old);
                }
            }
            let pred = self.classifier.classify(w);
            let b = &mut self.page[w.lba as usize];
            *b = (*b & !PRED_MASK) | pred as u8;
            *g = match pred {
                Pred::Short => SHORT,
                Pred::Long => LONG,
                Pred::Unseen => UNSEEN,
            };
        }
    }

    fn on_user_write(&mut self, lba: u32, time: u64, _group: GroupId) {
        self.classifier.written(lba, time);
    }

    fn prefetch(&self, lba: u32) {
        self.classifier.prefetch(lba);
        crate::prefetch::prefetch(&self.page, lba as usize);
    }

    fn place_gc(&mut self, ctx: &Ctx, b: &GcBlock) -> GroupId {
        let Some(agent) = &mut self.agent else {
            return GC0;
        };
        let byte = self.page[b.lba as usize];
        let previous = (byte >> 2) as usize;
        let s = State {
            age: self.classifier.age(b.lba, ctx.now()).unwrap_or(0),
            victim_valid: ctx.ftl.segs.valid[b.victim as usize],
            segment_blocks: self.segment_blocks,
            victim_type: b.from_group as usize,
            prediction: (byte & PRED_MASK) as usize,
            previous: if previous == 0 {
                self.levels
            } else {
                previous - 1
            },
        };
        let a = agent.act(&s);
        self.page[b.lba as usize] = (byte & PRED_MASK) | ((a as u8 + 1) << 2);
        GC0 + a as GroupId
    }

    fn select_victim(&mut self, ctx: &Ctx, max_valid: u32) -> Option<SegmentId> {
        if !self.p.own_victims {
            return None;
        }
        adjusted_greedy::select(ctx.ftl, max_valid, Some(&self.hint()))
    }

    fn victim_hint(&self) -> Option<VictimHint> {
        Some(self.hint())
    }

    fn on_event(&mut self, _ctx: &Ctx, ev: &Event) {
        match *ev {
            Event::Collected { seg, valid } => {
                if let Some(a) = &mut self.agent {
                    a.gc_done(1.0 - valid as f64 / self.segment_blocks as f64);
                }
                if let Some(m) = &mut self.meta {
                    m.erased(seg);
                }
            }
            Event::Sealed { .. } => {
                if let Some(m) = &mut self.meta {
                    m.sealed();
                }
            }
            Event::Window { .. } => {}
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

    /// Class 0: lifetime below T (SHORT); 1: T or more (LONG).
    fn class_bounds(&self, gc: bool) -> &[u64] {
        if gc {
            &[]
        } else {
            self.classifier.bounds()
        }
    }

    fn predicted_class(&self, group: GroupId, gc: bool) -> Option<u8> {
        (!gc && group <= LONG).then_some(group as u8)
    }

    fn memory_bytes(&self) -> usize {
        self.classifier.memory_bytes()
            + self.page.capacity()
            + self.agent.as_ref().map_or(0, |a| a.memory_bytes())
            + self.meta.as_ref().map_or(0, |m| m.memory_bytes())
    }

    fn state(&self) -> Option<Value> {
        let mut s = self.classifier.state();
        s["gc_levels"] = json!(self.levels);
        if let Some(a) = &self.agent {
            s["q_learning"] = json!({
                "states": Agent::states(self.levels),
                "stats": a.stats,
                "actions": a.actions,
            });
        }
        if let Some(m) = &self.meta {
            s["metadata"] = json!(m.report());
        }
        Some(s)
    }
}
