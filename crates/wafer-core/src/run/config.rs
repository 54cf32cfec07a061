//! What defines a replay: [`RunConfig`], the only type that knows a whole
//! run (device, policy, victim selector, request stream, conventions,
//! timing). Lower layers take their own parts of it ([`StreamSpec`] for
//! the request stream and its annotation).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::setup::Setup;
use crate::device::DeviceConfig;
use crate::error::{Error, Result};
use crate::future::{Annotation, AnnotationInfo};
use crate::source::{StreamSpec, TraceConfig};
use crate::timing::TimingRun;
use crate::victim::{CostBenefitConfig, VictimTies};

/// Everything that defines a replay.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// The simulated device.
    pub device: DeviceConfig,
    /// Placement policy name (see `policy::REGISTRY`).
    pub policy: String,
    /// Policy parameter overrides (a JSON object).
    pub params: Value,
    /// Victim selector name (see `victim::SELECTORS`).
    pub victim: String,
    /// Synthetic workload spec (see [`crate::workload`]).
    pub workload: String,
    /// User blocks to write [blocks].
    pub writes: u64,
    /// User blocks to write as a multiple of the logical capacity once the
    /// device is sized (a trace's footprint) [drive-writes]; replaces
    /// `writes` when given.
    pub drive_writes: Option<f64>,
    /// Seed of every random choice in the run.
    pub seed: u64,
    /// Replay this trace instead of `workload`; `writes` then caps the user
    /// blocks replayed.
    pub trace: Option<TraceConfig>,
    /// Annotate the request stream with each block's death time and score
    /// the policy's lifetime predictions against it (oracle policies get the
    /// annotation anyway).
    pub accuracy: bool,
    /// Refuse the run if its memory estimate exceeds this [bytes]; `None`:
    /// the memory the machine has available.
    pub memory_limit: Option<u64>,
    /// Folder of the lifetime-annotation cache; `None`: `$WAFER_CACHE_DIR`,
    /// else `$XDG_CACHE_HOME/wafer`, else `~/.cache/wafer`.
    pub cache_dir: Option<String>,
    /// Whose conventions to follow ([`Setup`]): a peer's setup overrides
    /// the fields it fixes when the run starts.
    pub setup: Setup,
    /// What the `cost-benefit` victim selector computes (form and clock).
    pub cost_benefit: CostBenefitConfig,
    /// How victim selectors break ties and order their candidates (wafer's
    /// own, or SepBIT's replayer's hash-map order).
    pub victim_ties: VictimTies,
    /// Count the prefill's writes in `waf` (MiDAS-Simulation's WAF).
    pub waf_counts_prefill: bool,
    /// Timing mode: simulate this SSD's latency, throughput and energy
    /// (see [`crate::timing`]); `None`: WAF mode.
    pub timing: Option<TimingRun>,
    /// Write one row per collected victim to this file (CSV, or Arrow for
    /// `.arrow`; [`super::gc_dump`]).
    pub dump_gc: Option<String>,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            device: DeviceConfig::default(),
            policy: "base".into(),
            params: Value::Null,
            victim: "greedy".into(),
            workload: "zipf:1.0".into(),
            writes: 4 << 20,
            drive_writes: None,
            seed: 1,
            trace: None,
            accuracy: false,
            memory_limit: None,
            cache_dir: None,
            setup: Setup::Wafer,
            cost_benefit: CostBenefitConfig::default(),
            victim_ties: VictimTies::Wafer,
            waf_counts_prefill: false,
            timing: None,
            dump_gc: None,
        }
    }
}

impl RunConfig {
    /// The part of this configuration that makes the request stream.
    pub fn stream(&self) -> StreamSpec {
        StreamSpec {
            workload: self.workload.clone(),
            trace: self.trace.clone(),
            seed: self.seed,
            writes: self.writes,
            device: self.device.clone(),
        }
    }

    /// Annotate this run's request stream with each block's death
    /// ([`crate::future::annotate`], cached in `cache_dir` for a trace).
    pub fn annotate(&self) -> Result<(Annotation, AnnotationInfo)> {
        crate::future::annotate(&self.stream(), self.cache_dir.as_deref())
    }

    /// The class count of SepBIT's replayer for this run's policy (its
    /// `--setNumOpenSegments`): the policy's `classes` parameter if it has
    /// one, else the 6 of every run wafer compared with.
    pub fn replayer_classes(&self) -> u32 {
        // An unknown name has no defaults here; building it says why.
        let base = crate::policy::PolicyName::parse(&self.policy).map_or("", |n| n.base);
        self.params
            .get("classes")
            .cloned()
            .or_else(|| crate::policy::defaults(base).and_then(|d| d.get("classes").cloned()))
            .and_then(|v| v.as_u64())
            .map_or(crate::victim::REPLAYER_CLASSES, |c| c as u32)
    }

    /// The run's length in user blocks: `drive_writes` (if given) times
    /// the device's `logical_blocks`, known once the stream is open.
    pub fn settle_length(&mut self, logical_blocks: u64) -> Result<()> {
        if let Some(k) = self.drive_writes {
            if !(k.is_finite() && k > 0.0) {
                return Err(Error::config(
                    "drive_writes",
                    format!("{k}; must be a finite number > 0"),
                ));
            }
            self.writes = ((k * logical_blocks as f64).round() as u64).max(1);
            self.drive_writes = None;
        }
        Ok(())
    }

    /// Run the trace's footprint pass (once: clones reuse it) and size the
    /// device from it where asked ([`crate::source::resolve`]).
    pub fn resolve(&mut self) -> Result<()> {
        crate::source::resolve(self.trace.as_mut(), &mut self.device, self.seed)
    }
}
