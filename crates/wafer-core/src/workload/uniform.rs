//! `uniform`: every start block equally likely (the workload of the classic
//! analyses, e.g. Desnoyers, SYSTOR'12).

use super::AddressPattern;
use crate::rng::Rng;

/// Uniform over the region.
pub(crate) struct Uniform;

impl AddressPattern for Uniform {
    #[inline(always)]
    fn start(&mut self, rng: &mut Rng, len: u64, size: u64, _written: u64) -> u64 {
        rng.below(len - size + 1)
    }
}
