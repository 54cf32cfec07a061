//! A replay: device + policy + victim selector + request source, driven in
//! steps so a caller can show progress (and release the GIL) between them.
//! A replay is a pure function of its [`RunConfig`]: same config and seed,
//! same [`RunResult`] (apart from the timing fields).

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::device::{DeviceConfig, Geometry};
use crate::error::{Error, Result};
use crate::ftl::engine::GcSettings;
use crate::ftl::stats::{Counters, HeldSegments, WindowRow, VICTIM_BINS};
use crate::ftl::Engine;
use crate::future::{self, AccuracyReport, Annotation, AnnotationInfo, Future};
use crate::model::train::TrainingStats;
use crate::request::{Op, Request};
use crate::setup::{Conventions, Setup};
use crate::source::{open_source, Source};
pub use crate::source::{resolve, Sizing, TraceConfig, TraceSummary};
use crate::timing::{self, TimingResult, TimingRun};
use crate::victim::CostBenefitConfig;
use crate::warnings::{self, Warning};
use crate::{policy, resources, victim};

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
    /// Count the prefill's writes in `waf` (MiDAS-Simulation's WAF).
    pub waf_counts_prefill: bool,
    /// Timing mode: simulate this SSD's latency, throughput and energy
    /// (see [`crate::timing`]); `None`: WAF mode.
    pub timing: Option<TimingRun>,
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
            waf_counts_prefill: false,
            timing: None,
        }
    }
}

/// Per-group figures at the end of a run.
#[derive(Clone, Debug, Serialize)]
pub struct GroupResult {
    /// Group index.
    pub group: usize,
    /// User writes into the group [blocks].
    pub user_writes: u64,
    /// GC writes into the group [blocks].
    pub gc_writes: u64,
    /// Segments the group holds (open + sealed).
    pub segments: u64,
    /// Valid blocks in the group.
    pub valid_blocks: u64,
    /// Segments GC collected from the group.
    pub victims: u64,
    /// Mean garbage proportion of those victims (1 - valid ratio).
    pub mean_victim_garbage: Option<f64>,
    /// Mean lifespan of those victims: collection minus opening time [user blocks].
    pub mean_lifespan: Option<f64>,
    /// Share of the user writes that went to the group.
    pub user_write_share: Option<f64>,
    /// Share of the valid blocks the group holds at the end.
    pub valid_share: Option<f64>,
    /// (Remaining) lifetimes of the blocks written into the group, when the
    /// run has the annotated future.
    pub lifetime: Option<LifetimeProfile>,
}

/// Quantiles of the lifetimes of the blocks a group received [user blocks],
/// to a power of two (`null`: never dies).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct LifetimeProfile {
    /// 10th percentile.
    pub p10: Option<u64>,
    /// Median.
    pub median: Option<u64>,
    /// 90th percentile.
    pub p90: Option<u64>,
}

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

/// A replay in progress.
pub struct Simulation {
    cfg: RunConfig,
    engine: Engine,
    source: Source,
    memory_estimate: resources::Estimate,
    /// The source has no more requests.
    exhausted: bool,
    /// An error the source met after the requests still in `ahead`.
    source_error: Option<Error>,
    /// Rest of a request cut at the `writes` limit.
    pending: Option<Request>,
    /// Requests drawn from the source but not applied yet, so the engine can
    /// prefetch their table entries (their order is the source's order).
    ahead: VecDeque<Request>,
    written: u64,
    /// Requests taken from the source and applied (a request cut at the
    /// run's end counts once).
    taken: u64,
    elapsed: f64,
    prefill_seconds: f64,
    annotation: Option<AnnotationInfo>,
    /// Timing mode's driver (it replays the requests instead of `advance`).
    timing: Option<Box<timing::Driver>>,
    /// The configuration as given (before a setup or the sizing changed
    /// it): what a checkpoint stores to build the run again.
    origin: RunConfig,
}

/// What a checkpoint holds besides the engine's state: the replay's position.
#[derive(Serialize, Deserialize)]
struct Position {
    written: u64,
    taken: u64,
    pending: Option<Request>,
    elapsed: f64,
    prefill_seconds: f64,
    /// Bytes of the trace file, to refuse a trace that changed.
    trace_bytes: Option<u64>,
}

/// The header and state of the checkpoint at `path`.
fn read_checkpoint(
    path: &std::path::Path,
) -> Result<(RunConfig, Position, crate::ftl::engine::EngineState)> {
    let named = crate::checkpoint::in_file(path);
    let err = |reason: String| {
        named(Error::Checkpoint {
            file: String::new(),
            reason,
        })
    };
    let bytes = std::fs::read(path).map_err(|e| err(format!("cannot read: {e}")))?;
    let magic = crate::checkpoint::MAGIC;
    if bytes.len() < magic.len() + 4 || &bytes[..magic.len()] != magic {
        return Err(err("not a wafer checkpoint".into()));
    }
    let format = u32::from_le_bytes(
        bytes[magic.len()..magic.len() + 4]
            .try_into()
            .expect("4 bytes"),
    );
    if format != crate::checkpoint::FORMAT {
        return Err(err(format!(
            "checkpoint format {format}; this wafer reads format {}",
            crate::checkpoint::FORMAT
        )));
    }
    let body = &bytes[magic.len() + 4..];
    // The version comes first, so a checkpoint of another version is named
    // as such rather than as corrupt.
    let version: String = crate::checkpoint::decode(body).map_err(&named)?;
    if version != env!("CARGO_PKG_VERSION") {
        return Err(err(format!(
            "written by wafer {version}; this is wafer {}: finish it with that version",
            env!("CARGO_PKG_VERSION")
        )));
    }
    let (_, config, position, engine): (String, String, Position, _) =
        crate::checkpoint::decode(body).map_err(&named)?;
    let cfg: RunConfig = serde_json::from_str(&config)
        .map_err(|e| err(format!("its run configuration does not parse: {e}")))?;
    Ok((cfg, position, engine))
}

/// Requests drawn ahead of the one being applied.
const LOOKAHEAD: usize = 16;

impl Simulation {
    /// Validate `cfg`, build everything, and prefill if asked.
    pub fn new(cfg: RunConfig) -> Result<Self> {
        Self::with_annotation(cfg, None)
    }

    /// As [`Simulation::new`], reusing an annotation of the same request
    /// stream (the oracle search replays one stream many times). Without
    /// one, a policy that needs the future or `accuracy` gets it annotated.
    pub fn with_annotation(cfg: RunConfig, ann: Option<Arc<Annotation>>) -> Result<Self> {
        Self::with_builder(cfg, ann, |cfg, geo| {
            policy::build(&cfg.policy, &cfg.params, geo)
        })
    }

    /// As [`Simulation::with_annotation`], with the policy made by `build`
    /// from the validated config and the device's geometry (a policy that
    /// wraps another, e.g. to record its predictions).
    pub fn with_builder(
        cfg: RunConfig,
        ann: Option<Arc<Annotation>>,
        build: impl FnOnce(&RunConfig, &Geometry) -> Result<Box<dyn policy::Placement>>,
    ) -> Result<Self> {
        Self::construct(cfg, ann, build, true)
    }

    /// Build the run; `prefill` false leaves the device erased (a resumed
    /// run's state replaces it anyway).
    fn construct(
        mut cfg: RunConfig,
        ann: Option<Arc<Annotation>>,
        build: impl FnOnce(&RunConfig, &Geometry) -> Result<Box<dyn policy::Placement>>,
        prefill: bool,
    ) -> Result<Self> {
        let origin = cfg.clone();
        cfg.setup.apply(&mut cfg);
        let fit = match cfg.timing.clone() {
            Some(t) => {
                t.validate()?;
                cfg.device.block_size = t.ssd.flash.page_bytes;
                crate::source::resolve(&mut cfg)?;
                Some(timing::fit_device(&mut cfg.device, &t.ssd)?)
            }
            None => None,
        };
        let (source, geo) = open_source(&mut cfg)?;
        if let Some(k) = cfg.drive_writes {
            if !(k.is_finite() && k > 0.0) {
                return Err(Error::config(
                    "drive_writes",
                    format!("{k}; must be a finite number > 0"),
                ));
            }
            cfg.writes = ((k * geo.logical_blocks as f64).round() as u64).max(1);
            cfg.drive_writes = None;
        }
        let memory_estimate = resources::check(&cfg, &geo)?;
        let mut policy = build(&cfg, &geo)?;
        if let Some(limit) = cfg.device.open_streams {
            policy = Box::new(policy::streams::StreamLimit::new(policy, limit));
        }
        let victim = victim::build_with(&cfg.victim, &geo, cfg.seed, cfg.cost_benefit)?;
        if cfg.writes == 0 {
            return Err(Error::config("writes", "must be at least 1 user block"));
        }
        if let Some(t) = &cfg.timing {
            let write_cache = matches!(
                t.ssd.cache.mode,
                timing::config::CacheMode::Write | timing::config::CacheMode::ReadWrite
            ) && t.ssd.cache.capacity_mib > 0.0;
            if write_cache && (cfg.accuracy || policy.needs_future()) {
                return Err(Error::config(
                    "timing.cache.mode",
                    "a write cache reorders the writes the FTL sees, so the annotated future (oracle \
                     policies, accuracy) no longer matches them: use cache mode \"off\" or \"read\"",
                ));
            }
        }
        let (ann, annotation) = match ann {
            Some(a) => (Some(a), None),
            None if cfg.accuracy || policy.needs_future() => {
                let (a, info) = future::annotate(&cfg)?;
                (Some(Arc::new(a)), Some(info))
            }
            None => (None, None),
        };
        if let Some(a) = &ann {
            policy.prepare(&cfg, a)?;
        }
        policy.prepare_stream(&cfg)?;
        let mut engine = Engine::new(&cfg.device, geo, policy, victim)?;
        if let Some(a) = ann {
            engine.attach_future(Future::new(a, cfg.device.prefill, &geo)?);
        }
        let t = Instant::now();
        if cfg.device.prefill && prefill {
            engine.prefill()?;
        }
        let prefill_seconds = t.elapsed().as_secs_f64();
        let timing = match (&cfg.timing, fit) {
            (Some(run), Some(fit)) => {
                let warm = run
                    .precondition_drive_writes
                    .unwrap_or(if cfg.trace.is_some() {
                        0.0
                    } else {
                        cfg.device.warmup_drive_writes
                    });
                let pre = (warm * geo.logical_blocks as f64).round() as u64;
                Some(Box::new(timing::Driver::new(
                    run.clone(),
                    fit,
                    &engine,
                    pre,
                )?))
            }
            _ => None,
        };
        Ok(Simulation {
            cfg,
            engine,
            source,
            memory_estimate,
            exhausted: false,
            source_error: None,
            pending: None,
            ahead: VecDeque::with_capacity(LOOKAHEAD),
            written: 0,
            taken: 0,
            elapsed: 0.0,
            prefill_seconds,
            annotation,
            timing,
            origin,
        })
    }

    /// Whether a checkpoint can be taken now: not while a learned policy's
    /// training runs on its thread (a few requests later it can).
    pub fn checkpoint_ready(&self) -> bool {
        !self.engine.checkpoint_busy()
    }

    /// Whether this run can be checkpointed at all (a timed replay cannot:
    /// its event queue is not state).
    fn checkpointable(&self) -> Result<()> {
        match self.timing {
            Some(_) => Err(crate::checkpoint::unsupported("a timed replay")),
            None => Ok(()),
        }
    }

    /// Write the run's complete state to `path`, atomically (see
    /// [`crate::checkpoint`]). An error if the run cannot be checkpointed
    /// ([`Simulation::checkpointable`]) or not now
    /// ([`Simulation::checkpoint_ready`]).
    pub fn save_checkpoint(&self, path: &std::path::Path) -> Result<()> {
        let named = crate::checkpoint::in_file(path);
        self.checkpointable().map_err(&named)?;
        if !self.checkpoint_ready() {
            return Err(named(Error::Checkpoint {
                file: String::new(),
                reason: "the policy's training is in flight; try again after a few requests".into(),
            }));
        }
        let engine = self.engine.save_state().map_err(&named)?;
        let position = Position {
            written: self.written,
            taken: self.taken,
            pending: self.pending,
            elapsed: self.elapsed,
            prefill_seconds: self.prefill_seconds,
            trace_bytes: self.trace_bytes(),
        };
        let config = serde_json::to_string(&self.origin).expect("a run config serialises");
        let mut out = Vec::new();
        out.extend_from_slice(crate::checkpoint::MAGIC);
        out.extend_from_slice(&crate::checkpoint::FORMAT.to_le_bytes());
        let body =
            crate::checkpoint::encode(&(env!("CARGO_PKG_VERSION"), config, position, engine))
                .map_err(named)?;
        out.extend_from_slice(&body);
        crate::checkpoint::write_atomic(path, &out)
    }

    /// The configuration as given to the run (before a setup or the sizing
    /// changed it): a resumed run's is its checkpoint's.
    pub fn config(&self) -> &RunConfig {
        &self.origin
    }

    /// Go on with the run checkpointed at `path`: the run is built again
    /// from its stored configuration, the requests already applied are read
    /// past, and the saved state replaces the fresh one. Stepping it to the
    /// end gives the result the uninterrupted run gives (apart from the
    /// timing fields).
    pub fn resume(path: &std::path::Path) -> Result<Self> {
        let named = crate::checkpoint::in_file(path);
        let (cfg, position, engine) = read_checkpoint(path)?;
        let mut sim = Self::construct(
            cfg,
            None,
            |cfg, geo| policy::build(&cfg.policy, &cfg.params, geo),
            false,
        )?;
        if position.trace_bytes != sim.trace_bytes() {
            return Err(named(Error::Checkpoint {
                file: String::new(),
                reason: format!(
                    "the trace has {} bytes now, {} when the checkpoint was taken: it changed",
                    sim.trace_bytes().map_or("no".into(), |b| b.to_string()),
                    position.trace_bytes.map_or("no".into(), |b| b.to_string()),
                ),
            }));
        }
        sim.engine.load_state(engine).map_err(&named)?;
        for i in 0..position.taken {
            match sim.source.next() {
                Ok(Some(_)) => {}
                Ok(None) => {
                    return Err(named(Error::Checkpoint {
                        file: String::new(),
                        reason: format!(
                            "the request stream ends after {i} requests; the checkpoint was \
                             taken after {} (the input changed)",
                            position.taken
                        ),
                    }))
                }
                Err(e) => return Err(e),
            }
        }
        sim.written = position.written;
        sim.taken = position.taken;
        sim.pending = position.pending;
        sim.elapsed = position.elapsed;
        sim.prefill_seconds = position.prefill_seconds;
        Ok(sim)
    }

    /// Bytes of the replayed trace file (`None` for a synthetic workload).
    fn trace_bytes(&self) -> Option<u64> {
        let t = self.cfg.trace.as_ref()?;
        std::fs::metadata(&t.path).ok().map(|m| m.len())
    }

    /// User blocks written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// User blocks the run will write.
    pub fn total(&self) -> u64 {
        self.cfg.writes
    }

    /// True once `writes` user blocks are written or the trace is replayed.
    pub fn done(&self) -> bool {
        if let Some(d) = &self.timing {
            return d.finished();
        }
        self.written >= self.cfg.writes
            || (self.exhausted && self.ahead.is_empty() && self.pending.is_none())
    }

    /// Advance by about `budget` user blocks (the last request is applied
    /// whole, so a step may write a few more). Returns true when the run is
    /// done.
    pub fn step(&mut self, budget: u64) -> Result<bool> {
        let t = Instant::now();
        let goal = self.cfg.writes.min(self.written.saturating_add(budget));
        let r = match self.timing.as_mut() {
            Some(d) => d.advance(
                &mut self.engine,
                &mut self.source,
                &mut self.written,
                &mut self.taken,
                goal,
                self.cfg.writes,
            ),
            None => self.advance(goal),
        };
        self.elapsed += t.elapsed().as_secs_f64();
        r.map(|_| self.done())
    }

    /// Top up the lookahead queue. A source error is kept until the requests
    /// read before it are applied, so results stop exactly at the bad input.
    fn fill(&mut self) {
        while self.ahead.len() < LOOKAHEAD && !self.exhausted {
            self.ahead.push_back(Request::default());
            let slot = self.ahead.back_mut().expect("just pushed");
            match self.source.next_into(slot) {
                Ok(true) => {
                    let lba = slot.lba;
                    self.engine.prefetch_write(lba as u32, false);
                }
                Ok(false) => {
                    self.ahead.pop_back();
                    self.exhausted = true;
                }
                Err(e) => {
                    self.ahead.pop_back();
                    self.exhausted = true;
                    self.source_error = Some(e);
                }
            }
        }
        if let Some(r) = self.ahead.get(LOOKAHEAD / 2) {
            self.engine.prefetch_write(r.lba as u32, true);
        }
    }

    fn advance(&mut self, goal: u64) -> Result<()> {
        while self.written < goal {
            let mut req = match self.pending.take() {
                Some(r) => r,
                None => {
                    self.fill();
                    match self.ahead.pop_front() {
                        Some(r) => {
                            self.taken += 1;
                            r
                        }
                        None => match self.source_error.take() {
                            Some(e) => return Err(e),
                            None => return Ok(()),
                        },
                    }
                }
            };
            if req.op == Op::Write {
                // Only the run's end cuts a request: a step boundary does
                // not, so that how a run is stepped (chunks, checkpoints)
                // never changes its result.
                let room = self.cfg.writes - self.written;
                if req.blocks as u64 > room {
                    let rest = Request {
                        lba: req.lba + room,
                        blocks: req.blocks - room as u32,
                        ..req
                    };
                    self.pending = Some(rest);
                    req.blocks = room as u32;
                }
                self.written += req.blocks as u64;
            }
            self.engine.submit(&req)?;
        }
        Ok(())
    }

    /// Arrival time of the next request [ns since the trace's first
    /// request], `None` when the source has nothing left (an error it met is
    /// then returned by [`Simulation::step_request`]). For callers that
    /// interleave several simulations by time ([`crate::multi`]).
    pub fn next_time(&mut self) -> Option<u64> {
        if let Some(r) = &self.pending {
            return Some(r.time_ns);
        }
        self.fill();
        self.ahead.front().map(|r| r.time_ns)
    }

    /// Apply the next request whole (`writes` does not cut it); false when
    /// none is left. The caller keeps the wall time.
    pub fn step_request(&mut self) -> Result<bool> {
        let req = match self.pending.take() {
            Some(r) => r,
            None => {
                self.fill();
                match self.ahead.pop_front() {
                    Some(r) => {
                        self.taken += 1;
                        r
                    }
                    None => {
                        return match self.source_error.take() {
                            Some(e) => Err(e),
                            None => Ok(false),
                        }
                    }
                }
            }
        };
        if req.op == Op::Write {
            self.written += req.blocks as u64;
        }
        self.engine.submit(&req)?;
        Ok(true)
    }

    /// Run to the end.
    pub fn run(&mut self) -> Result<()> {
        self.step(u64::MAX).map(|_| ())
    }

    /// The engine (for checks and inspection).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Results so far (the last, partial window included).
    pub fn result(&self) -> RunResult {
        let e = &self.engine;
        let mut stats = e.stats.clone();
        let closed = stats.windows.len();
        stats.close_window(e.ftl.free_segments());
        if stats.windows.len() > closed {
            stats.set_threshold(e.policy_threshold());
        }
        let c = stats.c;
        let geo = e.ftl.geo;
        let segs = &e.ftl.segs;
        let n = geo.segments as usize;
        let ratio = |a: f64, b: f64| (b > 0.0).then(|| a / b);
        let mut groups: Vec<GroupResult> = (0..stats.group_user.len())
            .map(|g| GroupResult {
                group: g,
                user_writes: stats.group_user[g],
                gc_writes: stats.group_gc[g],
                segments: 0,
                valid_blocks: 0,
                victims: stats.group_victims[g].victims,
                mean_victim_garbage: ratio(
                    stats.group_victims[g].valid_blocks as f64,
                    (stats.group_victims[g].victims * geo.segment_blocks as u64) as f64,
                )
                .map(|v| 1.0 - v),
                mean_lifespan: ratio(
                    stats.group_victims[g].lifespan_sum as f64,
                    stats.group_victims[g].victims as f64,
                ),
                user_write_share: ratio(stats.group_user[g] as f64, c.user_writes as f64),
                valid_share: None,
                lifetime: stats.life_quantile(g, 0.5).map(|_| {
                    let q = |x| stats.life_quantile(g, x).filter(|&v| v != u64::MAX);
                    LifetimeProfile {
                        p10: q(0.1),
                        median: q(0.5),
                        p90: q(0.9),
                    }
                }),
            })
            .collect();
        for s in 0..n {
            if segs.state[s] != crate::ftl::SegState::Free {
                let g = &mut groups[segs.group[s] as usize];
                g.segments += 1;
                g.valid_blocks += segs.valid[s] as u64;
            }
        }
        let valid_total: u64 = groups.iter().map(|g| g.valid_blocks).sum();
        for g in &mut groups {
            g.valid_share = ratio(g.valid_blocks as f64, valid_total as f64);
        }
        let erases = EraseStats {
            min: segs.erase_count.iter().copied().min().unwrap_or(0),
            mean: segs.erase_count.iter().map(|&x| x as f64).sum::<f64>() / n as f64,
            max: segs.erase_count.iter().copied().max().unwrap_or(0),
        };
        let workload_waf = c.waf_since(&Counters::default());
        let pre = e.prefill_counters();
        let waf = if self.cfg.waf_counts_prefill {
            let user = c.user_writes + pre.user_writes;
            (user > 0).then(|| (user + c.gc_writes + pre.gc_writes) as f64 / user as f64)
        } else {
            workload_waf
        };
        let mem = e.memory_bytes() as u64;
        let trace = self.source.trace_summary(self.taken);
        let mut r = RunResult {
            policy: e.policy_name().to_string(),
            victim: e.victim_name().to_string(),
            workload: self.cfg.workload.clone(),
            seed: self.cfg.seed,
            geometry: geo,
            conventions: Conventions::of(&self.cfg),
            waf,
            workload_waf,
            prefill_writes: pre.user_writes,
            prefill_gc_writes: pre.gc_writes,
            steady_waf: stats.steady_waf(),
            extra_writes_per_user_write: waf.map(|w| w - 1.0),
            user_writes: c.user_writes,
            gc_writes: c.gc_writes,
            counters: c,
            drive_writes: c.user_writes as f64 / geo.logical_blocks as f64,
            mean_victim_valid_ratio: (c.victims > 0).then(|| {
                c.victim_valid_blocks as f64 / (c.victims as f64 * geo.segment_blocks as f64)
            }),
            gc: e.gc_settings(),
            victim_valid_histogram: stats.victim_hist,
            held_segments: stats.held,
            erases,
            groups,
            windows: stats.windows,
            elapsed_seconds: self.elapsed,
            prefill_seconds: self.prefill_seconds,
            user_writes_per_second: if self.elapsed > 0.0 {
                c.user_writes as f64 / self.elapsed
            } else {
                0.0
            },
            engine_memory_bytes: mem,
            engine_bytes_per_physical_block: mem as f64 / geo.physical_blocks as f64,
            policy_memory_bytes: e.policy_memory_bytes() as u64,
            policy_state: e.policy_state(),
            trace_format: trace.as_ref().map(|t| t.format.clone()),
            trace,
            memory_estimate: self.memory_estimate,
            warnings: Vec::new(),
            annotation: self.annotation.clone(),
            accuracy: {
                let r = AccuracyReport {
                    user: stats.confusion_user.report(),
                    gc: stats.confusion_gc.report(),
                };
                (r.user.is_some() || r.gc.is_some()).then_some(r)
            },
            training: e.policy_training(),
            timing: self.timing.as_ref().map(|d| d.result()),
        };
        let ended_early = (self.exhausted && self.ahead.is_empty() && self.pending.is_none())
            .then_some(self.cfg.writes);
        r.warnings = warnings::collect(&r, self.cfg.device.warmup_drive_writes, ended_early);
        r
    }
}
