//! The MLP classifier's training step written out in plain loops: the same
//! algorithm as the candle path ([`crate::train_mlp_candle`]: seeded initial
//! weights, seeded batch order, ReLU layers, mean softmax cross-entropy,
//! AdamW with candle's rule and defaults), for DOGI's 6-32-32-10 model.
//!
//! At 1,610 parameters and batches of 128 a candle step is ~50 tensor
//! operations, each allocating its output; the arithmetic of a whole step
//! is ~1.1 MFLOP. Here a step runs over preallocated buffers, one layer at
//! a time over the whole batch ([`project_rows`]: the layer's outputs
//! contiguous, so they vectorise, and rows side by side on AVX-512 where
//! the CPU has it), with weights kept transposed ([inputs][outputs]) for
//! that, beside an untransposed copy for the backward pass; the rest on
//! AVX2 where the CPU has it. The result agrees with
//! candle's to float rounding (`cargo test -p wafer-learn`,
//! `native_mlp_training_matches_candle`).

use wafer_core::model::train::TrainSpec;
use wafer_core::model::{project_rows, transpose_into, Tensors};
use wafer_core::rng::Rng;
use wafer_core::{Error, Result};

use crate::init_mlp;

const BETA1: f32 = 0.9;
const BETA2: f32 = 0.999;
const EPS: f32 = 1e-8;
const WEIGHT_DECAY: f64 = 0.01;

/// One layer: weights transposed ([inputs][outputs]), bias, their AdamW
/// moments and gradients.
struct Layer {
    inputs: usize,
    outputs: usize,
    /// `w[i * outputs + o]`: input i to output o.
    w: Vec<f32>,
    /// The same weights untransposed (`wt[o * inputs + i]`), refreshed
    /// after each step: the backward pass's dh = dz·W runs over its rows.
    wt: Vec<f32>,
    b: Vec<f32>,
    gw: Vec<f32>,
    gb: Vec<f32>,
    mw: Vec<f32>,
    vw: Vec<f32>,
    mb: Vec<f32>,
    vb: Vec<f32>,
}

impl Layer {
    // Inlined into the AVX2 fit, so that the square roots and divisions run
    // 8 lanes wide.
    #[inline(always)]
    fn adamw(&mut self, lr: f32, decay: f32, scale_m: f32, scale_v: f32) {
        #[inline(always)]
        fn update(w: &mut [f32], g: &[f32], m: &mut [f32], v: &mut [f32], k: [f32; 4]) {
            let [lr, decay, scale_m, scale_v] = k;
            let n = w.len();
            let (g, m, v) = (&g[..n], &mut m[..n], &mut v[..n]);
            for i in 0..n {
                m[i] = m[i] * BETA1 + g[i] * (1.0 - BETA1);
                v[i] = v[i] * BETA2 + g[i] * g[i] * (1.0 - BETA2);
                let (mh, vh) = (m[i] * scale_m, v[i] * scale_v);
                w[i] = w[i] * decay - mh / (vh.sqrt() + EPS) * lr;
            }
        }
        let k = [lr, decay, scale_m, scale_v];
        update(&mut self.w, &self.gw, &mut self.mw, &mut self.vw, k);
        update(&mut self.b, &self.gb, &mut self.mb, &mut self.vb, k);
        transpose_into(&self.w, self.inputs, self.outputs, &mut self.wt);
    }
}

/// `out[o] += a * x[o]` over the row.
#[inline(always)]
fn axpy(out: &mut [f32], a: f32, x: &[f32]) {
    for (o, &v) in out.iter_mut().zip(x) {
        *o += a * v;
    }
}

/// Train an MLP classifier of widths `sizes` on `x` (rows of `sizes[0]`
/// values) and labels `y`; returns its tensors under `prefix` (candle's
/// layout, as [`crate::train_mlp_candle`] gives them) and the last epoch's
/// mean loss. A non-finite loss is an error (diverged).
pub fn train_mlp(
    prefix: &str,
    sizes: &[usize],
    x: &[f32],
    y: &[u32],
    spec: &TrainSpec,
) -> Result<(Tensors, f32)> {
    let n = y.len();
    let bad = |reason: String| Error::Model {
        file: "training".into(),
        reason,
    };
    if sizes.len() < 2 || x.len() != n * sizes[0] || n == 0 {
        return Err(bad(format!(
            "{} input values for {n} labels of {} values",
            x.len(),
            sizes.first().copied().unwrap_or(0)
        )));
    }
    let classes = *sizes.last().expect("two widths at least");
    if let Some(&c) = y.iter().find(|&&c| c as usize >= classes) {
        return Err(bad(format!("label {c} of {classes} classes")));
    }
    let init = init_mlp(prefix, sizes, spec.seed);
    let mut layers: Vec<Layer> = sizes
        .windows(2)
        .enumerate()
        .map(|(l, s)| {
            let (inputs, outputs) = (s[0], s[1]);
            let (_, wt) = &init.tensors[&format!("{prefix}.{l}.weight")];
            let (_, bt) = &init.tensors[&format!("{prefix}.{l}.bias")];
            // candle's [outputs][inputs] to [inputs][outputs].
            let mut w = vec![0.0; inputs * outputs];
            transpose_into(wt, outputs, inputs, &mut w);
            Layer {
                inputs,
                outputs,
                w,
                wt: wt.clone(),
                b: bt.clone(),
                gw: vec![0.0; inputs * outputs],
                gb: vec![0.0; outputs],
                mw: vec![0.0; inputs * outputs],
                vw: vec![0.0; inputs * outputs],
                mb: vec![0.0; outputs],
                vb: vec![0.0; outputs],
            }
        })
        .collect();
    // The whole fit compiled a second time for AVX2 where the CPU has it
    // (8 lanes instead of 4; no fused multiply-add, so the same values).
    let last = wafer_core::model::on_avx2(
        #[inline(always)]
        || fit(&mut layers, sizes, x, y, spec),
    )?;
    let mut out = Tensors::default();
    for (l, layer) in layers.iter().enumerate() {
        out.insert(
            &format!("{prefix}.{l}.weight"),
            &[layer.outputs, layer.inputs],
            layer.wt.clone(),
        );
        out.insert(
            &format!("{prefix}.{l}.bias"),
            &[layer.outputs],
            layer.b.clone(),
        );
    }
    Ok((out, last))
}

/// The epochs of [`train_mlp`] over `layers`; the last epoch's mean loss.
#[inline(always)]
fn fit(
    layers: &mut [Layer],
    sizes: &[usize],
    x: &[f32],
    y: &[u32],
    spec: &TrainSpec,
) -> Result<f32> {
    let n = y.len();
    let classes = *sizes.last().expect("two widths at least");
    let batch = spec.batch.max(1);
    let widest = sizes.iter().copied().max().unwrap_or(0);
    // Zero biases, and one layer's inputs column by column ([width][batch]).
    let (zeros, mut hcols) = (vec![0.0; widest], vec![0.0; widest * batch]);
    // Activations per layer boundary ([batch][width]) and their gradients.
    let mut acts: Vec<Vec<f32>> = sizes.iter().map(|&s| vec![0.0; batch * s]).collect();
    let mut grads: Vec<Vec<f32>> = sizes.iter().map(|&s| vec![0.0; batch * s]).collect();
    let mut rng = Rng::new(spec.seed ^ 0x5eed);
    let mut order: Vec<u32> = (0..n as u32).collect();
    let decay = (1.0 - spec.lr * WEIGHT_DECAY) as f32;
    let lr = spec.lr as f32;
    let (mut t, mut last) = (0i32, f32::NAN);
    let depth = layers.len();
    for _ in 0..spec.epochs.max(1) {
        for i in (1..n).rev() {
            order.swap(i, rng.below(i as u64 + 1) as usize);
        }
        let (mut sum, mut steps) = (0f32, 0);
        for chunk in order.chunks(batch) {
            spec.check()?;
            let m = chunk.len();
            let w0 = sizes[0];
            for (r, &k) in chunk.iter().enumerate() {
                let k = k as usize;
                acts[0][r * w0..(r + 1) * w0].copy_from_slice(&x[k * w0..(k + 1) * w0]);
            }
            // Forward.
            for (l, layer) in layers.iter().enumerate() {
                let (lo, hi) = acts.split_at_mut(l + 1);
                let (ni, no) = (layer.inputs, layer.outputs);
                let z = &mut hi[0][..m * no];
                project_rows(&layer.w, &layer.b, ni, &lo[l][..m * ni], z);
                if l + 1 < depth {
                    // ReLU as a select (vectorises; f32::max's NaN rule
                    // kept it scalar): the same values but for the sign of
                    // a zero.
                    for v in z.iter_mut() {
                        *v = if *v > 0.0 { *v } else { 0.0 };
                    }
                }
            }
            // Softmax cross-entropy: loss and d(mean loss)/d(logits).
            let logits = &acts[depth];
            let dlog = &mut grads[depth];
            let mut loss = 0f64;
            for r in 0..m {
                let row = &logits[r * classes..(r + 1) * classes];
                let mx = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let se: f32 = row.iter().map(|&v| (v - mx).exp()).sum();
                let lse = mx + se.ln();
                let label = chunk_label(y, chunk[r]);
                loss += (lse - row[label]) as f64;
                let d = &mut dlog[r * classes..(r + 1) * classes];
                for (c, (dv, &v)) in d.iter_mut().zip(row).enumerate() {
                    let p = (v - lse).exp();
                    *dv = (p - (c == label) as u32 as f32) / m as f32;
                }
            }
            let loss = (loss / m as f64) as f32;
            if !loss.is_finite() {
                return Err(Error::Model {
                    file: "training".into(),
                    reason: format!(
                        "loss became {loss}: training diverged (lower the learning rate)"
                    ),
                });
            }
            // Backward.
            for l in (0..depth).rev() {
                let layer = &mut layers[l];
                let (ni, no) = (layer.inputs, layer.outputs);
                layer.gb.fill(0.0);
                let (glo, ghi) = grads.split_at_mut(l + 1);
                let (dh, dz) = (&mut glo[l], &ghi[0]);
                let h = &acts[l];
                for r in 0..m {
                    axpy(&mut layer.gb, 1.0, &dz[r * no..(r + 1) * no]);
                }
                // gw[i] = Σ_r h[r][i]·dz[r], summed over the batch in order:
                // a projection of the batch's dz rows by column i of h.
                let hc = &mut hcols[..ni * m];
                transpose_into(&h[..m * ni], m, ni, hc);
                project_rows(&dz[..m * no], &zeros[..no], m, hc, &mut layer.gw);
                if l > 0 {
                    // dh = dz·W, a projection by W untransposed, through the
                    // ReLU of the layer below.
                    let dh = &mut dh[..m * ni];
                    project_rows(&layer.wt, &zeros[..ni], no, &dz[..m * no], dh);
                    for (v, &hv) in dh.iter_mut().zip(&h[..m * ni]) {
                        *v = if hv > 0.0 { *v } else { 0.0 };
                    }
                }
            }
            t += 1;
            let scale_m = (1.0 / (1.0 - (BETA1 as f64).powi(t))) as f32;
            let scale_v = (1.0 / (1.0 - (BETA2 as f64).powi(t))) as f32;
            for layer in layers.iter_mut() {
                layer.adamw(lr, decay, scale_m, scale_v);
            }
            sum += loss;
            steps += 1;
        }
        last = sum / steps as f32;
    }
    Ok(last)
}

#[inline(always)]
fn chunk_label(y: &[u32], k: u32) -> usize {
    y[k as usize] as usize
}
