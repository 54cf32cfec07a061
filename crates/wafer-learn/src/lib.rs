//! wafer-learn: the training side of wafer's learned policies. The small
//! models (an MLP classifier, GRU/LSTM cells, a TCN) are trained natively
//! with candle and handed to the engine's hot-path kernels
//! ([`wafer_core::model`]) as safetensors tensors with the documented names.
//! Kept out of wafer-core so the engine builds fast without candle.
//!
//! Training is reproducible: weights start from a seeded generator (not
//! candle's), batches are taken in a seeded order, and everything runs on
//! the CPU in f32.

use std::collections::HashMap;

use candle_core::{DType, Device, Tensor};
use candle_nn::{AdamW, Module, Optimizer, ParamsAdamW, VarBuilder, VarMap};
use wafer_core::model::train::Trainer;
use wafer_core::model::{Mlp, Tensors};
use wafer_core::rng::Rng;
use wafer_core::{Error, Result};

fn err(e: candle_core::Error) -> Error {
    Error::Model {
        file: "training".into(),
        reason: e.to_string(),
    }
}

/// wafer tensors as candle tensors (CPU, f32).
pub fn to_candle(t: &Tensors) -> Result<HashMap<String, Tensor>> {
    t.tensors
        .iter()
        .map(|(n, (shape, v))| {
            Tensor::from_vec(v.clone(), shape.as_slice(), &Device::Cpu)
                .map(|x| (n.clone(), x))
                .map_err(err)
        })
        .collect()
}

/// candle tensors as wafer tensors.
pub fn from_candle(m: &HashMap<String, Tensor>) -> Result<Tensors> {
    let mut t = Tensors::default();
    for (n, x) in m {
        let shape = x.dims().to_vec();
        let v = x
            .flatten_all()
            .and_then(|f| f.to_dtype(DType::F32))
            .and_then(|f| f.to_vec1::<f32>())
            .map_err(err)?;
        t.insert(n, &shape, v);
    }
    Ok(t)
}

/// Kaiming-uniform-like seeded initial weights for an MLP of widths `sizes`
/// (layers `{prefix}.i`), biases zero.
pub fn init_mlp(prefix: &str, sizes: &[usize], seed: u64) -> Tensors {
    let mut rng = Rng::new(seed);
    let mut t = Tensors::default();
    for (i, w) in sizes.windows(2).enumerate() {
        let bound = (6.0 / w[0] as f64).sqrt();
        let ws = (0..w[0] * w[1])
            .map(|_| ((rng.next_f64() * 2.0 - 1.0) * bound) as f32)
            .collect();
        t.insert(&format!("{prefix}.{i}.weight"), &[w[1], w[0]], ws);
        t.insert(&format!("{prefix}.{i}.bias"), &[w[1]], vec![0.0; w[1]]);
    }
    t
}

pub use wafer_core::model::train::TrainSpec;

/// Training settings of a classifier (the engine's [`TrainSpec`]).
pub type TrainConfig = TrainSpec;

/// The candle trainer the engine's learned policies train with.
pub struct Candle;

impl Trainer for Candle {
    fn train_mlp(
        &self,
        prefix: &str,
        sizes: &[usize],
        x: &[f32],
        y: &[u32],
        spec: &TrainSpec,
    ) -> Result<(Tensors, f32)> {
        train_mlp(prefix, sizes, x, y, spec)
    }
}

/// Install candle as this process's trainer (idempotent): learned policies
/// can then train online during a replay.
pub fn install() {
    wafer_core::model::train::install(Box::new(Candle));
}

/// Train an MLP classifier of widths `sizes` on `x` (rows of `sizes[0]`
/// features) and labels `y` (< the last width) with cross-entropy and
/// AdamW; returns its tensors under `prefix` and the last epoch's mean loss.
/// A loss that turns NaN is an error (diverged training).
pub fn train_mlp(
    prefix: &str,
    sizes: &[usize],
    x: &[f32],
    y: &[u32],
    cfg: &TrainConfig,
) -> Result<(Tensors, f32)> {
    let (n, d) = (y.len(), sizes[0]);
    if x.len() != n * d || n == 0 {
        return Err(Error::Model {
            file: "training".into(),
            reason: format!("{} feature values for {n} labels of {d} features", x.len()),
        });
    }
    let init = init_mlp(prefix, sizes, cfg.seed);
    let vm = VarMap::new();
    {
        let mut data = vm.data().lock().expect("var map lock");
        for (name, t) in to_candle(&init)? {
            data.insert(name, candle_core::Var::from_tensor(&t).map_err(err)?);
        }
    }
    let vb = VarBuilder::from_varmap(&vm, DType::F32, &Device::Cpu);
    let layers: Vec<candle_nn::Linear> = sizes
        .windows(2)
        .enumerate()
        .map(|(i, w)| candle_nn::linear(w[0], w[1], vb.pp(format!("{prefix}.{i}"))))
        .collect::<candle_core::Result<_>>()
        .map_err(err)?;
    let forward = |xs: &Tensor| -> candle_core::Result<Tensor> {
        let mut h = xs.clone();
        for (i, l) in layers.iter().enumerate() {
            h = l.forward(&h)?;
            if i + 1 < layers.len() {
                h = h.relu()?;
            }
        }
        Ok(h)
    };
    let mut opt = AdamW::new(
        vm.all_vars(),
        ParamsAdamW {
            lr: cfg.lr,
            ..Default::default()
        },
    )
    .map_err(err)?;
    let xs = Tensor::from_vec(x.to_vec(), (n, d), &Device::Cpu).map_err(err)?;
    let ys = Tensor::from_vec(y.to_vec(), n, &Device::Cpu).map_err(err)?;
    let mut rng = Rng::new(cfg.seed ^ 0x5eed);
    let mut order: Vec<u32> = (0..n as u32).collect();
    let mut last = f32::NAN;
    for _ in 0..cfg.epochs.max(1) {
        for i in (1..n).rev() {
            order.swap(i, rng.below(i as u64 + 1) as usize);
        }
        let (mut sum, mut steps) = (0f32, 0);
        for chunk in order.chunks(cfg.batch.max(1)) {
            let idx = Tensor::from_vec(chunk.to_vec(), chunk.len(), &Device::Cpu).map_err(err)?;
            let (bx, by) = (
                xs.index_select(&idx, 0).map_err(err)?,
                ys.index_select(&idx, 0).map_err(err)?,
            );
            let loss = forward(&bx)
                .and_then(|logits| candle_nn::loss::cross_entropy(&logits, &by))
                .map_err(err)?;
            opt.backward_step(&loss).map_err(err)?;
            let l = loss.to_scalar::<f32>().map_err(err)?;
            if !l.is_finite() {
                return Err(Error::Model {
                    file: "training".into(),
                    reason: format!("loss became {l}: training diverged (lower the learning rate)"),
                });
            }
            sum += l;
            steps += 1;
        }
        last = sum / steps as f32;
    }
    let data = vm.data().lock().expect("var map lock");
    let trained: HashMap<String, Tensor> = data
        .iter()
        .map(|(k, v)| (k.clone(), v.as_tensor().clone()))
        .collect();
    Ok((from_candle(&trained)?, last))
}

/// The trained classifier as the engine's kernel.
pub fn mlp_kernel(t: &Tensors, prefix: &str, sizes: &[usize]) -> Result<Mlp> {
    Mlp::load(t, prefix, sizes)
}
