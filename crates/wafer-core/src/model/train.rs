//! The seam between the engine and the training side. Learned policies train
//! online, at their window boundaries, through a [`Trainer`]; wafer-learn
//! implements it with candle and installs it once per process
//! (`wafer_learn::install()`, which the Python extension calls on import).
//! The engine crate itself does not depend on candle, so it builds fast and
//! its tests run without it; a learned policy asked to train in a process
//! with no trainer fails with a clear error instead.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::Tensors;
use crate::error::{Error, Result};

/// Settings of one classifier training.
#[derive(Clone, Debug)]
pub struct TrainSpec {
    /// Passes over the examples.
    pub epochs: usize,
    /// Examples per optimiser step.
    pub batch: usize,
    /// AdamW learning rate.
    pub lr: f64,
    /// Seed of the initial weights and of the batch order.
    pub seed: u64,
    /// Set when nobody will use the result (its run ended): the trainers
    /// stop at their next batch with [`TrainSpec::check`]'s error, so a
    /// background training does not keep a core busy after its run.
    pub cancel: Option<Arc<AtomicBool>>,
}

impl Default for TrainSpec {
    fn default() -> Self {
        TrainSpec {
            epochs: 20,
            batch: 256,
            lr: 1e-2,
            seed: 1,
            cancel: None,
        }
    }
}

impl TrainSpec {
    /// An error once the training was cancelled (trainers call it per batch).
    pub fn check(&self) -> Result<()> {
        match &self.cancel {
            Some(c) if c.load(Ordering::Relaxed) => Err(Error::Model {
                file: "training".into(),
                reason: "cancelled: its run ended".into(),
            }),
            _ => Ok(()),
        }
    }
}

/// Trains the small models of the learned policies.
pub trait Trainer: Send + Sync {
    /// Train an MLP classifier of widths `sizes` (ReLU between layers) on
    /// `x` (rows of `sizes[0]` features) and labels `y` (< the last width)
    /// with cross-entropy; returns its tensors under `prefix` (the
    /// [`super::Mlp`] layout) and the last epoch's mean loss. A loss that
    /// turns non-finite is an [`Error::Model`] saying training diverged.
    fn train_mlp(
        &self,
        prefix: &str,
        sizes: &[usize],
        x: &[f32],
        y: &[u32],
        spec: &TrainSpec,
    ) -> Result<(Tensors, f32)>;

    /// Train a GRU sequence classifier: a [`super::GruCell`] under
    /// `{prefix}.cell` (hidden `shape.width`) run from a zero state over
    /// each sequence of `x`, and a linear head `{prefix}.head.0` on its last
    /// hidden state.
    fn train_gru(
        &self,
        prefix: &str,
        shape: SeqShape,
        x: &[f32],
        y: &[u32],
        spec: &TrainSpec,
    ) -> Result<(Tensors, f32)>;

    /// Train, or go on training, a GRU sequence classifier on sequences of
    /// different lengths (Shiro's page classifier, §III-B): a
    /// [`super::GruCell`] under `{prefix}.cell` (hidden `shape.width`) run
    /// from a zero state over each sequence, a linear head `{prefix}.head.0`
    /// on its last hidden state, cross-entropy, Adam. `shape.steps` is
    /// unused (each sequence has its own length). Starts from `fit.init`
    /// (the deployed model) when given, else from seeded weights.
    fn train_gru_seqs(
        &self,
        prefix: &str,
        shape: SeqShape,
        data: &Sequences,
        spec: &TrainSpec,
        fit: &GruFit,
    ) -> Result<FitOutcome> {
        let _ = (prefix, shape, data, spec, fit);
        Err(Error::Model {
            file: "training".into(),
            reason: "this trainer cannot train variable-length GRU sequences".into(),
        })
    }

    /// Train a TCN sequence classifier: a [`super::Tcn`] under
    /// `{prefix}.tcn` (`shape.width` channels, `levels` levels, `kernel`)
    /// over each window of `x`, and a linear head `{prefix}.head.0` on the
    /// last step.
    #[allow(clippy::too_many_arguments)]
    fn train_tcn(
        &self,
        prefix: &str,
        shape: SeqShape,
        levels: usize,
        kernel: usize,
        x: &[f32],
        y: &[u32],
        spec: &TrainSpec,
    ) -> Result<(Tensors, f32)>;

    /// Train an LSTM regressor: a [`super::LstmCell`] under `{prefix}.cell`
    /// (hidden `shape.hidden`, candle's `_l0` names) run from a zero state
    /// over each sequence of `x` (`shape.steps` steps of `shape.inputs`
    /// values, oldest first), and a linear head `{prefix}.head.0` from its
    /// last hidden state to `shape.outputs` values, fitted to `y` (rows of
    /// `shape.outputs`) by mean squared error; returns the tensors and the
    /// last epoch's mean loss. Trainers without it say so.
    fn train_lstm(
        &self,
        prefix: &str,
        shape: LstmShape,
        x: &[f32],
        y: &[f32],
        spec: &TrainSpec,
    ) -> Result<(Tensors, f32)> {
        let _ = (shape, x, y, spec);
        Err(Error::Model {
            file: format!("{prefix} training"),
            reason: "this trainer cannot train an LSTM regressor".into(),
        })
    }
}

/// Settings and shape of an LSTM regressor (LSTM+KM's temperature model).
#[derive(Clone, Copy, Debug)]
pub struct LstmShape {
    /// Values per step.
    pub inputs: usize,
    /// Steps per sequence.
    pub steps: usize,
    /// Hidden units.
    pub hidden: usize,
    /// Values predicted per sequence.
    pub outputs: usize,
}

/// The shape of a sequence classifier's data: `x` holds sequences of
/// `steps` inputs of `inputs` values each, oldest first.
#[derive(Clone, Copy, Debug)]
pub struct SeqShape {
    /// Values per step.
    pub inputs: usize,
    /// Steps per sequence.
    pub steps: usize,
    /// Hidden width (GRU) or channels (TCN).
    pub width: usize,
    /// Output classes.
    pub classes: usize,
}

/// Labelled sequences of different lengths: sequence `i` is the steps
/// `starts[i]..starts[i + 1]` of `x` (each step `inputs` values, oldest
/// first), with label `y[i]`.
#[derive(Clone, Copy, Debug)]
pub struct Sequences<'a> {
    /// Every step of every sequence, concatenated.
    pub x: &'a [f32],
    /// Offsets of the sequences [steps]; one more than there are sequences.
    pub starts: &'a [u32],
    /// Labels.
    pub y: &'a [u32],
}

/// How long to train and from where.
#[derive(Clone, Copy, Debug, Default)]
pub struct GruFit<'a> {
    /// Weights to start from (the deployed model), else seeded ones.
    pub init: Option<&'a Tensors>,
    /// Train until the epoch loss improves by less than `min_delta` for
    /// `patience` epochs in a row, at most `TrainSpec::epochs` epochs
    /// (Shiro's "until convergence"); `None`: exactly `TrainSpec::epochs`.
    pub converge: Option<Convergence>,
}

/// The stopping rule of a training "until convergence".
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct Convergence {
    /// Smallest improvement of the epoch's mean loss that counts.
    pub min_delta: f32,
    /// Epochs in a row without such an improvement before stopping.
    pub patience: usize,
    /// Epochs run at least, whatever the loss does (a floor on the
    /// optimiser steps of a small training set).
    pub min_epochs: usize,
}

/// A finished training.
#[derive(Clone, Debug)]
pub struct FitOutcome {
    /// The trained tensors.
    pub tensors: Tensors,
    /// Mean loss of the last epoch.
    pub loss: f32,
    /// Epochs run.
    pub epochs: usize,
}

static TRAINER: OnceLock<Box<dyn Trainer>> = OnceLock::new();

/// Install the process's trainer (the first installation wins).
pub fn install(t: Box<dyn Trainer>) {
    let _ = TRAINER.set(t);
}

/// The installed trainer, or an error naming `policy` and how to get one.
pub fn trainer(policy: &str) -> Result<&'static dyn Trainer> {
    TRAINER
        .get()
        .map(|b| b.as_ref())
        .ok_or_else(|| Error::Model {
            file: format!("{policy} online training"),
            reason: "no trainer in this process: wafer-learn (candle) is not linked; \
                 call wafer_learn::install(), or give a trained model and set retrain to 0"
                .into(),
        })
}

static SLOWDOWN_MS: AtomicU64 = AtomicU64::new(0);

/// Delay every background training by `d` before it starts (for tests
/// that check a replay does not depend on how fast its trainings run).
pub fn set_slowdown(d: Duration) {
    SLOWDOWN_MS.store(d.as_millis() as u64, Ordering::Relaxed);
}

/// The delay [`set_slowdown`] set.
pub fn slowdown() -> Duration {
    Duration::from_millis(SLOWDOWN_MS.load(Ordering::Relaxed))
}

/// What a policy's online training did, for the run's statistics.
#[derive(Clone, Copy, Debug, Default, Serialize, serde::Deserialize)]
pub struct TrainingStats {
    /// Trainings run (deployed).
    pub trainings: u64,
    /// Wall time spent training [s] (on the training thread when training
    /// runs in the background).
    pub seconds: f64,
    /// Wall time the replay waited for background trainings that had not
    /// finished at their deployment time [s] (inside `elapsed_seconds`).
    pub waited_seconds: f64,
    /// Examples in the last training.
    pub last_examples: u64,
    /// Mean loss of the last training's last epoch.
    pub last_loss: Option<f32>,
}

impl TrainingStats {
    /// Time `f` (one training of `examples` examples) and count it.
    pub fn time<T>(&mut self, examples: usize, f: impl FnOnce() -> Result<(T, f32)>) -> Result<T> {
        let t = Instant::now();
        let r = f();
        self.seconds += t.elapsed().as_secs_f64();
        let (v, loss) = r?;
        self.trainings += 1;
        self.last_examples = examples as u64;
        self.last_loss = Some(loss);
        Ok(v)
    }
}
