//! Least-recently-used tables over flat arrays, for the DRAM data cache and
//! the cached mapping table: an index per key (4 bytes per logical page), a
//! doubly linked list over slots, and a 64-bit value per slot the owner
//! interprets (dirty bit, sector bitmap). No per-entry allocation.

use super::flash::NONE;

/// An LRU table of up to `cap` keys below `keys`.
#[derive(Clone, Debug)]
pub struct Lru {
    index: Vec<u32>,
    key: Vec<u32>,
    prev: Vec<u32>,
    next: Vec<u32>,
    /// Per-slot value (owner-defined).
    pub val: Vec<u64>,
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
            index: vec![NONE; if cap == 0 { 0 } else { keys }],
            key: Vec::with_capacity(cap as usize),
            prev: Vec::with_capacity(cap as usize),
            next: Vec::with_capacity(cap as usize),
            val: Vec::with_capacity(cap as usize),
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
        (self.key.len() - self.free_list.len()) as u32
    }

    /// No entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    fn unlink(&mut self, s: u32) {
        let (p, n) = (self.prev[s as usize], self.next[s as usize]);
        if p == NONE {
            self.head = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NONE {
            self.tail = p;
        } else {
            self.prev[n as usize] = p;
        }
    }

    #[inline]
    fn push_front(&mut self, s: u32) {
        self.prev[s as usize] = NONE;
        self.next[s as usize] = self.head;
        if self.head != NONE {
            self.prev[self.head as usize] = s;
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
        (self.tail != NONE).then(|| (self.tail, self.key[self.tail as usize]))
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
        } else if (self.key.len() as u32) < self.cap {
            self.key.push(0);
            self.prev.push(NONE);
            self.next.push(NONE);
            self.val.push(0);
            self.key.len() as u32 - 1
        } else {
            let s = self.tail;
            let old = self.key[s as usize];
            evicted = Some((old, self.val[s as usize]));
            self.index[old as usize] = NONE;
            self.unlink(s);
            s
        };
        self.key[s as usize] = k;
        self.val[s as usize] = v;
        self.index[k as usize] = s;
        self.push_front(s);
        evicted
    }

    /// Drop `k`; returns its value if it was held.
    pub fn remove(&mut self, k: u32) -> Option<u64> {
        let s = self.peek(k)?;
        self.unlink(s);
        self.index[k as usize] = NONE;
        self.free_list.push(s);
        Some(self.val[s as usize])
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.index.capacity() * 4 + self.key.capacity() * 20 + self.free_list.capacity() * 4
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
}
