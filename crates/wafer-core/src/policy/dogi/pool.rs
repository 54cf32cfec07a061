//! DOGI's victim candidates kept by valid count, so that a victim choice
//! visits the b + 1 valid counts instead of every segment.
//!
//! The sealed segments sit in doubly linked lists over flat arrays, one list
//! per valid count for the pool (GN, G_frzn and the groups not in use) and
//! one per valid count for the rest; an invalidation moves a segment one
//! list down in O(1). Among the pool's segments of one valid count v the
//! cost-benefit score ((b−v)/v)²·age grows with the age alone, so the
//! list's best is its oldest segment: each list keeps its oldest
//! (open time, segment) and its lowest segment id. Adding a segment updates
//! both at once; removing the one a summary names marks the list stale, and
//! a stale summary is recomputed only when a choice needs it (it still
//! bounds the list from above: an older open time, a lower id). A choice
//! then ranks the lists by score, best first, and stops at the first list
//! that cannot reach the best found; the picks are those of scoring every
//! segment ([`tests`] checks them against that scan).

use serde::{Deserialize, Serialize};

use super::{FIRST, HOT};
use crate::ftl::{GroupId, SegState, SegmentId, Segments};

const NIL: u32 = u32::MAX;

/// A pool victim `(score, valid blocks, segment)` and the segment with the
/// fewest valid blocks anywhere `(valid blocks, segment)`, as
/// [`super::Dogi::select_victim`] weighs them.
pub type Choice = ((f64, u32, SegmentId), (u32, SegmentId));

/// The `last` that puts every group in the pool (`pool = all`): no real
/// configuration has its last group below G1.
pub const ALL_GROUPS: GroupId = 0;

/// Whether a segment of group `g` belongs to the pool when groups
/// FIRST..`last` are the expiring ones (every group when `last` is
/// [`ALL_GROUPS`]).
#[inline(always)]
fn in_pool(g: GroupId, last: GroupId) -> bool {
    last == ALL_GROUPS || !(g == HOT || (FIRST..last).contains(&g))
}

/// Sealed segments by valid count, pool and rest.
#[derive(Serialize, Deserialize)]
pub struct PoolIndex {
    /// Blocks per segment.
    b: u32,
    /// The `last` group the pool was sorted for.
    last: GroupId,
    /// First segment of each list: pool lists 0..=b, then the rest's.
    head: Vec<u32>,
    next: Vec<u32>,
    prev: Vec<u32>,
    /// List of each segment, or NIL if not tracked (free or open).
    list: Vec<u32>,
    /// Per list: the oldest (open time, segment), the lowest segment id,
    /// and whether they may name segments that left (then they bound the
    /// list: nothing in it is older or has a lower id).
    oldest: Vec<(u64, u32)>,
    lowest: Vec<u32>,
    stale: Vec<bool>,
    /// Lists visited by the current choice (scratch).
    #[serde(skip)]
    seen: Vec<bool>,
}

impl PoolIndex {
    /// Empty lists for `segments` segments of `b` blocks.
    pub fn new(segments: usize, b: u32) -> Self {
        let lists = 2 * (b as usize + 1);
        PoolIndex {
            b,
            last: 0,
            head: vec![NIL; lists],
            next: vec![NIL; segments],
            prev: vec![NIL; segments],
            list: vec![NIL; segments],
            oldest: vec![(u64::MAX, NIL); lists],
            lowest: vec![NIL; lists],
            stale: vec![false; lists],
            seen: Vec::new(),
        }
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.head.len() * (4 + 12 + 4 + 1) + self.next.len() * 12
    }

    /// The list of a segment of group `g` holding `valid` blocks.
    #[inline(always)]
    fn list_of(&self, g: GroupId, valid: u32) -> usize {
        let base = if in_pool(g, self.last) {
            0
        } else {
            self.b as usize + 1
        };
        base + valid as usize
    }

    #[inline(always)]
    fn link(&mut self, s: SegmentId, l: usize, open: u64) {
        let i = s as usize;
        self.list[i] = l as u32;
        self.prev[i] = NIL;
        self.next[i] = self.head[l];
        if self.head[l] != NIL {
            self.prev[self.head[l] as usize] = s;
        }
        self.head[l] = s;
        self.oldest[l] = self.oldest[l].min((open, s));
        self.lowest[l] = self.lowest[l].min(s);
    }

    #[inline(always)]
    fn unlink(&mut self, s: SegmentId) -> usize {
        let i = s as usize;
        let l = self.list[i] as usize;
        let (p, n) = (self.prev[i], self.next[i]);
        if p == NIL {
            self.head[l] = n;
        } else {
            self.next[p as usize] = n;
        }
        if n != NIL {
            self.prev[n as usize] = p;
        }
        self.list[i] = NIL;
        if self.head[l] == NIL {
            (self.oldest[l], self.lowest[l], self.stale[l]) = ((u64::MAX, NIL), NIL, false);
        } else if self.oldest[l].1 == s || self.lowest[l] == s {
            self.stale[l] = true;
        }
        l
    }

    /// `seg` was sealed.
    pub fn sealed(&mut self, segs: &Segments, seg: SegmentId) {
        let i = seg as usize;
        let l = self.list_of(segs.group[i], segs.valid[i]);
        self.link(seg, l, segs.open_time[i]);
    }

    /// One of `seg`'s blocks became invalid (`valid` left); a segment not
    /// sealed yet is sorted when it is.
    #[inline]
    pub fn invalidated(&mut self, segs: &Segments, seg: SegmentId) {
        if self.list[seg as usize] == NIL {
            return;
        }
        let l = self.unlink(seg);
        self.link(seg, l - 1, segs.open_time[seg as usize]);
    }

    /// `seg` was collected.
    pub fn collected(&mut self, seg: SegmentId) {
        if self.list[seg as usize] != NIL {
            self.unlink(seg);
        }
    }

    /// Sort every sealed segment again for a new `last` group.
    fn rebuild(&mut self, segs: &Segments, last: GroupId) {
        self.head.fill(NIL);
        self.list.fill(NIL);
        self.oldest.fill((u64::MAX, NIL));
        self.lowest.fill(NIL);
        self.stale.fill(false);
        self.last = last;
        for (i, &st) in segs.state.iter().enumerate() {
            if st == SegState::Sealed {
                self.sealed(segs, i as SegmentId);
            }
        }
    }

    /// Exact summaries of list `l` again.
    #[cold]
    fn refresh(&mut self, segs: &Segments, l: usize) {
        let (mut oldest, mut lowest) = ((u64::MAX, NIL), NIL);
        let mut s = self.head[l];
        while s != NIL {
            oldest = oldest.min((segs.open_time[s as usize], s));
            lowest = lowest.min(s);
            s = self.next[s as usize];
        }
        (self.oldest[l], self.lowest[l], self.stale[l]) = (oldest, lowest, false);
    }

    /// The lowest segment id in list `l` (exact).
    #[inline]
    fn lowest_in(&mut self, segs: &Segments, l: usize) -> u32 {
        if self.stale[l] {
            self.refresh(segs, l);
        }
        self.lowest[l]
    }

    /// Score of list `l`'s oldest segment (of `v` valid blocks): exact for a
    /// fresh summary, an upper bound for a stale one (f64 products are
    /// monotone, so an older open time never scores lower).
    #[inline(always)]
    fn score(&self, l: usize, v: u32, now: u64) -> f64 {
        let age = (now - self.oldest[l].0) as i64 as f64;
        let r = (self.b - v) as f64 / v as f64;
        r * r * age
    }

    /// The pool victim and the fewest-valid segment among the sealed
    /// segments with at most `max_valid` valid blocks (see
    /// [`super::Dogi::select_victim`]): the pool ranked by cost-benefit,
    /// gp/(1−gp)·√age compared squared as ((b−v)/v)²·age with age the time
    /// since the segment was opened (the artifact's `dogiselect.cc`), or by
    /// the fewest valid blocks; the first segment id on ties; a score of −∞
    /// and `u32::MAX` valid blocks when there is none.
    pub fn choose(
        &mut self,
        segs: &Segments,
        now: u64,
        max_valid: u32,
        last: GroupId,
        cost_benefit: bool,
    ) -> Choice {
        if last != self.last {
            self.rebuild(segs, last);
        }
        let choice = self.best(segs, now, max_valid, cost_benefit);
        debug_assert_eq!(
            choice,
            scan(segs, now, self.b, max_valid, last, cost_benefit)
        );
        choice
    }

    fn best(&mut self, segs: &Segments, now: u64, max_valid: u32, cost_benefit: bool) -> Choice {
        let top = max_valid.min(self.b);
        let rest = self.b as usize + 1;
        let mut any = (u32::MAX, 0);
        for v in 0..=top {
            let (p, o) = (v as usize, rest + v as usize);
            if self.head[p] != NIL || self.head[o] != NIL {
                let s = self.lowest_in(segs, p).min(self.lowest_in(segs, o));
                any = (v, s);
                break;
            }
        }
        let mut pool = (f64::NEG_INFINITY, u32::MAX, 0);
        let first = (0..=top).find(|&v| self.head[v as usize] != NIL);
        let Some(first) = first else {
            return (pool, any);
        };
        if first == 0 || !cost_benefit {
            let score = if cost_benefit {
                f64::INFINITY
            } else {
                -(first as f64)
            };
            return ((score, first, self.lowest_in(segs, first as usize)), any);
        }
        // Best first over the lists' (upper-bound) scores; stop at the first
        // list that cannot reach the best found.
        self.seen.clear();
        self.seen.resize(top as usize + 1, false);
        loop {
            let mut pick: Option<(f64, u32)> = None;
            for v in first..=top {
                let l = v as usize;
                if self.head[l] == NIL || self.seen[l] {
                    continue;
                }
                let s = self.score(l, v, now);
                if pick.is_none_or(|(b, _)| s > b) {
                    pick = Some((s, v));
                }
            }
            let Some((bound, v)) = pick else { break };
            if bound < pool.0 {
                break;
            }
            let l = v as usize;
            self.seen[l] = true;
            if self.stale[l] {
                self.refresh(segs, l);
            }

            // Full segments all score 0 whatever their age: the lowest id.
            let seg = if v == self.b {
                self.lowest[l]
            } else {
                self.oldest[l].1
            };
            let s = self.score(l, v, now);
            if s > pool.0 || (s == pool.0 && seg < pool.2) {
                pool = (s, v, seg);
            }
        }
        (pool, any)
    }
}

/// The reference [`PoolIndex::choose`] is checked against in debug builds
/// and tests: every sealed segment scored.
fn scan(
    segs: &Segments,
    now: u64,
    b: u32,
    max_valid: u32,
    last: GroupId,
    cost_benefit: bool,
) -> Choice {
    let (mut pool, mut any) = ((f64::NEG_INFINITY, u32::MAX, 0), (u32::MAX, 0));
    for i in 0..segs.valid.len() {
        let (v, g) = (segs.valid[i], segs.group[i]);
        if segs.state[i] != SegState::Sealed || v > max_valid {
            continue;
        }
        if v < any.0 {
            any = (v, i as SegmentId);
        }
        if !in_pool(g, last) {
            continue;
        }
        let score = match (cost_benefit, v) {
            (true, 0) => f64::INFINITY,
            (true, _) => {
                let r = (b - v) as f64 / v as f64;
                r * r * (now - segs.open_time[i]) as f64
            }
            (false, _) => -(v as f64),
        };
        if score > pool.0 {
            pool = (score, v, i as SegmentId);
        }
    }
    (pool, any)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn choices_are_those_of_scoring_every_segment() {
        // Random lives of segments (seals, invalidations, collections, a
        // new `last` now and then; ties in valid counts and open times)
        // against the scan, after every few events, both rules.
        let b = 32;
        for seed in 0..20 {
            let mut rng = Rng::new(seed);
            let n = 1 + rng.below(120) as usize;
            let mut segs = Segments::erased(n);
            let mut index = PoolIndex::new(n, b);
            let mut last = 4;
            let mut now = 1_000;
            for step in 0..3_000 {
                now += rng.below(3);
                let i = rng.below(n as u64) as usize;
                match (segs.state[i], rng.below(10)) {
                    (SegState::Free, _) => {
                        segs.state[i] = SegState::Open;
                        segs.group[i] = rng.below(7) as GroupId;
                        segs.open_time[i] = now;
                        segs.valid[i] = b;
                    }
                    (SegState::Open, k) => {
                        if k < 3 && segs.valid[i] > 0 {
                            segs.valid[i] -= 1;
                            index.invalidated(&segs, i as SegmentId);
                        } else {
                            segs.state[i] = SegState::Sealed;
                            index.sealed(&segs, i as SegmentId);
                        }
                    }
                    (SegState::Sealed, k) => {
                        if k == 0 {
                            index.collected(i as SegmentId);
                            segs.state[i] = SegState::Free;
                            segs.valid[i] = 0;
                        } else if segs.valid[i] > 0 {
                            segs.valid[i] -= 1;
                            index.invalidated(&segs, i as SegmentId);
                        }
                    }
                }
                if rng.below(500) == 0 {
                    last = rng.below(7) as GroupId; // 0: every group
                }
                if step % 7 == 0 {
                    let max_valid = if rng.below(2) == 0 {
                        b
                    } else {
                        rng.below(b as u64 + 1) as u32
                    };
                    for cost_benefit in [true, false] {
                        assert_eq!(
                            index.choose(&segs, now, max_valid, last, cost_benefit),
                            scan(&segs, now, b, max_valid, last, cost_benefit),
                            "seed {seed}, step {step}, max_valid {max_valid}, cost-benefit {cost_benefit}"
                        );
                    }
                }
            }
        }
    }
}
