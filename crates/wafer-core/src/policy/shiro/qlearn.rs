//! Reinforcement-learning GC migration (Shiro §III-C, Table I): a
//! Q-learning agent sends each valid page GC moves to one of the GC levels.
//!
//! * **State** (Table I; 25 × 25 × 8 × 3 × 6 = 90,000 with 5 levels): the
//!   page's current lifetime (pages since its last user write) in
//!   power-of-two bins [1, 2), [2, 4), ... (bin min(⌊log2 max(a, 1)⌋, 24));
//!   the victim's valid proportion in bins of 0.04 (min(⌊v/0.04⌋, 24)); the
//!   victim's type (3 user types, then the GC levels); the page's last
//!   prediction (short, long, unseen); its previous GC destination (or
//!   "never GC'ed").
//! * **Action**: a GC level. ε-greedy: with probability ε a uniform level,
//!   else the best by Q (ties: the lowest level).
//! * **Reward**: the mean invalid proportion of the victims of the next
//!   `horizon` (200) GC operations. Every decision of GC g shares
//!   r_g = (I_{g+1} + ... + I_{g+200}) / 200, known when GC g + 200 ends;
//!   only then are GC g's decisions updated (the delay).
//! * **Update** (the paper gives neither rate nor discount, nor a next
//!   state): Q[s][a] += α (r_g - Q[s][a]), once per distinct (s, a) of a
//!   GC (`per_pair`), or once per page. With r looking 200 GCs ahead, no
//!   bootstrapped next state is needed (γ = 0).
//! * **Initialisation**: the hierarchical migration the paper describes:
//!   pages of user victims go to level 0, pages of level-k victims to level
//!   min(k + 1, last); Q = 1 for that action and 0 for the others.
//!
//! The Q-table is f32 (the paper's 439 KB is one byte per entry).

use std::collections::VecDeque;

use serde::Serialize;

use crate::rng::Rng;

/// Bins of the lifetime and valid-proportion components.
pub const BINS: usize = 25;
/// Prediction states: short, long, unseen.
pub const PREDICTIONS: usize = 3;
/// User superblock types: SHORT, LONG, UNSEEN.
pub const USER_TYPES: usize = 3;

/// Lifetime bin of a page `age` pages old.
#[inline(always)]
pub fn age_bin(age: u64) -> usize {
    (63 - age.max(1).leading_zeros() as usize).min(BINS - 1)
}

/// Valid-proportion bin of a victim with `valid` of `blocks` valid.
#[inline(always)]
pub fn valid_bin(valid: u32, blocks: u32) -> usize {
    // ⌊(v/b)/0.04⌋ = ⌊25 v / b⌋, exact in integers.
    ((valid as u64 * BINS as u64) / blocks.max(1) as u64).min(BINS as u64 - 1) as usize
}

/// One page's state components.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct State {
    /// Pages since its last user write.
    pub age: u64,
    /// Valid blocks of the victim.
    pub victim_valid: u32,
    /// Blocks per segment.
    pub segment_blocks: u32,
    /// Victim type: 0..3 user (SHORT, LONG, UNSEEN), 3.. GC levels.
    pub victim_type: usize,
    /// Last prediction: 0 short, 1 long, 2 unseen.
    pub prediction: usize,
    /// Previous GC destination, or `levels` if never GC'ed.
    pub previous: usize,
}

/// How many times the table was updated and decisions were made.
#[derive(Clone, Copy, Debug, Default, Serialize, serde::Deserialize)]
pub struct AgentStats {
    /// Pages decided.
    pub decisions: u64,
    /// Of those, explored (random level).
    pub explored: u64,
    /// Q-table updates applied.
    pub updates: u64,
    /// GC operations whose reward arrived.
    pub rewarded_gcs: u64,
}

/// The agent.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Agent {
    levels: usize,
    q: Vec<f32>,
    epsilon: f64,
    alpha: f32,
    horizon: u64,
    per_pair: bool,
    rng: Rng,
    /// GC operations finished.
    gcs: u64,
    /// Sum of the invalid proportions of all finished GCs.
    cum: f64,
    /// Per finished GC awaiting its reward: cumulative sum at its end and
    /// how many (s, a) pairs it recorded.
    pending: VecDeque<(f64, u32)>,
    /// The pairs of the pending GCs, oldest first, as s·levels + a.
    pairs: VecDeque<u32>,
    /// Pairs of the GC in progress.
    current: Vec<u32>,
    /// Per (s, a): 1 + the GC that last recorded it (per-pair dedup).
    stamp: Vec<u32>,
    /// Decisions per level.
    pub actions: Vec<u64>,
    /// Counts.
    pub stats: AgentStats,
}

impl Agent {
    /// An agent over `levels` GC levels with exploration `epsilon`, rate
    /// `alpha`, reward horizon `horizon` GCs, seeded.
    pub fn new(
        levels: usize,
        epsilon: f64,
        alpha: f64,
        horizon: u64,
        per_pair: bool,
        seed: u64,
    ) -> Self {
        let n = Self::states(levels);
        let mut q = vec![0f32; n * levels];
        let types = USER_TYPES + levels;
        for s in 0..n {
            // The victim type is the third component (see `index`).
            let t = (s / (PREDICTIONS * (levels + 1))) % types;
            let a = if t < USER_TYPES {
                0
            } else {
                (t - USER_TYPES + 1).min(levels - 1)
            };
            q[s * levels + a] = 1.0;
        }
        Agent {
            levels,
            q,
            epsilon,
            alpha: alpha as f32,
            horizon: horizon.max(1),
            per_pair,
            rng: Rng::new(seed ^ 0x51_u64),
            gcs: 0,
            cum: 0.0,
            pending: VecDeque::new(),
            pairs: VecDeque::new(),
            current: Vec::new(),
            stamp: if per_pair {
                vec![0; n * levels]
            } else {
                Vec::new()
            },
            actions: vec![0; levels],
            stats: AgentStats::default(),
        }
    }

    /// States with `levels` GC levels (90,000 for 5).
    pub fn states(levels: usize) -> usize {
        BINS * BINS * (USER_TYPES + levels) * PREDICTIONS * (levels + 1)
    }

    /// Index of a state: ((((age·25 + valid)·types + type)·3 + prediction)·(L+1) + previous.
    pub fn index(&self, s: &State) -> usize {
        let types = USER_TYPES + self.levels;
        (((age_bin(s.age) * BINS + valid_bin(s.victim_valid, s.segment_blocks)) * types
            + s.victim_type.min(types - 1))
            * PREDICTIONS
            + s.prediction.min(PREDICTIONS - 1))
            * (self.levels + 1)
            + s.previous.min(self.levels)
    }

    /// Q-values of state index `s`.
    pub fn q(&self, s: usize) -> &[f32] {
        &self.q[s * self.levels..(s + 1) * self.levels]
    }

    /// The level for a page in state `s` (ε-greedy), recorded for the
    /// current GC's reward.
    #[inline]
    pub fn act(&mut self, s: &State) -> usize {
        let i = self.index(s);
        self.stats.decisions += 1;
        let a = if self.epsilon > 0.0 && self.rng.next_f64() < self.epsilon {
            self.stats.explored += 1;
            self.rng.below(self.levels as u64) as usize
        } else {
            let q = self.q(i);
            let mut best = 0;
            for (k, &v) in q.iter().enumerate() {
                if v > q[best] {
                    best = k;
                }
            }
            best
        };
        self.actions[a] += 1;
        let pair = (i * self.levels + a) as u32;
        if self.per_pair {
            let tag = (self.gcs + 1) as u32;
            if self.stamp[pair as usize] == tag {
                return a;
            }
            self.stamp[pair as usize] = tag;
        }
        self.current.push(pair);
        a
    }

    /// A GC operation ended, its victim `invalid` (proportion) invalid:
    /// the decisions of the GC `horizon` operations back get their reward.
    pub fn gc_done(&mut self, invalid: f64) {
        self.gcs += 1;
        self.cum += invalid;
        self.pending
            .push_back((self.cum, self.current.len() as u32));
        self.pairs.extend(self.current.drain(..));
        if self.pending.len() as u64 > self.horizon {
            let (before, n) = self.pending.pop_front().expect("pending GC");
            let r = ((self.cum - before) / self.horizon as f64) as f32;
            for _ in 0..n {
                let p = self.pairs.pop_front().expect("recorded pair") as usize;
                self.q[p] += self.alpha * (r - self.q[p]);
                self.stats.updates += 1;
            }
            self.stats.rewarded_gcs += 1;
        }
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.q.capacity() * 4
            + self.stamp.capacity() * 4
            + self.pairs.capacity() * 4
            + self.pending.capacity() * 16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(age: u64, valid: u32, victim_type: usize, prediction: usize, previous: usize) -> State {
        State {
            age,
            victim_valid: valid,
            segment_blocks: 100,
            victim_type,
            prediction,
            previous,
        }
    }

    #[test]
    fn table_1_bins_and_state_count() {
        assert_eq!(Agent::states(5), 90_000);
        assert_eq!(
            (age_bin(0), age_bin(1), age_bin(2), age_bin(3), age_bin(4)),
            (0, 0, 1, 1, 2)
        );
        assert_eq!(age_bin(1 << 30), 24, "the last bin is open-ended");
        assert_eq!(
            (valid_bin(3, 100), valid_bin(4, 100), valid_bin(100, 100)),
            (0, 1, 24)
        );
        let a = Agent::new(5, 0.0, 0.1, 200, true, 1);
        let last = a.index(&st(u64::MAX, 100, 7, 2, 5));
        assert_eq!(last, 89_999);
        assert_eq!(a.index(&st(1, 0, 0, 0, 0)), 0);
    }

    #[test]
    fn starts_hierarchical() {
        let mut a = Agent::new(5, 0.0, 0.1, 200, true, 1);
        // User victims (types 0..3) -> level 0; level k -> k + 1, the last stays.
        for (t, want) in [(0, 0), (1, 0), (2, 0), (3, 1), (4, 2), (6, 4), (7, 4)] {
            assert_eq!(a.act(&st(50, 30, t, 1, 5)), want, "type {t}");
        }
    }

    #[test]
    fn rewards_arrive_200_gcs_later_once_per_pair() {
        let mut a = Agent::new(5, 0.0, 0.5, 200, true, 1);
        let s = st(10, 50, 3, 0, 5); // a GC0 victim: level 1 first
        let i = a.index(&s);
        // GC 1: the same (s, a) three times: one pair.
        for _ in 0..3 {
            assert_eq!(a.act(&s), 1);
        }
        a.gc_done(0.1);
        // GCs 2..=200: nothing is updated yet.
        for _ in 2..=200 {
            a.gc_done(0.5);
        }
        assert_eq!(a.q(i)[1], 1.0, "no reward before GC 201");
        assert_eq!(a.stats.updates, 0);
        // GC 201 ends: r_1 = mean(I_2..I_201) = (199·0.5 + 0.9)/200.
        a.gc_done(0.9);
        let r = (199.0 * 0.5 + 0.9) / 200.0;
        let want = 1.0 + 0.5 * (r - 1.0);
        assert!(
            (a.q(i)[1] as f64 - want).abs() < 1e-6,
            "{} vs {want}",
            a.q(i)[1]
        );
        assert_eq!(a.stats.updates, 1, "one update per distinct pair");
        assert_eq!(a.stats.rewarded_gcs, 1);
        // Per page: three updates for three decisions.
        let mut b = Agent::new(5, 0.0, 0.5, 2, false, 1);
        for _ in 0..3 {
            b.act(&s);
        }
        for _ in 0..3 {
            b.gc_done(0.2);
        }
        assert_eq!(b.stats.updates, 3);
        // r = 0.2 three times from 1.0 at rate 0.5: 1 -> 0.6 -> 0.4 -> 0.3.
        assert!((b.q(i)[1] - 0.3).abs() < 1e-6);
    }

    #[test]
    fn learns_the_better_level_and_explores_at_epsilon() {
        let mut a = Agent::new(5, 0.0, 0.5, 1, true, 1);
        let s = st(10, 50, 0, 1, 5);
        let i = a.index(&s);
        // Level 0 (the initial choice) keeps being rewarded 0: its Q falls
        // below level 1's once level 1 is tried and rewarded 0.8.
        a.q[i * 5 + 1] = 0.7;
        a.act(&s);
        a.gc_done(0.0);
        a.gc_done(0.0); // GC 1's reward (mean of GC 2 = 0): Q[s][0] = 0.5
        assert_eq!(a.act(&s), 1, "level 1 now scores higher");
        let mut e = Agent::new(5, 0.01, 0.1, 200, true, 7);
        for _ in 0..100_000 {
            e.act(&s);
        }
        let share = e.stats.explored as f64 / 1e5;
        assert!((share - 0.01).abs() < 0.002, "{share}");
    }
}
