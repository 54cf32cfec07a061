//! The discrete-event core: a binary min-heap of (time, key) pairs in one
//! flat array. The key packs an insertion sequence number (upper 32 bits:
//! events at the same nanosecond run in the order they were scheduled,
//! which makes runs deterministic) and the event's payload (lower 32 bits:
//! kind and object id, see the driver).

/// Min-heap of events keyed by time [ns].
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: Vec<(u64, u64)>,
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
        let h = &mut self.heap;
        let mut i = h.len();
        h.push((time, key));
        while i > 0 {
            let parent = (i - 1) / 2;
            if h[parent] <= (time, key) {
                break;
            }
            h[i] = h[parent];
            i = parent;
        }
        h[i] = (time, key);
    }

    /// Time of the earliest event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<u64> {
        self.heap.first().map(|e| e.0)
    }

    /// Remove and return the earliest event as (time, payload).
    #[inline]
    pub fn pop(&mut self) -> Option<(u64, u32)> {
        let h = &mut self.heap;
        let top = *h.first()?;
        let last = h.pop().expect("non-empty");
        let n = h.len();
        if n > 0 {
            let mut i = 0;
            loop {
                let l = 2 * i + 1;
                if l >= n {
                    break;
                }
                let r = l + 1;
                let c = if r < n && h[r] < h[l] { r } else { l };
                if last <= h[c] {
                    break;
                }
                h[i] = h[c];
                i = c;
            }
            h[i] = last;
        }
        Some((top.0, top.1 as u32))
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
}
