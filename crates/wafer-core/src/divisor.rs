//! Division by a divisor fixed for a run (a segment's blocks, the planes of
//! a device) as one multiply: the hot paths split a physical page number
//! into segment, row and plane for every flash operation, and a hardware
//! 32-bit division costs several times a multiply's latency.
//!
//! Lemire, Kaser and Kurz, "Faster remainder by direct computation"
//! (Software: Practice and Experience, 2019): with `c = ceil(2^64 / d)`,
//! `n / d` is the upper half of the 128-bit product `c * n` for every
//! 32-bit `n` and `d > 1`.

/// A `u32` divisor with its precomputed multiplier.
#[derive(Clone, Copy, Debug)]
pub struct Divisor {
    c: u64,
    d: u32,
}

impl Divisor {
    /// Divisor `d` (> 0).
    pub fn new(d: u32) -> Divisor {
        assert!(d > 0, "division by zero");
        let c = if d == 1 { 0 } else { u64::MAX / d as u64 + 1 };
        Divisor { c, d }
    }

    /// `n / d`.
    #[inline(always)]
    pub fn quotient(self, n: u32) -> u32 {
        if self.d == 1 {
            n
        } else {
            ((self.c as u128 * n as u128) >> 64) as u32
        }
    }

    /// The divisor.
    #[inline(always)]
    pub fn get(self) -> u32 {
        self.d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equals_hardware_division() {
        let mut rng = crate::rng::Rng::new(11);
        let edges = [
            0,
            1,
            2,
            3,
            7,
            1000,
            3840,
            65535,
            65536,
            1 << 31,
            u32::MAX - 1,
            u32::MAX,
        ];
        let mut ds: Vec<u32> = edges.iter().copied().filter(|&d| d > 0).collect();
        ds.extend((0..200).map(|_| 1 + rng.below(u32::MAX as u64) as u32));
        ds.extend((1..=64).map(|k| k * 3840));
        for &d in &ds {
            let v = Divisor::new(d);
            assert_eq!(v.get(), d);
            for &n in &edges {
                assert_eq!(v.quotient(n), n / d, "{n} / {d}");
            }
            for _ in 0..2000 {
                let n = rng.below(1 << 32) as u32;
                assert_eq!(v.quotient(n), n / d, "{n} / {d}");
                let m = (n / d).saturating_mul(d);
                for k in [m, m.saturating_sub(1), m.saturating_add(d - 1)] {
                    assert_eq!(v.quotient(k), k / d, "{k} / {d}");
                }
            }
        }
    }
}
