//! A timed run's assembly around the engine (timing mode; [`super::sim`]
//! calls it, WAF mode never does): the device shaped from the preset
//! ([`shape`]), the refusal of a write cache under an annotated future
//! ([`check_future`]), a saved preconditioned drive looked up before the
//! engine is built ([`Prep`]), then the driver built and its drive prepared
//! ([`Timed::new`]) and stepped: the preconditioning's overwrites first
//! ([`Timed::warm_up`]), then the run's requests ([`Timed::advance`]).

use super::config::RunConfig;
use super::precondition;
use super::warnings::{self, Warning};
use crate::device::Geometry;
use crate::engine::{Engine, Placement, ReadState};
use crate::error::{Error, Result};
use crate::request::{Op, Request};
use crate::source::Source;
use crate::timing::{self, Fit, TimingRun};
use crate::trace::Extent;
use crate::workload;

/// Shape a timed run's device from its preset (nothing for an untimed
/// run): the preset's whole drive, or one sized to the run with
/// `fit_device`; the run's own prefill and warm-up give way to the
/// preconditioning. Before the configuration is resolved for good.
pub(super) fn shape(cfg: &mut RunConfig) -> Result<Option<Fit>> {
    let Some(t) = cfg.timing.clone() else {
        return Ok(None);
    };
    t.validate()?;
    // The preconditioning fills the drive (the prefill, when it
    // fills it whole) and is the warm-up.
    cfg.device.prefill = t.precondition() >= 1.0;
    cfg.device.warmup_drive_writes = 0.0;
    if t.fit_device {
        cfg.device.block_size = t.ssd.flash.page_bytes;
        cfg.resolve()?;
        return Ok(Some(timing::fit_device(&mut cfg.device, &t.ssd)?));
    }
    // The whole drive replaces the logical and physical
    // size: one given is refused, never overwritten
    // (`RunSpec::settle` says the same to its callers).
    let default_size = crate::device::DeviceConfig::default().logical_blocks;
    if cfg.device.logical_blocks != default_size || cfg.device.physical_blocks.is_some() {
        let k = if cfg.device.physical_blocks.is_some() {
            "physical_blocks"
        } else {
            "logical_blocks"
        };
        return Err(Error::config(k, super::spec::TIMED_SIZE));
    }
    let fit = timing::whole_device(&mut cfg.device, &t.ssd)?;
    if let Some(tr) = cfg.trace.as_mut() {
        // Placed inside the drive, remapped only if it must.
        tr.capacity_from_trace = false;
    }
    cfg.resolve()?;
    Ok(Some(fit))
}

/// A write cache reorders the writes the FTL sees: refused when the run
/// annotates the future (`policy` reads it, or `accuracy` is asked).
pub(super) fn check_future(cfg: &RunConfig, policy: &dyn Placement) -> Result<()> {
    let Some(t) = &cfg.timing else {
        return Ok(());
    };
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
    Ok(())
}

/// What a timed run's drive starts from, looked up before the engine is
/// built: a preconditioned drive an earlier run saved (it replaces the
/// prefill and the preconditioning, and the fresh engine: its tables are
/// never built beside the loaded ones), or where to save the one this run
/// makes. Nothing for an untimed run or a resumed one.
pub(super) struct Prep {
    /// Where the preconditioned drive is saved (and was looked for).
    store: Option<precondition::Entry>,
    /// The saved engine's state, until [`Prep::take_engine`] takes it.
    engine: Option<ReadState>,
    /// What the saved preconditioning left in DRAM.
    warm: Option<timing::driver::WarmState>,
    /// What the saved preconditioning did in this run.
    report: Option<precondition::CacheReport>,
    /// The run is built afresh (not resumed from a checkpoint).
    fresh: bool,
    /// The run annotates the future.
    future: bool,
}

impl Prep {
    /// Look up the saved preconditioning of `cfg` on `geo` (only when
    /// `fresh`: a resumed run's state replaces the drive anyway).
    pub(super) fn find(cfg: &RunConfig, geo: &Geometry, future: bool, fresh: bool) -> Prep {
        let mut prep = Prep {
            store: None,
            engine: None,
            warm: None,
            report: None,
            fresh,
            future,
        };
        prep.store = match &cfg.timing {
            Some(run) if fresh => {
                precondition::entry(cfg, run, geo, precondition_spec(run, cfg), future)
            }
            _ => None,
        };
        if let Some(st) = &prep.store {
            match st.load() {
                Ok(Some((saved, rep))) => {
                    prep.engine = Some(saved.engine);
                    prep.warm = Some(saved.warm);
                    prep.report = Some(rep);
                }
                Ok(None) => {}
                Err(why) => {
                    prep.report = Some(precondition::CacheReport {
                        path: st.path.display().to_string(),
                        note: Some(format!("rebuilt: the entry found was {why}")),
                        ..Default::default()
                    })
                }
            }
        }
        prep
    }

    /// The saved engine's state, to build the engine from instead of a
    /// fresh one (its configuration passed `Engine::new` when it was saved:
    /// the entry's key is the settled configuration and wafer's version).
    pub(super) fn take_engine(&mut self) -> Option<ReadState> {
        self.engine.take()
    }
}

/// A timed run in progress: its driver, the preconditioning's overwrites
/// still to apply, and what the saved preconditioning did.
pub(super) struct Timed {
    driver: timing::Driver,
    /// The preconditioning's overwrites still to apply.
    warmup: Option<Warmup>,
    /// What the saved preconditioning did in this run.
    pcache: Option<precondition::CacheReport>,
}

impl Timed {
    /// The timed part of `cfg` (timed, its device shaped into `fit`):
    /// the driver over `engine`; a fresh run's drive then restored from
    /// `prep`'s saved preconditioning (timing starts), or its
    /// preconditioning begun ([`precondition`]; the engine's prefill took
    /// `prefill_seconds`).
    pub(super) fn new(
        cfg: &RunConfig,
        fit: Fit,
        engine: &mut Engine,
        geo: &Geometry,
        prefill_seconds: f64,
        prep: Prep,
    ) -> Result<Timed> {
        let run = cfg.timing.as_ref().expect("a timed run");
        let mut d = timing::Driver::new(run.clone(), fit, &engine.ftl.geo)?;
        let mut warmup = None;
        if prep.fresh {
            if let Some(w) = prep.warm {
                let seconds = prep.report.as_ref().map_or(0.0, |r| r.seconds);
                d.restore_precondition(w, seconds)?;
                d.start_timing(engine);
            } else {
                let mut w =
                    precondition(&mut d, engine, run, cfg, geo, prefill_seconds, prep.future)?;
                w.store = prep.store;
                warmup = Some(w);
            }
        }
        Ok(Timed {
            driver: d,
            warmup,
            pcache: prep.report,
        })
    }

    /// The preconditioning's overwrites, `budget` blocks of them (not the
    /// run's time: it is reported apart); at their end the drive is saved
    /// when asked and timing starts. Returns whether timing has started
    /// (timed requests may follow in this step).
    pub(super) fn warm_up(&mut self, engine: &mut Engine, budget: u64) -> Result<bool> {
        let Some(w) = self.warmup.as_mut() else {
            return Ok(true);
        };
        let d = &mut self.driver;
        let goal = w.written.saturating_add(budget);
        let mut feed = Feed {
            src: &mut w.src,
            written: &mut w.written,
            taken: &mut w.taken,
            total: w.total,
            ended: w.total == 0,
        };
        if !d.precondition_step(engine, &mut feed, goal)? {
            return Ok(false);
        }
        d.finish_precondition(w.written);
        if let Some(st) = &w.store {
            let mut rep = st.save(engine, d.warm_state());
            if let Some(before) = self.pcache.take().and_then(|r| r.note) {
                rep.note = Some(match rep.note {
                    Some(n) => format!("{before}; {n}"),
                    None => before,
                });
            }
            self.pcache = Some(rep);
        }
        d.start_timing(engine);
        self.warmup = None;
        Ok(true)
    }

    /// Replay `feed`'s requests until it has handed out `goal` user blocks
    /// (the whole run at `total`, then drain and flush the cache).
    pub(super) fn advance(
        &mut self,
        engine: &mut Engine,
        mut feed: Feed<'_>,
        goal: u64,
        total: u64,
    ) -> Result<()> {
        self.driver.advance(engine, &mut feed, goal, total)
    }

    /// Whether every request has been replayed and has completed.
    pub(super) fn finished(&self) -> bool {
        self.driver.finished()
    }

    /// The preconditioning still in progress: (user blocks of overwrites
    /// applied, of how many); `None` once timing started.
    pub(super) fn preconditioning(&self) -> Option<(u64, u64)> {
        self.warmup.as_ref().map(|w| (w.written, w.total))
    }

    /// The timing result so far.
    pub(super) fn result(&self) -> timing::TimingResult {
        let mut t = self.driver.result();
        t.precondition_cache = self.pcache.clone();
        t
    }

    /// The warnings of a timed run of `run`: a preset imported from MQSim
    /// with settings wafer does not model, a saved preconditioning that
    /// could not be used or saved.
    pub(super) fn warnings(&self, run: &TimingRun) -> impl Iterator<Item = Warning> {
        warnings::mqsim_xml_unsupported(&run.ssd)
            .into_iter()
            .chain(warnings::precondition_cache(self.pcache.as_ref()))
    }
}

/// The request source as a timed replay consumes it: requests with the
/// bytes they cover, counted into the run's position, the write that
/// reaches the run's length cut short and the last.
pub(super) struct Feed<'a> {
    src: &'a mut Source,
    written: &'a mut u64,
    taken: &'a mut u64,
    total: u64,
    ended: bool,
}

impl<'a> Feed<'a> {
    /// The run's requests from `src`, its position in `written` user
    /// blocks of `total` and `taken` requests.
    pub(super) fn new(
        src: &'a mut Source,
        written: &'a mut u64,
        taken: &'a mut u64,
        total: u64,
    ) -> Feed<'a> {
        Feed {
            src,
            written,
            taken,
            total,
            ended: false,
        }
    }
}

impl timing::RequestFeed for Feed<'_> {
    fn next(&mut self, page_bytes: u32) -> Result<Option<(Request, Extent)>> {
        let Some((mut r, mut ext)) = self.src.next_extent(page_bytes)? else {
            return Ok(None);
        };
        *self.taken += 1;
        if r.op == Op::Write {
            let room = self.total - *self.written;
            if r.blocks as u64 >= room {
                if r.blocks as u64 > room {
                    r.blocks = room as u32;
                    let end = r.blocks as u64 * page_bytes as u64;
                    ext.bytes = ext.bytes.min(end - ext.head as u64);
                }
                self.ended = true;
            }
            *self.written += r.blocks as u64;
        }
        Ok(Some((r, ext)))
    }
    fn ended(&self) -> bool {
        self.ended
    }
    fn written(&self) -> u64 {
        *self.written
    }
}

/// Begin preparing a timed run's drive ([`timing::Driver::begin_precondition`]):
/// the engine's prefill wrote it whole when `run.precondition()` >= 1, else
/// that share of it is written in order; then `precondition() - 1`
/// drive-writes of the preconditioning workload (given, else a synthetic
/// run's own, else the preset's), seeded apart from the run's own stream,
/// are applied by [`Timed::warm_up`] in steps (so a caller shows progress
/// and can stop it) before the first timed request.
fn precondition(
    d: &mut timing::Driver,
    engine: &mut Engine,
    run: &TimingRun,
    cfg: &RunConfig,
    geo: &Geometry,
    prefill_seconds: f64,
    future: bool,
) -> Result<Warmup> {
    let logical = geo.logical_blocks as u64;
    let p = run.precondition();
    let spec = precondition_spec(run, cfg);
    let plan = timing::driver::Precondition {
        prefilled: if cfg.device.prefill { logical } else { 0 },
        prefill_seconds,
        fill: ((p.min(1.0) * logical as f64).round() as u64).min(logical),
        overwrites: ((p - 1.0).max(0.0) * logical as f64).round() as u64,
        workload: spec.to_string(),
    };
    if future && (plan.overwrites > 0 || (plan.fill > 0 && plan.fill < logical)) {
        return Err(Error::config(
            "timing.precondition_drive_writes",
            format!(
                "{p}: a policy that reads the future (or --accuracy) replays only the annotated \
                 stream, so preconditioning can fill the drive (1) or leave it fresh (0), no more"
            ),
        ));
    }
    let src = Source::Synthetic(
        workload::parse(spec, logical, geo.block_size, cfg.seed ^ PRECONDITION_SEED)
            .map_err(|e| Error::config("timing.precondition_workload", format!("{spec}: {e}")))?,
    );
    let overwrites = plan.overwrites;
    d.begin_precondition(engine, plan)?;
    Ok(Warmup {
        src,
        written: 0,
        taken: 0,
        total: overwrites,
        store: None,
    })
}

/// The preconditioning's workload: given, else a synthetic run's own (its
/// steady state), else (a trace, never consumed by it) the preset's.
fn precondition_spec<'a>(run: &'a TimingRun, cfg: &'a RunConfig) -> &'a str {
    match (&run.precondition_workload, &cfg.trace) {
        (Some(s), _) => s.as_str(),
        (None, None) => cfg.workload.as_str(),
        (None, Some(_)) => run.ssd.precondition.workload.as_str(),
    }
}

/// A timed run's preconditioning overwrites in progress: their request
/// source, how far it got, and where to save the result.
struct Warmup {
    src: Source,
    written: u64,
    taken: u64,
    total: u64,
    store: Option<precondition::Entry>,
}

/// Salt of the preconditioning workload's seed (apart from the run's own
/// stream, the same for every run of one seed).
const PRECONDITION_SEED: u64 = 0x7072_6563_6f6e_6431;
