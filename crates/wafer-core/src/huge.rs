//! Large tables on transparent huge pages. The forward and reverse maps and
//! the data cache's tables are hit at random; on 4 KiB pages nearly every
//! such access also misses the TLB (tens of MB against a few MB of TLB
//! reach), and a page walk under a hypervisor can cost more than the cache
//! miss itself. Asking the kernel for 2 MiB pages (`madvise(MADV_HUGEPAGE)`;
//! most distributions back anonymous memory with them only when asked)
//! removes most of those walks, the more the larger the device: WAF mode
//! on a 128 GiB device 4.5 -> 6.5 M user writes/s, timing mode on intel750
//! +3% at 4 GiB and +16% at 16 GiB (docs/PERFORMANCE.md, "Timing mode",
//! session 28). No effect on results; where the kernel says no, nothing
//! changes.

/// Bytes of a huge page (x86-64; arm64 with 4 KiB base pages).
const HUGE: usize = 2 << 20;

/// A vector of `n` copies of `value`, on huge pages where the kernel allows.
pub fn filled<T: Clone>(value: T, n: usize) -> Vec<T> {
    let mut v = with_capacity(n);
    v.resize(n, value);
    v
}

/// An empty vector with room for `n` elements (it never needs to grow
/// beyond that), on huge pages where the kernel allows.
///
/// The allocator places a large buffer anywhere in its own mapping, and
/// only whole aligned 2 MiB pages inside a mapping can be huge: a table of
/// 2 MiB or more gets one huge page of spare room, so that every aligned
/// 2 MiB page from its first boundary on lies inside the buffer (the part
/// before the first boundary, less than 2 MiB, stays on small pages). The
/// spare room is never written; it costs address space, and at most the
/// rest of the huge page that holds the table's end in memory (memory
/// accounting counts the table, not the room). The advice comes before
/// the first write, so the page faults take huge pages directly.
pub fn with_capacity<T>(n: usize) -> Vec<T> {
    let size = std::mem::size_of::<T>().max(1);
    if n.saturating_mul(size) < HUGE {
        return Vec::with_capacity(n);
    }
    let v = Vec::with_capacity(n + HUGE / size);
    advise(v.as_ptr() as usize, v.capacity() * size);
    v
}

#[cfg(target_os = "linux")]
fn advise(start: usize, bytes: usize) {
    // The whole huge pages inside the buffer.
    let lo = (start + HUGE - 1) & !(HUGE - 1);
    let hi = (start + bytes) & !(HUGE - 1);
    if hi > lo {
        // SAFETY: the range lies inside this vector's own allocation, and
        // madvise(MADV_HUGEPAGE) only advises on page size: it neither
        // reads, writes, maps nor unmaps memory. A refusal (no THP support,
        // THP disabled) returns an error, which changes nothing and is
        // ignored.
        #[allow(unsafe_code)]
        unsafe {
            libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise(_start: usize, _bytes: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_hold_what_was_asked_for() {
        // Small and large: the same contents as `vec!`, room for at least
        // `n` without growing.
        for n in [0, 1, 1000, 3 << 20] {
            let v = filled(7u32, n);
            assert_eq!(v.len(), n);
            assert!(v.iter().all(|&x| x == 7));
            let w: Vec<u64> = with_capacity(n);
            assert!(w.is_empty() && w.capacity() >= n);
        }
    }
}
