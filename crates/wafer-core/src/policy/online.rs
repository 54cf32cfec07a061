//! What every learned policy does around its model: sample writes for
//! training ([`Sampler`]), retrain on a fixed period through the process's
//! trainer, count the training time, and hold an error (a missing trainer,
//! diverged training) for the engine to stop on.

use super::sampler::Sampler;
use crate::error::{Error, Result};
use crate::model::train::{self, TrainSpec, Trainer, TrainingStats};

const NO_SLOT: u32 = u32::MAX;

/// Online-training state of one policy.
pub struct Online {
    policy: &'static str,
    /// The sampled writes.
    pub samples: Sampler,
    every: u64,
    seen: u64,
    retrain_every: u64,
    next_train: u64,
    /// Trainings so far and their time.
    pub training: TrainingStats,
    error: Option<Error>,
    /// Sample id (or none) of each block of the batch being placed, in order.
    pending: Vec<u32>,
    cursor: usize,
    /// The workload has started: writes before it (the prefill) are
    /// neither sampled nor trained on.
    started: bool,
}

impl Online {
    /// For `policy`: samples of `width` values, at most `cap`, one in
    /// `sample_every` offered writes; retraining every `retrain_every` user
    /// writes (0: never, which needs a model given beforehand).
    pub fn new(
        policy: &'static str,
        samples: Sampler,
        sample_every: u32,
        retrain_every: u64,
        has_model: bool,
    ) -> Result<Self> {
        if retrain_every == 0 && !has_model {
            return Err(Error::Parameter {
                policy: policy.into(),
                reason: "retrain 0 (no online training) needs a trained model: give model=PATH"
                    .into(),
            });
        }
        Ok(Online {
            policy,
            samples,
            every: sample_every.max(1) as u64,
            seen: 0,
            retrain_every,
            next_train: if retrain_every == 0 {
                u64::MAX
            } else {
                retrain_every
            },
            training: TrainingStats::default(),
            error: None,
            pending: Vec::new(),
            cursor: 0,
            started: false,
        })
    }

    /// The workload starts at `now` (after the prefill, if any): sampling
    /// begins and the first retraining is one period later.
    pub fn start(&mut self, now: u64) {
        self.started = true;
        if self.retrain_every > 0 {
            self.next_train = now.saturating_add(self.retrain_every);
        }
    }

    /// Whether a retraining is due at `now` (then the next one is scheduled).
    pub fn due(&mut self, now: u64) -> bool {
        if !self.started || now < self.next_train {
            return false;
        }
        self.next_train = self.next_train.saturating_add(self.retrain_every);
        true
    }

    /// The trainer, or `None` with the error kept for the engine.
    pub fn trainer(&mut self) -> Option<&'static dyn Trainer> {
        match train::trainer(self.policy) {
            Ok(t) => Some(t),
            Err(e) => {
                self.error = Some(e);
                None
            }
        }
    }

    /// Run one training of `examples` examples (timed and counted); a
    /// failure is kept as the error that stops the run.
    pub fn train<T>(
        &mut self,
        now: u64,
        examples: usize,
        f: impl FnOnce() -> Result<(T, f32)>,
    ) -> Option<T> {
        match self.training.time(examples, f) {
            Ok(v) => Some(v),
            Err(e) => {
                self.error = Some(Error::Model {
                    file: format!("{} training at logical time {now}", self.policy),
                    reason: e.to_string(),
                });
                None
            }
        }
    }

    /// The seed and settings of the next training.
    pub fn spec(&self, epochs: usize, batch: usize, lr: f64, seed: u64) -> TrainSpec {
        TrainSpec {
            epochs,
            batch,
            lr,
            seed: seed.wrapping_add(self.training.trainings),
        }
    }

    /// A new batch of user writes is being placed.
    pub fn begin_batch(&mut self) {
        self.pending.clear();
        self.cursor = 0;
    }

    /// Offer the next block of the batch (in order) for sampling: every
    /// `sample_every`-th offered block is kept with input `x` and `pred`.
    pub fn offer(&mut self, x: &[f32], pred: u8, time: u64, lba: u32) {
        if !self.started {
            self.pending.push(NO_SLOT);
            return;
        }
        self.seen += 1;
        let slot = if self.seen.is_multiple_of(self.every) {
            self.samples.push(x, pred, time, lba)
        } else {
            NO_SLOT
        };
        self.pending.push(slot);
    }

    /// The next block of the batch is not offered for sampling.
    pub fn skip(&mut self) {
        self.pending.push(NO_SLOT);
    }

    /// Whether the offered block `ahead` places after the next one (0: the
    /// next) will be sampled.
    pub fn will_sample(&self, ahead: u64) -> bool {
        self.started && (self.seen + 1 + ahead).is_multiple_of(self.every)
    }

    /// The next block of the batch was applied at `time` (call in order);
    /// returns its position in the batch.
    #[inline]
    pub fn written(&mut self, lba: u32, time: u64) -> usize {
        let i = self.cursor;
        self.cursor += 1;
        let slot = self.pending[i];
        self.samples
            .written(lba, time, (slot != NO_SLOT).then_some(slot));
        i
    }

    /// The error to stop the run on, once.
    pub fn take_error(&mut self) -> Option<Error> {
        self.error.take()
    }
}
