//! Victim selection as SepBIT's trace replayer does it, list by list
//! (`GCWorker.pickSegments` and `selection/*.java` in
//! github.com/fallfish/sepbit, `trace_replay/`): the candidates are the log's
//! segments in the order its `HashMap<Long, Segment>` iterates them, less
//! the open, the fully valid and those under the garbage threshold; the
//! selector sorts them (a stable sort, so equal scores keep that order) or
//! draws from them with `java.util.Random` seeded by `--randomSeed` (wafer:
//! the run's seed); the first is the victim. Used for the replayer's
//! selectors under `--setup sepbit-replayer` (`victim_ties = replayer`), and
//! always for `basic`, whose order *is* the hash map's.
//!
//! The hash map's order ([`HashOrder`]): the replayer numbers a log's
//! segments 0, 1, ... as it opens them (`classes` at start, then one
//! whenever it seals one, for the same class); a `HashMap` with `Long` keys
//! iterates its buckets in index order, bucket
//! `(h ^ h >>> 16) & (capacity - 1)` for `h` the key's low 32 bits xor its high ones, and a bucket's
//! entries in insertion order (id order here). The capacity starts at 16 and
//! doubles whenever the map holds more than 3/4 of it (it never shrinks).
//! Deviation: a bucket of 9 or more entries becomes a tree in the JDK, whose
//! order differs; with a log's few hundred live segments spread over at
//! least as many buckets that does not happen in the runs measured here.
//! WARCIP's split and merge open a segment without a seal or seal one
//! without opening another; the numbering here does not follow those (it
//! opens one per seal): `warcip` / `greedy` differs from the replayer by
//! 0.24% on the real-layout parity input for that.
//!
//! Per algorithm (the replayer's name):
//! * `Greedy`: garbage proportion, highest first;
//! * `CostBenefit`: (1-u)/u·√age with the age in trace microseconds since
//!   the segment's last append, highest first (u = 0: `Double.MAX_VALUE`);
//! * `Lru`: last append, oldest first;
//! * `WindowGreedy`: the oldest ⌈90%⌉ by age, then greedy among them;
//! * `Random`: `Collections.shuffle`, the first;
//! * `RandomGreedy`: greedy among max(⌈20%⌉, 2) drawn by its
//!   `getKFromNRandomly`;
//! * `Basic`: no ordering at all (its `pick` does nothing): the first in
//!   hash order;
//! * `MultiLog`: the class MultiLog's model names, least recently appended
//!   first.

use super::{replayer_bound, SelectorArgs, VictimSelector};
use crate::ftl::{Ftl, GroupId, SegState, SegmentId};
use crate::rng::JavaRandom;

/// A log's `HashMap<Long, Segment>` iteration order, followed from the seals
/// and collections wafer sees.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct HashOrder {
    /// The replayer's id of each (wafer) segment, set when it is sealed.
    rid: Vec<u64>,
    /// Per group: the id of the segment the replayer has open for it.
    pending: Vec<u64>,
    /// Next id to hand out.
    next: u64,
    /// Segments in the map (open ones included).
    size: u64,
    /// The map's table capacity (a power of two, at least 16).
    cap: u64,
    /// Victims chosen and the erase count each had then: the replayer
    /// removes a victim from its map only after moving its blocks
    /// (`Log.removeSegments` after the `gcAppend`s), so the seals of those
    /// moves see it still in.
    leaving: Vec<(SegmentId, u32)>,
}

impl HashOrder {
    /// The order of a fresh log of `segments` wafer segments whose replayer
    /// opened `classes` segments at start (`--setNumOpenSegments`).
    pub fn new(segments: u32, classes: u32) -> Self {
        let mut o = HashOrder {
            rid: vec![0; segments as usize],
            pending: (0..classes as u64).collect(),
            next: classes as u64,
            size: 0,
            cap: 16,
            leaving: Vec::new(),
        };
        for _ in 0..classes {
            o.put();
        }
        o
    }

    /// One more entry in the map (`HashMap.putVal`: resize after the insert
    /// when the size passes 3/4 of the capacity).
    fn put(&mut self) {
        self.size += 1;
        while self.size > self.cap * 3 / 4 {
            self.cap *= 2;
        }
    }

    /// `seg` of `group` was sealed: it keeps the id its open segment had,
    /// and the replayer opens the next one for the group.
    pub fn sealed(&mut self, seg: SegmentId, group: GroupId) {
        let g = group as usize;
        if g >= self.pending.len() {
            // a group the replayer did not open at start: opened now
            let from = self.pending.len();
            self.pending.resize(g + 1, 0);
            for p in from..=g {
                self.pending[p] = self.next;
                self.next += 1;
                self.put();
            }
        }
        self.rid[seg as usize] = self.pending[g];
        self.pending[g] = self.next;
        self.next += 1;
        self.put();
    }

    /// `seg` was chosen as a victim: it leaves the map once erased.
    pub fn chosen(&mut self, seg: SegmentId, ftl: &Ftl) {
        self.leaving.push((seg, ftl.segs.erase_count[seg as usize]));
    }

    /// Take the victims erased since they were chosen out of the map
    /// (`Log.removeSegments`).
    pub fn settle(&mut self, ftl: &Ftl) {
        let before = self.leaving.len();
        self.leaving
            .retain(|&(s, e)| ftl.segs.erase_count[s as usize] == e);
        for _ in self.leaving.len()..before {
            self.removed();
        }
    }

    /// A segment left the map.
    fn removed(&mut self) {
        self.size -= 1;
    }

    /// Iteration rank of `seg`: its bucket, then its id.
    #[inline]
    pub fn key(&self, seg: SegmentId) -> (u64, u64) {
        let id = self.rid[seg as usize];
        let h = (id ^ (id >> 32)) as u32;
        (((h ^ (h >> 16)) as u64) & (self.cap - 1), id)
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.rid.capacity() * 8 + self.pending.capacity() * 8 + self.leaving.capacity() * 8
    }
}

/// Which of the replayer's selection algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Algorithm {
    /// `Greedy`.
    Greedy,
    /// `CostBenefit`.
    CostBenefit,
    /// `Lru`.
    Lru,
    /// `WindowGreedy`.
    WindowGreedy,
    /// `Random`.
    Random,
    /// `RandomGreedy`.
    RandomGreedy,
    /// `Basic`.
    Basic,
    /// `MultiLog`.
    MultiLog,
}

/// Share of the candidates WindowGreedy keeps, oldest first [percent].
const WINDOW_PERCENTAGE: f64 = 90.0;
/// Share of the candidates RandomGreedy draws [percent].
const RANDOM_PERCENTAGE: f64 = 20.0;

/// The replayer's list-based selection.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Replayer {
    algo: Algorithm,
    #[serde(with = "crate::codec::static_str")]
    name: crate::codec::Name,
    order: HashOrder,
    rng: JavaRandom,
    /// Each sealed segment's last append [trace µs] (`timestampModifiedInUs`).
    modified_us: Vec<u64>,
    /// The class MultiLog's model named for the next choice.
    group: Option<GroupId>,
    list: Vec<SegmentId>,
}

impl Replayer {
    /// `algo` under the registry name `name`, for the device and seed of `a`.
    pub fn new(algo: Algorithm, name: &'static str, a: &SelectorArgs) -> Self {
        Replayer {
            algo,
            name,
            order: HashOrder::new(a.geo.segments, a.classes),
            rng: JavaRandom::new(a.seed as i64),
            modified_us: vec![0; a.geo.segments as usize],
            group: None,
            list: Vec::new(),
        }
    }

    /// The candidates in hash order into `self.list`.
    fn candidates(&mut self, ftl: &Ftl, max_valid: u32) {
        let max_valid = replayer_bound(ftl, max_valid);
        let segs = &ftl.segs;
        self.list.clear();
        self.list.extend(
            (0..segs.state.len())
                .filter(|&s| segs.state[s] == SegState::Sealed && segs.valid[s] <= max_valid)
                .map(|s| s as SegmentId),
        );
        let order = &self.order;
        self.list.sort_unstable_by_key(|&s| order.key(s));
    }
}

/// `(int) Math.ceil(0.01 * percentage * n)`, evaluated as Java does.
fn share(percentage: f64, n: usize) -> usize {
    (0.01 * percentage * n as f64).ceil() as usize
}

impl VictimSelector for Replayer {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        self.name
    }

    fn on_seal(&mut self, seg: SegmentId, ftl: &Ftl) {
        self.modified_us[seg as usize] = ftl.now_ns / 1000;
        self.order.settle(ftl);
        self.order.sealed(seg, ftl.segs.group[seg as usize]);
    }

    fn select(&mut self, ftl: &Ftl, max_valid: u32) -> Option<SegmentId> {
        self.order.settle(ftl);
        self.candidates(ftl, max_valid);
        let blocks = ftl.geo.segment_blocks as f64;
        let segs = &ftl.segs;
        let gp = |s: SegmentId| (blocks - segs.valid[s as usize] as f64) / blocks;
        // greedy's comparator: garbage proportion, highest first
        let by_gp = |a: &SegmentId, b: &SegmentId| gp(*b).total_cmp(&gp(*a));
        let modified = &self.modified_us;
        let now_us = ftl.now_ns / 1000;
        let list = &mut self.list;
        let chosen = match self.algo {
            Algorithm::Basic => list.first().copied(),
            Algorithm::Greedy => {
                list.sort_by(by_gp);
                list.first().copied()
            }
            Algorithm::CostBenefit => {
                let score = |s: SegmentId| {
                    let u = 1.0 - gp(s);
                    let age = now_us as f64 - modified[s as usize] as f64;
                    if u == 0.0 {
                        f64::MAX
                    } else {
                        (1.0 - u) / u * age.sqrt()
                    }
                };
                list.sort_by(|a, b| score(*b).total_cmp(&score(*a)));
                list.first().copied()
            }
            Algorithm::Lru => {
                list.sort_by_key(|&s| modified[s as usize]);
                list.first().copied()
            }
            Algorithm::WindowGreedy => {
                // by age, oldest first (the same as by last append)
                list.sort_by_key(|&s| modified[s as usize]);
                let k = share(WINDOW_PERCENTAGE, list.len());
                list.truncate(k);
                list.sort_by(by_gp);
                list.first().copied()
            }
            Algorithm::Random => {
                self.rng.shuffle(list);
                list.first().copied()
            }
            Algorithm::RandomGreedy => {
                let n = list.len();
                let k = share(RANDOM_PERCENTAGE, n).max(2);
                if k < n {
                    // getKFromNRandomly, then keep the drawn positions in list order
                    let mut indices: Vec<usize> = (0..n).collect();
                    let mut drawn = vec![false; n];
                    let mut left = n;
                    for _ in 0..k {
                        let id = self.rng.next_int(left as i32) as usize;
                        drawn[indices[id]] = true;
                        indices[id] = indices[left - 1];
                        left -= 1;
                    }
                    let mut i = 0;
                    list.retain(|_| {
                        i += 1;
                        drawn[i - 1]
                    });
                }
                list.sort_by(by_gp);
                list.first().copied()
            }
            Algorithm::MultiLog => {
                let target = self.group.take();
                list.retain(|&s| Some(segs.group[s as usize]) == target);
                list.sort_by_key(|&s| modified[s as usize]);
                list.first().copied()
            }
        };
        if let Some(v) = chosen {
            self.order.chosen(v, ftl);
        }
        chosen
    }

    fn remove(&mut self, seg: SegmentId, ftl: &Ftl) {
        self.order.settle(ftl);
        self.order.chosen(seg, ftl);
    }

    fn needs_policy_group(&self) -> bool {
        self.algo == Algorithm::MultiLog
    }

    fn set_policy_group(&mut self, group: Option<GroupId>) {
        self.group = group;
    }

    fn memory_bytes(&self) -> usize {
        self.order.memory_bytes() + self.modified_us.capacity() * 8 + self.list.capacity() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_order_wraps_at_the_capacity() {
        // 6 open at start (ids 0-5), capacity 16; 10 seals of group 0 give
        // ids 0, 6, 7, ..., 14 to the sealed segments and open 15 more: the
        // map holds 16 > 12 entries from the 7th seal on, capacity 32.
        let mut o = HashOrder::new(64, 6);
        for s in 0..10 {
            o.sealed(s, 0);
        }
        assert_eq!(o.cap, 32);
        assert_eq!(o.key(0), (0, 0));
        assert_eq!(o.key(9), (14, 14));
        for _ in 0..10 {
            o.removed();
        }
        for s in 10..40 {
            o.sealed(s, 0);
            o.removed();
        }
        assert_eq!(o.cap, 32, "the capacity never shrinks");
        // ids past the capacity come back to the first buckets
        assert_eq!(o.key(39), (44 % 32, 44));
        assert!(
            o.key(39) < o.key(20),
            "id {} before id {}",
            o.key(39).1,
            o.key(20).1
        );
    }
}
