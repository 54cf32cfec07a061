//! The classification threshold T (Shiro §III-B, Algorithm 1, Fig. 3).
//!
//! At the end of each write window, on that window's lifetime samples:
//! * the first time, T is the inflection point of the lifetime CDF: the
//!   sorted sample L_i farthest from the line through (L_1, 1) and
//!   (L_N, N);
//! * later, p is the percentile of the previous T among the samples; the
//!   values at percentiles p - step, p and p + step are tried, in that
//!   order, each by training a class-balanced logistic regression on the
//!   samples' features labelled by it; the most accurate wins (strict >,
//!   so ties keep the earlier). Then the step adapts: no adjustment in this
//!   window and the previous one → step + 1; adjusted before, not now →
//!   step - 1; adjusted both times in opposite directions → step - 1; in
//!   the same direction → step + 1; step = min(|step|, 10).
//!
//! Choices where the paper is silent (module doc of `shiro`):
//! "adjusted" means the winner differs from the value at p (its sign is
//! the direction); percentiles are clamped to [0, 100]; the value at
//! percentile q is the sorted sample at index round(q/100·(N-1)); the
//! percentile of a value is the share of samples below it; the window
//! after the first counts its predecessor as not adjusted; when no
//! candidate gets an accuracy above 0 (a class is empty), T stays; the
//! light model is a logistic regression on the 24 encoded digits of the
//! sample's write, trained by SGD (3 epochs, rate 0.1), on at most
//! `per_class` samples of each class, 80% to train and 20% to score; a
//! candidate leaving fewer than [`LIGHT_MIN`] samples in a class scores 0
//! (its accuracy would be noise: a few test samples).

use serde::Serialize;

use super::features::INPUTS;

/// Fewest samples of each class a candidate threshold needs to be scored.
pub const LIGHT_MIN: usize = 50;
use crate::rng::Rng;

/// Index of the inflection point of the sorted `lifetimes` (non-empty):
/// the point (L_i, i) farthest from the line through the first and last.
pub fn inflection_index(sorted: &[u64]) -> usize {
    let n = sorted.len();
    let (l1, ln) = (sorted[0] as f64, sorted[n - 1] as f64);
    let (dx, dy) = (ln - l1, (n - 1) as f64);
    let mut best = (0usize, -1.0f64);
    for (i, &l) in sorted.iter().enumerate() {
        // |cross((dx, dy), (l - l1, i))| is the distance times the line's length.
        let d = (dx * i as f64 - dy * (l as f64 - l1)).abs();
        if d > best.1 {
            best = (i, d);
        }
    }
    best.0
}

/// Percentile [0, 100] of `v` among `sorted`: the share of samples below it.
pub fn percentile_of_value(sorted: &[u64], v: u64) -> f64 {
    100.0 * sorted.partition_point(|&l| l < v) as f64 / sorted.len() as f64
}

/// The sample at percentile `q` (clamped to [0, 100]) of `sorted`.
pub fn value_at_percentile(sorted: &[u64], q: f64) -> u64 {
    let q = q.clamp(0.0, 100.0);
    sorted[((q / 100.0) * (sorted.len() - 1) as f64).round() as usize]
}

/// One tried threshold and the light model's accuracy with it.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, serde::Deserialize)]
pub struct Candidate {
    /// Threshold [pages].
    pub threshold: u64,
    /// Held-out accuracy of the logistic regression.
    pub accuracy: f64,
}

/// What one window's pick did.
#[derive(Clone, Debug, Serialize, PartialEq, serde::Deserialize)]
pub struct Pick {
    /// The threshold chosen [pages].
    pub threshold: u64,
    /// How: `inflection` (first window), `candidates`, or `kept`.
    #[serde(with = "crate::codec::static_str")]
    pub how: crate::codec::Name,
    /// The three candidates (p - step, p, p + step), when tried.
    pub candidates: Vec<Candidate>,
    /// The step after this window [percentile points].
    pub step: u32,
}

/// Algorithm 1's state across windows.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Threshold {
    step: i32,
    max_step: i32,
    /// Direction of the previous window's adjustment (None: not adjusted).
    prev: Option<i8>,
    /// The current threshold, once there is one.
    pub current: Option<u64>,
    per_class: usize,
    seed: u64,
    picks: u64,
}

impl Threshold {
    /// Step starting at `step` and capped at `max_step` [percentile
    /// points]; the light models train on at most `per_class` samples per class.
    pub fn new(step: u32, max_step: u32, per_class: usize, seed: u64) -> Self {
        Threshold {
            step: step as i32,
            max_step: max_step as i32,
            prev: None,
            current: None,
            per_class: per_class.max(1),
            seed,
            picks: 0,
        }
    }

    /// The step now [percentile points].
    pub fn step(&self) -> u32 {
        self.step as u32
    }

    /// Algorithm 1 on a window's `lifetimes` and the encoded features of
    /// the writes they belong to; `None` with no sample.
    pub fn pick(&mut self, lifetimes: &[u64], features: &[[u8; INPUTS]]) -> Option<Pick> {
        if lifetimes.is_empty() {
            return None;
        }
        self.picks += 1;
        let mut sorted = lifetimes.to_vec();
        sorted.sort_unstable();
        let Some(prev) = self.current else {
            let t = sorted[inflection_index(&sorted)];
            self.current = Some(t);
            return Some(Pick {
                threshold: t,
                how: "inflection",
                candidates: Vec::new(),
                step: self.step(),
            });
        };
        let p = percentile_of_value(&sorted, prev);
        let mut rng = Rng::new(self.seed ^ self.picks.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let candidates: Vec<Candidate> = [-1.0, 0.0, 1.0]
            .iter()
            .map(|dir| {
                let t = value_at_percentile(&sorted, p + dir * self.step as f64);
                Candidate {
                    threshold: t,
                    accuracy: light_model_accuracy(
                        lifetimes,
                        features,
                        t,
                        self.per_class,
                        &mut rng,
                    ),
                }
            })
            .collect();
        let (mut max_acc, mut max_t) = (0.0, None);
        for c in &candidates {
            if c.accuracy > max_acc {
                (max_acc, max_t) = (c.accuracy, Some(c.threshold));
            }
        }
        let Some(t) = max_t else {
            return Some(Pick {
                threshold: prev,
                how: "kept",
                candidates,
                step: self.step(),
            });
        };
        let at_p = value_at_percentile(&sorted, p);
        let now = (t != at_p).then_some(if t > at_p { 1i8 } else { -1 });
        self.step += match (self.prev, now) {
            (None, None) => 1,
            (Some(_), None) => -1,
            (Some(a), Some(b)) if a != b => -1,
            (Some(_), Some(_)) => 1,
            (None, Some(_)) => 0,
        };
        self.step = self.step.abs().min(self.max_step);
        self.prev = now;
        self.current = Some(t);
        Some(Pick {
            threshold: t,
            how: "candidates",
            candidates,
            step: self.step(),
        })
    }
}

/// Algorithm 1's LabelAndResample + TrainEvalLightModel: label each sample
/// short (lifetime < `t`) or long, take at most `per_class` of each class
/// (as many of both), train a logistic regression on 80% and return its
/// accuracy on the other 20% (0 when a class is empty).
pub fn light_model_accuracy(
    lifetimes: &[u64],
    features: &[[u8; INPUTS]],
    t: u64,
    per_class: usize,
    rng: &mut Rng,
) -> f64 {
    let mut short: Vec<u32> = Vec::new();
    let mut long: Vec<u32> = Vec::new();
    for (i, &l) in lifetimes.iter().enumerate() {
        if l < t {
            short.push(i as u32);
        } else {
            long.push(i as u32);
        }
    }
    let n = short.len().min(long.len()).min(per_class);
    if n < LIGHT_MIN.min(per_class).max(2) {
        return 0.0;
    }
    for class in [&mut short, &mut long] {
        // A seeded sample of n of the class, in random order.
        for k in 0..n {
            let j = k + rng.below((class.len() - k) as u64) as usize;
            class.swap(k, j);
        }
        class.truncate(n);
    }
    let train_n = (n * 4).div_ceil(5).min(n - 1);
    let mut train: Vec<(u32, bool)> = short[..train_n]
        .iter()
        .map(|&i| (i, true))
        .chain(long[..train_n].iter().map(|&i| (i, false)))
        .collect();
    let test: Vec<(u32, bool)> = short[train_n..]
        .iter()
        .map(|&i| (i, true))
        .chain(long[train_n..].iter().map(|&i| (i, false)))
        .collect();
    let mut w = [0f32; INPUTS + 1];
    let x = |i: u32| -> [f32; INPUTS] {
        let mut v = [0f32; INPUTS];
        for (o, &d) in v.iter_mut().zip(&features[i as usize]) {
            *o = d as f32 / 15.0;
        }
        v
    };
    let logit = |w: &[f32; INPUTS + 1], v: &[f32; INPUTS]| -> f32 {
        w[INPUTS] + w[..INPUTS].iter().zip(v).map(|(a, b)| a * b).sum::<f32>()
    };
    for _ in 0..3 {
        for k in (1..train.len()).rev() {
            train.swap(k, rng.below(k as u64 + 1) as usize);
        }
        for &(i, y) in &train {
            let v = x(i);
            let p = crate::model::sigmoid(logit(&w, &v));
            let g = p - y as u32 as f32;
            for (wk, vk) in w[..INPUTS].iter_mut().zip(&v) {
                *wk -= 0.1 * g * vk;
            }
            w[INPUTS] -= 0.1 * g;
        }
    }
    let right = test
        .iter()
        .filter(|&&(i, y)| (logit(&w, &x(i)) > 0.0) == y)
        .count();
    right as f64 / test.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inflection_point_of_a_long_tail() {
        // 90 short lifetimes 1..=90, then a tail of 10 at 1000 + 1000 k:
        // the CDF bends where the tail starts.
        let mut l: Vec<u64> = (1..=90).collect();
        l.extend((1..=10).map(|k| 1000 + 1000 * k));
        let i = inflection_index(&l);
        assert_eq!(l[i], 90, "the last short lifetime");
        // Uniform lifetimes: every point is on the line (the first wins).
        let u: Vec<u64> = (0..50).map(|k| 10 * k).collect();
        assert_eq!(inflection_index(&u), 0);
        // One sample, or all equal.
        assert_eq!(inflection_index(&[7]), 0);
        let mut t = Threshold::new(5, 10, 100, 1);
        let p = t.pick(&l, &vec![[0u8; INPUTS]; l.len()]).unwrap();
        assert_eq!((p.threshold, p.how), (90, "inflection"));
        assert!(t.pick(&[], &[]).is_none());
    }

    #[test]
    fn percentiles() {
        let s: Vec<u64> = (0..101).collect(); // 0..=100
        assert_eq!(percentile_of_value(&s, 50), 50.0 * 100.0 / 101.0);
        assert_eq!(value_at_percentile(&s, 25.0), 25);
        assert_eq!(value_at_percentile(&s, -10.0), 0);
        assert_eq!(value_at_percentile(&s, 130.0), 100);
    }

    /// Lifetimes 0..n whose first digit tells whether they are below
    /// `signal`: a light model separates them exactly at that threshold.
    fn separable(n: u64, signal: u64) -> (Vec<u64>, Vec<[u8; INPUTS]>) {
        let l: Vec<u64> = (0..n).collect();
        let f = l
            .iter()
            .map(|&v| {
                let mut d = [0u8; INPUTS];
                d[0] = if v < signal { 15 } else { 0 };
                d[5] = (v % 16) as u8; // noise
                d
            })
            .collect();
        (l, f)
    }

    #[test]
    fn light_model_prefers_the_threshold_the_features_explain() {
        let (l, f) = separable(1000, 400);
        let mut rng = Rng::new(2);
        let at = light_model_accuracy(&l, &f, 400, 5000, &mut rng);
        let off = light_model_accuracy(&l, &f, 700, 5000, &mut rng);
        assert!(at > 0.99 && off < 0.9, "{at} {off}");
        // One class empty: no model.
        assert_eq!(light_model_accuracy(&l, &f, 0, 5000, &mut rng), 0.0);
    }

    #[test]
    fn algorithm_1_steps_toward_the_separable_threshold() {
        // Features explain "below 400" (percentile 40); start at T = 300 (p = 30).
        let (l, f) = separable(1000, 400);
        let mut t = Threshold::new(5, 10, 5000, 1);
        t.current = Some(300);
        // Window 2: candidates at 25, 30, 35 → 35 wins (closest to 40):
        // adjusted up after a non-adjusted window: step stays 5.
        let p = t.pick(&l, &f).unwrap();
        assert_eq!(
            p.candidates.iter().map(|c| c.threshold).collect::<Vec<_>>(),
            vec![250, 300, 350]
        );
        assert_eq!((p.threshold, p.step), (350, 5));
        // Window 3: from p = 35: 30, 35, 40 → 40; same direction twice: step 6.
        let p = t.pick(&l, &f).unwrap();
        assert_eq!((p.threshold, p.step), (400, 6));
        // Window 4: from 40: 34, 40, 46 → 40 stays: adjusted before, not
        // now: step 5.
        let p = t.pick(&l, &f).unwrap();
        assert_eq!((p.threshold, p.step), (400, 5));
        // Window 5: no adjustment twice: step 6.
        let p = t.pick(&l, &f).unwrap();
        assert_eq!((p.threshold, p.step), (400, 6));
    }

    #[test]
    fn step_rules_and_cap() {
        // Opposite directions lower the step; the cap is 10; ties keep the
        // earlier candidate (dir -1).
        let (l, f) = separable(1000, 400);
        let mut t = Threshold::new(10, 10, 5000, 1);
        t.current = Some(600);
        t.prev = Some(1); // adjusted up in the previous window
                          // Candidates 50, 60, 70 percent: 50 wins (down): opposite → step 9.
        let p = t.pick(&l, &f).unwrap();
        assert_eq!((p.threshold, p.step), (500, 9));
        // Same direction (down) again: step 10, capped.
        let p = t.pick(&l, &f).unwrap();
        assert_eq!((p.threshold, p.step), (410, 10));
        // 410 stays the best: adjusted before, not now: step 9.
        let p = t.pick(&l, &f).unwrap();
        assert_eq!((p.threshold, p.step), (410, 9));
        // All-equal lifetimes: every candidate is the same value, a class
        // is empty, accuracy 0: T is kept.
        let mut k = Threshold::new(5, 10, 5000, 1);
        k.current = Some(7);
        let p = k.pick(&[5; 100], &vec![[0u8; INPUTS]; 100]).unwrap();
        assert_eq!((p.threshold, p.how), (7, "kept"));
    }
}
