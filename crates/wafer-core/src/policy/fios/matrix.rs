//! The feature matrix (FIOS §3.1–3.3, Figs. 4–5): one row per chunk, one
//! column per selected feature, binary or decimal, and its distinct rows
//! with their multiplicities (what K-means clusters).
//!
//! Thresholds are over the chunks touched in the training trace (spec §2.3:
//! over all chunks of a volume the median is 0 and every written chunk
//! would be "frequent").
//!
//! | feature | binary | decimal |
//! |---|---|---|
//! | F | f_c > median(f) | ⌈10·ECDF(f_c)⌉/10 (equal-frequency deciles; see below for ties) |
//! | S | s_c ≥ `seq_share` | binary (§3.3) |
//! | A | a_c > median(a) | ⌈10·ECDF(a_c)⌉/10 |
//! | C | n_c ≥ 2 | (g_c − min g)/(max g − min g), g_c = n_c(n_c − 1)/2 (1 for every g_c > 0 when all are equal) |
//!
//! Untouched chunks are all-zero rows. Column j is multiplied by weight w_j.
//!
//! Ties in the decimal deciles (§3.3: the stepwise function "partitions the
//! sector_chunks into ten different categories"): `Deciles::Ranked` (the
//! paper's ten categories) ranks the touched chunks by value, ties in
//! address order, and cuts the ranking into ten equal parts, so a workload
//! whose chunks mostly share a count (most written once) still gets ten
//! categories and K-means can open its K streams; `Deciles::Tied` gives
//! tied chunks the same, higher decile, which on such workloads leaves a
//! few distinct rows and a few streams in use.

use std::fmt;

use super::features::Raw;

/// A set of features, in the paper's order F, S, A, C (Fig. 10).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct FeatureSet(pub u8);

impl FeatureSet {
    /// Frequency.
    pub const F: u8 = 1;
    /// Sequentiality.
    pub const S: u8 = 2;
    /// Adjacent access.
    pub const A: u8 = 4;
    /// Coherency.
    pub const C: u8 = 8;
    /// Letters in canonical order with their bits.
    pub const LETTERS: [(char, u8); 4] = [('F', 1), ('S', 2), ('A', 4), ('C', 8)];

    /// Parse letters such as `"FC"` or `"c,f"` (order and case free).
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut bits = 0u8;
        for ch in s.chars().filter(|c| !matches!(c, ',' | ' ' | '+')) {
            match Self::LETTERS
                .iter()
                .find(|(l, _)| *l == ch.to_ascii_uppercase())
            {
                Some((_, b)) => bits |= b,
                None => {
                    return Err(format!(
                        "unknown feature letter '{ch}' in '{s}'; features are F (frequency), \
                         S (sequentiality), A (adjacent access), C (coherency), or 'auto'"
                    ))
                }
            }
        }
        if bits == 0 {
            return Err(format!(
                "no feature in '{s}'; give letters of F, S, A, C or 'auto'"
            ));
        }
        Ok(FeatureSet(bits))
    }

    /// Whether `bit` is in the set.
    pub fn has(&self, bit: u8) -> bool {
        self.0 & bit != 0
    }

    /// Number of features.
    pub fn len(&self) -> usize {
        self.0.count_ones() as usize
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0 == 0
    }

    /// All 15 non-empty combinations in the order of Fig. 10: singles, then
    /// pairs, triples, all four (each in F, S, A, C order).
    pub fn all() -> Vec<FeatureSet> {
        let mut v: Vec<FeatureSet> = (1u8..16).map(FeatureSet).collect();
        v.sort_by_key(|s| (s.len(), s.key()));
        v
    }

    /// Sort key inside one size: letters in F, S, A, C order.
    fn key(&self) -> Vec<u8> {
        Self::LETTERS
            .iter()
            .enumerate()
            .filter(|(_, (_, b))| self.has(*b))
            .map(|(i, _)| i as u8)
            .collect()
    }
}

impl fmt::Display for FeatureSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (l, b) in Self::LETTERS {
            if self.has(b) {
                write!(f, "{l}")?;
            }
        }
        Ok(())
    }
}

/// Binary or decimal importance values (§3.2 / §3.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Kind {
    /// 0/1 by the thresholds.
    Binary,
    /// Deciles / range-shifted coherency.
    Decimal,
}

/// How decimal deciles treat tied values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Deciles {
    /// Ten equal parts of the ranking, ties in address order (§3.3).
    Ranked,
    /// Tied values share the higher decile.
    Tied,
}

/// Settings of a matrix.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Settings {
    /// Columns.
    pub features: FeatureSet,
    /// Binary or decimal.
    pub kind: Kind,
    /// Weight of F, S, A, C.
    pub weights: [f64; 4],
    /// S is 1 when at least this share of touches is sequential.
    pub seq_share: f64,
    /// Decimal deciles: ranked or tied.
    pub deciles: Deciles,
}

/// The matrix as per-chunk row codes and the table of distinct rows.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Matrix {
    /// Row code of each chunk.
    pub codes: Vec<u32>,
    /// Columns (the selected features, F, S, A, C order).
    pub dims: usize,
    /// Distinct rows: their codes, values (dims each) and chunk counts.
    pub rows: Vec<u32>,
    /// Values of the distinct rows, `dims` each.
    pub values: Vec<f64>,
    /// Chunks having each distinct row (all chunks).
    pub weight_all: Vec<f64>,
    /// Touched chunks having each distinct row.
    pub weight_touched: Vec<f64>,
    /// Index of the all-zero row in `rows`, if any chunk has it.
    pub zero_row: Option<usize>,
    /// Column names in order.
    pub columns: Vec<char>,
    /// Size of the code space (codes < this).
    pub code_space: usize,
}

/// Median of a non-empty sorted slice.
fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return 0.0;
    }
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        0.5 * (sorted[n / 2 - 1] + sorted[n / 2])
    }
}

/// Decile level ⌈10·ECDF(x)⌉ in 1..=10 of x among `sorted` (ties share).
fn decile(sorted: &[f64], x: f64) -> u32 {
    let le = sorted.partition_point(|&v| v <= x);
    ((10 * le).div_ceil(sorted.len().max(1)) as u32).clamp(1, 10)
}

/// Levels of one column for every chunk: 0 untouched; binary 0/1; decimal
/// deciles 1..=10 (F, A) or the coherency index n_c (C).
fn levels(raw: &Raw, bit: u8, s: &Settings) -> Vec<u32> {
    let n = raw.freq.len();
    let touched_vals = |x: &dyn Fn(usize) -> f64| -> Vec<f64> {
        let mut v: Vec<f64> = (0..n).filter(|&c| raw.touched[c]).map(x).collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let value = |c: usize| -> f64 {
        match bit {
            FeatureSet::F => raw.freq[c] as f64,
            FeatureSet::A => raw.adj[c],
            _ => unreachable!("F and A only"),
        }
    };
    match (bit, s.kind) {
        (FeatureSet::F | FeatureSet::A, Kind::Decimal) if s.deciles == Deciles::Ranked => {
            let mut order: Vec<usize> = (0..n).filter(|&c| raw.touched[c]).collect();
            order.sort_by(|&a, &b| value(a).total_cmp(&value(b)).then(a.cmp(&b)));
            let m = order.len().max(1);
            let mut lv = vec![0u32; n];
            for (rank, &c) in order.iter().enumerate() {
                lv[c] = ((10 * (rank + 1)).div_ceil(m) as u32).clamp(1, 10);
            }
            lv
        }
        (FeatureSet::F | FeatureSet::A, kind) => {
            let sorted = touched_vals(&value);
            let med = median(&sorted);
            (0..n)
                .map(|c| match (raw.touched[c], kind) {
                    (false, _) => 0,
                    (true, Kind::Binary) => (value(c) > med) as u32,
                    (true, Kind::Decimal) => decile(&sorted, value(c)),
                })
                .collect()
        }
        (FeatureSet::S, _) => (0..n)
            .map(|c| (raw.touched[c] && raw.seq[c] >= s.seq_share) as u32)
            .collect(),
        (FeatureSet::C, Kind::Binary) => (0..n).map(|c| (raw.windows[c] >= 2) as u32).collect(),
        (FeatureSet::C, Kind::Decimal) => (0..n).map(|c| raw.windows[c] as u32).collect(),
        _ => unreachable!("one feature bit"),
    }
}

/// Number of levels of a column (its code radix).
fn radix(bit: u8, kind: Kind, n_windows: u16) -> u32 {
    match (bit, kind) {
        (FeatureSet::S, _) | (_, Kind::Binary) => 2,
        (FeatureSet::F | FeatureSet::A, Kind::Decimal) => 11,
        (FeatureSet::C, Kind::Decimal) => n_windows as u32 + 1,
        _ => unreachable!(),
    }
}

impl Matrix {
    /// Build the matrix of `raw` for `s`.
    pub fn build(raw: &Raw, s: &Settings) -> Matrix {
        let n = raw.freq.len();
        let cols: Vec<(char, u8, usize)> = FeatureSet::LETTERS
            .iter()
            .enumerate()
            .filter(|(_, (_, b))| s.features.has(*b))
            .map(|(i, &(l, b))| (l, b, i))
            .collect();
        let mut codes = vec![0u32; n];
        let mut code_space = 1usize;
        let mut radices = Vec::new();
        for &(_, bit, _) in &cols {
            let lv = levels(raw, bit, s);
            let r = radix(bit, s.kind, raw.n_windows);
            for (code, l) in codes.iter_mut().zip(&lv) {
                *code = *code * r + l.min(&(r - 1));
            }
            code_space *= r as usize;
            radices.push(r);
        }
        // Decimal coherency: g = n(n-1)/2, range-shifted over touched chunks.
        let (gmin, gmax) = if s.features.has(FeatureSet::C) && s.kind == Kind::Decimal {
            let gs = (0..n)
                .filter(|&c| raw.touched[c])
                .map(|c| pairs(raw.windows[c] as u32));
            gs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), g| {
                (a.min(g), b.max(g))
            })
        } else {
            (0.0, 0.0)
        };
        let value_of = |bit: u8, level: u32| -> f64 {
            match (bit, s.kind) {
                (FeatureSet::S, _) | (_, Kind::Binary) => level as f64,
                (FeatureSet::F | FeatureSet::A, Kind::Decimal) => level as f64 / 10.0,
                (FeatureSet::C, Kind::Decimal) => {
                    let g = pairs(level);
                    if gmax > gmin {
                        ((g - gmin) / (gmax - gmin)).max(0.0)
                    } else {
                        (g > 0.0) as u32 as f64
                    }
                }
                _ => unreachable!(),
            }
        };
        // Distinct rows through a table over the code space.
        let mut slot = vec![u32::MAX; code_space];
        let mut m = Matrix {
            codes,
            dims: cols.len(),
            rows: Vec::new(),
            values: Vec::new(),
            weight_all: Vec::new(),
            weight_touched: Vec::new(),
            zero_row: None,
            columns: cols.iter().map(|c| c.0).collect(),
            code_space,
        };
        for c in 0..n {
            let code = m.codes[c] as usize;
            if slot[code] == u32::MAX {
                slot[code] = m.rows.len() as u32;
                m.rows.push(code as u32);
                m.weight_all.push(0.0);
                m.weight_touched.push(0.0);
                // Decode the levels, last column first.
                let mut rest = code as u32;
                let mut vals = vec![0.0; cols.len()];
                for (j, &(_, bit, wi)) in cols.iter().enumerate().rev() {
                    let l = rest % radices[j];
                    rest /= radices[j];
                    vals[j] = value_of(bit, l) * s.weights[wi];
                }
                if code == 0 {
                    m.zero_row = Some(m.rows.len() - 1);
                }
                m.values.extend(vals);
            }
            let r = slot[code] as usize;
            m.weight_all[r] += 1.0;
            if raw.touched[c] {
                m.weight_touched[r] += 1.0;
            }
        }
        m
    }

    /// Distinct rows.
    pub fn distinct(&self) -> usize {
        self.rows.len()
    }
}

/// n(n − 1)/2: the friendly groups of a chunk written in n windows.
fn pairs(n: u32) -> f64 {
    let n = n as f64;
    n * (n - 1.0) / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(freq: &[u32], adj: &[f64], seq: &[f64], windows: &[u16]) -> Raw {
        Raw {
            freq: freq.to_vec(),
            adj: adj.to_vec(),
            seq: seq.to_vec(),
            windows: windows.to_vec(),
            touched: freq.iter().map(|&f| f > 0).collect(),
            n_windows: 10,
        }
    }

    fn settings(f: &str, kind: Kind) -> Settings {
        Settings {
            features: FeatureSet::parse(f).unwrap(),
            kind,
            weights: [1.0; 4],
            seq_share: 0.5,
            deciles: Deciles::Tied,
        }
    }

    /// Values of each chunk's row.
    fn rows_of(m: &Matrix) -> Vec<Vec<f64>> {
        m.codes
            .iter()
            .map(|code| {
                let r = m.rows.iter().position(|c| c == code).unwrap();
                m.values[r * m.dims..(r + 1) * m.dims].to_vec()
            })
            .collect()
    }

    #[test]
    fn feature_sets_parse_and_print_in_paper_order() {
        assert_eq!(FeatureSet::parse("cf").unwrap().to_string(), "FC");
        assert_eq!(FeatureSet::parse("F,S,A,C").unwrap().0, 15);
        let e = FeatureSet::parse("FX").unwrap_err();
        assert!(e.contains("unknown feature letter 'X'"), "{e}");
        assert!(FeatureSet::parse("").is_err());
        let all: Vec<String> = FeatureSet::all().iter().map(|s| s.to_string()).collect();
        assert_eq!(all.len(), 15);
        assert_eq!(&all[..5], &["F", "S", "A", "C", "FS"]);
        assert_eq!(all[14], "FSAC");
    }

    #[test]
    fn binary_thresholds_are_medians_over_touched_chunks() {
        // Touched frequencies 1, 2, 4, 8 (median 3); chunk 4 untouched.
        let r = raw(
            &[1, 2, 4, 8, 0],
            &[0.1, 0.9, 0.5, 0.2, 0.0],
            &[0.0, 0.5, 0.49, 1.0, 0.0],
            &[1, 2, 3, 1, 0],
        );
        let m = Matrix::build(&r, &settings("FSAC", Kind::Binary));
        let rows = rows_of(&m);
        // F > 3; S >= 0.5; A > median(0.1, 0.2, 0.5, 0.9) = 0.35; C: n >= 2.
        assert_eq!(rows[0], vec![0.0, 0.0, 0.0, 0.0]);
        assert_eq!(rows[1], vec![0.0, 1.0, 1.0, 1.0]);
        assert_eq!(rows[2], vec![1.0, 0.0, 1.0, 1.0]);
        assert_eq!(rows[3], vec![1.0, 1.0, 0.0, 0.0]);
        assert_eq!(rows[4], vec![0.0, 0.0, 0.0, 0.0]);
        assert_eq!(m.distinct(), 4);
        let z = m.zero_row.unwrap();
        assert_eq!((m.weight_all[z], m.weight_touched[z]), (2.0, 1.0));
    }

    #[test]
    fn decimal_deciles_and_coherency_range_shift() {
        // Ten touched chunks with frequencies 1..=10, coherency windows 1..=10.
        let f: Vec<u32> = (1..=10).collect();
        let w: Vec<u16> = (1..=10).collect();
        let r = raw(&f, &[0.5; 10], &[0.0; 10], &w);
        let m = Matrix::build(&r, &settings("FC", Kind::Decimal));
        let rows = rows_of(&m);
        for (c, row) in rows.iter().enumerate().take(10) {
            assert!((row[0] - (c + 1) as f64 / 10.0).abs() < 1e-12, "F of {c}");
        }
        // g = n(n-1)/2: 0, 1, 3, ..., 45 -> (g - 0) / 45.
        assert_eq!(rows[0][1], 0.0);
        assert!((rows[2][1] - 3.0 / 45.0).abs() < 1e-12);
        assert_eq!(rows[9][1], 1.0);
        // Ties share the higher decile: all A equal -> all 1.0.
        let m = Matrix::build(&r, &settings("A", Kind::Decimal));
        assert!(rows_of(&m).iter().all(|v| v[0] == 1.0));
        // Ranked: ten categories whatever the ties, in address order.
        let mut ranked = settings("A", Kind::Decimal);
        ranked.deciles = Deciles::Ranked;
        let m = Matrix::build(&r, &ranked);
        let a: Vec<f64> = rows_of(&m).iter().map(|v| v[0]).collect();
        let want: Vec<f64> = (1..=10).map(|k| k as f64 / 10.0).collect();
        assert_eq!(a, want);
        assert_eq!(m.distinct(), 10);
        // Values still order the ranking: frequencies 1..=10 unchanged.
        let mut f = settings("F", Kind::Decimal);
        f.deciles = Deciles::Ranked;
        let m = Matrix::build(&r, &f);
        for (c, row) in rows_of(&m).iter().enumerate() {
            assert!((row[0] - (c + 1) as f64 / 10.0).abs() < 1e-12, "F of {c}");
        }
    }

    #[test]
    fn ranked_deciles_keep_value_order_across_ties() {
        // Twenty chunks, eighteen written once, two written often: tied
        // deciles give two levels, ranked ones ten, the hot chunks on top.
        let mut f = vec![1u32; 20];
        f[3] = 9;
        f[17] = 7;
        let r = raw(&f, &[0.5; 20], &[0.0; 20], &[1; 20]);
        let tied = Matrix::build(&r, &settings("F", Kind::Decimal));
        assert_eq!(tied.distinct(), 2);
        let mut s = settings("F", Kind::Decimal);
        s.deciles = Deciles::Ranked;
        let m = Matrix::build(&r, &s);
        assert_eq!(m.distinct(), 10);
        let rows = rows_of(&m);
        assert_eq!((rows[3][0], rows[17][0]), (1.0, 1.0));
        assert_eq!(rows[0][0], 0.1);
    }

    #[test]
    fn weights_scale_columns() {
        let r = raw(&[1, 5], &[0.0; 2], &[1.0, 0.0], &[1, 1]);
        let mut s = settings("FS", Kind::Binary);
        s.weights = [2.0, 0.5, 1.0, 1.0];
        let rows = rows_of(&Matrix::build(&r, &s));
        assert_eq!(rows[0], vec![0.0, 0.5]);
        assert_eq!(rows[1], vec![2.0, 0.0]);
    }
}
