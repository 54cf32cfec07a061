//! The LBA→streamID dictionaries (FIOS §4.1–4.2, Fig. 8): the Base
//! Dictionary BD (one stream id per chunk, 4 bits each, persisted on flash)
//! and the Simplified Index Dictionary SID (BD with runs of consecutive
//! chunks of one stream merged into one row, kept in DRAM).
//!
//! wafer looks streams up in a flat byte per chunk (one load per block, no
//! hashing); the BD and SID sizes are what the paper's structures would
//! take: `bd_bytes` = ⌈chunks / 2⌉, `sid_bytes` = runs × 9 (an 8-byte start
//! chunk and a 1-byte id per row; the paper does not give the SID layout).

use serde::Serialize;

use super::matrix::Matrix;
use crate::policy::kit::kmeans::{kmeans, Init};
use crate::policy::kit::streams::rank_map;

/// Chunk → stream.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Dictionary {
    /// Stream of each chunk.
    pub ids: Vec<u8>,
}

/// Sizes of the dictionaries, as the paper would store them.
#[derive(Clone, Copy, Debug, Default, Serialize, serde::Deserialize)]
pub struct Footprint {
    /// Chunks.
    pub chunks: u64,
    /// BD: 4 bits per chunk [bytes].
    pub bd_bytes: u64,
    /// Runs of consecutive chunks with one stream (SID rows).
    pub sid_runs: u64,
    /// SID: 9 bytes per run [bytes].
    pub sid_bytes: u64,
    /// Streams that hold at least one chunk.
    pub streams_used: u32,
}

impl Dictionary {
    /// Stream of chunk `c` (stream 0 beyond the table).
    #[inline(always)]
    pub fn get(&self, c: u32) -> u8 {
        self.ids.get(c as usize).copied().unwrap_or(0)
    }

    /// BD and SID sizes.
    pub fn footprint(&self) -> Footprint {
        let runs = if self.ids.is_empty() {
            0
        } else {
            1 + self.ids.windows(2).filter(|w| w[0] != w[1]).count() as u64
        };
        let mut used = [false; 256];
        for &i in &self.ids {
            used[i as usize] = true;
        }
        Footprint {
            chunks: self.ids.len() as u64,
            bd_bytes: (self.ids.len() as u64).div_ceil(2),
            sid_runs: runs,
            sid_bytes: runs * 9,
            streams_used: used.iter().filter(|&&u| u).count() as u32,
        }
    }
}

/// Which rows K-means clusters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Rows {
    /// Every chunk (§3.1): untouched chunks are all-zero rows.
    All,
    /// Touched chunks only; untouched ones take the cluster nearest zero.
    Touched,
}

/// What one clustering did.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct ClusterStats {
    /// Distinct rows clustered.
    pub distinct_rows: usize,
    /// Clusters formed (at most the streams, at most the distinct rows).
    pub clusters: usize,
    /// Lloyd iterations.
    pub iterations: u32,
    /// Whether the assignments converged.
    pub converged: bool,
    /// Centres in stream order, one list of column values per stream.
    pub centers: Vec<Vec<f64>>,
}

/// Cluster `m`'s distinct rows into at most `k` streams and give every
/// chunk its stream. Streams are numbered by centre: descending F + C
/// coordinates, then descending S, A (spec §2.5: stable ids across rebuilds;
/// the hottest-looking cluster is stream 0).
pub fn cluster(
    m: &Matrix,
    k: usize,
    rows: Rows,
    seed: u64,
    max_iter: u32,
) -> (Dictionary, ClusterStats) {
    let d = m.dims;
    let weights = match rows {
        Rows::All => &m.weight_all,
        Rows::Touched => &m.weight_touched,
    };
    // Rows with weight (touched-only clustering drops the untouched zero row).
    let keep: Vec<usize> = (0..m.distinct()).filter(|&r| weights[r] > 0.0).collect();
    if keep.is_empty() {
        let stats = ClusterStats {
            distinct_rows: 0,
            clusters: 0,
            iterations: 0,
            converged: true,
            centers: Vec::new(),
        };
        return (
            Dictionary {
                ids: vec![0; m.codes.len()],
            },
            stats,
        );
    }
    let pts: Vec<f64> = keep
        .iter()
        .flat_map(|&r| m.values[r * d..(r + 1) * d].iter().copied())
        .collect();
    let w: Vec<f64> = keep.iter().map(|&r| weights[r]).collect();
    let c = kmeans(&pts, &w, d, k, &Init::PlusPlus(seed), max_iter);
    let clusters = c.centers.len() / d;
    // Stream order of the clusters.
    let col = |ch: char| m.columns.iter().position(|&x| x == ch);
    let (fi, si, ai, ci) = (col('F'), col('S'), col('A'), col('C'));
    let center = |j: usize| &c.centers[j * d..(j + 1) * d];
    let at = |j: usize, i: Option<usize>| i.map_or(0.0, |i| center(j)[i]);
    let mut order: Vec<usize> = (0..clusters).collect();
    order.sort_by(|&a, &b| {
        let key = |j| (at(j, fi) + at(j, ci), at(j, si), at(j, ai));
        let (ka, kb) = (key(a), key(b));
        kb.0.total_cmp(&ka.0)
            .then(kb.1.total_cmp(&ka.1))
            .then(kb.2.total_cmp(&ka.2))
            .then(a.cmp(&b))
    });
    let rank = rank_map(&order);
    // Label of each distinct row.
    let mut row_label = vec![u8::MAX; m.distinct()];
    for (i, &r) in keep.iter().enumerate() {
        row_label[r] = rank[c.labels[i] as usize];
    }
    if let Some(z) = m.zero_row {
        if row_label[z] == u8::MAX {
            // Untouched chunks (touched-only clustering): nearest centre to 0.
            let j = (0..clusters)
                .min_by(|&a, &b| {
                    let n = |j: usize| center(j).iter().map(|x| x * x).sum::<f64>();
                    n(a).total_cmp(&n(b))
                })
                .unwrap_or(0);
            row_label[z] = rank[j];
        }
    }
    let mut by_code = vec![0u8; m.code_space];
    for (r, &code) in m.rows.iter().enumerate() {
        by_code[code as usize] = row_label[r];
    }
    let ids = m.codes.iter().map(|&code| by_code[code as usize]).collect();
    let stats = ClusterStats {
        distinct_rows: keep.len(),
        clusters,
        iterations: c.iterations,
        converged: c.converged,
        centers: order.iter().map(|&j| center(j).to_vec()).collect(),
    };
    (Dictionary { ids }, stats)
}

#[cfg(test)]
mod tests {
    use super::super::features::Raw;
    use super::super::matrix::{FeatureSet, Kind, Settings};
    use super::*;

    #[test]
    fn sizes_of_bd_and_sid() {
        let d = Dictionary {
            ids: vec![0, 0, 1, 1, 1, 0, 2],
        };
        let f = d.footprint();
        assert_eq!(
            (f.chunks, f.bd_bytes, f.sid_runs, f.sid_bytes),
            (7, 4, 4, 36)
        );
        assert_eq!(f.streams_used, 3);
        assert_eq!(d.get(6), 2);
        assert_eq!(d.get(100), 0);
    }

    #[test]
    fn binary_frequency_gives_two_streams_hot_first() {
        // Frequencies 1, 1, 9, 9 and two untouched chunks; K = 16.
        let raw = Raw {
            freq: vec![1, 1, 9, 9, 0, 0],
            adj: vec![0.0; 6],
            seq: vec![0.0; 6],
            windows: vec![1; 6],
            touched: vec![true, true, true, true, false, false],
            n_windows: 10,
        };
        let s = Settings {
            features: FeatureSet::parse("F").unwrap(),
            kind: Kind::Binary,
            weights: [1.0; 4],
            seq_share: 0.5,
            deciles: super::super::matrix::Deciles::Tied,
        };
        let m = Matrix::build(&raw, &s);
        let (d, st) = cluster(&m, 16, Rows::All, 1, 300);
        assert_eq!(
            st.clusters, 2,
            "a binary {{F}} matrix has two distinct rows"
        );
        assert_eq!(d.ids, vec![1, 1, 0, 0, 1, 1]);
        let (d, st) = cluster(&m, 16, Rows::Touched, 1, 300);
        assert_eq!(st.distinct_rows, 2);
        assert_eq!(d.ids, vec![1, 1, 0, 0, 1, 1]);
    }
}
