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
//!   The classifier's parameters are one struct shared with `phftl`
//!   ([`params::ClassifierParams`]); `min_steps` sets a floor on a window's
//!   Adam steps and `label_unseen = long` adds the window's writes not
//!   rewritten for T as LONG examples (both off in the paper).
//! * **Victims** (§III-C, Eq. 1): Adjusted Greedy
//!   ([`crate::victim::adjusted_greedy`]): greedy on the invalid share I,
//!   discounted to I/(1 + V·T/C) for SHORT superblocks sealed C pages ago.
//!   With `own_victims = false` the configured selector chooses (and
//!   `adjusted-greedy` gets T and the SHORT group as its hint).
//! * **GC migration** (§III-C, Table I, [`qlearn`]): a Q-learning agent
//!   picks each valid page's GC level from its age, the victim's valid
//!   share and type, the page's last prediction and its previous GC level;
//!   ε = 1%; the table starts as the hierarchical rule (user → GC0, GCk →
//!   GCk+1). Reward, applied 200 GCs after the decision: the invalid share
//!   of the superblock the decision filled, when collected or at the
//!   horizon (`q_credit = decision`, the default), or the paper's sentence
//!   read literally, the mean invalid share of the next 200 victims shared
//!   by every decision of a GC (`q_credit = gc`, which credits no decision
//!   by itself: exploration off gives the same WAF).
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
//! Choices where the paper is silent (with the likely choice): feature units and digit counts ([`features`]); the
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
//!
//! The page classifier is the policy kit's, shared with `phftl`:
//! [`crate::policy::kit::page_classifier`].
//!
//! [`classifier`]: crate::policy::kit::page_classifier::classifier
//! [`features`]: crate::policy::kit::page_classifier::features
//! [`threshold`]: crate::policy::kit::page_classifier::threshold
//! [`params::ClassifierParams`]: crate::policy::kit::page_classifier::params::ClassifierParams

pub mod metadata;
pub mod qlearn;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::kit::page_classifier::classifier::{Classifier, Pred};
use super::kit::page_classifier::params::{out_of_range, ClassifierParams};
use super::{Ctx, Event, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::device::Geometry;
use crate::error::{Error, Result};
use crate::ftl::{GroupId, SegmentId};
use crate::model::train::TrainingStats;
use crate::model::Tensors;
use crate::request::Request;
use crate::victim::{adjusted_greedy, VictimHint};
use metadata::MetaCache;
use qlearn::{Agent, Credit, State};

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "shiro",
    description: "Shiro (TCAD'25): GRU page classifier (cached state, hex features, Algorithm 1 threshold) into SHORT/LONG/UNSEEN, Q-learning GC migration over 5 levels, Adjusted Greedy victims",
    family: crate::policy::Family::Learned,
    needs_future: false,
    defaults: crate::params::defaults::<Params>,
    build: |p, geo| Ok(Box::new(Shiro::new(crate::params::parse("shiro", p)?, geo, false)?)),
};

pub(super) const INFO_NG: PolicyInfo = PolicyInfo {
    name: "shiro-ng",
    description:
        "Shiro-NG (Shiro Fig. 9): Shiro's user separation and Adjusted Greedy, one GC group",
    family: crate::policy::Family::Learned,
    needs_future: false,
    defaults: crate::params::defaults::<Params>,
    build: |p, geo| {
        Ok(Box::new(Shiro::new(
            crate::params::parse("shiro-ng", p)?,
            geo,
            true,
        )?))
    },
};

/// Shiro's parameters (the paper's defaults; [U]: our choice, see the
/// module doc): the classifier's ([`ClassifierParams`], flattened) and the
/// GC side's.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Params {
    /// The page classifier.
    #[serde(flatten)]
    pub classifier: ClassifierParams,
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
    /// Whose outcome rewards a GC decision: `decision` (its destination
    /// superblock's invalid share, at its collection or the horizon), `gc`
    /// (the next victims' mean, shared by every decision of a GC) or
    /// `collected` (the destination's share, only once it is collected);
    /// see [`qlearn`].
    pub q_credit: Credit,
    /// Choose victims by Adjusted Greedy (Eq. 1); false: the configured
    /// selector.
    pub own_victims: bool,
    /// Model the metadata cache (reported only).
    pub metadata: bool,
    /// Metadata cache [fraction of all meta pages] (§III-D: 0.01).
    pub meta_cache: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            classifier: ClassifierParams::default(),
            gc_levels: 5,
            epsilon: 0.01,
            alpha: 0.1,
            reward_horizon: 200,
            q_update: "per-pair".into(),
            q_credit: Credit::Decision,
            own_victims: true,
            metadata: true,
            meta_cache: 0.01,
        }
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
    own_victims: bool,
    /// The page of the GC decision whose destination is not known yet.
    placing: Option<u32>,
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
        let config = p.classifier.config(name, geo)?;
        let levels = if ng { 1 } else { p.gc_levels };
        let agent = (!ng).then(|| {
            Agent::with_credit(
                levels,
                p.epsilon,
                p.alpha,
                p.reward_horizon,
                per_pair,
                p.classifier.seed,
                p.q_credit,
                geo.segments as usize,
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
            own_victims: p.own_victims,
            placing: None,
        })
    }

    fn hint(&self) -> VictimHint {
        VictimHint {
            threshold: self.classifier.threshold().unwrap_or(0),
            short_groups: 1 << SHORT,
        }
    }
}

/// Tell `agent` where the page `lba` of its last decision was written.
fn placed(agent: &mut Agent, ftl: &crate::ftl::Ftl, lba: u32) {
    if let Some(pba) = ftl.lookup(lba) {
        let seg = ftl.segment_of(pba);
        agent.placed(seg, ftl.segs.erase_count[seg as usize]);
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
        if let Some(lba) = self.placing.take() {
            placed(agent, ctx.ftl, lba);
        }
        let a = agent.act(&s);
        if agent.credit() != Credit::Gc {
            self.placing = Some(b.lba);
        }
        self.page[b.lba as usize] = (byte & PRED_MASK) | ((a as u8 + 1) << 2);
        GC0 + a as GroupId
    }

    fn select_victim(&mut self, ctx: &Ctx, max_valid: u32) -> Option<SegmentId> {
        if !self.own_victims {
            return None;
        }
        adjusted_greedy::select(ctx.ftl, max_valid, Some(&self.hint()))
    }

    fn victim_hint(&self) -> Option<VictimHint> {
        Some(self.hint())
    }

    fn on_event(&mut self, ctx: &Ctx, ev: &Event) {
        match *ev {
            Event::Collected { seg, valid } => {
                if let Some(a) = &mut self.agent {
                    if let Some(lba) = self.placing.take() {
                        placed(a, ctx.ftl, lba);
                    }
                    a.collected(
                        ctx.ftl,
                        seg,
                        1.0 - valid as f64 / self.segment_blocks as f64,
                    );
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
                "credit": a.credit(),
                "states": Agent::states(self.levels),
                "stats": a.stats,
                "actions": a.actions,
                "q_mean": a.q_mean(),
            });
        }
        if let Some(m) = &self.meta {
            s["metadata"] = json!(m.report());
        }
        Some(s)
    }
}
