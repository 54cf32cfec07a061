//! A replay: device + policy + victim selector + request source, driven in
//! steps so a caller can show progress (and release the GIL) between them.
//! A replay is a pure function of its [`RunConfig`]: same config and seed,
//! same [`RunResult`] (apart from the timing fields). A timed run's part
//! (the device shaped from the preset, the timing driver, the
//! preconditioning) is assembled and stepped by `timed.rs`.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use super::checkpoint::{self, Digest, Position, TraceMark};
use super::config::RunConfig;
use super::result::{EraseStats, RunResult};
use super::service::Prepared;
use super::setup::Conventions;
use super::timed::{self, Timed};
use super::{resources, warnings};
use crate::device::Geometry;
use crate::engine::{Engine, Placement, Replayed};
use crate::error::{Error, Result};
use crate::ftl::stats::Counters;
use crate::future::{AccuracyReport, Annotation, AnnotationInfo, Future};
use crate::request::{Op, Request};
use crate::source::Source;
use crate::{policy, victim, workload};

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
    /// Timing mode: its driver (it replays the requests instead of
    /// `advance`) and preconditioning ([`super::timed`]).
    timed: Option<Box<Timed>>,
    /// The configuration as given (before a setup or the sizing changed
    /// it): what a checkpoint stores to build the run again.
    origin: RunConfig,
    /// Digest of the trace's requests applied so far (a trace replay's
    /// checkpoint stores it, so a trace edited since is refused on resume;
    /// `None` for a synthetic workload, a pure function of the config).
    digest: Option<Digest>,
    /// `dump_gc`: the victim dump, until the workload starts (the engine
    /// holds it from then on).
    dump: Option<Box<dyn crate::engine::VictimSink>>,
}

/// Requests of a synthetic workload looked at for a write before a run
/// (whose length counts written blocks) is refused as endless.
const WRITE_PROBE: u32 = 1 << 20;

/// A synthetic workload that writes nothing would never reach the run's
/// length (a hang, e.g. `uniform,reads=1.0`): refused up front when its
/// first [`WRITE_PROBE`] requests hold no write.
fn writes_at_all(cfg: &RunConfig, geo: &Geometry) -> Result<()> {
    let mut w = workload::parse(
        &cfg.workload,
        geo.logical_blocks as u64,
        geo.block_size,
        cfg.seed,
    )?;
    if (0..WRITE_PROBE).any(|_| w.next_request().op == Op::Write) {
        return Ok(());
    }
    Err(Error::config(
        "workload",
        format!(
            "'{}' wrote nothing in its first {WRITE_PROBE} requests: a run's length counts written \
             blocks (--writes / --drive-writes), so it would never end; give it writes (reads < 1)",
            cfg.workload
        ),
    ))
}

/// Requests between two looks at a stop asked for ([`crate::interrupt`]).
const INTERRUPT_EVERY: u64 = 1 << 14;

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
        build: impl FnOnce(&RunConfig, &Geometry) -> Result<Box<dyn Placement>>,
    ) -> Result<Self> {
        Self::construct(cfg, ann, build, true)
    }

    /// Build the run; `prefill` false leaves the device erased (a resumed
    /// run's state replaces it anyway).
    fn construct(
        mut cfg: RunConfig,
        ann: Option<Arc<Annotation>>,
        build: impl FnOnce(&RunConfig, &Geometry) -> Result<Box<dyn Placement>>,
        prefill: bool,
    ) -> Result<Self> {
        let origin = cfg.clone();
        if cfg.setup == super::Setup::Mqsim && cfg.timing.is_none() {
            return Err(Error::config(
                "setup",
                "mqsim: MQSim's conventions are a timed SSD's; give --timing PRESET|FILE",
            ));
        }
        cfg.setup.apply(&mut cfg);
        let fit = timed::shape(&mut cfg)?;
        cfg.resolve()?;
        let (source, geo) = cfg.stream().open()?;
        cfg.settle_length(geo.logical_blocks as u64)?;
        if cfg.trace.is_none() {
            writes_at_all(&cfg, &geo)?;
        }
        let memory_estimate = resources::check(&cfg, &geo)?;
        // Before the annotation, a policy's preparation and the prefill: a
        // file that cannot be written is said at once.
        let dump =
            match &cfg.dump_gc {
                Some(p) => Some(Box::new(super::gc_dump::GcDump::create(p)?)
                    as Box<dyn crate::engine::VictimSink>),
                None => None,
            };
        let mut policy = build(&cfg, &geo)?;
        if let Some(limit) = cfg.device.open_streams {
            policy = Box::new(policy::streams::StreamLimit::new(policy, limit));
        }
        let victim = victim::build_run(
            &cfg.victim,
            &geo,
            cfg.seed,
            cfg.cost_benefit,
            cfg.victim_ties,
            cfg.replayer_classes(),
        )?;
        if cfg.writes == 0 {
            return Err(Error::config("writes", "must be at least 1 user block"));
        }
        timed::check_future(&cfg, &*policy)?;
        let (ann, annotation) = match ann {
            Some(a) => (Some(a), None),
            None if cfg.accuracy || policy.needs_future() => {
                let (a, info) = cfg.annotate()?;
                (Some(Arc::new(a)), Some(info))
            }
            None => (None, None),
        };
        policy.prepare(&Prepared::new(&cfg, geo, ann.clone(), nested_replay))?;
        let future = ann.is_some();
        // A timed run's preconditioned drive saved by an earlier run
        // replaces the prefill and the preconditioning (and the fresh
        // engine: its tables are never built beside the loaded ones).
        let mut prep = timed::Prep::find(&cfg, &geo, future, prefill);
        let (mut engine, restored) = match prep.take_engine() {
            Some(state) => (Engine::from_read(state, policy, victim)?, true),
            None => (Engine::new(&cfg.device, geo, policy, victim)?, false),
        };
        if let Some(a) = ann {
            engine.attach_future(Future::new(a, cfg.device.prefill, &geo)?);
        }
        let t = Instant::now();
        if cfg.device.prefill && prefill && !restored {
            engine.prefill()?;
        }
        let prefill_seconds = t.elapsed().as_secs_f64();
        let timed = match fit {
            Some(fit) => Some(Box::new(Timed::new(
                &cfg,
                fit,
                &mut engine,
                &geo,
                prefill_seconds,
                prep,
            )?)),
            None => None,
        };
        let digest = cfg.trace.as_ref().map(|_| Digest::default());
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
            timed,
            origin,
            digest,
            dump,
        })
    }

    /// A timed run's preconditioning still in progress: (user blocks of
    /// overwrites applied, of how many); `None` once timing started (or
    /// without timing).
    pub fn preconditioning(&self) -> Option<(u64, u64)> {
        self.timed.as_ref().and_then(|t| t.preconditioning())
    }

    /// Whether a checkpoint can be taken now: not while a learned policy's
    /// training runs on its thread (a few requests later it can).
    pub fn checkpoint_ready(&self) -> bool {
        !self.engine.checkpoint_busy()
    }

    /// Whether this run can be checkpointed at all (a timed replay cannot:
    /// its event queue is not state).
    fn checkpointable(&self) -> Result<()> {
        if self.timed.is_some() {
            return Err(crate::codec::unsupported("a timed replay"));
        }
        if self.cfg.dump_gc.is_some() {
            return Err(crate::codec::unsupported(
                "a run dumping its victims (dump_gc)",
            ));
        }
        Ok(())
    }

    /// Write the run's complete state to `path`, atomically (see
    /// [`crate::checkpoint`]). An error if the run cannot be checkpointed
    /// ([`Simulation::checkpointable`]) or not now
    /// ([`Simulation::checkpoint_ready`]).
    pub fn save_checkpoint(&self, path: &std::path::Path) -> Result<()> {
        let named = checkpoint::in_file(path);
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
            binding: self.binding().to_string(),
            trace: self.trace_mark(self.digest.unwrap_or_default()),
        };
        checkpoint::write(path, &self.origin, &position, &engine)
    }

    /// The configuration as given to the run (before a setup or the sizing
    /// changed it): a resumed run's is its checkpoint's.
    pub fn config(&self) -> &RunConfig {
        &self.origin
    }

    /// Go on with the run checkpointed at `path`: the run is built again
    /// from its stored configuration, checked against what the state was
    /// saved under (the settings of [`Simulation::binding`], the trace's
    /// size, format and the digest of the requests applied), the requests
    /// already applied are read past, and the saved state replaces the
    /// fresh one. Stepping it to the end gives the result the uninterrupted
    /// run gives (apart from the timing fields). Anything that does not
    /// match is an [`Error::Checkpoint`] naming the file: resuming anyway
    /// would give a result of no run at all.
    pub fn resume(path: &std::path::Path) -> Result<Self> {
        let named = checkpoint::in_file(path);
        let refuse = |reason: String| {
            named(Error::Checkpoint {
                file: String::new(),
                reason,
            })
        };
        let (cfg, position, engine) = checkpoint::read(path)?;
        let mut sim = Self::construct(
            cfg,
            None,
            |cfg, geo| policy::build(&cfg.policy, &cfg.params, geo),
            false,
        )?;
        let now = sim.trace_mark(Digest::default());
        match (&position.trace, &now) {
            (Some(then), Some(now)) if then.bytes != now.bytes => {
                return Err(refuse(format!(
                    "trace {} has {} bytes now, {} when the checkpoint was taken: it changed \
                     since; replay it from the start",
                    now.path, now.bytes, then.bytes
                )))
            }
            (Some(then), Some(now)) if then.format != now.format => {
                return Err(refuse(format!(
                    "trace {} reads as format {} now, {} when the checkpoint was taken: it \
                     changed since; replay it from the start",
                    now.path, now.format, then.format
                )))
            }
            (Some(_), Some(_)) | (None, None) => {}
            _ => {
                return Err(refuse(
                    "its state and its configuration disagree on whether a trace is replayed"
                        .into(),
                ))
            }
        }
        let then: serde_json::Value = serde_json::from_str(&position.binding)
            .map_err(|e| refuse(format!("corrupt: its settings do not parse ({e})")))?;
        let mut diff = checkpoint::differences(&then, &sim.binding());
        if !diff.is_empty() {
            diff.truncate(4);
            // A trace sizes the device from its footprint: name it first.
            let what = match &now {
                Some(t) => format!("trace {} changed since (or wafer did)", t.path),
                None => "wafer changed since, or the file was not written by it".into(),
            };
            return Err(refuse(format!(
                "its state was saved under settings its configuration does not give now \
                 ({}): {what}; start the run over",
                diff.join("; ")
            )));
        }
        if position.written > sim.cfg.writes {
            return Err(refuse(format!(
                "corrupt: {} user blocks written of a run of {}",
                position.written, sim.cfg.writes
            )));
        }
        sim.engine.load_state(engine).map_err(&named)?;
        let mut digest = Digest::default();
        for i in 0..position.taken {
            match sim.source.next() {
                Ok(Some(r)) => digest.add(&r),
                Ok(None) => {
                    return Err(refuse(format!(
                        "the request stream ends after {i} requests; the checkpoint was taken \
                         after {} (the input changed)",
                        position.taken
                    )))
                }
                Err(e) => return Err(e),
            }
        }
        if let (Some(then), Some(now)) = (&position.trace, &now) {
            if then.digest != digest {
                return Err(refuse(format!(
                    "trace {} changed since the checkpoint was taken: its first {} requests \
                     are not those replayed before it (digest {:016x}, was {:016x}); replay it \
                     from the start",
                    now.path, position.taken, digest.0, then.digest.0
                )));
            }
            sim.digest = Some(digest);
        }
        sim.written = position.written;
        sim.taken = position.taken;
        sim.pending = position.pending;
        sim.elapsed = position.elapsed;
        sim.prefill_seconds = position.prefill_seconds;
        Ok(sim)
    }

    /// What the engine's state depends on besides the request stream: the
    /// configuration as resolved (setup applied, device sized), with the
    /// names the engine's policy and victim selector report and the
    /// device's geometry. A checkpoint stores it; a resumed run must give
    /// the same, so a state is never loaded under another policy, victim
    /// selector, seed, device, setup or timing options than its own.
    fn binding(&self) -> serde_json::Value {
        let c = &self.cfg;
        serde_json::json!({
            "policy": c.policy,
            "params": c.params,
            "engine_policy": self.engine.policy_name(),
            "victim": c.victim,
            "engine_victim": self.engine.victim_name(),
            "seed": c.seed,
            "device": c.device,
            "geometry": self.engine.ftl.geo,
            "setup": c.setup,
            "conventions": Conventions::of(c),
            "cost_benefit": c.cost_benefit,
            "victim_ties": c.victim_ties,
            "waf_counts_prefill": c.waf_counts_prefill,
            "timing": c.timing,
            "workload": c.workload,
            "trace": c.trace,
            "writes": c.writes,
            "accuracy": c.accuracy,
        })
    }

    /// The replayed trace's identity with `digest` (`None` for a synthetic
    /// workload). A trace whose size cannot be read counts as empty (its
    /// reader has reported why by then).
    fn trace_mark(&self, digest: Digest) -> Option<TraceMark> {
        let t = self.cfg.trace.as_ref()?;
        Some(TraceMark {
            path: t.path.clone(),
            bytes: std::fs::metadata(&t.path).map_or(0, |m| m.len()),
            format: self.source.trace_summary(0).map(|s| s.format)?,
            digest,
        })
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
        if let Some(t) = &self.timed {
            return t.finished();
        }
        self.written >= self.cfg.writes
            || (self.exhausted && self.ahead.is_empty() && self.pending.is_none())
    }

    /// Advance by about `budget` user blocks (the last request is applied
    /// whole, so a step may write a few more). Returns true when the run is
    /// done.
    pub fn step(&mut self, budget: u64) -> Result<bool> {
        if let Some(t) = self.timed.as_mut() {
            // The preconditioning first; timed requests follow in the step
            // that ends it.
            if !t.warm_up(&mut self.engine, budget)? {
                return Ok(false);
            }
        }
        if let Some(d) = self.dump.take() {
            // The workload starts: victims are reported from here on.
            self.engine.dump_victims(Some(d));
        }
        let t = Instant::now();
        let goal = self.cfg.writes.min(self.written.saturating_add(budget));
        let r = match self.timed.as_mut() {
            Some(t) => {
                let feed = timed::Feed::new(
                    &mut self.source,
                    &mut self.written,
                    &mut self.taken,
                    self.cfg.writes,
                );
                t.advance(&mut self.engine, feed, goal, self.cfg.writes)
            }
            None => self.advance(goal),
        };
        self.elapsed += t.elapsed().as_secs_f64();
        r?;
        let done = self.done();
        if done {
            if let Some(mut d) = self.engine.dump_victims(None) {
                d.finish().map_err(|e| Error::config("dump_gc", e))?;
            }
        }
        Ok(done)
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

    /// The next request to apply: the rest of one cut at the run's end,
    /// else the next of the lookahead (counted, and digested for a trace);
    /// `None` once the source is over, or its error after the requests read
    /// before it.
    fn next_request(&mut self) -> Result<Option<Request>> {
        if let Some(r) = self.pending.take() {
            return Ok(Some(r));
        }
        self.fill();
        match self.ahead.pop_front() {
            Some(r) => {
                self.taken += 1;
                if let Some(d) = self.digest.as_mut() {
                    d.add(&r);
                }
                Ok(Some(r))
            }
            None => self.source_error.take().map_or(Ok(None), Err),
        }
    }

    fn advance(&mut self, goal: u64) -> Result<()> {
        while self.written < goal {
            if self.taken & (INTERRUPT_EVERY - 1) == 0 {
                // Between two requests: the run stays whole.
                crate::interrupt::check()?;
            }
            let Some(mut req) = self.next_request()? else {
                return Ok(());
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
    /// interleave several simulations by time ([`super::multi`]).
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
        let Some(req) = self.next_request()? else {
            return Ok(false);
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
        stats.close_window(e.ftl.free_segments(), &e.ftl.segs);
        if stats.windows.len() > closed {
            stats.set_threshold(e.policy_threshold());
        }
        let c = stats.c;
        let geo = e.ftl.geo;
        let segs = &e.ftl.segs;
        let n = geo.segments as usize;
        let groups = stats.group_results(&e.ftl);
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
            group_windows: stats.group_windows,
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
            timing: self.timed.as_ref().map(|t| t.result()),
        };
        let ended_early = (self.exhausted && self.ahead.is_empty() && self.pending.is_none())
            .then_some(self.cfg.writes);
        r.warnings = warnings::collect(&r, self.cfg.device.warmup_drive_writes, ended_early);
        if let (Some(t), Some(run)) = (&self.timed, &self.cfg.timing) {
            r.warnings.extend(t.warnings(run));
        }
        r
    }
}

/// A nested replay for a policy's preparation ([`Prepared`]): run `cfg`
/// whole with its policy passed through `wrap`, and what the policy saw.
pub(crate) fn nested_replay(
    cfg: RunConfig,
    ann: Option<Arc<Annotation>>,
    wrap: &mut dyn FnMut(Box<dyn Placement>) -> Box<dyn Placement>,
) -> Result<Replayed> {
    let mut sim = Simulation::with_builder(cfg, ann, |cfg, geo| {
        Ok(wrap(policy::build(&cfg.policy, &cfg.params, geo)?))
    })?;
    sim.run()?;
    let r = sim.result();
    Ok(Replayed {
        waf: r.waf,
        steady_waf: r.steady_waf,
        groups: r.groups,
        policy_state: r.policy_state,
        training: r.training,
    })
}
