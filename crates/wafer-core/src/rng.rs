//! The engine's own pseudo-random generator (xoshiro256++ seeded through
//! SplitMix64). Owning it, rather than depending on `rand`, keeps every golden
//! number stable across dependency upgrades: same seed, same result, forever.

/// xoshiro256++ (Blackman & Vigna), 256-bit state, period 2^256 - 1.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Rng {
    s: [u64; 4],
}

/// SplitMix64 step: expands a 64-bit seed into well-mixed state words.
pub fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    /// A generator whose whole stream is determined by `seed`.
    pub fn new(seed: u64) -> Self {
        let mut x = seed;
        Rng {
            s: [
                splitmix64(&mut x),
                splitmix64(&mut x),
                splitmix64(&mut x),
                splitmix64(&mut x),
            ],
        }
    }

    /// An independent generator for sub-stream `stream` of `seed` (tenants, phases).
    pub fn derive(seed: u64, stream: u64) -> Self {
        let mut x = seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03);
        Rng::new(splitmix64(&mut x))
    }

    /// Next 64 random bits.
    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1) with 53 bits of precision.
    #[inline(always)]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in [0, n), unbiased (Lemire's multiply-shift with rejection).
    #[inline(always)]
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        let mut m = (self.next_u64() as u128) * (n as u128);
        if (m as u64) < n {
            let threshold = n.wrapping_neg() % n;
            while (m as u64) < threshold {
                m = (self.next_u64() as u128) * (n as u128);
            }
        }
        (m >> 64) as u64
    }

    /// Exponentially distributed with the given mean (Poisson inter-arrivals),
    /// by the ziggurat method (Marsaglia & Tsang, "The ziggurat method for
    /// generating random variables", J. Stat. Software 2000): a table lookup
    /// and a compare in ~98% of draws, a logarithm or exponential in the rest.
    #[inline(always)]
    pub fn exponential(&mut self, mean: f64) -> f64 {
        let z = ziggurat();
        let bits = self.next_u64();
        let i = (bits >> 56) as usize;
        let j = bits as u32;
        if j < z.k[i] {
            return mean * j as f64 * z.w[i];
        }
        mean * self.exponential_slow(z, i, j)
    }

    #[cold]
    fn exponential_slow(&mut self, z: &Ziggurat, mut i: usize, mut j: u32) -> f64 {
        loop {
            if i == 0 {
                // The base strip's tail: R + Exp(1), by memorylessness.
                return ZIG_R - (1.0 - self.next_f64()).ln();
            }
            let x = j as f64 * z.w[i];
            if z.f[i] + self.next_f64() * (z.f[i - 1] - z.f[i]) < (-x).exp() {
                return x;
            }
            let bits = self.next_u64();
            i = (bits >> 56) as usize;
            j = bits as u32;
            if j < z.k[i] {
                return j as f64 * z.w[i];
            }
        }
    }
}

/// `java.util.Random`'s generator (a 48-bit linear congruential generator,
/// Knuth's parameters as the JDK documents them), for the peers written in
/// Java: under `--setup sepbit-replayer` a selector or policy that draws
/// as SepBIT's replayer does draws the same numbers from the same seed.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct JavaRandom {
    seed: u64,
}

impl JavaRandom {
    const MULTIPLIER: u64 = 0x5_DEEC_E66D;
    const MASK: u64 = (1 << 48) - 1;

    /// `new Random(seed)`.
    pub fn new(seed: i64) -> Self {
        JavaRandom {
            seed: (seed as u64 ^ Self::MULTIPLIER) & Self::MASK,
        }
    }

    /// `next(bits)`: the top `bits` of the next state, as a Java `int`.
    fn next(&mut self, bits: u32) -> i32 {
        self.seed = (self.seed.wrapping_mul(Self::MULTIPLIER).wrapping_add(0xB)) & Self::MASK;
        (self.seed >> (48 - bits)) as i64 as i32
    }

    /// `nextInt(bound)`: uniform in `[0, bound)` (`bound` >= 1).
    pub fn next_int(&mut self, bound: i32) -> i32 {
        debug_assert!(bound > 0);
        if bound & bound.wrapping_neg() == bound {
            return ((bound as i64 * self.next(31) as i64) >> 31) as i32;
        }
        loop {
            let bits = self.next(31);
            let val = bits % bound;
            if bits.wrapping_sub(val).wrapping_add(bound - 1) >= 0 {
                return val;
            }
        }
    }

    /// `nextDouble()`: uniform in `[0, 1)` with 53 bits.
    pub fn next_double(&mut self) -> f64 {
        let hi = (self.next(26) as i64) << 27;
        (hi + self.next(27) as i64) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// `Collections.shuffle(list, this)` on a random-access list.
    pub fn shuffle<T>(&mut self, list: &mut [T]) {
        for i in (2..=list.len()).rev() {
            let j = self.next_int(i as i32) as usize;
            list.swap(i - 1, j);
        }
    }
}

/// Right edge of the ziggurat's base strip for Exp(1) with 256 strips.
const ZIG_R: f64 = 7.697_117_470_131_487;
/// Area of each strip.
const ZIG_V: f64 = 3.949_659_822_581_572e-3;

/// Ziggurat tables for Exp(1): acceptance thresholds `k`, scale `w`, and
/// density at each strip's edge `f`.
struct Ziggurat {
    k: [u32; 256],
    w: [f64; 256],
    f: [f64; 256],
}

fn ziggurat() -> &'static Ziggurat {
    static TABLES: std::sync::OnceLock<Ziggurat> = std::sync::OnceLock::new();
    TABLES.get_or_init(|| {
        let m = 4_294_967_296.0f64;
        let mut z = Ziggurat {
            k: [0; 256],
            w: [0.0; 256],
            f: [0.0; 256],
        };
        let mut d = ZIG_R;
        let mut t = d;
        let q = ZIG_V / (-d).exp();
        z.k[0] = ((d / q) * m) as u32;
        z.k[1] = 0;
        z.w[0] = q / m;
        z.w[255] = d / m;
        z.f[0] = 1.0;
        z.f[255] = (-d).exp();
        for i in (1..=254).rev() {
            d = -(ZIG_V / d + (-d).exp()).ln();
            z.k[i + 1] = ((d / t) * m) as u32;
            t = d;
            z.f[i] = (-d).exp();
            z.w[i] = d / m;
        }
        z
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_random_matches_the_jdk() {
        // values printed by OpenJDK 17 for `new java.util.Random(seed)`
        let mut r = JavaRandom::new(42);
        let ints: Vec<i32> = (0..3).map(|_| r.next(32)).collect();
        assert_eq!(ints, [-1_170_105_035, 234_785_527, -1_360_544_799]);
        let mut r = JavaRandom::new(42);
        let bounded = [10, 10, 1_000_000_007, 16].map(|b| r.next_int(b));
        assert_eq!(bounded, [0, 3, 467_211_241, 0]);
        let mut r = JavaRandom::new(42);
        assert_eq!(
            (r.next_double(), r.next_double()),
            (0.7275636800328681, 0.6832234717598454)
        );
        let mut l: Vec<u32> = (0..10).collect();
        JavaRandom::new(0).shuffle(&mut l);
        assert_eq!(l, [4, 8, 9, 6, 3, 5, 2, 1, 7, 0]);
        assert_eq!(JavaRandom::new(-5).next_int(7), 5);
    }

    #[test]
    fn same_seed_same_stream() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        assert_ne!(Rng::new(7).next_u64(), Rng::new(8).next_u64());
    }

    #[test]
    fn below_is_in_range_and_roughly_uniform() {
        let mut r = Rng::new(1);
        let mut counts = [0u32; 10];
        for _ in 0..100_000 {
            counts[r.below(10) as usize] += 1;
        }
        for c in counts {
            assert!((9_000..11_000).contains(&c), "{counts:?}");
        }
    }

    #[test]
    fn exponential_matches_its_distribution() {
        let mut r = Rng::new(5);
        let n = 1_000_000;
        let xs: Vec<f64> = (0..n).map(|_| r.exponential(1.0)).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        assert!(
            (mean - 1.0).abs() < 0.005 && (var - 1.0).abs() < 0.01,
            "{mean} {var}"
        );
        // P(X > x) = exp(-x) at several points, the tail (x > R) included.
        for x in [0.01, 0.1, 0.5, 1.0, 2.0, 4.0, 7.0, 8.0] {
            let p = xs.iter().filter(|&&v| v > x).count() as f64 / n as f64;
            let want = (-x).exp();
            let sd = (want * (1.0 - want) / n as f64).sqrt();
            assert!((p - want).abs() < 5.0 * sd + 1e-6, "x={x}: {p} vs {want}");
        }
        assert!(xs.iter().all(|&v| v >= 0.0 && v.is_finite()));
    }

    #[test]
    fn unit_interval_and_exponential_mean() {
        let mut r = Rng::new(3);
        let n = 200_000;
        let mut sum = 0.0;
        for _ in 0..n {
            let u = r.next_f64();
            assert!((0.0..1.0).contains(&u));
            sum += r.exponential(2.0);
        }
        let mean = sum / n as f64;
        assert!((mean - 2.0).abs() < 0.03, "{mean}");
    }
}
