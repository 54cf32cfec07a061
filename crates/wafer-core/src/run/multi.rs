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
    /// Most volumes whose engines were in memory at once (each is built at
    /// its first request and dropped at its last).
    pub peak_volumes_in_memory: usize,
}

/// A volume a multi-volume run left out, and why.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Skipped {
    /// The volume (its trace and, for `all_devices`, `#device`).
    pub volume: String,
    /// The engine's reason.
    pub why: String,
}

/// A multi-volume run replays every volume's trace whole, once, untimed:
/// a run length, repeat, extension, accuracy scoring or timing given for it
/// would be silently unused, so each is refused by name. `writes` left at
/// [`RunConfig`]'s default or asking for everything
/// ([`super::warnings::ALL_WRITES`] and more) is not a length.
fn refuse_per_run_fields(run: &RunConfig, trace: &TraceConfig) -> Result<()> {
    let whole = |k: &str| {
        Err(Error::config(
            k,
            "a multi-volume run replays every volume's trace whole, once (each its own log); \
             leave it out, or replay one volume at a time",
        ))
    };
    if run.writes < super::warnings::ALL_WRITES && run.writes != RunConfig::default().writes {
        return whole("writes");
    }
    if run.drive_writes.is_some() {
        return whole("drive_writes");
    }
    if trace.repeat > 1 {
        return whole("repeat");
    }
    if trace.extend.is_some() {
        return whole("extend");
    }
    if run.accuracy {
        return whole("accuracy");
    }
    if run.dump_gc.is_some() {
        return Err(Error::config(
            "dump_gc",
            "a multi-volume run does not dump its volumes' victims; replay one volume at a time",
        ));
    }
    if run.timing.is_some() {
        return Err(Error::config(
            "timing",
            "a multi-volume run is untimed (its volumes are logs, not one drive); time one \
             volume at a time (its trace, or the file with --device ID)",
        ));
    }
    Ok(())
}

/// Whether `run` can be every volume's run (the refusals of
/// [`MultiSimulation::new`], said before a file is split into its volumes).
pub fn check_run(run: &RunConfig) -> Result<()> {
    refuse_per_run_fields(run, &run.trace.clone().unwrap_or_default())
}

/// A multi-volume replay in progress.
///
/// Memory is bounded by the volumes in flight, not the volume count: a
/// volume's simulation (its FTL, policy and tables) is built when the
/// merged timeline reaches its first request and dropped, its result kept,
/// when its trace ends. A fleet of volumes recorded one after another
/// holds one engine at a time; volumes that all span the whole recording
/// are all in flight at once (`docs/PERFORMANCE.md` has the measured peak).
pub struct MultiSimulation {
    /// Each volume's run, in list order, and what became of it.
    volumes: Vec<Volume>,
    /// Offset of each volume's clock from the earliest one's [ns].
    offset: Vec<u64>,
    /// Next event of each volume: (Reverse(time + offset), Reverse(volume)),
    /// its first request's time until it is built.
    heap: BinaryHeap<(std::cmp::Reverse<u64>, std::cmp::Reverse<usize>)>,
    elapsed: f64,
    written: u64,
    skipped: Vec<Skipped>,
    /// The first volume's refusal, returned if no volume can run at all.
    first_error: Option<Error>,
    /// Most volumes built at once so far.
    peak_in_flight: usize,
    in_flight: usize,
}

/// One volume of a multi-volume run.
enum Volume {
    /// Not reached yet: its configuration and name.
    Waiting(Box<RunConfig>, String),
    /// Replaying.
    Running(Box<Simulation>),
    /// Its trace ended: its result (the engine is dropped).
    Done(Box<RunResult>),
    /// Could not run (in `skipped`).
    Skipped,
}

impl MultiSimulation {
    /// List every volume and find where its clock starts; nothing is built
    /// until the merged timeline reaches it.
    pub fn new(cfg: MultiConfig) -> Result<Self> {
        let template = cfg.run.trace.clone().unwrap_or_default();
        refuse_per_run_fields(&cfg.run, &template)?;
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
        let mut runs = Vec::with_capacity(volumes.len());
        let mut origin = Vec::with_capacity(volumes.len());
        for (t, name) in volumes {
            let start =
                trace::first_time(&t.path, t.format.as_deref(), &t.selection)?.unwrap_or(u64::MAX);
            let mut run = cfg.run.clone();
            run.workload = name.clone();
            run.writes = u64::MAX;
            run.drive_writes = None;
            run.trace = Some(t);
            runs.push(Volume::Waiting(Box::new(run), name));
            origin.push(start);
        }
        let first = origin.iter().copied().min().unwrap_or(0);
        let offset = origin.iter().map(|&o| o.saturating_sub(first)).collect();
        let mut heap = BinaryHeap::new();
        for (v, &o) in origin.iter().enumerate() {
            heap.push((
                std::cmp::Reverse(o.saturating_sub(first)),
                std::cmp::Reverse(v),
            ));
        }
        Ok(MultiSimulation {
            volumes: runs,
            offset,
            heap,
            elapsed: 0.0,
            written: 0,
            skipped: Vec::new(),
            first_error: None,
            peak_in_flight: 0,
            in_flight: 0,
        })
    }

    /// User blocks written so far, all volumes together.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Most volumes whose engines were in memory at once so far.
    pub fn peak_in_flight(&self) -> usize {
        self.peak_in_flight
    }

    /// Build volume `v` (its first request is due): its simulation, or a
    /// note in `skipped` when its device cannot hold a working log.
    fn start(&mut self, v: usize) -> Result<()> {
        let Volume::Waiting(run, name) = std::mem::replace(&mut self.volumes[v], Volume::Skipped)
        else {
            return Ok(());
        };
        match Simulation::new(*run) {
            Ok(sim) => {
                self.volumes[v] = Volume::Running(Box::new(sim));
                self.in_flight += 1;
                self.peak_in_flight = self.peak_in_flight.max(self.in_flight);
                self.push(v);
            }
            // A volume whose device cannot hold a working log (too small
            // for its segments and reserve) is left out with a note, never
            // the end of the others' run.
            Err(e @ Error::Config { .. }) => {
                self.skipped.push(Skipped {
                    volume: name,
                    why: e.to_string(),
                });
                self.first_error.get_or_insert(e);
            }
            Err(e) => return Err(e),
        }
        Ok(())
    }

    /// Queue volume `v`'s next request, or (its trace ended) keep its
    /// result and drop its engine.
    fn push(&mut self, v: usize) {
        let Volume::Running(sim) = &mut self.volumes[v] else {
            return;
        };
        match sim.next_time() {
            Some(t) => {
                let key = t.saturating_add(self.offset[v]);
                self.heap
                    .push((std::cmp::Reverse(key), std::cmp::Reverse(v)));
            }
            None => {
                let r = sim.result();
                self.volumes[v] = Volume::Done(Box::new(r));
                self.in_flight -= 1;
                release_freed();
            }
        }
    }

    /// Apply requests in time order until `budget` more user blocks are
    /// written or every trace ends. Returns true when the run is done.
    pub fn step(&mut self, budget: u64) -> Result<bool> {
        let t = Instant::now();
        let goal = self.written.saturating_add(budget);
        let r = self.advance(goal);
        self.elapsed += t.elapsed().as_secs_f64();
        r?;
        if self.heap.is_empty() && self.ran() == 0 {
            // Every volume refused: the configuration, not the volumes.
            if let Some(e) = self.first_error.clone() {
                return Err(e);
            }
        }
        Ok(self.heap.is_empty())
    }

    /// Volumes that ran (or run).
    fn ran(&self) -> usize {
        self.volumes
            .iter()
            .filter(|v| matches!(v, Volume::Running(_) | Volume::Done(_)))
            .count()
    }

    fn advance(&mut self, goal: u64) -> Result<()> {
        while self.written < goal {
            let Some((_, std::cmp::Reverse(v))) = self.heap.pop() else {
                return Ok(());
            };
            let sim = match &mut self.volumes[v] {
                Volume::Waiting(..) => {
                    self.start(v)?;
                    continue;
                }
                Volume::Running(sim) => sim,
                Volume::Done(_) | Volume::Skipped => continue,
            };
            let before = sim.written();
            sim.step_request()?;
            self.written += sim.written() - before;
            self.push(v);
        }
        Ok(())
    }

    /// Run to the end.
    pub fn run(&mut self) -> Result<()> {
        self.step(u64::MAX).map(|_| ())
    }

    /// Results so far: every volume that started, in list order.
    pub fn result(&self) -> MultiResult {
        let mut volumes: Vec<RunResult> = self
            .volumes
            .iter()
            .filter_map(|v| match v {
                Volume::Running(sim) => Some(sim.result()),
                Volume::Done(r) => Some((**r).clone()),
                _ => None,
            })
            .collect();
        // The merged replay's time, split evenly (the engines are interleaved).
        let share = self.elapsed / volumes.len().max(1) as f64;
        for r in &mut volumes {
            r.elapsed_seconds = share;
            r.user_writes_per_second = if share > 0.0 {
                r.user_writes as f64 / share
            } else {
                0.0
            };
        }
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
            peak_volumes_in_memory: self.peak_in_flight,
        }
    }
}

/// Give the pages of a finished volume's engine back to the system. glibc
/// keeps freed heap memory, and the next volume's tables rarely fit the
/// holes the last one left between the results kept, so without this a
/// fleet's peak memory grew by ~1.3 MB per finished volume (200 volumes
/// replayed one after another: 284 MB resident, 34 MB of it live).
fn release_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free heap pages to the system.
    #[allow(unsafe_code)]
    unsafe {
        libc::malloc_trim(0);
    }
}
