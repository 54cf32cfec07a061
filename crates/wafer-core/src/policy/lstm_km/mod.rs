//! `lstm-km`: LSTM temperature prediction + K-means stream assignment (P.
//! Yang et al., "Reducing Garbage Collection Overhead in SSD Based on
//! Workload Prediction", HotStorage'19, §3, Figs. 3–6, Eq. 1).
//!
//! The address space is cut into `chunks` equal chunks (10,000). Every
//! period (5 s of trace time, or `period_dw` drive-writes) each chunk gets a
//! record of workload features and its temperature T_t, the blocks written
//! to it ([`records`]). At the end of period t, a predictor gives every
//! chunk's temperature for period t+1, a 1-D K-means of the predicted
//! temperatures into `streams` clusters (c = 8, the paper's 8-stream drive)
//! makes the chunk→stream table, and period t+1's writes use it (§3.4,
//! Fig. 6). Before the first table every write goes to one stream
//! (`untrained_stream`: the last, c-1, by default; the first, the hottest
//! once a table exists, before issue 49, as FIOS did: cold prefill data then
//! sat in the hot stream).
//!
//! Predictors:
//! * `predictor=lstm`: an LSTM over the last k = 5 records (Eq. 1, Fig. 5).
//!   `mode=joint` (default): the paper's "batch" of 100 chunks predicted
//!   together, the input of a step being the 100 chunks' records side by
//!   side and the output their 100 temperatures (one model shared by all
//!   batches); `mode=per-chunk`: one chunk's record per step, one output.
//!   Trained with candle through the process's trainer
//!   ([`crate::model::train::Trainer::train_lstm`]) on the first
//!   `train_frac` (20%) of the run's periods (at most `train_periods_max`),
//!   MSE, Adam(W) lr 1e-3, 30 epochs, minibatches of 64; frozen afterwards
//!   unless `retrain_every` periods is set (then retrained on the last
//!   `train_periods_max` periods). Until the model exists, `last` is used.
//!   Inference runs in the engine's own LSTM kernel.
//! * `predictor=last`: T'(t+1) = T(t), what the LSTM paper calls
//!   "AutoStream" (§4.1) (not the SYSTOR'17 multi-queue `autostream`).
//!
//! Feature selection (§3.3, Fig. 4): Pearson correlation of each candidate
//! with the same period's temperature over the training (chunk, period)
//! pairs, on log1p values; candidates with |r| ≥ `pcc_min` (0.3) are kept,
//! at most `max_features` (4), strongest first, except those that are T up
//! to scale (|r| ≥ 0.999, e.g. write requests when every request is one
//! block); `features` may name them instead. Every input is log1p-scaled and divided by its training maximum.
//!
//! Where the paper is silent: the candidate list (the
//! StoneNeedle features are not published), T in blocks, the LSTM's size
//! (1 layer, `hidden` 128 joint / 32 per chunk), normalisation, training
//! settings and schedule; K-means on raw temperatures (`log_kmeans` for
//! log1p), weighted over distinct values, k-means++ seeded, streams
//! numbered hottest first. The per-chunk mode caps training at 50,000
//! sampled sequences. No chunk merging. Idle stretches longer than k
//! periods are skipped in one step (the records are all zero).
//!
//! Results: `policy_state` has the selected features and their PCC, the
//! mean absolute error of the predictions and of last-value over the same
//! periods (`mae_model`, `mae_last`), and the times of inference, K-means
//! and training; `training` has the trainings.

mod records;

use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::kit::kmeans::{kmeans, Init};
use super::kit::streams::{rank_map, warning, Chunking, Clock, ShortRun, MIN_WINDOWS};
use super::{Ctx, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::device::Geometry;
use crate::engine::RunService;
use crate::error::{Error, Result};
use crate::ftl::GroupId;
use crate::model::train::{self, LstmShape, TrainSpec, TrainingStats};
use crate::model::{Dense, LstmCell, Tensors};
use crate::params;
use crate::request::Request;
use crate::rng::Rng;

pub use records::CANDIDATES;
use records::{pearson, Period, T, WIDTH};

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "lstm-km",
    description: "LSTM+KM (HotStorage'19): per-chunk temperature records every 5 s, an LSTM over 5 periods predicts the next temperatures, 1-D K-means into 8 streams; predictor=last is T'(t+1)=T(t)",
    family: crate::policy::Family::Learned,
    needs_future: false,
    defaults: params::defaults::<Params>,
    build: |p, geo| {
        let p: Params = params::parse("lstm-km", p)?;
        Ok(Box::new(LstmKm::new(&p, geo)?))
    },
};

/// The temperature predictor.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Predictor {
    /// The LSTM.
    Lstm,
    /// T'(t+1) = T(t).
    Last,
}

/// How chunks feed the LSTM.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// `batch_chunks` chunks per sequence, predicted together.
    Joint,
    /// One chunk per sequence.
    PerChunk,
}

/// T's unit.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum TempUnit {
    /// Blocks written.
    Blocks,
    /// Write requests.
    Requests,
}

/// Parameters.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Streams c (clusters).
    pub streams: u32,
    /// Chunks of the address space (§4: 10,000).
    pub chunks: u32,
    /// Period [trace seconds] (§4: 5; 1 and 10 also in the paper).
    pub period_s: f64,
    /// Period in drive-writes instead [drive-writes].
    pub period_dw: Option<f64>,
    /// A run shorter than one period, or (training the LSTM) than k + 2:
    /// `scale` the period to a tenth of the run, or to k + 2 periods in the
    /// training prefix (with a warning), or `refuse` it (the earlier rule).
    pub short_run: ShortRun,
    /// Records per LSTM input sequence (Eq. 1: k = 5).
    pub k: u32,
    /// Chunks predicted together (§3.4: 100).
    pub batch_chunks: u32,
    /// "joint" or "per-chunk".
    pub mode: Mode,
    /// "lstm" or "last".
    pub predictor: Predictor,
    /// Hidden units (default 128 joint, 32 per chunk).
    pub hidden: Option<u32>,
    /// Learning rate.
    pub lr: f64,
    /// Epochs per training.
    pub epochs: u32,
    /// Sequences per optimiser step.
    pub minibatch: u32,
    /// First training after this fraction of the run's periods.
    pub train_frac: f64,
    /// Most periods a training uses (the last ones).
    pub train_periods_max: u32,
    /// Retrain every N periods (0: train once).
    pub retrain_every: u32,
    /// "pcc" or comma-separated candidate names.
    pub features: String,
    /// Keep candidates with |PCC| at least this.
    pub pcc_min: f64,
    /// Keep at most this many candidates.
    pub max_features: u32,
    /// T: "blocks" or "requests".
    pub temp_unit: TempUnit,
    /// K-means on log1p temperatures.
    pub log_kmeans: bool,
    /// A trained model (safetensors) to start from.
    pub model: Option<String>,
    /// Seed of the weights, batch order and K-means.
    pub seed: u64,
    /// Stream of every write before the first table: "last" (default,
    /// c-1) or "first" (0, the hottest cluster's once a table exists).
    pub untrained_stream: String,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            streams: 8,
            chunks: 10_000,
            period_s: 5.0,
            period_dw: None,
            short_run: ShortRun::Scale,
            k: 5,
            batch_chunks: 100,
            mode: Mode::Joint,
            predictor: Predictor::Lstm,
            hidden: None,
            lr: 1e-3,
            epochs: 30,
            minibatch: 64,
            train_frac: 0.2,
            train_periods_max: 120,
            retrain_every: 0,
            features: "pcc".into(),
            pcc_min: 0.3,
            max_features: 4,
            temp_unit: TempUnit::Blocks,
            log_kmeans: false,
            model: None,
            seed: 1,
            untrained_stream: "last".into(),
        }
    }
}

/// |PCC| with T from which a candidate counts as T itself.
const REDUNDANT: f64 = 0.999;

/// Most sequences of a per-chunk training.
const MAX_PER_CHUNK_SAMPLES: usize = 50_000;

/// A trained temperature model.
#[derive(serde::Serialize, serde::Deserialize)]
struct Model {
    cell: LstmCell,
    head: Dense,
    /// Candidate indices used as inputs (T follows).
    sel: Vec<usize>,
    /// log1p maxima of each record column (scaling).
    norm: [f32; WIDTH],
    hidden: usize,
    tensors: Tensors,
    pcc: Vec<(String, f64)>,
}

impl Model {
    fn width(&self) -> usize {
        self.sel.len() + 1
    }
}

/// The `lstm-km` policy.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct LstmKm {
    p: Params,
    chunking: Chunking,
    clock: Clock,
    /// Warnings for the result (a period scaled to a short run).
    warnings: Vec<Value>,
    k: usize,
    batch: usize,
    period: Period,
    started: bool,
    origin: Option<u64>,
    next_boundary: u64,
    /// Periods finished.
    periods: u64,
    /// Ring of the last k records (k × chunks × WIDTH), newest at `head`.
    hist: Vec<f32>,
    hist_len: usize,
    hist_head: usize,
    /// Records kept for training, oldest first (periods × chunks × WIDTH).
    store: Vec<f32>,
    store_periods: usize,
    collecting: bool,
    /// Period count after which the first training runs.
    train_at: u64,
    last_train: u64,
    model: Option<Model>,
    table: Vec<u8>,
    /// Last predictions and whether they came from the model.
    pred: Vec<f32>,
    pred_model: bool,
    /// Scratch.
    scratch: Vec<f32>,
    err_model: f64,
    err_last: f64,
    err_periods: u64,
    inference_seconds: f64,
    kmeans_seconds: f64,
    streams_used: u32,
    stats: TrainingStats,
    #[serde(skip)]
    error: Option<Error>,
}

impl LstmKm {
    fn new(p: &Params, geo: &Geometry) -> Result<Self> {
        let bad = |reason: String| Error::Parameter {
            policy: "lstm-km".into(),
            reason,
        };
        if p.streams == 0 || p.streams > 255 {
            return Err(bad(format!("streams = {}; must be 1..=255", p.streams)));
        }
        if p.chunks == 0 {
            return Err(bad("chunks must be >= 1".into()));
        }
        if p.k == 0 || p.k > 1000 {
            return Err(bad(format!("k = {}; must be 1..=1000 periods", p.k)));
        }
        if p.batch_chunks == 0 {
            return Err(bad("batch_chunks must be >= 1".into()));
        }
        if p.hidden == Some(0) || p.epochs == 0 || p.minibatch == 0 {
            return Err(bad("hidden, epochs and minibatch must be >= 1".into()));
        }
        if !(p.lr.is_finite() && p.lr > 0.0) {
            return Err(bad(format!("lr = {}; must be > 0", p.lr)));
        }
        if !(p.train_frac.is_finite() && p.train_frac > 0.0 && p.train_frac <= 1.0) {
            return Err(bad(format!(
                "train_frac = {}; must be in (0, 1]",
                p.train_frac
            )));
        }
        if p.train_periods_max <= p.k {
            return Err(bad(format!(
                "train_periods_max = {} must exceed k = {}",
                p.train_periods_max, p.k
            )));
        }
        if !(p.pcc_min.is_finite() && (0.0..=1.0).contains(&p.pcc_min)) {
            return Err(bad(format!("pcc_min = {}; must be in [0, 1]", p.pcc_min)));
        }
        let fixed = fixed_features(&p.features).map_err(bad)?;
        let chunk_blocks = geo.logical_blocks.div_ceil(p.chunks).max(1);
        let chunking = Chunking::from_blocks(chunk_blocks, geo.logical_blocks);
        let clock = Clock::new(
            "lstm-km",
            "period_s",
            p.period_s,
            p.period_dw,
            geo.logical_blocks,
        )?;
        let untrained =
            super::kit::streams::untrained_stream("lstm-km", &p.untrained_stream, p.streams)? as u8;
        let n = chunking.chunks as usize;
        let mut me = LstmKm {
            p: p.clone(),
            chunking,
            clock,
            warnings: Vec::new(),
            k: p.k as usize,
            batch: (p.batch_chunks as usize).min(n),
            period: Period::new(
                chunking,
                geo.logical_blocks,
                p.temp_unit == TempUnit::Requests,
            ),
            started: false,
            origin: None,
            next_boundary: u64::MAX,
            periods: 0,
            hist: vec![0.0; p.k as usize * n * WIDTH],
            hist_len: 0,
            hist_head: 0,
            store: Vec::new(),
            store_periods: 0,
            collecting: false,
            train_at: u64::MAX,
            last_train: 0,
            model: None,
            table: vec![untrained; n],
            pred: vec![0.0; n],
            pred_model: false,
            scratch: Vec::new(),
            err_model: 0.0,
            err_last: 0.0,
            err_periods: 0,
            inference_seconds: 0.0,
            kmeans_seconds: 0.0,
            streams_used: 1,
            stats: TrainingStats::default(),
            error: None,
        };
        if let Some(path) = &p.model {
            let t = Tensors::load_for(path, "lstm-km")?;
            me.model = Some(me.load(t, fixed.as_deref())?);
        }
        me.collecting =
            p.predictor == Predictor::Lstm && (me.model.is_none() || p.retrain_every > 0);
        Ok(me)
    }

    fn hidden(&self) -> usize {
        self.p.hidden.map_or(
            match self.p.mode {
                Mode::Joint => 128,
                Mode::PerChunk => 32,
            },
            |h| h as usize,
        )
    }

    /// Inputs and outputs of the LSTM for `width` values per chunk.
    fn shape(&self, width: usize) -> (usize, usize) {
        match self.p.mode {
            Mode::Joint => (self.batch * width, self.batch),
            Mode::PerChunk => (width, 1),
        }
    }

    /// A model from tensors (a file or a training) with its metadata.
    fn load(&self, t: Tensors, fixed: Option<&[usize]>) -> Result<Model> {
        let meta = |k: &str| t.metadata.get(k).cloned();
        let bad = |reason: String| Error::Model {
            file: "lstm-km model".into(),
            reason,
        };
        let sel: Vec<usize> = match meta("features") {
            Some(f) => fixed_features(&f).map_err(bad)?.unwrap_or_default(),
            None => fixed.map(|f| f.to_vec()).unwrap_or_default(),
        };
        let mut norm = [1f32; WIDTH];
        if let Some(n) = meta("norm") {
            let v: Vec<f32> = n.split(',').filter_map(|x| x.parse().ok()).collect();
            if v.len() != WIDTH {
                return Err(bad(format!(
                    "metadata norm has {} values, not {WIDTH}",
                    v.len()
                )));
            }
            norm.copy_from_slice(&v);
        }
        for (key, want) in [
            ("mode", format!("{:?}", self.p.mode)),
            ("k", self.k.to_string()),
            ("batch_chunks", self.batch.to_string()),
        ] {
            if let Some(v) = meta(key) {
                if v != want {
                    return Err(bad(format!(
                        "trained with {key} = {v}; this run has {want}"
                    )));
                }
            }
        }
        let hidden = match meta("hidden") {
            Some(h) => h.parse().map_err(|_| bad(format!("bad hidden '{h}'")))?,
            None => self.hidden(),
        };
        let (inputs, outputs) = self.shape(sel.len() + 1);
        let cell = LstmCell::load(&t, "lstm.cell", inputs, hidden)?;
        let head = Dense::load(&t, "lstm.head.0", hidden, outputs)?;
        let pcc = meta("pcc")
            .map(|s| {
                s.split(',')
                    .filter_map(|kv| kv.split_once('='))
                    .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
                    .collect()
            })
            .unwrap_or_default();
        Ok(Model {
            cell,
            head,
            sel,
            norm,
            hidden,
            tensors: t,
            pcc,
        })
    }

    /// Record `c` of the period `back` periods ago (0: newest) in the ring.
    #[inline(always)]
    fn hist_rec(&self, back: usize, c: usize) -> &[f32] {
        let n = self.chunking.chunks as usize;
        let slot = (self.hist_head + self.k - back) % self.k;
        let at = (slot * n + c) * WIDTH;
        &self.hist[at..at + WIDTH]
    }

    /// Close the current period: records, training, prediction, K-means.
    fn roll(&mut self) {
        let n = self.chunking.chunks as usize;
        self.hist_head = (self.hist_head + 1) % self.k;
        let at = self.hist_head * n * WIDTH;
        self.period.finish(&mut self.hist[at..at + n * WIDTH]);
        self.hist_len = (self.hist_len + 1).min(self.k);
        self.periods += 1;
        // Score the previous predictions against this period.
        if self.pred_model {
            let (mut em, mut el) = (0.0, 0.0);
            for c in 0..n {
                let tnow = self.hist_rec(0, c)[T] as f64;
                let tprev = self.hist_rec(1, c)[T] as f64;
                em += (self.pred[c] as f64 - tnow).abs();
                el += (tprev - tnow).abs();
            }
            self.err_model += em / n as f64;
            self.err_last += el / n as f64;
            self.err_periods += 1;
        }
        if self.collecting {
            self.keep_for_training();
        }
        let due = match self.model {
            None => self.periods >= self.train_at,
            Some(_) => {
                self.p.retrain_every > 0
                    && self.periods >= self.last_train + self.p.retrain_every as u64
            }
        };
        if self.collecting && due && self.error.is_none() {
            self.train();
        }
        self.predict();
        self.cluster();
    }

    fn keep_for_training(&mut self) {
        let n = self.chunking.chunks as usize;
        let per = n * WIDTH;
        let max = self.p.train_periods_max as usize;
        if self.store_periods == max {
            self.store.drain(..per);
            self.store_periods -= 1;
        }
        let at = self.hist_head * per;
        self.store.extend_from_slice(&self.hist[at..at + per]);
        self.store_periods += 1;
    }

    /// Train (or retrain) the LSTM on the kept periods.
    fn train(&mut self) {
        let trainer = match train::trainer("lstm-km") {
            Ok(t) => t,
            Err(e) => {
                self.error = Some(e);
                return;
            }
        };
        let n = self.chunking.chunks as usize;
        let periods = self.store_periods;
        if periods < self.k + 1 {
            return;
        }
        let rec = |p: usize, c: usize| &self.store[(p * n + c) * WIDTH..(p * n + c + 1) * WIDTH];
        // Scaling: log1p maxima per column.
        let mut norm = [1e-6f32; WIDTH];
        for p in 0..periods {
            for c in 0..n {
                for (j, &v) in rec(p, c).iter().enumerate() {
                    norm[j] = norm[j].max(v.max(0.0).ln_1p());
                }
            }
        }
        // Features: fixed, or by PCC with T over (chunk, period) pairs.
        let (sel, pcc) = match fixed_features(&self.p.features) {
            Ok(Some(f)) => (f, Vec::new()),
            _ => {
                let t: Vec<f64> = (0..periods)
                    .flat_map(|p| (0..n).map(move |c| (p, c)))
                    .map(|(p, c)| (rec(p, c)[T] as f64).ln_1p())
                    .collect();
                let mut scored: Vec<(usize, f64)> = (0..CANDIDATES.len())
                    .map(|j| {
                        let x: Vec<f64> = (0..periods)
                            .flat_map(|p| (0..n).map(move |c| (p, c)))
                            .map(|(p, c)| (rec(p, c)[j].max(0.0) as f64).ln_1p())
                            .collect();
                        (j, pearson(&x, &t))
                    })
                    .collect();
                scored.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()).then(a.0.cmp(&b.0)));
                let pcc: Vec<(String, f64)> = scored
                    .iter()
                    .map(|&(j, r)| (CANDIDATES[j].to_string(), r))
                    .collect();
                // A candidate equal to T up to scale (1-block requests make
                // write_requests = T) adds nothing: dropped (spec §5).
                let sel: Vec<usize> = scored
                    .iter()
                    .filter(|(_, r)| r.abs() >= self.p.pcc_min && r.abs() < REDUNDANT)
                    .take(self.p.max_features as usize)
                    .map(|&(j, _)| j)
                    .collect();
                (sel, pcc)
            }
        };
        let width = sel.len() + 1;
        let scaled = |p: usize, c: usize, out: &mut Vec<f32>| {
            if c >= n {
                out.extend(std::iter::repeat_n(0.0, width));
                return;
            }
            let r = rec(p, c);
            for &j in &sel {
                out.push(r[j].max(0.0).ln_1p() / norm[j]);
            }
            out.push(r[T].max(0.0).ln_1p() / norm[T]);
        };
        let target = |p: usize, c: usize| -> f32 {
            if c >= n {
                0.0
            } else {
                rec(p, c)[T].max(0.0).ln_1p() / norm[T]
            }
        };
        let k = self.k;
        let (mut x, mut y) = (Vec::new(), Vec::new());
        match self.p.mode {
            Mode::Joint => {
                let nb = n.div_ceil(self.batch);
                for t in (k - 1)..(periods - 1) {
                    for b in 0..nb {
                        for s in 0..k {
                            for ci in 0..self.batch {
                                scaled(t + 1 - k + s, b * self.batch + ci, &mut x);
                            }
                        }
                        for ci in 0..self.batch {
                            y.push(target(t + 1, b * self.batch + ci));
                        }
                    }
                }
            }
            Mode::PerChunk => {
                let mut pairs: Vec<(usize, usize)> = ((k - 1)..(periods - 1))
                    .flat_map(|t| (0..n).map(move |c| (t, c)))
                    .collect();
                if pairs.len() > MAX_PER_CHUNK_SAMPLES {
                    let mut rng = Rng::new(self.p.seed ^ 0xc4a7);
                    for i in 0..MAX_PER_CHUNK_SAMPLES {
                        let j = i + rng.below((pairs.len() - i) as u64) as usize;
                        pairs.swap(i, j);
                    }
                    pairs.truncate(MAX_PER_CHUNK_SAMPLES);
                }
                for (t, c) in pairs {
                    for s in 0..k {
                        scaled(t + 1 - k + s, c, &mut x);
                    }
                    y.push(target(t + 1, c));
                }
            }
        }
        let (inputs, outputs) = self.shape(width);
        let hidden = self.hidden();
        let spec = TrainSpec {
            epochs: self.p.epochs as usize,
            batch: self.p.minibatch as usize,
            lr: self.p.lr,
            seed: self.p.seed.wrapping_add(self.stats.trainings),
            ..Default::default()
        };
        let examples = y.len() / outputs;
        let shape = LstmShape {
            inputs,
            steps: k,
            hidden,
            outputs,
        };
        let result = self.stats.time(examples, || {
            trainer.train_lstm("lstm", shape, &x, &y, &spec)
        });
        match result {
            Ok(mut t) => {
                let names: Vec<&str> = sel.iter().map(|&j| CANDIDATES[j]).collect();
                let norms: Vec<String> = norm.iter().map(|v| v.to_string()).collect();
                let pccs: Vec<String> = pcc.iter().map(|(k, r)| format!("{k}={r}")).collect();
                for (key, v) in [
                    ("policy", "lstm-km".to_string()),
                    ("features", names.join(",")),
                    ("norm", norms.join(",")),
                    ("mode", format!("{:?}", self.p.mode)),
                    ("k", k.to_string()),
                    ("batch_chunks", self.batch.to_string()),
                    ("hidden", hidden.to_string()),
                    ("pcc", pccs.join(",")),
                ] {
                    t.metadata.insert(key.into(), v);
                }
                match self.load(t, None) {
                    Ok(m) => self.model = Some(m),
                    Err(e) => self.error = Some(e),
                }
                self.last_train = self.periods;
                if self.p.retrain_every == 0 {
                    self.collecting = false;
                    self.store = Vec::new();
                    self.store_periods = 0;
                }
            }
            Err(e) => {
                self.error = Some(Error::Model {
                    file: format!("lstm-km training after {} periods", self.periods),
                    reason: e.to_string(),
                })
            }
        }
    }

    /// T'(t+1) for every chunk into `pred`.
    fn predict(&mut self) {
        let n = self.chunking.chunks as usize;
        let start = Instant::now();
        let use_model = self.p.predictor == Predictor::Lstm && self.hist_len >= self.k;
        let Some(m) = self.model.as_mut().filter(|_| use_model) else {
            for c in 0..n {
                self.pred[c] = self.hist_rec(0, c)[T];
            }
            self.pred_model = false;
            return;
        };
        let width = m.width();
        let h = m.hidden;
        let (inputs, outputs) = match self.p.mode {
            Mode::Joint => (self.batch * width, self.batch),
            Mode::PerChunk => (width, 1),
        };
        let mut hs = vec![0f32; h];
        let mut cs = vec![0f32; h];
        let mut out = vec![0f32; outputs];
        self.scratch.resize(inputs, 0.0);
        let groups = match self.p.mode {
            Mode::Joint => n.div_ceil(self.batch),
            Mode::PerChunk => n,
        };
        let norm = m.norm;
        for g in 0..groups {
            hs.iter_mut().for_each(|v| *v = 0.0);
            cs.iter_mut().for_each(|v| *v = 0.0);
            for s in 0..self.k {
                let back = self.k - 1 - s;
                let members = match self.p.mode {
                    Mode::Joint => g * self.batch..(g + 1) * self.batch,
                    Mode::PerChunk => g..g + 1,
                };
                for (i, c) in members.enumerate() {
                    let x = &mut self.scratch[i * width..(i + 1) * width];
                    if c >= n {
                        x.iter_mut().for_each(|v| *v = 0.0);
                        continue;
                    }
                    let slot = (self.hist_head + self.k - back) % self.k;
                    let at = (slot * n + c) * WIDTH;
                    let r = &self.hist[at..at + WIDTH];
                    for (xi, &j) in x.iter_mut().zip(&m.sel) {
                        *xi = r[j].max(0.0).ln_1p() / norm[j];
                    }
                    x[width - 1] = r[T].max(0.0).ln_1p() / norm[T];
                }
                m.cell.step(&self.scratch, &mut hs, &mut cs);
            }
            m.head.forward(&hs, &mut out);
            let base = match self.p.mode {
                Mode::Joint => g * self.batch,
                Mode::PerChunk => g,
            };
            for (i, &y) in out.iter().enumerate() {
                if base + i < n {
                    self.pred[base + i] = (y.max(0.0) * norm[T]).exp_m1();
                }
            }
        }
        self.pred_model = true;
        self.inference_seconds += start.elapsed().as_secs_f64();
    }

    /// 1-D K-means of the predictions into the chunk → stream table.
    fn cluster(&mut self) {
        let start = Instant::now();
        let n = self.chunking.chunks as usize;
        let val = |t: f32| {
            let t = t.max(0.0) as f64;
            if self.p.log_kmeans {
                t.ln_1p()
            } else {
                t
            }
        };
        // Weighted distinct values.
        let mut vals: Vec<f64> = self.pred.iter().map(|&t| val(t)).collect();
        vals.sort_by(f64::total_cmp);
        let (mut pts, mut w) = (Vec::new(), Vec::new());
        for v in vals {
            if pts.last() == Some(&v) {
                *w.last_mut().expect("weights") += 1.0;
            } else {
                pts.push(v);
                w.push(1.0);
            }
        }
        let c = kmeans(
            &pts,
            &w,
            1,
            self.p.streams as usize,
            &Init::PlusPlus(self.p.seed),
            300,
        );
        let mut order: Vec<usize> = (0..c.centers.len()).collect();
        order.sort_by(|&a, &b| c.centers[b].total_cmp(&c.centers[a]));
        let rank = rank_map(&order);
        let mut used = [false; 256];
        for i in 0..n {
            let v = val(self.pred[i]);
            let p = pts.partition_point(|&x| x < v);
            let s = rank[c.labels[p.min(pts.len() - 1)] as usize];
            self.table[i] = s;
            used[s as usize] = true;
        }
        self.streams_used = used.iter().filter(|&&u| u).count() as u32;
        self.kmeans_seconds += start.elapsed().as_secs_f64();
    }

    /// Advance to clock reading `t`, closing every period passed.
    #[inline]
    fn advance(&mut self, t: u64) {
        if !self.started {
            return;
        }
        let len = self.clock.len();
        let Some(_) = self.origin else {
            self.origin = Some(t);
            self.next_boundary = t + len;
            return;
        };
        if t < self.next_boundary {
            return;
        }
        // Idle for more than k periods: the history is all zeros after k
        // empty ones; close k + 1 and skip the rest.
        let behind = (t - self.next_boundary) / len + 1;
        let rolls = behind.min(self.k as u64 + 1);
        for _ in 0..rolls {
            self.roll();
        }
        if behind > rolls {
            self.periods += behind - rolls;
        }
        self.next_boundary += behind * len;
    }
}

/// Candidate indices named in `s` (comma-separated), or `None` for "pcc".
fn fixed_features(s: &str) -> std::result::Result<Option<Vec<usize>>, String> {
    let s = s.trim();
    if s == "pcc" {
        return Ok(None);
    }
    if s.is_empty() {
        return Ok(Some(Vec::new()));
    }
    s.split(',')
        .map(|f| {
            let f = f.trim();
            CANDIDATES.iter().position(|&c| c == f).ok_or_else(|| {
                format!(
                    "unknown feature '{f}'; features: pcc, or some of {}",
                    CANDIDATES.join(", ")
                )
            })
        })
        .collect::<std::result::Result<Vec<_>, _>>()
        .map(Some)
}

impl Placement for LstmKm {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "lstm-km"
    }
    fn groups(&self) -> usize {
        self.p.streams as usize
    }
    fn prepare(&mut self, run: &dyn RunService) -> Result<()> {
        let span = run.span()?;
        // Training needs k + 2 periods in its prefix (`train_frac` of them).
        let training = self.collecting && self.model.is_none();
        let need = self.k as u64 + 2;
        let windows = if training {
            (
                need,
                MIN_WINDOWS.max((need as f64 / self.p.train_frac).ceil() as u64),
            )
        } else {
            (1, MIN_WINDOWS)
        };
        let (clock, note) =
            self.clock
                .fit("lstm-km", "the period", &span, windows, self.p.short_run)?;
        self.clock = clock;
        if let Some(n) = note {
            self.warnings.push(warning("window-scaled", &n));
        }
        let total = match self.clock {
            Clock::Seconds(n) => span.duration_ns() / n,
            Clock::Blocks(n) => span.writes / n,
        };
        if training {
            if total < need {
                return Err(Error::Parameter {
                    policy: "lstm-km".into(),
                    reason: format!(
                        "the run has {total} periods; training an LSTM over k = {} periods needs at \
                         least {need} (use a shorter period, a longer run, or predictor=last)",
                        self.k
                    ),
                });
            }
            self.train_at = ((self.p.train_frac * total as f64).round() as u64).max(need);
        }
        Ok(())
    }
    fn on_workload_start(&mut self, _ctx: &Ctx) {
        self.started = true;
    }
    fn place_user(&mut self, _ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]) {
        let Some(first) = writes.first() else {
            return;
        };
        self.advance(self.clock.read(first.req_time_ns, first.time));
        let ch = self.chunking;
        if !self.started {
            for (w, g) in writes.iter().zip(out.iter_mut()) {
                *g = self.table[ch.of(w.lba) as usize] as GroupId;
            }
            return;
        }
        for (w, g) in writes.iter().zip(out.iter_mut()) {
            let c = ch.of(w.lba);
            self.period.write(w, c);
            *g = self.table[c as usize] as GroupId;
        }
    }
    fn on_read(&mut self, _ctx: &Ctx, req: &Request) {
        if let Clock::Seconds(_) = self.clock {
            self.advance(req.time_ns);
        }
        if self.started {
            self.period.read(req);
        }
    }
    fn place_gc(&mut self, _ctx: &Ctx, b: &GcBlock) -> GroupId {
        b.from_group
    }
    fn memory_bytes(&self) -> usize {
        self.period.memory_bytes()
            + (self.hist.len() + self.store.len() + self.pred.len()) * 4
            + self.table.len()
    }
    fn state(&self) -> Option<Value> {
        let (features, pcc) = match &self.model {
            Some(m) => (
                m.sel.iter().map(|&j| CANDIDATES[j]).collect::<Vec<_>>(),
                m.pcc.clone(),
            ),
            None => (Vec::new(), Vec::new()),
        };
        let mean = |x: f64| (self.err_periods > 0).then(|| x / self.err_periods as f64);
        Some(json!({
            "warnings": self.warnings,
            "predictor": self.p.predictor,
            "mode": self.p.mode,
            "chunks": self.chunking.chunks,
            "chunk_blocks": self.chunking.blocks,
            "periods": self.periods,
            "trained": self.model.is_some(),
            "features": features,
            "pcc": pcc,
            "mae_model": mean(self.err_model),
            "mae_last": mean(self.err_last),
            "scored_periods": self.err_periods,
            "streams_used": self.streams_used,
            "inference_seconds": self.inference_seconds,
            "kmeans_seconds": self.kmeans_seconds,
            "training_seconds": self.stats.seconds,
        }))
    }
    fn take_error(&mut self) -> Option<Error> {
        self.error.take()
    }
    fn training(&self) -> Option<TrainingStats> {
        (self.stats.trainings > 0).then_some(self.stats)
    }
    fn model(&self) -> Option<Tensors> {
        self.model.as_ref().map(|m| m.tensors.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feature_names_parse() {
        assert_eq!(fixed_features("pcc").unwrap(), None);
        assert_eq!(
            fixed_features("read_blocks, write_requests").unwrap(),
            Some(vec![4, 0])
        );
        let e = fixed_features("iops").unwrap_err();
        assert!(e.contains("unknown feature 'iops'"), "{e}");
    }
}
