//! Online training examples of the learned policies (DOGI §4.2.2): a
//! sampled write keeps its input (features, or a window of them) and the
//! prediction made for it; its label, the block's lifetime, arrives when its
//! LBA is next written or trimmed. A per-LBA slot index finds the pending
//! sample (the paper's hash table), and the latest `cap` samples are kept
//! in a ring.

use crate::future::NEVER;

const NO_SLOT: u32 = u32::MAX;

/// A prediction that was not made.
pub const NO_PRED: u8 = u8::MAX;

/// The ring of samples.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Sampler {
    width: usize,
    cap: usize,
    x: Vec<f32>,
    pred: Vec<u8>,
    time: Vec<u64>,
    /// Lifetime once known, else [`NEVER`].
    life: Vec<u64>,
    lba: Vec<u32>,
    next: usize,
    slot: Vec<u32>,
}

/// One training example read back.
pub struct Example<'a> {
    /// The sampled input.
    pub x: &'a [f32],
    /// The prediction made at write time ([`NO_PRED`] if none).
    pub pred: u8,
    /// Its lifetime, or its age if still alive.
    pub life: u64,
    /// Still alive (`life` is then a lower bound).
    pub alive: bool,
}

impl Sampler {
    /// Samples of `width` floats, at most `cap` kept, for `logical_blocks` LBAs.
    pub fn new(width: usize, cap: usize, logical_blocks: u32) -> Self {
        Sampler {
            width,
            cap: cap.max(1),
            x: Vec::new(),
            pred: Vec::new(),
            time: Vec::new(),
            life: Vec::new(),
            lba: Vec::new(),
            next: 0,
            slot: vec![NO_SLOT; logical_blocks as usize],
        }
    }

    /// Samples held.
    pub fn len(&self) -> usize {
        self.time.len()
    }

    /// Keep a sample of the write of `lba` at `time`; returns its id, to be
    /// attached with [`Sampler::written`] once the write is applied.
    pub fn push(&mut self, x: &[f32], pred: u8, time: u64, lba: u32) -> u32 {
        debug_assert_eq!(x.len(), self.width);
        let w = self.width;
        if self.len() < self.cap {
            self.x.extend_from_slice(x);
            self.pred.push(pred);
            self.time.push(time);
            self.life.push(NEVER);
            self.lba.push(lba);
            return (self.len() - 1) as u32;
        }
        let k = self.next;
        self.next = (k + 1) % self.cap;
        let old = self.lba[k] as usize;
        if self.slot[old] == k as u32 {
            self.slot[old] = NO_SLOT;
        }
        self.x[k * w..(k + 1) * w].copy_from_slice(x);
        (self.pred[k], self.time[k], self.life[k], self.lba[k]) = (pred, time, NEVER, lba);
        k as u32
    }

    /// A user write of `lba` at `now` was applied: the previous copy died
    /// (its pending sample gets its label), and `sample` (if any) now
    /// tracks the new copy.
    #[inline]
    pub fn written(&mut self, lba: u32, now: u64, sample: Option<u32>) {
        self.died(lba, now);
        if let Some(k) = sample {
            self.slot[lba as usize] = k;
        }
    }

    /// The copy of `lba` died at `now` (overwrite or trim).
    #[inline]
    pub fn died(&mut self, lba: u32, now: u64) {
        let k = self.slot[lba as usize];
        if k != NO_SLOT {
            let k = k as usize;
            self.life[k] = now - self.time[k];
            self.slot[lba as usize] = NO_SLOT;
        }
    }

    /// The samples at `now`: labelled ones, and those still alive at an age
    /// of at least `min_age` (censored at their age).
    pub fn examples(&self, now: u64, min_age: u64) -> impl Iterator<Item = Example<'_>> {
        let w = self.width;
        (0..self.len()).filter_map(move |i| {
            let (life, alive) = if self.life[i] != NEVER {
                (self.life[i], false)
            } else if now - self.time[i] >= min_age {
                (now - self.time[i], true)
            } else {
                return None;
            };
            Some(Example {
                x: &self.x[i * w..(i + 1) * w],
                pred: self.pred[i],
                life,
                alive,
            })
        })
    }

    /// Start loading `lba`'s slot.
    #[inline(always)]
    pub fn prefetch(&self, lba: u32) {
        crate::prefetch::prefetch(&self.slot, lba as usize);
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.x.capacity() * 4
            + self.pred.capacity()
            + (self.time.capacity() + self.life.capacity()) * 8
            + (self.lba.capacity() + self.slot.capacity()) * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_arrive_at_death_and_the_ring_forgets() {
        let mut s = Sampler::new(1, 2, 10);
        let a = s.push(&[1.0], 3, 5, 7);
        s.written(7, 5, Some(a));
        let b = s.push(&[2.0], NO_PRED, 6, 8);
        s.written(8, 6, Some(b));
        s.written(7, 15, None);
        let ex: Vec<_> = s.examples(20, 10).map(|e| (e.life, e.alive)).collect();
        assert_eq!(ex, vec![(10, false), (14, true)]);
        assert_eq!(s.examples(20, 15).count(), 1, "LBA 8 too young to say");
        // A third sample replaces the oldest; LBA 7's slot was already cleared.
        let c = s.push(&[3.0], 1, 21, 9);
        s.written(9, 21, Some(c));
        s.died(9, 30);
        let ex: Vec<_> = s.examples(30, 100).map(|e| (e.x[0], e.life)).collect();
        assert_eq!(ex, vec![(3.0, 9)]);
    }
}
