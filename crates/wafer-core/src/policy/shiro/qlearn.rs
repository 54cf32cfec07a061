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
//! * **Credit** (`q_credit`): `gc` gives every decision of GC g that
//!   shared r_g, as the paper's sentence reads; but then no decision is
//!   told apart from the others of its GC (all pages of one GC get the same
//!   reward, so exploration learns nothing). `decision` (the default) keeps
//!   the reward's measure, the invalid proportion of a victim, and the
//!   delay, but takes it per decision from the superblock the decision
//!   filled: r = 1 - valid/fill of the page's destination superblock when
//!   it is collected, or, if it was not collected within `horizon` GCs of
//!   the decision, at that point (valid over the slots written so far).
//!   The update is applied `horizon` GCs after the decision either way.
//! * **Update** (the paper gives neither rate nor discount, nor a next
//!   state): Q[s][a] += α (r - Q[s][a]), once per distinct (s, a) of a
//!   GC (`per_pair`; with `decision` credit, the first such decision's
//!   destination), or once per page. With r looking 200 GCs ahead, no
//!   bootstrapped next state is needed (γ = 0).
//! * **Initialisation**: the hierarchical migration the paper describes:
//!   pages of user victims go to level 0, pages of level-k victims to level
//!   min(k + 1, last); Q = 1 for that action and 0 for the others.
//!
//! The Q-table is f32 (the paper's 439 KB is one byte per entry).

use std::collections::VecDeque;

use serde::Serialize;

use crate::ftl::{Ftl, SegState, SegmentId};
use crate::rng::Rng;

/// Whose outcome rewards a migration decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Credit {
    /// The mean invalid share of the next `horizon` victims, shared by every
    /// decision of a GC (§III-C's sentence).
    Gc,
    /// The invalid share of the decision's own destination superblock,
    /// when it is collected or at the horizon.
    Decision,
    /// The invalid share of the destination superblock when it is
    /// collected, applied no sooner than the horizon.
    Collected,
}

/// A decision waiting for its reward (`Credit::Decision`).
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
struct Pending {
    /// s·levels + a.
    pair: u32,
    /// Destination superblock and its erase count then (its incarnation).
    seg: SegmentId,
    erases: u32,
}

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
    credit: Credit,
    /// `Decision`: the last decision, until its page's destination is known.
    last: Option<u32>,
    /// `Decision`: decisions by GC, oldest first, with their destinations.
    decided: VecDeque<Pending>,
    /// `Decision`: decisions per pending GC.
    per_gc: VecDeque<u32>,
    /// `Decision`: per superblock, 1 + the erase count of the incarnation
    /// that holds pending decisions (0: none).
    holds: Vec<u32>,
    /// `Decision`: per superblock, (erase count, reward) of its collections
    /// that pending decisions still wait for, oldest first.
    outcomes: Vec<VecDeque<(u32, f32)>>,
    /// `Collected`: per superblock, the decisions that filled it since its
    /// last erase: (pair, GC count when decided).
    waiting: Vec<Vec<(u32, u64)>>,
    /// `Collected`: rewards known before their horizon: (due GC, pair,
    /// reward bits), earliest first.
    deferred: std::collections::BinaryHeap<std::cmp::Reverse<(u64, u32, u32)>>,
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
        Self::with_credit(
            levels,
            epsilon,
            alpha,
            horizon,
            per_pair,
            seed,
            Credit::Gc,
            0,
        )
    }

    /// [`Agent::new`] with `credit`, on a device of `segments` superblocks.
    #[allow(clippy::too_many_arguments)]
    pub fn with_credit(
        levels: usize,
        epsilon: f64,
        alpha: f64,
        horizon: u64,
        per_pair: bool,
        seed: u64,
        credit: Credit,
        segments: usize,
    ) -> Self {
        let decision = credit == Credit::Decision;
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
            credit,
            last: None,
            decided: VecDeque::new(),
            per_gc: VecDeque::new(),
            holds: if decision {
                vec![0; segments]
            } else {
                Vec::new()
            },
            outcomes: if decision {
                vec![VecDeque::new(); segments]
            } else {
                Vec::new()
            },
            waiting: if credit == Credit::Collected {
                vec![Vec::new(); segments]
            } else {
                Vec::new()
            },
            deferred: Default::default(),
        }
    }

    /// How decisions are credited.
    pub fn credit(&self) -> Credit {
        self.credit
    }

    /// The mean of the Q table (what the rewards moved it to; reported).
    pub fn q_mean(&self) -> f64 {
        self.q.iter().map(|&v| v as f64).sum::<f64>() / self.q.len().max(1) as f64
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
        match self.credit {
            Credit::Gc => self.current.push(pair),
            Credit::Decision | Credit::Collected => self.last = Some(pair),
        }
        a
    }

    /// `Credit::Decision`: the page of the last decision was written to
    /// `seg` (erased `erases` times so far).
    pub fn placed(&mut self, seg: SegmentId, erases: u32) {
        let Some(pair) = self.last.take() else { return };
        match self.credit {
            // The decision belongs to the GC under way (number gcs + 1), as
            // with the other credits: due when GC gcs + 1 + horizon ends.
            Credit::Collected => self.waiting[seg as usize].push((pair, self.gcs + 1)),
            _ => {
                self.decided.push_back(Pending { pair, seg, erases });
                self.holds[seg as usize] = erases + 1;
            }
        }
    }

    fn update(&mut self, pair: u32, r: f32) {
        let p = pair as usize;
        self.q[p] += self.alpha * (r - self.q[p]);
        self.stats.updates += 1;
    }

    fn collected_gc_done(&mut self, seg: SegmentId, invalid: f64) {
        let r = invalid as f32;
        self.gcs += 1;
        for (pair, at) in std::mem::take(&mut self.waiting[seg as usize]) {
            let due = at + self.horizon;
            if due <= self.gcs {
                self.update(pair, r);
            } else {
                self.deferred
                    .push(std::cmp::Reverse((due, pair, r.to_bits())));
            }
        }
        while let Some(&std::cmp::Reverse((due, pair, bits))) = self.deferred.peek() {
            if due > self.gcs {
                break;
            }
            self.deferred.pop();
            self.update(pair, f32::from_bits(bits));
        }
        self.stats.rewarded_gcs += 1;
    }

    /// The invalid share of `seg` now, over the slots written: its reward if
    /// it has not been collected since the decision.
    fn share(ftl: &Ftl, seg: SegmentId) -> f32 {
        let i = seg as usize;
        let mut fill = ftl.geo.segment_blocks;
        if ftl.segs.state[i] == SegState::Open {
            if let Some(g) = ftl.groups.get(ftl.segs.group[i] as usize) {
                if g.open == seg {
                    fill = g.next;
                }
            }
        }
        let fill = fill.max(1);
        1.0 - ftl.segs.valid[i].min(fill) as f32 / fill as f32
    }

    /// A GC operation ended, its victim `seg` of `ftl` (not erased yet)
    /// `invalid` (proportion) invalid: the decisions of the GC `horizon`
    /// operations back get their reward.
    pub fn collected(&mut self, ftl: &Ftl, seg: SegmentId, invalid: f64) {
        match self.credit {
            Credit::Gc => self.gc_done(invalid),
            Credit::Decision => self.decision_gc_done(ftl, seg, invalid),
            Credit::Collected => self.collected_gc_done(seg, invalid),
        }
    }

    fn decision_gc_done(&mut self, ftl: &Ftl, seg: SegmentId, invalid: f64) {
        let i = seg as usize;
        let erases = ftl.segs.erase_count[i];
        if self.holds[i] == erases + 1 {
            self.outcomes[i].push_back((erases, invalid as f32));
            self.holds[i] = 0;
        }
        self.gcs += 1;
        let before: usize = self.per_gc.iter().map(|&n| n as usize).sum();
        self.per_gc.push_back((self.decided.len() - before) as u32);
        if self.per_gc.len() as u64 > self.horizon {
            let n = self.per_gc.pop_front().expect("pending GC");
            for _ in 0..n {
                let d = self.decided.pop_front().expect("pending decision");
                let s = d.seg as usize;
                let r = if ftl.segs.erase_count[s] == d.erases {
                    Self::share(ftl, d.seg)
                } else {
                    let out = &mut self.outcomes[s];
                    while out.front().is_some_and(|&(e, _)| e < d.erases) {
                        out.pop_front();
                    }
                    debug_assert!(out.front().is_some_and(|&(e, _)| e == d.erases));
                    out.front().map_or(0.0, |&(_, r)| r)
                };
                let p = d.pair as usize;
                self.q[p] += self.alpha * (r - self.q[p]);
                self.stats.updates += 1;
            }
            self.stats.rewarded_gcs += 1;
        }
    }

    /// [`Agent::collected`] with the paper's shared reward (`Credit::Gc`).
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
            + self.decided.capacity() * 12
            + self.per_gc.capacity() * 4
            + self.holds.capacity() * 4
            + self
                .outcomes
                .iter()
                .map(|o| 32 + o.capacity() * 8)
                .sum::<usize>()
            + self
                .waiting
                .iter()
                .map(|w| 24 + w.capacity() * 16)
                .sum::<usize>()
            + self.deferred.capacity() * 16
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
    fn decision_credit_rewards_each_decision_by_its_destination() {
        use crate::device::DeviceConfig;
        let geo = DeviceConfig {
            logical_blocks: 64,
            segment_blocks: 8,
            op: 1.0,
            ..Default::default()
        }
        .geometry()
        .unwrap();
        let mut ftl = Ftl::new(geo, 8);
        let n = geo.segments as usize;
        let mut a = Agent::with_credit(5, 0.0, 0.5, 2, true, 1, Credit::Decision, n);
        let other = n as SegmentId - 1; // a victim no decision wrote to
                                        // GC 1: a page of a GC0 victim (level 1) lands in segment x, one of
                                        // a GC1 victim (level 2) in segment y.
        let (s1, s2) = (st(10, 50, 3, 0, 5), st(10, 50, 4, 0, 5));
        let (i1, i2) = (a.index(&s1), a.index(&s2));
        assert_eq!(a.act(&s1), 1);
        let (p1, _) = ftl.append(4, 0).unwrap();
        let x = ftl.segment_of(p1);
        a.placed(x, 0);
        assert_eq!(a.act(&s2), 2);
        let (p2, _) = ftl.append(5, 1).unwrap();
        let y = ftl.segment_of(p2);
        a.placed(y, 0);
        // x fills up (8 pages) and 6 of them die; y holds 4 pages, 1 dead.
        for lba in 2..9 {
            ftl.append(4, lba).unwrap();
        }
        for lba in 2..5 {
            ftl.append(5, lba + 20).unwrap();
        }
        for lba in [0, 2, 3, 4, 5, 6] {
            let p = ftl.lookup(lba).unwrap();
            ftl.invalidate(p);
        }
        ftl.invalidate(ftl.lookup(1).unwrap());
        a.collected(&ftl, other, 0.5); // GC 1's own victim
        assert_eq!(a.stats.updates, 0);
        // GC 2 collects x (6 of 8 invalid); its decisions' reward is fixed.
        a.collected(&ftl, x, 0.75);
        ftl.erase(x);
        assert_eq!(a.stats.updates, 0, "the 200-GC delay (here 2)");
        // GC 3: GC 1's decisions are rewarded, each by its destination.
        a.collected(&ftl, other, 0.5);
        assert_eq!(a.stats.updates, 2);
        assert!((a.q(i1)[1] - (1.0 + 0.5 * (0.75 - 1.0))).abs() < 1e-6);
        // y is still open: 1 of its 4 written pages is invalid.
        assert!((a.q(i2)[2] - (1.0 + 0.5 * (0.25 - 1.0))).abs() < 1e-6);
        // `Collected`: only a collected destination rewards, no sooner than
        // the horizon; y, never collected, leaves its decision alone.
        let mut c = Agent::with_credit(5, 0.0, 0.5, 2, true, 1, Credit::Collected, n);
        c.act(&s1);
        c.placed(x, 0);
        c.act(&s2);
        c.placed(y, 0);
        c.collected(&ftl, other, 0.5); // GC 1
        c.collected(&ftl, x, 0.75); // GC 2: x's reward is known, not due
        assert_eq!(c.stats.updates, 0);
        c.collected(&ftl, other, 0.5); // GC 3: due
        assert_eq!(c.stats.updates, 1);
        assert!((c.q(i1)[1] - (1.0 + 0.5 * (0.75 - 1.0))).abs() < 1e-6);
        assert_eq!(c.q(i2)[2], 1.0);
        // The paper's shared credit cannot tell the two apart.
        let mut g = Agent::with_credit(5, 0.0, 0.5, 2, true, 1, Credit::Gc, n);
        g.act(&s1);
        g.act(&s2);
        for inv in [0.5, 0.75, 0.5] {
            g.collected(&ftl, other, inv);
        }
        assert_eq!(g.q(i1)[1], g.q(i2)[2]);
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
