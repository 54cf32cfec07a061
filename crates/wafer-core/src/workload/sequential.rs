//! `seq`: sequential requests that wrap at the region's end (the last request
//! before the wrap is cut at the end), so every block is overwritten in the same order (WAF 1.0 under any victim selector).

use super::AddressPattern;
use crate::rng::Rng;

/// Sequential cursor.
#[derive(Default)]
pub(crate) struct Sequential {
    cursor: u64,
}

impl AddressPattern for Sequential {
    #[inline(always)]
    fn start(&mut self, _rng: &mut Rng, len: u64, size: u64, _written: u64) -> u64 {
        if self.cursor >= len {
            self.cursor = 0;
        }
        let s = self.cursor;
        self.cursor += size;
        s
    }
}
