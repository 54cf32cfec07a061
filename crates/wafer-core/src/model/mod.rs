//! Hot-path inference for the learned policies: hand-written f32 kernels
//! over flat row-major weights (an MLP, a GRU cell, an LSTM cell and a
//! causal TCN), allocation-free per call (each model owns its scratch), and
//! weights from safetensors files ([`safetensors`]).
//!
//! Tensor names and shapes follow PyTorch's, so weights trained with
//! wafer-learn (candle) or with PyTorch load as they are:
//!
//! | model | tensors |
//! |---|---|
//! | [`Mlp`] | `{p}.{i}.weight` [out, in], `{p}.{i}.bias` [out] for layers i = 0.. (ReLU between layers) |
//! | [`GruCell`] | `{p}.weight_ih` [3H, I], `{p}.weight_hh` [3H, H], `{p}.bias_ih` [3H], `{p}.bias_hh` [3H]; gates r, z, n (`torch.nn.GRUCell`; the `_l0` names of a one-layer `torch.nn.GRU` or candle-nn also load) |
//! | [`LstmCell`] | `{p}.weight_ih` [4H, I], `{p}.weight_hh` [4H, H], `{p}.bias_ih` [4H], `{p}.bias_hh` [4H]; gates i, f, g, o (`torch.nn.LSTMCell`; `_l0` names also load) |
//! | [`Tcn`] | `{p}.{l}.weight` [C, C_in, K], `{p}.{l}.bias` [C] for levels l = 0.. with dilation 2^l, causal; level 0's residual `{p}.0.downsample.weight` [C, C_in, 1] and `.bias` when C_in ≠ C |
//!
//! `{p}` is the prefix a policy chooses (e.g. `mlp`, `gru`, `head`).

pub mod bench;
pub mod safetensors;
pub mod train;

use crate::error::Result;
pub use safetensors::Tensors;

#[inline(always)]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    // Four accumulators: the compiler vectorises this without fast-math.
    let mut acc = [0f32; 4];
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for k in 0..4 {
            acc[k] += x[k] * y[k];
        }
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for (x, y) in ra.iter().zip(rb) {
        s += x * y;
    }
    s
}

/// e^x to about 2e-7 relative error, branch-free so that loops over it
/// vectorise (the library `exp` is a call per value): e^x = 2^k · e^g with
/// k = round(x·log2 e) (by the 1.5·2^23 rounding trick) and g = x - k·ln 2
/// in [-0.35, 0.35] (ln 2 split in a high part exact in f32 and a low
/// part, so the subtraction loses nothing), where a degree-6 Taylor
/// polynomial is accurate to f32; 2^k is built in the exponent bits. |x|
/// is clamped to 87.
#[inline(always)]
pub fn exp_approx(x: f32) -> f32 {
    const ROUND: f32 = 12_582_912.0;
    let x = x.clamp(-87.0, 87.0);
    let t = x * std::f32::consts::LOG2_E + ROUND;
    let k = t - ROUND;
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    let g = (x - k * LN2_HI) - k * LN2_LO;
    let p = 1.0
        + g * (1.0
            + g * (0.5
                + g * (1.0 / 6.0 + g * (1.0 / 24.0 + g * (1.0 / 120.0 + g * (1.0 / 720.0))))));
    // t lies in [2^23, 2^24), where the ulp is 1: its bits are ROUND's
    // plus k. Integer arithmetic on them (not `k as i32`, a saturating
    // conversion that does not vectorise) gives 2^k's exponent field.
    let k_bits = t.to_bits().wrapping_sub(ROUND.to_bits());
    p * f32::from_bits(k_bits.wrapping_add(127) << 23)
}

/// The logistic function, on [`exp_approx`].
#[inline(always)]
pub fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + exp_approx(-x))
}

/// tanh(x) = 2·sigmoid(2x) - 1, on [`exp_approx`] (absolute error ~2e-7).
#[inline(always)]
pub fn tanh_approx(x: f32) -> f32 {
    2.0 / (1.0 + exp_approx(-2.0 * x)) - 1.0
}

/// A fully connected layer: y = W x + b, W row-major [out, in].
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Dense {
    /// Inputs.
    pub inputs: usize,
    /// Outputs.
    pub outputs: usize,
    /// Weights, [outputs][inputs].
    pub w: Vec<f32>,
    /// Biases.
    pub b: Vec<f32>,
    /// Wᵀ [inputs][outputs], what the kernel runs on (see [`project`]).
    t: Vec<f32>,
}

impl Dense {
    /// Load `{name}.weight` [out, in] and `{name}.bias` [out].
    pub fn load(t: &Tensors, name: &str, inputs: usize, outputs: usize) -> Result<Self> {
        let w = t.take(&format!("{name}.weight"), &[outputs, inputs])?;
        Ok(Dense {
            inputs,
            outputs,
            t: transpose(&w, outputs, inputs),
            w,
            b: t.take(&format!("{name}.bias"), &[outputs])?,
        })
    }

    /// y = W x + b. Over every input: a dense layer's inputs are features,
    /// hidden states or ReLU outputs, zero at random if at all (see
    /// [`project_dense`]). On AVX2 only, not AVX-512 ([`project_rows`]):
    /// a replay that runs 512-bit instructions now and then, one input at
    /// a time, measured slower as a whole (DOGI online 4.9 -> 4.6 M user
    /// writes/s), though the kernel alone was not.
    #[inline]
    pub fn forward(&self, x: &[f32], y: &mut [f32]) {
        project_dense(&self.t, &self.b, &x[..self.inputs], &mut y[..self.outputs]);
    }

    /// Store as `{name}.weight` / `{name}.bias`.
    pub fn store(&self, t: &mut Tensors, name: &str) {
        t.insert(
            &format!("{name}.weight"),
            &[self.outputs, self.inputs],
            self.w.clone(),
        );
        t.insert(&format!("{name}.bias"), &[self.outputs], self.b.clone());
    }
}

/// A multi-layer perceptron with ReLU between layers (none after the last).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Mlp {
    /// The layers, input first.
    pub layers: Vec<Dense>,
    a: Vec<f32>,
    b: Vec<f32>,
}

impl Mlp {
    /// An MLP from its layers.
    pub fn new(layers: Vec<Dense>) -> Self {
        let width = layers
            .iter()
            .map(|l| l.outputs.max(l.inputs))
            .max()
            .unwrap_or(0);
        Mlp {
            layers,
            a: vec![0.0; width],
            b: vec![0.0; width],
        }
    }

    /// Load layers `{prefix}.0`, `{prefix}.1`, ... of widths `sizes`
    /// (inputs, hidden..., outputs).
    pub fn load(t: &Tensors, prefix: &str, sizes: &[usize]) -> Result<Self> {
        let layers = sizes
            .windows(2)
            .enumerate()
            .map(|(i, w)| Dense::load(t, &format!("{prefix}.{i}"), w[0], w[1]))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self::new(layers))
    }

    /// Add the layers to `t` as `{prefix}.0`, `{prefix}.1`, ...
    pub fn store(&self, t: &mut Tensors, prefix: &str) {
        for (i, l) in self.layers.iter().enumerate() {
            l.store(t, &format!("{prefix}.{i}"));
        }
    }

    /// Parameters (weights and biases).
    pub fn parameters(&self) -> usize {
        self.layers.iter().map(|l| l.w.len() + l.b.len()).sum()
    }

    /// Outputs for one input (logits for a classifier).
    pub fn forward(&mut self, x: &[f32]) -> &[f32] {
        let n = self.layers.len();
        self.a[..x.len()].copy_from_slice(x);
        for (i, l) in self.layers.iter().enumerate() {
            l.forward(&self.a[..l.inputs], &mut self.b[..l.outputs]);
            if i + 1 < n {
                for v in &mut self.b[..l.outputs] {
                    *v = v.max(0.0);
                }
            }
            std::mem::swap(&mut self.a, &mut self.b);
        }
        let out = self.layers.last().map_or(0, |l| l.outputs);
        &self.a[..out]
    }

    /// Index of the largest output for one input (the predicted class).
    pub fn classify(&mut self, x: &[f32]) -> usize {
        argmax(self.forward(x))
    }
}

/// Index of the largest value (the first on ties; 0 for an empty slice).
pub fn argmax(v: &[f32]) -> usize {
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if x > v[best] {
            best = i;
        }
    }
    best
}

/// Input-to-hidden and hidden-to-hidden weights of a recurrent cell with
/// `g` gates: [g·H, I], [g·H, H] and their biases. The kernels use
/// transposed copies: y += column_k · x_k runs over g·H contiguous outputs
/// and vectorises, where a dot product per row of 16-32 values does not.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct Gates {
    inputs: usize,
    hidden: usize,
    w_ih: Vec<f32>,
    w_hh: Vec<f32>,
    b_ih: Vec<f32>,
    b_hh: Vec<f32>,
    /// W_ihᵀ [I][g·H] and W_hhᵀ [H][g·H].
    t_ih: Vec<f32>,
    t_hh: Vec<f32>,
    /// W_ih·x + b_ih and W_hh·h + b_hh of the current step.
    gi: Vec<f32>,
    gh: Vec<f32>,
}

/// The [rows][cols] matrix `w` as [cols][rows].
pub fn transpose(w: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut t = vec![0.0; w.len()];
    transpose_into(w, rows, cols, &mut t);
    t
}

/// [`transpose`] into `out` (`out[c * rows + r] = w[r * cols + c]`).
#[inline]
pub fn transpose_into(w: &[f32], rows: usize, cols: usize, out: &mut [f32]) {
    for r in 0..rows {
        for c in 0..cols {
            out[c * rows + r] = w[r * cols + c];
        }
    }
}

/// y = b + Wᵀᵀ·x with W given transposed ([len(x)][len(y)]); zero inputs
/// (many, in hex-digit or one-hot encodings) are skipped; also the forward
/// pass of wafer-learn's GRU training. Where the CPU has
/// AVX2 (checked once, at run time: the build targets baseline x86-64),
/// [`avx2::project`] does the same sums in the same order, 8 outputs per
/// instruction, with y held in registers over all of x: the results are
/// bit-identical (no fused multiply-add) and a model predicts the same on
/// every machine.
#[inline(always)]
pub fn project(t: &[f32], b: &[f32], x: &[f32], y: &mut [f32]) {
    project_by::<true>(t, b, x, y);
}

/// [`project`] over every input, zeros included: for inputs whose zeros
/// fall at random (ReLU activations and their gradients in training),
/// where a branch per input mispredicts half the time. The values are
/// those of [`project`] (adding w·0 changes at most the sign of a zero).
#[inline(always)]
pub fn project_dense(t: &[f32], b: &[f32], x: &[f32], y: &mut [f32]) {
    project_by::<false>(t, b, x, y);
}

/// [`project_dense`] of many inputs: row r of `x` (`inputs` values each)
/// into row r of `y` (`b.len()` values each), every row by the same sums
/// in the same order as one [`project_dense`], so the same values to the
/// bit. One row's sums are one chain of dependent adds per register of
/// outputs, which waits on each add's latency; where the CPU has AVX-512,
/// [`avx512::project_rows`] runs up to eight rows beside each other on
/// the same weight loads, 16 outputs per instruction, and keeps both
/// vector units busy instead: a training batch's passes, on the training
/// thread (the replay's own kernels stay on AVX2, see [`Dense::forward`]).
pub fn project_rows(t: &[f32], b: &[f32], inputs: usize, x: &[f32], y: &mut [f32]) {
    let outputs = b.len();
    assert!(inputs > 0 && outputs > 0 && y.len().is_multiple_of(outputs));
    let rows = y.len() / outputs;
    assert!(x.len() >= rows * inputs && t.len() >= inputs * outputs);
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: AVX-512F is present; the lengths were checked above.
        #[allow(unsafe_code)]
        unsafe {
            avx512::project_rows(t, b, inputs, x, y, rows)
        };
        return;
    }
    for (xr, yr) in x.chunks_exact(inputs).zip(y.chunks_exact_mut(outputs)) {
        project_dense(t, b, xr, yr);
    }
}

#[inline(always)]
fn project_by<const SKIP: bool>(t: &[f32], b: &[f32], x: &[f32], y: &mut [f32]) {
    assert!(b.len() == y.len() && t.len() >= x.len() * y.len());
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 is present; the lengths were checked above.
        #[allow(unsafe_code)]
        unsafe {
            avx2::project::<SKIP>(t, b, x, y)
        };
        return;
    }
    project_lanes::<SKIP>(t, b, x, y);
}

/// `f()`, compiled a second time for AVX2 and run that way where the CPU
/// has it (checked at run time: the build targets baseline x86-64, and the
/// check is one load of a cached flag). Loops in `f` and in what it
/// inlines (`#[inline(always)]` helpers) then vectorise 8 lanes wide
/// instead of 4; mark the closure `#[inline(always)]` too, or LLVM may
/// keep a large one out of line, compiled for the baseline only. Rust
/// never fuses a multiply and an add, so both versions compute the same
/// values.
#[inline(always)]
pub fn on_avx2<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 is present.
        #[allow(unsafe_code)]
        return unsafe { avx2::run(f) };
    }
    f()
}

/// [`project`] one output at a time (the portable kernel).
#[inline(always)]
fn project_lanes<const SKIP: bool>(t: &[f32], b: &[f32], x: &[f32], y: &mut [f32]) {
    let n = y.len();
    y.copy_from_slice(b);
    for (k, &xk) in x.iter().enumerate() {
        if SKIP && xk == 0.0 {
            continue;
        }
        let col = &t[k * n..(k + 1) * n];
        for (yo, &w) in y.iter_mut().zip(col) {
            *yo += w * xk;
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx2 {
    use std::arch::x86_64::*;

    /// [`super::project`] on AVX2: outputs in blocks of up to 12 registers
    /// of 8 (a GRU's 3·32 gates are one block), each block accumulated
    /// over all inputs before it is stored.
    ///
    /// # Safety
    /// The CPU has AVX2; `b.len() == y.len()`, `t.len() >= x.len() * y.len()`.
    #[target_feature(enable = "avx2")]
    pub unsafe fn project<const SKIP: bool>(t: &[f32], b: &[f32], x: &[f32], y: &mut [f32]) {
        let n = y.len();
        let mut o = 0;
        while n - o >= 96 {
            block::<12, SKIP>(t, b, x, y, o);
            o += 96;
        }
        while n - o >= 32 {
            block::<4, SKIP>(t, b, x, y, o);
            o += 32;
        }
        while n - o >= 8 {
            block::<1, SKIP>(t, b, x, y, o);
            o += 8;
        }
        if o < n {
            tail::<SKIP>(t, b, x, y, o);
        }
    }

    /// Outputs `o..n` (fewer than 8) with masked loads and stores, which
    /// neither read nor write past the lanes they cover: the 2 and 10
    /// outputs of the classifier heads cost one register, not a loop over
    /// the inputs per output.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn tail<const SKIP: bool>(t: &[f32], b: &[f32], x: &[f32], y: &mut [f32], o: usize) {
        let n = y.len();
        let lane = |i: i32| if (i as usize) < n - o { -1 } else { 0 };
        let mask = _mm256_setr_epi32(
            lane(0),
            lane(1),
            lane(2),
            lane(3),
            lane(4),
            lane(5),
            lane(6),
            lane(7),
        );
        let mut acc = _mm256_maskload_ps(b.as_ptr().add(o), mask);
        for (k, &xk) in x.iter().enumerate() {
            if SKIP && xk == 0.0 {
                continue;
            }
            let w = _mm256_maskload_ps(t.as_ptr().add(k * n + o), mask);
            acc = _mm256_add_ps(acc, _mm256_mul_ps(w, _mm256_set1_ps(xk)));
        }
        _mm256_maskstore_ps(y.as_mut_ptr().add(o), mask, acc);
    }

    /// `f()` compiled with AVX2 (`f` and what it inlines).
    ///
    /// # Safety
    /// The CPU has AVX2.
    #[target_feature(enable = "avx2")]
    pub unsafe fn run<R>(f: impl FnOnce() -> R) -> R {
        f()
    }

    /// Outputs `o..o + 8·B`.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn block<const B: usize, const SKIP: bool>(
        t: &[f32],
        b: &[f32],
        x: &[f32],
        y: &mut [f32],
        o: usize,
    ) {
        let n = y.len();
        let mut acc = [_mm256_setzero_ps(); B];
        for (i, a) in acc.iter_mut().enumerate() {
            *a = _mm256_loadu_ps(b.as_ptr().add(o + 8 * i));
        }
        for (k, &xk) in x.iter().enumerate() {
            if SKIP && xk == 0.0 {
                continue;
            }
            let xv = _mm256_set1_ps(xk);
            let col = t.as_ptr().add(k * n + o);
            for (i, a) in acc.iter_mut().enumerate() {
                *a = _mm256_add_ps(*a, _mm256_mul_ps(_mm256_loadu_ps(col.add(8 * i)), xv));
            }
        }
        for (i, a) in acc.iter().enumerate() {
            _mm256_storeu_ps(y.as_mut_ptr().add(o + 8 * i), *a);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx512 {
    use std::arch::x86_64::*;

    /// [`super::project_rows`] on AVX-512: eight rows at a time (then four,
    /// then one), outputs in blocks of 32 and 16 with a masked last block.
    ///
    /// # Safety
    /// The CPU has AVX-512F; `b` is not empty, `y.len() == rows * b.len()`,
    /// `x.len() >= rows * inputs`, `t.len() >= inputs * b.len()`.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn project_rows(
        t: &[f32],
        b: &[f32],
        inputs: usize,
        x: &[f32],
        y: &mut [f32],
        rows: usize,
    ) {
        let mut r = 0;
        while rows - r >= 8 {
            outputs::<8>(t, b, inputs, x, y, r);
            r += 8;
        }
        while rows - r >= 4 {
            outputs::<4>(t, b, inputs, x, y, r);
            r += 4;
        }
        while r < rows {
            outputs::<1>(t, b, inputs, x, y, r);
            r += 1;
        }
    }

    /// Rows `r..r + R`, all outputs.
    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn outputs<const R: usize>(
        t: &[f32],
        b: &[f32],
        inputs: usize,
        x: &[f32],
        y: &mut [f32],
        r: usize,
    ) {
        const ALL: __mmask16 = 0xffff;
        let n = b.len();
        let mut o = 0;
        while n - o >= 32 {
            block::<R, 2>(t, b, inputs, x, y, r, o, ALL);
            o += 32;
        }
        if n - o >= 16 {
            block::<R, 1>(t, b, inputs, x, y, r, o, ALL);
            o += 16;
        }
        if o < n {
            block::<R, 1>(t, b, inputs, x, y, r, o, (1u16 << (n - o)) - 1);
        }
    }

    /// Rows `r..r + R`, outputs `o..o + 16·B`, the last register's lanes
    /// limited to `last` (masked loads and stores touch no other lane).
    #[target_feature(enable = "avx512f")]
    #[inline]
    #[allow(clippy::too_many_arguments)]
    unsafe fn block<const R: usize, const B: usize>(
        t: &[f32],
        b: &[f32],
        inputs: usize,
        x: &[f32],
        y: &mut [f32],
        r: usize,
        o: usize,
        last: __mmask16,
    ) {
        let n = b.len();
        let mask = |j: usize| if j + 1 == B { last } else { 0xffff };
        let mut acc = [[_mm512_setzero_ps(); B]; R];
        for j in 0..B {
            let bj = _mm512_maskz_loadu_ps(mask(j), b.as_ptr().add(o + 16 * j));
            for a in acc.iter_mut() {
                a[j] = bj;
            }
        }
        let xs = x.as_ptr().add(r * inputs);
        for k in 0..inputs {
            let mut col = [_mm512_setzero_ps(); B];
            for (j, c) in col.iter_mut().enumerate() {
                *c = _mm512_maskz_loadu_ps(mask(j), t.as_ptr().add(k * n + o + 16 * j));
            }
            for (i, a) in acc.iter_mut().enumerate() {
                let xv = _mm512_set1_ps(*xs.add(i * inputs + k));
                for j in 0..B {
                    a[j] = _mm512_add_ps(a[j], _mm512_mul_ps(col[j], xv));
                }
            }
        }
        for (i, a) in acc.iter().enumerate() {
            for (j, v) in a.iter().enumerate() {
                _mm512_mask_storeu_ps(y.as_mut_ptr().add((r + i) * n + o + 16 * j), mask(j), *v);
            }
        }
    }
}

impl Gates {
    /// Cell names (`weight_ih`), or layer-0 names of a one-layer
    /// `torch.nn.GRU`/`LSTM` or candle-nn (`weight_ih_l0`).
    fn load(t: &Tensors, p: &str, g: usize, inputs: usize, hidden: usize) -> Result<Self> {
        let name = |n: &str| {
            let cell = format!("{p}.{n}");
            if t.shape(&cell).is_none() && t.shape(&format!("{cell}_l0")).is_some() {
                format!("{cell}_l0")
            } else {
                cell
            }
        };
        let w_ih = t.take(&name("weight_ih"), &[g * hidden, inputs])?;
        let w_hh = t.take(&name("weight_hh"), &[g * hidden, hidden])?;
        Ok(Gates {
            inputs,
            hidden,
            t_ih: transpose(&w_ih, g * hidden, inputs),
            t_hh: transpose(&w_hh, g * hidden, hidden),
            w_ih,
            w_hh,
            b_ih: t.take(&name("bias_ih"), &[g * hidden])?,
            b_hh: t.take(&name("bias_hh"), &[g * hidden])?,
            gi: vec![0.0; g * hidden],
            gh: vec![0.0; g * hidden],
        })
    }

    fn store(&self, t: &mut Tensors, p: &str) {
        let (i, h, g) = (self.inputs, self.hidden, self.b_ih.len() / self.hidden);
        t.insert(&format!("{p}.weight_ih"), &[g * h, i], self.w_ih.clone());
        t.insert(&format!("{p}.weight_hh"), &[g * h, h], self.w_hh.clone());
        t.insert(&format!("{p}.bias_ih"), &[g * h], self.b_ih.clone());
        t.insert(&format!("{p}.bias_hh"), &[g * h], self.b_hh.clone());
    }

    /// Fill `gi` and `gh` for input `x` and state `h`.
    #[inline]
    fn project(&mut self, x: &[f32], h: &[f32]) {
        project(&self.t_ih, &self.b_ih, x, &mut self.gi);
        project(&self.t_hh, &self.b_hh, h, &mut self.gh);
    }
}

/// A GRU cell (`torch.nn.GRUCell`): one step per input. Policies keep a
/// hidden state per LBA and step it on each write of that LBA.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct GruCell {
    g: Gates,
}

impl GruCell {
    /// Load `{prefix}.weight_ih` etc. for `inputs` inputs and `hidden` units.
    pub fn load(t: &Tensors, prefix: &str, inputs: usize, hidden: usize) -> Result<Self> {
        Ok(GruCell {
            g: Gates::load(t, prefix, 3, inputs, hidden)?,
        })
    }

    /// Store under `prefix`.
    pub fn store(&self, t: &mut Tensors, prefix: &str) {
        self.g.store(t, prefix);
    }

    /// Hidden units.
    pub fn hidden(&self) -> usize {
        self.g.hidden
    }

    /// h ← GRU(x, h). Compiled for AVX2 too and chosen at run time, as
    /// [`project`] is: the gates then run 8 units per instruction, with the
    /// same results.
    pub fn step(&mut self, x: &[f32], h: &mut [f32]) {
        on_avx2(
            #[inline(always)]
            || self.step_lanes(x, h),
        );
    }

    #[inline(always)]
    fn step_lanes(&mut self, x: &[f32], h: &mut [f32]) {
        let hd = self.g.hidden;
        self.g.project(x, h);
        let (gi, gh) = (&self.g.gi, &self.g.gh);
        let (ir, iz, inn) = (&gi[..hd], &gi[hd..2 * hd], &gi[2 * hd..3 * hd]);
        let (hr, hz, hn) = (&gh[..hd], &gh[hd..2 * hd], &gh[2 * hd..3 * hd]);
        for (j, hj) in h[..hd].iter_mut().enumerate() {
            let r = sigmoid(ir[j] + hr[j]);
            let z = sigmoid(iz[j] + hz[j]);
            let n = tanh_approx(inn[j] + r * hn[j]);
            *hj = (1.0 - z) * n + z * *hj;
        }
    }
}

/// An LSTM cell (`torch.nn.LSTMCell`).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct LstmCell {
    g: Gates,
}

impl LstmCell {
    /// Load `{prefix}.weight_ih` etc. for `inputs` inputs and `hidden` units.
    pub fn load(t: &Tensors, prefix: &str, inputs: usize, hidden: usize) -> Result<Self> {
        Ok(LstmCell {
            g: Gates::load(t, prefix, 4, inputs, hidden)?,
        })
    }

    /// Store under `prefix`.
    pub fn store(&self, t: &mut Tensors, prefix: &str) {
        self.g.store(t, prefix);
    }

    /// (h, c) ← LSTM(x, (h, c)); on AVX2 where the CPU has it, as
    /// [`GruCell::step`].
    pub fn step(&mut self, x: &[f32], h: &mut [f32], c: &mut [f32]) {
        on_avx2(
            #[inline(always)]
            || self.step_lanes(x, h, c),
        );
    }

    #[inline(always)]
    fn step_lanes(&mut self, x: &[f32], h: &mut [f32], c: &mut [f32]) {
        let hd = self.g.hidden;
        self.g.project(x, h);
        let (gi, gh) = (&self.g.gi, &self.g.gh);
        let gate = |k: usize, j: usize| gi[k * hd + j] + gh[k * hd + j];
        for (j, (hj, cj)) in h.iter_mut().zip(c.iter_mut()).enumerate().take(hd) {
            let i = sigmoid(gate(0, j));
            let f = sigmoid(gate(1, j));
            let g = tanh_approx(gate(2, j));
            let o = sigmoid(gate(3, j));
            *cj = f * *cj + i * g;
            *hj = o * tanh_approx(*cj);
        }
    }
}

/// One level of a causal TCN: conv1d (kernel K, dilation d) + ReLU, plus a
/// residual (identity, or a 1×1 conv when the channel count changes), ReLU.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct TcnLevel {
    cin: usize,
    cout: usize,
    dilation: usize,
    /// [cout][cin][k].
    w: Vec<f32>,
    b: Vec<f32>,
    down: Option<(Vec<f32>, Vec<f32>)>,
}

/// A causal temporal convolutional network over a window of T steps; the
/// output is the last step's channels (feed them to an [`Mlp`] head).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Tcn {
    kernel: usize,
    levels: Vec<TcnLevel>,
    /// Activations [T][C] of the current and next level.
    a: Vec<f32>,
    b: Vec<f32>,
}

impl Tcn {
    /// Load levels `{prefix}.0..levels` with `channels` channels each, kernel
    /// `kernel`, from `inputs` input channels.
    pub fn load(
        t: &Tensors,
        prefix: &str,
        inputs: usize,
        channels: usize,
        levels: usize,
        kernel: usize,
    ) -> Result<Self> {
        let mut v = Vec::with_capacity(levels);
        for l in 0..levels {
            let cin = if l == 0 { inputs } else { channels };
            let p = format!("{prefix}.{l}");
            let down = if cin != channels {
                Some((
                    t.take(&format!("{p}.downsample.weight"), &[channels, cin, 1])?,
                    t.take(&format!("{p}.downsample.bias"), &[channels])?,
                ))
            } else {
                None
            };
            v.push(TcnLevel {
                cin,
                cout: channels,
                dilation: 1 << l,
                w: t.take(&format!("{p}.weight"), &[channels, cin, kernel])?,
                b: t.take(&format!("{p}.bias"), &[channels])?,
                down,
            });
        }
        Ok(Tcn {
            kernel,
            levels: v,
            a: Vec::new(),
            b: Vec::new(),
        })
    }

    /// Store under `prefix`.
    pub fn store(&self, t: &mut Tensors, prefix: &str) {
        for (l, v) in self.levels.iter().enumerate() {
            let p = format!("{prefix}.{l}");
            t.insert(
                &format!("{p}.weight"),
                &[v.cout, v.cin, self.kernel],
                v.w.clone(),
            );
            t.insert(&format!("{p}.bias"), &[v.cout], v.b.clone());
            if let Some((w, b)) = &v.down {
                t.insert(
                    &format!("{p}.downsample.weight"),
                    &[v.cout, v.cin, 1],
                    w.clone(),
                );
                t.insert(&format!("{p}.downsample.bias"), &[v.cout], b.clone());
            }
        }
    }

    /// Receptive field [steps]: 1 + (K-1)·(2^levels - 1).
    pub fn receptive_field(&self) -> usize {
        1 + (self.kernel - 1) * ((1 << self.levels.len()) - 1)
    }

    /// Run over `x`, T steps of `inputs` channels ([T][C_in], oldest first);
    /// returns the last step's output channels.
    pub fn forward(&mut self, x: &[f32], steps: usize) -> &[f32] {
        let cmax = self
            .levels
            .iter()
            .map(|l| l.cout.max(l.cin))
            .max()
            .unwrap_or(0);
        self.a.resize(steps * cmax, 0.0);
        self.b.resize(steps * cmax, 0.0);
        let cin0 = self.levels.first().map_or(0, |l| l.cin);
        for t in 0..steps {
            self.a[t * cmax..t * cmax + cin0].copy_from_slice(&x[t * cin0..(t + 1) * cin0]);
        }
        let k = self.kernel;
        for lv in &self.levels {
            for t in 0..steps {
                for o in 0..lv.cout {
                    let mut s = lv.b[o];
                    for j in 0..k {
                        // weight tap j sees x[t - (K-1-j)·d] (zero before the window)
                        let back = (k - 1 - j) * lv.dilation;
                        if back > t {
                            continue;
                        }
                        let xt = &self.a[(t - back) * cmax..(t - back) * cmax + lv.cin];
                        let w = &lv.w[o * lv.cin * k..(o + 1) * lv.cin * k];
                        for (i, &xi) in xt.iter().enumerate() {
                            s += w[i * k + j] * xi;
                        }
                    }
                    let h = s.max(0.0);
                    let res = match &lv.down {
                        Some((w, b)) => {
                            b[o] + dot(
                                &w[o * lv.cin..(o + 1) * lv.cin],
                                &self.a[t * cmax..t * cmax + lv.cin],
                            )
                        }
                        None => self.a[t * cmax + o],
                    };
                    self.b[t * cmax + o] = (h + res).max(0.0);
                }
            }
            std::mem::swap(&mut self.a, &mut self.b);
        }
        let c = self.levels.last().map_or(0, |l| l.cout);
        let last = steps.saturating_sub(1) * cmax;
        &self.a[last..last + c]
    }

    /// Incremental inference over an unbounded stream: feed one step of
    /// `inputs` channels, get that step's output. Each level keeps a ring of
    /// the last (K-1)·d + 1 inputs it saw, so a step costs one column of
    /// every level instead of the whole window. The stream starts from zeros,
    /// (zero activations before the first step), and it agrees with
    /// [`Tcn::forward`] over a window of at least the receptive field once
    /// that window holds only real steps.
    pub fn step<'a>(&self, st: &'a mut TcnStream, x: &[f32]) -> &'a [f32] {
        let k = self.kernel;
        if st.rings.is_empty() {
            st.rings = self
                .levels
                .iter()
                .map(|l| vec![0.0; ((k - 1) * l.dilation + 1) * l.cin])
                .collect();
            let cmax = self
                .levels
                .iter()
                .map(|l| l.cout.max(l.cin))
                .max()
                .unwrap_or(0);
            st.cur = vec![0.0; cmax];
            st.next = vec![0.0; cmax];
        }
        let t = st.steps;
        st.steps += 1;
        st.cur[..x.len()].copy_from_slice(x);
        for (lv, ring) in self.levels.iter().zip(st.rings.iter_mut()) {
            let span = (k - 1) * lv.dilation + 1;
            let slot = |back: usize| ((t + span - back) % span) * lv.cin;
            let at = slot(0);
            ring[at..at + lv.cin].copy_from_slice(&st.cur[..lv.cin]);
            for o in 0..lv.cout {
                let mut s = lv.b[o];
                for j in 0..k {
                    let r = slot((k - 1 - j) * lv.dilation);
                    let w = &lv.w[o * lv.cin * k..(o + 1) * lv.cin * k];
                    for (i, &xi) in ring[r..r + lv.cin].iter().enumerate() {
                        s += w[i * k + j] * xi;
                    }
                }
                let h = s.max(0.0);
                let res = match &lv.down {
                    Some((w, b)) => b[o] + dot(&w[o * lv.cin..(o + 1) * lv.cin], &st.cur[..lv.cin]),
                    None => st.cur[o],
                };
                st.next[o] = (h + res).max(0.0);
            }
            std::mem::swap(&mut st.cur, &mut st.next);
        }
        let c = self.levels.last().map_or(0, |l| l.cout);
        &st.cur[..c]
    }
}

/// The state of one stream fed to [`Tcn::step`].
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct TcnStream {
    rings: Vec<Vec<f32>>,
    cur: Vec<f32>,
    next: Vec<f32>,
    steps: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t_with(entries: &[(&str, &[usize], Vec<f32>)]) -> Tensors {
        let mut t = Tensors::default();
        for (n, s, v) in entries {
            t.insert(n, s, v.clone());
        }
        t
    }

    #[test]
    fn project_kernels_agree_to_the_bit() {
        // The AVX2 kernel (when this CPU has it) against the portable one,
        // over widths that use every block size and a scalar tail, with
        // zero inputs (skipped by both).
        let mut rng = crate::rng::Rng::new(3);
        for n in [1, 7, 8, 12, 32, 40, 96, 100, 128, 131, 200] {
            for inputs in [1, 5, 24, 56] {
                let mut r = |len: usize| {
                    (0..len)
                        .map(|_| rng.next_f64() as f32 * 2.0 - 1.0)
                        .collect::<Vec<_>>()
                };
                let (t, b) = (r(n * inputs), r(n));
                let mut x = r(inputs);
                for v in x.iter_mut().step_by(3) {
                    *v = 0.0;
                }
                let (mut fast, mut lanes) = (vec![9.0; n], vec![9.0; n]);
                project(&t, &b, &x, &mut fast);
                project_lanes::<true>(&t, &b, &x, &mut lanes);
                let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&fast), bits(&lanes), "{n} outputs, {inputs} inputs");
                // Without the skip: the same values, the kernels to the bit.
                let (mut dense, mut dense_lanes) = (vec![9.0; n], vec![9.0; n]);
                project_dense(&t, &b, &x, &mut dense);
                project_lanes::<false>(&t, &b, &x, &mut dense_lanes);
                assert_eq!(
                    bits(&dense),
                    bits(&dense_lanes),
                    "dense: {n} outputs, {inputs} inputs"
                );
                assert_eq!(
                    dense, fast,
                    "dense against skipping: {n} outputs, {inputs} inputs"
                );
                // And the sums are the plain ones.
                for o in 0..n {
                    let want =
                        (0..inputs).fold(b[o] as f64, |s, k| s + (t[k * n + o] * x[k]) as f64);
                    assert!((lanes[o] as f64 - want).abs() < 1e-4);
                }
            }
        }
    }

    #[test]
    fn projecting_rows_together_equals_one_at_a_time_to_the_bit() {
        // Row counts that use every row block (8, 4, 1) and output counts
        // that use every output block (32, 16, masked) of the AVX-512
        // kernel, when this CPU has it; the portable path otherwise.
        let mut rng = crate::rng::Rng::new(5);
        for rows in [1, 3, 4, 8, 13, 128] {
            for outputs in [1, 10, 16, 32, 33, 50, 96] {
                for inputs in [1, 6, 32, 128] {
                    let mut r = |len: usize| {
                        (0..len)
                            .map(|_| rng.next_f64() as f32 * 2.0 - 1.0)
                            .collect::<Vec<_>>()
                    };
                    let (t, b, x) = (r(inputs * outputs), r(outputs), r(rows * inputs));
                    let mut together = vec![9.0; rows * outputs];
                    project_rows(&t, &b, inputs, &x, &mut together);
                    for i in 0..rows {
                        let mut alone = vec![9.0; outputs];
                        project_dense(&t, &b, &x[i * inputs..(i + 1) * inputs], &mut alone);
                        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                        assert_eq!(
                            bits(&together[i * outputs..(i + 1) * outputs]),
                            bits(&alone),
                            "row {i} of {rows}, {outputs} outputs, {inputs} inputs"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn tcn_steps_equal_the_window() {
        let mut rng = crate::rng::Rng::new(8);
        let mut r = |n: usize| {
            (0..n)
                .map(|_| rng.next_f64() as f32 - 0.5)
                .collect::<Vec<_>>()
        };
        let (cin, c, k, levels) = (4, 6, 3, 3);
        let mut t = Tensors::default();
        for l in 0..levels {
            let i = if l == 0 { cin } else { c };
            t.insert(&format!("n.{l}.weight"), &[c, i, k], r(c * i * k));
            t.insert(&format!("n.{l}.bias"), &[c], r(c));
        }
        t.insert("n.0.downsample.weight", &[c, cin, 1], r(c * cin));
        t.insert("n.0.downsample.bias", &[c], r(c));
        let mut tcn = Tcn::load(&t, "n", cin, c, levels, k).unwrap();
        let window = tcn.receptive_field();
        let xs = r(40 * cin);
        let mut st = TcnStream::default();
        let mut win = vec![0f32; window * cin];
        for s in 0..40 {
            let x = &xs[s * cin..(s + 1) * cin];
            let inc = tcn.step(&mut st, x).to_vec();
            win.copy_within(cin.., 0);
            win[(window - 1) * cin..].copy_from_slice(x);
            let full = tcn.forward(&win, window).to_vec();
            if s + 1 < window {
                // The window still holds zero inputs where the stream has
                // nothing (zero activations): they agree once it is full.
                continue;
            }
            for (a, b) in inc.iter().zip(&full) {
                assert!((a - b).abs() < 1e-5, "step {s}: {inc:?} vs {full:?}");
            }
        }
    }

    #[test]
    fn mlp_by_hand() {
        // 2 -> 2 (ReLU) -> 1
        let t = t_with(&[
            ("m.0.weight", &[2, 2], vec![1.0, -1.0, 0.5, 0.5]),
            ("m.0.bias", &[2], vec![0.0, 1.0]),
            ("m.1.weight", &[1, 2], vec![2.0, 3.0]),
            ("m.1.bias", &[1], vec![-1.0]),
        ]);
        let mut m = Mlp::load(&t, "m", &[2, 2, 1]).unwrap();
        assert_eq!(m.parameters(), 9);
        // x = (1, 3): layer0 = (-2 -> relu 0, 3); out = 0*2 + 3*3 - 1 = 8
        assert_eq!(m.forward(&[1.0, 3.0]), &[8.0]);
        let e = Mlp::load(&t, "m", &[3, 2, 1]).unwrap_err().to_string();
        assert!(e.contains("m.0.weight") && e.contains("[2, 3]"), "{e}");
        assert_eq!(argmax(&[0.1, 0.7, 0.7, -1.0]), 1);
    }

    #[test]
    fn fast_exp_sigmoid_and_tanh_are_accurate() {
        let mut worst = (0f32, 0f32, 0f32);
        let mut x = -30.0f32;
        while x < 30.0 {
            let e = (exp_approx(x) as f64 - (x as f64).exp()).abs() / (x as f64).exp();
            let s = (sigmoid(x) as f64 - 1.0 / (1.0 + (-x as f64).exp())).abs();
            let t = (tanh_approx(x) as f64 - (x as f64).tanh()).abs();
            worst = (
                worst.0.max(e as f32),
                worst.1.max(s as f32),
                worst.2.max(t as f32),
            );
            x += 0.001;
        }
        assert!(
            worst.0 < 5e-7 && worst.1 < 3e-7 && worst.2 < 5e-7,
            "{worst:?}"
        );
        assert_eq!(sigmoid(-200.0), 1.0 / (1.0 + exp_approx(87.0)));
        assert!(sigmoid(200.0) == 1.0 && tanh_approx(200.0) == 1.0 && tanh_approx(-200.0) == -1.0);
    }

    #[test]
    fn gru_with_zero_weights_halves_toward_tanh_of_bias() {
        // All weights 0, bias_ih n-gate 1: r = z = 0.5, n = tanh(1);
        // h' = 0.5·tanh(1) + 0.5·h.
        let h = 2;
        let mut bih = vec![0.0; 3 * h];
        bih[2 * h] = 1.0;
        bih[2 * h + 1] = 1.0;
        let t = t_with(&[
            ("g.weight_ih", &[3 * h, 1], vec![0.0; 3 * h]),
            ("g.weight_hh", &[3 * h, h], vec![0.0; 3 * h * h]),
            ("g.bias_ih", &[3 * h], bih),
            ("g.bias_hh", &[3 * h], vec![0.0; 3 * h]),
        ]);
        let mut g = GruCell::load(&t, "g", 1, h).unwrap();
        let mut s = vec![0.4, -0.2];
        g.step(&[5.0], &mut s);
        let n = 1f32.tanh();
        assert!((s[0] - (0.5 * n + 0.2)).abs() < 1e-6);
        assert!((s[1] - (0.5 * n - 0.1)).abs() < 1e-6);
    }

    #[test]
    fn lstm_forget_gate_keeps_the_cell() {
        // i = g = 0 contribution (i gate bias -inf-ish), f = sigmoid(big) ~ 1, o = 0.5.
        let h = 1;
        let t = t_with(&[
            ("l.weight_ih", &[4, 1], vec![0.0; 4]),
            ("l.weight_hh", &[4, 1], vec![0.0; 4]),
            ("l.bias_ih", &[4], vec![-30.0, 30.0, 0.0, 0.0]),
            ("l.bias_hh", &[4], vec![0.0; 4]),
        ]);
        let mut l = LstmCell::load(&t, "l", 1, h).unwrap();
        let (mut hs, mut c) = (vec![0.0], vec![0.8]);
        l.step(&[1.0], &mut hs, &mut c);
        assert!((c[0] - 0.8).abs() < 1e-6);
        assert!((hs[0] - 0.5 * 0.8f32.tanh()).abs() < 1e-6);
    }

    #[test]
    fn tcn_is_causal_with_the_stated_receptive_field() {
        // 1 channel, kernel 2, 2 levels: weights 1 on both taps, no bias:
        // level 0: y_t = x_t + x_{t-1} (+ residual x_t), level 1 with dilation 2.
        let t = t_with(&[
            ("c.0.weight", &[1, 1, 2], vec![1.0, 1.0]),
            ("c.0.bias", &[1], vec![0.0]),
            ("c.1.weight", &[1, 1, 2], vec![1.0, 1.0]),
            ("c.1.bias", &[1], vec![0.0]),
        ]);
        let mut c = Tcn::load(&t, "c", 1, 1, 2, 2).unwrap();
        assert_eq!(c.receptive_field(), 4);
        let x = [1.0, 2.0, 3.0, 4.0, 5.0];
        // level 0: l0_t = relu(x_t + x_{t-1}) + x_t -> [2, 5, 8, 11, 14]
        // level 1: l1_t = relu(l0_t + l0_{t-2}) + l0_t -> last: 14 + 8 + 14 = 36
        assert_eq!(c.forward(&x, 5), &[36.0]);
        // Changing a step outside the receptive field changes nothing.
        let y = [100.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(c.forward(&y, 5), &[36.0]);
        let mut t2 = Tensors::default();
        c.store(&mut t2, "c");
        assert_eq!(t2.shape("c.1.weight"), Some(&[1, 1, 2][..]));
    }
}
