//! `phase:W:S:P`: a hot spot (fraction S of the region receiving a fraction W of
//! the requests; the rest go uniformly anywhere in the region) that jumps to a new random place every P drive-writes of the
//! region, so block temperatures change over time (the dynamic workloads the
//! DOGI and Shiro papers use to stress adaptivity).
//!
//! With `move=slide` the hot spot instead shifts by its own length every P
//! drive-writes, wrapping at the region's end: a regular movement a
//! predictor can learn (the LSTM+KM paper's FIO jobs, whose temperature
//! "changes regularly" and whose neighbouring chunks are related), where a
//! random jump cannot be anticipated.

use super::hotcold::within;
use super::AddressPattern;
use crate::rng::Rng;

/// Moving hot spot.
pub(crate) struct Phase {
    w: f64,
    hot_len: u64,
    hot_start: u64,
    period_blocks: u64,
    next_move: u64,
    slide: bool,
}

impl Phase {
    pub(crate) fn new(len: u64, w: f64, s: f64, period: f64, slide: bool) -> Self {
        let period_blocks = ((period * len as f64) as u64).max(1);
        Phase {
            w,
            hot_len: ((s * len as f64) as u64).clamp(1, len),
            hot_start: 0,
            period_blocks,
            next_move: period_blocks,
            slide,
        }
    }
}

impl AddressPattern for Phase {
    #[inline(always)]
    fn start(&mut self, rng: &mut Rng, len: u64, size: u64, written: u64) -> u64 {
        while written >= self.next_move {
            self.hot_start = if self.slide {
                (self.hot_start + self.hot_len) % len
            } else {
                rng.below(len - self.hot_len + 1)
            };
            self.next_move += self.period_blocks;
        }
        if rng.next_f64() < self.w {
            if self.slide {
                // The hot span may wrap past the region's end.
                let a = (self.hot_start + rng.below(self.hot_len)) % len;
                return a.min(len - size);
            }
            within(rng, self.hot_start, self.hot_len, size, len)
        } else {
            within(rng, 0, len, size, len)
        }
    }
}
