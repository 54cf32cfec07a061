//! MiDAS's analytical side: the update-interval distribution (UID) sampled at
//! run time, the Markov-chain analytical model (MCAM) that predicts the WAF of
//! a chain of groups from it, and the search over group numbers and sizes.
//!
//! Time is counted in user-written blocks. A configuration is a hot group of
//! `hot` segments (0 = none), FIFO groups G1..G(k-1) and a last group Gk.
//!
//! The chain as MCAM sees it:
//! * the hot group takes the user writes whose update interval is shorter
//!   than its residence time T0, and T0·F(T0) = (hot - 1/2)·B (its inflow
//!   F(T0) fills hot - 1/2 segments, the open one counting half); they die
//!   there, so its victims hold no valid block;
//! * a FIFO group of S segments with inflow λ (blocks per user write) keeps a
//!   block for T = (S - 1/2)·B/λ. A block that entered with age A is valid at
//!   collection if its interval exceeds A + T, so the victim valid ratio is
//!   v = P(u > A + T | u > A), the next group's inflow is λ·v, and by
//!   Little's law the group holds λ·∫_A^{A+T} P(u > x | u > A) dx valid blocks;
//! * the last group holds the remaining valid blocks on its own segments; its
//!   WAF W_k comes from the hot/cold FIFO model (Desnoyers, SYSTOR'12) at its
//!   spare factor α = physical / valid blocks, with the greedy correction
//!   α' = α·(1 + 1/2B); the hot share r of its writes and f of its blocks
//!   split at 0.7× its mean interval (as the MiDAS simulator does).
//!
//! The chain's stationary flow gives WAF = 1 + Σ_{i<k} λ_i·v_i + λ_k·(W_k - 1):
//! user writes, the moves out of every FIFO group, and the last group's
//! relocations into itself. MiDAS iterates the chain's transition matrix to
//! that state; here it is written down directly. The last group's W_k is
//! [`last_group_waf`] of the policy kit.

use crate::policy::kit::fifo_waf::last_group_waf;

/// Update-interval histogram of the sampled LBAs over one window: bins of
/// `unit` user writes, the last bin holding every interval at or beyond the
/// window. Only intervals that start inside the window are counted; the
/// writes still alive when the window closes are censored observations
/// (their interval exceeds their age), so the distribution is the
/// Kaplan-Meier estimate over both. Without that, the first window after a
/// prefill would see no interval longer than itself.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Uid {
    unit: u64,
    events: Vec<u64>,
    total: u64,
}

impl Uid {
    /// `bins` bins of `unit` user writes plus the overflow bin.
    pub fn new(unit: u64, bins: usize) -> Self {
        Uid {
            unit: unit.max(1),
            events: vec![0; bins.max(1) + 1],
            total: 0,
        }
    }

    /// Bin of an interval or age [user writes].
    #[inline(always)]
    pub fn bin(&self, interval: u64) -> usize {
        ((interval / self.unit) as usize).min(self.events.len() - 1)
    }

    /// Count one update interval [user writes].
    #[inline(always)]
    pub fn record(&mut self, interval: u64) {
        let j = self.bin(interval);
        self.events[j] += 1;
        self.total += 1;
    }

    /// Bins including the overflow bin (the length `censored` must have).
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Forget every count.
    pub fn clear(&mut self) {
        self.events.fill(0);
        self.total = 0;
    }

    /// The distribution from the counted intervals and `censored[j]`, the
    /// writes still alive at an age in bin j (actuarial Kaplan-Meier: a
    /// censored write is at risk for half its bin), with `live` valid blocks
    /// on the device closing the tail; `None` before any interval was counted.
    pub fn distribution(&self, censored: &[u64], live: f64) -> Option<Dist> {
        if self.total == 0 {
            return None;
        }
        debug_assert_eq!(censored.len(), self.events.len());
        let bins = self.events.len() - 1;
        let mut at_risk: f64 = self.total as f64 + censored.iter().sum::<u64>() as f64;
        let mut s = Vec::with_capacity(bins + 1);
        let mut cur = 1.0;
        s.push(cur);
        for (&d, &c) in self.events[..bins].iter().zip(censored) {
            let (d, c) = (d as f64, c as f64);
            let n = at_risk - 0.5 * c;
            if n > 0.0 {
                cur *= 1.0 - d / n;
            }
            s.push(cur);
            at_risk -= d + c;
        }
        Some(Dist::new(self.unit as f64, s, live))
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.events.capacity() * 8
    }
}

/// A UID as functions of time: survival S(t) = P(u > t), its integral, and
/// the LBA estimates of the last group's hot/cold split. S is linear inside a
/// bin. Beyond the histogram's span H it decays exponentially with the mean
/// that Little's law leaves for it: at one user write per unit of time the
/// device holds ∫_0^∞ S valid blocks, so S(H)·τ = live - ∫_0^H S.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Dist {
    unit: f64,
    /// Finite bins.
    bins: usize,
    /// S at the bin edges 0..=bins.
    s: Vec<f64>,
    /// ∫_0^{edge j} S.
    int: Vec<f64>,
    /// Estimated LBAs whose interval lies below edge j (j = 0..=bins+1, the
    /// last entry including the tail): share of writes × interval, since an
    /// LBA rewritten every u writes takes 1/u of the writes.
    lbas: Vec<f64>,
    /// Mean residual interval of the tail beyond the span [user writes].
    tau: f64,
}

impl Dist {
    /// From the survival at the bin edges 0..=bins (non-increasing, S(0) = 1)
    /// and the valid blocks on the device.
    pub fn new(unit: f64, s: Vec<f64>, live: f64) -> Self {
        let bins = s.len() - 1;
        let mut int = Vec::with_capacity(bins + 1);
        let mut lbas = Vec::with_capacity(bins + 2);
        let (mut area, mut l) = (0.0, 0.0);
        int.push(0.0);
        lbas.push(0.0);
        for j in 0..bins {
            area += 0.5 * (s[j] + s[j + 1]) * unit;
            int.push(area);
            l += (s[j] - s[j + 1]) * (j as f64 + 0.5) * unit;
            lbas.push(l);
        }
        let span = bins as f64 * unit;
        let tau = if s[bins] > 0.0 {
            ((live - area) / s[bins]).max(unit)
        } else {
            unit
        };
        // an interval in the tail averages span + τ
        lbas.push(l + s[bins] * (span + tau));
        Dist {
            unit,
            bins,
            s,
            int,
            lbas,
            tau,
        }
    }

    /// From bin counts (the last one the overflow bin), nothing censored.
    #[cfg(test)]
    pub fn from_counts(unit: f64, counts: &[u64], live: f64) -> Self {
        let mut u = Uid::new(unit as u64, counts.len() - 1);
        u.events.copy_from_slice(counts);
        u.total = counts.iter().sum();
        u.distribution(&vec![0; counts.len()], live).unwrap()
    }

    fn horizon(&self) -> f64 {
        self.bins as f64 * self.unit
    }

    /// P(u > t).
    pub fn survival(&self, t: f64) -> f64 {
        if t <= 0.0 {
            return 1.0;
        }
        let h = self.horizon();
        if t >= h {
            return self.s[self.bins] * (-(t - h) / self.tau).exp();
        }
        let x = t / self.unit;
        let j = x as usize;
        let fr = x - j as f64;
        self.s[j] + (self.s[j + 1] - self.s[j]) * fr
    }

    /// ∫_0^t S(x) dx.
    pub fn integral(&self, t: f64) -> f64 {
        if t <= 0.0 {
            return 0.0;
        }
        let h = self.horizon();
        if t >= h {
            return self.int[self.bins]
                + self.s[self.bins] * self.tau * -(-(t - h) / self.tau).exp_m1();
        }
        let x = t / self.unit;
        let j = x as usize;
        let fr = x - j as f64;
        self.int[j] + 0.5 * (self.s[j] + self.survival(t)) * fr * self.unit
    }

    /// Bin index of `t`, the overflow bin for t at or beyond the horizon.
    fn bin(&self, t: f64) -> usize {
        if t >= self.horizon() {
            self.bins
        } else {
            (t.max(0.0) / self.unit) as usize
        }
    }

    /// Share of the writes at bin edge `j` or above.
    fn writes_from(&self, j: usize) -> f64 {
        if j <= self.bins {
            self.s[j]
        } else {
            0.0
        }
    }

    /// Estimated LBAs of the bins below `j`.
    fn lbas_below(&self, j: usize) -> f64 {
        self.lbas[j.min(self.bins + 1)]
    }
}

/// A group configuration.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Config {
    /// Hot group size [segments]; 0 = no hot group.
    pub hot: u32,
    /// Sizes of G1..Gk [segments]; the last entry is the last group.
    pub sizes: Vec<u32>,
}

/// What MCAM predicts for a configuration.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Prediction {
    /// Whole-device WAF.
    pub waf: f64,
    /// Victim valid ratio of G1..Gk.
    pub valid: Vec<f64>,
    /// Share of user writes the hot group takes.
    pub hot_traffic: f64,
    /// Residence time of the hot group: intervals below it are hot [user writes].
    pub hot_interval: f64,
}

/// Inputs of one model run.
pub struct Model<'a> {
    /// The sampled update intervals.
    pub dist: &'a Dist,
    /// Segment size [blocks].
    pub seg_blocks: f64,
    /// Valid blocks on the device.
    pub live: f64,
    /// The running hot group's measured (share of user writes, victim valid
    /// ratio), to use instead of the ideal prediction (the simulator's
    /// "real" mode, taken when its victims are over 10% valid or it takes
    /// under 15% of the writes).
    pub measured_hot: Option<(f64, f64)>,
}

impl Model<'_> {
    /// MCAM's WAF of `cfg`, or `None` if the configuration cannot hold the
    /// data (a group with no inflow, a last group smaller than its data).
    pub fn predict(&self, cfg: &Config) -> Option<Prediction> {
        let (d, b) = (self.dist, self.seg_blocks);
        let k = cfg.sizes.len();
        if k == 0 || cfg.sizes.contains(&0) {
            return None;
        }
        // Hot group: T0 with T0·F(T0) = (hot - 1/2)·B.
        let mut extra = 0.0;
        let (t0, traffic, mut used) = if let (true, Some((t, v))) = (cfg.hot > 0, self.measured_hot)
        {
            // measured: the share t(1 - v) that dies in G0 is the shortest
            // intervals; the survivors move on to G1
            let dying = t * (1.0 - v);
            let (mut lo, mut hi) = (0.0, d.horizon() + 20.0 * d.tau);
            if 1.0 - d.survival(hi) < dying {
                return None;
            }
            for _ in 0..60 {
                let mid = 0.5 * (lo + hi);
                if 1.0 - d.survival(mid) < dying {
                    lo = mid
                } else {
                    hi = mid
                }
            }
            let residence = if t > 0.0 {
                (cfg.hot as f64 - 0.5) * b / t
            } else {
                0.0
            };
            extra += t * v;
            let live0 = d.integral(hi) - hi * d.survival(hi) + t * v * residence;
            (hi, dying, live0)
        } else if cfg.hot > 0 {
            let target = (cfg.hot as f64 - 0.5) * b;
            let g = |t: f64| t * (1.0 - d.survival(t));
            let mut hi = d.unit.max(1.0);
            while g(hi) < target {
                hi *= 2.0;
                if hi > 4.0 * (d.horizon() + d.tau) + d.unit {
                    return None;
                }
            }
            let mut lo = 0.0;
            for _ in 0..60 {
                let mid = 0.5 * (lo + hi);
                if g(mid) < target {
                    lo = mid
                } else {
                    hi = mid
                }
            }
            let t0 = hi;
            let live0 = d.integral(t0) - t0 * d.survival(t0);
            (t0, 1.0 - d.survival(t0), live0)
        } else {
            (0.0, 0.0, 0.0)
        };
        // Intervals of the blocks that enter G1: longer than T0.
        let s_t0 = d.survival(t0);
        if s_t0 <= 0.0 {
            return None;
        }
        let sc = |t: f64| d.survival(t.max(t0));
        let int_c = |a: f64, e: f64| {
            (e.min(t0) - a.min(t0)) * s_t0 + d.integral(e.max(t0)) - d.integral(a.max(t0))
        };
        let mut lambda = 1.0 - traffic;
        let mut age = 0.0;
        let mut valid = Vec::with_capacity(k);
        for &size in &cfg.sizes[..k - 1] {
            if lambda < 1e-9 {
                return None;
            }
            let t = (size as f64 - 0.5) * b / lambda;
            let s_a = sc(age);
            if s_a <= 0.0 {
                return None;
            }
            let v = sc(age + t) / s_a;
            used += lambda * int_c(age, age + t) / s_a;
            valid.push(v);
            lambda *= v;
            extra += lambda;
            age += t;
        }
        // Last group: the rest of the valid blocks on the rest of the space.
        let live_k = self.live - used;
        let phys_k = cfg.sizes[k - 1] as f64 * b;
        if live_k <= 0.0 {
            return None;
        }
        let alpha = phys_k / live_k;
        let (r, f) = self.last_split(age.max(t0), live_k);
        let w = last_group_waf(alpha, r, f, b)?;
        valid.push(1.0 - 1.0 / w);
        Some(Prediction {
            waf: 1.0 + extra + lambda * (w - 1.0),
            valid,
            hot_traffic: traffic,
            hot_interval: t0,
        })
    }

    /// Hot share of the last group's writes (r) and blocks (f), for blocks
    /// older than `age`: hot = interval below 0.7× the mean interval there.
    fn last_split(&self, age: f64, live_k: f64) -> (f64, f64) {
        let d = self.dist;
        let ja = d.bin(age);
        let writes = d.writes_from(ja);
        let lbas = d.lbas_below(d.bins + 1) - d.lbas_below(ja);
        if writes <= 0.0 || lbas <= 0.0 {
            return (0.0, 0.0);
        }
        // mean interval = LBAs / writes (both normalised by all counts)
        let jh = d.bin(0.7 * lbas / writes).max(ja);
        let r = (writes - d.writes_from(jh)) / writes;
        let f = ((d.lbas_below(jh) - d.lbas_below(ja)) / live_k).min(1.0);
        (r, f)
    }
}

/// Bounds of the configuration search.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Most groups in the chain besides the hot group (>= 2).
    pub max_groups: usize,
    /// Largest hot group [segments].
    pub max_hot: u32,
    /// The least WAF improvement that justifies a hot group.
    pub hot_gain: f64,
    /// Keep the hot group at this size instead of sweeping it.
    pub fixed_hot: Option<u32>,
}

/// Best configuration of `budget` segments, searched in MiDAS's order: the
/// hot group size against a single group, then one group at a time carved
/// from the last one (each new group's size swept), the best group count,
/// then the hot size and every FIFO group's size refined once more.
pub fn search(m: &Model, budget: u32, lim: Limits) -> Option<(Config, Prediction)> {
    let eval = |c: &Config| m.predict(c).map(|p| p.waf).unwrap_or(f64::INFINITY);
    // 1. hot group size, with everything else in one group
    let mut hot = 0;
    let no_hot = eval(&Config {
        hot: 0,
        sizes: vec![budget],
    });
    let mut best_hot = no_hot;
    let sweep_hot = if lim.fixed_hot.is_some() {
        0
    } else {
        lim.max_hot
    };
    for h in 1..=sweep_hot.min(budget.saturating_sub(1)) {
        let w = eval(&Config {
            hot: h,
            sizes: vec![budget - h],
        });
        if w < best_hot {
            (hot, best_hot) = (h, w);
        }
    }
    if best_hot > no_hot - lim.hot_gain {
        hot = 0;
    }
    if let Some(h) = lim.fixed_hot {
        hot = h.min(budget.saturating_sub(2));
    }
    // 2. add groups one at a time, sweeping the new group's size
    let mut cur = Config {
        hot,
        sizes: vec![budget - hot],
    };
    let mut best: Option<(Config, f64)> = None;
    for _ in 2..=lim.max_groups.max(2) {
        let last = *cur.sizes.last().unwrap();
        if last < 2 {
            break;
        }
        let with = |j: u32| {
            let mut c = cur.clone();
            let l = c.sizes.len();
            c.sizes[l - 1] = j;
            c.sizes.push(last - j);
            c
        };
        let Some((j, w)) = sweep(1, last - 1, |j| eval(&with(j))) else {
            break;
        };
        cur = with(j);
        if best.as_ref().is_none_or(|(_, b)| w < *b) {
            best = Some((cur.clone(), w));
        }
    }
    let (mut cfg, mut waf) = best?;
    // 3. refine: hot size, then each FIFO group's size, the last group absorbing
    let pool = cfg.hot + cfg.sizes.last().unwrap();
    let at_hot = |h: u32| {
        let mut c = cfg.clone();
        c.hot = h;
        *c.sizes.last_mut().unwrap() = pool - h;
        c
    };
    let zero = eval(&at_hot(0));
    let hot_range = if lim.fixed_hot.is_some() {
        0
    } else {
        lim.max_hot.min(pool - 1)
    };
    if let Some((h, w)) = sweep(1, hot_range, |h| eval(&at_hot(h))) {
        let h = if w <= zero - lim.hot_gain { h } else { 0 };
        let c = at_hot(h);
        let w = eval(&c);
        if w <= waf {
            (cfg, waf) = (c, w);
        }
    }
    for i in 0..cfg.sizes.len() - 1 {
        let last = cfg.sizes.len() - 1;
        let pool = cfg.sizes[i] + cfg.sizes[last];
        let at = |j: u32| {
            let mut c = cfg.clone();
            c.sizes[i] = j;
            c.sizes[last] = pool - j;
            c
        };
        if let Some((j, w)) = sweep(1, pool - 1, |j| eval(&at(j))) {
            if w < waf {
                (cfg, waf) = (at(j), w);
            }
        }
    }
    let p = m.predict(&cfg)?;
    Some((cfg, p))
}

/// Minimum of `f` over lo..=hi (coarse-to-fine: 64 probes, then 8× finer
/// around the best); `None` if every probe is infinite.
fn sweep(lo: u32, hi: u32, mut f: impl FnMut(u32) -> f64) -> Option<(u32, f64)> {
    if lo > hi {
        return None;
    }
    let mut step = ((hi - lo) / 64).max(1);
    let mut best: Option<(u32, f64)> = None;
    let mut probe = |x: u32, best: &mut Option<(u32, f64)>| {
        let w = f(x);
        if w.is_finite() && best.is_none_or(|(_, b)| w < b) {
            *best = Some((x, w));
        }
    };
    let mut x = lo;
    while x <= hi {
        probe(x, &mut best);
        x = match x.checked_add(step) {
            Some(n) => n,
            None => break,
        };
    }
    probe(hi, &mut best);
    while step > 1 {
        let (b, _) = best?;
        let fine = (step / 8).max(1);
        let mut x = b.saturating_sub(step).max(lo);
        while x <= (b + step).min(hi) {
            probe(x, &mut best);
            x += fine;
        }
        step = fine;
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A histogram of exponential intervals with mean `mean` (no sampling noise).
    fn exponential(mean: f64, unit: u64, bins: usize) -> Vec<u64> {
        let n = 1e9;
        let mut c: Vec<u64> = (0..bins)
            .map(|j| {
                let a = (j as f64 * unit as f64 / mean).exp();
                let b = ((j + 1) as f64 * unit as f64 / mean).exp();
                (n * (1.0 / a - 1.0 / b)).round() as u64
            })
            .collect();
        c.push((n * (-(bins as f64) * unit as f64 / mean).exp()).round() as u64);
        c
    }

    #[test]
    fn survival_and_integral_of_a_hand_made_histogram() {
        // 4 intervals in [0,10), 4 in [10,20), 2 beyond the horizon of 20
        // 22 valid blocks: 12 within the span, so the tail holds 10 = 0.2·τ
        let d = Dist::from_counts(10.0, &[4, 4, 2], 22.0);
        assert_eq!(d.survival(0.0), 1.0);
        assert!((d.survival(10.0) - 0.6).abs() < 1e-12);
        assert!((d.survival(15.0) - 0.4).abs() < 1e-12);
        assert!((d.survival(20.0) - 0.2).abs() < 1e-12);
        assert!((d.tau - 50.0).abs() < 1e-9);
        assert!((d.survival(70.0) - 0.2 * (-1.0f64).exp()).abs() < 1e-12);
        assert!((d.integral(10.0) - 8.0).abs() < 1e-12); // (1 + 0.6)/2 * 10
        assert!((d.integral(20.0) - 12.0).abs() < 1e-12);
        assert!((d.integral(1e9) - 22.0).abs() < 1e-6, "Little's law");
        // LBAs: 0.4*5 + 0.4*15 + 0.2*(20 + 50) = live
        assert!((d.lbas_below(3) - 22.0).abs() < 1e-9);
    }

    #[test]
    fn uid_bins_intervals_and_clamps_to_overflow() {
        let mut u = Uid::new(4, 3);
        for i in [0, 3, 4, 11, 12, 1000] {
            u.record(i);
        }
        assert_eq!(u.events, vec![2, 1, 1, 2]);
        assert_eq!(u.total, 6);
        u.clear();
        assert_eq!(u.total, 0);
        assert!(u.distribution(&[0; 4], 1.0).is_none());
    }

    #[test]
    fn censored_writes_keep_long_intervals_alive() {
        // 10 writes: 4 rewritten in bin 0, 6 still alive at ages in bin 1.
        // Counting only the rewrites would say S(unit) = 0.
        let mut u = Uid::new(10, 4);
        for _ in 0..4 {
            u.record(5);
        }
        let d = u.distribution(&[0, 6, 0, 0, 0], 100.0).unwrap();
        assert!((d.survival(10.0) - 0.6).abs() < 1e-12);
        // nothing is known to die after bin 0: S stays at 0.6 to the span
        assert!((d.survival(40.0) - 0.6).abs() < 1e-12);
        // a censored write in bin 0 is at risk for half of it: 1 - 4 / (10 - 1)
        let d = u.distribution(&[2, 4, 0, 0, 0], 100.0).unwrap();
        assert!((d.survival(10.0) - (1.0 - 4.0 / 9.0)).abs() < 1e-12);
    }

    #[test]
    fn fifo_groups_of_a_memoryless_workload_keep_exp_minus_t_over_mean() {
        let (mean, unit) = (1000.0, 4u64);
        let d = Dist::from_counts(unit as f64, &exponential(mean, unit, 20_000), mean);
        let m = Model {
            dist: &d,
            seg_blocks: 100.0,
            live: 1000.0,
            measured_hot: None,
        };
        let cfg = Config {
            hot: 0,
            sizes: vec![3, 2, 20],
        };
        let p = m.predict(&cfg).unwrap();
        // G1: T = 2.5 segments * 100 / 1 = 250 -> v = e^-0.25
        assert!(
            (p.valid[0] - (-0.25f64).exp()).abs() < 1e-4,
            "{:?}",
            p.valid
        );
        // G2: inflow e^-0.25, T = 150 / e^-0.25 ; memoryless -> v = e^(-T/mean)
        let t2 = 150.0 / (-0.25f64).exp();
        assert!((p.valid[1] - (-t2 / mean).exp()).abs() < 1e-4);
        assert!(p.waf > 1.0 && p.valid[2] > 0.0 && p.valid[2] < 1.0);
        // the WAF adds up the flows
        let l2 = p.valid[0];
        let l3 = l2 * p.valid[1];
        let wk = 1.0 / (1.0 - p.valid[2]);
        assert!((p.waf - (1.0 + l2 + l3 + l3 * (wk - 1.0))).abs() < 1e-9);
    }

    #[test]
    fn hot_group_takes_the_short_intervals_it_can_hold() {
        // half the writes rewrite within 10 writes, half beyond the horizon
        let mut c = vec![0u64; 101];
        c[1] = 500;
        c[100] = 500;
        let d = Dist::from_counts(10.0, &c, 1000.0);
        let m = Model {
            dist: &d,
            seg_blocks: 4.0,
            live: 1000.0,
            measured_hot: None,
        };
        let p = m
            .predict(&Config {
                hot: 2,
                sizes: vec![100, 400],
            })
            .unwrap();
        // T0·F(T0) = 6 -> T0 = 12 within bin 1 where F rises from 0 to 0.5: F(12) = 0.1... solve
        assert!((p.hot_interval * (1.0 - d.survival(p.hot_interval)) - 6.0).abs() < 1e-6);
        assert!(p.hot_traffic > 0.0 && p.hot_traffic <= 0.5);
        assert!(m
            .predict(&Config {
                hot: 0,
                sizes: vec![0, 10]
            })
            .is_none());
    }

    #[test]
    fn search_keeps_the_budget_and_beats_a_single_group() {
        // skewed: 80% of writes with short intervals, 20% long
        let unit = 16u64;
        let mut c = exponential(2_000.0, unit, 4096);
        for (x, y) in c.iter_mut().zip(exponential(200_000.0, unit, 4097)) {
            *x = *x * 4 + y;
        }
        let d = Dist::from_counts(unit as f64, &c, 100_000.0);
        let m = Model {
            dist: &d,
            seg_blocks: 64.0,
            live: 100_000.0,
            measured_hot: None,
        };
        let budget = (100_000.0 * 1.2 / 64.0) as u32;
        let lim = Limits {
            max_groups: 6,
            max_hot: 29,
            hot_gain: 0.05,
            fixed_hot: None,
        };
        let (cfg, p) = search(&m, budget, lim).unwrap();
        assert_eq!(cfg.hot + cfg.sizes.iter().sum::<u32>(), budget);
        assert!(cfg.sizes.len() >= 2 && cfg.sizes.len() <= 6);
        let single = m
            .predict(&Config {
                hot: 0,
                sizes: vec![budget],
            })
            .unwrap()
            .waf;
        assert!(p.waf < single, "{} vs single group {single}", p.waf);
    }

    #[test]
    fn sweep_finds_the_minimum_of_a_bowl() {
        let (x, w) = sweep(1, 10_000, |x| ((x as f64) - 7_777.0).powi(2)).unwrap();
        assert_eq!((x, w), (7_777, 0.0));
        assert!(sweep(1, 100, |_| f64::INFINITY).is_none());
        assert_eq!(sweep(5, 5, |x| x as f64).unwrap().0, 5);
    }
}
