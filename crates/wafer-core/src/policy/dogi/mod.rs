//! `dogi`: DOGI, "Data Placement with Oracle-Guided Insights for
//! Log-Structured Systems" (FAST'26, §4, Fig. 5). Where the paper leaves a
//! detail open, the authors' artifact (github `dgist-datalab/DOGI`, cited
//! in its appendix; it has no licence, so nothing is copied from it) is
//! followed where its description settles it, as noted below.
//!
//! Groups: G_hot (id 0), G_frzn (id 1), the intermediate groups G1..GN
//! (ids 2..2+N, N ≤ 10, warm to cold). The baseline design (before the
//! first model, after an accuracy collapse, and in `dogi+User`) has a
//! non-hot user group (G1's id) and two age-ordered GC groups (G_frzn's id
//! and 12).
//! * **Hot filter** (§4.2.1, Fig. 6): a user block whose latest invalidation
//!   time (time since its LBA's previous write) is below μ goes to G_hot.
//!   Every window of n user writes, μ grows by d if the window's WAF fell;
//!   if it rose, a raise made by the previous window is undone (back to the
//!   previous μ); if it moved less than 5%, μ stays. μ never falls below its
//!   start.
//! * **ML-Alloc** (§4.2.2-4.2.3): the other blocks are classified into ten
//!   lifetime categories c1..c10 (upper bounds 1% of the capacity, doubling)
//!   by a 6-32-32-10 MLP (1,610 parameters) on the six features of Table 3
//!   ([`features`]) and go to the group their category is mapped to. The
//!   paper runs inference in batches of 128 blocks to amortise each call;
//!   here a call costs nothing to amortise, and one block's inference
//!   ([`Mlp::classify`], 89 ns) was faster than a batched layout per block
//!   (140 ns), so blocks are classified one at a time (the same
//!   predictions). One non-hot block in ten is sampled: its
//!   features and predicted category are kept until its LBA is overwritten
//!   (its label); every `retrain` the model is retrained (10 epochs) on
//!   nine in ten of the latest samples, through the process's
//!   [`crate::model::train`] trainer, on a thread beside the replay (as the
//!   paper trains on the host while the I/O path runs): the new model, its
//!   configuration and its relocation table take effect `deploy` user
//!   writes after the training started, whatever the thread's speed.
//! * **Group configuration** (§4.3, [`config`]): the new model classifies
//!   the held-out tenth of the samples; those <category, lifetime> records
//!   are the prediction log (PLog) that feeds the Markov chain (Free,
//!   G_hot, G1..GK) scoring the 512 ways of merging the ten categories into
//!   groups; the best is applied (or the one `mask` forces, for Fig. 13's
//!   sweep). Each configuration's estimated WAF and the WAF measured while
//!   it ran are kept in `policy_state`. When the live accuracy of the model
//!   (its write-time predictions of the labelled samples) is below
//!   `fallback_accuracy`, DOGI falls back to the baseline design until a
//!   later model is accurate again.
//! * **GC-written blocks** (§4.4): the frozen filter sends a block never
//!   updated since the last clock reset (every 200M writes) to G_frzn;
//!   ML-Reloc sends the others to the group holding the mean remaining
//!   lifetime of their category's mispredicted blocks (PLog); a block
//!   relocated once and found valid again moves to the next group (age).
//! * **Victims** (§4.1): an expired segment (residence since its first write
//!   beyond its group's BIR upper bound; G_hot's is μ), scanned from G_hot to
//!   G(N-1) (`expired = always`, the paper's rule and the default;
//!   `guarded`: only if it holds no more valid blocks than the pool rule's
//!   victim);
//!   else a segment of the pool (`pool = tail`, the paper's; `pool = all`:
//!   any sealed segment) (GN, G_frzn and groups no longer in use),
//!   by `pool_victim`: the highest gp/(1−gp)·√age, gp its invalid share and
//!   age the time since its first write (the artifact's `dogiselect.cc`,
//!   cost-benefit-like; the default), or the fewest valid blocks (the paper's
//!   text), found through an index by valid count (`pool.rs`) with the picks
//!   of scoring every segment. Starvation guard (ours, off by default): when
//!   the pool's victim would free less than `starvation_guard` × what the
//!   best segment anywhere would, the configured selector chooses instead; a
//!   pool whose victim would free nothing always hands over (a fully valid
//!   victim frees no space). Which rule chose each victim is counted in
//!   `policy_state.victims` (expired, pool, guard; `selector` for the
//!   baseline design's victims).
//! * **Ablations** (Fig. 14), by name: `dogi+User` (hot filter + the model
//!   into ten fixed groups; the baseline's two age-ordered GC groups and
//!   the configured selector), `dogi+Grp` (+ the group configuration with
//!   its expired victims, GC age-based down the chain as Fig. 12(b)'s
//!   "age-based" relocation: G_hot → G1, Gi → G(i+1), GN → GN), `dogi+GC`
//!   (+ the frozen filter and ML-Reloc: full DOGI).
//!
//! Scaled defaults: the paper's absolute sizes are for 128 GiB (33.5M 4 KiB
//! blocks, C); wafer keeps their ratio to the logical capacity C: μ0 = 200K
//! → 0.006 C, d = 65K → 0.002 C, n = 10M → 0.3 C, the bitmap window 40M →
//! 1.2 C, retraining every 26M → 0.78 C, the frozen clock 200M → 6 C, the
//! 300K-sample dataset → 0.009 C (at least `min_samples`). The deployment
//! delay, 0.25 C, is the paper's ~30 s of training at ~1 GiB/s of writes.
//!
//! Deviations / choices where the paper is silent:
//! * With a frozen model (`model`, `retrain` = 0) the group configuration
//!   and ML-Reloc's table are chosen every 0.78 C (the retraining period)
//!   from the model's predictions of all labelled samples (none was trained
//!   on), as each training would.
//! * Before the first model is trained (none is given with `model`), DOGI
//!   runs the baseline design; a training needs `min_examples` labelled
//!   samples of at least two categories, else it waits for the next period.
//! * Training labels: a sample whose block died is labelled by its lifetime;
//!   one still alive past c1's bound by the category its age has reached (a
//!   lower bound: its lifetime is censored); younger live samples are left
//!   out (their category is unknown). The PLog keeps live records as
//!   censored ages (see [`config`]).
//! * G_hot's blocks found valid at GC go to G1 (age-based); blocks with no
//!   category (written in fallback) are relocated by age.
//! * The hot filter starts moving μ after two drive-writes (a prefill and
//!   one more): until then WAF climbs whatever μ is, and following it would
//!   only shrink μ.
//! * The configuration model's details are the artifact's (see [`config`]),
//!   with the valid blocks of the expiring groups by Little's law and the
//!   space budget of wafer's engine (its GC reserve, an open segment per
//!   group); `config_model: "flow"` keeps each category's records along its
//!   path and follows ML-Reloc instead.
//! * `expired = guarded` (ours, no longer the default): an expired segment
//!   is taken only if it holds no more valid blocks than the pool's victim
//!   (with little GC, expired segments can be 60-80% valid while emptier
//!   ones exist). Measured over 6 workloads x 3 OPs x 2 selectors x 3
//!   seeds (issue 49, docs/FIDELITY.md "DOGI on mixes"), the paper's
//!   `always` is as good or better almost everywhere (mean 0.975x, up to
//!   0.80x on a mix, at most 1.025x on uniform), so `always` is the default.
//! * Prediction accuracy (with `--accuracy`): user classes are {hot,
//!   c1..c10} with bounds [μ, 1% C, ...]; blocks placed without a model
//!   (warm-up, fallback) are not scored unless hot. GC classes are the
//!   groups' BIRs, G_frzn counting as the last.

pub mod config;
pub mod features;
mod pool;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::kit::online::Online;
use super::kit::sampler::{Sampler, NO_PRED};
use super::kit::sealed::SealedFifo;
use super::{Ctx, Event, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::device::Geometry;
use crate::error::{Error, Result};
use crate::ftl::{Ftl, GroupId, SegState, SegmentId};
use crate::future::accuracy::class_of;
use crate::model::train::TrainingStats;
use crate::model::{Mlp, Tensors};
use crate::params;
use config::{Choice, Inputs, Model, PLog, Relocation, CLASSES, MASKS};
use features::{FeatureState, FEATURES};
use pool::PoolIndex;

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "dogi",
    description: "DOGI (FAST'26): hot filter + 10-class MLP, PLog/Markov-chain group configuration, frozen filter, ML relocation, expired victims",
    family: crate::policy::Family::Learned,
    needs_future: false,
    defaults: params::defaults::<Params>,
    build: |p, geo| Ok(Box::new(Dogi::new(params::parse("dogi", p)?, geo)?)),
};

/// Which of DOGI's components run (Fig. 14's ablations).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    /// Hot filter and the model's ten groups; the base design's GC.
    User,
    /// + the accuracy-aware group configuration and expired victims.
    Grp,
    /// + the frozen filter and ML-Reloc: DOGI.
    Full,
}

impl Stage {
    /// The stage's name, as in the `stage` parameter.
    pub fn name(self) -> &'static str {
        match self {
            Stage::User => "user",
            Stage::Grp => "grp",
            Stage::Full => "full",
        }
    }
}

/// How a victim is chosen among the pool's segments (GN, G_frzn and the
/// groups no longer in use).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PoolVictim {
    /// The fewest valid blocks (the paper's §4.1).
    FewestValid,
    /// The highest gp/(1−gp)·√age (the artifact's `dogiselect.cc`).
    CostBenefit,
}

/// Which segments compete for a victim when none is expired (§4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PoolRule {
    /// The pool: GN, G_frzn and the groups not in use (the paper's §4.1).
    Tail,
    /// Every sealed segment, G_hot and G1..G(N-1) included (ours: a
    /// segment of an expiring group is otherwise collected only once it
    /// expires).
    All,
}

/// When an expired segment of G_hot..G(N-1) is the victim (§4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Expired {
    /// Whenever one exists (the paper's §4.1 and the artifact's
    /// `dogiselect.cc`).
    Always,
    /// Only if it holds no more valid blocks than the pool rule's victim
    /// (ours: with little GC, expired segments can be 60-80% valid while
    /// emptier ones exist).
    Guarded,
}

/// DOGI's parameters (paper defaults; sizes as fractions of the logical
/// capacity C, see the module doc).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Components: `user`, `grp` or `full` (also by name: `dogi+User` ...).
    pub stage: Stage,
    /// Hot filter: initial upper bound μ [C].
    pub hot_init: f64,
    /// Hot filter: step d of μ [C].
    pub hot_step: f64,
    /// Hot filter: window n over which WAF is compared [C].
    pub hot_window: f64,
    /// Hot filter: relative WAF change below which μ stays.
    pub hot_deadband: f64,
    /// Upper bound of c1 [C]; the next eight double it.
    pub first_bound: f64,
    /// Sample one non-hot block in this many.
    pub sample_every: u32,
    /// Samples kept for training [C].
    pub samples: f64,
    /// Samples kept at least.
    pub min_samples: usize,
    /// Labelled samples needed to train.
    pub min_examples: usize,
    /// Retrain every this many user writes [C]; 0 = never (needs `model`).
    pub retrain: f64,
    /// Hidden widths of the MLP.
    pub hidden: Vec<usize>,
    /// Training epochs.
    pub epochs: usize,
    /// Training batch [examples].
    pub batch: usize,
    /// AdamW learning rate.
    pub lr: f64,
    /// Access-bitmap window [C].
    pub bitmap_window: f64,
    /// Chunk of the per-chunk frequency [bytes].
    pub chunk_bytes: u64,
    /// Frozen filter clock: flags cleared every this many user writes [C].
    pub frozen_reset: f64,
    /// A new model takes effect this long after its training started [C]
    /// (the training runs beside the replay meanwhile); 0 = synchronously.
    pub deploy: f64,
    /// One sample in this many is held out of training for the PLog (the
    /// artifact's 10% validation split); 0 = PLog from the training set.
    pub holdout: u32,
    /// The configuration model: `chain` (the artifact's) or `flow`.
    pub config_model: Model,
    /// Force this configuration (a boundary mask < 512: bit k splits after
    /// category k; 511 = ten groups, 0 = one) instead of searching
    /// (Fig. 13's sweep); the model still estimates it.
    pub mask: Option<u32>,
    /// Victims of the pool: `cost-benefit` (the artifact's score) or
    /// `fewest-valid` (the paper's text).
    pub pool_victim: PoolVictim,
    /// Expired victims: `always` (the paper's rule) or `guarded` (only
    /// when no fuller than the pool's victim).
    pub expired: Expired,
    /// The other victims: from the `tail` pool (the paper's rule) or from
    /// `all` sealed segments.
    pub pool: PoolRule,
    /// The pool's victim must free at least this share of what the best
    /// segment anywhere frees, else the configured selector chooses (0: no
    /// guard, as in the artifact; wafer's earlier DOGI used 0.5 with
    /// `fewest-valid`).
    pub starvation_guard: f64,
    /// Fall back to the base design below this live accuracy.
    pub fallback_accuracy: f64,
    /// A trained model (`wafer train dogi ...`) to start from.
    pub model: Option<String>,
    /// Seed of the trainings.
    pub seed: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            stage: Stage::Full,
            hot_init: 0.006,
            hot_step: 0.002,
            hot_window: 0.3,
            hot_deadband: 0.05,
            first_bound: 0.01,
            sample_every: 10,
            samples: 0.009,
            min_samples: 20_000,
            min_examples: 256,
            retrain: 0.78,
            hidden: vec![32, 32],
            epochs: 10,
            batch: 128,
            lr: 1e-2,
            bitmap_window: 1.2,
            chunk_bytes: 2 << 20,
            frozen_reset: 6.0,
            deploy: 0.25,
            holdout: 10,
            config_model: Model::Chain,
            mask: None,
            pool_victim: PoolVictim::CostBenefit,
            expired: Expired::Always,
            pool: PoolRule::Tail,
            starvation_guard: 0.0,
            fallback_accuracy: 0.1,
            model: None,
            seed: 1,
        }
    }
}

/// Group ids. The base design (warm-up, fallback, ablations) reuses ids:
/// its non-hot user group is G1's, its first GC group G_frzn's, so the
/// engine reserves open and free segments for 13 groups, not 15.
const HOT: GroupId = 0;
const FROZEN: GroupId = 1;
const FIRST: GroupId = 2;
const BASE_COLD: GroupId = FIRST;
const BASE_GC: [GroupId; 2] = [FROZEN, 12];
const GROUPS: usize = 13;

/// Per-LBA metadata byte: the category of the last user write (low 4 bits),
/// and two flags.
const CAT_HOT: u8 = 10;
const CAT_NONE: u8 = 15;
const RELOCATED: u8 = 0x10;
const UPDATED: u8 = 0x20;

fn bad(reason: impl Into<String>) -> Error {
    Error::Parameter {
        policy: "dogi".into(),
        reason: reason.into(),
    }
}

/// Which rule chose each victim.
#[derive(Clone, Copy, Debug, Default, Serialize, serde::Deserialize)]
struct Victims {
    /// An expired segment of G_hot..G(N-1).
    expired: u64,
    /// The pool's rule.
    pool: u64,
    /// The configured selector, the pool's victim freeing too little.
    guard: u64,
    /// The configured selector, in the baseline design.
    selector: u64,
}

/// Configurations kept in `policy_state`.
const MAX_HISTORY: usize = 64;

/// Live samples scored before the live accuracy is trusted.
const MIN_SCORED: u64 = 100;

/// What a background training hands over: the model and its categories
/// of the held-out samples (the PLog records). Never checkpointed: a
/// checkpoint waits until it is deployed.
struct Trained {
    mlp: Mlp,
    plog: Vec<(u8, u64, bool)>,
}

/// Counters since the configuration in force was applied.
#[derive(Clone, Copy, Debug, Default, serde::Serialize, serde::Deserialize)]
struct Period {
    user: u64,
    gc: u64,
    hot_in: u64,
    hot_out: u64,
    /// Per group id: victims collected and their valid blocks.
    victims: [u64; GROUPS],
    victim_valid: [u64; GROUPS],
}

/// DOGI state.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Dogi {
    p: Params,
    #[serde(with = "crate::codec::static_str")]
    name: crate::codec::Name,
    capacity: u64,
    segment: u32,
    /// The features' tables; beside each LBA's access bitmap, its
    /// category and flags (`feats.tag`).
    feats: FeatureState,
    online: Online,
    /// With a frozen model (`retrain` = 0): the group configuration and
    /// ML-Reloc's table are chosen again every `config_every` user writes
    /// (the default retraining period) from the model's predictions of the
    /// labelled samples, as a training would; 0 while DOGI retrains.
    config_every: u64,
    next_config: u64,
    // Hot filter.
    mu: u64,
    mu_max: u64,
    hf_window: u64,
    hf_next: u64,
    hf_prev: Option<f64>,
    /// The last window raised μ.
    hf_raised: bool,
    hf_user: u64,
    hf_gc: u64,
    // Model and configuration.
    sizes: Vec<usize>,
    mlp: Option<Mlp>,
    use_model: bool,
    bounds: Vec<u64>,
    choice: Choice,
    reloc: [u8; CLASSES],
    user_bounds: Vec<u64>,
    gc_bounds: Vec<u64>,
    next_bitmap: u64,
    bitmap_every: u64,
    next_frozen: u64,
    frozen_every: u64,
    // Per batch.
    x: Vec<f32>,
    rows: Vec<u16>,
    cats: Vec<u8>,
    /// The prediction made for each block of the batch (or NO_PRED).
    bpred: Vec<u8>,
    // Bookkeeping.
    fifo: SealedFifo,
    /// Sealed segments by valid count, for the pool victim.
    pool: PoolIndex,
    period: Period,
    /// The chain's estimate of the configuration in force.
    estimate: Option<config::Estimate>,
    victims: Victims,
    fallbacks: u64,
    live_accuracy: Option<f64>,
    #[serde(with = "crate::codec::as_json")]
    history: Vec<Value>,
    placed: [u64; 3],
}

impl Dogi {
    fn new(p: Params, geo: &Geometry) -> Result<Self> {
        let c = geo.logical_blocks as u64;
        let frac = |v: f64, what: &str| -> Result<u64> {
            if v.is_finite() && v >= 0.0 {
                Ok((v * c as f64).round() as u64)
            } else {
                Err(bad(format!(
                    "{what} must be a fraction of the capacity >= 0, got {v}"
                )))
            }
        };
        if p.sample_every == 0 || p.epochs == 0 || p.batch == 0 {
            return Err(bad("sample_every, epochs and batch must be at least 1"));
        }
        if p.hidden.is_empty() || p.hidden.contains(&0) {
            return Err(bad(format!(
                "hidden must list positive widths, got {:?}",
                p.hidden
            )));
        }
        if !(0.0..1.0).contains(&p.fallback_accuracy) {
            return Err(bad("fallback_accuracy must be in [0, 1)"));
        }
        if !(0.0..=1.0).contains(&p.starvation_guard) {
            return Err(bad("starvation_guard must be in [0, 1]"));
        }
        if let Some(m) = p.mask.filter(|&m| m >= MASKS) {
            return Err(bad(format!(
                "mask must be below {MASKS} (one bit per category boundary), got {m}"
            )));
        }
        let first = frac(p.first_bound, "first_bound")?.max(2);
        let bounds: Vec<u64> = (0..CLASSES as u32 - 1).map(|k| first << k).collect();
        let mu_max = first - 1;
        let mu = frac(p.hot_init, "hot_init")?.clamp(1, mu_max);
        let retrain_every = frac(p.retrain, "retrain")?;
        let sample_cap = (frac(p.samples, "samples")? as usize).max(p.min_samples);
        let hf_window = frac(p.hot_window, "hot_window")?.max(1);
        let bitmap_every = frac(p.bitmap_window, "bitmap_window")?.max(1);
        let frozen_every = frac(p.frozen_reset, "frozen_reset")?.max(1);
        let chunk_blocks = (p.chunk_bytes / geo.block_size as u64).max(1) as u32;
        let mut sizes = vec![FEATURES];
        sizes.extend(&p.hidden);
        sizes.push(CLASSES);
        let mlp = match &p.model {
            Some(path) => Some(Mlp::load(&Tensors::load_for(path, "dogi")?, "mlp", &sizes)?),
            None => None,
        };
        let samples = Sampler::new(FEATURES, sample_cap, geo.logical_blocks);
        let online = Online::new(
            "dogi",
            samples,
            p.sample_every,
            retrain_every,
            mlp.is_some(),
        )?
        .with_deploy_delay(frac(p.deploy, "deploy")?);
        let mut d = Dogi {
            name: match p.stage {
                Stage::User => "dogi+User",
                Stage::Grp => "dogi+Grp",
                Stage::Full => "dogi",
            },
            capacity: c,
            segment: geo.segment_blocks,
            feats: FeatureState::new(geo.logical_blocks, chunk_blocks, CAT_NONE),
            online,
            config_every: if retrain_every == 0 {
                frac(Params::default().retrain, "retrain")?
            } else {
                0
            },
            next_config: u64::MAX,
            mu,
            mu_max,
            hf_window,
            hf_next: hf_window,
            hf_prev: None,
            hf_raised: false,
            hf_user: 0,
            hf_gc: 0,
            sizes,
            use_model: mlp.is_some(),
            mlp,
            choice: Choice::identity(&bounds),
            reloc: std::array::from_fn(|k| (k + 1).min(CLASSES - 1) as u8),
            bounds,
            user_bounds: Vec::new(),
            gc_bounds: Vec::new(),
            bitmap_every,
            next_bitmap: bitmap_every,
            frozen_every,
            next_frozen: frozen_every,
            x: Vec::new(),
            rows: Vec::new(),
            cats: Vec::new(),
            bpred: Vec::new(),
            fifo: SealedFifo::new(GROUPS),
            pool: PoolIndex::new(geo.segments as usize, geo.segment_blocks),
            period: Period::default(),
            estimate: None,
            victims: Victims::default(),
            fallbacks: 0,
            live_accuracy: None,
            history: Vec::new(),
            placed: [0; 3],
            p,
        };
        d.refresh_bounds();
        Ok(d)
    }

    fn refresh_bounds(&mut self) {
        self.user_bounds = std::iter::once(self.mu)
            .chain(self.bounds.iter().copied())
            .collect();
        self.gc_bounds = std::iter::once(self.mu)
            .chain(self.choice.uppers.iter().copied())
            .collect();
    }

    /// Intermediate groups in use.
    fn n(&self) -> usize {
        self.choice.groups()
    }

    /// The last intermediate group's id.
    fn last(&self) -> GroupId {
        FIRST + self.n() as GroupId - 1
    }

    /// Whether victims follow DOGI's rule (else the configured selector).
    fn own_victims(&self) -> bool {
        self.use_model && self.p.stage != Stage::User
    }

    /// G_hot and G1..G(N-1): the groups whose segments expire, with bounds.
    #[inline]
    fn expiry(&self, g: GroupId) -> Option<u64> {
        if g == HOT {
            return Some(self.mu);
        }
        let j = g.checked_sub(FIRST)? as usize;
        self.choice.uppers.get(j).copied()
    }

    /// Start training a new model on the samples (§4.2.2): nine in ten
    /// train it; the held-out tenth, classified by the new model, becomes
    /// the PLog (§4.3). The model is deployed by [`Dogi::deploy`].
    fn start_training(&mut self, now: u64) {
        let (mut x, mut y) = (Vec::new(), Vec::new());
        let (mut held, mut lives) = (Vec::new(), Vec::new());
        let (mut right, mut scored) = (0u64, 0u64);
        let holdout = self.p.holdout as usize;
        // A sample still alive is labelled by its age, a lower bound (the
        // category it has reached), once that is past c1; the log keeps it
        // as censored at that age.
        for (i, e) in self
            .online
            .samples
            .examples(now, self.bounds[0])
            .enumerate()
        {
            let label = class_of(&self.bounds, e.life) as u32;
            if e.pred != NO_PRED {
                scored += 1;
                right += (e.pred as u32 == label) as u64;
            }
            if holdout > 0 && i % holdout == holdout - 1 {
                held.extend_from_slice(e.x);
                lives.push((e.life, e.alive));
            } else {
                x.extend_from_slice(e.x);
                y.push(label);
            }
        }
        if scored >= MIN_SCORED {
            self.live_accuracy = Some(right as f64 / scored as f64);
        }
        let classes = y.iter().fold(0u32, |m, &c| m | 1 << c).count_ones();
        if y.len() < self.p.min_examples || classes < 2 {
            return;
        }
        let Some(trainer) = self.online.trainer() else {
            return;
        };
        if holdout == 0 {
            // The PLog from the training set itself (the old behaviour).
            held.clone_from(&x);
            lives = self
                .online
                .samples
                .examples(now, self.bounds[0])
                .map(|e| (e.life, e.alive))
                .collect();
        }
        let spec = self
            .online
            .spec(self.p.epochs, self.p.batch, self.p.lr, self.p.seed);
        let sizes = self.sizes.clone();
        let examples = y.len();
        self.online.spawn(now, examples, move || {
            let (t, loss) = trainer.train_mlp("mlp", &sizes, &x, &y, &spec)?;
            let mut mlp = Mlp::load(&t, "mlp", &sizes)?;
            let plog = held
                .chunks_exact(FEATURES)
                .zip(lives)
                .map(|(r, (life, alive))| (mlp.classify(r) as u8, life, alive))
                .collect();
            Ok((Trained { mlp, plog }, loss))
        });
    }

    /// With a frozen model: a new group configuration from its predictions
    /// of every labelled sample (none was trained on, so all are held out).
    fn configure_frozen(&mut self, ctx: &Ctx, now: u64) {
        if self.p.stage == Stage::User {
            return;
        }
        let Some(mlp) = self.mlp.as_mut() else {
            return;
        };
        let plog: Vec<_> = self
            .online
            .samples
            .examples(now, self.bounds[0])
            .map(|e| (mlp.classify(e.x) as u8, e.life, e.alive))
            .collect();
        if plog.len() >= self.p.min_examples {
            self.configure(ctx, &PLog::new(plog));
        }
    }

    /// Put a trained model to work: the fallback decision (§4.3), the new
    /// group configuration and ML-Reloc's table.
    fn deploy(&mut self, ctx: &Ctx, t: Trained) {
        let was = self.use_model;
        self.use_model = !self
            .live_accuracy
            .is_some_and(|a| a < self.p.fallback_accuracy && self.mlp.is_some());
        if was && !self.use_model {
            self.fallbacks += 1;
        }
        self.mlp = Some(t.mlp);
        if self.p.stage != Stage::User {
            self.configure(ctx, &PLog::new(t.plog));
        }
        self.refresh_bounds();
    }

    /// The chain's inputs now (§4.3): the hot group's measured share and
    /// victim valid ratio since the last configuration, the device's space.
    fn inputs(&self, ctx: &Ctx) -> Inputs {
        let segs = &ctx.ftl.segs;
        let (mut hot_segments, mut hot_live, mut valid) = (0u64, 0u64, 0u64);
        for s in 0..segs.state.len() {
            if segs.state[s] != SegState::Free {
                valid += segs.valid[s] as u64;
                if segs.group[s] == HOT {
                    hot_segments += 1;
                    hot_live += segs.valid[s] as u64;
                }
            }
        }
        let p = &self.period;
        let full = self.p.stage == Stage::Full;
        Inputs {
            hot_share: p.hot_in as f64 / p.user.max(1) as f64,
            hot_valid_ratio: (p.hot_out as f64 / p.hot_in.max(1) as f64).min(1.0),
            hot_segments: hot_segments as f64,
            hot_live: hot_live as f64,
            segments: ctx.geometry().segments as f64,
            reserve: ctx.ftl.gc_reserve as f64,
            // G_hot, and G_frzn in full DOGI.
            other_groups: if full { 2.0 } else { 1.0 },
            valid: valid as f64,
            segment: self.segment as f64,
            relocation: if full {
                Relocation::MlReloc
            } else {
                Relocation::AgeBased
            },
        }
    }

    /// Victim valid ratio measured since the configuration was applied:
    /// G1..G(N-1), then the pool (GN and G_frzn).
    fn measured_valid_ratios(&self) -> Vec<Option<f64>> {
        let p = &self.period;
        let ratio = |ids: &[GroupId]| {
            let n: u64 = ids.iter().map(|&g| p.victims[g as usize]).sum();
            let v: u64 = ids.iter().map(|&g| p.victim_valid[g as usize]).sum();
            (n > 0).then(|| v as f64 / (n * self.segment as u64) as f64)
        };
        let last = self.last();
        (FIRST..last)
            .map(|g| ratio(&[g]))
            .chain(std::iter::once(ratio(&[last, FROZEN])))
            .collect()
    }

    /// Pick the group configuration (§4.3) and ML-Reloc's table (§4.4).
    fn configure(&mut self, ctx: &Ctx, log: &PLog) {
        let inp = self.inputs(ctx);
        // How the configuration in force did.
        let p = self.period;
        let measured = self.measured_valid_ratios();
        if let Some(last) = self.history.last_mut() {
            if p.user > 0 {
                last["measured_waf"] = json!((p.user + p.gc) as f64 / p.user as f64);
                last["measured_valid_ratio"] = json!(measured);
            }
        }
        self.period = Period::default();
        let model = self.p.config_model;
        let pick = config::search(log, &self.bounds, &inp, model);
        let chosen = match (self.p.mask, &pick) {
            (Some(m), _) => Some(config::choice(m, &self.bounds, f64::NAN)),
            (None, Some(c)) => Some(c.clone()),
            (None, None) => None,
        };
        if let Some(c) = chosen {
            self.reloc = config::relocation(log, &c);
            self.choice = c;
        }
        let mask = self.choice.mask;
        // Both models' estimates of the configuration in force.
        let both =
            [Model::Chain, Model::Flow].map(|m| config::estimate(log, &self.bounds, mask, &inp, m));
        let waf = |i: usize| both[i].as_ref().map(|e| e.waf);
        self.estimate = both[(model == Model::Flow) as usize].clone();
        self.choice.waf = self.estimate.as_ref().map_or(f64::NAN, |e| e.waf);
        if self.history.len() < MAX_HISTORY {
            self.history.push(json!({
                "time": ctx.now(),
                "mask": mask,
                "groups": self.n(),
                "uppers": self.choice.uppers,
                "model_pick": pick.as_ref().map(|c| c.mask),
                "estimated_waf": self.estimate.as_ref().map(|e| e.waf),
                "estimated_waf_chain": waf(0),
                "estimated_waf_flow": waf(1),
                "estimated_valid_ratio": self.estimate.as_ref().map(|e| &e.valid_ratio),
                "pool_spare": self.estimate.as_ref().map(|e| e.pool_spare),
                "hot_share": inp.hot_share,
                "plog_records": log.len(),
                "model_on": self.use_model,
                "live_accuracy": self.live_accuracy,
                "mu": self.mu,
            }));
        }
    }

    /// Fig. 6: move μ by the last window's WAF. A window whose WAF fell
    /// (by 5% or more) raises μ by d; one whose WAF rose undoes the last
    /// raise ("returns to the previous μ"), and holds μ if the last window
    /// raised nothing; a change under 5% holds μ. So μ never falls below
    /// its start.
    fn adapt_mu(&mut self) {
        let u = std::mem::take(&mut self.hf_user);
        let g = std::mem::take(&mut self.hf_gc);
        if u == 0 {
            return;
        }
        let waf = (u + g) as f64 / u as f64;
        if self.hf_next < 2 * self.capacity {
            // Still warming up (WAF climbs after a prefill whatever μ is).
            self.hf_prev = Some(waf);
            return;
        }
        if let Some(prev) = self.hf_prev {
            let step = ((self.p.hot_step * self.capacity as f64).round() as u64).max(1);
            let raised = std::mem::take(&mut self.hf_raised);
            if (waf - prev).abs() >= self.p.hot_deadband * prev {
                if waf < prev {
                    self.mu = self.mu.saturating_add(step).min(self.mu_max);
                    self.hf_raised = true;
                } else if raised {
                    self.mu = self.mu.saturating_sub(step).max(1);
                }
                self.refresh_bounds();
            }
        }
        self.hf_prev = Some(waf);
    }

    /// The current model's tensors, with metadata saying what they are for.
    pub fn model_tensors(&self) -> Option<Tensors> {
        let mlp = self.mlp.as_ref()?;
        let mut t = Tensors::default();
        mlp.store(&mut t, "mlp");
        for (k, v) in [
            ("policy", "dogi".to_string()),
            ("model", "mlp".into()),
            ("features", FEATURES.to_string()),
            ("classes", CLASSES.to_string()),
            ("hidden", format!("{:?}", self.p.hidden)),
            ("trainings", self.online.training.trainings.to_string()),
        ] {
            t.metadata.insert(k.into(), v);
        }
        Some(t)
    }
}

impl Placement for Dogi {
    crate::checkpoint_by_serde!();
    fn training_in_flight(&self) -> bool {
        self.online.in_flight()
    }
    fn name(&self) -> &'static str {
        self.name
    }

    fn groups(&self) -> usize {
        GROUPS
    }

    fn place_user(&mut self, ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]) {
        let now = ctx.now();
        if let Some(t) = self.online.ready::<Trained>(now) {
            self.deploy(ctx, t);
        }
        if self.online.due(now) {
            self.start_training(now);
        }
        if now >= self.next_config {
            self.next_config = now.saturating_add(self.config_every);
            self.configure_frozen(ctx, now);
        }
        let n = writes.len();
        self.x.resize(n * FEATURES, 0.0);
        self.cats.clear();
        self.rows.clear();
        self.bpred.clear();
        self.bpred.resize(n, NO_PRED);
        for (i, w) in writes.iter().enumerate() {
            let hot = self
                .feats
                .last
                .since(w.lba, w.time)
                .is_some_and(|t| t < self.mu);
            self.feats
                .extract(w.lba, w.time, &mut self.x[i * FEATURES..(i + 1) * FEATURES]);
            self.cats.push(if hot { CAT_HOT } else { CAT_NONE });
            if !hot {
                self.rows.push(i as u16);
            }
        }
        // ML-Alloc: inference of the non-hot rows (only the sampled ones
        // while the model is off, to keep measuring its accuracy).
        for (j, &r) in self.rows.iter().enumerate() {
            let i = r as usize;
            if !(self.use_model || self.online.will_sample(j as u64)) {
                continue;
            }
            if let Some(mlp) = self.mlp.as_mut() {
                self.bpred[i] = mlp.classify(&self.x[i * FEATURES..(i + 1) * FEATURES]) as u8;
            }
            if self.use_model {
                self.cats[i] = self.bpred[i];
            }
        }
        // Sampling, in block order: one non-hot block in `sample_every`.
        self.online.begin_batch();
        for (i, w) in writes.iter().enumerate() {
            if self.cats[i] == CAT_HOT {
                self.online.skip();
            } else {
                let row = &self.x[i * FEATURES..(i + 1) * FEATURES];
                self.online.offer(row, self.bpred[i], w.time, w.lba);
            }
        }
        for (&c, g) in self.cats.iter().zip(out.iter_mut()) {
            *g = if c == CAT_HOT {
                self.placed[0] += 1;
                HOT
            } else {
                if c < CLASSES as u8 {
                    self.placed[1] += 1;
                    FIRST + self.choice.group_of[c as usize] as GroupId
                } else {
                    self.placed[2] += 1;
                    BASE_COLD
                }
            };
        }
    }

    fn on_user_write(&mut self, lba: u32, time: u64, group: GroupId) {
        let cat = self.cats[self.online.written(lba, time)];
        let updated = self.feats.last.get(lba) != crate::features::LastWrite::NEVER;
        let tag = self.feats.tag_mut(lba);
        *tag = cat | (*tag & UPDATED) | if updated { UPDATED } else { 0 };
        self.feats.record(lba, time);
        self.hf_user += 1;
        self.period.user += 1;
        if group == HOT {
            self.period.hot_in += 1;
        }
        let now = time + 1;
        if now >= self.next_bitmap {
            self.next_bitmap += self.bitmap_every;
            self.feats.turn_window();
        }
        if now >= self.next_frozen {
            self.next_frozen += self.frozen_every;
            self.feats.clear_tags(UPDATED);
        }
        if now >= self.hf_next {
            self.hf_next += self.hf_window;
            self.adapt_mu();
        }
    }

    fn tracks_invalidations(&self) -> bool {
        true
    }

    #[inline]
    fn on_invalidate(&mut self, seg: SegmentId, ftl: &Ftl) {
        self.pool.invalidated(&ftl.segs, seg);
    }

    /// [`Dogi::place_gc`] reads the block's metadata byte alone.
    fn prefetch_gc(&self, lba: u32) {
        self.feats.prefetch_tag(lba);
    }

    fn prefetch(&self, lba: u32) {
        self.feats.prefetch(lba);
        self.online.samples.prefetch(lba);
    }

    fn on_trim(&mut self, ctx: &Ctx, lba: u32) {
        self.online.samples.died(lba, ctx.now());
    }

    fn place_gc(&mut self, _ctx: &Ctx, b: &GcBlock) -> GroupId {
        let m = self.feats.tag(b.lba);
        let from = b.from_group;
        if !self.own_victims() {
            // The base design: first GC to the first GC group, then the second.
            return if from == BASE_GC[0] || from == BASE_GC[1] {
                BASE_GC[1]
            } else {
                BASE_GC[0]
            };
        }
        let last = self.last();
        // Age-based: the next group down the chain.
        let next = match from {
            HOT => FIRST,
            g if (FIRST..last).contains(&g) => g + 1,
            _ => last,
        };
        if self.p.stage == Stage::Grp {
            return next;
        }
        if m & UPDATED == 0 || from == FROZEN {
            return FROZEN;
        }
        let cat = m & 0x0f;
        if m & RELOCATED != 0 || cat as usize >= CLASSES {
            return next;
        }
        *self.feats.tag_mut(b.lba) = m | RELOCATED;
        FIRST + self.reloc[cat as usize] as GroupId
    }

    fn select_victim(&mut self, ctx: &Ctx, max_valid: u32) -> Option<SegmentId> {
        if !self.own_victims() {
            self.victims.selector += 1;
            return None;
        }
        let segs = &ctx.ftl.segs;
        let now = ctx.now();
        let b = self.segment;
        let last = self.last();
        let cost_benefit = self.p.pool_victim == PoolVictim::CostBenefit;
        let pool_last = match self.p.pool {
            PoolRule::Tail => last,
            PoolRule::All => pool::ALL_GROUPS,
        };
        let (pool, any) = self
            .pool
            .choose(segs, now, max_valid, pool_last, cost_benefit);
        // Starvation guard (ours): the pool's victim must free something,
        // and at least `starvation_guard` of what the best segment would.
        let frees = |v: u32| b.saturating_sub(v) as f64;
        let pool_ok = pool.1 < b && frees(pool.1) >= self.p.starvation_guard * frees(any.0);
        // An expired segment (§4.1), scanned from G_hot down; `guarded`:
        // unless it holds more valid blocks than the pool rule's victim.
        let best = match self.p.expired {
            Expired::Always => max_valid,
            Expired::Guarded if pool_ok => pool.1,
            Expired::Guarded => any.0,
        };
        let scan = std::iter::once(HOT).chain(FIRST..last);
        for g in scan {
            let bound = self.expiry(g).expect("an expiring group");
            if let Some(s) = self.fifo.oldest(ctx, g as usize) {
                let i = s as usize;
                if now - segs.open_time[i] > bound && segs.valid[i] <= max_valid.min(best) {
                    self.victims.expired += 1;
                    return Some(s);
                }
            }
        }
        if pool_ok {
            self.victims.pool += 1;
            Some(pool.2)
        } else {
            self.victims.guard += 1;
            None
        }
    }

    fn on_event(&mut self, ctx: &Ctx, ev: &Event) {
        match *ev {
            Event::Sealed { seg, group } => {
                self.fifo.sealed(ctx, seg, group as usize);
                self.pool.sealed(&ctx.ftl.segs, seg);
            }
            Event::Collected { seg, valid } => {
                self.fifo.collected(ctx, seg);
                self.pool.collected(seg);
                self.hf_gc += valid as u64;
                let g = ctx.ftl.segs.group[seg as usize] as usize;
                let p = &mut self.period;
                p.gc += valid as u64;
                if let Some(n) = p.victims.get_mut(g) {
                    *n += 1;
                    p.victim_valid[g] += valid as u64;
                }
                if g == HOT as usize {
                    p.hot_out += valid as u64;
                }
            }
            Event::Window { .. } => {}
        }
    }

    fn on_workload_start(&mut self, ctx: &Ctx) {
        self.online.start(ctx.now());
        if self.config_every > 0 {
            self.next_config = ctx.now().saturating_add(self.config_every);
        }
    }

    fn retired_groups(&self, out: &mut Vec<GroupId>) {
        // Intermediate groups beyond the configuration (the base design
        // uses G1 only), and the base design's second GC group while DOGI's
        // own GC runs.
        let n = if self.use_model { self.n() } else { 1 };
        out.extend(FIRST + n as GroupId..FIRST + CLASSES as GroupId);
        match (self.own_victims(), self.p.stage) {
            (true, Stage::Full) => out.push(BASE_GC[1]),
            // GC runs down the chain: neither of the baseline's GC groups.
            (true, Stage::Grp) => out.extend(BASE_GC),
            _ => {}
        }
    }

    fn take_error(&mut self) -> Option<Error> {
        self.online.take_error()
    }

    fn training(&self) -> Option<TrainingStats> {
        Some(self.online.training)
    }

    fn model(&self) -> Option<Tensors> {
        self.model_tensors()
    }

    fn class_bounds(&self, gc: bool) -> &[u64] {
        if gc {
            &self.gc_bounds
        } else {
            &self.user_bounds
        }
    }

    fn predicted_class(&self, group: GroupId, gc: bool) -> Option<u8> {
        if !gc {
            return None;
        }
        match group {
            HOT => Some(0),
            FROZEN => Some(self.n() as u8),
            g if (FIRST..=self.last()).contains(&g) && self.own_victims() => {
                Some((g - FIRST) as u8 + 1)
            }
            _ => None,
        }
    }

    fn predicted_user_class(&self, i: usize, _group: GroupId) -> Option<u8> {
        match self.cats[i] {
            CAT_HOT => Some(0),
            c if (c as usize) < CLASSES => Some(c + 1),
            _ => None,
        }
    }

    fn memory_bytes(&self) -> usize {
        self.feats.memory_bytes()
            + self.online.samples.memory_bytes()
            + self.fifo.memory_bytes()
            + self.pool.memory_bytes()
    }

    fn state(&self) -> Option<Value> {
        Some(json!({
            "stage": self.p.stage,
            "mu": self.mu,
            "category_bounds": self.bounds,
            "groups": self.n(),
            "uppers": self.choice.uppers,
            "category_group": self.choice.group_of,
            "relocation": self.reloc,
            "mask": self.choice.mask,
            "forced_mask": self.p.mask,
            "config_model": self.p.config_model,
            "estimated_waf": self.choice.waf.is_finite().then_some(self.choice.waf),
            "estimated_valid_ratio": self.estimate.as_ref().map(|e| &e.valid_ratio),
            "measured_waf": (self.period.user > 0).then(|| {
                (self.period.user + self.period.gc) as f64 / self.period.user as f64
            }),
            "measured_valid_ratio": self.measured_valid_ratios(),
            "model_on": self.use_model,
            "parameters": self.mlp.as_ref().map(|m| m.parameters()),
            "live_accuracy": self.live_accuracy,
            "fallbacks": self.fallbacks,
            "samples": self.online.samples.len(),
            "placed": {"hot": self.placed[0], "model": self.placed[1], "base": self.placed[2]},
            "victims": self.victims,
            "pool_victim": self.p.pool_victim,
            "expired": self.p.expired,
            "pool": self.p.pool,
            "deploy_delay": self.online.deploy_delay(),
            "training": self.online.training,
            "configurations": self.history,
        }))
    }
}
