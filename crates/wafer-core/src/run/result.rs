//! Everything a replay measured: [`RunResult`].

use serde::Serialize;

use super::resources;
use super::setup::Conventions;
use super::warnings::Warning;
use crate::device::Geometry;
use crate::engine::GcSettings;
use crate::ftl::stats::{Counters, GroupWindowRow, HeldSegments, WindowRow, VICTIM_BINS};
pub use crate::ftl::stats::{GroupResult, LifetimeProfile};
use crate::future::{AccuracyReport, AnnotationInfo};
use crate::model::train::TrainingStats;
use crate::source::TraceSummary;
use crate::timing::TimingResult;

/// Min / mean / max erase count over all segments.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct EraseStats {
    /// Fewest erases of any segment.
    pub min: u32,
    /// Mean erases per segment.
    pub mean: f64,
    /// Most erases of any segment.
    pub max: u32,
}

/// Everything a replay measured.
#[derive(Clone, Debug, Serialize)]
pub struct RunResult {
    /// Placement policy.
    pub policy: String,
    /// Victim selector.
    pub victim: String,
    /// Workload spec.
    pub workload: String,
    /// Seed.
    pub seed: u64,
    /// Validated device shape.
    pub geometry: Geometry,
    /// The conventions the run followed (its setup and what it fixed).
    pub conventions: Conventions,
    /// (user + GC) / user over the whole workload; with
    /// `conventions.waf_counts_prefill`, the prefill's writes count too.
    pub waf: Option<f64>,
    /// (user + GC) / user over the workload alone, whatever the conventions.
    pub workload_waf: Option<f64>,
    /// User and GC writes of the prefill [blocks] (zero without one).
    pub prefill_writes: u64,
    /// GC writes during the prefill [blocks].
    pub prefill_gc_writes: u64,
    /// WAF after the warm-up; `None` if the run did not pass the warm-up.
    pub steady_waf: Option<f64>,
    /// Shiro's (F - U) / U = WAF - 1.
    pub extra_writes_per_user_write: Option<f64>,
    /// User-written blocks.
    pub user_writes: u64,
    /// GC-written blocks.
    pub gc_writes: u64,
    /// All counters.
    pub counters: Counters,
    /// User writes / logical capacity.
    pub drive_writes: f64,
    /// Mean valid ratio of the collected segments.
    pub mean_victim_valid_ratio: Option<f64>,
    /// How GC ran: foreground watermarks [segments], background mode.
    pub gc: GcSettings,
    /// Segments held out of use (free reserve + open segments of the
    /// policy's groups) when GC started: mean and max.
    pub held_segments: HeldSegments,
    /// Victims per valid-ratio bin of width 1/20.
    pub victim_valid_histogram: [u64; VICTIM_BINS],
    /// Erase counts per segment.
    pub erases: EraseStats,
    /// Per-group figures.
    pub groups: Vec<GroupResult>,
    /// Time series, one row per window.
    pub windows: Vec<WindowRow>,
    /// Each group's part of each window (MiDAS-Simulation's per-group
    /// lines): one row per window and group.
    pub group_windows: Vec<GroupWindowRow>,
    /// Wall time spent simulating the workload [s] (prefill excluded).
    pub elapsed_seconds: f64,
    /// Wall time of the prefill [s].
    pub prefill_seconds: f64,
    /// User writes per wall second.
    pub user_writes_per_second: f64,
    /// Engine state (mapping, segments, victim selector) [bytes].
    pub engine_memory_bytes: u64,
    /// Engine state per physical block [bytes].
    pub engine_bytes_per_physical_block: f64,
    /// Policy state [bytes].
    pub policy_memory_bytes: u64,
    /// The policy's run-time decisions (e.g. MiDAS's group configuration),
    /// if it reports any.
    pub policy_state: Option<serde_json::Value>,
    /// Trace format replayed, if a trace was.
    pub trace_format: Option<String>,
    /// The trace replayed: what reading it did (lines, skipped, ...),
    /// passes, how it sized the device, its footprint and timing.
    pub trace: Option<TraceSummary>,
    /// Memory the run was estimated to need before it started [bytes].
    pub memory_estimate: resources::Estimate,
    /// Why to distrust a number here (GC never ran, warm-up not reached,
    /// odd timestamps, ...), each with a stable `code` and a `message`.
    pub warnings: Vec<Warning>,
    /// How the lifetime annotation was obtained, if the run had one.
    pub annotation: Option<AnnotationInfo>,
    /// The policy's lifetime predictions scored against the annotation
    /// (`None` without one, or for a policy that predicts nothing).
    pub accuracy: Option<AccuracyReport>,
    /// What the policy's online training did (learned policies): trainings,
    /// wall time [s] (inside `elapsed_seconds`), examples, loss.
    pub training: Option<TrainingStats>,
    /// Timing mode's measurements (latency, throughput, energy, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timing: Option<TimingResult>,
}
