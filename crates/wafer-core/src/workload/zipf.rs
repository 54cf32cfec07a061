//! `zipf:THETA`: rank r in 1..=n drawn with probability proportional to
//! r^-θ, by rejection-inversion (Hörmann & Derflinger, "Rejection-inversion to
//! generate variates from monotone discrete distributions", ACM TOMACS 1996):
//! O(1) expected time, no O(n) table, valid for every θ >= 0 including θ = 1
//! (where Gray et al.'s YCSB method breaks down).
//!
//! With `scramble` (default) ranks are spread over the region by a bijection
//! of [0, n): the affine map r -> (a r + b) mod 2^k (a odd, 2^k >= n), applied
//! again while the result is >= n (cycle-walking). Hot blocks are then not all
//! adjacent while the distribution over blocks stays exactly Zipf; a mask
//! replaces the division a `mod n` would need.

use super::AddressPattern;
use crate::rng::Rng;

/// Zipf(θ) over ranks 1..=n.
#[derive(Clone, Debug)]
pub struct ZipfSampler {
    n: f64,
    one_minus_theta: f64,
    theta: f64,
    h_x1: f64,
    h_n: f64,
    s: f64,
}

/// (e^x - 1) / x, accurate near 0.
fn expm1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

/// ln(1 + x) / x, accurate near 0. Away from 0, `ln(1 + x)` loses at most
/// eps/|x| < 1e-12 relative precision and is several times faster than `ln_1p`.
#[inline(always)]
fn ln1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-3 {
        (1.0 + x).ln() / x
    } else if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

impl ZipfSampler {
    /// Sampler over ranks 1..=n with exponent `theta` >= 0.
    pub fn new(n: u64, theta: f64) -> Self {
        let mut z = ZipfSampler {
            n: n as f64,
            one_minus_theta: 1.0 - theta,
            theta,
            h_x1: 0.0,
            h_n: 0.0,
            s: 0.0,
        };
        z.h_x1 = z.h_integral(1.5) - 1.0;
        z.h_n = z.h_integral(n as f64 + 0.5);
        z.s = 2.0 - z.h_integral_inverse(z.h_integral(2.5) - z.h(2.0));
        z
    }

    /// H(x) = ∫ t^-θ dt, shifted so that it is continuous in θ.
    #[inline(always)]
    fn h_integral(&self, x: f64) -> f64 {
        let ln_x = x.ln();
        expm1_over_x(self.one_minus_theta * ln_x) * ln_x
    }

    #[inline(always)]
    fn h(&self, x: f64) -> f64 {
        (-self.theta * x.ln()).exp()
    }

    #[inline(always)]
    fn h_integral_inverse(&self, x: f64) -> f64 {
        let t = (x * self.one_minus_theta).max(-1.0);
        (ln1p_over_x(t) * x).exp()
    }

    /// A rank in 1..=n.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_n + rng.next_f64() * (self.h_x1 - self.h_n);
            let x = self.h_integral_inverse(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.s || u >= self.h_integral(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }
}

/// A bijection of [0, n): affine map modulo 2^k, cycle-walked into [0, n).
#[derive(Clone, Copy, Debug)]
struct Scramble {
    a: u64,
    b: u64,
    mask: u64,
    n: u64,
}

impl Scramble {
    fn new(n: u64, rng: &mut Rng) -> Self {
        let mask = n.max(1).next_power_of_two() - 1;
        Scramble {
            a: rng.next_u64() | 1,
            b: rng.next_u64(),
            mask,
            n,
        }
    }

    #[inline(always)]
    fn apply(&self, r: u64) -> u64 {
        let mut x = r;
        loop {
            x = self.a.wrapping_mul(x).wrapping_add(self.b) & self.mask;
            if x < self.n {
                return x;
            }
        }
    }
}

/// Zipf-distributed start blocks.
pub(crate) struct Zipf {
    sampler: ZipfSampler,
    perm: Option<Scramble>,
}

impl Zipf {
    pub(crate) fn new(len: u64, theta: f64, scramble: bool, rng: &mut Rng) -> Self {
        let perm = scramble.then(|| Scramble::new(len, rng));
        Zipf {
            sampler: ZipfSampler::new(len, theta),
            perm,
        }
    }
}

impl AddressPattern for Zipf {
    #[inline(always)]
    fn start(&mut self, rng: &mut Rng, len: u64, size: u64, _written: u64) -> u64 {
        let r = self.sampler.sample(rng) - 1;
        let b = match &self.perm {
            Some(p) => p.apply(r),
            None => r,
        };
        b.min(len - size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(n: u64, theta: f64) {
        let z = ZipfSampler::new(n, theta);
        let mut rng = Rng::new(9);
        let draws = 400_000;
        let mut counts = vec![0u64; n as usize + 1];
        for _ in 0..draws {
            let k = z.sample(&mut rng);
            assert!((1..=n).contains(&k));
            counts[k as usize] += 1;
        }
        let norm: f64 = (1..=n).map(|k| (k as f64).powf(-theta)).sum();
        for k in [1u64, 2, 3, 10, n / 2, n]
            .into_iter()
            .filter(|&k| (1..=n).contains(&k))
        {
            let p = (k as f64).powf(-theta) / norm;
            let got = counts[k as usize] as f64 / draws as f64;
            let sd = (p * (1.0 - p) / draws as f64).sqrt();
            assert!(
                (got - p).abs() < 5.0 * sd + 1e-6,
                "n={n} θ={theta} k={k}: {got} vs {p}"
            );
        }
    }

    #[test]
    fn matches_the_zipf_pmf() {
        for theta in [0.0, 0.5, 0.8, 0.99, 1.0, 1.2, 2.0] {
            check(1000, theta);
        }
        check(7, 1.0);
        check(1, 1.0);
    }

    #[test]
    fn scrambling_is_a_bijection() {
        let mut rng = Rng::new(3);
        for len in [1u64, 2, 10, 1000, 1 << 12, 999_983] {
            let z = Zipf::new(len, 1.0, true, &mut rng);
            let p = z.perm.unwrap();
            let mut seen = vec![false; len as usize];
            for r in 0..len {
                let x = p.apply(r) as usize;
                assert!(!seen[x]);
                seen[x] = true;
            }
        }
    }
}
