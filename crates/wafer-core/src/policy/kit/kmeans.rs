//! Weighted K-means (Lloyd) with seeded k-means++ or quantile seeding: FIOS
//! clusters the distinct rows of its feature matrix, weighted by how many
//! chunks have each row (FIOS §3.1 runs K-means over all n rows; over the
//! distinct rows with multiplicities it is the same problem, and a binary
//! matrix has at most 2^m of them). LSTM+KM (§3.4) and vStream use it in one
//! dimension.
//!
//! Lloyd's iteration as scikit-learn's `KMeans(algorithm="lloyd")` runs it,
//! so the same data, weights and initial centres give the same clusters
//! (tested against scikit-learn from Python): assign every point to its
//! nearest centre (squared Euclidean distance, the lowest index on a tie),
//! move each centre to the weighted mean of its points, stop when no
//! assignment changes (scikit-learn's "strict convergence", `tol=0`) or
//! after `max_iter` iterations. A centre left without points moves onto the
//! point farthest from its own centre (scikit-learn relocates empty clusters
//! the same way).

use crate::rng::Rng;

/// How the first centres are chosen.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum Init {
    /// k-means++ (Arthur & Vassilvitskii 2007), weighted, with this seed:
    /// the first centre drawn ∝ weight, each next one ∝ weight · D².
    PlusPlus(u64),
    /// One dimension only: the centres at the weighted quantiles
    /// (i + ½)/k of the points.
    Quantile,
    /// These centres (k rows of d values).
    Given(Vec<f64>),
}

/// A clustering.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Clusters {
    /// Centres, k rows of d values.
    pub centers: Vec<f64>,
    /// Cluster of each point.
    pub labels: Vec<u32>,
    /// The initial centres.
    pub init: Vec<f64>,
    /// Lloyd iterations run.
    pub iterations: u32,
    /// Σ weight · squared distance to the own centre.
    pub inertia: f64,
    /// Whether assignments stopped changing before `max_iter`.
    pub converged: bool,
}

#[inline(always)]
fn dist2(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

/// Index of the nearest centre of `p` (lowest on a tie) and its distance².
#[inline]
fn nearest(p: &[f64], centers: &[f64], d: usize) -> (u32, f64) {
    let mut best = (0u32, f64::INFINITY);
    for (j, c) in centers.chunks_exact(d).enumerate() {
        let e = dist2(p, c);
        if e < best.1 {
            best = (j as u32, e);
        }
    }
    best
}

/// Cluster `points` (n rows of `d` values, row-major) with `weights` (n
/// values > 0) into `k` clusters. With at most `k` points, each point is its
/// own cluster (labels 0..n; the other centres stay empty and are not
/// returned). `k` must be >= 1.
pub fn kmeans(
    points: &[f64],
    weights: &[f64],
    d: usize,
    k: usize,
    init: &Init,
    max_iter: u32,
) -> Clusters {
    let d = d.max(1);
    let n = points.len() / d;
    assert_eq!(weights.len(), n, "one weight per point");
    assert!(k >= 1, "k >= 1");
    if n <= k && !matches!(init, Init::Given(_)) {
        let centers = points[..n * d].to_vec();
        return Clusters {
            init: centers.clone(),
            centers,
            labels: (0..n as u32).collect(),
            iterations: 0,
            inertia: 0.0,
            converged: true,
        };
    }
    let init_centers = match init {
        Init::PlusPlus(seed) => plus_plus(points, weights, d, k, *seed),
        Init::Quantile => quantiles(points, weights, k),
        Init::Given(c) => {
            assert_eq!(c.len(), k * d, "k given centres of d values");
            c.clone()
        }
    };
    let k = init_centers.len() / d;
    let mut centers = init_centers.clone();
    let mut labels = vec![u32::MAX; n];
    let mut dist = vec![0f64; n];
    let mut sums = vec![0f64; k * d];
    let mut mass = vec![0f64; k];
    let mut iterations = 0;
    let mut converged = false;
    while iterations < max_iter {
        iterations += 1;
        let mut changed = false;
        for i in 0..n {
            let (j, e) = nearest(&points[i * d..(i + 1) * d], &centers, d);
            dist[i] = e;
            if labels[i] != j {
                labels[i] = j;
                changed = true;
            }
        }
        if !changed {
            converged = true;
            break;
        }
        sums.iter_mut().for_each(|s| *s = 0.0);
        mass.iter_mut().for_each(|m| *m = 0.0);
        for i in 0..n {
            let j = labels[i] as usize;
            mass[j] += weights[i];
            for (s, &x) in sums[j * d..(j + 1) * d]
                .iter_mut()
                .zip(&points[i * d..(i + 1) * d])
            {
                *s += weights[i] * x;
            }
        }
        relocate_empty(points, weights, d, &labels, &mut dist, &mut sums, &mut mass);
        for j in 0..k {
            if mass[j] > 0.0 {
                for t in 0..d {
                    centers[j * d + t] = sums[j * d + t] / mass[j];
                }
            }
        }
    }
    if !converged {
        // The labels of the final centres, as scikit-learn returns them.
        for i in 0..n {
            labels[i] = nearest(&points[i * d..(i + 1) * d], &centers, d).0;
        }
    }
    let inertia = (0..n)
        .map(|i| {
            let j = labels[i] as usize;
            weights[i] * dist2(&points[i * d..(i + 1) * d], &centers[j * d..(j + 1) * d])
        })
        .sum();
    Clusters {
        centers,
        labels,
        init: init_centers,
        iterations,
        inertia,
        converged,
    }
}

/// Give each empty cluster the point farthest from its centre (largest
/// distance first), taking that point's weight out of its old cluster.
fn relocate_empty(
    points: &[f64],
    weights: &[f64],
    d: usize,
    labels: &[u32],
    dist: &mut [f64],
    sums: &mut [f64],
    mass: &mut [f64],
) {
    let empty: Vec<usize> = (0..mass.len()).filter(|&j| mass[j] == 0.0).collect();
    if empty.is_empty() {
        return;
    }
    let mut far: Vec<usize> = (0..labels.len()).collect();
    far.sort_by(|&a, &b| dist[b].total_cmp(&dist[a]).then(a.cmp(&b)));
    for (&j, &i) in empty.iter().zip(&far) {
        let old = labels[i] as usize;
        let p = &points[i * d..(i + 1) * d];
        for t in 0..d {
            sums[old * d + t] -= weights[i] * p[t];
            sums[j * d + t] = weights[i] * p[t];
        }
        mass[old] -= weights[i];
        mass[j] = weights[i];
        dist[i] = 0.0;
    }
}

/// Weighted k-means++ seeding.
fn plus_plus(points: &[f64], weights: &[f64], d: usize, k: usize, seed: u64) -> Vec<f64> {
    let n = weights.len();
    let mut rng = Rng::new(seed);
    let pick = |rng: &mut Rng, mass: &[f64]| -> usize {
        let total: f64 = mass.iter().sum();
        if total <= 0.0 {
            return rng.below(n as u64) as usize;
        }
        let mut u = rng.next_f64() * total;
        for (i, &m) in mass.iter().enumerate() {
            if u < m {
                return i;
            }
            u -= m;
        }
        mass.iter().rposition(|&m| m > 0.0).unwrap_or(n - 1)
    };
    let first = pick(&mut rng, weights);
    let mut centers = points[first * d..(first + 1) * d].to_vec();
    let mut d2: Vec<f64> = (0..n)
        .map(|i| dist2(&points[i * d..(i + 1) * d], &centers))
        .collect();
    while centers.len() < k * d {
        let mass: Vec<f64> = d2.iter().zip(weights).map(|(e, w)| e * w).collect();
        if mass.iter().all(|&m| m <= 0.0) {
            break; // fewer distinct points than k: every point is a centre
        }
        let c = pick(&mut rng, &mass);
        let row = points[c * d..(c + 1) * d].to_vec();
        for i in 0..n {
            d2[i] = d2[i].min(dist2(&points[i * d..(i + 1) * d], &row));
        }
        centers.extend_from_slice(&row);
    }
    centers
}

/// Weighted quantiles (i + ½)/k of 1-D points, distinct values only (fewer
/// centres when there are fewer distinct values).
fn quantiles(points: &[f64], weights: &[f64], k: usize) -> Vec<f64> {
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by(|&a, &b| points[a].total_cmp(&points[b]));
    let total: f64 = weights.iter().sum();
    let mut out: Vec<f64> = Vec::with_capacity(k);
    let (mut acc, mut it) = (0.0, order.iter().peekable());
    for i in 0..k {
        let q = (i as f64 + 0.5) / k as f64 * total;
        while let Some(&&p) = it.peek() {
            if acc + weights[p] > q {
                break;
            }
            acc += weights[p];
            it.next();
        }
        let v = match it.peek() {
            Some(&&p) => points[p],
            None => points[*order.last().expect("points")],
        };
        if out.last() != Some(&v) {
            out.push(v);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_blobs_in_two_clusters() {
        let pts = [0.0, 0.0, 0.1, 0.0, 0.0, 0.1, 5.0, 5.0, 5.1, 5.0, 5.0, 5.1];
        let c = kmeans(&pts, &[1.0; 6], 2, 2, &Init::PlusPlus(3), 300);
        assert!(c.converged);
        assert_eq!(c.labels[0], c.labels[1]);
        assert_eq!(c.labels[0], c.labels[2]);
        assert_eq!(c.labels[3], c.labels[5]);
        assert_ne!(c.labels[0], c.labels[3]);
        let j = c.labels[3] as usize;
        assert!((c.centers[j * 2] - 5.0333).abs() < 1e-3);
    }

    #[test]
    fn weights_are_multiplicities() {
        // Point 0 three times == point 0 with weight 3.
        let pts = [0.0, 1.0, 10.0];
        let w = kmeans(
            &pts,
            &[3.0, 1.0, 1.0],
            1,
            2,
            &Init::Given(vec![0.0, 10.0]),
            300,
        );
        let rep = kmeans(
            &[0.0, 0.0, 0.0, 1.0, 10.0],
            &[1.0; 5],
            1,
            2,
            &Init::Given(vec![0.0, 10.0]),
            300,
        );
        assert_eq!(w.centers, rep.centers);
        assert!((w.centers[0] - 0.25).abs() < 1e-12);
    }

    #[test]
    fn few_points_are_their_own_clusters() {
        let c = kmeans(&[1.0, 0.0], &[5.0, 1.0], 1, 16, &Init::PlusPlus(1), 300);
        assert_eq!(c.labels, vec![0, 1]);
        assert_eq!(c.centers, vec![1.0, 0.0]);
    }

    #[test]
    fn seeded_plus_plus_is_deterministic() {
        let mut rng = Rng::new(7);
        let pts: Vec<f64> = (0..400).map(|_| rng.next_f64()).collect();
        let w = vec![1.0; 200];
        let a = kmeans(&pts, &w, 2, 5, &Init::PlusPlus(9), 300);
        let b = kmeans(&pts, &w, 2, 5, &Init::PlusPlus(9), 300);
        assert_eq!(a, b);
        let c = kmeans(&pts, &w, 2, 5, &Init::PlusPlus(10), 300);
        assert_ne!(a.init, c.init);
    }

    #[test]
    fn quantile_seeding_in_one_dimension() {
        let pts: Vec<f64> = (0..100).map(|i| i as f64).collect();
        let c = kmeans(&pts, &[1.0; 100], 1, 4, &Init::Quantile, 300);
        assert_eq!(c.init, vec![12.0, 37.0, 62.0, 87.0]);
        assert!(c.converged);
        // Four equal ranges of 25 points.
        for (i, &l) in c.labels.iter().enumerate() {
            assert_eq!(l as usize, i / 25, "point {i}");
        }
    }

    #[test]
    fn an_emptied_cluster_takes_the_farthest_point() {
        // Centre 2 starts where no point is nearest: it is relocated.
        let pts = [0.0, 1.0, 2.0, 10.0];
        let c = kmeans(
            &pts,
            &[1.0; 4],
            1,
            3,
            &Init::Given(vec![0.5, 10.0, 100.0]),
            300,
        );
        let used: std::collections::BTreeSet<u32> = c.labels.iter().copied().collect();
        assert_eq!(used.len(), 3, "{:?}", c.labels);
    }
}
