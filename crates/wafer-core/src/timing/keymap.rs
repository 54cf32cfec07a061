//! Small hash tables of page numbers for DRAM tables much smaller than the
//! drive: [`KeyMap`] (page -> 32-bit value, open addressing) and
//! [`Recent`] (the pages written most recently, for the write cache's
//! preconditioning). A direct index costs 4 bytes per logical page (400 MB
//! on a 400 GB drive) to find one of a write cache's 200 K pages; these cost
//! 16 bytes per entry held.

use super::flash::NONE;

/// Page -> value, open addressing with linear probing over (key, value)
/// pairs (one cache line per lookup as a rule), Fibonacci hashing, deletion
/// by backward shift (no tombstones). Keys are below [`NONE`].
#[derive(Clone, Debug)]
pub struct KeyMap {
    table: Vec<(u32, u32)>,
    shift: u32,
    len: usize,
}

impl KeyMap {
    /// A table for up to `n` keys (at most half full).
    pub fn with_capacity(n: usize) -> KeyMap {
        let buckets = (2 * n).max(16).next_power_of_two();
        KeyMap {
            table: vec![(NONE, 0); buckets],
            shift: 64 - buckets.trailing_zeros(),
            len: 0,
        }
    }

    #[inline]
    fn home(&self, k: u32) -> usize {
        ((k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    #[inline]
    fn mask(&self) -> usize {
        self.table.len() - 1
    }

    /// The bucket holding `k`, or the empty one ending its probe.
    #[inline]
    fn find(&self, k: u32) -> (usize, bool) {
        let mask = self.mask();
        let mut i = self.home(k);
        loop {
            let key = self.table[i].0;
            if key == k {
                return (i, true);
            }
            if key == NONE {
                return (i, false);
            }
            i = (i + 1) & mask;
        }
    }

    /// The value of `k`.
    #[inline]
    pub fn get(&self, k: u32) -> Option<u32> {
        match self.find(k) {
            (i, true) => Some(self.table[i].1),
            _ => None,
        }
    }

    /// Set `k` to `v`; returns its previous value.
    #[inline]
    pub fn insert(&mut self, k: u32, v: u32) -> Option<u32> {
        debug_assert!(k != NONE);
        let (i, found) = self.find(k);
        if found {
            return Some(std::mem::replace(&mut self.table[i].1, v));
        }
        self.table[i] = (k, v);
        self.len += 1;
        if 2 * self.len > self.table.len() {
            self.grow();
        }
        None
    }

    #[cold]
    fn grow(&mut self) {
        let old = std::mem::take(&mut self.table);
        *self = KeyMap::with_capacity(old.len());
        for (k, v) in old.into_iter().filter(|&(k, _)| k != NONE) {
            self.insert(k, v);
        }
    }

    /// Drop `k`; returns its value. Later entries of its probe run move
    /// back so every lookup still ends at the first empty bucket.
    pub fn remove(&mut self, k: u32) -> Option<u32> {
        let (mut i, found) = self.find(k);
        if !found {
            return None;
        }
        let v = self.table[i].1;
        let mask = self.mask();
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let key = self.table[j].0;
            if key == NONE {
                break;
            }
            // An entry whose home lies cyclically in (i, j] stays.
            let h = self.home(key);
            let stays = if i <= j {
                i < h && h <= j
            } else {
                i < h || h <= j
            };
            if !stays {
                self.table[i] = self.table[j];
                i = j;
            }
        }
        self.table[i] = (NONE, 0);
        self.len -= 1;
        Some(v)
    }

    /// Keys held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// No key held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Empty, its size kept.
    pub fn clear(&mut self) {
        if self.len > 0 {
            self.table.fill((NONE, 0));
            self.len = 0;
        }
    }

    /// Every (key, value), in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.table.iter().copied().filter(|&(k, _)| k != NONE)
    }

    /// Every value, to change.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut u32> + '_ {
        self.table
            .iter_mut()
            .filter(|(k, _)| *k != NONE)
            .map(|(_, v)| v)
    }

    /// Hint that `k` will be looked up soon.
    #[inline]
    pub fn prefetch(&self, k: u32) {
        crate::prefetch::prefetch(&self.table, self.home(k));
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.table.len() * 8
    }
}

/// The pages written most recently, with the stamp of each one's last
/// write, without a word per page of the drive: the write cache's stand-in
/// for a list while the preconditioning writes hundreds of millions of
/// pages. Two generations of at most `cap` distinct pages each: when the
/// current one fills it becomes the old one. The `cap` most recently written
/// pages are always among the two (the current one's, then the old one's
/// most recent), and a page in neither was last written at least `cap`
/// writes ago. A page dropped ([`Recent::forget`]) leaves its generation a
/// page short, so the old generation can then miss a page a list would
/// keep; the preconditioning's workloads never trim.
#[derive(Clone, Debug)]
pub struct Recent {
    cur: KeyMap,
    old: KeyMap,
    cap: usize,
}

impl Recent {
    /// For a cache of `cap` pages (0: none, nothing is kept).
    pub fn new(cap: u32) -> Recent {
        Recent {
            cur: KeyMap::with_capacity(cap as usize),
            old: KeyMap::with_capacity(cap as usize),
            cap: cap as usize,
        }
    }

    /// `k` was written at `stamp`; returns its previous stamp ([`NONE`]:
    /// not among the recent pages).
    #[inline]
    pub fn stamp(&mut self, k: u32, stamp: u32) -> u32 {
        if self.cap == 0 {
            return NONE;
        }
        let prev = match self.cur.insert(k, stamp) {
            Some(p) => p,
            None => self.old.get(k).unwrap_or(NONE),
        };
        if self.cur.len() >= self.cap {
            std::mem::swap(&mut self.cur, &mut self.old);
            self.cur.clear();
        }
        prev
    }

    /// `k` is no longer held.
    pub fn forget(&mut self, k: u32) {
        self.cur.remove(k);
        self.old.remove(k);
    }

    /// Every stamp moves `by` earlier (those older than `by` become 0).
    pub fn rebase(&mut self, by: u32) {
        for v in self.cur.values_mut().chain(self.old.values_mut()) {
            *v = v.saturating_sub(by);
        }
    }

    /// The `cap` most recently written pages, least recent first (equal
    /// stamps: the smaller page first, as a sort of (stamp, page) gives).
    pub fn newest(&self) -> Vec<u32> {
        let mut all: Vec<(u32, u32)> = self.cur.iter().map(|(k, s)| (s, k)).collect();
        all.extend(
            self.old
                .iter()
                .filter(|&(k, _)| self.cur.get(k).is_none())
                .map(|(k, s)| (s, k)),
        );
        all.sort_unstable();
        let drop = all.len().saturating_sub(self.cap);
        all.drain(drop..).map(|(_, k)| k).collect()
    }

    /// Hint that `k` is stamped soon.
    #[inline]
    pub fn prefetch(&self, k: u32) {
        if self.cap > 0 {
            self.cur.prefetch(k);
            self.old.prefetch(k);
        }
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.cur.memory_bytes() + self.old.memory_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn keymap_agrees_with_a_hashmap() {
        let mut rng = crate::rng::Rng::new(3);
        let mut m = KeyMap::with_capacity(8);
        let mut want = HashMap::new();
        for i in 0..200_000u32 {
            // Few keys: long probe runs, many removals inside them.
            let k = rng.below(3_000) as u32 * 7919;
            match rng.below(3) {
                0 => assert_eq!(m.remove(k), want.remove(&k)),
                _ => assert_eq!(m.insert(k, i), want.insert(k, i)),
            }
            assert_eq!(m.get(k), want.get(&k).copied());
        }
        assert_eq!(m.len(), want.len());
        let mut got: Vec<_> = m.iter().collect();
        got.sort_unstable();
        let mut exp: Vec<_> = want.into_iter().collect();
        exp.sort_unstable();
        assert_eq!(got, exp);
    }

    /// What a word per page would give: the previous stamp of every write
    /// within `cap` writes, and the `cap` most recently written pages.
    #[test]
    fn recent_is_what_a_stamp_per_page_gives() {
        let mut rng = crate::rng::Rng::new(11);
        for cap in [1u32, 3, 50, 400] {
            let mut r = Recent::new(cap);
            let mut last: HashMap<u32, u32> = HashMap::new();
            for clock in 0..20_000u32 {
                let i = clock;
                let k = if i % 3 == 0 {
                    rng.below(1000) as u32
                } else {
                    rng.below(40) as u32
                };
                let prev = r.stamp(k, clock);
                let want = last.insert(k, clock);
                match want {
                    Some(p) if clock - p < cap => assert_eq!(prev, p, "cap {cap}"),
                    _ => assert!(prev == NONE || Some(prev) == want, "cap {cap}"),
                }
            }
            let mut exp: Vec<(u32, u32)> = last.into_iter().map(|(k, s)| (s, k)).collect();
            exp.sort_unstable();
            let exp: Vec<u32> = exp[exp.len() - cap as usize..]
                .iter()
                .map(|x| x.1)
                .collect();
            assert_eq!(r.newest(), exp, "cap {cap}");
        }
        assert_eq!(Recent::new(0).stamp(5, 1), NONE);
        assert!(Recent::new(0).newest().is_empty());
    }
}
