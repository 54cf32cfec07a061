//! Workload statistics of a trace, the way the papers describe workloads:
//! request mix, size distribution, footprint, drive-writes, the attributes
//! FIOS uses to pick features (FIOS paper §5, Table 3: ACF of write
//! inter-arrival times, random-write ratio, reuse ratio, average write size,
//! write rate per day, peak and mean IOPS), and the distribution of block
//! update intervals (lifetimes, in user-written blocks).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use serde::Serialize;

use super::{blocks_of, ReadStats, Selected};
use crate::error::Result;
use crate::request::Op;

/// Multiplicative hasher for block numbers (keys are already well spread).
#[derive(Default)]
pub(super) struct BlockHasher(u64);

impl Hasher for BlockHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("only u64 keys are hashed")
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (x ^ (x >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    }
}

/// A hash map keyed by block number.
pub(super) type BlockMap<V> = HashMap<u64, V, BuildHasherDefault<BlockHasher>>;

/// A power-of-two histogram: bin k counts values in [2^k, 2^(k+1)), bin 0 also holds 0.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Log2Histogram {
    /// Lower bound of each non-empty bin.
    pub lower: Vec<u64>,
    /// Count of each bin.
    pub count: Vec<u64>,
}

fn log2_hist(bins: &[u64; 64]) -> Log2Histogram {
    let mut h = Log2Histogram::default();
    for (k, &c) in bins.iter().enumerate() {
        if c > 0 {
            h.lower.push(if k == 0 { 0 } else { 1u64 << k });
            h.count.push(c);
        }
    }
    h
}

#[inline]
fn bin(x: u64) -> usize {
    if x == 0 {
        0
    } else {
        63 - x.leading_zeros() as usize
    }
}

/// The FIOS workload attributes (FIOS, ACM TOS 2022, Table 3).
#[derive(Clone, Debug, Default, Serialize)]
pub struct FiosAttributes {
    /// ACF: lag-1 autocorrelation of the inter-arrival times of writes.
    pub acf: Option<f64>,
    /// ACF of the write rate: lag-1 autocorrelation of write requests per
    /// 5-minute window (per 1/32 of a shorter trace), what `fios acf=rate`
    /// uses (FIOS §3.6; see `policy::fios::selection`).
    pub acf_write_rate: Option<f64>,
    /// RW: fraction of writes not starting where the previous write ended.
    pub random_write_ratio: Option<f64>,
    /// R: bytes accessed / unique bytes accessed.
    pub reuse_ratio: Option<f64>,
    /// S: mean write size [KiB].
    pub avg_write_kib: Option<f64>,
    /// WV: working volume, unique bytes accessed [KiB].
    pub working_volume_kib: f64,
    /// λ: write rate [GB/day, GB = 10^9 bytes].
    pub write_gb_per_day: Option<f64>,
    /// Peak request rate over 5-minute windows [IOPS].
    pub peak_iops_5min: Option<f64>,
    /// Mean request rate [IOPS].
    pub iops: Option<f64>,
}

/// Everything `wafer traces inspect` reports.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TraceStats {
    /// Source format.
    pub format: String,
    /// Block size used for block figures [bytes].
    pub block_size: u32,
    /// Requests kept.
    pub requests: u64,
    /// Read requests.
    pub reads: u64,
    /// Write requests.
    pub writes: u64,
    /// Trim requests.
    pub trims: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Bytes trimmed.
    pub trim_bytes: u64,
    /// Reads / requests.
    pub read_fraction: Option<f64>,
    /// Blocks written (each request rounded out to whole blocks).
    pub write_blocks: u64,
    /// Request sizes [bytes], power-of-two bins.
    pub size_histogram: Log2Histogram,
    /// Distinct blocks touched.
    pub footprint_blocks: u64,
    /// Distinct blocks written.
    pub write_footprint_blocks: u64,
    /// One past the highest block touched (the address space replay needs).
    pub address_space_blocks: u64,
    /// Capacity the drive-writes refer to [blocks]: given, or the footprint
    /// (the device a replay sizes from the trace by default, so `inspect`
    /// and `replay` count drive-writes on the same base).
    pub capacity_blocks: u64,
    /// write_blocks / capacity_blocks.
    pub drive_writes: Option<f64>,
    /// write_blocks / address_space_blocks (the base of `--address-space`).
    pub address_space_drive_writes: Option<f64>,
    /// Time from the first to the last request [s].
    pub duration_seconds: f64,
    /// FIOS attributes.
    pub fios: FiosAttributes,
    /// Update intervals of overwritten blocks [user-written blocks], power-of-two bins.
    pub update_intervals: Log2Histogram,
    /// Mean update interval [user-written blocks].
    pub mean_update_interval: Option<f64>,
    /// Written blocks never overwritten (or trimmed) afterwards.
    pub never_overwritten_blocks: u64,
    /// What reading and selection did.
    pub read: ReadStats,
}

/// Map values other than a write time.
const READ_ONLY: u64 = u64::MAX;
const TRIMMED: u64 = u64::MAX - 1;

/// One pass over `src`.
pub fn compute(
    src: &mut Selected,
    format: &str,
    block_size: u32,
    capacity_blocks: Option<u64>,
) -> Result<TraceStats> {
    let mut s = TraceStats {
        format: format.to_string(),
        block_size,
        ..Default::default()
    };
    let mut sizes = [0u64; 64];
    let mut intervals = [0u64; 64];
    let (mut interval_sum, mut interval_n) = (0f64, 0u64);
    // Last user-write time of each touched block, or READ_ONLY / TRIMMED.
    let mut last: BlockMap<u64> = BlockMap::default();
    let mut clock = 0u64;
    let (mut first_t, mut last_t) = (None, 0u64);
    // Write inter-arrival autocorrelation, online.
    let (mut prev_write_t, mut prev_gap): (Option<u64>, Option<f64>) = (None, None);
    let (mut gs, mut gss, mut glag, mut gn, mut lagn) = (0f64, 0f64, 0f64, 0u64, 0u64);
    let (mut prev_write_end, mut random, mut seq_judged) = (None::<u64>, 0u64, 0u64);
    let mut rate = super::rate::RateSeries::default();
    // Requests per 5-minute window.
    let (mut window, mut window_count, mut peak) = (0u64, 0u64, 0u64);
    while let Some(r) = src.next_record()? {
        s.requests += 1;
        first_t.get_or_insert(r.time_ns);
        last_t = r.time_ns;
        let w = r.time_ns / 300_000_000_000;
        if w != window {
            peak = peak.max(window_count);
            window = w;
            window_count = 0;
        }
        window_count += 1;
        sizes[bin(r.size)] += 1;
        let (first, n) = blocks_of(&r, block_size);
        s.address_space_blocks = s.address_space_blocks.max(first + n);
        match r.op {
            Op::Read => {
                s.reads += 1;
                s.read_bytes += r.size;
                for b in first..first + n {
                    last.entry(b).or_insert(READ_ONLY);
                }
            }
            Op::Trim => {
                s.trims += 1;
                s.trim_bytes += r.size;
                for b in first..first + n {
                    last.insert(b, TRIMMED);
                }
            }
            Op::Write => {
                s.writes += 1;
                s.write_bytes += r.size;
                s.write_blocks += n;
                if let Some(p) = prev_write_t {
                    let gap = (r.time_ns - p) as f64;
                    gs += gap;
                    gss += gap * gap;
                    gn += 1;
                    if let Some(pg) = prev_gap {
                        glag += gap * pg;
                        lagn += 1;
                    }
                    prev_gap = Some(gap);
                }
                prev_write_t = Some(r.time_ns);
                rate.add(r.time_ns);
                if let Some(e) = prev_write_end {
                    seq_judged += 1;
                    if e != r.offset {
                        random += 1;
                    }
                }
                prev_write_end = Some(r.offset + r.size);
                for b in first..first + n {
                    match last.insert(b, clock) {
                        None | Some(READ_ONLY) => s.write_footprint_blocks += 1,
                        Some(TRIMMED) => {}
                        Some(p) => {
                            let d = clock - p;
                            intervals[bin(d)] += 1;
                            interval_sum += d as f64;
                            interval_n += 1;
                        }
                    }
                    clock += 1;
                }
            }
        }
    }
    peak = peak.max(window_count);
    s.size_histogram = log2_hist(&sizes);
    s.update_intervals = log2_hist(&intervals);
    s.mean_update_interval = (interval_n > 0).then(|| interval_sum / interval_n as f64);
    s.footprint_blocks = last.len() as u64;
    s.never_overwritten_blocks = last.values().filter(|&&t| t < TRIMMED).count() as u64;
    s.capacity_blocks = capacity_blocks.unwrap_or(s.footprint_blocks);
    s.drive_writes =
        (s.capacity_blocks > 0).then(|| s.write_blocks as f64 / s.capacity_blocks as f64);
    s.address_space_drive_writes =
        (s.address_space_blocks > 0).then(|| s.write_blocks as f64 / s.address_space_blocks as f64);
    s.read_fraction = (s.requests > 0).then(|| s.reads as f64 / s.requests as f64);
    s.duration_seconds = first_t.map_or(0.0, |f| (last_t - f) as f64 / 1e9);
    let days = s.duration_seconds / 86_400.0;
    let unique_bytes = s.footprint_blocks as f64 * block_size as f64;
    s.fios = FiosAttributes {
        acf: (lagn > 1).then(|| {
            let mean = gs / gn as f64;
            let var = gss / gn as f64 - mean * mean;
            if var > 0.0 {
                (glag / lagn as f64 - mean * mean) / var
            } else {
                1.0
            }
        }),
        acf_write_rate: {
            use super::rate::{ACF_MIN_WINDOWS, ACF_WINDOW_S};
            rate.acf((ACF_WINDOW_S * 1e9) as u64, ACF_MIN_WINDOWS)
                .map(|(r, _)| r)
        },
        random_write_ratio: (seq_judged > 0).then(|| random as f64 / seq_judged as f64),
        reuse_ratio: (unique_bytes > 0.0)
            .then(|| (s.read_bytes + s.write_bytes) as f64 / unique_bytes),
        avg_write_kib: (s.writes > 0).then(|| s.write_bytes as f64 / s.writes as f64 / 1024.0),
        working_volume_kib: unique_bytes / 1024.0,
        write_gb_per_day: (days > 0.0).then(|| s.write_bytes as f64 / 1e9 / days),
        // A trace shorter than one window has its mean rate as its peak.
        peak_iops_5min: (s.duration_seconds > 0.0)
            .then(|| peak as f64 / s.duration_seconds.min(300.0)),
        iops: (s.duration_seconds > 0.0).then(|| s.requests as f64 / s.duration_seconds),
    };
    s.read = src.stats();
    Ok(s)
}
