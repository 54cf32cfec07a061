//! Many volumes in one run, as SepBIT's trace replayer runs a list of
//! per-volume traces (`tracereplay/TraceReplay.java`): each volume is its
//! own log (its own device sized from its trace, its own policy and victim
//! selector instances, its own GC), and their requests are applied in one
//! timeline, merged by timestamp (ties: the earlier volume in the list).
//! The result has every volume's own [`RunResult`] and the overall WAF,
//! (Σ user + Σ GC) / Σ user writes, the replayer's "WA" over all logs.
//!
//! The volumes are a list of traces, or every device of one trace file
//! (`all_devices`: one volume per device id, in order of first appearance).
//! Each trace's clock starts at its first request; the merge shifts each by
//! its first request's time against the earliest volume's, so traces cut
//! from one recording (or devices of one file) keep their interleaving.

use std::collections::BinaryHeap;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::{RunConfig, RunResult, Simulation};
use crate::error::{Error, Result};
use crate::source::TraceConfig;
use crate::trace;
use crate::trace::device_name;

/// A multi-volume run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MultiConfig {
    /// Everything but the trace: device, policy, victim, setup, seed ... The
    /// trace settings (format, selection, sizing) are the defaults of every
    /// volume's trace; `run.trace.path` is the file of `all_devices`.
    pub run: RunConfig,
    /// The volumes' traces (each may set its own format and selection).
    pub volumes: Vec<TraceConfig>,
    /// One volume per device id of `run.trace` instead of `volumes`.
    pub all_devices: bool,
}

/// What a multi-volume run measured.
#[derive(Clone, Debug, Serialize)]
pub struct MultiResult {
    /// (Σ user + Σ GC writes) / Σ user writes over all volumes (with each
    /// volume's WAF conventions: a counted prefill counts here too).
    pub waf: Option<f64>,
    /// User writes over all volumes [blocks].
    pub user_writes: u64,
    /// GC writes over all volumes [blocks].
    pub gc_writes: u64,
    /// Wall time of the merged replay [s].
    pub elapsed_seconds: f64,
    /// Each volume's own result, in list order (its `workload` names the
    /// trace and, for `all_devices`, the device).
    pub volumes: Vec<RunResult>,
    /// Volumes that could not run (a device too small for any working
    /// log, ...): each with why. The others ran; none of these counts.
    pub skipped: Vec<Skipped>,
}

/// A volume a multi-volume run left out, and why.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Skipped {
    /// The volume (its trace and, for `all_devices`, `#device`).
    pub volume: String,
    /// The engine's reason.
    pub why: String,
}

/// A multi-volume replay in progress.
pub struct MultiSimulation {
    sims: Vec<Simulation>,
    /// Offset of each volume's clock from the earliest one's [ns].
    offset: Vec<u64>,
    /// Next request of each volume: (Reverse(time + offset), Reverse(volume)).
    heap: BinaryHeap<(std::cmp::Reverse<u64>, std::cmp::Reverse<usize>)>,
    started: bool,
    elapsed: f64,
    written: u64,
    skipped: Vec<Skipped>,
}

impl MultiSimulation {
    /// Build every volume's simulation.
    pub fn new(cfg: MultiConfig) -> Result<Self> {
        let template = cfg.run.trace.clone().unwrap_or_default();
        let volumes: Vec<(TraceConfig, String)> = if cfg.all_devices {
            if template.path.is_empty() {
                return Err(Error::config(
                    "trace",
                    "all_devices needs the trace file whose devices are the volumes",
                ));
            }
            let ids = trace::devices(
                &template.path,
                template.format.as_deref(),
                &template.selection,
            )?;
            ids.into_iter()
                .map(|d| {
                    let mut t = template.clone();
                    t.selection.device = Some(device_name(d));
                    let name = format!("{}#{}", template.path, device_name(d));
                    (t, name)
                })
                .collect()
        } else {
            cfg.volumes
                .iter()
                .map(|v| (v.clone(), v.path.clone()))
                .collect()
        };
        if volumes.is_empty() {
            return Err(Error::config(
                "volumes",
                "a multi-volume run needs at least one volume (a trace, or a file with devices)",
            ));
        }
        let mut sims = Vec::with_capacity(volumes.len());
        let mut origin = Vec::with_capacity(volumes.len());
        let mut skipped = Vec::new();
        let mut first_error = None;
        for (t, name) in volumes {
            let start =
                trace::first_time(&t.path, t.format.as_deref(), &t.selection)?.unwrap_or(u64::MAX);
            let mut run = cfg.run.clone();
            run.workload = name.clone();
            run.writes = u64::MAX;
            run.drive_writes = None;
            run.trace = Some(t);
            match Simulation::new(run) {
                Ok(sim) => {
                    sims.push(sim);
                    origin.push(start);
                }
                // A volume whose device cannot hold a working log (too
                // small for its segments and reserve) is left out with a
                // note, never the end of the others' run.
                Err(e @ Error::Config { .. }) => {
                    skipped.push(Skipped {
                        volume: name,
                        why: e.to_string(),
                    });
                    first_error.get_or_insert(e);
                }
                Err(e) => return Err(e),
            }
        }
        if sims.is_empty() {
            // Every volume refused: the configuration, not the volumes.
            return Err(first_error.expect("a volume was refused"));
        }
        let first = origin.iter().copied().min().unwrap_or(0);
        let offset = origin.iter().map(|&o| o.saturating_sub(first)).collect();
        Ok(MultiSimulation {
            sims,
            offset,
            heap: BinaryHeap::new(),
            started: false,
            elapsed: 0.0,
            written: 0,
            skipped,
        })
    }

    /// User blocks written so far, all volumes together.
    pub fn written(&self) -> u64 {
        self.written
    }

    fn push(&mut self, v: usize) {
        if let Some(t) = self.sims[v].next_time() {
            let key = t.saturating_add(self.offset[v]);
            self.heap
                .push((std::cmp::Reverse(key), std::cmp::Reverse(v)));
        }
    }

    /// Apply requests in time order until `budget` more user blocks are
    /// written or every trace ends. Returns true when the run is done.
    pub fn step(&mut self, budget: u64) -> Result<bool> {
        let t = Instant::now();
        if !self.started {
            self.started = true;
            for v in 0..self.sims.len() {
                self.push(v);
            }
        }
        let goal = self.written.saturating_add(budget);
        let r = self.advance(goal);
        self.elapsed += t.elapsed().as_secs_f64();
        r.map(|_| self.heap.is_empty())
    }

    fn advance(&mut self, goal: u64) -> Result<()> {
        while self.written < goal {
            let Some((_, std::cmp::Reverse(v))) = self.heap.pop() else {
                return Ok(());
            };
            let before = self.sims[v].written();
            self.sims[v].step_request()?;
            self.written += self.sims[v].written() - before;
            self.push(v);
        }
        Ok(())
    }

    /// Run to the end.
    pub fn run(&mut self) -> Result<()> {
        self.step(u64::MAX).map(|_| ())
    }

    /// The volumes' simulations.
    pub fn volumes(&self) -> &[Simulation] {
        &self.sims
    }

    /// Results so far.
    pub fn result(&self) -> MultiResult {
        let share = self.elapsed / self.sims.len() as f64;
        let volumes: Vec<RunResult> = self
            .sims
            .iter()
            .map(|s| {
                let mut r = s.result();
                // the merged replay's time, split evenly (the engines are interleaved)
                r.elapsed_seconds = share;
                r.user_writes_per_second = if share > 0.0 {
                    r.user_writes as f64 / share
                } else {
                    0.0
                };
                r
            })
            .collect();
        let (mut num, mut den) = (0.0, 0.0);
        for r in &volumes {
            if let Some(w) = r.waf {
                let user = r.user_writes as f64
                    + if r.conventions.waf_counts_prefill {
                        r.prefill_writes as f64
                    } else {
                        0.0
                    };
                num += w * user;
                den += user;
            }
        }
        MultiResult {
            waf: (den > 0.0).then(|| num / den),
            user_writes: volumes.iter().map(|r| r.user_writes).sum(),
            gc_writes: volumes.iter().map(|r| r.gc_writes).sum(),
            elapsed_seconds: self.elapsed,
            volumes,
            skipped: self.skipped.clone(),
        }
    }
}
