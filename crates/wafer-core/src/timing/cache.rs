//! Least-recently-used tables over flat arrays, for the DRAM data cache and
//! the cached mapping table (`mapping.rs`): an index per key (4 bytes per logical page), a
//! doubly linked list over slots, and a 64-bit value per slot the owner
//! interprets (dirty bit, sector bitmap). No per-entry allocation.

use super::flash::NONE;

/// Stamps stay below this; a clock reaching it rebases
/// ([`Lru::rebase_stamps`]).
pub const STAMP_LIMIT: u32 = 1 << 31;

#[derive(Clone, Copy, Debug)]
struct Slot {
    key: u32,
    prev: u32,
    next: u32,
    val: u64,
}

/// An LRU table of up to `cap` keys below `keys`: an index per key and one
/// 24-byte slot (key, list links, value) per entry, so a lookup touches two
/// cache lines plus its list neighbours.
#[derive(Clone, Debug)]
pub struct Lru {
    index: Vec<u32>,
    slots: Vec<Slot>,
    head: u32,
    tail: u32,
    cap: u32,
    free_list: Vec<u32>,
}

impl Lru {
    /// An empty table for keys `0..keys` holding at most `cap` of them.
    pub fn new(keys: usize, cap: u32) -> Lru {
        let cap = cap.min(keys as u32);
        Lru {
            index: crate::huge::filled(NONE, if cap == 0 { 0 } else { keys }),
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

    /// The value of slot `s`.
    #[inline]
    pub fn val(&self, s: u32) -> u64 {
        self.slots[s as usize].val
    }

    /// The value of slot `s`, to change.
    #[inline]
    pub fn val_mut(&mut self, s: u32) -> &mut u64 {
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
        let s = *self.index.get(k as usize)?;
        if s == NONE {
            return None;
        }
        if self.head != s {
            self.unlink(s);
            self.push_front(s);
        }
        Some(s)
    }

    /// The slot of `k`, recency unchanged.
    #[inline]
    pub fn peek(&self, k: u32) -> Option<u32> {
        self.index.get(k as usize).copied().filter(|&s| s != NONE)
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
    pub fn insert(&mut self, k: u32, v: u64) -> Option<(u32, u64)> {
        debug_assert!(self.peek(k).is_none());
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
                val: 0,
            });
            self.slots.len() as u32 - 1
        } else {
            let s = self.tail;
            let old = self.slots[s as usize];
            evicted = Some((old.key, old.val));
            self.index[old.key as usize] = NONE;
            self.unlink(s);
            s
        };
        let slot = &mut self.slots[s as usize];
        slot.key = k;
        slot.val = v;
        self.index[k as usize] = s;
        self.push_front(s);
        evicted
    }

    /// Every entry as (key, value), least recent first.
    pub fn entries(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
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
    pub fn remove(&mut self, k: u32) -> Option<u64> {
        let s = self.peek(k)?;
        self.unlink(s);
        self.index[k as usize] = NONE;
        self.free_list.push(s);
        Some(self.slots[s as usize].val)
    }

    /// Hint that `k` will be looked up soon.
    #[inline]
    pub fn prefetch(&self, k: u32) {
        crate::prefetch::prefetch(&self.index, k as usize);
    }

    /// Hint that `k` will be looked up soon and that its index entry is
    /// cached by now (an earlier [`Lru::prefetch`]): start loading its slot.
    #[inline]
    pub fn prefetch_slot(&self, k: u32) {
        if let Some(&s) = self.index.get(k as usize) {
            if s != NONE {
                crate::prefetch::prefetch(&self.slots, s as usize);
            }
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
        crate::prefetch::prefetch(&self.index, slot.key as usize);
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
    // the most recent stamps. No memory beyond the index.

    /// Enter stamp mode: the table is emptied, every key unstamped.
    pub fn begin_stamps(&mut self) {
        self.index.fill(NONE);
        self.slots.clear();
        self.free_list.clear();
        self.head = NONE;
        self.tail = NONE;
    }

    /// Stamp mode: `k` was accessed at `stamp` (below [`STAMP_LIMIT`]);
    /// returns its previous stamp (`NONE`: never). No-op without room
    /// (capacity 0).
    #[inline]
    pub fn stamp(&mut self, k: u32, stamp: u32) -> u32 {
        match self.index.get_mut(k as usize) {
            Some(e) => std::mem::replace(e, stamp),
            None => NONE,
        }
    }

    /// Stamp mode: `k`'s stamp is dropped (it is no longer held).
    #[inline]
    pub fn unstamp(&mut self, k: u32) {
        if let Some(e) = self.index.get_mut(k as usize) {
            *e = NONE;
        }
    }

    /// Stamp mode: every stamp moves `by` earlier (those older than `by`
    /// become 0), so a clock near [`STAMP_LIMIT`] can go on from `clock - by`.
    pub fn rebase_stamps(&mut self, by: u32) {
        for e in self.index.iter_mut().filter(|e| **e != NONE) {
            *e = e.saturating_sub(by);
        }
    }

    /// Leave stamp mode at clock `now` (every stamp is below it): the table
    /// holds the `cap` most recently stamped keys, the most recent first,
    /// each with value `val`.
    pub fn end_stamps(&mut self, now: u32, val: u64) {
        let cap = self.cap as usize;
        let mut keep: Vec<(u32, u32)> = Vec::new();
        if cap > 0 {
            // Look back over a window of stamps wide enough to hold `cap`
            // keys (wider each time it does not: repeated keys).
            let mut window = (cap as u64 * 2).max(1 << 16);
            loop {
                let from = (now as u64).saturating_sub(window) as u32;
                keep.clear();
                keep.extend(
                    self.index
                        .iter()
                        .enumerate()
                        .filter(|&(_, &s)| s != NONE && s >= from)
                        .map(|(k, &s)| (s, k as u32)),
                );
                if keep.len() >= cap || from == 0 {
                    break;
                }
                window *= 4;
            }
            keep.sort_unstable();
            let drop = keep.len().saturating_sub(cap);
            keep.drain(..drop);
        }
        self.begin_stamps();
        for (_, k) in keep {
            self.insert(k, val);
        }
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        // The table's size, not the vectors' spare room for huge pages.
        self.index.len() * 4
            + self.cap as usize * std::mem::size_of::<Slot>()
            + self.free_list.capacity() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_the_least_recent() {
        let mut l = Lru::new(100, 3);
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

    /// Stamp mode ends holding what the same accesses through `touch` /
    /// `insert` leave, in the same order.
    #[test]
    fn stamps_end_as_the_list_would() {
        let mut rng = crate::rng::Rng::new(7);
        for cap in [1u32, 3, 50, 400] {
            let mut list = Lru::new(1000, cap);
            let mut stamped = Lru::new(1000, cap);
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
