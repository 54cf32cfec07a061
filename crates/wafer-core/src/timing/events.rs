//! The discrete-event core: a binary min-heap of (time, key) pairs in one
//! flat array. The key packs an insertion sequence number (upper 32 bits:
//! events at the same nanosecond run in the order they were scheduled,
//! which makes runs deterministic) and the event's payload (lower 32 bits:
//! kind and object id, see the driver).

/// Children per node: a four-ary heap is half as deep as a binary one, and
/// a node's children lie side by side (64 bytes).
const ARITY: usize = 4;

/// Min-heap of events keyed by time [ns]. An entry is one `u128`, the time
/// above the key, so that ordering two entries is one wide comparison
/// without branches (time first, then the key's sequence number); keys are
/// unique, so the pop order is fixed whatever the heap's shape.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: Vec<u128>,
    seq: u32,
}

impl EventQueue {
    /// An empty queue.
    pub fn new() -> Self {
        EventQueue {
            heap: Vec::with_capacity(1024),
            seq: 0,
        }
    }

    /// Schedule `payload` at `time` [ns].
    #[inline]
    pub fn push(&mut self, time: u64, payload: u32) {
        let key = ((self.seq as u64) << 32) | payload as u64;
        self.seq = self.seq.wrapping_add(1);
        let e = ((time as u128) << 64) | key as u128;
        let h = &mut self.heap;
        let mut i = h.len();
        h.push(e);
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

    /// Time of the earliest event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<u64> {
        self.heap.first().map(|&e| (e >> 64) as u64)
    }

    /// Remove and return the earliest event as (time, payload). Bottom-up:
    /// the hole at the root sinks along the smallest children to a leaf (no
    /// early exit to mispredict), then the last entry rises from there; it
    /// belongs near the bottom, so it rarely rises far.
    #[inline]
    pub fn pop(&mut self) -> Option<(u64, u32)> {
        let h = &mut self.heap;
        let top = *h.first()?;
        let last = h.pop().expect("non-empty");
        let n = h.len();
        if n > 0 {
            let mut i = 0;
            loop {
                let first = ARITY * i + 1;
                if first + ARITY <= n {
                    // All four children: the smallest by a tournament.
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
            while i > 0 {
                let parent = (i - 1) / ARITY;
                if h[parent] <= last {
                    break;
                }
                h[i] = h[parent];
                i = parent;
            }
            h[i] = last;
        }
        Some(((top >> 64) as u64, top as u32))
    }

    /// Events scheduled.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// No event scheduled.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
        // As the simulator uses it: events scheduled at or after the last
        // one popped, popped in between, against a sorted reference.
        let mut q = EventQueue::new();
        let mut want = std::collections::BTreeSet::new();
        let mut rng = crate::rng::Rng::new(9);
        let (mut now, mut seq, mut popped) = (0u64, 0u64, 0);
        for round in 0..20_000u32 {
            for _ in 0..rng.below(4) {
                let t = now + rng.below(50);
                q.push(t, round);
                want.insert((t, seq, round));
                seq += 1;
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
