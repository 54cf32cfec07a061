//! The discrete-event core: a min-queue of (time, payload) events that
//! runs events at the same nanosecond in the order they were scheduled
//! (which makes runs deterministic).
//!
//! Most events of the flash model are scheduled a fixed delay after the
//! present: an array program or read of one page type, a transfer of one
//! size, a command, the host's completion. Simulated time never runs
//! backwards, so the events of one delay arrive in time order: a FIFO
//! keeps them sorted for free. The queue therefore keeps a few such
//! *lanes*, each claimed by one delay while it holds events (probed from
//! the lane a hash of the delay names), and a four-ary heap for the events
//! that find no lane. An event joins its lane only if it is not earlier
//! than the lane's last (always true for one delay, but checked, so order
//! holds whatever the callers do). A pop takes the earliest of the lanes'
//! heads and the heap's top (found once by the peek before it). Scheduling
//! into a lane is an append, popping one a comparison per lane, against
//! the dependent loads of a heap's sift for every event: in the intel750
//! random-write run ~20 events per host request, ~350 pending, 96.5%
//! of them through lanes (70% at the first probe; the heap takes the
//! rest when every lane is busy with other delays). A four-ary heap alone
//! ran 1.25x slower; a radix heap, which moved each event ~3.6 times, 1.2x.
//!
//! An entry is one `u128`: the time, then an insertion sequence number,
//! then the payload (lower 32 bits: kind and object id, see the driver),
//! so that ordering two entries is one wide comparison (time first, then
//! the sequence number). Keys are unique, so the pop order is fixed
//! whatever the lanes.

use std::collections::VecDeque;

/// Lanes of one delay each (a power of two: a delay's hash picks one).
const LANE_BITS: u32 = 3;
const LANES: usize = 1 << LANE_BITS;
/// Children per heap node: a four-ary heap is half as deep as a binary one.
const ARITY: usize = 4;
/// An empty lane's (or heap's) head.
const EMPTY: u128 = u128::MAX;

/// Min-queue of events keyed by time [ns] (see the module doc).
#[derive(Debug)]
pub struct EventQueue {
    lanes: Vec<VecDeque<u128>>,
    /// The delay each lane holds, or `u64::MAX` when it is empty.
    delay: [u64; LANES],
    /// Time of each lane's last event.
    tail: [u64; LANES],
    /// Each lane's earliest entry, then the heap's (`EMPTY` if none).
    heads: [u128; LANES + 1],
    heap: Vec<u128>,
    /// The present [ns]: the time of the last event popped, or of an
    /// arrival the driver announced ([`EventQueue::advance`]).
    now: u64,
    seq: u32,
    len: usize,
    /// The earliest entry and its lane (`LANES`: the heap), when `known`:
    /// a peek finds it, pushes keep it (an earlier entry heads its lane),
    /// the pop after the peek takes it without a second search.
    best: (usize, u128),
    known: bool,
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
            lanes: (0..LANES).map(|_| VecDeque::with_capacity(64)).collect(),
            delay: [u64::MAX; LANES],
            tail: [0; LANES],
            heads: [EMPTY; LANES + 1],
            heap: Vec::with_capacity(256),
            now: 0,
            seq: 0,
            len: 0,
            best: (LANES, EMPTY),
            known: false,
        }
    }

    /// The simulation moved to `now` without popping an event (an arrival):
    /// delays count from there.
    #[inline]
    pub fn advance(&mut self, now: u64) {
        self.now = self.now.max(now);
    }

    /// Schedule `payload` at `time` [ns].
    #[inline]
    pub fn push(&mut self, time: u64, payload: u32) {
        let key = ((time as u128) << 64) | ((self.seq as u128) << 32) | payload as u128;
        self.seq = self.seq.wrapping_add(1);
        self.len += 1;
        let d = time.wrapping_sub(self.now);
        // Probe from the lane a hash of the delay names: the first lane that
        // holds this delay takes the event (unless it would come out of
        // order), else the first empty one is claimed; most events stop at
        // the first probe. No lane: the heap.
        let g = (d.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - LANE_BITS)) as usize;
        let mut to = LANES;
        for i in 0..LANES {
            let l = (g + i) % LANES;
            if self.delay[l] == d {
                if self.tail[l] <= time {
                    to = l;
                }
                break;
            }
            if self.delay[l] == u64::MAX {
                self.delay[l] = d;
                to = l;
                break;
            }
        }
        if to < LANES {
            if self.lanes[to].is_empty() {
                self.heads[to] = key;
            }
            self.lanes[to].push_back(key);
            self.tail[to] = time;
        } else {
            self.heap_push(key);
        }
        // Earlier than the earliest: it heads its lane (or tops the heap).
        if key < self.best.1 {
            self.best = (to, key);
        }
    }

    /// Time of the earliest event, if any.
    #[inline]
    pub fn peek_time(&mut self) -> Option<u64> {
        let m = self.earliest().1;
        (m != EMPTY).then_some((m >> 64) as u64)
    }

    #[inline]
    fn earliest(&mut self) -> (usize, u128) {
        if !self.known {
            self.best = self.min_head();
            self.known = true;
        }
        self.best
    }

    #[inline]
    fn min_head(&self) -> (usize, u128) {
        let mut best = (LANES, self.heads[LANES]);
        for (l, &h) in self.heads[..LANES].iter().enumerate() {
            if h < best.1 {
                best = (l, h);
            }
        }
        best
    }

    /// Remove and return the earliest event as (time, payload).
    #[inline]
    pub fn pop(&mut self) -> Option<(u64, u32)> {
        let (l, key) = self.earliest();
        if key == EMPTY {
            return None;
        }
        self.known = false;
        self.best = (LANES, EMPTY);
        if l < LANES {
            let lane = &mut self.lanes[l];
            lane.pop_front();
            match lane.front() {
                Some(&next) => self.heads[l] = next,
                None => {
                    self.heads[l] = EMPTY;
                    self.delay[l] = u64::MAX;
                }
            }
        } else {
            self.heap_pop();
        }
        self.len -= 1;
        let time = (key >> 64) as u64;
        self.now = time;
        Some((time, key as u32))
    }

    fn heap_push(&mut self, e: u128) {
        let h = &mut self.heap;
        let i = h.len();
        h.push(e);
        Self::rise(h, i, e);
        self.heads[LANES] = h[0];
    }

    /// Put `e` at hole `i` or above, moving larger parents down.
    #[inline]
    fn rise(h: &mut [u128], mut i: usize, e: u128) {
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if h[parent] <= e {
                break;
            }
            h[i] = h[parent];
            i = parent;
        }
        h[i] = e;
    }

    /// Remove the heap's top. Bottom-up: the hole at the root sinks along
    /// the smallest children to a leaf, then the last entry rises from there.
    fn heap_pop(&mut self) {
        let h = &mut self.heap;
        let last = h.pop().expect("non-empty");
        let n = h.len();
        if n > 0 {
            let mut i = 0;
            loop {
                let first = ARITY * i + 1;
                if first + ARITY <= n {
                    let a = first + (h[first + 1] < h[first]) as usize;
                    let b = first + 2 + (h[first + 3] < h[first + 2]) as usize;
                    let c = if h[b] < h[a] { b } else { a };
                    h[i] = h[c];
                    i = c;
                } else {
                    if first < n {
                        let mut c = first;
                        for k in first + 1..n {
                            if h[k] < h[c] {
                                c = k;
                            }
                        }
                        h[i] = h[c];
                        i = c;
                    }
                    break;
                }
            }
            Self::rise(h, i, last);
        }
        self.heads[LANES] = h.first().copied().unwrap_or(EMPTY);
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
    fn pushes_between_pops_keep_the_order() {
        // As the simulator uses it: events scheduled at or after the
        // present (the last pop, or an arrival before the next event), popped
        // in between, against a sorted reference; delays near and far, few
        // and many, so that lanes fill, mix delays and overflow to the heap.
        let mut q = EventQueue::new();
        let mut want = std::collections::BTreeSet::new();
        let mut rng = crate::rng::Rng::new(9);
        let (mut now, mut seq, mut popped) = (0u64, 0u64, 0);
        for round in 0..20_000u32 {
            for _ in 0..rng.below(4) {
                // Mostly near, sometimes far (up to ~2^40 ns).
                let far = rng.below(10) == 0;
                let span = if far { 1 << (1 + rng.below(40)) } else { 50 };
                let t = now + rng.below(span);
                q.push(t, round);
                want.insert((t, seq, round));
                seq += 1;
            }
            if rng.below(8) == 0 {
                // An arrival between events: time moves on, no event runs.
                let to = want
                    .first()
                    .map_or(now + 30, |e| e.0)
                    .min(now + rng.below(30));
                now = now.max(to);
                q.advance(now);
            }
            if rng.below(3) > 0 {
                let got = q.pop();
                let w = want.pop_first().map(|(t, _, p)| (t, p));
                assert_eq!(got, w, "pop {popped}");
                if let Some((t, _)) = got {
                    assert!(t >= now);
                    now = t;
                }
                popped += 1;
            }
            assert_eq!(q.len(), want.len());
            assert_eq!(q.peek_time(), want.first().map(|e| e.0));
        }
    }
}
