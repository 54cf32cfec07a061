//! Training of a GRU sequence classifier on sequences of different lengths
//! (Shiro's page classifier, §III-B and §V-E), by hand-written
//! backpropagation through time and Adam, without candle.
//!
//! Why not candle: the classifier is tiny (one GRU layer of 32 units over
//! 24 inputs, a 2-way head) and its sequences are short (at most 20 steps)
//! and of every length, so candle spends its time building the graph of
//! each step (about 0.4 ms per sequence of 20 steps); these loops, over
//! the 3·H gate outputs in contiguous rows, take a few microseconds. The
//! formulas are `torch.nn.GRUCell`'s, so the weights run unchanged in
//! [`wafer_core::model::GruCell`]; `tests/gru_seq.rs` checks the gradients
//! against candle's autograd.
//!
//! Layout: weights are kept transposed ([input][3H] and [hidden][3H]) so
//! the forward projections ([`wafer_core::model::project`], the inference
//! kernel) and the weight gradients are sums of contiguous rows; dh =
//! W_hhᵀ·dg sums the rows of an untransposed copy of W_hh.

use wafer_core::model::train::{FitOutcome, GruFit, SeqShape, Sequences, TrainSpec};
use wafer_core::model::{
    on_avx2, project, sigmoid, tanh_approx, transpose, transpose_into, Tensors,
};
use wafer_core::rng::Rng;
use wafer_core::{Error, Result};

fn bad(reason: String) -> Error {
    Error::Model {
        file: "training".into(),
        reason,
    }
}

/// The parameters (or their gradients, or Adam's moments), flat: W_ihᵀ
/// [I][3H], W_hhᵀ [H][3H], b_ih [3H], b_hh [3H], W_out [C][H], b_out [C].
#[derive(Clone, Debug)]
struct Flat {
    v: Vec<f32>,
}

/// Offsets of the parts of a [`Flat`].
#[derive(Clone, Copy, Debug)]
struct Layout {
    i: usize,
    h: usize,
    c: usize,
}

impl Layout {
    fn g(&self) -> usize {
        3 * self.h
    }
    fn ih(&self) -> usize {
        0
    }
    fn hh(&self) -> usize {
        self.i * self.g()
    }
    fn b_ih(&self) -> usize {
        self.hh() + self.h * self.g()
    }
    fn b_hh(&self) -> usize {
        self.b_ih() + self.g()
    }
    fn out(&self) -> usize {
        self.b_hh() + self.g()
    }
    fn b_out(&self) -> usize {
        self.out() + self.c * self.h
    }
    fn len(&self) -> usize {
        self.b_out() + self.c
    }
}

/// A tensor of `t` by its cell name or the `_l0` name of a one-layer GRU.
fn cell_tensor(t: &Tensors, prefix: &str, name: &str, shape: &[usize]) -> Result<Vec<f32>> {
    let cell = format!("{prefix}.cell.{name}");
    let l0 = format!("{cell}_l0");
    if t.shape(&cell).is_none() && t.shape(&l0).is_some() {
        t.take(&l0, shape)
    } else {
        t.take(&cell, shape)
    }
}

impl Flat {
    fn zeros(l: &Layout) -> Self {
        Flat {
            v: vec![0.0; l.len()],
        }
    }

    fn from_tensors(t: &Tensors, prefix: &str, l: &Layout) -> Result<Self> {
        let g = l.g();
        let mut f = Flat::zeros(l);
        let w_ih = cell_tensor(t, prefix, "weight_ih", &[g, l.i])?;
        let w_hh = cell_tensor(t, prefix, "weight_hh", &[g, l.h])?;
        let (lo, hh, bi, bh, out, bo) = (l.ih(), l.hh(), l.b_ih(), l.b_hh(), l.out(), l.b_out());
        f.v[lo..hh].copy_from_slice(&transpose(&w_ih, g, l.i));
        f.v[hh..bi].copy_from_slice(&transpose(&w_hh, g, l.h));
        f.v[bi..bh].copy_from_slice(&cell_tensor(t, prefix, "bias_ih", &[g])?);
        f.v[bh..out].copy_from_slice(&cell_tensor(t, prefix, "bias_hh", &[g])?);
        f.v[out..bo].copy_from_slice(&t.take(&format!("{prefix}.head.0.weight"), &[l.c, l.h])?);
        f.v[bo..].copy_from_slice(&t.take(&format!("{prefix}.head.0.bias"), &[l.c])?);
        Ok(f)
    }

    fn to_tensors(&self, prefix: &str, l: &Layout) -> Tensors {
        let g = l.g();
        let mut t = Tensors::default();
        let c = format!("{prefix}.cell");
        t.insert(
            &format!("{c}.weight_ih"),
            &[g, l.i],
            transpose(&self.v[l.ih()..l.hh()], l.i, g),
        );
        t.insert(
            &format!("{c}.weight_hh"),
            &[g, l.h],
            transpose(&self.v[l.hh()..l.b_ih()], l.h, g),
        );
        t.insert(
            &format!("{c}.bias_ih"),
            &[g],
            self.v[l.b_ih()..l.b_hh()].to_vec(),
        );
        t.insert(
            &format!("{c}.bias_hh"),
            &[g],
            self.v[l.b_hh()..l.out()].to_vec(),
        );
        t.insert(
            &format!("{prefix}.head.0.weight"),
            &[l.c, l.h],
            self.v[l.out()..l.b_out()].to_vec(),
        );
        t.insert(
            &format!("{prefix}.head.0.bias"),
            &[l.c],
            self.v[l.b_out()..].to_vec(),
        );
        t
    }
}

/// Seeded initial weights, drawn in `train_gru`'s order and ranges
/// (uniform ±1/√H for the cell, ±1/√H for the head, head bias zero).
fn seeded(prefix: &str, l: &Layout, seed: u64) -> Tensors {
    let mut rng = Rng::new(seed);
    let mut t = Tensors::default();
    let c = format!("{prefix}.cell");
    let g = l.g();
    for (name, shape) in [
        ("weight_ih", vec![g, l.i]),
        ("weight_hh", vec![g, l.h]),
        ("bias_ih", vec![g]),
        ("bias_hh", vec![g]),
    ] {
        crate::put(&mut t, &mut rng, &format!("{c}.{name}"), &shape, l.h);
    }
    crate::put_head(&mut t, &mut rng, prefix, l.h, l.c);
    t
}

/// Per-step values kept for the backward pass, and the work rows.
struct Scratch {
    /// Per step: h_prev, r, z, n, W_hn·h + b_hn [5][H].
    steps: Vec<f32>,
    gi: Vec<f32>,
    gh: Vec<f32>,
    h: Vec<f32>,
    dh: Vec<f32>,
    dgi: Vec<f32>,
    dgh: Vec<f32>,
    logits: Vec<f32>,
    /// W_hh [3H][H] (untransposed) for dh, and dh's sum over it.
    w_hh: Vec<f32>,
    dhh: Vec<f32>,
}

impl Scratch {
    /// Take W_hh from `p` (after each update).
    fn refresh(&mut self, p: &Flat, l: &Layout) {
        transpose_into(&p.v[l.hh()..l.b_ih()], l.h, l.g(), &mut self.w_hh);
    }

    fn new(l: &Layout, max_len: usize) -> Self {
        Scratch {
            steps: vec![0.0; max_len * 5 * l.h],
            gi: vec![0.0; l.g()],
            gh: vec![0.0; l.g()],
            h: vec![0.0; l.h],
            dh: vec![0.0; l.h],
            dgi: vec![0.0; l.g()],
            dgh: vec![0.0; l.g()],
            logits: vec![0.0; l.c],
            w_hh: vec![0.0; l.g() * l.h],
            dhh: vec![0.0; l.h],
        }
    }
}

/// rows[k] += x_k · d for every k (the gradient of [`project`]'s weights).
#[inline(always)]
fn accumulate(rows: &mut [f32], x: &[f32], d: &[f32]) {
    let n = d.len();
    for (k, &xk) in x.iter().enumerate() {
        if xk == 0.0 {
            continue;
        }
        for (r, &dv) in rows[k * n..(k + 1) * n].iter_mut().zip(d) {
            *r += xk * dv;
        }
    }
}

/// Forward and backward pass of one sequence (`len` steps of `x`) with
/// label `y`: adds the gradients to `grad`, returns the loss. Inlined into
/// [`on_avx2`]'s closures, so that its loops run 8 lanes wide.
#[inline(always)]
fn sequence(
    p: &Flat,
    l: &Layout,
    x: &[f32],
    len: usize,
    y: usize,
    s: &mut Scratch,
    grad: &mut Flat,
) -> f32 {
    let (h, g, i) = (l.h, l.g(), l.i);
    let w_ih = &p.v[l.ih()..l.hh()];
    let w_hh = &p.v[l.hh()..l.b_ih()];
    let (b_ih, b_hh) = (&p.v[l.b_ih()..l.b_hh()], &p.v[l.b_hh()..l.out()]);
    s.h.fill(0.0);
    for t in 0..len {
        project(w_ih, b_ih, &x[t * i..(t + 1) * i], &mut s.gi);
        project(w_hh, b_hh, &s.h, &mut s.gh);
        let st = &mut s.steps[t * 5 * h..(t + 1) * 5 * h];
        let (hp, rest) = st.split_at_mut(h);
        let (rs, rest) = rest.split_at_mut(h);
        let (zs, rest) = rest.split_at_mut(h);
        let (ns, ghn) = rest.split_at_mut(h);
        hp.copy_from_slice(&s.h);
        // Slices of length h, so that the loop has no bounds checks and
        // vectorises.
        let (ir, iz, inn) = (&s.gi[..h], &s.gi[h..2 * h], &s.gi[2 * h..3 * h]);
        let (hr, hz, hn) = (&s.gh[..h], &s.gh[h..2 * h], &s.gh[2 * h..3 * h]);
        let (rs, zs, ns, ghn, hs) = (
            &mut rs[..h],
            &mut zs[..h],
            &mut ns[..h],
            &mut ghn[..h],
            &mut s.h[..h],
        );
        for j in 0..h {
            let r = sigmoid(ir[j] + hr[j]);
            let z = sigmoid(iz[j] + hz[j]);
            let n = tanh_approx(inn[j] + r * hn[j]);
            rs[j] = r;
            zs[j] = z;
            ns[j] = n;
            ghn[j] = hn[j];
            hs[j] = (1.0 - z) * n + z * hs[j];
        }
    }
    // Head and softmax cross-entropy.
    let (w_out, b_out) = (&p.v[l.out()..l.b_out()], &p.v[l.b_out()..]);
    for c in 0..l.c {
        s.logits[c] = b_out[c]
            + w_out[c * h..(c + 1) * h]
                .iter()
                .zip(&s.h)
                .map(|(w, v)| w * v)
                .sum::<f32>();
    }
    let m = s.logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let z: f32 = s.logits.iter().map(|v| (v - m).exp()).sum();
    let loss = z.ln() + m - s.logits[y];
    s.dh.fill(0.0);
    let (go, gbo) = (l.out(), l.b_out());
    for c in 0..l.c {
        let d = (s.logits[c] - m).exp() / z - (c == y) as u32 as f32;
        grad.v[gbo + c] += d;
        for j in 0..h {
            grad.v[go + c * h + j] += d * s.h[j];
            s.dh[j] += d * w_out[c * h + j];
        }
    }
    // Back through the steps.
    for t in (0..len).rev() {
        let st = &s.steps[t * 5 * h..(t + 1) * 5 * h];
        let (hp, rs, zs, ns, ghn) = (
            &st[..h],
            &st[h..2 * h],
            &st[2 * h..3 * h],
            &st[3 * h..4 * h],
            &st[4 * h..],
        );
        {
            let (ir, rest) = s.dgi.split_at_mut(h);
            let (iz, inn) = rest.split_at_mut(h);
            let (hr, rest) = s.dgh.split_at_mut(h);
            let (hz, hn) = rest.split_at_mut(h);
            let (iz, inn, hr, hz, hn) = (
                &mut iz[..h],
                &mut inn[..h],
                &mut hr[..h],
                &mut hz[..h],
                &mut hn[..h],
            );
            let dhs = &mut s.dh[..h];
            for j in 0..h {
                let (r, z, n, dh) = (rs[j], zs[j], ns[j], dhs[j]);
                let dan = dh * (1.0 - z) * (1.0 - n * n);
                let dar = dan * ghn[j] * r * (1.0 - r);
                let daz = dh * (hp[j] - n) * z * (1.0 - z);
                ir[j] = dar;
                iz[j] = daz;
                inn[j] = dan;
                hr[j] = dar;
                hz[j] = daz;
                hn[j] = dan * r;
                dhs[j] = dh * z;
            }
        }
        let (gl, gr) = grad.v.split_at_mut(l.hh());
        accumulate(gl, &x[t * i..(t + 1) * i], &s.dgi);
        accumulate(&mut gr[..h * g], hp, &s.dgh);
        let (bi, bh) = (l.b_ih(), l.b_hh());
        let (gbi, gbh) = grad.v[bi..bh + g].split_at_mut(g);
        for (a, &d) in gbi.iter_mut().zip(&s.dgi) {
            *a += d;
        }
        for (a, &d) in gbh.iter_mut().zip(&s.dgh) {
            *a += d;
        }
        // dh += W_hhᵀ·dgh, over the rows of W_hh (the units are the
        // contiguous, vectorised dimension; a dot product per unit would be
        // a chain of dependent adds).
        s.dhh.fill(-0.0);
        for (k, &dv) in s.dgh.iter().enumerate() {
            let row = &s.w_hh[k * h..(k + 1) * h];
            for (a, &w) in s.dhh.iter_mut().zip(row) {
                *a += w * dv;
            }
        }
        for (d, &a) in s.dh.iter_mut().zip(&s.dhh) {
            *d += a;
        }
    }
    loss
}

/// Loss (mean over the sequences) and its gradients for `t`'s weights, in
/// the tensors' own layout and names (for tests against autograd).
pub fn loss_and_grads(
    t: &Tensors,
    prefix: &str,
    shape: SeqShape,
    data: &Sequences,
) -> Result<(f32, Tensors)> {
    let l = Layout {
        i: shape.inputs,
        h: shape.width,
        c: shape.classes,
    };
    check(&l, data)?;
    let p = Flat::from_tensors(t, prefix, &l)?;
    let mut grad = Flat::zeros(&l);
    let mut s = Scratch::new(&l, max_len(data));
    s.refresh(&p, &l);
    let n = data.y.len();
    let mut loss = 0.0;
    for k in 0..n {
        let (a, b) = (data.starts[k] as usize, data.starts[k + 1] as usize);
        loss += sequence(
            &p,
            &l,
            &data.x[a * l.i..b * l.i],
            b - a,
            data.y[k] as usize,
            &mut s,
            &mut grad,
        );
    }
    for v in &mut grad.v {
        *v /= n as f32;
    }
    Ok((loss / n as f32, grad.to_tensors(prefix, &l)))
}

fn max_len(data: &Sequences) -> usize {
    data.starts
        .windows(2)
        .map(|w| (w[1] - w[0]) as usize)
        .max()
        .unwrap_or(0)
}

fn check(l: &Layout, data: &Sequences) -> Result<()> {
    let n = data.y.len();
    if n == 0 || data.starts.len() != n + 1 || data.starts[0] != 0 {
        return Err(bad(format!(
            "{n} labels need {} sequence offsets starting at 0, got {}",
            n + 1,
            data.starts.len()
        )));
    }
    if data.starts.windows(2).any(|w| w[1] <= w[0]) {
        return Err(bad("every sequence needs at least one step".into()));
    }
    let steps = data.starts[n] as usize;
    if data.x.len() != steps * l.i {
        return Err(bad(format!(
            "{} input values for {steps} steps of {} values",
            data.x.len(),
            l.i
        )));
    }
    if let Some(&y) = data.y.iter().find(|&&y| y as usize >= l.c) {
        return Err(bad(format!("label {y} for {} classes", l.c)));
    }
    Ok(())
}

/// Adam (Kingma & Ba) with the usual constants.
struct Adam {
    lr: f32,
    m: Flat,
    v: Flat,
    t: i32,
}

impl Adam {
    const B1: f32 = 0.9;
    const B2: f32 = 0.999;
    const EPS: f32 = 1e-8;

    #[inline(always)]
    fn step(&mut self, p: &mut Flat, grad: &Flat, scale: f32) {
        self.t += 1;
        let c1 = 1.0 - Self::B1.powi(self.t);
        let c2 = 1.0 - Self::B2.powi(self.t);
        for (((w, &g), m), v) in
            p.v.iter_mut()
                .zip(&grad.v)
                .zip(&mut self.m.v)
                .zip(&mut self.v.v)
        {
            let g = g * scale;
            *m = Self::B1 * *m + (1.0 - Self::B1) * g;
            *v = Self::B2 * *v + (1.0 - Self::B2) * g * g;
            *w -= self.lr * (*m / c1) / ((*v / c2).sqrt() + Self::EPS);
        }
    }
}

/// Train as [`wafer_core::model::train::Trainer::train_gru_seqs`] says:
/// minibatches of `spec.batch` sequences in a seeded order, Adam at
/// `spec.lr`, `spec.epochs` epochs or fewer when `fit.converge` stops it.
pub fn train(
    prefix: &str,
    shape: SeqShape,
    data: &Sequences,
    spec: &TrainSpec,
    fit: &GruFit,
) -> Result<FitOutcome> {
    let l = Layout {
        i: shape.inputs,
        h: shape.width,
        c: shape.classes,
    };
    check(&l, data)?;
    let mut p = match fit.init {
        Some(t) => Flat::from_tensors(t, prefix, &l)?,
        None => Flat::from_tensors(&seeded(prefix, &l, spec.seed), prefix, &l)?,
    };
    let n = data.y.len();
    let mut s = Scratch::new(&l, max_len(data));
    let mut grad = Flat::zeros(&l);
    let mut adam = Adam {
        lr: spec.lr as f32,
        m: Flat::zeros(&l),
        v: Flat::zeros(&l),
        t: 0,
    };
    let mut rng = Rng::new(spec.seed ^ 0x5eed);
    let mut order: Vec<u32> = (0..n as u32).collect();
    let (mut last, mut best, mut stale, mut epochs) = (f32::NAN, f32::INFINITY, 0, 0);
    for _ in 0..spec.epochs.max(1) {
        for k in (1..n).rev() {
            order.swap(k, rng.below(k as u64 + 1) as usize);
        }
        let mut sum = 0.0f64;
        for chunk in order.chunks(spec.batch.max(1)) {
            spec.check()?;
            grad.v.fill(0.0);
            s.refresh(&p, &l);
            for &k in chunk {
                let k = k as usize;
                let (a, b) = (data.starts[k] as usize, data.starts[k + 1] as usize);
                let x = &data.x[a * l.i..b * l.i];
                let y = data.y[k] as usize;
                sum += on_avx2(
                    #[inline(always)]
                    || sequence(&p, &l, x, b - a, y, &mut s, &mut grad),
                ) as f64;
            }
            on_avx2(
                #[inline(always)]
                || adam.step(&mut p, &grad, 1.0 / chunk.len() as f32),
            );
        }
        epochs += 1;
        last = (sum / n as f64) as f32;
        if !last.is_finite() {
            return Err(bad(format!(
                "loss became {last}: training diverged (lower the learning rate)"
            )));
        }
        if let Some(c) = fit.converge {
            if best - last < c.min_delta {
                stale += 1;
                if stale >= c.patience && epochs >= c.min_epochs {
                    break;
                }
            } else {
                stale = 0;
            }
            best = best.min(last);
        }
    }
    Ok(FitOutcome {
        tensors: p.to_tensors(prefix, &l),
        loss: last,
        epochs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn avx2_and_portable_passes_agree_to_the_bit() {
        // Training runs `sequence` through `on_avx2`; the gradient test
        // against candle runs it compiled for baseline x86-64. Same values.
        let l = Layout { i: 24, h: 32, c: 2 };
        let p = Flat::from_tensors(&seeded("p", &l, 5), "p", &l).unwrap();
        let mut rng = Rng::new(9);
        let len = 20;
        let x: Vec<f32> = (0..len * l.i)
            .map(|k| {
                if k % 5 == 0 {
                    0.0
                } else {
                    rng.next_f64() as f32
                }
            })
            .collect();
        let run = |avx: bool| {
            let mut s = Scratch::new(&l, len);
            s.refresh(&p, &l);
            let mut grad = Flat::zeros(&l);
            let loss = if avx {
                on_avx2(
                    #[inline(always)]
                    || sequence(&p, &l, &x, len, 1, &mut s, &mut grad),
                )
            } else {
                sequence(&p, &l, &x, len, 1, &mut s, &mut grad)
            };
            let mut bits: Vec<u32> = grad.v.iter().map(|v| v.to_bits()).collect();
            bits.push(loss.to_bits());
            bits
        };
        assert_eq!(run(true), run(false));
    }
}
