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
//! present (the last pop, or an announced arrival) never moves back. A
//! pop takes the earliest of the lanes' heads and the heap's top. In the
//! intel750 random-write run ~16 events per host request, ~350 pending,
//! 96% of them through lanes. A four-ary heap alone ran 1.25x slower; a
//! radix heap, which moved each event ~3.6 times, 1.2x; a timing wheel of
//! lists 1.13x; a winner tree over the lanes' heads cost more than a scan.
//!
//! A key is one `u64`: the time since an epoch (40 bits), an insertion
//! sequence number (20 bits), the lane (4 bits; the heap is lane
//! `LANES`). Keys are unique, so ordering two is one comparison (time
//! first, then the order they were scheduled), the earliest of the heads
//! is a tree of eight `min`s, and its lane is in its low bits; the pop
//! order is fixed whatever the lanes. When the sequence numbers run out
//! (every ~10^6 events) or an event lies beyond the span of the time
//! field (2^40 ns, 18 minutes) from the epoch, the pending keys are
//! renumbered in their order from a new epoch, the present (a strictly
//! increasing map of keys, so every lane and the heap stay ordered). An
//! event scheduled more than a span beyond the present (no device model
//! does that) waits in a side list until it fits; at the same nanosecond
//! it runs after the events pending when it moved in.

/// What an event is about: every kind the timed replay schedules on its one
/// queue, with the object it concerns. The queue holds an event as a `u32`
/// payload ([`Event::payload`]): the kind in the upper 3 bits, the object's
/// id in the lower 29.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A die finished a step of its operation (id: the die and its
    /// generation, which a suspension bumps so a stale timer is known).
    Die(u32),
    /// A channel's bus became free while dies wait for it (id: the channel).
    Channel(u32),
    /// A die's data out ended and its channel, which dies wait for, is free
    /// at that same moment: the die's event and the channel's in one (see
    /// `Flash::on_channel`; the driver runs the channel's part,
    /// `Flash::hand_over`, after it has handled what the die finished).
    DieOutChannel(u32),
    /// A request's command (and a write's data) reached the device (id: the
    /// request's slot).
    Fetched(u32),
    /// A request's completion reached the host (id: the request's slot).
    Done(u32),
}

impl Event {
    /// Bits of a payload that hold the object's id.
    pub const ID_BITS: u32 = 29;
    /// Largest object id a payload holds.
    pub const ID_MASK: u32 = (1 << Self::ID_BITS) - 1;

    /// The event as the queue stores it.
    #[inline(always)]
    pub fn payload(self) -> u32 {
        let (kind, id) = match self {
            Event::Die(id) => (0, id),
            Event::Channel(id) => (1, id),
            Event::Fetched(id) => (2, id),
            Event::Done(id) => (3, id),
            Event::DieOutChannel(id) => (4, id),
        };
        (kind << Self::ID_BITS) | id
    }

    /// The event a payload holds.
    #[inline(always)]
    pub fn of(payload: u32) -> Event {
        let id = payload & Self::ID_MASK;
        match payload >> Self::ID_BITS {
            0 => Event::Die(id),
            1 => Event::Channel(id),
            2 => Event::Fetched(id),
            3 => Event::Done(id),
            4 => Event::DieOutChannel(id),
            k => unreachable!("event kind {k}"),
        }
    }
}

/// Lanes of one delay each.
const LANES: usize = 8;
/// Slots of the map from a delay's hash to the lane that holds it.
const SLOT_BITS: u32 = 6;
/// Children per heap node: a four-ary heap is half as deep as a binary one.
const ARITY: usize = 4;
/// Key fields, from the low end: lane, sequence number, time.
const LANE_BITS: u32 = 4;
const SEQ_BITS: u32 = 20;
const TIME_SHIFT: u32 = LANE_BITS + SEQ_BITS;
/// Times a key holds, from the epoch [ns].
const SPAN: u64 = 1 << (64 - TIME_SHIFT);
const LANE_MASK: u64 = (1 << LANE_BITS) - 1;
/// An empty lane's (or heap's) head.
const EMPTY: u64 = u64::MAX;

/// Min-queue of events keyed by time [ns] (see the module doc).
#[derive(Debug)]
pub struct EventQueue {
    lanes: [Fifo; LANES],
    /// The delay of each lane's events (an empty lane keeps its last
    /// until another delay claims it), or `u64::MAX`.
    delay: [u64; LANES],
    /// The lane a delay's hash last claimed (a direct-mapped cache: a
    /// delay whose slot another took claims a second lane, which only
    /// costs a lane).
    slot: [u8; 1 << SLOT_BITS],
    /// Empty lanes (bit per lane): those a new delay may claim.
    free: u32,
    /// Each lane's earliest key, then the heap's (`EMPTY` if none).
    heads: [u64; LANES + 1],
    /// Key (upper 64 bits) and payload.
    heap: Vec<u128>,
    /// The earliest key (`EMPTY` if none): a pop recomputes it, a push
    /// lowers it.
    best: u64,
    /// Time of key time 0 [ns].
    epoch: u64,
    /// The present [ns]: the time of the last event popped, or of an
    /// arrival the driver announced ([`EventQueue::advance`]).
    now: u64,
    seq: u32,
    len: usize,
    /// Events beyond the span from the epoch: (time, order, payload).
    far: Vec<(u64, u64, u32)>,
    far_min: u64,
    far_order: u64,
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
            best: EMPTY,
            epoch: 0,
            now: 0,
            seq: 0,
            len: 0,
            far: Vec::new(),
            far_min: u64::MAX,
            far_order: 0,
        }
    }

    /// The simulation moved to `now` without popping an event (an arrival):
    /// delays count from there.
    #[inline]
    pub fn advance(&mut self, now: u64) {
        self.now = self.now.max(now);
    }

    /// Schedule `payload` at `time` [ns] (not before the present).
    #[inline]
    pub fn push(&mut self, time: u64, payload: u32) {
        debug_assert!(time >= self.now, "an event before the present");
        let mut rel = time.wrapping_sub(self.epoch);
        if rel >= SPAN || self.seq == 1 << SEQ_BITS {
            self.renumber(self.now);
            rel = time.wrapping_sub(self.epoch);
            if rel >= SPAN {
                self.push_far(time, payload);
                return;
            }
        }
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
        let key = (rel << TIME_SHIFT) | ((self.seq as u64) << LANE_BITS) | l as u64;
        self.seq += 1;
        if l < LANES {
            let f = &mut self.lanes[l];
            debug_assert!(f.last().is_none_or(|b| b >> TIME_SHIFT <= rel));
            // Behind a head the key cannot be the earliest.
            if f.len == 0 {
                self.heads[l] = key;
                self.free &= !(1 << l);
                self.best = self.best.min(key);
            }
            f.push(key, payload);
        } else {
            self.heap_push(((key as u128) << 64) | payload as u128);
            self.best = self.best.min(key);
        }
    }

    /// The lane that holds (or last held) delay `d`, else an empty lane
    /// claimed for it, else `LANES` (none empty).
    #[cold]
    fn lane_for(&mut self, d: u64) -> usize {
        if let Some(l) = self.delay.iter().position(|&x| x == d) {
            return l;
        }
        if self.free == 0 {
            return LANES;
        }
        let l = self.free.trailing_zeros() as usize;
        self.delay[l] = d;
        l
    }

    /// Time of the earliest event, if any.
    #[inline]
    pub fn peek_time(&mut self) -> Option<u64> {
        if self.far_min != u64::MAX {
            return self.peek_far();
        }
        (self.best != EMPTY).then_some(self.epoch + (self.best >> TIME_SHIFT))
    }

    /// The earliest of the heads: a tree of `min`s (keys are unique).
    #[inline]
    fn min_head(&self) -> u64 {
        let h = &self.heads;
        let a = h[0].min(h[1]).min(h[2].min(h[3]));
        let b = h[4].min(h[5]).min(h[6].min(h[7]));
        a.min(b).min(h[8])
    }

    /// Remove and return the earliest event as (time, payload).
    #[inline]
    pub fn pop(&mut self) -> Option<(u64, u32)> {
        if self.far_min != u64::MAX && self.peek_far() != self.peek_main() {
            return self.pop_far();
        }
        let key = self.best;
        if key == EMPTY {
            return None;
        }
        let l = (key & LANE_MASK) as usize;
        let payload = if l < LANES {
            let f = &mut self.lanes[l];
            let payload = f.pay[f.head];
            match f.pop() {
                Some(next) => self.heads[l] = next,
                None => {
                    // Empty, it keeps its delay until another claims it.
                    self.heads[l] = EMPTY;
                    self.free |= 1 << l;
                }
            }
            payload
        } else {
            self.heap_pop()
        };
        self.len -= 1;
        self.best = self.min_head();
        let time = self.epoch + (key >> TIME_SHIFT);
        self.now = time;
        Some((time, payload))
    }

    fn peek_main(&self) -> Option<u64> {
        (self.best != EMPTY).then_some(self.epoch + (self.best >> TIME_SHIFT))
    }

    /// With events in the side list: move in those a renumbering from the
    /// present fits, once they are as early as the earliest pending.
    #[cold]
    fn peek_far(&mut self) -> Option<u64> {
        if self.peek_main().is_none_or(|t| t >= self.far_min) {
            self.renumber(self.now);
        }
        match self.peek_main() {
            Some(t) if t < self.far_min => Some(t),
            _ => (self.far_min != u64::MAX).then_some(self.far_min),
        }
    }

    /// The earliest event of the side list (nothing else is pending).
    #[cold]
    fn pop_far(&mut self) -> Option<(u64, u32)> {
        let i = (0..self.far.len()).min_by_key(|&i| (self.far[i].0, self.far[i].1))?;
        let (time, _, payload) = self.far.swap_remove(i);
        self.len -= 1;
        self.far_min = self.far.iter().map(|e| e.0).min().unwrap_or(u64::MAX);
        self.now = time;
        self.renumber(time);
        Some((time, payload))
    }

    #[cold]
    fn push_far(&mut self, time: u64, payload: u32) {
        self.far.push((time, self.far_order, payload));
        self.far_order += 1;
        self.far_min = self.far_min.min(time);
        self.len += 1;
    }

    /// Renumber the pending keys in their order from epoch `epoch` (not
    /// before the present epoch, not after the earliest pending event),
    /// then move in the side list's events that fit, after them.
    #[cold]
    fn renumber(&mut self, epoch: u64) {
        let epoch = epoch.max(self.epoch);
        let mut all: Vec<(u64, usize, usize)> = Vec::with_capacity(self.len);
        for (l, f) in self.lanes.iter().enumerate() {
            let mask = f.key.len() - 1;
            all.extend((0..f.len).map(|k| (f.key[(f.head + k) & mask], l, (f.head + k) & mask)));
        }
        all.extend(
            self.heap
                .iter()
                .enumerate()
                .map(|(i, &e)| ((e >> 64) as u64, LANES, i)),
        );
        all.sort_unstable_by_key(|e| e.0);
        let old = self.epoch;
        // Never past a pending event (none is before the present, but a
        // wrapped time must not reorder the queue).
        let epoch = all
            .first()
            .map_or(epoch, |e| epoch.min(old + (e.0 >> TIME_SHIFT)));
        let key = |time: u64, rank: u64, lane: usize| {
            ((time - epoch) << TIME_SHIFT) | (rank << LANE_BITS) | lane as u64
        };
        let mut rank = 0u64;
        for (k, l, i) in all {
            let nk = key(old + (k >> TIME_SHIFT), rank, l);
            if l < LANES {
                self.lanes[l].key[i] = nk;
            } else {
                let e = &mut self.heap[i];
                *e = ((nk as u128) << 64) | (*e as u32 as u128);
            }
            rank += 1;
        }
        self.epoch = epoch;
        if !self.far.is_empty() {
            self.far.sort_unstable_by_key(|e| (e.0, e.1));
            let fit = self
                .far
                .iter()
                .take_while(|e| e.0 >= epoch && e.0 - epoch < SPAN)
                .count();
            for (t, _, payload) in self.far.drain(..fit).collect::<Vec<_>>() {
                self.heap_push(((key(t, rank, LANES) as u128) << 64) | payload as u128);
                rank += 1;
            }
            self.far_min = self.far.first().map_or(u64::MAX, |e| e.0);
        }
        assert!(
            rank < 1 << (SEQ_BITS - 1),
            "more than {} events pending",
            1 << (SEQ_BITS - 1)
        );
        self.seq = rank as u32;
        for (l, f) in self.lanes.iter().enumerate() {
            self.heads[l] = if f.len > 0 { f.key[f.head] } else { EMPTY };
        }
        self.heads[LANES] = self.heap.first().map_or(EMPTY, |&e| (e >> 64) as u64);
        self.best = self.min_head();
    }

    fn heap_push(&mut self, e: u128) {
        let h = &mut self.heap;
        let i = h.len();
        h.push(e);
        Self::rise(h, i, e);
        self.heads[LANES] = (h[0] >> 64) as u64;
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

    /// Remove the heap's top and return its payload. Bottom-up: the hole at
    /// the root sinks along the smallest children to a leaf, then the last
    /// entry rises from there.
    fn heap_pop(&mut self) -> u32 {
        let h = &mut self.heap;
        let top = h[0] as u32;
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
        self.heads[LANES] = h.first().map_or(EMPTY, |&e| (e >> 64) as u64);
        top
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

/// A FIFO of keys and their payloads in a ring of a power-of-two size.
#[derive(Debug)]
struct Fifo {
    key: Vec<u64>,
    pay: Vec<u32>,
    head: usize,
    len: usize,
}

impl Fifo {
    fn new() -> Self {
        Fifo {
            key: vec![0; 64],
            pay: vec![0; 64],
            head: 0,
            len: 0,
        }
    }

    #[inline]
    fn push(&mut self, k: u64, payload: u32) {
        if self.len == self.key.len() {
            self.grow();
        }
        let i = (self.head + self.len) & (self.key.len() - 1);
        self.key[i] = k;
        self.pay[i] = payload;
        self.len += 1;
    }

    #[cold]
    fn grow(&mut self) {
        let n = self.key.len();
        let order = |v: &[u64]| {
            (0..n)
                .map(|k| v[(self.head + k) & (n - 1)])
                .collect::<Vec<_>>()
        };
        let mut key = order(&self.key);
        let mut pay: Vec<u32> = (0..n)
            .map(|k| self.pay[(self.head + k) & (n - 1)])
            .collect();
        key.resize(2 * n, 0);
        pay.resize(2 * n, 0);
        self.key = key;
        self.pay = pay;
        self.head = 0;
    }

    /// The back key, if any.
    fn last(&self) -> Option<u64> {
        (self.len > 0).then(|| self.key[(self.head + self.len - 1) & (self.key.len() - 1)])
    }

    /// Drop the front entry (there is one); the new front key, if any.
    #[inline]
    fn pop(&mut self) -> Option<u64> {
        self.head = (self.head + 1) & (self.key.len() - 1);
        self.len -= 1;
        (self.len > 0).then(|| self.key[self.head])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_survives_its_payload() {
        for e in [
            Event::Die(0),
            Event::Channel(7),
            Event::DieOutChannel(Event::ID_MASK),
            Event::Fetched(12345),
            Event::Done(1),
        ] {
            assert_eq!(Event::of(e.payload()), e);
        }
    }

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

    /// Pops against a sorted reference: (time, payload).
    fn check_against_reference(q: &mut EventQueue, events: &[(u64, u32)]) {
        let mut want: Vec<(u64, usize, u32)> = events
            .iter()
            .enumerate()
            .map(|(i, &(t, p))| (t, i, p))
            .collect();
        want.sort();
        let got: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        let want: Vec<_> = want.into_iter().map(|(t, _, p)| (t, p)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn renumbering_keeps_the_order_past_a_million_events() {
        // More events than the key's sequence numbers hold: the pending
        // keys are renumbered (several times) without reordering anything,
        // ties at one nanosecond across lanes included.
        let mut q = EventQueue::new();
        let mut rng = crate::rng::Rng::new(3);
        let mut now = 0u64;
        let mut pending = std::collections::BTreeSet::new();
        for round in 0..3_000_000u32 {
            let t = now + [5, 7, 12, 40][rng.below(4) as usize];
            q.push(t, round);
            pending.insert((t, round, round));
            if pending.len() > 300 || rng.below(2) == 0 {
                let (t, _, p) = pending.pop_first().unwrap();
                assert_eq!(q.pop(), Some((t, p)));
                now = t;
            }
        }
        let rest: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        let want: Vec<_> = pending.into_iter().map(|(t, _, p)| (t, p)).collect();
        assert_eq!(rest, want);
    }

    #[test]
    fn times_beyond_the_key_span_keep_their_order() {
        // Simulated time far past 2^40 ns (a week-long trace) and events
        // scheduled further ahead than the span (they wait aside, then
        // run in time order).
        let week = 7 * 86_400 * 1_000_000_000u64;
        let mut q = EventQueue::new();
        let events = [
            (week, 1),
            (week + 5, 2),
            (3 * week, 3),
            (week + SPAN + 10, 4),
            (week + 5, 5),
            (2 * week, 6),
        ];
        for &(t, p) in &events {
            q.push(t, p);
        }
        assert_eq!(q.len(), events.len());
        assert_eq!(q.peek_time(), Some(week));
        check_against_reference(&mut q, &events);
        assert!(q.is_empty());
        // After the far ones ran, time goes on from there.
        q.advance(3 * week);
        q.push(3 * week + 1, 7);
        q.push(3 * week + 1, 8);
        assert_eq!(q.pop(), Some((3 * week + 1, 7)));
        assert_eq!(q.pop(), Some((3 * week + 1, 8)));
        assert_eq!(q.pop(), None);
    }
}
