//! Automatic feature-combination selection (FIOS §3.5–3.6, Table 1, Fig. 7,
//! Eqs. 1–3): the workload attributes θ = [ACF, RW, R, S, λ] of a training
//! trace, each High (1) or Low (0) by a cut-off, mapped to a feature set ψ
//! through the base matrix B.
//!
//! Attributes (§5, Table 3), computed over the training trace's requests:
//! ACF (below); RW = share of writes not starting where the previous write
//! ended; R = bytes accessed (read + written) / unique bytes accessed; S =
//! mean write size [KiB]; λ = write rate [GB/day, 10^9 bytes] over the
//! trace's span.
//!
//! ACF: §3.6 calls it the "autocorrelation of write rates", Table 3 and §5
//! the "auto-correlation factor of inter-arrival time between two
//! write/update requests", and Table 3 lists 0.92-0.99 for the MSR traces
//! and 0.02-0.21 for UMass. The lag-1 ACF of consecutive inter-arrival
//! times is 0.17-0.19 on MSR (a week of bursts separated by idle gaps) and
//! ~0 for any Poisson stream, so it cannot be what the table measured; the
//! rate's is 0.9+ on diurnal, bursty traces and ~0 on a steady OLTP stream,
//! as the table has it. `acf = rate` (the default): the lag-1
//! autocorrelation of the write-request count per window of `ACF_WINDOW_S`
//! (300 s, the 5-minute statistics window of Table 3's peak rate; a
//! training trace shorter than 32 windows gets 32 windows of its span) —
//! the mean inter-arrival time at that resolution is the inverse of this
//! rate, which reconciles the two sentences. `acf = gaps`: the lag-1 ACF of
//! the inter-arrival times themselves (the earlier rule).
//!
//! The paper never gives the High/Low cut-offs; the defaults (ACF 0.5, RW
//! 50%, R 10, S 64 KiB, λ 100 GB/day) satisfy its own examples (spec §2.7:
//! MSR-prn0 θ = [1 1 0 0 1], hm0 → C, hm1 → FC) and Table 3's values
//! (every MSR trace ACF High, both UMass ones Low). [`explain`] reports each
//! attribute against its cut-off and each row of B with the attributes
//! that kept it out.
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

/// Which ACF θ uses (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AcfKind {
    /// Lag-1 ACF of the write rate per 5-minute window (§3.6).
    Rate,
    /// Lag-1 ACF of consecutive write inter-arrival times.
    Gaps,
}

// The write-rate series lives with the trace statistics, which report the
// same ACF (`wafer traces inspect`) without importing a policy.
pub use crate::trace::rate::{RateSeries, ACF_MIN_WINDOWS, ACF_WINDOW_S};

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
    /// The ACF θ uses (`acf_rate` or `acf_gaps`).
    pub acf: f64,
    /// Lag-1 ACF of the write rate per window (0 with fewer than 3 windows).
    pub acf_rate: f64,
    /// Its window [s].
    pub acf_window_s: f64,
    /// Lag-1 ACF of write inter-arrival times (0 with fewer than 3 writes).
    pub acf_gaps: f64,
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

/// One attribute against its cut-off.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct AttributeCheck {
    /// ACF, RW, R, S or λ.
    pub attribute: String,
    /// Its value in the training trace.
    pub value: f64,
    /// Its cut-off.
    pub cutoff: f64,
    /// value >= cutoff.
    pub high: bool,
}

/// One row of B and what kept it out.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RowCheck {
    /// Row number (1-6).
    pub row: usize,
    /// Its feature.
    pub feature: String,
    /// The attributes it needs High.
    pub needs_high: Vec<String>,
    /// It survived (α = 1).
    pub kept: bool,
    /// Its attributes that were Low.
    pub low: Vec<String>,
}

/// Why ψ is what it is.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Explanation {
    /// The features chosen.
    pub psi: String,
    /// No row survived: the fallback chose.
    pub fell_back: bool,
    /// One sentence.
    pub reason: String,
    /// Each attribute against its cut-off.
    pub attributes: Vec<AttributeCheck>,
    /// Each row of B.
    pub rows: Vec<RowCheck>,
}

const NAMES: [&str; 5] = ["ACF", "RW", "R", "S", "λ"];

/// Why ψ is what it is: each attribute against its cut-off, each row of B
/// with the attributes that kept it out, ψ and whether the fallback chose.
pub fn explain(a: &Attributes, c: &Cutoffs, fallback: Fallback) -> Explanation {
    let theta = a.theta(c);
    let values = [
        a.acf,
        a.random_write_ratio,
        a.reuse_ratio,
        a.write_kib,
        a.gb_per_day,
    ];
    let cuts = [
        c.acf,
        c.random_write_ratio,
        c.reuse_ratio,
        c.write_kib,
        c.gb_per_day,
    ];
    let names = |row: &[u8; 5], low_only: bool| -> Vec<String> {
        (0..5)
            .filter(|&j| row[j] == 1 && (!low_only || !theta[j]))
            .map(|j| NAMES[j].to_string())
            .collect()
    };
    let keep = alpha(&theta);
    let rows: Vec<RowCheck> = BASE
        .iter()
        .enumerate()
        .map(|(i, (row, f))| RowCheck {
            row: i + 1,
            feature: FeatureSet(*f).to_string(),
            needs_high: names(row, false),
            kept: keep[i],
            low: names(row, true),
        })
        .collect();
    let (psi, fell_back) = select(&theta, fallback);
    let line = attributes_line(&values, &cuts, &theta);
    let reason = if fell_back {
        format!(
            "no row of B has all its attributes High ({line}); fallback {fallback:?} gives {psi}"
        )
    } else {
        let kept: Vec<String> = rows
            .iter()
            .filter(|r| r.kept)
            .map(|r| format!("{} ({} High)", r.feature, r.needs_high.join(", ")))
            .collect();
        format!("{psi}: {}; {line}", kept.join(", "))
    };
    Explanation {
        psi: psi.to_string(),
        fell_back,
        reason,
        attributes: (0..5)
            .map(|i| AttributeCheck {
                attribute: NAMES[i].to_string(),
                value: values[i],
                cutoff: cuts[i],
                high: theta[i],
            })
            .collect(),
        rows,
    }
}

fn attributes_line(v: &[f64; 5], c: &[f64; 5], t: &[bool; 5]) -> String {
    (0..5)
        .map(|i| {
            let op = if t[i] { ">=" } else { "<" };
            format!("{} {:.3} {op} {}", NAMES[i], v[i], c[i])
        })
        .collect::<Vec<_>>()
        .join(", ")
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
    rate: RateSeries,
    kind: AcfKind,
}

impl AttributeAccumulator {
    /// For a device of `logical_blocks` blocks of `block_size` bytes; θ
    /// takes the ACF of `kind`.
    pub fn new(logical_blocks: u32, block_size: u32, kind: AcfKind) -> Self {
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
            rate: RateSeries::default(),
            kind,
        }
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.seen.len() * 8 + self.rate.memory_bytes()
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
        self.rate.add(t);
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
        let acf_gaps = if self.lagn > 1 {
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
        let (acf_rate, window) = self
            .rate
            .acf((ACF_WINDOW_S * 1e9) as u64, ACF_MIN_WINDOWS)
            .unwrap_or((0.0, 0));
        let acf = match self.kind {
            AcfKind::Rate => acf_rate,
            AcfKind::Gaps => acf_gaps,
        };
        let span = span_ns.unwrap_or(self.last_ns - self.first_ns.unwrap_or(self.last_ns));
        let days = span as f64 * 1e-9 / 86_400.0;
        let write_bytes = self.write_blocks as f64 * self.block_bytes;
        Attributes {
            acf,
            acf_rate,
            acf_window_s: window as f64 * 1e-9,
            acf_gaps,
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
        let mut a = AttributeAccumulator::new(100, 4096, AcfKind::Gaps);
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
        assert_eq!(at.acf, at.acf_gaps);
    }

    #[test]
    fn rate_acf_follows_bursts_not_gaps() {
        let s = 1_000_000_000u64;
        // Poisson-like: one write per second, jittered: the gaps are
        // uncorrelated, and so is the rate (flat).
        let mut flat = RateSeries::default();
        let mut x = 0x9E37_79B9u64;
        let mut t = 0;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            t += s / 2 + x % s;
            flat.add(t);
        }
        let (r, w) = flat.acf(300 * s, 32).unwrap();
        assert!(r.abs() < 0.3, "flat rate ACF {r}");
        assert_eq!(w % RateSeries::BASE_WIDTH, 0);
        // Diurnal: busy hours and idle ones (a day of 24 h, 4 days): the
        // rate stays high, then low, for many 5-minute windows.
        let mut day = RateSeries::default();
        let mut t = 0;
        for h in 0..96u64 {
            let per_hour = if h % 24 < 8 { 3600 } else { 200 };
            for k in 0..per_hour {
                day.add(t + k * 3600 * s / per_hour);
            }
            t += 3600 * s;
        }
        let (r, w) = day.acf(300 * s, 32).unwrap();
        assert!(r > 0.8, "diurnal rate ACF {r}");
        assert!((w as f64 * 1e-9 - 300.0).abs() < 20.0, "window {w}");
        // Too short for 3 windows: none.
        let mut one = RateSeries::default();
        one.add(5);
        assert!(one.acf(300 * s, 32).is_none());
    }

    #[test]
    fn explain_names_what_kept_each_row_out() {
        let a = Attributes {
            acf: 0.2,
            random_write_ratio: 0.7,
            reuse_ratio: 3.0,
            write_kib: 8.0,
            gb_per_day: 500.0,
            ..Default::default()
        };
        let e = serde_json::to_value(explain(&a, &Cutoffs::default(), Fallback::F)).unwrap();
        assert_eq!(e["fell_back"], true);
        assert_eq!(e["psi"], "F");
        // Row 2 (C) needs ACF and RW: ACF was Low.
        assert_eq!(e["rows"][1]["feature"], "C");
        assert_eq!(e["rows"][1]["low"], serde_json::json!(["ACF"]));
        assert!(
            e["reason"].as_str().unwrap().contains("ACF 0.200 < 0.5"),
            "{e}"
        );
        let b = Attributes { acf: 0.9, ..a };
        let e = serde_json::to_value(explain(&b, &Cutoffs::default(), Fallback::F)).unwrap();
        assert_eq!(
            (e["psi"].as_str(), e["fell_back"].as_bool()),
            (Some("AC"), Some(false))
        );
        assert!(
            e["reason"]
                .as_str()
                .unwrap()
                .starts_with("AC: A (ACF, λ High)"),
            "{e}"
        );
    }
}
