//! DOGI's prediction-accuracy-aware group configuration (§4.3, Fig. 8) and
//! ML-Reloc's remaining-lifetime table (§4.4, Fig. 9), both read from the
//! prediction log (PLog): pairs <predicted category, actual lifetime> of
//! sampled non-hot blocks. The PLog holds the new model's predictions of the
//! held-out tenth of the latest samples (the authors' artifact keeps a 10%
//! validation split; predictions of the training set itself would be
//! optimistic); blocks still alive are censored at their age.
//!
//! **Candidates.** A configuration merges the ten categories c1..c10 into K
//! consecutive intermediate groups: each of the nine category boundaries is
//! kept or dropped, 2^9 = 512 candidates (bit k of a `mask`: a boundary
//! after category k), all evaluated. Group j's BIR is `[U_{j-1}, U_j)`, U_j
//! the upper bound of its last category; GK's is unbounded.
//!
//! **The Markov chain.** The paper uses "existing MC models [15, 43]
//! modified for DOGI (details omitted)" with three inputs: the number of
//! groups, each group's share of user writes and the share of its blocks
//! copied on (both from PLog). The authors' artifact (github
//! `dgist-datalab/DOGI`, `prototype/DOGI-Gconf/0914-DOGI-PLog.py`; no
//! licence, so re-implemented here from its description) spells it out as
//! a MiDAS-style chain over the states Free, G_hot, G1..GK, one step per
//! written block:
//! * Free → G_hot with p_hot (the hot filter's measured share of user
//!   writes); Free → Gi with (1 − p_hot)·w_i, w_i the share of PLog records
//!   in Gi's categories;
//! * G_hot → G1 with its measured victim valid ratio v_hot, → Free otherwise;
//! * Gi (i < K) → Free with r_i, the share of its blocks that die within its
//!   BIR's upper bound, and → its survivors' next group with 1 − r_i (the
//!   misprediction ratio of Fig. 8);
//! * GK → GK with its victims' valid ratio v_K = 1 − 1/W_K, W_K the WAF of a
//!   uniformly written log at GK's spare factor: Desnoyers' FIFO fixed point
//!   through Lambert W (MiDAS's MCAM's last group,
//!   [`crate::policy::kit::fifo_waf::uniform_group_waf`]); → Free otherwise.
//!
//! The artifact iterates the chain 1,000 times and reads WAF = (user + GC
//! writes) / user writes off its state; the chain's stationary flow gives
//! the same number directly, as MCAM writes it:
//! WAF = 1 + p_hot·v_hot + Σ_{i<K} λ_i·(1 − r_i) + λ_K·(W_K − 1),
//! λ_i the inflow of Gi per user write ([`chain_waf`] iterates the chain in
//! the tests to check this).
//!
//! Two ways to derive r_i and the survivors' destinations ([`Model`]):
//! * `chain` (the artifact's, the default): r_i from Gi's own records,
//!   whatever age the blocks entering Gi have; survivors move one group down
//!   (age-based, as `dogi+Grp` relocates); G_hot's survivors die in G1.
//! * `flow` (wafer's first model): each category's blocks keep their own
//!   records along the chain: a block that entered Gj at age a survives
//!   with P(L > a + U_j | L > a); in full DOGI a category's survivors go
//!   where ML-Reloc sends them (§4.4), then one group down.
//!
//! **Space** (in blocks; the same budget the engine enforces): Gi (i < K)
//! holds λ_i·U_i blocks (inflow × BIR, the artifact's sizing) and, by
//! Little's law, λ_i·E[min(L, U_i)] valid blocks (the artifact uses an
//! exponential valid profile with the same end points); G_hot its measured
//! segments and valid blocks; the engine's GC reserve stays free and every
//! group in use holds an open segment; GK (with G_frzn, the pool DOGI's
//! victims come from) gets the rest. A candidate whose pool cannot hold
//! its valid blocks is infeasible.
//!
//! **Filter.** Candidates in which a group receives under 0.05% of the user
//! writes are dropped (the artifact's user-traffic threshold). Fewer groups
//! win ties.

use serde::{Deserialize, Serialize};

use crate::future::NEVER;
use crate::policy::kit::fifo_waf::uniform_group_waf;

/// Categories of the ML model.
pub const CLASSES: usize = 10;

/// Configurations searched: every subset of the nine category boundaries.
pub const MASKS: u32 = 1 << (CLASSES - 1);

/// Least share of the user writes a group must receive (the artifact's
/// `USER_TRAFFIC_THRESHOLD`).
pub const MIN_TRAFFIC: f64 = 0.0005;

/// Sorted values with prefix sums.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
struct Sorted {
    v: Vec<u64>,
    prefix: Vec<f64>,
}

impl Sorted {
    fn new(mut v: Vec<u64>) -> Self {
        v.sort_unstable();
        let mut prefix = Vec::with_capacity(v.len() + 1);
        prefix.push(0.0);
        let mut s = 0.0;
        for &x in &v {
            s += x as f64;
            prefix.push(s);
        }
        Sorted { v, prefix }
    }

    /// Index of the first value above `t`.
    fn above(&self, t: u64) -> usize {
        self.v.partition_point(|&x| x <= t)
    }

    /// Values above `t`.
    fn count_above(&self, t: u64) -> usize {
        self.v.len() - self.above(t)
    }

    /// Σ min(x - a, u) over the values above `a`.
    fn sum_min(&self, a: u64, u: u64) -> f64 {
        let lo = self.above(a);
        let hi = self.above(a.saturating_add(u));
        let inside = (self.prefix[hi] - self.prefix[lo]) - (hi - lo) as f64 * a as f64;
        inside + (self.v.len() - hi) as f64 * u as f64
    }
}

/// Lifetimes of the blocks of one set of categories: those that died
/// (exact) and those still alive when the log was taken (their age, a
/// lower bound: censored). A censored record counts as living beyond `t`
/// when its age is; where its age says nothing (below the question's
/// bound) it is left out, and its age stands in for its lifetime in means.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
struct Lives {
    dead: Sorted,
    alive: Sorted,
}

impl Lives {
    fn new(dead: Vec<u64>, alive: Vec<u64>) -> Self {
        Lives {
            dead: Sorted::new(dead),
            alive: Sorted::new(alive),
        }
    }

    fn total(&self) -> usize {
        self.dead.v.len() + self.alive.v.len()
    }

    /// Records known to live longer than `t`.
    fn beyond(&self, t: u64) -> usize {
        self.dead.count_above(t) + self.alive.count_above(t)
    }

    /// P(L > b | L > a), b ≥ a: censored records younger than b are left
    /// out (0 with no record beyond `a`).
    fn survive(&self, a: u64, b: u64) -> f64 {
        let live = self.alive.count_above(b);
        let n = self.dead.count_above(a) + live;
        if n == 0 {
            0.0
        } else {
            (self.dead.count_above(b) + live) as f64 / n as f64
        }
    }

    /// E[min(L - a, u) | L > a] (ages for the censored).
    fn mean_min(&self, a: u64, u: u64) -> f64 {
        let n = self.beyond(a);
        if n == 0 {
            return 0.0;
        }
        (self.dead.sum_min(a, u) + self.alive.sum_min(a, u)) / n as f64
    }

    /// Mean remaining lifetime E[L - a | L > a] of the records that died
    /// beyond `a` (the paper averages actual invalidation times); [`NEVER`]
    /// when more records beyond `a` are still alive than died there.
    fn mean_excess(&self, a: u64) -> u64 {
        let n = self.dead.count_above(a);
        if n == 0 || self.alive.count_above(a) > n {
            return NEVER;
        }
        let s = self.dead.sum_min(a, NEVER / 2);
        (s / n as f64).round().max(1.0) as u64
    }
}

/// The prediction log: lifetimes by predicted category, and by every
/// contiguous range of categories (the candidate groups).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct PLog {
    /// `ranges[a][b - a]`: categories a..=b.
    ranges: Vec<Vec<Lives>>,
    records: usize,
}

impl PLog {
    /// From `(category, lifetime, alive)` records: `alive` marks a block
    /// still alive when the log was taken, `lifetime` then being its age.
    pub fn new(records: impl IntoIterator<Item = (u8, u64, bool)>) -> Self {
        let mut cat: Vec<(Vec<u64>, Vec<u64>)> = vec![(Vec::new(), Vec::new()); CLASSES];
        let mut n = 0;
        for (c, l, alive) in records {
            let e = &mut cat[(c as usize).min(CLASSES - 1)];
            if alive {
                e.1.push(l);
            } else {
                e.0.push(l);
            }
            n += 1;
        }
        let ranges = (0..CLASSES)
            .map(|a| {
                let (mut dead, mut alive) = (Vec::new(), Vec::new());
                (a..CLASSES)
                    .map(|b| {
                        dead.extend_from_slice(&cat[b].0);
                        alive.extend_from_slice(&cat[b].1);
                        Lives::new(dead.clone(), alive.clone())
                    })
                    .collect()
            })
            .collect();
        PLog { ranges, records: n }
    }

    /// Records held.
    pub fn len(&self) -> usize {
        self.records
    }

    /// Whether it holds no record.
    pub fn is_empty(&self) -> bool {
        self.records == 0
    }

    fn range(&self, a: usize, b: usize) -> &Lives {
        &self.ranges[a][b - a]
    }

    /// Share of the records in each category.
    pub fn shares(&self) -> [f64; CLASSES] {
        let n = self.records.max(1) as f64;
        std::array::from_fn(|k| self.range(k, k).total() as f64 / n)
    }
}

/// How the chain's survival ratios and destinations are derived.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Model {
    /// The artifact's chain: each group's own records, age-based moves.
    #[default]
    Chain,
    /// Each category's records along its path, ML-Reloc's destinations.
    Flow,
}

/// Where the survivors of a group's GC go (the DOGI stage being modelled).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Relocation {
    /// One group down the chain (`dogi+Grp`).
    AgeBased,
    /// ML-Reloc's table for a block's first relocation, then one group down
    /// (full DOGI).
    MlReloc,
}

/// What the hot group and the device look like now (the same for every
/// candidate).
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct Inputs {
    /// Share of user writes the hot filter sends to G_hot (p_hot).
    pub hot_share: f64,
    /// Valid ratio of G_hot's victims: blocks copied out of G_hot per block
    /// written into it (v_hot).
    pub hot_valid_ratio: f64,
    /// Segments G_hot occupies.
    pub hot_segments: f64,
    /// Valid blocks in G_hot.
    pub hot_live: f64,
    /// Segments of the device.
    pub segments: f64,
    /// Segments the engine keeps free (the GC reserve).
    pub reserve: f64,
    /// Groups in use besides G1..GK (each holds an open segment): G_hot,
    /// and G_frzn in full DOGI.
    pub other_groups: f64,
    /// Valid blocks on the device.
    pub valid: f64,
    /// Blocks per segment.
    pub segment: f64,
    /// Where survivors go.
    pub relocation: Relocation,
}

/// What the chain predicts for one configuration.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct Estimate {
    /// Whole-device WAF.
    pub waf: f64,
    /// Blocks entering each group per user write (λ_i).
    pub inflow: Vec<f64>,
    /// Victim valid ratio of each group (1 − r_i; the pool's v_K last).
    pub valid_ratio: Vec<f64>,
    /// Spare factor of the pool (GK and G_frzn): its blocks / valid blocks.
    pub pool_spare: f64,
}

/// A chosen configuration.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Choice {
    /// The configuration's boundary mask.
    pub mask: u32,
    /// Intermediate group of each category.
    pub group_of: [u8; CLASSES],
    /// Upper BIR bounds of G1..G(K-1) [user blocks].
    pub uppers: Vec<u64>,
    /// Estimated WAF (NaN: not estimated).
    pub waf: f64,
}

impl Choice {
    /// Groups in the configuration.
    pub fn groups(&self) -> usize {
        self.uppers.len() + 1
    }

    /// One group per category (DOGI's initial configuration, §4.3).
    pub fn identity(bounds: &[u64]) -> Self {
        choice(MASKS - 1, bounds, f64::NAN)
    }
}

/// Category ranges of the configuration `mask` (bit k: a boundary after
/// category k).
fn ranges(mask: u32) -> Vec<(usize, usize)> {
    let mut out = Vec::with_capacity(CLASSES);
    let mut a = 0;
    for k in 0..CLASSES - 1 {
        if mask >> k & 1 == 1 {
            out.push((a, k));
            a = k + 1;
        }
    }
    out.push((a, CLASSES - 1));
    out
}

/// Per-group flows of one candidate, per user write.
#[derive(serde::Serialize, serde::Deserialize)]
struct Flows {
    inflow: Vec<f64>,
    copies: Vec<f64>,
    valid: Vec<f64>,
}

impl Flows {
    fn new(groups: usize) -> Self {
        Flows {
            inflow: vec![0.0; groups],
            copies: vec![0.0; groups],
            valid: vec![0.0; groups],
        }
    }
}

/// The artifact's chain: group j's own records give its r_j and its valid
/// time, whatever entered it; survivors move one group down; G_hot's
/// survivors die in G1 (counted valid for half of G1's bound).
fn chain_flows(log: &PLog, groups: &[(usize, usize)], upper: &[u64], inp: &Inputs) -> Flows {
    let k = groups.len();
    let total = log.len().max(1) as f64;
    let nonhot = 1.0 - inp.hot_share;
    let hot_overflow = inp.hot_share * inp.hot_valid_ratio;
    let mut f = Flows::new(k);
    let mut carried = 0.0;
    for (j, &(a, b)) in groups.iter().enumerate() {
        let lives = log.range(a, b);
        let direct = nonhot * lives.total() as f64 / total;
        let cold = direct + carried;
        f.inflow[j] = cold;
        if j == 0 {
            f.inflow[j] += hot_overflow;
        }
        if j + 1 == k {
            break;
        }
        let u = upper[j];
        let survive = lives.survive(0, u);
        f.copies[j] = cold * survive;
        f.valid[j] = cold * lives.mean_min(0, u);
        if j == 0 {
            f.valid[j] += hot_overflow * u as f64 / 2.0;
        }
        carried = f.copies[j];
    }
    f
}

/// wafer's flow model: each category's blocks keep their own records (and
/// age) along their path; survivors go where `relocation` sends them.
fn category_flows(
    log: &PLog,
    groups: &[(usize, usize)],
    upper: &[u64],
    inp: &Inputs,
    group_of: &[u8; CLASSES],
) -> Flows {
    let k = groups.len();
    let total = log.len().max(1) as f64;
    let nonhot = 1.0 - inp.hot_share;
    let hot_overflow = inp.hot_share * inp.hot_valid_ratio;
    let mut f = Flows::new(k);
    f.inflow[0] += hot_overflow;
    if k > 1 {
        f.valid[0] += hot_overflow * upper[0] as f64 / 2.0;
    }
    for (cat, &g0) in group_of.iter().enumerate() {
        let lives = log.range(cat, cat);
        let mut rate = nonhot * lives.total() as f64 / total;
        let (mut g, mut age, mut relocated) = (g0 as usize, 0u64, false);
        while g + 1 < k && rate > 1e-12 {
            let u = upper[g];
            f.inflow[g] += rate;
            f.valid[g] += rate * lives.mean_min(age, u);
            let out = rate * lives.survive(age, age.saturating_add(u));
            f.copies[g] += out;
            age = age.saturating_add(u);
            g = if inp.relocation == Relocation::MlReloc && !relocated {
                relocated = true;
                let r = lives.mean_excess(age);
                upper.iter().position(|&b| r < b).unwrap_or(k - 1)
            } else {
                g + 1
            };
            rate = out;
        }
        if g + 1 == k {
            f.inflow[k - 1] += rate;
        }
    }
    f
}

/// The chain's estimate for the configuration `mask` under `bounds` (the
/// nine category upper bounds); `None` if a group gets under
/// [`MIN_TRAFFIC`] of the user writes or the pool cannot hold its data.
pub fn estimate(
    log: &PLog,
    bounds: &[u64],
    mask: u32,
    inp: &Inputs,
    model: Model,
) -> Option<Estimate> {
    let groups = ranges(mask);
    let k = groups.len();
    let total = log.len().max(1) as f64;
    let nonhot = 1.0 - inp.hot_share;
    if groups
        .iter()
        .any(|&(a, b)| nonhot * (log.range(a, b).total() as f64) / total < MIN_TRAFFIC)
    {
        return None;
    }
    let upper: Vec<u64> = groups[..k - 1].iter().map(|&(_, b)| bounds[b]).collect();
    let f = match model {
        Model::Chain => chain_flows(log, &groups, &upper, inp),
        Model::Flow => {
            let c = choice(mask, bounds, f64::NAN);
            category_flows(log, &groups, &upper, inp, &c.group_of)
        }
    };
    // Space: the reserve, an open segment per group in use, G_hot, and
    // inflow × BIR for G1..G(K-1); the pool gets the rest.
    let held = inp.reserve + inp.other_groups + k as f64 + inp.hot_segments;
    let mut pool_blocks = (inp.segments - held) * inp.segment;
    let mut pool_valid = inp.valid - inp.hot_live;
    for ((inflow, valid), &bir) in f.inflow.iter().zip(&f.valid).zip(&upper).take(k - 1) {
        pool_blocks -= inflow * bir as f64;
        pool_valid -= valid;
    }
    if pool_blocks <= 0.0 {
        return None;
    }
    let (pool_waf, pool_spare) = if pool_valid <= 0.0 {
        (1.0, f64::INFINITY)
    } else {
        let spare = pool_blocks / pool_valid;
        (uniform_group_waf(spare, inp.segment)?, spare)
    };
    let hot_copies = inp.hot_share * inp.hot_valid_ratio;
    let copies: f64 = f.copies[..k - 1].iter().sum();
    let waf = 1.0 + hot_copies + copies + f.inflow[k - 1] * (pool_waf - 1.0);
    let mut valid_ratio: Vec<f64> = (0..k - 1)
        .map(|j| {
            if f.inflow[j] > 0.0 {
                f.copies[j] / f.inflow[j]
            } else {
                0.0
            }
        })
        .collect();
    valid_ratio.push(1.0 - 1.0 / pool_waf);
    Some(Estimate {
        waf,
        inflow: f.inflow,
        valid_ratio,
        pool_spare,
    })
}

/// The best of the 512 configurations (fewer groups first on ties);
/// `None` if none is feasible.
pub fn search(log: &PLog, bounds: &[u64], inp: &Inputs, model: Model) -> Option<Choice> {
    let mut best: Option<(f64, usize, u32)> = None;
    for mask in 0..MASKS {
        let Some(e) = estimate(log, bounds, mask, inp, model) else {
            continue;
        };
        let (w, n) = (e.waf, mask.count_ones() as usize + 1);
        // Within a relative 1e-9 the two are equal: fewer groups win.
        let tie = 1e-9 * w;
        if best.is_none_or(|(bw, bn, _)| w < bw - tie || (w <= bw + tie && n < bn)) {
            best = Some((w, n, mask));
        }
    }
    best.map(|(waf, _, mask)| choice(mask, bounds, waf))
}

/// The configuration `mask` as group numbers and bounds.
pub fn choice(mask: u32, bounds: &[u64], waf: f64) -> Choice {
    let groups = ranges(mask);
    let mut group_of = [0u8; CLASSES];
    for (j, &(a, b)) in groups.iter().enumerate() {
        for g in &mut group_of[a..=b] {
            *g = j as u8;
        }
    }
    let uppers = groups[..groups.len() - 1]
        .iter()
        .map(|&(_, b)| bounds[b])
        .collect();
    Choice {
        mask,
        group_of,
        uppers,
        waf,
    }
}

/// ML-Reloc's table (§4.4, Fig. 9): for each category, the intermediate
/// group whose BIR holds the mean remaining lifetime of its blocks that
/// outlived their group's upper bound (the last group when they mostly
/// never die, or with no record).
pub fn relocation(log: &PLog, c: &Choice) -> [u8; CLASSES] {
    let n = c.groups();
    let mut out = [(n - 1) as u8; CLASSES];
    for (k, o) in out.iter_mut().enumerate() {
        let g = c.group_of[k] as usize;
        let Some(&u) = c.uppers.get(g) else {
            continue;
        };
        let r = log.range(k, k).mean_excess(u);
        *o = c.uppers.iter().position(|&b| r < b).unwrap_or(n - 1) as u8;
    }
    out
}

/// The chain's WAF by iterating its transition matrix, as the artifact
/// does (a check of the stationary formula): `user` holds the Free → state
/// shares (G_hot first), `stay[i]`/`next[i]` each state's probability of
/// staying / moving one state down; after `steps` steps, WAF = (user +
/// GC moves) / user moves of the last step.
#[cfg(test)]
fn chain_waf(user: &[f64], next: &[f64], stay: &[f64], steps: usize) -> f64 {
    let n = user.len();
    let mut mass = vec![0.0; n + 1];
    mass[0] = 1.0;
    let (mut writes, mut moves) = (0.0, 0.0);
    for _ in 0..steps {
        let mut out = vec![0.0; n + 1];
        let free = mass[0];
        (writes, moves) = (free, 0.0);
        for (i, &u) in user.iter().enumerate() {
            out[i + 1] += free * u;
        }
        for i in 0..n {
            let m = mass[i + 1];
            let (go, keep) = (m * next[i], m * stay[i]);
            if i + 1 < n {
                out[i + 2] += go;
            }
            out[i + 1] += keep;
            out[0] += m - go - keep;
            // G_hot's and Gi's survivors move on; the last state's stay.
            moves += if i + 1 < n { go } else { keep };
        }
        mass = out;
    }
    (writes + moves) / writes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs() -> Inputs {
        Inputs {
            hot_share: 0.0,
            hot_valid_ratio: 0.0,
            hot_segments: 0.0,
            hot_live: 0.0,
            segments: 11_000.0 / 16.0,
            reserve: 2.0,
            other_groups: 1.0,
            valid: 10_000.0,
            segment: 16.0,
            relocation: Relocation::AgeBased,
        }
    }

    #[test]
    fn lives_queries() {
        let l = Lives::new(vec![30, 10, 20], vec![100]);
        assert_eq!(l.beyond(15), 3);
        assert!((l.survive(0, 15) - 0.75).abs() < 1e-12);
        // min(L, 25) over 10, 20, 25 and the censored 25
        assert!((l.mean_min(0, 25) - 20.0).abs() < 1e-12);
        // beyond 15: 20, 30 dead (one alive, fewer): (5 + 15) / 2
        assert_eq!(l.mean_excess(15), 10);
        assert_eq!(Lives::new(vec![20], vec![30, 40]).mean_excess(15), NEVER);
        // A censored record younger than the question is left out.
        let young = Lives::new(vec![10, 40], vec![12]);
        assert!((young.survive(0, 20) - 0.5).abs() < 1e-12);
        assert_eq!(Lives::new(vec![5], vec![]).mean_excess(10), NEVER);
    }

    #[test]
    fn masks_and_choices() {
        assert_eq!(ranges(0), vec![(0, 9)]);
        assert_eq!(ranges(MASKS - 1).len(), 10);
        let bounds: Vec<u64> = (1..10).map(|k| k * 100).collect();
        let c = choice(0b10, &bounds, 1.0);
        assert_eq!(c.uppers, vec![200]);
        assert_eq!(c.group_of[..3], [0, 0, 1]);
        assert_eq!(c.groups(), 2);
        assert_eq!(Choice::identity(&bounds).groups(), 10);
    }

    /// Perfect predictions of short lives: separating them is worth it; a
    /// model that puts long lives in a short category is not.
    #[test]
    fn accuracy_decides_the_group_count() {
        let bounds: Vec<u64> = (0..9).map(|k| 100u64 << k).collect();
        let exact = PLog::new(
            (0..500)
                .map(|i| (0u8, 10 + i % 80, false))
                .chain((0..500).map(|_| (9u8, 100_000, true))),
        );
        for model in [Model::Chain, Model::Flow] {
            let c = search(&exact, &bounds, &inputs(), model).unwrap();
            assert!(c.groups() >= 2, "{c:?}");
            assert_eq!(c.group_of[0], 0);
            assert_eq!(c.group_of[9] as usize, c.groups() - 1);
            let split = estimate(&exact, &bounds, 1, &inputs(), model).unwrap();
            let merged = estimate(&exact, &bounds, 0, &inputs(), model).unwrap();
            assert!(split.waf < merged.waf, "{split:?} vs {merged:?}");
            // Category 0 is a coin toss between 50 and never: separating
            // it copies half its blocks.
            let noisy = PLog::new(
                (0..500)
                    .map(|i| (0u8, if i % 2 == 0 { 50 } else { 100_000 }, i % 2 == 1))
                    .chain((0..500).map(|_| (9u8, 100_000, true))),
            );
            let split_noisy = estimate(&noisy, &bounds, 1, &inputs(), model).unwrap();
            assert!(split_noisy.waf > split.waf, "{split_noisy:?} vs {split:?}");
            assert!((split_noisy.valid_ratio[0] - 0.5).abs() < 1e-9);
        }
    }

    #[test]
    fn groups_below_the_traffic_threshold_are_dropped() {
        let bounds: Vec<u64> = (0..9).map(|k| 100u64 << k).collect();
        // Category 0 holds 1 record in 10,000: under 0.05%.
        let log = PLog::new(
            std::iter::once((0u8, 10, false)).chain((0..9_999).map(|_| (9u8, 100_000, true))),
        );
        assert!(estimate(&log, &bounds, 1, &inputs(), Model::Chain).is_none());
        assert!(estimate(&log, &bounds, 0, &inputs(), Model::Chain).is_some());
    }

    /// The stationary formula is the chain iterated to its steady state
    /// (as the artifact reads it), with G_hot in front.
    #[test]
    fn stationary_waf_is_the_iterated_chain() {
        let bounds: Vec<u64> = (0..9).map(|k| 100u64 << k).collect();
        let log = PLog::new(
            (0..600)
                .map(|i| (0u8, 20 + i % 150, false))
                .chain((0..300).map(|i| (3u8, 300 + 7 * i, false)))
                .chain((0..400).map(|_| (9u8, 1_000_000, true))),
        );
        let inp = Inputs {
            hot_share: 0.3,
            hot_valid_ratio: 0.1,
            ..inputs()
        };
        let mask = 0b1001; // G1 = c1, G2 = c2..c4, G3 = c5..c10
        let e = estimate(&log, &bounds, mask, &inp, Model::Chain).unwrap();
        let total = log.len() as f64;
        let w: Vec<f64> = [(0, 0), (1, 3), (4, 9)]
            .iter()
            .map(|&(a, b)| log.range(a, b).total() as f64 / total)
            .collect();
        let user = [inp.hot_share, 0.7 * w[0], 0.7 * w[1], 0.7 * w[2]];
        // G1's valid ratio mixes the dying hot overflow with its own survival.
        let next = [inp.hot_valid_ratio, e.valid_ratio[0], e.valid_ratio[1], 0.0];
        let stay = [0.0, 0.0, 0.0, e.valid_ratio[2]];
        let iterated = chain_waf(&user, &next, &stay, 20_000);
        assert!(
            (iterated - e.waf).abs() < 1e-6 * e.waf,
            "{iterated} vs {}",
            e.waf
        );
    }

    #[test]
    fn the_budget_charges_the_reserve_and_open_segments() {
        let bounds: Vec<u64> = (0..9).map(|k| 100u64 << k).collect();
        let log = PLog::new((0..100).map(|_| (9u8, 1_000_000, true)));
        let tight = Inputs {
            reserve: 20.0,
            ..inputs()
        };
        let a = estimate(&log, &bounds, 0, &inputs(), Model::Chain).unwrap();
        let b = estimate(&log, &bounds, 0, &tight, Model::Chain).unwrap();
        assert!(b.pool_spare < a.pool_spare && b.waf > a.waf);
        // 687.5 segments of 16 blocks, less the reserve (2), G_hot's and
        // G1's open segments, hold 10,000 valid blocks.
        assert!(
            (a.pool_spare - 683.5 * 16.0 / 10_000.0).abs() < 1e-9,
            "{a:?}"
        );
    }

    #[test]
    fn relocation_follows_the_mean_remaining_lifetime() {
        let bounds: Vec<u64> = (0..9).map(|k| 100u64 << k).collect();
        let c = choice(MASKS - 1, &bounds, 1.0);
        // Category 0 (bound 100): survivors die at 150 on average: 50 more.
        let log = PLog::new((0..10).map(|i| (0u8, if i < 5 { 50 } else { 150 }, false)));
        assert_eq!(relocation(&log, &c)[0], 0, "back to G1");
        let log = PLog::new((0..10).map(|i| (0u8, if i < 5 { 50 } else { 450 }, false)));
        assert_eq!(relocation(&log, &c)[0], 2, "350 more: G3 = [200, 400)");
    }
}
