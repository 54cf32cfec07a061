//! wafer-learn: the training side of wafer's learned policies. The small
//! models (an MLP classifier, GRU/LSTM cells, a TCN) are trained natively
//! with candle and handed to the engine's hot-path kernels
//! ([`wafer_core::model`]) as safetensors tensors with the documented names.
//! Kept out of wafer-core so the engine builds fast without candle.
//!
//! Training is reproducible: weights start from a seeded generator (not
//! candle's), batches are taken in a seeded order, and everything runs on
//! the CPU in f32.

pub mod gru_seq;

use std::collections::HashMap;

pub mod native;

use candle_core::backprop::GradStore;
use candle_core::{DType, Device, Tensor, Var};
use candle_nn::{Module, ParamsAdamW, VarBuilder, VarMap, RNN};
use wafer_core::model::train::{FitOutcome, GruFit, LstmShape, SeqShape, Sequences, Trainer};
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
    fn train_lstm(
        &self,
        prefix: &str,
        shape: LstmShape,
        x: &[f32],
        y: &[f32],
        spec: &TrainSpec,
    ) -> Result<(Tensors, f32)> {
        train_lstm(prefix, shape, x, y, spec)
    }

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

    fn train_gru(
        &self,
        prefix: &str,
        shape: SeqShape,
        x: &[f32],
        y: &[u32],
        spec: &TrainSpec,
    ) -> Result<(Tensors, f32)> {
        train_gru(
            prefix,
            shape.inputs,
            shape.width,
            shape.classes,
            shape.steps,
            x,
            y,
            spec,
        )
    }

    fn train_gru_seqs(
        &self,
        prefix: &str,
        shape: SeqShape,
        data: &Sequences,
        spec: &TrainSpec,
        fit: &GruFit,
    ) -> Result<FitOutcome> {
        gru_seq::train(prefix, shape, data, spec, fit)
    }

    fn train_tcn(
        &self,
        prefix: &str,
        shape: SeqShape,
        levels: usize,
        kernel: usize,
        x: &[f32],
        y: &[u32],
        spec: &TrainSpec,
    ) -> Result<(Tensors, f32)> {
        train_tcn(
            prefix,
            shape.inputs,
            shape.width,
            levels,
            kernel,
            shape.classes,
            shape.steps,
            x,
            y,
            spec,
        )
    }
}

/// Install candle as this process's trainer (idempotent): learned policies
/// can then train online during a replay.
///
/// candle spreads matrix products over `RAYON_NUM_THREADS` threads (all
/// cores by default). The learned policies' models are tiny and train on a
/// thread beside the replay, so extra threads cost more in synchronisation
/// than they save and take the replay's core: unless the variable is set,
/// it is set to 1 here (measured: 2.35 s instead of 4.9 s for DOGI's
/// training on a loaded two-core machine).
pub fn install() {
    if std::env::var_os("RAYON_NUM_THREADS").is_none() {
        std::env::set_var("RAYON_NUM_THREADS", "1");
    }
    wafer_core::model::train::install(Box::new(Candle));
}

fn bad(reason: String) -> Error {
    Error::Model {
        file: "training".into(),
        reason,
    }
}

/// Seeded uniform(-1/√fan_in, 1/√fan_in) values (PyTorch's default range).
fn seeded(rng: &mut Rng, n: usize, fan_in: usize) -> Vec<f32> {
    let bound = 1.0 / (fan_in.max(1) as f64).sqrt();
    (0..n)
        .map(|_| ((rng.next_f64() * 2.0 - 1.0) * bound) as f32)
        .collect()
}

/// Add `name` of `shape` to `init`, seeded as [`seeded`] with `fan_in`.
fn put(init: &mut Tensors, rng: &mut Rng, name: &str, shape: &[usize], fan_in: usize) {
    let n = shape.iter().product();
    init.insert(name, shape, seeded(rng, n, fan_in));
}

/// The linear head `{prefix}.head.0` from `width` features to `classes`
/// logits (bias zero).
fn put_head(init: &mut Tensors, rng: &mut Rng, prefix: &str, width: usize, classes: usize) {
    put(
        init,
        rng,
        &format!("{prefix}.head.0.weight"),
        &[classes, width],
        width,
    );
    init.insert(
        &format!("{prefix}.head.0.bias"),
        &[classes],
        vec![0.0; classes],
    );
}

/// A var map holding `init` (so candle's layers pick these values up
/// instead of drawing their own, unseeded ones).
fn var_map(init: &Tensors) -> Result<VarMap> {
    let vm = VarMap::new();
    {
        let mut data = vm.data().lock().expect("var map lock");
        for (name, t) in to_candle(init)? {
            data.insert(name, candle_core::Var::from_tensor(&t).map_err(err)?);
        }
    }
    Ok(vm)
}

/// The trained variables as wafer tensors.
fn trained(vm: &VarMap) -> Result<Tensors> {
    let data = vm.data().lock().expect("var map lock");
    let m: HashMap<String, Tensor> = data
        .iter()
        .map(|(k, v)| (k.clone(), v.as_tensor().clone()))
        .collect();
    from_candle(&m)
}

/// A variable, its master weights, first and second moments.
type Moments = (Var, Vec<f32>, Vec<f32>, Vec<f32>);

/// AdamW with candle's update rule and defaults (β 0.9/0.999, ε 1e-8,
/// weight decay 0.01), fused over every variable: the moments and a master
/// copy of the weights live in plain vectors, so a step reads each
/// gradient once and writes each variable once, where candle's optimizer
/// runs a dozen tensor operations per variable. The models here are tiny
/// (1-5K parameters), so per-operation overhead, not arithmetic, is what a
/// step costs.
struct FusedAdamW {
    /// Each variable, its weights, first and second moments.
    vars: Vec<Moments>,
    params: ParamsAdamW,
    t: i32,
}

impl FusedAdamW {
    fn new(vars: Vec<Var>, lr: f64) -> Result<Self> {
        let vars = vars
            .into_iter()
            .map(|v| {
                let w = v
                    .as_tensor()
                    .flatten_all()
                    .and_then(|t| t.to_vec1::<f32>())
                    .map_err(err)?;
                let n = w.len();
                Ok((v, w, vec![0.0; n], vec![0.0; n]))
            })
            .collect::<Result<_>>()?;
        Ok(FusedAdamW {
            vars,
            params: ParamsAdamW {
                lr,
                ..Default::default()
            },
            t: 0,
        })
    }

    fn step(&mut self, grads: &GradStore) -> Result<()> {
        self.t += 1;
        let p = &self.params;
        let (b1, b2) = (p.beta1 as f32, p.beta2 as f32);
        let scale_m = (1.0 / (1.0 - p.beta1.powi(self.t))) as f32;
        let scale_v = (1.0 / (1.0 - p.beta2.powi(self.t))) as f32;
        let decay = (1.0 - p.lr * p.weight_decay) as f32;
        let (lr, eps) = (p.lr as f32, p.eps as f32);
        for (var, w, m, v) in &mut self.vars {
            let Some(g) = grads.get(var.as_tensor()) else {
                continue;
            };
            let g = g
                .flatten_all()
                .and_then(|t| t.to_vec1::<f32>())
                .map_err(err)?;
            for i in 0..w.len() {
                m[i] = m[i] * b1 + g[i] * (1.0 - b1);
                v[i] = v[i] * b2 + g[i] * g[i] * (1.0 - b2);
                let (mh, vh) = (m[i] * scale_m, v[i] * scale_v);
                w[i] = w[i] * decay - mh / (vh.sqrt() + eps) * lr;
            }
            let t = Tensor::from_slice(w, var.shape(), &Device::Cpu).map_err(err)?;
            var.set(&t).map_err(err)?;
        }
        Ok(())
    }
}

/// What a model is fitted to.
#[derive(Clone, Copy)]
enum Targets<'a> {
    /// Class labels: cross-entropy of the logits.
    Classes(&'a [u32]),
    /// Rows of `width` values: mean squared error.
    Values(&'a [f32], usize),
}

impl Targets<'_> {
    fn rows(&self) -> usize {
        match *self {
            Targets::Classes(y) => y.len(),
            Targets::Values(y, w) => y.len() / w.max(1),
        }
    }
}

/// Minimise the loss of `forward(x batch)` against `targets` with AdamW
/// over seeded shuffled batches; `x` holds one row of `shape` values per
/// target row and is reshaped to `[batch, shape...]`. Returns the last
/// epoch's mean loss; a non-finite loss is an error (diverged). Each epoch
/// gathers the shuffled data once and takes its batches as views.
fn fit(
    vm: &VarMap,
    forward: impl Fn(&Tensor) -> candle_core::Result<Tensor>,
    x: &[f32],
    shape: &[usize],
    targets: Targets,
    spec: &TrainSpec,
) -> Result<f32> {
    let n = targets.rows();
    let row: usize = shape.iter().product();
    if x.len() != n * row || n == 0 {
        return Err(bad(format!(
            "{} input values for {n} targets of {row} values",
            x.len()
        )));
    }
    let mut opt = FusedAdamW::new(vm.all_vars(), spec.lr)?;
    let mut dims = vec![n];
    dims.extend_from_slice(shape);
    let xs = Tensor::from_vec(x.to_vec(), dims, &Device::Cpu).map_err(err)?;
    let ys = match targets {
        Targets::Classes(y) => Tensor::from_vec(y.to_vec(), n, &Device::Cpu),
        Targets::Values(y, w) => Tensor::from_vec(y.to_vec(), (n, w), &Device::Cpu),
    }
    .map_err(err)?;
    let mut rng = Rng::new(spec.seed ^ 0x5eed);
    let mut order: Vec<u32> = (0..n as u32).collect();
    let mut last = f32::NAN;
    let batch = spec.batch.max(1);
    for _ in 0..spec.epochs.max(1) {
        for i in (1..n).rev() {
            order.swap(i, rng.below(i as u64 + 1) as usize);
        }
        let idx = Tensor::from_slice(&order, n, &Device::Cpu).map_err(err)?;
        let (ex, ey) = (
            xs.index_select(&idx, 0).map_err(err)?,
            ys.index_select(&idx, 0).map_err(err)?,
        );
        let (mut sum, mut steps) = (0f32, 0);
        for start in (0..n).step_by(batch) {
            spec.check()?;
            let len = batch.min(n - start);
            let (bx, by) = (
                ex.narrow(0, start, len).map_err(err)?,
                ey.narrow(0, start, len).map_err(err)?,
            );
            let loss = forward(&bx)
                .and_then(|out| match targets {
                    Targets::Classes(_) => candle_nn::loss::cross_entropy(&out, &by),
                    Targets::Values(..) => candle_nn::loss::mse(&out, &by),
                })
                .map_err(err)?;
            let l = loss.to_scalar::<f32>().map_err(err)?;
            if !l.is_finite() {
                return Err(bad(format!(
                    "loss became {l}: training diverged (lower the learning rate)"
                )));
            }
            opt.step(&loss.backward().map_err(err)?)?;
            sum += l;
            steps += 1;
        }
        last = sum / steps as f32;
    }
    Ok(last)
}

/// Train an MLP classifier of widths `sizes` on `x` (rows of `sizes[0]`
/// features) and labels `y` (< the last width) with cross-entropy and
/// AdamW; returns its tensors under `prefix` and the last epoch's mean loss.
/// A loss that turns NaN is an error (diverged training). This is the
/// native step ([`native`]); [`train_mlp_candle`] is the same training in
/// candle, 3-5x slower at DOGI's size.
pub fn train_mlp(
    prefix: &str,
    sizes: &[usize],
    x: &[f32],
    y: &[u32],
    cfg: &TrainConfig,
) -> Result<(Tensors, f32)> {
    native::train_mlp(prefix, sizes, x, y, cfg)
}

/// [`train_mlp`] through candle's autograd and layers (the reference the
/// native step is tested against).
pub fn train_mlp_candle(
    prefix: &str,
    sizes: &[usize],
    x: &[f32],
    y: &[u32],
    cfg: &TrainConfig,
) -> Result<(Tensors, f32)> {
    let vm = var_map(&init_mlp(prefix, sizes, cfg.seed))?;
    let vb = VarBuilder::from_varmap(&vm, DType::F32, &Device::Cpu);
    let layers = linears(&vb, prefix, sizes)?;
    let loss = fit(
        &vm,
        |xs| mlp_forward(&layers, xs),
        x,
        &[sizes[0]],
        Targets::Classes(y),
        cfg,
    )?;
    Ok((trained(&vm)?, loss))
}

fn linears(vb: &VarBuilder, prefix: &str, sizes: &[usize]) -> Result<Vec<candle_nn::Linear>> {
    sizes
        .windows(2)
        .enumerate()
        .map(|(i, w)| candle_nn::linear(w[0], w[1], vb.pp(format!("{prefix}.{i}"))))
        .collect::<candle_core::Result<_>>()
        .map_err(err)
}

fn mlp_forward(layers: &[candle_nn::Linear], xs: &Tensor) -> candle_core::Result<Tensor> {
    let mut h = xs.clone();
    for (i, l) in layers.iter().enumerate() {
        h = l.forward(&h)?;
        if i + 1 < layers.len() {
            h = h.relu()?;
        }
    }
    Ok(h)
}

/// Train a GRU sequence classifier: a GRU cell (`{prefix}.cell`, the
/// [`wafer_core::model::GruCell`] layout, candle's `_l0` names) run from a
/// zero state over `steps` inputs of `inputs` values (oldest first; `x`
/// holds `y.len()` such sequences), then a linear head `{prefix}.head.0` on
/// the last hidden state into `classes` logits.
#[allow(clippy::too_many_arguments)]
pub fn train_gru(
    prefix: &str,
    inputs: usize,
    hidden: usize,
    classes: usize,
    steps: usize,
    x: &[f32],
    y: &[u32],
    spec: &TrainSpec,
) -> Result<(Tensors, f32)> {
    let mut rng = Rng::new(spec.seed);
    let mut init = Tensors::default();
    let c = format!("{prefix}.cell");
    let g = 3 * hidden;
    for (name, shape) in [
        ("weight_ih_l0", vec![g, inputs]),
        ("weight_hh_l0", vec![g, hidden]),
        ("bias_ih_l0", vec![g]),
        ("bias_hh_l0", vec![g]),
    ] {
        put(&mut init, &mut rng, &format!("{c}.{name}"), &shape, hidden);
    }
    put_head(&mut init, &mut rng, prefix, hidden, classes);
    let vm = var_map(&init)?;
    let vb = VarBuilder::from_varmap(&vm, DType::F32, &Device::Cpu);
    let gru = candle_nn::rnn::gru(inputs, hidden, Default::default(), vb.pp(&c)).map_err(err)?;
    let head = linears(&vb, &format!("{prefix}.head"), &[hidden, classes])?;
    let forward = |xs: &Tensor| -> candle_core::Result<Tensor> {
        let b = xs.dim(0)?;
        let mut state = gru.zero_state(b)?;
        for t in 0..steps {
            state = gru.step(&xs.narrow(1, t, 1)?.squeeze(1)?, &state)?;
        }
        mlp_forward(&head, &state.h)
    };
    let loss = fit(&vm, forward, x, &[steps, inputs], Targets::Classes(y), spec)?;
    Ok((trained(&vm)?, loss))
}

/// Train an LSTM regressor: an LSTM cell (`{prefix}.cell`, the
/// [`wafer_core::model::LstmCell`] layout, candle's `_l0` names) run from a
/// zero state over `shape.steps` inputs of `shape.inputs` values (oldest
/// first; `x` holds one sequence per row of `y`), then a linear head
/// `{prefix}.head.0` on the last hidden state into `shape.outputs` values,
/// fitted to `y` by mean squared error with AdamW.
pub fn train_lstm(
    prefix: &str,
    shape: LstmShape,
    x: &[f32],
    y: &[f32],
    spec: &TrainSpec,
) -> Result<(Tensors, f32)> {
    let (inputs, hidden, outputs, steps) = (shape.inputs, shape.hidden, shape.outputs, shape.steps);
    let mut rng = Rng::new(spec.seed);
    let mut init = Tensors::default();
    let c = format!("{prefix}.cell");
    let g = 4 * hidden;
    for (name, dims) in [
        ("weight_ih_l0", vec![g, inputs]),
        ("weight_hh_l0", vec![g, hidden]),
        ("bias_ih_l0", vec![g]),
        ("bias_hh_l0", vec![g]),
    ] {
        put(&mut init, &mut rng, &format!("{c}.{name}"), &dims, hidden);
    }
    put_head(&mut init, &mut rng, prefix, hidden, outputs);
    let vm = var_map(&init)?;
    let vb = VarBuilder::from_varmap(&vm, DType::F32, &Device::Cpu);
    let lstm = candle_nn::rnn::lstm(inputs, hidden, Default::default(), vb.pp(&c)).map_err(err)?;
    let head = linears(&vb, &format!("{prefix}.head"), &[hidden, outputs])?;
    let forward = |xs: &Tensor| -> candle_core::Result<Tensor> {
        let b = xs.dim(0)?;
        let mut state = lstm.zero_state(b)?;
        for t in 0..steps {
            state = lstm.step(&xs.narrow(1, t, 1)?.squeeze(1)?, &state)?;
        }
        mlp_forward(&head, &state.h)
    };
    let loss = fit(
        &vm,
        forward,
        x,
        &[steps, inputs],
        Targets::Values(y, outputs),
        spec,
    )?;
    Ok((trained(&vm)?, loss))
}

/// Train a TCN sequence classifier: `levels` causal dilated conv1d levels
/// of `channels` channels and kernel `kernel` (`{prefix}.tcn`, the
/// [`wafer_core::model::Tcn`] layout) over windows of `steps` inputs of
/// `inputs` values (oldest first), then a linear head `{prefix}.head.0` on
/// the last step into `classes` logits.
#[allow(clippy::too_many_arguments)]
pub fn train_tcn(
    prefix: &str,
    inputs: usize,
    channels: usize,
    levels: usize,
    kernel: usize,
    classes: usize,
    steps: usize,
    x: &[f32],
    y: &[u32],
    spec: &TrainSpec,
) -> Result<(Tensors, f32)> {
    let mut rng = Rng::new(spec.seed);
    let mut init = Tensors::default();
    let p = format!("{prefix}.tcn");
    for l in 0..levels {
        let cin = if l == 0 { inputs } else { channels };
        let fan = cin * kernel;
        put(
            &mut init,
            &mut rng,
            &format!("{p}.{l}.weight"),
            &[channels, cin, kernel],
            fan,
        );
        put(
            &mut init,
            &mut rng,
            &format!("{p}.{l}.bias"),
            &[channels],
            fan,
        );
        if cin != channels {
            let d = format!("{p}.{l}.downsample");
            put(
                &mut init,
                &mut rng,
                &format!("{d}.weight"),
                &[channels, cin, 1],
                cin,
            );
            put(&mut init, &mut rng, &format!("{d}.bias"), &[channels], cin);
        }
    }
    put_head(&mut init, &mut rng, prefix, channels, classes);
    let vm = var_map(&init)?;
    let vb = VarBuilder::from_varmap(&vm, DType::F32, &Device::Cpu);
    let mut convs = Vec::with_capacity(levels);
    for l in 0..levels {
        let cin = if l == 0 { inputs } else { channels };
        let d = 1 << l;
        let cfg = candle_nn::Conv1dConfig {
            dilation: d,
            ..Default::default()
        };
        let conv = candle_nn::conv1d(cin, channels, kernel, cfg, vb.pp(format!("{p}.{l}")))
            .map_err(err)?;
        let down = if cin != channels {
            Some(
                candle_nn::conv1d(
                    cin,
                    channels,
                    1,
                    Default::default(),
                    vb.pp(format!("{p}.{l}.downsample")),
                )
                .map_err(err)?,
            )
        } else {
            None
        };
        convs.push((conv, down, (kernel - 1) * d));
    }
    let head = linears(&vb, &format!("{prefix}.head"), &[channels, classes])?;
    let forward = |xs: &Tensor| -> candle_core::Result<Tensor> {
        // [B, T, I] -> [B, I, T]; causal: (K-1)·d zeros on the left only
        // (padding both sides and cutting the end fails candle's backward
        // pass once the padding reaches the window's length).
        let mut h = xs.transpose(1, 2)?.contiguous()?;
        for (conv, down, pad) in &convs {
            let y = conv.forward(&h.pad_with_zeros(2, *pad, 0)?)?.relu()?;
            let res = match down {
                Some(d) => d.forward(&h)?,
                None => h.clone(),
            };
            h = (y + res)?.relu()?;
        }
        let last = h.narrow(2, steps - 1, 1)?.squeeze(2)?;
        mlp_forward(&head, &last)
    };
    let loss = fit(&vm, forward, x, &[steps, inputs], Targets::Classes(y), spec)?;
    Ok((trained(&vm)?, loss))
}

/// The trained classifier as the engine's kernel.
pub fn mlp_kernel(t: &Tensors, prefix: &str, sizes: &[usize]) -> Result<Mlp> {
    Mlp::load(t, prefix, sizes)
}
