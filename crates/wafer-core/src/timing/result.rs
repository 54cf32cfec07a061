//! What a timed replay reports: the `timing` object of a result (JSON keys,
//! table rows, time-series rows). Latencies in µs, rates per second of
//! simulated time, energy in joules.

use serde::Serialize;

use super::hist::Summary;

/// Latency of one kind of request, seen by the device (from the submission
/// queue to the completion) and end to end (from arrival, host queue
/// included) [µs].
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Latency {
    /// Submission-queue entry to completion.
    pub device: Summary,
    /// Arrival to completion.
    pub end_to_end: Summary,
}

/// Throughput over the timed phase.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Throughput {
    /// Requests completed per second of simulated time.
    pub iops: f64,
    /// Of those, reads.
    pub read_iops: f64,
    /// Of those, writes.
    pub write_iops: f64,
    /// Bytes moved per second (reads + writes).
    pub bandwidth_bytes_per_s: f64,
    /// Bytes read per second.
    pub read_bandwidth_bytes_per_s: f64,
    /// Bytes written per second.
    pub write_bandwidth_bytes_per_s: f64,
}

/// Busy fractions of the simulated time.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Utilisation {
    /// Mean over channels of the share of time their bus moved commands or data.
    pub channel_mean: f64,
    /// Busiest channel.
    pub channel_max: f64,
    /// Mean over dies of the share of time they worked (transfers, array
    /// operations, suspension costs).
    pub die_mean: f64,
    /// Least busy die.
    pub die_min: f64,
    /// Busiest die.
    pub die_max: f64,
    /// Per channel.
    pub channels: Vec<f64>,
    /// Per die (global die order: channel, chip, die).
    pub dies: Vec<f64>,
    /// Host link, host to device (SATA: the link).
    pub host_link_down: f64,
    /// Host link, device to host.
    pub host_link_up: f64,
    /// DRAM bus.
    pub dram: f64,
}

/// Waiting.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Waits {
    /// Mean time requests spent in the host queue (submission queue full) [µs].
    pub host_queue_mean_us: f64,
    /// Longest [µs].
    pub host_queue_max_us: f64,
    /// Per flash queue class: mean time from ready to start [µs].
    pub flash_mean_us: std::collections::BTreeMap<String, f64>,
    /// Per class: longest [µs].
    pub flash_max_us: std::collections::BTreeMap<String, f64>,
    /// Host write pages that waited for cache room (back-pressure).
    pub cache_waits: u64,
    /// Programs that waited for their block's erase.
    pub programs_parked: u64,
}

/// Hit rates of the DRAM cache and the mapping table.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Hits {
    /// Host read pages served from DRAM.
    pub cache_read_hits: u64,
    /// Host read pages read from flash (or unmapped).
    pub cache_read_misses: u64,
    /// Host write pages that found their page in the cache.
    pub cache_write_hits: u64,
    /// Host write pages that took a new slot.
    pub cache_write_misses: u64,
    /// (read + write hits) / (hits + misses); `None` without accesses.
    pub cache_hit_rate: Option<f64>,
    /// Mapping-table lookups that hit.
    pub cmt_hits: u64,
    /// Lookups that missed.
    pub cmt_misses: u64,
    /// Of the misses, those that joined a read of their translation page
    /// already in flight (no read of their own).
    pub cmt_merged_misses: u64,
    /// hits / lookups.
    pub cmt_hit_rate: Option<f64>,
}

/// Flash operations of the timed phase, by cause.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FlashCounts {
    /// Per class (mapping_read, user_read, gc_read, mapping_write,
    /// user_write, gc_write, erase): operations finished.
    pub by_class: std::collections::BTreeMap<String, u64>,
    /// Pages read from the array.
    pub reads: u64,
    /// Pages programmed: host data.
    pub user_programs: u64,
    /// Pages programmed by GC.
    pub gc_programs: u64,
    /// Translation pages programmed (write backs and the translation
    /// area's cleaning).
    pub mapping_programs: u64,
    /// Translation pages read.
    pub mapping_reads: u64,
    /// Write-backs of evicted dirty mapping entries (one translation
    /// program each, carrying every dirty cached entry of its page).
    pub mapping_write_backs: u64,
    /// Dirty mapping entries those write-backs carried.
    pub mapping_entries_written_back: u64,
    /// Translation pages the translation area's cleaning moved.
    pub mapping_cleaning_moves: u64,
    /// Erases (one per plane slice).
    pub erases: u64,
    /// GC moves done as copyback (no channel transfer).
    pub copybacks: u64,
    /// Batches of more than one plane.
    pub multiplane_batches: u64,
    /// Batches in all.
    pub batches: u64,
    /// Programs suspended by a read.
    pub suspended_programs: u64,
    /// Erases suspended by a read or write.
    pub suspended_erases: u64,
    /// Read-modify-write reads of partial pages.
    pub rmw_reads: u64,
    /// Host page reads of pages never written: zeroes, no flash access.
    pub unmapped_reads: u64,
    /// Programs per page type: LSB, then CSB and MSB (TLC) or MSB (MLC);
    /// one entry per type of the flash technology.
    pub programs_by_page_type: Vec<u64>,
}

/// Energy by component over the timed phase [J], and average power [W].
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Energy {
    /// Flash array reads.
    pub flash_read_j: f64,
    /// Flash array programs.
    pub flash_program_j: f64,
    /// Flash erases.
    pub flash_erase_j: f64,
    /// Chips with no die at work.
    pub flash_idle_j: f64,
    /// Channel I/O.
    pub channel_j: f64,
    /// DRAM (background and accesses).
    pub dram_j: f64,
    /// Controller.
    pub controller_j: f64,
    /// Sum.
    pub total_j: f64,
    /// total / simulated time.
    pub average_power_w: f64,
    /// total / requests completed.
    pub per_request_j: Option<f64>,
    /// total / bytes moved by the host.
    pub per_byte_j: Option<f64>,
}

/// One time-series row, closed with each of the engine's windows that
/// ends during the timed phase.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct TimingWindow {
    /// Index of the engine's window (row of `windows`).
    pub window: usize,
    /// Simulated time at the window's end [s].
    pub end_seconds: f64,
    /// Requests completed in the window.
    pub requests: u64,
    /// Requests per second.
    pub iops: f64,
    /// Bytes moved per second.
    pub bandwidth_bytes_per_s: f64,
    /// Mean device read latency [µs].
    pub read_mean_us: f64,
    /// 99th percentile device read latency [µs].
    pub read_p99_us: f64,
    /// Mean device write latency [µs].
    pub write_mean_us: f64,
    /// 99th percentile device write latency [µs].
    pub write_p99_us: f64,
    /// Flash programs (user + GC + mapping) / user programs in the window.
    pub flash_waf: Option<f64>,
}

/// The end's flush: the dirty cache written to flash after the last
/// request completed.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Flush {
    /// Dirty pages written.
    pub pages: u64,
    /// Simulated time from the last completion to the last program [s].
    pub seconds: f64,
    /// Flash programs it caused (GC's included).
    pub programs: u64,
    /// Of those, the cached pages' own.
    pub user_programs: u64,
}

/// The write cache when the run ended.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct CacheEnd {
    /// Pages the write cache holds at most (0 without one).
    pub capacity_pages: u64,
    /// Dirty pages flash never received (0 after the end's flush).
    pub dirty_pages_at_end: u64,
}

/// Everything a timed replay measured (the result's `timing` object).
#[derive(Clone, Debug, Default, Serialize)]
pub struct TimingResult {
    /// Preset (or file) name.
    pub preset: String,
    /// Arrival mode.
    pub arrival: String,
    /// Closed loop: outstanding requests.
    pub queue_depth: u32,
    /// Pages of a segment per plane (the preset's pages per block unless fitted).
    pub slice_pages: u32,
    /// Erase time of one plane slice [µs] (scaled with the slice).
    pub erase_us: f64,
    /// User pages written in WAF mode before timing started (the fill and
    /// the overwrites).
    pub precondition_writes: u64,
    /// Wall time of the preconditioning [s].
    pub precondition_seconds: f64,
    /// The overwrites' workload spec.
    pub precondition_workload: String,
    /// The saved preconditioning: loaded, saved, or why not (`None`: not
    /// cached, e.g. too small to be worth it or `precondition_cache` off).
    pub precondition_cache: Option<PreconditionCacheReport>,
    /// The end's flush of the dirty cache (`None` with `flush` off).
    pub flush: Option<Flush>,
    /// The device was sized to the run (`fit_device`), not the preset's
    /// whole drive.
    pub fit_device: bool,
    /// The write cache when the run ended.
    pub cache: CacheEnd,
    /// Simulated time of the timed phase, up to the last request's
    /// completion (the end's flush is apart) [s].
    pub simulated_seconds: f64,
    /// Host requests that arrived during the timed phase.
    pub arrived: u64,
    /// Host requests completed: reads, writes, trims (= `arrived` at the
    /// end: every request completes).
    pub requests: u64,
    /// Read requests completed.
    pub reads: u64,
    /// Write requests completed.
    pub writes: u64,
    /// Trim requests completed.
    pub trims: u64,
    /// Bytes read by the host.
    pub read_bytes: u64,
    /// Bytes written by the host.
    pub write_bytes: u64,
    /// Read latency [µs].
    pub read_latency: Latency,
    /// Write latency [µs].
    pub write_latency: Latency,
    /// Rates.
    pub throughput: Throughput,
    /// Busy fractions.
    pub utilisation: Utilisation,
    /// Queue waits.
    pub waits: Waits,
    /// Cache and mapping-table hits.
    pub hits: Hits,
    /// Flash operations.
    pub flash: FlashCounts,
    /// (user + GC + mapping programs) / user programs.
    pub waf_with_mapping: Option<f64>,
    /// All programs / host pages written (the cache's merging included).
    pub host_waf: Option<f64>,
    /// Energy and power.
    pub energy: Energy,
    /// Time series.
    pub windows: Vec<TimingWindow>,
    /// Host requests simulated per second of wall time.
    pub requests_per_wall_second: f64,
    /// Flash operations simulated per second of wall time.
    pub flash_ops_per_wall_second: f64,
    /// Wall time of the timed phase [s].
    pub wall_seconds: f64,
    /// Idle periods reported to the policy.
    pub idle_periods: u64,
    /// Checks that held (every request completed, no operation on a busy
    /// die, completions after arrivals): violations found (always 0).
    pub invariant_violations: u64,
}

/// What happened with the cache in this run (`timing.precondition_cache`; `run::precondition`).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct PreconditionCacheReport {
    /// The entry's file.
    pub path: String,
    /// Loaded instead of preconditioning.
    pub loaded: bool,
    /// Saved after preconditioning.
    pub saved: bool,
    /// Bytes of the entry on disk.
    pub bytes: u64,
    /// Wall time to load or save it [s].
    pub seconds: f64,
    /// Why an entry found was not loaded, or why none was saved.
    pub note: Option<String>,
}
