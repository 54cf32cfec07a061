//! Automatic feature-combination selection (FIOS §3.5–3.6, Table 1, Fig. 7,
//! Eqs. 1–3): the workload attributes θ = [ACF, RW, R, S, λ] of a training
//! trace, each High (1) or Low (0) by a cut-off, mapped to a feature set ψ
//! through the base matrix B.
//!
//! Attributes (§5, Table 3), computed over the training trace's requests:
//! ACF = lag-1 autocorrelation of write inter-arrival times; RW = share of
//! writes not starting where the previous write ended; R = bytes accessed
//! (read + written) / unique bytes accessed; S = mean write size [KiB];
//! λ = write rate [GB/day, 10^9 bytes] over the trace's span.
//!
//! The paper never gives the High/Low cut-offs; the defaults (ACF 0.5, RW
//! 50%, R 10, S 64 KiB, λ 100 GB/day) satisfy its own examples (spec §2.7:
//! MSR-prn0 θ = [1 1 0 0 1], hm0 → C, hm1 → FC).
//!
//! B, with the row labels corrected (the extracted Fig. 7 shows "F" on row
//! 4, which is S: "S and F need 2 rows each"):
//!
//! | row | ACF | RW | R | S | λ | feature |
//! |---|---|---|---|---|---|---|
//! | 1 | 1 | 0 | 0 | 0 | 1 | A |
//! | 2 | 1 | 1 | 0 | 0 | 0 | C |
//! | 3 | 0 | 0 | 0 | 1 | 0 | S |
//! | 4 | 1 | 0 | 0 | 1 | 0 | S |
//! | 5 | 0 | 0 | 1 | 0 | 0 | F |
//! | 6 | 1 | 0 | 1 | 0 | 0 | F |
//!
//! Rule (Eq. 3, f_fact): α_i = 0 when row i has a 1 where θ has a 0 ("any
//! feature with a high impact of an attribute that is 0 in θ is not a
//! candidate"); ψ = the union of the features of the rows with α_i = 1.
//! Closed form: ψ = {A if ACF∧λ} ∪ {C if ACF∧RW} ∪ {S if S} ∪ {F if R}.
//! The paper requires Σα > 0 without a fallback; wafer falls back to {F}
//! (the "usually used" feature, §6.2) or, with `fallback=nearest`, to the
//! features of the rows nearest θ in Hamming distance.

use serde::{Deserialize, Serialize};

use super::matrix::FeatureSet;

/// The base matrix B: attribute bits [ACF, RW, R, S, λ] and the feature.
pub const BASE: [([u8; 5], u8); 6] = [
    ([1, 0, 0, 0, 1], FeatureSet::A),
    ([1, 1, 0, 0, 0], FeatureSet::C),
    ([0, 0, 0, 1, 0], FeatureSet::S),
    ([1, 0, 0, 1, 0], FeatureSet::S),
    ([0, 0, 1, 0, 0], FeatureSet::F),
    ([1, 0, 1, 0, 0], FeatureSet::F),
];

/// High/Low cut-offs of the attributes (an attribute is High at or above).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Cutoffs {
    /// ACF of write inter-arrival times.
    pub acf: f64,
    /// Random-write ratio [fraction].
    pub random_write_ratio: f64,
    /// Reuse ratio [bytes accessed / unique bytes].
    pub reuse_ratio: f64,
    /// Mean write size [KiB].
    pub write_kib: f64,
    /// Write rate [GB/day].
    pub gb_per_day: f64,
}

impl Default for Cutoffs {
    fn default() -> Self {
        Cutoffs {
            acf: 0.5,
            random_write_ratio: 0.5,
            reuse_ratio: 10.0,
            write_kib: 64.0,
            gb_per_day: 100.0,
        }
    }
}

/// The attribute values of a training trace.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, serde::Deserialize)]
pub struct Attributes {
    /// Lag-1 ACF of write inter-arrival times (0 with fewer than 3 writes).
    pub acf: f64,
    /// RW: share of random writes.
    pub random_write_ratio: f64,
    /// R: bytes accessed / unique bytes accessed.
    pub reuse_ratio: f64,
    /// S: mean write size [KiB].
    pub write_kib: f64,
    /// λ: write rate [GB/day].
    pub gb_per_day: f64,
    /// Write requests seen.
    pub writes: u64,
    /// Requests seen.
    pub requests: u64,
}

impl Attributes {
    /// θ: each attribute High (true) or Low by `c`, in the order ACF, RW, R,
    /// S, λ.
    pub fn theta(&self, c: &Cutoffs) -> [bool; 5] {
        [
            self.acf >= c.acf,
            self.random_write_ratio >= c.random_write_ratio,
            self.reuse_ratio >= c.reuse_ratio,
            self.write_kib >= c.write_kib,
            self.gb_per_day >= c.gb_per_day,
        ]
    }
}

/// θ as the paper prints it: `[1 1 0 0 1]`.
pub fn theta_string(t: &[bool; 5]) -> String {
    let bits: Vec<&str> = t.iter().map(|&b| if b { "1" } else { "0" }).collect();
    format!("[{}]", bits.join(" "))
}

/// What to choose when no row of B survives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fallback {
    /// Frequency.
    F,
    /// The rows nearest θ in Hamming distance.
    Nearest,
}

/// α (Eq. 3): which rows of B stay candidates for θ.
pub fn alpha(theta: &[bool; 5]) -> [bool; 6] {
    let mut a = [false; 6];
    for (i, (row, _)) in BASE.iter().enumerate() {
        a[i] = row.iter().zip(theta).all(|(&b, &t)| b == 0 || t);
    }
    a
}

/// ψ = f_map(θ) (Eq. 1): the union of the surviving rows' features; the
/// fallback when none survives. Returns ψ and whether the fallback was used.
pub fn select(theta: &[bool; 5], fallback: Fallback) -> (FeatureSet, bool) {
    let a = alpha(theta);
    let psi = BASE
        .iter()
        .zip(a)
        .filter(|(_, keep)| *keep)
        .fold(0u8, |acc, ((_, f), _)| acc | f);
    if psi != 0 {
        return (FeatureSet(psi), false);
    }
    match fallback {
        Fallback::F => (FeatureSet(FeatureSet::F), true),
        Fallback::Nearest => {
            let dist = |row: &[u8; 5]| {
                row.iter()
                    .zip(theta)
                    .filter(|(&b, &t)| (b == 1) != t)
                    .count()
            };
            let best = BASE.iter().map(|(r, _)| dist(r)).min().unwrap_or(0);
            let psi = BASE
                .iter()
                .filter(|(r, _)| dist(r) == best)
                .fold(0u8, |acc, (_, f)| acc | f);
            (FeatureSet(psi), true)
        }
    }
}

/// Accumulates the attributes over requests in block units.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct AttributeAccumulator {
    block_bytes: f64,
    /// Unique blocks touched (bitset over the logical space).
    seen: Vec<u64>,
    unique_blocks: u64,
    read_blocks: u64,
    write_blocks: u64,
    writes: u64,
    requests: u64,
    first_ns: Option<u64>,
    last_ns: u64,
    prev_write_ns: Option<u64>,
    prev_gap: Option<f64>,
    /// Σgap, Σgap², Σgap·prev gap, gaps, lagged pairs.
    gs: f64,
    gss: f64,
    glag: f64,
    gn: u64,
    lagn: u64,
    prev_end: Option<u64>,
    random: u64,
    judged: u64,
}

impl AttributeAccumulator {
    /// For a device of `logical_blocks` blocks of `block_size` bytes.
    pub fn new(logical_blocks: u32, block_size: u32) -> Self {
        AttributeAccumulator {
            block_bytes: block_size as f64,
            seen: vec![0; (logical_blocks as usize).div_ceil(64)],
            unique_blocks: 0,
            read_blocks: 0,
            write_blocks: 0,
            writes: 0,
            requests: 0,
            first_ns: None,
            last_ns: 0,
            prev_write_ns: None,
            prev_gap: None,
            gs: 0.0,
            gss: 0.0,
            glag: 0.0,
            gn: 0,
            lagn: 0,
            prev_end: None,
            random: 0,
            judged: 0,
        }
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.seen.len() * 8
    }

    fn touch(&mut self, lba: u64, blocks: u64) {
        for b in lba..lba + blocks {
            let (w, bit) = ((b / 64) as usize, 1u64 << (b % 64));
            if let Some(x) = self.seen.get_mut(w) {
                if *x & bit == 0 {
                    *x |= bit;
                    self.unique_blocks += 1;
                }
            }
        }
    }

    fn at(&mut self, t: u64) {
        self.requests += 1;
        self.first_ns.get_or_insert(t);
        self.last_ns = self.last_ns.max(t);
    }

    /// A write request.
    pub fn write(&mut self, lba: u64, blocks: u64, t: u64) {
        self.at(t);
        self.writes += 1;
        self.write_blocks += blocks;
        if let Some(p) = self.prev_write_ns {
            let gap = t.saturating_sub(p) as f64;
            self.gs += gap;
            self.gss += gap * gap;
            self.gn += 1;
            if let Some(pg) = self.prev_gap {
                self.glag += gap * pg;
                self.lagn += 1;
            }
            self.prev_gap = Some(gap);
        }
        self.prev_write_ns = Some(t);
        if let Some(e) = self.prev_end {
            self.judged += 1;
            if e != lba {
                self.random += 1;
            }
        }
        self.prev_end = Some(lba + blocks);
        self.touch(lba, blocks);
    }

    /// A read request.
    pub fn read(&mut self, lba: u64, blocks: u64, t: u64) {
        self.at(t);
        self.read_blocks += blocks;
        self.touch(lba, blocks);
    }

    /// The attributes; λ over `span_ns` when given, else the span seen.
    pub fn finish(&self, span_ns: Option<u64>) -> Attributes {
        let acf = if self.lagn > 1 {
            let mean = self.gs / self.gn as f64;
            let var = self.gss / self.gn as f64 - mean * mean;
            if var > 0.0 {
                (self.glag / self.lagn as f64 - mean * mean) / var
            } else {
                1.0
            }
        } else {
            0.0
        };
        let span = span_ns.unwrap_or(self.last_ns - self.first_ns.unwrap_or(self.last_ns));
        let days = span as f64 * 1e-9 / 86_400.0;
        let write_bytes = self.write_blocks as f64 * self.block_bytes;
        Attributes {
            acf,
            random_write_ratio: if self.judged > 0 {
                self.random as f64 / self.judged as f64
            } else {
                0.0
            },
            reuse_ratio: if self.unique_blocks > 0 {
                (self.read_blocks + self.write_blocks) as f64 / self.unique_blocks as f64
            } else {
                0.0
            },
            write_kib: if self.writes > 0 {
                write_bytes / self.writes as f64 / 1024.0
            } else {
                0.0
            },
            gb_per_day: if days > 0.0 {
                write_bytes / 1e9 / days
            } else {
                0.0
            },
            writes: self.writes,
            requests: self.requests,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn psi(t: [u8; 5]) -> String {
        select(&t.map(|b| b == 1), Fallback::F).0.to_string()
    }

    #[test]
    fn rule_matches_the_closed_form_for_every_theta() {
        for bits in 0u8..32 {
            let t: [bool; 5] = std::array::from_fn(|i| bits >> i & 1 == 1);
            let [acf, rw, r, s, l] = t;
            let mut want = 0u8;
            if acf && l {
                want |= FeatureSet::A;
            }
            if acf && rw {
                want |= FeatureSet::C;
            }
            if s {
                want |= FeatureSet::S;
            }
            if r {
                want |= FeatureSet::F;
            }
            let (got, fell_back) = select(&t, Fallback::F);
            if want == 0 {
                assert!(fell_back);
                assert_eq!(got.0, FeatureSet::F);
            } else {
                assert_eq!(got.0, want, "theta {t:?}");
            }
        }
    }

    #[test]
    fn the_papers_examples() {
        // MSR-prn0: θ = [1 1 0 0 1] (§3.6) -> A and C.
        assert_eq!(psi([1, 1, 0, 0, 1]), "AC");
        // Row 4 is S (the extraction shows F): θ = [1 0 0 1 0] -> S only.
        assert_eq!(psi([1, 0, 0, 1, 0]), "S");
        // Table 3 values under the default cut-offs (spec §2.7).
        let c = Cutoffs::default();
        let th = |acf, rw, r, s, l| {
            Attributes {
                acf,
                random_write_ratio: rw,
                reuse_ratio: r,
                write_kib: s,
                gb_per_day: l,
                ..Default::default()
            }
            .theta(&c)
        };
        let p = |t| select(&t, Fallback::F).0.to_string();
        assert_eq!(p(th(0.98, 0.61, 4.72, 25.0, 131.33)), "AC", "prn0");
        assert_eq!(p(th(0.92, 0.66, 4.48, 15.0, 58.51)), "C", "hm0");
        assert_eq!(p(th(0.95, 0.58, 157.37, 10.0, 20.0)), "FC", "hm1");
        assert_eq!(p(th(1.0, 0.27, 6.27, 29.0, 412.19)), "A", "proj0");
        let (f, fell) = select(&th(0.02, 0.76, 1.13, 5.0, 76.6), Fallback::F);
        assert_eq!((f.to_string().as_str(), fell), ("F", true), "UMASS-2");
    }

    #[test]
    fn nearest_fallback() {
        // θ all Low: the nearest rows are those with the fewest 1s (3 and 5:
        // one bit each) -> S and F.
        let (f, fell) = select(&[false; 5], Fallback::Nearest);
        assert!(fell);
        assert_eq!(f.to_string(), "FS");
    }

    #[test]
    fn attributes_of_a_hand_made_stream() {
        let mut a = AttributeAccumulator::new(100, 4096);
        // Writes of 2 blocks at 0, 2 (sequential), 10 (random), 10 (random):
        // gaps 1, 1, 10 s.
        let s = 1_000_000_000;
        a.write(0, 2, 0);
        a.write(2, 2, s);
        a.write(10, 2, 2 * s);
        a.read(0, 4, 3 * s);
        a.write(10, 2, 12 * s);
        let at = a.finish(None);
        assert_eq!(at.writes, 4);
        assert!((at.random_write_ratio - 2.0 / 3.0).abs() < 1e-12);
        assert!((at.write_kib - 8.0).abs() < 1e-12);
        // 8 written + 4 read blocks over 6 unique ones.
        assert!((at.reuse_ratio - 2.0).abs() < 1e-12);
        // 32 KiB in 12 s.
        let want = 8.0 * 4096.0 / 1e9 / (12.0 / 86_400.0);
        assert!((at.gb_per_day - want).abs() < 1e-9);
        // gaps 1, 1, 10: mean 4, var 18; lagged products 1, 10 -> mean 5.5.
        assert!((at.acf - (5.5 - 16.0) / 18.0).abs() < 1e-9, "{}", at.acf);
    }
}
