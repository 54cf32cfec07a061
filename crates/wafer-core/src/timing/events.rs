//! The discrete-event core: a min-queue of (time, payload) events that
//! runs events at the same nanosecond in the order they were scheduled
//! (which makes runs deterministic).
//!
//! Most events of the flash model are scheduled a fixed delay after the
//! present: an array program or read of one page type, a transfer of one
//! size, a command, the host's completion. Simulated time never runs
//! backwards, so the events of one delay arrive in time order: a FIFO
//! keeps them sorted for free. The queue therefore keeps a few such
//! *lanes*, each claimed by one delay while it holds events (a small
//! direct-mapped table from a hash of the delay names its lane; a miss
//! looks the delay up among the lanes or claims an empty one), and a
//! four-ary heap for the events that find no lane. A lane stays sorted by
//! construction: its events are the present plus one delay, and the
//! present (the last pop, or an announced arrival) never moves back (a
//! caller scheduling into the past gets a wrapped delay, as constant). A
//! pop takes the earliest of the lanes' heads and the heap's top (found
//! once by the peek before it). Scheduling into a lane is an append to a ring,
//! popping one a comparison per lane, against the dependent loads of a
//! heap's sift for every event: in the intel750 random-write run ~17
//! events per host request, ~350 pending, 96% of them through lanes (the
//! heap takes the rest when every lane is busy with other delays). A
//! four-ary heap alone ran 1.25x slower; a radix heap, which moved each
//! event ~3.6 times, 1.2x; a winner tree over the lanes' heads, or a search
//! on times alone with a second pass for ties, cost more instructions than
//! the one wide comparison per lane.
//!
//! An entry is one `u128`: the time, then an insertion sequence number,
//! then the payload (lower 32 bits: kind and object id, see the driver),
//! so that ordering two entries is one wide comparison (time first, then
//! the sequence number). Keys are unique, so the pop order is fixed
//! whatever the lanes.

/// Lanes of one delay each.
const LANES: usize = 8;
/// Slots of the map from a delay's hash to the lane that holds it.
const SLOT_BITS: u32 = 6;
/// Children per heap node: a four-ary heap is half as deep as a binary one.
const ARITY: usize = 4;
/// An empty lane's (or heap's) head.
const EMPTY: u128 = u128::MAX;

/// Min-queue of events keyed by time [ns] (see the module doc).
#[derive(Debug)]
pub struct EventQueue {
    lanes: [Fifo; LANES],
    /// The delay each lane holds, or `u64::MAX` when it is empty.
    delay: [u64; LANES],
    /// The lane a delay's hash last claimed (a direct-mapped cache: a
    /// delay whose slot another took claims a second lane, which only
    /// costs a lane).
    slot: [u8; 1 << SLOT_BITS],
    /// Empty lanes (bit per lane).
    free: u32,
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
            lanes: std::array::from_fn(|_| Fifo::new()),
            delay: [u64::MAX; LANES],
            slot: [0; 1 << SLOT_BITS],
            free: (1 << LANES) - 1,
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
        // The lane the delay's slot names takes the event, else the lane
        // that holds the delay, else an empty lane is claimed. No lane: the
        // heap.
        let h = (d.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SLOT_BITS)) as usize;
        let mut l = self.slot[h] as usize;
        if self.delay[l] != d {
            l = self.lane_for(d);
            if l < LANES {
                self.slot[h] = l as u8;
            }
        }
        if l < LANES {
            debug_assert!(self.lanes[l].last().is_none_or(|b| b >> 64 <= key >> 64));
            if self.lanes[l].len == 0 {
                self.heads[l] = key;
            }
            self.lanes[l].push(key);
        } else {
            self.heap_push(key);
        }
        // Earlier than the earliest: it heads its lane (or tops the heap).
        if key < self.best.1 {
            self.best = (l, key);
        }
    }

    /// The lane that holds delay `d`, else a lane claimed for it, else
    /// `LANES` (none free).
    #[cold]
    fn lane_for(&mut self, d: u64) -> usize {
        if let Some(l) = self.delay.iter().position(|&x| x == d) {
            return l;
        }
        if self.free == 0 {
            return LANES;
        }
        let l = self.free.trailing_zeros() as usize;
        self.free &= self.free - 1;
        self.delay[l] = d;
        l
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
            match self.lanes[l].pop() {
                Some(next) => self.heads[l] = next,
                None => {
                    self.heads[l] = EMPTY;
                    self.delay[l] = u64::MAX;
                    self.free |= 1 << l;
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

/// A FIFO of entries in a ring of a power-of-two size.
#[derive(Debug)]
struct Fifo {
    buf: Vec<u128>,
    head: usize,
    len: usize,
}

impl Fifo {
    fn new() -> Self {
        Fifo {
            buf: vec![0; 64],
            head: 0,
            len: 0,
        }
    }

    #[inline]
    fn push(&mut self, e: u128) {
        if self.len == self.buf.len() {
            self.grow();
        }
        let i = (self.head + self.len) & (self.buf.len() - 1);
        self.buf[i] = e;
        self.len += 1;
    }

    #[cold]
    fn grow(&mut self) {
        let n = self.buf.len();
        let mut buf = Vec::with_capacity(2 * n);
        buf.extend((0..n).map(|k| self.buf[(self.head + k) & (n - 1)]));
        buf.resize(2 * n, 0);
        self.buf = buf;
        self.head = 0;
    }

    /// The back entry, if any.
    fn last(&self) -> Option<u128> {
        (self.len > 0).then(|| self.buf[(self.head + self.len - 1) & (self.buf.len() - 1)])
    }

    /// Drop the front entry (there is one); the new front, if any.
    #[inline]
    fn pop(&mut self) -> Option<u128> {
        self.head = (self.head + 1) & (self.buf.len() - 1);
        self.len -= 1;
        (self.len > 0).then(|| self.buf[self.head])
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
