//! Software prefetch of table entries the engine will touch soon. The forward
//! map and reverse map are far larger than the caches and are hit at random,
//! so the engine asks for the next requests' entries early (and GC for the
//! entries of blocks a few slots ahead in the victim) to overlap the misses.

/// Hint that `slice[i]` will be read or written soon. No effect on results;
/// out-of-range indexes are ignored.
#[inline(always)]
pub fn prefetch<T>(slice: &[T], i: usize) {
    if i < slice.len() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch is a cache hint: it never faults and reads or
        // writes nothing observable; the pointer is in bounds anyway.
        #[allow(unsafe_code)]
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(slice.as_ptr().add(i) as *const i8);
        }
    }
}
