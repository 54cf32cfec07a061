//! The discrete-event core: a timing wheel. Events within the next
//! `BUCKETS x WIDTH` ns (8.4 ms: longer than any flash operation) sit in
//! buckets of 1,024 ns, each a short linked list in one flat slab of
//! entries; a bitmap finds the next non-empty bucket. Later events wait in
//! a binary heap until the wheel reaches them. Pushing is O(1), taking the
//! earliest is a bitmap scan plus a walk of one bucket (a handful of
//! entries): no comparison cascade as in a heap. Events come out ordered by
//! (time, insertion sequence), so runs are deterministic.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

const SHIFT: u32 = 10;
const BUCKETS: usize = 8192;
const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: u64,
    key: u64,
    next: u32,
}

/// Priority queue of events keyed by time [ns]; the payload is the event's
/// kind and object (see the driver). Events are never scheduled before the
/// last one taken.
#[derive(Debug)]
pub struct EventQueue {
    entries: Vec<Entry>,
    free: u32,
    head: Vec<u32>,
    bits: Vec<u64>,
    /// Start of the cursor's bucket [ns]; every wheel entry is in
    /// [base, base + BUCKETS << SHIFT).
    base: u64,
    far: BinaryHeap<Reverse<(u64, u64)>>,
    len: usize,
    seq: u32,
    /// Most events ever scheduled at once.
    pub peak: usize,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl EventQueue {
    /// An empty queue.
    pub fn new() -> Self {
        EventQueue {
            entries: Vec::with_capacity(1024),
            free: NIL,
            head: vec![NIL; BUCKETS],
            bits: vec![0; BUCKETS / 64],
            base: 0,
            far: BinaryHeap::new(),
            len: 0,
            seq: 0,
            peak: 0,
        }
    }

    #[inline]
    fn window_end(&self) -> u64 {
        self.base + ((BUCKETS as u64) << SHIFT)
    }

    #[inline]
    fn put(&mut self, time: u64, key: u64) {
        let b = ((time >> SHIFT) as usize) & (BUCKETS - 1);
        let e = Entry {
            time,
            key,
            next: self.head[b],
        };
        let i = if self.free != NIL {
            let i = self.free;
            self.free = self.entries[i as usize].next;
            self.entries[i as usize] = e;
            i
        } else {
            self.entries.push(e);
            (self.entries.len() - 1) as u32
        };
        self.head[b] = i;
        self.bits[b >> 6] |= 1 << (b & 63);
    }

    /// Schedule `payload` at `time` [ns] (not before the last event taken).
    #[inline]
    pub fn push(&mut self, time: u64, payload: u32) {
        debug_assert!(time >= self.base, "an event scheduled in the past");
        let key = ((self.seq as u64) << 32) | payload as u64;
        self.seq = self.seq.wrapping_add(1);
        if time < self.window_end() {
            self.put(time, key);
        } else {
            self.far.push(Reverse((time, key)));
        }
        self.len += 1;
        self.peak = self.peak.max(self.len);
    }

    /// The first non-empty bucket at or after the cursor, moving the
    /// cursor (and the wheel's window) there.
    #[inline]
    fn advance(&mut self) -> Option<usize> {
        loop {
            let c = ((self.base >> SHIFT) as usize) & (BUCKETS - 1);
            // search [c, BUCKETS) then [0, c)
            let found = self.scan(c, BUCKETS).or_else(|| self.scan(0, c));
            match found {
                Some(b) => {
                    let steps = (b + BUCKETS - c) & (BUCKETS - 1);
                    self.base += (steps as u64) << SHIFT;
                    self.pull_far();
                    // pulling may have filled an earlier bucket of the new window: none
                    // can be earlier than `b` (they were beyond the old window end).
                    return Some(b);
                }
                None => {
                    let Reverse((t, _)) = *self.far.peek()?;
                    self.base = (t >> SHIFT) << SHIFT;
                    self.pull_far();
                }
            }
        }
    }

    #[inline]
    fn scan(&self, from: usize, to: usize) -> Option<usize> {
        if from >= to {
            return None;
        }
        let mut w = from >> 6;
        let mut word = self.bits[w] & (!0u64 << (from & 63));
        loop {
            if word != 0 {
                let b = (w << 6) + word.trailing_zeros() as usize;
                return (b < to).then_some(b);
            }
            w += 1;
            if w << 6 >= to {
                return None;
            }
            word = self.bits[w];
        }
    }

    #[inline]
    fn pull_far(&mut self) {
        let end = self.window_end();
        while let Some(&Reverse((t, k))) = self.far.peek() {
            if t >= end {
                break;
            }
            self.far.pop();
            self.put(t, k);
        }
    }

    /// The earliest entry of bucket `b`: (its index, the index before it).
    #[inline]
    fn min_of(&self, b: usize) -> (u32, u32) {
        let mut best = self.head[b];
        let mut best_prev = NIL;
        let mut prev = best;
        let mut i = self.entries[best as usize].next;
        while i != NIL {
            let e = &self.entries[i as usize];
            let m = &self.entries[best as usize];
            if (e.time, e.key) < (m.time, m.key) {
                best = i;
                best_prev = prev;
            }
            prev = i;
            i = e.next;
        }
        (best, best_prev)
    }

    /// Time of the earliest event, if any.
    #[inline]
    pub fn peek_time(&mut self) -> Option<u64> {
        let b = self.advance()?;
        let (i, _) = self.min_of(b);
        Some(self.entries[i as usize].time)
    }

    /// Remove and return the earliest event as (time, payload).
    #[inline]
    pub fn pop(&mut self) -> Option<(u64, u32)> {
        let b = self.advance()?;
        let (i, prev) = self.min_of(b);
        let e = self.entries[i as usize];
        if prev == NIL {
            self.head[b] = e.next;
        } else {
            self.entries[prev as usize].next = e.next;
        }
        if self.head[b] == NIL {
            self.bits[b >> 6] &= !(1 << (b & 63));
        }
        self.entries[i as usize].next = self.free;
        self.free = i;
        self.len -= 1;
        Some((e.time, e.key as u32))
    }

    /// Events scheduled.
    pub fn len(&self) -> usize {
        self.len
    }

    /// No event scheduled.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_then_insertion_order() {
        let mut q = EventQueue::new();
        let mut rng = crate::rng::Rng::new(7);
        let mut want = Vec::new();
        for i in 0..5000u32 {
            let t = rng.below(100);
            q.push(t, i);
            want.push((t, i));
        }
        want.sort();
        let got: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(got, want);
        assert!(q.is_empty());
    }

    #[test]
    fn interleaved_pushes_after_pops_stay_ordered() {
        let mut q = EventQueue::new();
        let mut rng = crate::rng::Rng::new(9);
        let mut now = 0;
        let mut last = (0, 0);
        let mut n = 0u32;
        for _ in 0..20_000 {
            if q.is_empty() || rng.below(3) > 0 {
                let far = if rng.below(50) == 0 { 1 << 26 } else { 1 << 20 };
                q.push(now + rng.below(far), n);
                n += 1;
            } else {
                let (t, p) = q.pop().unwrap();
                assert!((t, p) >= last || t > last.0, "out of order");
                assert!(t >= now);
                now = t;
                last = (t, p);
            }
        }
    }
}
