//! Least-recently-used tables over flat arrays, for the DRAM data cache and
//! the cached mapping table (`mapping.rs`): an index (4 bytes per logical
//! page, or a hash table for a table far smaller than the drive), a doubly
//! linked list over slots, and a value per slot the owner interprets
//! (dirty bit, sector bitmap). No per-entry allocation.

use super::flash::NONE;
use super::keymap::KeyMap;
#[cfg(doc)]
use super::keymap::Recent;

/// Stamps stay below this; a clock reaching it rebases
/// ([`Lru::rebase_stamps`]).
pub const STAMP_LIMIT: u32 = 1 << 31;

/// A slot's value: the owner's word (the write cache's sector bitmap, the
/// mapping table's generation and dirty bit).
pub trait Value: Copy + Default + std::fmt::Debug {}
impl Value for u32 {}
impl Value for u64 {}

#[derive(Clone, Copy, Debug, Default)]
struct Slot<V> {
    key: u32,
    prev: u32,
    next: u32,
    val: V,
}

/// How a key finds its slot.
#[derive(Clone, Debug)]
enum Index {
    /// A word per key: the table holds a large share of the keys (the
    /// mapping table: a third of a drive's pages), or stamps.
    Direct(Vec<u32>),
    /// A hash table: the table holds a small share of the keys (the write
    /// cache: 200 K of a drive's 100 M pages).
    Hashed(KeyMap),
}

impl Index {
    /// The word per key (stamp mode has no other).
    fn direct(&mut self) -> &mut Vec<u32> {
        match self {
            Index::Direct(ix) => ix,
            Index::Hashed(_) => panic!("stamp mode needs a direct index"),
        }
    }
}

/// An LRU table of up to `cap` keys below `keys`: an index (a word per key,
/// or a hash table) and one slot (key, list links, value: 16 bytes with a
/// 32-bit value) per entry, so a lookup touches two cache lines plus its
/// list neighbours.
#[derive(Clone, Debug)]
pub struct Lru<V: Value = u64> {
    index: Index,
    keys: usize,
    slots: Vec<Slot<V>>,
    head: u32,
    tail: u32,
    cap: u32,
    free_list: Vec<u32>,
}

impl<V: Value> Lru<V> {
    /// An empty table for keys `0..keys` holding at most `cap` of them,
    /// indexed by a word per key.
    pub fn new(keys: usize, cap: u32) -> Lru<V> {
        let cap = cap.min(keys as u32);
        Lru::with_index(
            Index::Direct(crate::huge::filled(NONE, if cap == 0 { 0 } else { keys })),
            keys,
            cap,
        )
    }

    /// The same, indexed by a hash table (for a `cap` far below `keys`);
    /// no stamp mode.
    pub fn hashed(keys: usize, cap: u32) -> Lru<V> {
        let cap = cap.min(keys as u32);
        Lru::with_index(
            Index::Hashed(KeyMap::with_capacity(cap as usize)),
            keys,
            cap,
        )
    }

    fn with_index(index: Index, keys: usize, cap: u32) -> Lru<V> {
        Lru {
            index,
            keys,
            slots: crate::huge::with_capacity(cap as usize),
            head: NONE,
            tail: NONE,
            cap,
            free_list: Vec::new(),
        }
    }

    /// Capacity [entries].
    pub fn capacity(&self) -> u32 {
        self.cap
    }

    /// Entries held.
    pub fn len(&self) -> u32 {
        (self.slots.len() - self.free_list.len()) as u32
    }

    /// No entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The slot of `k`.
    #[inline]
    fn slot_of(&self, k: u32) -> Option<u32> {
        match &self.index {
            Index::Direct(ix) => ix.get(k as usize).copied().filter(|&s| s != NONE),
            Index::Hashed(m) => m.get(k),
        }
    }

    #[inline]
    fn set_slot(&mut self, k: u32, s: u32) {
        match &mut self.index {
            Index::Direct(ix) => ix[k as usize] = s,
            Index::Hashed(m) => {
                m.insert(k, s);
            }
        }
    }

    #[inline]
    fn clear_slot(&mut self, k: u32) {
        match &mut self.index {
            Index::Direct(ix) => ix[k as usize] = NONE,
            Index::Hashed(m) => {
                m.remove(k);
            }
        }
    }

    /// The value of slot `s`.
    #[inline]
    pub fn val(&self, s: u32) -> V {
        self.slots[s as usize].val
    }

    /// The value of slot `s`, to change.
    #[inline]
    pub fn val_mut(&mut self, s: u32) -> &mut V {
        &mut self.slots[s as usize].val
    }

    #[inline]
    fn unlink(&mut self, s: u32) {
        let Slot {
            prev: p, next: n, ..
        } = self.slots[s as usize];
        if p == NONE {
            self.head = n;
        } else {
            self.slots[p as usize].next = n;
        }
        if n == NONE {
            self.tail = p;
        } else {
            self.slots[n as usize].prev = p;
        }
    }

    #[inline]
    fn push_front(&mut self, s: u32) {
        let head = self.head;
        let slot = &mut self.slots[s as usize];
        slot.prev = NONE;
        slot.next = head;
        if head != NONE {
            self.slots[head as usize].prev = s;
        } else {
            self.tail = s;
        }
        self.head = s;
    }

    /// The slot of `k`, made most recent.
    #[inline]
    pub fn touch(&mut self, k: u32) -> Option<u32> {
        let s = self.slot_of(k)?;
        if self.head != s {
            self.unlink(s);
            self.push_front(s);
        }
        Some(s)
    }

    /// The slot of `k`, recency unchanged.
    #[inline]
    pub fn peek(&self, k: u32) -> Option<u32> {
        self.slot_of(k)
    }

    /// The least recent entry: (slot, key).
    #[inline]
    pub fn lru(&self) -> Option<(u32, u32)> {
        (self.tail != NONE).then(|| (self.tail, self.slots[self.tail as usize].key))
    }

    /// Whether an insert would evict.
    #[inline]
    pub fn full(&self) -> bool {
        self.len() >= self.cap
    }

    /// Insert `k` (not present) as most recent with value `v`; when full,
    /// the least recent entry is evicted and returned as (key, value).
    #[inline]
    pub fn insert(&mut self, k: u32, v: V) -> Option<(u32, V)> {
        debug_assert!(self.peek(k).is_none() && (k as usize) < self.keys);
        if self.cap == 0 {
            return None;
        }
        let mut evicted = None;
        let s = if let Some(s) = self.free_list.pop() {
            s
        } else if (self.slots.len() as u32) < self.cap {
            self.slots.push(Slot {
                key: 0,
                prev: NONE,
                next: NONE,
                val: V::default(),
            });
            self.slots.len() as u32 - 1
        } else {
            let s = self.tail;
            let old = self.slots[s as usize];
            evicted = Some((old.key, old.val));
            self.clear_slot(old.key);
            self.unlink(s);
            s
        };
        let slot = &mut self.slots[s as usize];
        slot.key = k;
        slot.val = v;
        self.set_slot(k, s);
        self.push_front(s);
        evicted
    }

    /// Every entry as (key, value), least recent first.
    pub fn entries(&self) -> impl Iterator<Item = (u32, V)> + '_ {
        let mut s = self.tail;
        std::iter::from_fn(move || {
            (s != NONE).then(|| {
                let slot = &self.slots[s as usize];
                s = slot.prev;
                (slot.key, slot.val)
            })
        })
    }

    /// Drop `k`; returns its value if it was held.
    pub fn remove(&mut self, k: u32) -> Option<V> {
        let s = self.peek(k)?;
        self.unlink(s);
        self.clear_slot(k);
        self.free_list.push(s);
        Some(self.slots[s as usize].val)
    }

    /// Empty, every key absent.
    pub fn clear(&mut self) {
        match &mut self.index {
            Index::Direct(ix) => ix.fill(NONE),
            Index::Hashed(m) => m.clear(),
        }
        self.slots.clear();
        self.free_list.clear();
        self.head = NONE;
        self.tail = NONE;
    }

    /// Hint that `k` will be looked up soon.
    #[inline]
    pub fn prefetch(&self, k: u32) {
        match &self.index {
            Index::Direct(ix) => crate::prefetch::prefetch(ix, k as usize),
            Index::Hashed(m) => m.prefetch(k),
        }
    }

    /// Hint that `k` will be looked up soon and that its index entry is
    /// cached by now (an earlier [`Lru::prefetch`]): start loading its slot.
    #[inline]
    pub fn prefetch_slot(&self, k: u32) {
        if let Some(s) = self.slot_of(k) {
            crate::prefetch::prefetch(&self.slots, s as usize);
        }
    }

    /// Hint that the least recent entry will be evicted soon: start loading
    /// what its eviction touches (its index entry, its list neighbour) and
    /// return its key, for the caller to prefetch what the write back
    /// touches. An evicted entry's neighbour lies anywhere in the table, so
    /// without this each eviction waits for two random memory loads.
    #[inline]
    pub fn prefetch_lru(&self) -> Option<u32> {
        let t = self.tail;
        if t == NONE {
            return None;
        }
        let slot = &self.slots[t as usize];
        self.prefetch(slot.key);
        if slot.prev != NONE {
            crate::prefetch::prefetch(&self.slots, slot.prev as usize);
        }
        Some(slot.key)
    }

    // ------------------------------------------------------------ stamps
    //
    // Before timing starts (a preconditioning of hundreds of millions of
    // accesses) the table only needs to end holding the `cap` most recent
    // keys, in order. Moving list entries on every access costs several
    // random memory loads each (it was half of a whole-drive run's time);
    // instead the index, which has one word per key anyway, holds each key's
    // last access stamp, and [`Lru::end_stamps`] builds the list once from
    // the most recent stamps. No memory beyond the index and the slots.
    // (A hashed index has no word per key: its owner keeps [`Recent`].)

    fn stamps(&mut self) -> &mut Vec<u32> {
        self.index.direct()
    }

    /// Enter stamp mode: the table is emptied, every key unstamped.
    pub fn begin_stamps(&mut self) {
        self.clear();
    }

    /// Stamp mode: `k` was accessed at `stamp` (below [`STAMP_LIMIT`]);
    /// returns its previous stamp (`NONE`: never). No-op without room
    /// (capacity 0).
    #[inline]
    pub fn stamp(&mut self, k: u32, stamp: u32) -> u32 {
        match self.stamps().get_mut(k as usize) {
            Some(e) => std::mem::replace(e, stamp),
            None => NONE,
        }
    }

    /// Stamp mode: `k`'s stamp is dropped (it is no longer held).
    #[inline]
    pub fn unstamp(&mut self, k: u32) {
        if let Some(e) = self.stamps().get_mut(k as usize) {
            *e = NONE;
        }
    }

    /// Stamp mode: every stamp moves `by` earlier (those older than `by`
    /// become 0), so a clock near [`STAMP_LIMIT`] can go on from `clock - by`.
    pub fn rebase_stamps(&mut self, by: u32) {
        for e in self.stamps().iter_mut().filter(|e| **e != NONE) {
            *e = e.saturating_sub(by);
        }
    }

    /// Leave stamp mode at clock `now` (every stamp is below it): the table
    /// holds the `cap` most recently stamped keys, the most recent first
    /// (equal stamps, after a rebase: the larger key more recent), each
    /// with value `val`.
    ///
    /// Built in the slots themselves (a key and its stamp in each, sorted
    /// in place, then linked), so it needs no memory beyond the table's: a
    /// list of (stamp, key) pairs would add 8 bytes per entry at the peak.
    pub fn end_stamps(&mut self, now: u32, val: V) {
        let cap = self.cap as usize;
        self.slots.clear();
        self.free_list.clear();
        self.head = NONE;
        self.tail = NONE;
        if cap == 0 {
            return;
        }
        let ix = self.index.direct();
        // The threshold bucket: stamps in a histogram of BUCKETS over
        // [0, now]; the buckets above it hold fewer than `cap` keys.
        const BUCKETS: usize = 1 << 16;
        let width = (now as u64 + 1).div_ceil(BUCKETS as u64).max(1);
        let bucket = |s: u32| ((s as u64 / width) as usize).min(BUCKETS - 1);
        let mut counts = vec![0u64; BUCKETS];
        for &s in ix.iter().filter(|&&s| s != NONE) {
            counts[bucket(s)] += 1;
        }
        let (mut edge, mut above) = (0usize, 0u64);
        for b in (0..BUCKETS).rev() {
            if above + counts[b] >= cap as u64 {
                edge = b;
                break;
            }
            above += counts[b];
        }
        // The keys above the edge bucket, and the most recent of its own.
        let mut at_edge: Vec<(u32, u32)> = Vec::with_capacity(counts[edge] as usize);
        for (k, &s) in ix.iter().enumerate().filter(|&(_, &s)| s != NONE) {
            let b = bucket(s);
            if b > edge {
                self.slots.push(Slot {
                    key: k as u32,
                    prev: s,
                    next: NONE,
                    val,
                });
            } else if b == edge {
                at_edge.push((s, k as u32));
            }
        }
        at_edge.sort_unstable();
        let take = (cap - self.slots.len()).min(at_edge.len());
        for &(s, k) in &at_edge[at_edge.len() - take..] {
            self.slots.push(Slot {
                key: k,
                prev: s,
                next: NONE,
                val,
            });
        }
        drop(at_edge);
        // Least recent first, then linked: slot i's newer neighbour is i + 1.
        self.slots.sort_unstable_by_key(|x| (x.prev, x.key));
        ix.fill(NONE);
        let n = self.slots.len() as u32;
        for (i, slot) in self.slots.iter_mut().enumerate() {
            let i = i as u32;
            ix[slot.key as usize] = i;
            slot.next = if i == 0 { NONE } else { i - 1 };
            slot.prev = if i + 1 == n { NONE } else { i + 1 };
        }
        if n > 0 {
            self.tail = 0;
            self.head = n - 1;
        }
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        // The table's size, not the vectors' spare room for huge pages.
        let index = match &self.index {
            Index::Direct(ix) => ix.len() * 4,
            Index::Hashed(m) => m.memory_bytes(),
        };
        index + self.cap as usize * std::mem::size_of::<Slot<V>>() + self.free_list.capacity() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_the_least_recent() {
        let mut l: Lru = Lru::new(100, 3);
        assert_eq!(l.insert(1, 10), None);
        assert_eq!(l.insert(2, 20), None);
        assert_eq!(l.insert(3, 30), None);
        assert!(l.touch(1).is_some());
        assert_eq!(l.insert(4, 40), Some((2, 20)));
        assert_eq!(l.lru().map(|x| x.1), Some(3));
        assert_eq!(l.remove(3), Some(30));
        assert_eq!(l.len(), 2);
        assert_eq!(l.insert(5, 50), None);
        assert_eq!(l.insert(6, 60), Some((1, 10)));
        assert!(l.peek(2).is_none() && l.peek(6).is_some());
    }

    /// A hashed index gives what a direct one gives, access for access.
    #[test]
    fn a_hashed_index_is_a_direct_one() {
        let mut rng = crate::rng::Rng::new(5);
        let mut a: Lru = Lru::new(5000, 300);
        let mut b: Lru = Lru::hashed(5000, 300);
        for i in 0..100_000u64 {
            let k = rng.below(if i % 2 == 0 { 5000 } else { 500 }) as u32;
            match rng.below(8) {
                0 => assert_eq!(a.remove(k), b.remove(k)),
                _ => match (a.touch(k), b.touch(k)) {
                    (Some(x), Some(y)) => {
                        *a.val_mut(x) += 1;
                        *b.val_mut(y) += 1;
                    }
                    (None, None) => assert_eq!(a.insert(k, i), b.insert(k, i)),
                    other => panic!("{other:?}"),
                },
            }
        }
        assert!(a.entries().eq(b.entries()) && a.len() == 300);
    }

    /// Stamp mode ends holding what the same accesses through `touch` /
    /// `insert` leave, in the same order.
    #[test]
    fn stamps_end_as_the_list_would() {
        let mut rng = crate::rng::Rng::new(7);
        for cap in [1u32, 3, 50, 400] {
            let mut list: Lru<u32> = Lru::new(1000, cap);
            let mut stamped: Lru<u32> = Lru::new(1000, cap);
            stamped.begin_stamps();
            let mut clock = 0;
            for i in 0..20_000u32 {
                // Skewed keys: many repeats inside the window.
                let k = if i % 3 == 0 {
                    rng.below(1000) as u32
                } else {
                    rng.below(40) as u32
                };
                if list.touch(k).is_none() {
                    list.insert(k, 1);
                }
                stamped.stamp(k, clock);
                clock += 1;
                if clock == 7_000 {
                    stamped.rebase_stamps(5_000);
                    clock -= 5_000;
                }
            }
            stamped.end_stamps(clock, 1);
            let a: Vec<_> = list.entries().collect();
            let b: Vec<_> = stamped.entries().collect();
            assert_eq!(a, b, "cap {cap}");
            assert_eq!(stamped.len(), cap.min(1000));
        }
    }
}
