//! DOGI's prediction-accuracy-aware group configuration (§4.3) and the
//! remaining-lifetime table of ML-Reloc (§4.4), both read from the
//! prediction log (PLog): pairs <predicted category, actual lifetime> of
//! the latest sampled non-hot blocks.
//!
//! A configuration merges the ten categories c1..c10 into N consecutive
//! intermediate groups: each of the nine category boundaries is kept or
//! dropped, 2^9 = 512 candidates, all evaluated. Group j's BIR is
//! `[U_{j-1}, U_j)` where U_j is the upper bound of its last category.
//!
//! The paper's Markov-chain model is "modified for DOGI (details omitted)";
//! ours follows the flow of blocks through the groups under DOGI's rules,
//! per user-written block (one unit of logical time), in steady state:
//! * group j < N receives the share λ_j of the non-hot user writes that the
//!   model puts in its categories (PLog); its segments are collected when
//!   they expire, after U_j, so the blocks of its categories that live
//!   longer (P(L > U_j), the misprediction ratio of PLog's Fig. 8) are
//!   copied. ML-Reloc sends them to the group holding their mean remaining
//!   lifetime; survivors of that group are copied again, age-based, to the
//!   next group, and so on down the chain;
//! * a group j < N occupies its inflow times U_j blocks (plus its open
//!   segment) and holds, by Little's law, its inflow times E[min(R, U_j)]
//!   valid blocks, R the remaining lifetime of each flow;
//! * GN and the frozen group share the rest of the device as one pool
//!   collected by fewest-valid: its WAF is the greedy FIFO model's at the
//!   pool's spare factor (physical / valid blocks; the hot/cold model of
//!   MiDAS's MCAM with an even split), applied to its inflow;
//! * the hot group is the same for every candidate: its measured occupancy,
//!   valid blocks and copies enter as constants.
//!
//! WAF = 1 + all copies per user write; a candidate whose pool cannot hold
//! its valid blocks is infeasible. Fewer groups win ties.

use crate::future::NEVER;
use crate::policy::midas::model::last_group_waf;

/// Categories of the ML model.
pub const CLASSES: usize = 10;

/// Sorted values with prefix sums.
#[derive(Clone, Debug, Default)]
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
#[derive(Clone, Debug, Default)]
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
}

/// What the hot group and the device look like now (the same for every
/// candidate), per user write where a rate.
#[derive(Clone, Copy, Debug)]
pub struct Inputs {
    /// Share of user writes the hot filter sends to G_hot.
    pub hot_share: f64,
    /// Blocks G_hot occupies (its segments).
    pub hot_blocks: f64,
    /// Valid blocks in G_hot.
    pub hot_valid: f64,
    /// Blocks GC copies out of G_hot per user write.
    pub hot_copies: f64,
    /// Physical blocks of the device.
    pub physical: f64,
    /// Valid blocks on the device.
    pub valid: f64,
    /// Blocks per segment.
    pub segment: f64,
}

/// A chosen configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    /// Intermediate group of each category.
    pub group_of: [u8; CLASSES],
    /// Upper BIR bounds of G1..G(N-1) [user blocks].
    pub uppers: Vec<u64>,
    /// Estimated WAF.
    pub waf: f64,
}

impl Choice {
    /// Groups in the configuration.
    pub fn groups(&self) -> usize {
        self.uppers.len() + 1
    }

    /// One group per category (DOGI's initial configuration, §4.3).
    pub fn identity(bounds: &[u64]) -> Self {
        let mut group_of = [0u8; CLASSES];
        for (k, g) in group_of.iter_mut().enumerate() {
            *g = k as u8;
        }
        Choice {
            group_of,
            uppers: bounds.to_vec(),
            waf: f64::NAN,
        }
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

/// Estimated WAF of the configuration `mask` under `bounds` (the nine
/// category upper bounds), or `None` if infeasible.
pub fn estimate(log: &PLog, bounds: &[u64], mask: u32, inp: &Inputs) -> Option<f64> {
    let groups = ranges(mask);
    let n = groups.len();
    let upper = |j: usize| {
        if j + 1 < n {
            bounds[groups[j].1]
        } else {
            NEVER
        }
    };
    let total = log.len().max(1) as f64;
    let nonhot = 1.0 - inp.hot_share;
    let (mut inflow, mut valid) = (vec![0.0; n], vec![0.0; n]);
    let mut copies = inp.hot_copies;
    for (j, &(a, b)) in groups.iter().enumerate() {
        let lives = log.range(a, b);
        let lam = nonhot * lives.total() as f64 / total;
        if j + 1 == n {
            inflow[j] += lam;
            continue;
        }
        // The user flow, then its copies down the chain.
        let (mut g, mut f, mut t) = (j, lam, 0u64);
        let mut relocated = false;
        while g + 1 < n && f > 1e-12 {
            let u = upper(g);
            inflow[g] += f;
            valid[g] += f * lives.mean_min(t, u);
            let out = f * lives.survive(t, t.saturating_add(u));
            copies += out;
            let rem_from = t.saturating_add(u);
            g = if relocated {
                g + 1
            } else {
                relocated = true;
                let r = lives.mean_excess(rem_from);
                (0..n).find(|&k| r < upper(k)).unwrap_or(n - 1)
            };
            f = out;
            t = rem_from;
        }
        if g + 1 == n {
            inflow[n - 1] += f;
        }
    }
    let mut space = inp.physical - inp.hot_blocks - 2.0 * inp.segment;
    let mut pool_valid = inp.valid - inp.hot_valid;
    for j in 0..n - 1 {
        space -= inflow[j] * upper(j) as f64 + inp.segment;
        pool_valid -= valid[j];
    }
    if pool_valid <= 0.0 {
        return Some(1.0 + copies);
    }
    let w = last_group_waf(space / pool_valid, 0.5, 0.5, inp.segment)?;
    Some(1.0 + copies + inflow[n - 1] * (w - 1.0))
}

/// The best of the 512 configurations (fewer groups first on ties);
/// `None` if none is feasible.
pub fn search(log: &PLog, bounds: &[u64], inp: &Inputs) -> Option<Choice> {
    let mut best: Option<(f64, usize, u32)> = None;
    for mask in 0..1u32 << (CLASSES - 1) {
        let Some(w) = estimate(log, bounds, mask, inp) else {
            continue;
        };
        let n = mask.count_ones() as usize + 1;
        if best.is_none_or(|(bw, bn, _)| w < bw - 1e-9 || (w <= bw + 1e-9 && n < bn)) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs() -> Inputs {
        Inputs {
            hot_share: 0.0,
            hot_blocks: 0.0,
            hot_valid: 0.0,
            hot_copies: 0.0,
            physical: 11_000.0,
            valid: 10_000.0,
            segment: 16.0,
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
        assert_eq!(ranges(0b1_1111_1111).len(), 10);
        let bounds: Vec<u64> = (1..10).map(|k| k * 100).collect();
        let c = choice(0b10, &bounds, 1.0);
        assert_eq!(c.uppers, vec![200]);
        assert_eq!(c.group_of[..3], [0, 0, 1]);
        assert_eq!(c.groups(), 2);
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
        let c = search(&exact, &bounds, &inputs()).unwrap();
        assert!(c.groups() >= 2, "{c:?}");
        assert_eq!(c.group_of[0], 0);
        assert_eq!(c.group_of[9] as usize, c.groups() - 1);
        let split = estimate(&exact, &bounds, 1, &inputs()).unwrap();
        let merged = estimate(&exact, &bounds, 0, &inputs()).unwrap();
        assert!(split < merged, "{split} vs {merged}");
        // Category 0 is a coin toss between 50 and never: separating it
        // copies half its blocks.
        let noisy = PLog::new(
            (0..500)
                .map(|i| (0u8, if i % 2 == 0 { 50 } else { 100_000 }, i % 2 == 1))
                .chain((0..500).map(|_| (9u8, 100_000, true))),
        );
        let split_noisy = estimate(&noisy, &bounds, 1, &inputs()).unwrap();
        assert!(split_noisy > split, "{split_noisy} vs {split}");
    }

    #[test]
    fn relocation_follows_the_mean_remaining_lifetime() {
        let bounds: Vec<u64> = (0..9).map(|k| 100u64 << k).collect();
        let c = choice(0b1_1111_1111, &bounds, 1.0);
        // Category 0 (bound 100): survivors die at 150 on average: 50 more.
        let log = PLog::new((0..10).map(|i| (0u8, if i < 5 { 50 } else { 150 }, false)));
        assert_eq!(relocation(&log, &c)[0], 0, "back to G1");
        let log = PLog::new((0..10).map(|i| (0u8, if i < 5 { 50 } else { 450 }, false)));
        assert_eq!(relocation(&log, &c)[0], 2, "350 more: G3 = [200, 400)");
    }
}
