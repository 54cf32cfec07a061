//! `hotcold:W:S`: a fraction W of requests go to the first fraction S of the
//! region (the hot part), the rest uniformly to the remainder.

use super::AddressPattern;
use crate::rng::Rng;

/// Two-temperature workload.
pub(crate) struct HotCold {
    w: f64,
    hot_len: u64,
}

impl HotCold {
    pub(crate) fn new(len: u64, w: f64, s: f64) -> Self {
        HotCold {
            w,
            hot_len: ((s * len as f64) as u64).clamp(1, len.saturating_sub(1).max(1)),
        }
    }
}

/// Start of a `size`-block request inside [lo, lo + span), kept inside the region.
#[inline(always)]
pub(crate) fn within(rng: &mut Rng, lo: u64, span: u64, size: u64, len: u64) -> u64 {
    (lo + rng.below(span)).min(len - size)
}

impl AddressPattern for HotCold {
    #[inline(always)]
    fn start(&mut self, rng: &mut Rng, len: u64, size: u64, _written: u64) -> u64 {
        if rng.next_f64() < self.w {
            within(rng, 0, self.hot_len, size, len)
        } else {
            within(rng, self.hot_len, len - self.hot_len, size, len)
        }
    }
}
