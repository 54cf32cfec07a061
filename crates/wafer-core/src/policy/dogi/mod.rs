//! `dogi`: DOGI, "Data Placement with Oracle-Guided Insights for
//! Log-Structured Systems" (FAST'26, §4, Fig. 5).
//!
//! Groups: G_hot (id 0), G_frzn (id 1), the intermediate groups G1..GN
//! (ids 2..2+N, N ≤ 10, warm to cold). The baseline design (before the
//! first model, after an accuracy collapse, and in the ablations) has a
//! non-hot user group (G1's id) and two age-ordered GC groups (G_frzn's id
//! and 12).
//! * **Hot filter** (§4.2.1, Fig. 6): a user block whose latest invalidation
//!   time (time since its LBA's previous write) is below μ goes to G_hot.
//!   Every window of n user writes, μ grows by d if the window's WAF fell,
//!   shrinks by d if it rose, and stays if it moved less than 5%.
//! * **ML-Alloc** (§4.2.2-4.2.3): the other blocks are classified into ten
//!   lifetime categories c1..c10 (upper bounds 1% of the capacity, doubling)
//!   by a 6-32-32-10 MLP (1,610 parameters) on the six features of Table 3
//!   ([`features`]), in batches of up to 128 blocks, and go to the group
//!   their category is mapped to. One non-hot block in ten is sampled: its
//!   features and predicted category are kept until its LBA is overwritten
//!   (its label); every `retrain` the model is retrained (10 epochs) on the
//!   latest samples, through the process's [`crate::model::train`] trainer.
//! * **Group configuration** (§4.3, [`config`]): after each training, the
//!   prediction log (the samples' <category, lifetime> under the new model)
//!   feeds a Markov-chain style flow model that scores the 512 ways of
//!   merging the ten categories into groups; the best is applied. When the
//!   live accuracy of the model (its write-time predictions of the labelled
//!   samples) is below 10%, DOGI falls back to the baseline design until a
//!   later model is accurate again.
//! * **GC-written blocks** (§4.4): the frozen filter sends a block never
//!   updated since the last clock reset (every 200M writes) to G_frzn;
//!   ML-Reloc sends the others to the group holding the mean remaining
//!   lifetime of their category's mispredicted blocks (PLog); a block
//!   relocated once and found valid again moves to the next group (age).
//! * **Victims**: an expired segment (residence since its first write
//!   beyond its group's BIR upper bound; G_hot's is μ), scanned from G_hot to
//!   G(N-1), if it holds no more valid blocks than the pool rule's victim;
//!   else the fewest-valid segment of GN, G_frzn or a group no longer in use.
//! * **Ablations** (Fig. 14), by name: `dogi+User` (hot filter + the model
//!   into ten fixed groups, GC age-based into two groups, the configured
//!   victim selector), `dogi+Grp` (+ the group configuration and expired
//!   victims), `dogi+GC` (+ the frozen filter and ML-Reloc: full DOGI).
//!
//! Scaled defaults: the paper's absolute sizes are for 128 GiB (33.5M 4 KiB
//! blocks, C); wafer keeps their ratio to the logical capacity C: μ0 = 200K
//! → 0.006 C, d = 65K → 0.002 C, n = 10M → 0.3 C, the bitmap window 40M →
//! 1.2 C, retraining every 26M → 0.78 C, the frozen clock 200M → 6 C, the
//! 300K-sample dataset → 0.009 C (at least `min_samples`).
//!
//! Deviations / choices where the paper is silent:
//! * Training is synchronous at the retraining point (the paper trains on a
//!   spare core and swaps the model in when done): same input, same result.
//! * Before the first model is trained (none is given with `model`), DOGI
//!   runs the baseline design; a training needs `min_examples` labelled
//!   samples of at least two categories, else it waits for the next period.
//! * A sample still alive after the last category bound is labelled c10;
//!   younger unlabelled samples are left out (their lifetime is unknown).
//! * G_hot's blocks found valid at GC go to G1 (age-based); blocks with no
//!   category (written in fallback) are relocated by age.
//! * The hot filter starts moving μ after two drive-writes (a prefill and
//!   one more): until then WAF climbs whatever μ is, and following it would
//!   only shrink μ.
//! * The configuration model is ours (the paper omits its details): see
//!   [`config`].
//! * Prediction accuracy (with `--accuracy`): user classes are {hot,
//!   c1..c10} with bounds [μ, 1% C, ...]; blocks placed without a model
//!   (warm-up, fallback) are not scored unless hot. GC classes are the
//!   groups' BIRs, G_frzn counting as the last.

pub mod config;
pub mod features;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::online::Online;
use super::sampler::{Sampler, NO_PRED};
use super::sealed::SealedFifo;
use super::{Ctx, Event, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::device::Geometry;
use crate::error::{Error, Result};
use crate::ftl::{GroupId, SegState, SegmentId};
use crate::future::accuracy::class_of;
use crate::model::train::TrainingStats;
use crate::model::{BatchScratch, Mlp, Tensors};
use crate::params;
use config::{Choice, Inputs, PLog, CLASSES};
use features::{FeatureState, FEATURES};

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "dogi",
    description: "DOGI (FAST'26): hot filter + 10-class MLP, PLog/Markov-chain group configuration, frozen filter, ML relocation, expired victims",
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
    /// Blocks per inference batch.
    pub infer_batch: usize,
    /// Access-bitmap window [C].
    pub bitmap_window: f64,
    /// Chunk of the per-chunk frequency [bytes].
    pub chunk_bytes: u64,
    /// Frozen filter clock: flags cleared every this many user writes [C].
    pub frozen_reset: f64,
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
            infer_batch: 128,
            bitmap_window: 1.2,
            chunk_bytes: 2 << 20,
            frozen_reset: 6.0,
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
#[derive(Clone, Copy, Debug, Default, Serialize)]
struct Victims {
    expired: u64,
    fewest_valid: u64,
    selector: u64,
}

/// DOGI state.
pub struct Dogi {
    p: Params,
    name: &'static str,
    capacity: u64,
    segment: u32,
    feats: FeatureState,
    meta: Vec<u8>,
    online: Online,
    // Hot filter.
    mu: u64,
    mu_max: u64,
    hf_window: u64,
    hf_next: u64,
    hf_prev: Option<f64>,
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
    xb: Vec<f32>,
    preds: Vec<u8>,
    scratch: BatchScratch,
    rows: Vec<u16>,
    cats: Vec<u8>,
    /// The prediction made for each block of the batch (or NO_PRED).
    bpred: Vec<u8>,
    // Bookkeeping.
    fifo: SealedFifo,
    hot_in: u64,
    hot_out: u64,
    since_config: u64,
    victims: Victims,
    fallbacks: u64,
    live_accuracy: Option<f64>,
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
        if p.sample_every == 0 || p.infer_batch == 0 || p.epochs == 0 || p.batch == 0 {
            return Err(bad(
                "sample_every, infer_batch, epochs and batch must be at least 1",
            ));
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
        )?;
        let mut d = Dogi {
            name: match p.stage {
                Stage::User => "dogi+User",
                Stage::Grp => "dogi+Grp",
                Stage::Full => "dogi",
            },
            capacity: c,
            segment: geo.segment_blocks,
            feats: FeatureState::new(geo.logical_blocks, chunk_blocks),
            meta: vec![CAT_NONE; geo.logical_blocks as usize],
            online,
            mu,
            mu_max,
            hf_window,
            hf_next: hf_window,
            hf_prev: None,
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
            xb: Vec::new(),
            preds: Vec::new(),
            scratch: BatchScratch::default(),
            rows: Vec::new(),
            cats: Vec::new(),
            bpred: Vec::new(),
            fifo: SealedFifo::new(GROUPS),
            hot_in: 0,
            hot_out: 0,
            since_config: 0,
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

    /// The stage the name selects (`dogi+User`, `dogi+Grp`, `dogi+GC`).
    pub fn stage_of(name: &str) -> Option<Stage> {
        match name.to_ascii_lowercase().as_str() {
            "dogi+user" => Some(Stage::User),
            "dogi+grp" => Some(Stage::Grp),
            "dogi+gc" => Some(Stage::Full),
            _ => None,
        }
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

    /// Train a new model on the samples, then reconfigure.
    fn retrain(&mut self, ctx: &Ctx) {
        let now = ctx.now();
        let (mut x, mut y, mut lives, mut alive) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut right, mut scored) = (0u64, 0u64);
        // A sample still alive is labelled by its age, a lower bound (the
        // class it has reached), once that is past c1; the log keeps it as
        // censored at that age.
        for e in self.online.samples.examples(now, self.bounds[0]) {
            let label = class_of(&self.bounds, e.life) as u32;
            if e.pred != NO_PRED {
                scored += 1;
                right += (e.pred as u32 == label) as u64;
            }
            x.extend_from_slice(e.x);
            y.push(label);
            lives.push(e.life);
            alive.push(e.alive);
        }
        if scored >= 100 {
            self.live_accuracy = Some(right as f64 / scored as f64);
        }
        let classes = y.iter().fold(0u32, |m, &c| m | 1 << c).count_ones();
        if y.len() < self.p.min_examples || classes < 2 {
            return;
        }
        let Some(trainer) = self.online.trainer() else {
            return;
        };
        let spec = self
            .online
            .spec(self.p.epochs, self.p.batch, self.p.lr, self.p.seed);
        let sizes = &self.sizes;
        let trained = self.online.train(now, y.len(), || {
            let (t, loss) = trainer.train_mlp("mlp", sizes, &x, &y, &spec)?;
            Ok((Mlp::load(&t, "mlp", sizes)?, loss))
        });
        let Some(mut mlp) = trained else {
            return;
        };
        let was = self.use_model;
        self.use_model = !self
            .live_accuracy
            .is_some_and(|a| a < self.p.fallback_accuracy && self.mlp.is_some());
        if was && !self.use_model {
            self.fallbacks += 1;
        }
        // PLog: the new model's categories of the latest samples.
        let log = PLog::new(
            x.chunks_exact(FEATURES)
                .zip(lives.iter().zip(&alive))
                .map(|(r, (&l, &a))| (mlp.classify(r) as u8, l, a)),
        );
        self.mlp = Some(mlp);
        if self.p.stage != Stage::User {
            self.configure(ctx, &log);
        }
        self.refresh_bounds();
    }

    /// Pick the group configuration (§4.3) and ML-Reloc's table (§4.4).
    fn configure(&mut self, ctx: &Ctx, log: &PLog) {
        let segs = &ctx.ftl.segs;
        let (mut hot_blocks, mut hot_valid, mut valid) = (0u64, 0u64, 0u64);
        for s in 0..segs.state.len() {
            if segs.state[s] != SegState::Free {
                valid += segs.valid[s] as u64;
                if segs.group[s] == HOT {
                    hot_blocks += self.segment as u64;
                    hot_valid += segs.valid[s] as u64;
                }
            }
        }
        let per = self.since_config.max(1) as f64;
        let inp = Inputs {
            hot_share: self.hot_in as f64 / per,
            hot_blocks: hot_blocks as f64,
            hot_valid: hot_valid as f64,
            hot_copies: self.hot_out as f64 / per,
            physical: ctx.geometry().physical_blocks as f64,
            valid: valid as f64,
            segment: self.segment as f64,
        };
        (self.hot_in, self.hot_out, self.since_config) = (0, 0, 0);
        if let Some(c) = config::search(log, &self.bounds, &inp) {
            self.reloc = config::relocation(log, &c);
            self.choice = c;
        }
        if self.history.len() < 64 {
            self.history.push(json!({
                "time": ctx.now(),
                "groups": self.n(),
                "uppers": self.choice.uppers,
                "estimated_waf": self.choice.waf,
                "model": self.use_model,
                "live_accuracy": self.live_accuracy,
                "mu": self.mu,
            }));
        }
    }

    /// Fig. 6: move μ by the last window's WAF.
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
            if (waf - prev).abs() >= self.p.hot_deadband * prev {
                self.mu = if waf < prev {
                    self.mu.saturating_add(step)
                } else {
                    self.mu.saturating_sub(step)
                }
                .clamp(1, self.mu_max);
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
    fn name(&self) -> &'static str {
        self.name
    }

    fn groups(&self) -> usize {
        GROUPS
    }

    fn place_user(&mut self, ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]) {
        if self.online.due(ctx.now()) {
            self.retrain(ctx);
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
        // ML-Alloc: batched inference of the non-hot rows (only the sampled
        // ones while the model is off, to keep measuring its accuracy).
        let mut rows = std::mem::take(&mut self.rows);
        for (c, chunk) in rows.chunks(self.p.infer_batch).enumerate() {
            let first = (c * self.p.infer_batch) as u64;
            let sampled = |o: &Online, j: usize| o.will_sample(first + j as u64);
            self.xb.clear();
            for (j, &r) in chunk.iter().enumerate() {
                if self.use_model || sampled(&self.online, j) {
                    let i = r as usize;
                    self.xb
                        .extend_from_slice(&self.x[i * FEATURES..(i + 1) * FEATURES]);
                }
            }
            let m = self.xb.len() / FEATURES;
            self.preds.clear();
            self.preds.resize(m, NO_PRED);
            if let Some(mlp) = self.mlp.as_mut() {
                if m >= 8 {
                    mlp.classify_batch(&self.xb, m, &mut self.scratch, &mut self.preds);
                } else {
                    // Too few to amortise the batch layout (one-block requests).
                    for (p, r) in self.preds.iter_mut().zip(self.xb.chunks_exact(FEATURES)) {
                        *p = mlp.classify(r) as u8;
                    }
                }
            }
            let mut k = 0;
            for (j, &r) in chunk.iter().enumerate() {
                let i = r as usize;
                if self.use_model || sampled(&self.online, j) {
                    self.bpred[i] = self.preds[k];
                    k += 1;
                }
                if self.use_model {
                    self.cats[i] = self.bpred[i];
                }
            }
        }
        rows.clear();
        self.rows = rows;
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
        let l = lba as usize;
        let updated = self.feats.last.get(lba) != crate::features::LastWrite::NEVER;
        let keep = self.meta[l] & UPDATED;
        self.meta[l] = cat | keep | if updated { UPDATED } else { 0 };
        self.feats.record(lba, time);
        self.hf_user += 1;
        self.since_config += 1;
        if group == HOT {
            self.hot_in += 1;
        }
        let now = time + 1;
        if now >= self.next_bitmap {
            self.next_bitmap += self.bitmap_every;
            self.feats.turn_window();
        }
        if now >= self.next_frozen {
            self.next_frozen += self.frozen_every;
            for m in &mut self.meta {
                *m &= !UPDATED;
            }
        }
        if now >= self.hf_next {
            self.hf_next += self.hf_window;
            self.adapt_mu();
        }
    }

    fn prefetch(&self, lba: u32) {
        self.feats.prefetch(lba);
        crate::ftl::prefetch::prefetch(&self.meta, lba as usize);
        self.online.samples.prefetch(lba);
    }

    fn on_trim(&mut self, ctx: &Ctx, lba: u32) {
        self.online.samples.died(lba, ctx.now());
    }

    fn place_gc(&mut self, _ctx: &Ctx, b: &GcBlock) -> GroupId {
        let l = b.lba as usize;
        let m = self.meta[l];
        let from = b.from_group;
        if !self.own_victims() || self.p.stage == Stage::Grp {
            // The base design: first GC to the first GC group, then the second.
            return if from == BASE_GC[0] || from == BASE_GC[1] {
                BASE_GC[1]
            } else {
                BASE_GC[0]
            };
        }
        if m & UPDATED == 0 || from == FROZEN {
            return FROZEN;
        }
        let cat = m & 0x0f;
        let last = self.last();
        if m & RELOCATED != 0 || cat as usize >= CLASSES {
            // Age-based: the next group down the chain.
            return match from {
                HOT => FIRST,
                g if (FIRST..last).contains(&g) => g + 1,
                _ => last,
            };
        }
        self.meta[l] = m | RELOCATED;
        FIRST + self.reloc[cat as usize] as GroupId
    }

    fn select_victim(&mut self, ctx: &Ctx, max_valid: u32) -> Option<SegmentId> {
        if !self.own_victims() {
            self.victims.selector += 1;
            return None;
        }
        let segs = &ctx.ftl.segs;
        let now = ctx.now();
        // One scan for the fewest-valid segment of the pool (GN, G_frzn,
        // groups not in use) and anywhere.
        let last = self.last();
        let (mut pool, mut any) = ((u32::MAX, 0), (u32::MAX, 0));
        for (i, (&st, &v)) in segs.state.iter().zip(&segs.valid).enumerate() {
            if st != SegState::Sealed || v > max_valid {
                continue;
            }
            let g = segs.group[i];
            let expiring = g == HOT || (FIRST..last).contains(&g);
            if !expiring && v < pool.0 {
                pool = (v, i as SegmentId);
            }
            if v < any.0 {
                any = (v, i as SegmentId);
            }
        }
        // Starvation guard (ours): a pool victim must free at least half
        // what the best segment anywhere would.
        let frees = |v: u32| self.segment.saturating_sub(v);
        let pool_ok = pool.0 < self.segment && 2 * frees(pool.0) >= frees(any.0);
        // An expired segment (§4.1), scanned from G_hot down, unless it
        // holds more valid blocks than the pool rule's victim would (ours:
        // on traces with little GC, expired segments can be 60-80% valid
        // while emptier ones exist).
        let best = if pool_ok { pool.0 } else { any.0 };
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
            self.victims.fewest_valid += 1;
            Some(pool.1)
        } else {
            self.victims.selector += 1;
            None
        }
    }

    fn on_event(&mut self, ctx: &Ctx, ev: &Event) {
        match *ev {
            Event::Sealed { seg, group } => self.fifo.sealed(ctx, seg, group as usize),
            Event::Collected { seg, valid } => {
                self.fifo.collected(ctx, seg);
                self.hf_gc += valid as u64;
                if ctx.ftl.segs.group[seg as usize] == HOT {
                    self.hot_out += valid as u64;
                }
            }
            Event::Window { .. } => {}
        }
    }

    fn on_workload_start(&mut self, ctx: &Ctx) {
        self.online.start(ctx.now());
    }

    fn retired_groups(&self, out: &mut Vec<GroupId>) {
        // Intermediate groups beyond the configuration (the base design
        // uses G1 only), and the base design's second GC group while DOGI's
        // own GC runs.
        let n = if self.use_model { self.n() } else { 1 };
        out.extend(FIRST + n as GroupId..FIRST + CLASSES as GroupId);
        if self.own_victims() && self.p.stage == Stage::Full {
            out.push(BASE_GC[1]);
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
            + self.meta.capacity()
            + self.online.samples.memory_bytes()
            + self.fifo.memory_bytes()
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
            "estimated_waf": self.choice.waf.is_finite().then_some(self.choice.waf),
            "model_on": self.use_model,
            "parameters": self.mlp.as_ref().map(|m| m.parameters()),
            "live_accuracy": self.live_accuracy,
            "fallbacks": self.fallbacks,
            "samples": self.online.samples.len(),
            "placed": {"hot": self.placed[0], "model": self.placed[1], "base": self.placed[2]},
            "victims": self.victims,
            "training": self.online.training,
            "configurations": self.history,
        }))
    }
}
