//! The write rate of a request stream at any resolution, and its lag-1
//! autocorrelation: FIOS's ACF attribute (§3.6, `policy::fios::selection`)
//! and `wafer traces inspect` report it.

/// Window of the write-rate ACF [s] (Table 3's 5-minute statistics window).
pub const ACF_WINDOW_S: f64 = 300.0;
/// Fewest windows the write-rate ACF is taken over: a shorter trace gets
/// windows of 1/32 of its span.
pub const ACF_MIN_WINDOWS: u64 = 32;

/// Write-request counts in bins of a width that doubles (pairs of bins
/// merged) so the series never holds more than [`RateSeries::MAX_BINS`]:
/// the write rate at any resolution coarser than the final width.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct RateSeries {
    origin: Option<u64>,
    /// Bin width [ns].
    width: u64,
    counts: Vec<u64>,
}

impl RateSeries {
    /// Most bins kept.
    pub const MAX_BINS: u64 = 1 << 16;
    /// First bin width [ns] (1 ms).
    pub const BASE_WIDTH: u64 = 1_000_000;

    /// A write at `t` [ns].
    pub fn add(&mut self, t: u64) {
        let o = *self.origin.get_or_insert(t);
        if self.width == 0 {
            self.width = Self::BASE_WIDTH;
        }
        let mut i = t.saturating_sub(o) / self.width;
        while i >= Self::MAX_BINS {
            let merged: Vec<u64> = self.counts.chunks(2).map(|p| p.iter().sum()).collect();
            self.counts = merged;
            self.width *= 2;
            i = t.saturating_sub(o) / self.width;
        }
        let i = i as usize;
        if i >= self.counts.len() {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += 1;
    }

    /// The lag-1 autocorrelation of the counts per window of `window_ns`
    /// (at most the series' span / `min_windows`, at least one bin, whole
    /// bins; the last, partial window dropped), and the window used [ns];
    /// `None` with fewer than 3 windows. A constant series counts as 1.
    pub fn acf(&self, window_ns: u64, min_windows: u64) -> Option<(f64, u64)> {
        let span = self.counts.len() as u64 * self.width;
        let want = window_ns.min(span / min_windows.max(1));
        let k = ((want as f64 / self.width.max(1) as f64).round() as usize).max(1);
        let x: Vec<f64> = self
            .counts
            .chunks_exact(k)
            .map(|c| c.iter().sum::<u64>() as f64)
            .collect();
        if x.len() < 3 {
            return None;
        }
        let n = x.len() as f64;
        let m = x.iter().sum::<f64>() / n;
        let var: f64 = x.iter().map(|v| (v - m) * (v - m)).sum();
        let cov: f64 = x.windows(2).map(|w| (w[0] - m) * (w[1] - m)).sum();
        let r = if var > 0.0 { cov / var } else { 1.0 };
        Some((r, k as u64 * self.width))
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.counts.capacity() * 8
    }
}
