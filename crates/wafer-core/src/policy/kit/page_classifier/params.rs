//! The page classifier's parameters (Shiro §III-B, §V-E), one struct for
//! every policy built on [`super::classifier`]: `shiro`, `shiro-ng` and
//! `phftl` flatten it into their own parameters, so a name means the same
//! thing, with the same default and range, in each.

use serde::{Deserialize, Serialize};

use crate::device::Geometry;
use crate::error::{Error, Result};
use crate::model::Tensors;

/// How the classifier is set up: its parameters, checked
/// ([`ClassifierParams::config`]), and what they resolve to.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Config {
    /// Policy name (errors, model files).
    #[serde(with = "crate::codec::static_str")]
    pub policy: crate::codec::Name,
    /// The parameters as given.
    pub p: ClassifierParams,
    /// Write window [pages].
    pub window: u64,
    /// Keep hidden states as int8.
    pub int8: bool,
    /// A model to start from, and its threshold.
    pub model: Option<(Tensors, Option<u64>)>,
}

/// What a training set does with the window's writes whose page was not
/// written again before the window ended (no lifetime sample).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LabelUnseen {
    /// Leave them out: only pairs of writes inside one window are samples
    /// (§III-B as written).
    Skip,
    /// Label LONG those written at least T before the window's end (their
    /// lifetime is at least T, though not known); younger ones are left out.
    Long,
}

/// The classifier's parameters (the paper's defaults; [U]: our choice, see
/// [`super::classifier`] and the `shiro` module doc). Policies flatten it
/// into theirs (serde's `flatten` cannot deny unknown fields:
/// [`crate::params::parse`] rejects the keys the defaults lack).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ClassifierParams {
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
    /// Fewest optimiser steps of a window's training [Adam steps]: a window
    /// whose sequences fill fewer minibatches runs more epochs (the paper's
    /// windows hold up to 1.7 M samples, wafer's short runs a few hundred);
    /// 0: the paper's epochs only (one per window after the first).
    pub min_steps: usize,
    /// Writes of the window never rewritten in it: `skip` (§III-B) or
    /// `long` (labelled LONG when at least T old at the window's end).
    pub label_unseen: LabelUnseen,
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
    /// Train online at each window's end; false needs `model`.
    pub online: bool,
    /// A trained model (`wafer train POLICY ...`) to start from.
    pub model: Option<String>,
    /// Seed of training, sampling and exploration.
    pub seed: u64,
}

impl Default for ClassifierParams {
    fn default() -> Self {
        ClassifierParams {
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
            min_steps: 0,
            label_unseen: LabelUnseen::Skip,
            balance: true,
            state: "int8".into(),
            step: 5,
            max_step: 10,
            light_samples: 5000,
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

impl ClassifierParams {
    /// The classifier's config for `policy` on `geo`, or the first
    /// parameter out of range.
    pub fn config(&self, policy: &'static str, geo: &Geometry) -> Result<Config> {
        let p = policy;
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
        if self.min_steps > 100_000 {
            return Err(bad("min_steps", &self.min_steps, "0 to 100000 Adam steps"));
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
        let int8 = match self.state.as_str() {
            "int8" => true,
            "f32" => false,
            other => return Err(bad("state", &format!("'{other}'"), "'int8' or 'f32'")),
        };
        let window = ((self.window * geo.logical_blocks as f64).round() as u64).max(1);
        let model = match &self.model {
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
            p: self.clone(),
            window,
            int8,
            model,
        })
    }
}
