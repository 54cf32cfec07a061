//! Shiro's Page Classifier and Model Trainer (§III-B, §III-D, §V-E),
//! shared with `phftl` (its predecessor): the per-write features, the GRU
//! with a cached hidden state per page, the write windows with their
//! lifetime samples, Algorithm 1 and the training schedule.
//!
//! * **Prediction**: a write of a page written before (it has a
//!   prev_lifetime) steps the page's cached hidden state once on the
//!   write's 24 hex-digit inputs and classifies the new state (class 0:
//!   lifetime below T, "short"; 1: "long"). A first write, or any write
//!   before the first model, is UNSEEN and its page's state is reset to
//!   zero, so the next write starts the sequence from H = 0, as training
//!   sequences do. States computed with an older model are kept when a new
//!   one is deployed (the paper never recomputes them). The state is kept
//!   as int8 (`state = int8`, the paper's 32 B) or f32.
//! * **Windows**: a write window is `window` of the logical capacity
//!   written by the host (5%). A write of a page whose previous write fell
//!   in the same window is a lifetime sample: the lifetime labels the
//!   features of that previous write.
//! * **Model Trainer**, at each window's end: T by Algorithm 1
//!   ([`super::threshold`]) on the window's samples; `train_fraction` (10%)
//!   of the samples become training sequences: the page's feature vectors
//!   up to the labelled write, at most `seq_len` (20) of them, oldest first,
//!   label lifetime < T; the classes are balanced by leaving out samples of
//!   the larger one. The first training (when there is no model) runs until
//!   the epoch loss stops improving (at most `bootstrap_epochs`), later ones
//!   one epoch from the deployed weights. The new model and T serve the
//!   next window.
//!
//! Choices where the paper is silent: the history of a training sequence
//! comes from a log of the last `history_windows` + 1 windows' writes
//! (28 B per write); a sequence stops at the page's first write (which the
//! model never sees) or where the log ends. The light-model and step
//! choices are in [`super::threshold`]. Training is synchronous at the
//! window's end (the paper trains on the host; the result is the same).

use serde::Serialize;
use serde_json::{json, Value};

use super::features::{to_inputs, Features, INPUTS};
use super::params::{Config, LabelUnseen};
use super::threshold::{Pick, Threshold};
use crate::error::Result;
use crate::features::LastWrite;
use crate::model::train::{Convergence, GruFit, SeqShape, Sequences, TrainSpec, TrainingStats};
use crate::model::{GruCell, Mlp, Tensors};
use crate::policy::kit::online::Online;
use crate::policy::kit::sampler::Sampler;
use crate::policy::UserWrite;
use crate::request::Request;
use crate::rng::Rng;

/// A page's prediction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Pred {
    /// Lifetime below T.
    Short = 0,
    /// Lifetime T or more.
    Long = 1,
    /// No prediction (first write, or no model yet).
    Unseen = 2,
}

/// The GRU and its head.
#[derive(serde::Serialize, serde::Deserialize)]
struct Model {
    cell: GruCell,
    head: Mlp,
    tensors: Tensors,
}

impl Model {
    fn load(t: Tensors, hidden: usize) -> Result<Self> {
        Ok(Model {
            cell: GruCell::load(&t, "gru.cell", INPUTS, hidden)?,
            head: Mlp::load(&t, "gru.head", &[hidden, 2])?,
            tensors: t,
        })
    }
}

/// One window's end, for the result.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct WindowLog {
    /// Window index (0 = the first).
    pub window: u64,
    /// Lifetime samples in the window.
    pub samples: usize,
    /// Writes labelled LONG without a sample (`label_unseen = long`).
    pub unseen_long: usize,
    /// What Algorithm 1 did.
    pub pick: Option<Pick>,
    /// Sequences trained on.
    pub trained_on: usize,
    /// Epochs run.
    pub epochs: usize,
    /// Last epoch's loss.
    pub loss: Option<f32>,
}

/// The write log: every write of the last windows, by its index since the
/// workload started (a ring).
#[derive(serde::Serialize, serde::Deserialize)]
struct Log {
    cap: u64,
    digits: Vec<[u8; INPUTS]>,
    /// Writes back to the page's previous write (0: none in the log, or a
    /// first write).
    back: Vec<u32>,
    /// The write had a previous write (it was predicted, not UNSEEN-first).
    seen: Vec<bool>,
    len: u64,
}

impl Log {
    fn new(cap: u64) -> Self {
        Log {
            cap: cap.max(1),
            digits: Vec::new(),
            back: Vec::new(),
            seen: Vec::new(),
            len: 0,
        }
    }

    fn push(&mut self, d: [u8; INPUTS], back: u32, seen: bool) {
        if (self.digits.len() as u64) < self.cap {
            self.digits.push(d);
            self.back.push(back);
            self.seen.push(seen);
        } else {
            let k = (self.len % self.cap) as usize;
            self.digits[k] = d;
            self.back[k] = back;
            self.seen[k] = seen;
        }
        self.len += 1;
    }

    /// Oldest index still held.
    fn oldest(&self) -> u64 {
        self.len.saturating_sub(self.cap)
    }

    fn slot(&self, g: u64) -> usize {
        (g % self.cap) as usize
    }

    /// The sequence of write `g`: its page's writes up to and including it,
    /// at most `max` of them, oldest first, appended to `out` as inputs;
    /// returns its length.
    fn sequence(&self, g: u64, max: usize, out: &mut Vec<f32>) -> usize {
        let mut chain = [0u64; 64];
        let mut n = 0;
        let mut e = g;
        while n < max.min(chain.len()) {
            let k = self.slot(e);
            if !self.seen[k] {
                break;
            }
            chain[n] = e;
            n += 1;
            let b = self.back[k] as u64;
            if b == 0 || e < b || e - b < self.oldest() {
                break;
            }
            e -= b;
        }
        let mut x = [0f32; INPUTS];
        for &e in chain[..n].iter().rev() {
            to_inputs(&self.digits[self.slot(e)], &mut x);
            out.extend_from_slice(&x);
        }
        n
    }

    fn memory_bytes(&self) -> usize {
        self.digits.capacity() * INPUTS + self.back.capacity() * 4 + self.seen.capacity()
    }
}

/// Epochs that give at least `min_steps` optimiser steps over `n`
/// examples in minibatches of `batch` (0 when `min_steps` is 0).
pub fn epochs_for_steps(min_steps: usize, n: usize, batch: usize) -> usize {
    let per_epoch = n.div_ceil(batch.max(1)).max(1);
    min_steps.div_ceil(per_epoch)
}

/// The classifier.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Classifier {
    c: Config,
    last: LastWrite,
    h8: Vec<i8>,
    h32: Vec<f32>,
    h: Vec<f32>,
    x: [f32; INPUTS],
    /// Request-level feature state.
    pub features: Features,
    model: Option<Model>,
    /// Logical clock when the workload started.
    t0: Option<u64>,
    /// Index (since t0) where the current window started.
    window_start: u64,
    windows: u64,
    log: Log,
    /// The window's lifetime samples: (index of the labelled write, lifetime).
    samples: Vec<(u64, u64)>,
    threshold: Threshold,
    /// The threshold the deployed model was trained with [pages].
    t: Option<u64>,
    bound: [u64; 1],
    online: Online,
    rng: Rng,
    /// Per-window log.
    pub history: Vec<WindowLog>,
    /// Predictions made by class (short, long, unseen).
    pub predicted: [u64; 3],
}

impl Classifier {
    /// A training has started and is not deployed yet.
    pub fn in_flight(&self) -> bool {
        self.online.in_flight()
    }

    /// A classifier for `logical_blocks` pages of `block_bytes`.
    pub fn new(c: Config, logical_blocks: u32, block_bytes: u32) -> Result<Self> {
        let (model, t) = match &c.model {
            Some((tensors, t)) => (Some(Model::load(tensors.clone(), c.p.hidden)?), *t),
            None => (None, None),
        };
        let n = logical_blocks as usize;
        let online = Online::new(
            c.policy,
            Sampler::new(1, 1, 0),
            1,
            if c.p.online { c.window } else { 0 },
            model.is_some(),
        )?;
        let mut threshold = Threshold::new(c.p.step, c.p.max_step, c.p.light_samples, c.p.seed);
        threshold.current = t;
        Ok(Classifier {
            last: LastWrite::new(logical_blocks),
            h8: if c.int8 {
                vec![0; n * c.p.hidden]
            } else {
                Vec::new()
            },
            h32: if c.int8 {
                Vec::new()
            } else {
                vec![0.0; n * c.p.hidden]
            },
            h: vec![0.0; c.p.hidden],
            x: [0.0; INPUTS],
            features: Features::new(logical_blocks, block_bytes),
            model,
            t0: None,
            window_start: 0,
            windows: 0,
            log: Log::new((c.p.history_windows + 1) * c.window),
            samples: Vec::new(),
            threshold,
            t,
            bound: [t.unwrap_or(u64::MAX)],
            online,
            rng: Rng::new(c.p.seed ^ 0x5419),
            history: Vec::new(),
            predicted: [0; 3],
            c,
        })
    }

    /// The workload starts at logical time `now`.
    pub fn start(&mut self, now: u64) {
        self.t0 = Some(now);
        self.online.start(now);
    }

    /// The threshold T in force [pages], once there is one.
    pub fn threshold(&self) -> Option<u64> {
        self.t
    }

    /// `[T]`: the classes' bound for accuracy scoring.
    pub fn bounds(&self) -> &[u64] {
        &self.bound
    }

    /// Whether a model is deployed.
    pub fn has_model(&self) -> bool {
        self.model.is_some()
    }

    /// Time since `lba`'s last user write [pages], if any.
    #[inline(always)]
    pub fn age(&self, lba: u32, now: u64) -> Option<u64> {
        self.last.since(lba, now)
    }

    /// A window ends at `now` (call before placing the batch at `now`).
    #[inline(always)]
    pub fn window_due(&self, now: u64) -> bool {
        self.t0
            .is_some_and(|t0| now - t0 >= self.window_start + self.c.window)
    }

    /// Predict write `w` (the blocks of a request in order; each user
    /// write exactly once, in clock order).
    #[inline]
    pub fn classify(&mut self, w: &UserWrite) -> Pred {
        let prev = self.last.since(w.lba, w.time);
        let raw = self.features.observe(w, prev);
        let digits = raw.encode();
        if let Some(t0) = self.t0 {
            let g = w.time - t0;
            debug_assert_eq!(g, self.log.len, "one classification per user write");
            // The previous write's index, if it was in the workload.
            let gp = prev.and_then(|l| g.checked_sub(l));
            if let (Some(gp), Some(l)) = (gp, prev) {
                if gp >= self.window_start {
                    self.samples.push((gp, l));
                }
            }
            let back = match gp {
                Some(gp) if gp >= self.log.oldest() => (g - gp).min(u32::MAX as u64) as u32,
                _ => 0,
            };
            self.log.push(digits, back, prev.is_some());
        }
        let hd = self.c.p.hidden;
        let l = w.lba as usize;
        let pred = match (&mut self.model, prev) {
            (Some(m), Some(_)) => {
                to_inputs(&digits, &mut self.x);
                if self.c.p.seq_len <= 1 {
                    self.h.fill(0.0);
                } else if self.c.int8 {
                    for (v, &q) in self.h.iter_mut().zip(&self.h8[l * hd..(l + 1) * hd]) {
                        *v = q as f32 * (1.0 / 127.0);
                    }
                } else {
                    self.h.copy_from_slice(&self.h32[l * hd..(l + 1) * hd]);
                }
                m.cell.step(&self.x, &mut self.h);
                if self.c.int8 {
                    for (q, &v) in self.h8[l * hd..(l + 1) * hd].iter_mut().zip(&self.h) {
                        *q = (v * 127.0).round().clamp(-127.0, 127.0) as i8;
                    }
                } else {
                    self.h32[l * hd..(l + 1) * hd].copy_from_slice(&self.h);
                }
                if m.head.classify(&self.h) == 0 {
                    Pred::Short
                } else {
                    Pred::Long
                }
            }
            _ => {
                if self.c.int8 {
                    self.h8[l * hd..(l + 1) * hd].fill(0);
                } else {
                    self.h32[l * hd..(l + 1) * hd].fill(0.0);
                }
                Pred::Unseen
            }
        };
        self.predicted[pred as usize] += 1;
        pred
    }

    /// The user write of `lba` at `time` was applied.
    #[inline(always)]
    pub fn written(&mut self, lba: u32, time: u64) {
        self.last.record(lba, time);
    }

    /// A read request.
    pub fn read(&mut self, req: &Request) {
        self.features.read(req);
    }

    /// Start loading `lba`'s state.
    #[inline(always)]
    pub fn prefetch(&self, lba: u32) {
        self.last.prefetch(lba);
        let i = lba as usize * self.c.p.hidden;
        if self.c.int8 {
            crate::prefetch::prefetch(&self.h8, i);
        } else {
            crate::prefetch::prefetch(&self.h32, i);
        }
    }

    /// The window that ends at `now`: Algorithm 1, training, deployment.
    pub fn end_window(&mut self, now: u64) {
        let Some(t0) = self.t0 else { return };
        let samples = std::mem::take(&mut self.samples);
        let mut log = WindowLog {
            window: self.windows,
            samples: samples.len(),
            unseen_long: 0,
            pick: None,
            trained_on: 0,
            epochs: 0,
            loss: None,
        };
        let (start, end) = (self.window_start, now - t0);
        self.windows += 1;
        self.window_start = end;
        self.features.new_window();
        if self.c.p.online && !samples.is_empty() {
            let lifetimes: Vec<u64> = samples.iter().map(|&(_, l)| l).collect();
            let feats: Vec<[u8; INPUTS]> = samples
                .iter()
                .map(|&(g, _)| self.log.digits[self.log.slot(g)])
                .collect();
            log.pick = self.threshold.pick(&lifetimes, &feats);
            if let Some(t) = self.threshold.current {
                let unseen = match self.c.p.label_unseen {
                    LabelUnseen::Skip => Vec::new(),
                    LabelUnseen::Long => self.unrewritten(&samples, start, end, t),
                };
                log.unseen_long = unseen.len();
                self.train(now, &samples, &unseen, t, &mut log);
            }
        }
        self.history.push(log);
    }

    /// The writes of the window `[start, end)` (log indices) that were
    /// predicted (the page had a previous write), were not written again
    /// in the window, and are at least `t` old at its end: lifetime >= t.
    fn unrewritten(&self, samples: &[(u64, u64)], start: u64, end: u64, t: u64) -> Vec<u64> {
        let last = end.saturating_sub(t);
        if last <= start {
            return Vec::new();
        }
        let mut rewritten = vec![false; (last - start) as usize];
        for &(g, _) in samples {
            if (start..last).contains(&g) {
                rewritten[(g - start) as usize] = true;
            }
        }
        (start.max(self.log.oldest())..last)
            .filter(|&g| !rewritten[(g - start) as usize] && self.log.seen[self.log.slot(g)])
            .collect()
    }

    /// Train on the window's lifetime `samples` (labelled by `t`) and the
    /// writes `unseen` known to live at least `t` (LONG).
    fn train(
        &mut self,
        now: u64,
        samples: &[(u64, u64)],
        unseen: &[u64],
        t: u64,
        log: &mut WindowLog,
    ) {
        // The sampled, labelled sequences, balanced.
        let (mut short, mut long) = (Vec::new(), Vec::new());
        for &(g, l) in samples {
            if self.rng.next_f64() >= self.c.p.train_fraction || !self.log.seen[self.log.slot(g)] {
                continue;
            }
            if l < t {
                short.push(g);
            } else {
                long.push(g);
            }
        }
        for &g in unseen {
            if self.rng.next_f64() < self.c.p.train_fraction {
                long.push(g);
            }
        }
        if short.is_empty() || long.is_empty() {
            return;
        }
        if self.c.p.balance {
            let n = short.len().min(long.len());
            for class in [&mut short, &mut long] {
                for k in 0..n {
                    let j = k + self.rng.below((class.len() - k) as u64) as usize;
                    class.swap(k, j);
                }
                class.truncate(n);
            }
        }
        let (mut x, mut starts, mut y) = (Vec::new(), vec![0u32], Vec::new());
        for (class, gs) in [(0u32, &short), (1, &long)] {
            for &g in gs {
                let n = self.log.sequence(g, self.c.p.seq_len, &mut x);
                starts.push(starts.last().expect("starts") + n as u32);
                y.push(class);
            }
        }
        let Some(trainer) = self.online.trainer() else {
            return;
        };
        let shape = SeqShape {
            inputs: INPUTS,
            steps: self.c.p.seq_len,
            width: self.c.p.hidden,
            classes: 2,
        };
        let first = self.model.is_none();
        let floor = epochs_for_steps(self.c.p.min_steps, y.len(), self.c.p.batch);
        let epochs = if first {
            self.c.p.bootstrap_epochs.max(floor)
        } else {
            floor.max(1)
        };
        let spec: TrainSpec = self
            .online
            .spec(epochs, self.c.p.batch, self.c.p.lr, self.c.p.seed);
        let init = self.model.as_ref().map(|m| m.tensors.clone());
        let fit = GruFit {
            init: init.as_ref(),
            converge: first.then_some(Convergence {
                min_delta: self.c.p.converge_delta,
                patience: self.c.p.converge_patience,
                min_epochs: floor,
            }),
        };
        let data = Sequences {
            x: &x,
            starts: &starts,
            y: &y,
        };
        let hidden = self.c.p.hidden;
        let mut epochs_run = 0;
        let trained = self.online.train(now, y.len(), || {
            let out = trainer.train_gru_seqs("gru", shape, &data, &spec, &fit)?;
            epochs_run = out.epochs;
            let loss = out.loss;
            Ok((Model::load(out.tensors, hidden)?, loss))
        });
        if let Some(m) = trained {
            self.model = Some(m);
            self.t = Some(t);
            self.bound = [t];
            log.trained_on = y.len();
            log.epochs = epochs_run;
            log.loss = self.online.training.last_loss;
        }
    }

    /// The error that stops the run, once.
    pub fn take_error(&mut self) -> Option<crate::error::Error> {
        self.online.take_error()
    }

    /// What training did.
    pub fn training(&self) -> TrainingStats {
        self.online.training
    }

    /// The deployed model, with metadata naming the policy and T.
    pub fn model_tensors(&self) -> Option<Tensors> {
        let m = self.model.as_ref()?;
        let mut t = m.tensors.clone();
        t.metadata.insert("policy".into(), self.c.policy.into());
        t.metadata.insert("model".into(), "gru".into());
        t.metadata.insert("inputs".into(), INPUTS.to_string());
        t.metadata
            .insert("hidden".into(), self.c.p.hidden.to_string());
        if let Some(th) = self.t {
            t.metadata.insert("threshold".into(), th.to_string());
        }
        Some(t)
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.last.memory_bytes()
            + self.h8.capacity()
            + self.h32.capacity() * 4
            + self.features.memory_bytes()
            + self.log.memory_bytes()
            + self.samples.capacity() * 16
    }

    /// State for the result.
    pub fn state(&self) -> Value {
        let short_share = {
            let seen = self.predicted[0] + self.predicted[1];
            (seen > 0).then(|| self.predicted[0] as f64 / seen as f64)
        };
        json!({
            "threshold": self.t,
            "step": self.threshold.step(),
            "model_on": self.model.is_some(),
            "window_pages": self.c.window,
            "windows": self.windows,
            "predicted": {"short": self.predicted[0], "long": self.predicted[1], "unseen": self.predicted[2]},
            "short_share": short_share,
            "training": self.online.training,
            "history": self.history,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::params::ClassifierParams;
    use super::*;

    fn random_model(hidden: usize, seed: u64) -> Tensors {
        let mut rng = Rng::new(seed);
        let mut r = |n: usize| {
            (0..n)
                .map(|_| (rng.next_f64() as f32 - 0.5) * 0.8)
                .collect::<Vec<_>>()
        };
        let g = 3 * hidden;
        let mut t = Tensors::default();
        t.insert("gru.cell.weight_ih", &[g, INPUTS], r(g * INPUTS));
        t.insert("gru.cell.weight_hh", &[g, hidden], r(g * hidden));
        t.insert("gru.cell.bias_ih", &[g], r(g));
        t.insert("gru.cell.bias_hh", &[g], r(g));
        t.insert("gru.head.0.weight", &[2, hidden], r(2 * hidden));
        t.insert("gru.head.0.bias", &[2], r(2));
        t
    }

    fn config(int8: bool, seq_len: usize, model: Tensors) -> Config {
        Config {
            policy: "shiro",
            p: ClassifierParams {
                seq_len,
                bootstrap_epochs: 1,
                batch: 16,
                light_samples: 100,
                online: false,
                ..Default::default()
            },
            window: 1000,
            int8,
            model: Some((model, Some(50))),
        }
    }

    /// Writes LBA 5 at `times` (and other LBAs in between, so every
    /// logical time has a write); returns the classifier and the log
    /// indices of LBA 5's writes.
    fn replay(c: Config, times: &[u64]) -> (Classifier, Vec<u64>) {
        let mut k = Classifier::new(c, 1000, 16384).unwrap();
        k.start(0);
        let mut mine = Vec::new();
        for t in 0..=*times.last().unwrap() {
            let lba = if times.contains(&t) {
                5
            } else {
                100 + (t as u32 % 700)
            };
            let w = UserWrite {
                lba,
                time: t,
                req_blocks: 1 + (t % 3) as u32,
                req_offset: 0,
                ..Default::default()
            };
            k.classify(&w);
            k.written(lba, t);
            if lba == 5 {
                mine.push(t);
            }
        }
        (k, mine)
    }

    #[test]
    fn cached_state_equals_the_full_sequence_run() {
        let model = random_model(32, 9);
        let times = [3, 10, 11, 40, 41, 42, 90, 200, 201, 350, 351, 352, 600];
        let (k, mine) = replay(config(false, 20, model.clone()), &times);
        // The full-sequence run: from H = 0 over every write of LBA 5 but
        // its first (which had no prediction), on the same inputs.
        let mut cell = GruCell::load(&model, "gru.cell", INPUTS, 32).unwrap();
        let mut h = vec![0f32; 32];
        let mut x = [0f32; INPUTS];
        for &g in &mine[1..] {
            to_inputs(&k.log.digits[k.log.slot(g)], &mut x);
            cell.step(&x, &mut h);
        }
        let cached = &k.h32[5 * 32..6 * 32];
        let d = cached
            .iter()
            .zip(&h)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(d < 1e-6, "cached vs full sequence: {d}");
        // Unseen: every first write (LBA 5's and the 588 others', each once).
        assert_eq!(k.predicted[2] as usize, 1 + (601 - times.len()));
        // int8 states: the same within the quantisation.
        let (q, _) = replay(config(true, 20, model.clone()), &times);
        let d = q.h8[5 * 32..6 * 32]
            .iter()
            .zip(&h)
            .map(|(&a, b)| (a as f32 / 127.0 - b).abs())
            .fold(0f32, f32::max);
        assert!(d < 0.05, "int8 state vs full sequence: {d}");
        // seq_len 1: the state is the last write's step from zero.
        let (one, _) = replay(config(false, 1, model), &times);
        let mut h1 = vec![0f32; 32];
        to_inputs(&one.log.digits[one.log.slot(*mine.last().unwrap())], &mut x);
        cell.step(&x, &mut h1);
        assert_eq!(&one.h32[5 * 32..6 * 32], &h1[..]);
    }

    #[test]
    fn log_sequences_follow_the_page_and_stop_at_its_first_write() {
        let mut log = Log::new(100);
        let d = |v: u8| {
            let mut a = [0u8; INPUTS];
            a[0] = v;
            a
        };
        // Page A: writes 0 (its first), 2, 4; page B: 1 (its first), 3.
        log.push(d(1), 0, false);
        log.push(d(2), 0, false);
        log.push(d(3), 2, true);
        log.push(d(4), 2, true);
        log.push(d(5), 2, true);
        let mut x = Vec::new();
        // Write 3 (B): [4]; B's first write (1) is left out.
        assert_eq!(log.sequence(3, 20, &mut x), 1);
        assert_eq!(x[0], 4.0 / 15.0);
        x.clear();
        // Write 4 (A): [3, 5], oldest first.
        assert_eq!(log.sequence(4, 20, &mut x), 2);
        assert_eq!((x[0], x[INPUTS]), (3.0 / 15.0, 5.0 / 15.0));
        x.clear();
        // A chain of seen writes: 5 -> 4 -> ... capped at `max`.
        let mut log = Log::new(10);
        log.push(d(0), 0, false);
        for k in 1..30 {
            log.push(d(k as u8 % 16), 1, true);
        }
        assert_eq!(
            log.sequence(29, 20, &mut x),
            10,
            "the ring holds writes 20..30"
        );
        assert_eq!(x.len(), 10 * INPUTS);
        assert_eq!(x[0], 4.0 / 15.0, "write 20");
        assert_eq!(
            x[9 * INPUTS],
            13.0 / 15.0,
            "oldest first, the write itself (29) last"
        );
        x.clear();
        assert_eq!(log.sequence(29, 3, &mut x), 3);
    }
}
