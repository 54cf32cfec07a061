//! Many volumes in one run, as SepBIT's trace replayer runs a list of
//! per-volume traces (`tracereplay/TraceReplay.java`): each volume is its
//! own log (its own device sized from its trace, its own policy and victim
//! selector instances, its own GC). The result has every volume's own
//! [`RunResult`] and the overall WAF, (Σ user + Σ GC) / Σ user writes, the
//! replayer's "WA" over all logs.
//!
//! The volumes are a list of traces, or every device of one trace file
//! (`all_devices`: one volume per device id, in order of first appearance).
//! The logs share nothing (no clock, device, cache or random stream), so the
//! volumes are replayed one after another, each whole, in list order: every
//! volume's result is the one a merged, time-ordered replay gives (and the
//! one it gets replayed alone), and memory holds one volume's engine at a
//! time, whatever the volume count or how the volumes interleave in time
//! (issue 47 item 5; the replayer itself interleaves them by timestamp).

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
    /// Wall time of the whole replay [s].
    pub elapsed_seconds: f64,
    /// Each volume's own result, in list order (its `workload` names the
    /// trace and, for `all_devices`, the device).
    pub volumes: Vec<RunResult>,
    /// Volumes that could not run (a device too small for any working
    /// log, ...): each with why. The others ran; none of these counts.
    pub skipped: Vec<Skipped>,
    /// Most volumes whose engines were in memory at once: 1 (each is built
    /// when its turn comes and dropped, its result kept, when its trace
    /// ends), 0 when none ran.
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
/// Memory is one volume's engine plus every finished volume's result
/// (about 30 KB each): a volume's simulation (its FTL, policy and tables)
/// is built when its turn comes and dropped, its result kept, when its
/// trace ends (`docs/PERFORMANCE.md` has the measured peak against the
/// volume count).
pub struct MultiSimulation {
    /// Each volume's run, in list order, and what became of it.
    volumes: Vec<Volume>,
    /// The volume replaying (every one before it is done or skipped).
    current: usize,
    elapsed: f64,
    written: u64,
    skipped: Vec<Skipped>,
    /// The first volume's refusal, returned if no volume can run at all.
    first_error: Option<Error>,
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
    /// List every volume; nothing is built until its turn.
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
        let volumes = volumes
            .into_iter()
            .map(|(t, name)| {
                let mut run = cfg.run.clone();
                run.workload = name.clone();
                run.writes = u64::MAX;
                run.drive_writes = None;
                run.trace = Some(t);
                Volume::Waiting(Box::new(run), name)
            })
            .collect();
        Ok(MultiSimulation {
            volumes,
            current: 0,
            elapsed: 0.0,
            written: 0,
            skipped: Vec::new(),
            first_error: None,
        })
    }

    /// User blocks written so far, all volumes together.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Build volume `v` (its turn came): its simulation, or a note in
    /// `skipped` when its device cannot hold a working log.
    fn start(&mut self, v: usize) -> Result<()> {
        let Volume::Waiting(run, name) = std::mem::replace(&mut self.volumes[v], Volume::Skipped)
        else {
            return Ok(());
        };
        match Simulation::new(*run) {
            Ok(sim) => {
                self.volumes[v] = Volume::Running(Box::new(sim));
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

    /// Replay until `budget` more user blocks are written or every trace
    /// ends. Returns true when the run is done.
    pub fn step(&mut self, budget: u64) -> Result<bool> {
        let t = Instant::now();
        let goal = self.written.saturating_add(budget);
        let r = self.advance(goal);
        self.elapsed += t.elapsed().as_secs_f64();
        r?;
        let done = self.current >= self.volumes.len();
        if done && self.ran() == 0 {
            // Every volume refused: the configuration, not the volumes.
            if let Some(e) = self.first_error.clone() {
                return Err(e);
            }
        }
        Ok(done)
    }

    /// Volumes that ran (or run).
    fn ran(&self) -> usize {
        self.volumes
            .iter()
            .filter(|v| matches!(v, Volume::Running(_) | Volume::Done(_)))
            .count()
    }

    fn advance(&mut self, goal: u64) -> Result<()> {
        while self.written < goal && self.current < self.volumes.len() {
            let v = self.current;
            let sim = match &mut self.volumes[v] {
                Volume::Waiting(..) => {
                    self.start(v)?;
                    continue;
                }
                Volume::Running(sim) => sim,
                Volume::Done(_) | Volume::Skipped => {
                    self.current += 1;
                    continue;
                }
            };
            let before = sim.written();
            let done = sim.step(goal - self.written)?;
            self.written += sim.written() - before;
            if done {
                // Its trace ended: keep the result, free the engine.
                let r = sim.result();
                self.volumes[v] = Volume::Done(Box::new(r));
                release_freed();
                self.current += 1;
            }
        }
        Ok(())
    }

    /// Run to the end.
    pub fn run(&mut self) -> Result<()> {
        self.step(u64::MAX).map(|_| ())
    }

    /// Results so far: every volume that started, in list order (each with
    /// its own wall time).
    pub fn result(&self) -> MultiResult {
        let volumes: Vec<RunResult> = self
            .volumes
            .iter()
            .filter_map(|v| match v {
                Volume::Running(sim) => Some(sim.result()),
                Volume::Done(r) => Some((**r).clone()),
                _ => None,
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
            // one at a time, once any ran
            peak_volumes_in_memory: usize::from(self.ran() > 0),
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
