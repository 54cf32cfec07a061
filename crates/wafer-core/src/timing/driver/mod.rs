//! The driver of a timed replay: it runs the one event queue and joins the
//! parts (see the module doc of [`super`]): host requests come in through
//! the [`Intake`], reach the DRAM cache ([`WriteCache`]) and the FTL
//! ([`FtlPort`]); the flash operations the FTL logs become timed operations
//! on the flash model ([`Flash`]), each after the translation-page read the
//! mapping table ([`MappingTable`]) makes it wait for; completions go back
//! to the host; statistics are kept per window ([`report`] gathers them).
//! The parts keep their state private: the driver calls what they do
//! (`Intake::page_done`, `WriteCache::wait`, [`Flash::take_done`], ...)
//! and reads what they counted (`counts()`, `stats()`).
//!
//! Operations carry their owner in their `owner` word: a request slot
//! (`OWN_REQ`), the cache's flush (`OWN_FLUSH`), a translation-page read
//! that accesses wait for (`OWN_MAP`), or none.

mod report;

use std::time::Instant;

use super::cache::STAMP_LIMIT;
use super::config::SsdConfig;
use super::events::{Event, EventQueue};
use super::flash::{Class, Flash, Kind, Op, NONE};
use super::hist::Histogram;
use super::host::{Dram, Host};
use super::intake::Intake;
use super::layout::Layout;
use super::mapping::{self, Access, MappingTable};
use super::port::{FtlPort, RequestFeed};
use super::result::TimingWindow;
use super::write_cache::{Place, WriteCache};
use super::{Fit, TimingRun};
use crate::device::Geometry;
use crate::error::{Error, Result};
use crate::ftl::FlashOp;
use crate::request::{Op as ReqOp, Request, MAX_BATCH};
use crate::trace::Extent;

/// What ends a run of events in the driver's inner loop.
enum Next {
    /// An arrival comes first, at this time.
    Arrival(u64),
    /// A completion may have moved the next arrival: look again.
    Look,
    /// Nothing is left to happen.
    End,
}

const OWN_KIND: u32 = 3 << 30;
const OWN_REQ: u32 = 1 << 30;
const OWN_FLUSH: u32 = 2 << 30;
const OWN_MAP: u32 = mapping::OWNER;
const OWN_ID: u32 = (1 << 30) - 1;

/// Which writer's flash operations the engine just logged.
enum Writer {
    /// A write-through request: its pages' programs complete it.
    Request {
        id: u32,
        lba: u32,
        rmw: [(u32, u32); 2],
    },
    /// One page the cache flushed.
    Flush { rmw: u32 },
    /// Background work (idle time).
    Background,
}

/// How to prepare the drive before timing starts ([`Driver::precondition`]).
#[derive(Clone, Debug, Default)]
pub struct Precondition {
    /// Pages `0..prefilled` the engine's prefill wrote already.
    pub prefilled: u64,
    /// Its wall time [s].
    pub prefill_seconds: f64,
    /// Pages `0..fill` written in order (those not prefilled).
    pub fill: u64,
    /// User blocks of overwrites after the fill.
    pub overwrites: u64,
    /// The overwrites' workload spec (reported).
    pub workload: String,
}

/// Requests between two looks at a stop asked for ([`crate::interrupt`]).
const INTERRUPT_EVERY: u64 = 1 << 14;

/// Requests of the preconditioning drawn ahead of the one applied.
const WARM_AHEAD: usize = 16;

/// A preconditioning in progress: its plan's overwrites, the stamp
/// clocks of the mapping table (accesses) and of the cache (writes), and
/// what it did so far.
struct Warming {
    overwrites: u64,
    map_clock: u32,
    cache_clock: u32,
    /// Pages the fill wrote.
    writes: u64,
    seconds: f64,
    workload: String,
}

/// What a preconditioning leaves in DRAM ([`Driver::warm_state`]): the
/// cached pages and mapping entries, least recent first, and what it did.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct WarmState {
    cache: Vec<u32>,
    map: mapping::WarmEntries,
    writes: u64,
    workload: String,
}

/// A [`WarmState`] as the driver holds it ([`Driver::warm_state`]):
/// serializes to the same bytes.
#[derive(serde::Serialize)]
pub struct WarmStateOf<'a> {
    cache: Vec<u32>,
    map: mapping::WarmEntriesOf<'a>,
    writes: u64,
    workload: &'a str,
}

/// What the preconditioning did.
#[derive(Clone, Debug, Default)]
struct Preconditioned {
    writes: u64,
    seconds: f64,
    workload: String,
}

/// The end's flush of the dirty cache.
#[derive(Clone, Copy, Debug)]
struct FlushMark {
    /// When it started (the last request had completed) [ns].
    start: u64,
    pages: u64,
    /// Flash programs before it: all, and of user data.
    programs_before: u64,
    user_before: u64,
}

/// What the driver counts itself (the parts count their own).
#[derive(Default)]
struct Counts {
    reads: u64,
    writes: u64,
    trims: u64,
    read_bytes: u64,
    write_bytes: u64,
    user_programs: u64,
    gc_programs: u64,
    copybacks: u64,
    rmw_reads: u64,
    host_pages_written: u64,
    idle_periods: u64,
    violations: u64,
    unmapped_reads: u64,
}

#[derive(Default, Clone, Copy)]
struct WindowMark {
    time: u64,
    requests: u64,
    bytes: u64,
    user_programs: u64,
    programs: u64,
}

/// A timed replay in progress (see the module doc).
pub struct Driver {
    run: TimingRun,
    fit: Fit,
    q: EventQueue,
    flash: Flash,
    host: Host,
    dram: Dram,
    now: u64,
    intake: Intake,
    cache: WriteCache,
    map: MappingTable,
    // geometry
    logical: u64,
    page_bytes: u32,
    sector_bytes: u32,
    full_mask: u64,
    hard_segments: u32,
    // statistics
    c: Counts,
    read_dev: Histogram,
    read_e2e: Histogram,
    write_dev: Histogram,
    write_e2e: Histogram,
    win_read: Histogram,
    win_write: Histogram,
    windows: Vec<TimingWindow>,
    mark: WindowMark,
    engine_windows: usize,
    pre: Preconditioned,
    warming: Option<Warming>,
    /// Requests taken from the feed (Ctrl-C is looked at every
    /// [`INTERRUPT_EVERY`] of them).
    pulled: u64,
    started: bool,
    /// The end's flush, once it is issued.
    flush: Option<FlushMark>,
    wall: f64,
    log: Vec<FlashOp>,
}

impl Driver {
    /// A driver for a device of shape `geo` (shaped by
    /// [`super::whole_device`] or [`super::fit_device`] into `fit`); timing
    /// starts after [`Driver::precondition`] (or at the first request).
    pub fn new(run: TimingRun, fit: Fit, geo: &Geometry) -> Result<Driver> {
        run.validate()?;
        let ssd: &SsdConfig = &run.ssd;
        let logical = geo.logical_blocks as usize;
        let page_bytes = ssd.flash.page_bytes;
        let segments = geo.segments;
        let layout = Layout::new(ssd, fit.segment_pages, segments)?;
        let planes = layout.planes;
        let map = MappingTable::new(ssd, logical, geo.physical_blocks, segments, planes);
        let flash = Flash::new(ssd, layout, segments + map.rows());
        let spp = (page_bytes / 512).max(1);
        let sector_units = spp.min(32);
        Ok(Driver {
            fit,
            q: EventQueue::new(),
            host: Host::new(ssd),
            dram: Dram::new(ssd),
            now: 0,
            intake: Intake::new(&run, ssd),
            cache: WriteCache::new(ssd, logical, page_bytes, planes),
            map,
            logical: logical as u64,
            page_bytes,
            sector_bytes: page_bytes / sector_units,
            full_mask: (1u64 << sector_units) - 1,
            hard_segments: ((ssd.gc.hard_threshold * segments as f64).ceil() as u32).max(1),
            c: Counts::default(),
            read_dev: Histogram::new(),
            read_e2e: Histogram::new(),
            write_dev: Histogram::new(),
            write_e2e: Histogram::new(),
            win_read: Histogram::new(),
            win_write: Histogram::new(),
            windows: Vec::new(),
            mark: WindowMark::default(),
            engine_windows: 0,
            pre: Preconditioned::default(),
            warming: None,
            pulled: 0,
            started: false,
            flush: None,
            wall: 0.0,
            log: Vec::with_capacity(1024),
            flash,
            run,
        })
    }

    // ---------------------------------------------------------------- intake

    /// Advance: replay requests until `feed` has handed out `goal` user
    /// blocks (the whole run at `total`, then drain and flush the cache).
    pub fn advance(
        &mut self,
        ftl: &mut impl FtlPort,
        feed: &mut dyn RequestFeed,
        goal: u64,
        total: u64,
    ) -> Result<()> {
        if !self.started {
            self.start(ftl);
        }
        let t0 = Instant::now();
        let mut r = self.run_events(ftl, feed, goal, total);
        if r.is_ok() && self.run.flush && self.flush.is_none() && self.drained() {
            r = self.flush_cache(ftl);
        }
        self.wall += t0.elapsed().as_secs_f64();
        r
    }

    /// The end: every dirty cached page goes to flash (timed from the last
    /// completion), and the events run until the last program is done.
    fn flush_cache(&mut self, ftl: &mut impl FtlPort) -> Result<()> {
        let pages = self.cache.dirty();
        self.flush = Some(FlushMark {
            start: self.now,
            pages: pages.len() as u64,
            programs_before: self.programs(),
            user_before: self.user_programs(),
        });
        for (lpn, mask) in pages {
            self.cache.flush_page(lpn);
            self.flush(ftl, lpn, mask)?;
        }
        while !self.q.is_empty() {
            self.next_event(ftl)?;
        }
        Ok(())
    }

    /// Run the next event (the queue is not empty); returns it.
    #[inline(always)]
    fn next_event(&mut self, ftl: &mut impl FtlPort) -> Result<Event> {
        let (t, p) = self.q.pop().expect("an event");
        self.now = t;
        let ev = Event::of(p);
        self.dispatch(ftl, ev)?;
        // Finished operations someone waits for; else the urgent mode again
        // only if what it reads changed (free segments change only in
        // `apply_log`, which updates it).
        if self.flash.has_done() {
            self.process_done(ftl)?;
        } else if self.flash.urgent_stale() {
            self.update_urgent(ftl);
        }
        if let Event::DieOutChannel(id) = ev {
            // The channel's event it carries (it finishes nothing).
            self.flash.hand_over(id, self.now, &mut self.q);
        }
        Ok(ev)
    }

    /// Every request replayed and completed, nothing left to happen.
    fn drained(&self) -> bool {
        self.intake.drained() && self.q.is_empty()
    }

    /// Whether every request has been replayed and has completed (and the
    /// cache is flushed, when asked).
    pub fn finished(&self) -> bool {
        self.started && self.drained() && (!self.run.flush || self.flush.is_some())
    }

    /// Begin preparing the drive before timing starts, in WAF mode (no
    /// timing): pages `0..fill` written in order (after the `prefilled`
    /// pages the engine's prefill wrote); [`Driver::precondition_step`]
    /// then applies the overwrites and [`Driver::end_precondition`] starts
    /// timing. The mapping table and the cache end up holding the last of
    /// these accesses, clean: what the preconditioning wrote is on flash,
    /// so the end's flush holds only the timed requests' writes.
    pub fn begin_precondition(&mut self, ftl: &mut impl FtlPort, plan: Precondition) -> Result<()> {
        let t0 = Instant::now();
        let mut lba = plan.prefilled;
        while lba < plan.fill {
            let blocks = (plan.fill - lba).min(MAX_BATCH as u64) as u32;
            ftl.submit(&Request {
                time_ns: 0,
                lba,
                blocks,
                op: ReqOp::Write,
                tenant: 0,
            })?;
            lba += blocks as u64;
        }
        let filled = plan.prefilled.max(plan.fill);
        self.cache.begin_stamps();
        self.map.begin_stamps();
        // The table holds the fill's last entries (clean: on flash).
        let mut clock = 0u32;
        for lpn in filled.saturating_sub(self.map.capacity())..filled {
            self.map.stamp(lpn as u32, clock);
            clock += 1;
        }
        self.warming = Some(Warming {
            overwrites: plan.overwrites,
            map_clock: clock,
            cache_clock: 0,
            writes: filled,
            seconds: plan.prefill_seconds + t0.elapsed().as_secs_f64(),
            workload: plan.workload,
        });
        Ok(())
    }

    /// The preconditioning's overwrites from `feed`, until it has handed
    /// out `goal` user blocks (or all of the plan's). Returns whether they
    /// are all applied.
    pub fn precondition_step(
        &mut self,
        ftl: &mut impl FtlPort,
        feed: &mut dyn RequestFeed,
        goal: u64,
    ) -> Result<bool> {
        crate::interrupt::check()?;
        let t0 = Instant::now();
        let mut w = self.warming.take().expect("a preconditioning in progress");
        let goal = goal.min(w.overwrites);
        let mut r = Ok(());
        // Requests are drawn WARM_AHEAD ahead of the one applied, their
        // table entries prefetched (the FTL's and the stamps' on drawing,
        // what the FTL's entry points to half-way): each access is a random
        // load in tables of the whole drive, which would otherwise wait for
        // memory one after the other.
        let mut ring = [(Request::default(), Extent::default()); WARM_AHEAD];
        let (mut head, mut len) = (0usize, 0usize);
        let mut more = true;
        loop {
            while more && len < WARM_AHEAD && feed.written() < goal {
                match feed.next(self.page_bytes) {
                    Ok(Some((req, ext))) => {
                        ftl.prefetch(req.lba as u32, false);
                        self.cache.prefetch_stamp(req.lba as u32);
                        self.map.prefetch(req.lba as u32);
                        ring[(head + len) % WARM_AHEAD] = (req, ext);
                        len += 1;
                    }
                    Ok(None) => more = false,
                    Err(e) => {
                        r = Err(e);
                        more = false;
                    }
                }
            }
            if len == 0 {
                break;
            }
            if len > WARM_AHEAD / 2 {
                let (mid, _) = ring[(head + WARM_AHEAD / 2) % WARM_AHEAD];
                ftl.prefetch(mid.lba as u32, true);
            }
            let (req, ext) = ring[head];
            head = (head + 1) % WARM_AHEAD;
            len -= 1;
            if let Err(e) = self
                .check_range(&req)
                .and_then(|_| self.warm_apply(ftl, &mut w, req, ext))
            {
                r = Err(e);
                break;
            }
        }
        let done = feed.written() >= w.overwrites || feed.ended();
        w.seconds += t0.elapsed().as_secs_f64();
        self.warming = Some(w);
        r.map(|_| done)
    }

    /// The preconditioning is over: the cache and the mapping table hold
    /// its last accesses, clean; [`Driver::start_timing`] starts timing.
    pub fn finish_precondition(&mut self, overwritten: u64) {
        let t0 = Instant::now();
        let w = self.warming.take().expect("a preconditioning in progress");
        self.cache.end_stamps(self.full_mask);
        self.map.end_stamps(w.map_clock);
        self.pre = Preconditioned {
            writes: w.writes + overwritten,
            seconds: w.seconds + t0.elapsed().as_secs_f64(),
            workload: w.workload,
        };
    }

    /// Timing starts (after [`Driver::finish_precondition`] or
    /// [`Driver::restore_precondition`]).
    pub fn start_timing(&mut self, ftl: &mut impl FtlPort) {
        self.start(ftl);
    }

    /// What the preconditioning left in DRAM, to restore it with the FTL's
    /// state ([`Driver::restore_precondition`]): serialized as a
    /// [`WarmState`], read from the tables as it is written (the mapping
    /// table's keys are 130 MB on a whole intel750).
    pub fn warm_state(&self) -> WarmStateOf<'_> {
        WarmStateOf {
            cache: self.cache.keys(),
            map: self.map.warm_entries(),
            writes: self.pre.writes,
            workload: &self.pre.workload,
        }
    }

    /// A saved preconditioning ([`Driver::warm_state`]) instead of running
    /// it: the FTL already holds its state; the cache and the mapping table
    /// get their entries back. Took `seconds` to load.
    pub fn restore_precondition(&mut self, w: WarmState, seconds: f64) -> Result<()> {
        let bad = |what: &str| {
            Err(Error::Simulation(format!(
                "a saved preconditioning's {what} does not fit this drive"
            )))
        };
        if w.cache.iter().any(|&k| k as u64 >= self.logical)
            || w.cache.len() as u64 > self.cache.capacity() as u64
        {
            return bad("cache");
        }
        if !self.map.restore_warm(w.map) {
            return bad("mapping table");
        }
        self.cache.begin_stamps();
        for (i, &k) in w.cache.iter().enumerate() {
            self.cache.stamp_write(k, i as u32);
        }
        self.cache.end_stamps(self.full_mask);
        self.pre = Preconditioned {
            writes: w.writes,
            seconds,
            workload: w.workload,
        };
        Ok(())
    }

    /// Whether a preconditioning is in progress (begun, not ended).
    pub fn preconditioning(&self) -> bool {
        self.warming.is_some()
    }

    /// One request of the preconditioning, applied in WAF mode. A write's
    /// pages go to the FTL unless the cache absorbs them
    /// ([`WriteCache::stamp_write`]); every access stamps the mapping table
    /// (and a write the cache), so both end holding the last accesses.
    fn warm_apply(
        &mut self,
        ftl: &mut impl FtlPort,
        w: &mut Warming,
        r: Request,
        ext: Extent,
    ) -> Result<()> {
        // Clocks stay below STAMP_LIMIT (far from NONE).
        if w.map_clock.max(w.cache_clock) as u64 + r.blocks as u64 >= STAMP_LIMIT as u64 {
            let by = STAMP_LIMIT / 2;
            self.map.rebase_stamps(by);
            self.cache.rebase_stamps(by);
            w.map_clock = w.map_clock.saturating_sub(by);
            w.cache_clock = w.cache_clock.saturating_sub(by);
        }
        match r.op {
            ReqOp::Write if self.cache.caches_writes() => {
                // Runs of pages the cache does not absorb go to the FTL as one
                // request each (the whole request, as a rule).
                let mut run = 0u32;
                for k in 0..r.blocks {
                    let lpn = r.lba as u32 + k;
                    self.map.stamp(lpn, w.map_clock);
                    w.map_clock += 1;
                    let partial = self.mask(ext, k) != self.full_mask;
                    let absorbed = self.cache.stamp_write(lpn, w.cache_clock) && !partial;
                    w.cache_clock += 1;
                    if absorbed {
                        if k > run {
                            ftl.submit(&Request {
                                lba: r.lba + run as u64,
                                blocks: k - run,
                                ..r
                            })?;
                        }
                        run = k + 1;
                    }
                }
                if r.blocks > run {
                    ftl.submit(&Request {
                        lba: r.lba + run as u64,
                        blocks: r.blocks - run,
                        ..r
                    })?;
                }
            }
            _ => {
                ftl.submit(&r)?;
                for k in 0..r.blocks {
                    let lpn = r.lba as u32 + k;
                    match r.op {
                        ReqOp::Trim => self.cache.unstamp(lpn),
                        _ => {
                            self.map.stamp(lpn, w.map_clock);
                            w.map_clock += 1;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Timing starts: translation pages of the mapped data are on flash,
    /// the engine records its flash operations. The cache's dirty pages
    /// from the precondition flush as they are evicted; its mapping entries
    /// start clean.
    fn start(&mut self, ftl: &mut impl FtlPort) {
        self.started = true;
        ftl.reset_stats();
        ftl.record_flash();
        self.map.start(ftl);
        self.engine_windows = ftl.windows_closed();
        self.update_urgent(ftl);
    }

    fn check_range(&self, r: &Request) -> Result<()> {
        let end = r.lba.checked_add(r.blocks as u64);
        let logical = self.logical;
        if r.blocks == 0 || end.is_none_or(|e| e > logical) {
            return Err(Error::Simulation(format!(
                "request for blocks [{}, +{}) is outside the device's {} logical blocks",
                r.lba, r.blocks, logical
            )));
        }
        Ok(())
    }

    // ------------------------------------------------------------ main loop

    fn run_events(
        &mut self,
        ftl: &mut impl FtlPort,
        feed: &mut dyn RequestFeed,
        goal: u64,
        total: u64,
    ) -> Result<()> {
        loop {
            if self.intake.wants_next() && feed.written() < goal.max(1) {
                if let Some(r) = self.intake.draw(feed, self.page_bytes) {
                    self.check_range(&r)?;
                    self.pulled += 1;
                    if self.pulled & (INTERRUPT_EVERY - 1) == 0 {
                        crate::interrupt::check()?;
                    }
                    // Its arrival is many events away: start loading what
                    // it touches first (see `arrive` for the second step).
                    if r.blocks <= 4 {
                        for lpn in r.lba as u32..(r.lba + r.blocks as u64) as u32 {
                            self.cache.prefetch(lpn);
                            self.map.prefetch(lpn);
                            ftl.prefetch(lpn, false);
                        }
                    }
                }
            }
            if feed.written() >= goal && goal < total && self.intake.wants_next() {
                return Ok(());
            }
            // The next arrival's time before the present clamps it: only an
            // arrival or a completion (closed loop) changes it, so events run
            // in the inner loop without looking at the source again.
            let arrival = self.intake.next_arrival();
            let next = loop {
                let ta = arrival.map(|t| t.max(self.now));
                match (ta, self.q.peek_time()) {
                    (None, None) => break Next::End,
                    (Some(ta), Some(te)) if ta < te => break Next::Arrival(ta),
                    (Some(ta), None) => break Next::Arrival(ta),
                    _ => {}
                }
                // A completion may set the next issue time.
                if let Event::Done(_) = self.next_event(ftl)? {
                    break Next::Look;
                }
            };
            let ta = match next {
                Next::End => break,
                Next::Look => continue,
                Next::Arrival(ta) => ta,
            };
            if self.q.is_empty()
                && self.intake.in_flight() == 0
                && ta >= self.now + self.run.idle_ns
                && self.intake.idle_until(ta)
            {
                // Nothing to do until the next arrival: an idle period.
                self.c.idle_periods += 1;
                ftl.idle(self.intake.base() + self.now, ta - self.now)?;
                self.apply_log(ftl, Writer::Background)?;
                self.process_done(ftl)?;
                continue;
            }
            self.now = ta;
            self.q.advance(ta);
            self.arrive(ftl);
        }
        if let Some(e) = self.intake.take_error() {
            return Err(e);
        }
        // Nothing left to happen, yet requests wait: a stall of the model,
        // reported rather than looped on by a caller that steps again.
        if self.intake.outstanding() {
            self.c.violations += 1;
            return Err(Error::Simulation(format!(
                "{} requests never completed (the event queue ran dry at {} ns, {} programs parked behind erases)",
                self.intake.in_flight(),
                self.now,
                self.flash.parked()
            )));
        }
        Ok(())
    }

    fn dispatch(&mut self, ftl: &mut impl FtlPort, ev: Event) -> Result<()> {
        match ev {
            Event::Die(id) | Event::DieOutChannel(id) => {
                self.flash.on_die(id, self.now, &mut self.q)
            }
            Event::Channel(id) => self.flash.on_channel(id, self.now, &mut self.q),
            Event::Fetched(id) => self.on_fetched(ftl, id)?,
            Event::Done(id) => self.on_done(id),
        }
        Ok(())
    }

    // ------------------------------------------------------------ host side

    /// The next request arrives now.
    fn arrive(&mut self, ftl: &impl FtlPort) {
        let id = self.intake.arrive(self.now, &mut self.q, &mut self.host);
        let r = *self.intake.req(id);
        if r.blocks <= 4 {
            // The index entries and forward-map entries were asked for when
            // the request was drawn: now what they point to.
            for k in 0..r.blocks {
                let lpn = r.lba + k;
                self.cache.prefetch_slot(lpn);
                ftl.prefetch(lpn, true);
            }
        }
    }

    /// Sectors of page `k` of a request that it covers.
    #[inline]
    fn mask(&self, ext: Extent, k: u32) -> u64 {
        let pb = self.page_bytes as u64;
        let start = ext.head as u64;
        let end = start + ext.bytes;
        let lo = start.max(k as u64 * pb) - k as u64 * pb;
        let hi = end.min((k as u64 + 1) * pb).saturating_sub(k as u64 * pb);
        if (lo == 0 && hi >= pb) || hi <= lo {
            return self.full_mask;
        }
        let sb = self.sector_bytes as u64;
        let first = lo / sb;
        let last = (hi - 1) / sb;
        (((1u64 << (last - first + 1)) - 1) << first) & self.full_mask
    }

    fn req_mask(&self, id: u32, k: u32) -> u64 {
        let r = self.intake.req(id);
        self.mask(
            Extent {
                head: r.head,
                bytes: r.bytes,
            },
            k,
        )
    }

    fn covered_bytes(&self, mask: u64) -> u32 {
        mask.count_ones() * self.sector_bytes
    }

    fn on_fetched(&mut self, ftl: &mut impl FtlPort, id: u32) -> Result<()> {
        let r = *self.intake.req(id);
        let now = self.now;
        match r.op {
            ReqOp::Read => {
                ftl.submit(&r.request())?;
                for k in 0..r.blocks {
                    let lpn = r.lba + k;
                    let mask = self.req_mask(id, k);
                    let bytes = self.covered_bytes(mask);
                    if self.cache.read_hit(lpn, mask) {
                        let t = self.dram.access(now, bytes as u64);
                        self.intake.ready_by(id, t);
                        continue;
                    }
                    let Some(pba) = ftl.lookup(lpn) else {
                        // Never written: zeroes, no flash read.
                        self.c.unmapped_reads += 1;
                        continue;
                    };
                    let map = self
                        .map
                        .access(lpn, Access::Read, &mut self.flash, &mut self.q, now);
                    let loc = self.flash.layout().locate(pba);
                    let op = self.flash.alloc(Op::new(
                        Kind::Read,
                        Class::UserRead,
                        loc,
                        loc.block,
                        bytes,
                        OWN_REQ | id,
                    ));
                    self.intake.page_pending(id);
                    self.start_chain(map, NONE, op);
                    self.cache.fill(lpn, self.full_mask);
                }
                self.c.read_bytes += r.bytes;
            }
            ReqOp::Write => {
                self.c.write_bytes += r.bytes;
                self.c.host_pages_written += r.blocks as u64;
                if self.cache.caches_writes() {
                    for k in 0..r.blocks {
                        let lpn = r.lba + k;
                        let mask = self.req_mask(id, k);
                        if self.cache.any_waiting() || !self.try_place(ftl, id, lpn, mask)? {
                            self.intake.page_pending(id);
                            self.cache.wait(id, lpn, mask);
                        }
                    }
                } else {
                    self.write_through(ftl, id)?;
                }
            }
            ReqOp::Trim => {
                ftl.submit(&r.request())?;
                for k in 0..r.blocks {
                    self.cache.invalidate(r.lba + k);
                }
            }
        }
        self.check_windows(ftl);
        if let Some(t) = self.intake.ready(id, now) {
            self.device_done(id, t);
        }
        Ok(())
    }

    /// Submit `op` after its optional read-modify-write read, once the
    /// read of translation page `map` it waits for (if any) ends.
    #[inline]
    fn start_chain(&mut self, map: Option<u32>, rmw: u32, op: u32) {
        let mut head = op;
        if rmw != NONE {
            self.flash.chain(rmw, op);
            head = rmw;
        }
        match map {
            Some(m) => self.map.wait(m, head),
            None => self.flash.submit(head, self.now, &mut self.q),
        }
    }

    /// A read of the old copy of a partially written page, or NONE.
    fn rmw_read(&mut self, ftl: &impl FtlPort, lpn: u32, mask: u64) -> u32 {
        if mask == self.full_mask {
            return NONE;
        }
        let Some(old) = ftl.lookup(lpn) else {
            return NONE;
        };
        self.c.rmw_reads += 1;
        let loc = self.flash.layout().locate(old);
        let bytes = self.page_bytes - self.covered_bytes(mask);
        self.flash.alloc(Op::new(
            Kind::Read,
            Class::UserRead,
            loc,
            loc.block,
            bytes,
            NONE,
        ))
    }

    fn write_through(&mut self, ftl: &mut impl FtlPort, id: u32) -> Result<()> {
        let r = *self.intake.req(id);
        let mut rmw = [(NONE, NONE); 2];
        for (i, k) in [0, r.blocks - 1].into_iter().enumerate() {
            if i == 1 && k == 0 {
                break;
            }
            let m = self.req_mask(id, k);
            rmw[i] = (k, self.rmw_read(ftl, r.lba + k, m));
        }
        for k in 0..r.blocks {
            self.cache.write_around(r.lba + k);
        }
        ftl.submit(&r.request())?;
        self.apply_log(
            ftl,
            Writer::Request {
                id,
                lba: r.lba,
                rmw,
            },
        )
    }

    /// Put one host page in the write cache; false when it must wait.
    fn try_place(&mut self, ftl: &mut impl FtlPort, id: u32, lpn: u32, mask: u64) -> Result<bool> {
        let now = self.now;
        let bytes = self.covered_bytes(mask) as u64;
        let place = self
            .cache
            .place(lpn, mask, self.full_mask, now, || ftl.lookup(lpn).is_none());
        let Place::Placed {
            evicted,
            through,
            next_lru,
        } = place
        else {
            return Ok(false);
        };
        if let Some((k, sectors)) = evicted {
            self.flush(ftl, k, sectors)?;
        }
        if let Some(next) = next_lru {
            ftl.prefetch(next, false);
            self.map.prefetch(next);
        }
        if through {
            self.flush(ftl, lpn, mask)?;
        }
        let t = self.dram.access(now, bytes);
        self.intake.ready_by(id, t);
        Ok(true)
    }

    /// Write one cached page to flash (the cache counted it as flushing).
    fn flush(&mut self, ftl: &mut impl FtlPort, lpn: u32, mask: u64) -> Result<()> {
        let rmw = self.rmw_read(ftl, lpn, mask);
        ftl.submit(&Request {
            time_ns: self.intake.base() + self.now,
            lba: lpn as u64,
            blocks: 1,
            op: ReqOp::Write,
            tenant: 0,
        })?;
        self.apply_log(ftl, Writer::Flush { rmw })
    }

    /// Turn the flash operations the engine logged into timed operations.
    fn apply_log(&mut self, ftl: &mut impl FtlPort, writer: Writer) -> Result<()> {
        let mut log = std::mem::take(&mut self.log);
        ftl.take_flash_ops(&mut log);
        let mut k = 0u32;
        for &op in &log {
            match op {
                FlashOp::Program { pba } => {
                    let (owner, lpn, rmw) = match &writer {
                        Writer::Request { id, lba, rmw } => {
                            let r = rmw
                                .iter()
                                .find(|x| x.0 == k && x.1 != NONE)
                                .map_or(NONE, |x| x.1);
                            self.intake.page_pending(*id);
                            (OWN_REQ | id, lba + k, r)
                        }
                        Writer::Flush { rmw } => {
                            (OWN_FLUSH, ftl.stored_at(pba).unwrap_or(NONE), *rmw)
                        }
                        Writer::Background => (NONE, ftl.stored_at(pba).unwrap_or(NONE), NONE),
                    };
                    k += 1;
                    self.c.user_programs += 1;
                    let map = if lpn != NONE {
                        self.map
                            .access(lpn, Access::Write, &mut self.flash, &mut self.q, self.now)
                    } else {
                        None
                    };
                    let loc = self.flash.layout().locate(pba);
                    let id = self.flash.alloc(Op::new(
                        Kind::Program,
                        Class::UserWrite,
                        loc,
                        loc.block,
                        self.page_bytes,
                        owner,
                    ));
                    self.start_chain(map, rmw, id);
                }
                FlashOp::Move { from, to } => {
                    if let Some(lpn) = ftl.stored_at(to) {
                        self.map
                            .access(lpn, Access::Gc, &mut self.flash, &mut self.q, self.now);
                    }
                    self.c.gc_programs += 1;
                    let layout = self.flash.layout();
                    let (src, dst) = (layout.locate(from), layout.locate(to));
                    let copyback = self.run.ssd.flash.copyback && src.die == dst.die;
                    let bytes = if copyback {
                        self.c.copybacks += 1;
                        0
                    } else {
                        self.page_bytes
                    };
                    let read = self.flash.alloc(Op::new(
                        Kind::Read,
                        Class::GcRead,
                        src,
                        src.block,
                        bytes,
                        NONE,
                    ));
                    let prog = self.flash.alloc(Op::new(
                        Kind::Program,
                        Class::GcWrite,
                        dst,
                        dst.block,
                        bytes,
                        NONE,
                    ));
                    self.flash.chain(read, prog);
                    self.flash.submit(read, self.now, &mut self.q);
                }
                FlashOp::Erase { seg } => self.flash.arm_erase(seg, self.now, &mut self.q),
            }
        }
        log.clear();
        self.log = log;
        self.update_urgent(ftl);
        self.check_windows(ftl);
        Ok(())
    }

    fn update_urgent(&mut self, ftl: &impl FtlPort) {
        let free = ftl.free_segments() as u32;
        self.flash
            .update_urgent(free, self.hard_segments, self.run.ssd.gc.preemptible);
    }

    // ---------------------------------------------------------- completions

    fn process_done(&mut self, ftl: &mut impl FtlPort) -> Result<()> {
        while self.flash.has_done() {
            let done = self.flash.take_done();
            for &id in &done {
                let owner = self.flash.op(id).owner;
                self.flash.release(id);
                if owner == NONE {
                    continue;
                }
                match owner & OWN_KIND {
                    OWN_REQ => self.page_done(owner & OWN_ID),
                    OWN_FLUSH => self.flush_done(ftl)?,
                    OWN_MAP => {
                        self.map
                            .read_done(owner & OWN_ID, &mut self.flash, &mut self.q, self.now)
                    }
                    _ => unreachable!("owner tag"),
                }
            }
            self.flash.recycle_done(done);
        }
        self.update_urgent(ftl);
        Ok(())
    }

    fn page_done(&mut self, id: u32) {
        if let Some(t) = self.intake.page_done(id, self.now) {
            self.device_done(id, t);
        }
    }

    fn flush_done(&mut self, ftl: &mut impl FtlPort) -> Result<()> {
        self.cache.flushed();
        while let Some((id, lpn, mask)) = self.cache.first_waiting() {
            if !self.try_place(ftl, id, lpn, mask)? {
                break;
            }
            self.cache.admit_first();
            self.page_done(id);
        }
        Ok(())
    }

    /// The device finished its part of request `id` at `t`: data to the
    /// host (reads), then the completion.
    fn device_done(&mut self, id: u32, t: u64) {
        let r = self.intake.req(id);
        let t = if r.op == ReqOp::Read {
            self.host.read_data(t, r.bytes)
        } else {
            t
        };
        self.q
            .push(self.host.completion_at(t), Event::Done(id).payload());
    }

    fn on_done(&mut self, id: u32) {
        let r = *self.intake.req(id);
        let now = self.now;
        if now < r.arrival || now < r.submitted {
            self.c.violations += 1;
        }
        let dev = now - r.submitted;
        let e2e = now - r.arrival;
        match r.op {
            ReqOp::Read => {
                self.c.reads += 1;
                self.read_dev.add(dev);
                self.read_e2e.add(e2e);
                self.win_read.add(dev);
            }
            ReqOp::Write => {
                self.c.writes += 1;
                self.write_dev.add(dev);
                self.write_e2e.add(e2e);
                self.win_write.add(dev);
            }
            ReqOp::Trim => self.c.trims += 1,
        }
        self.intake.complete(id, now, &mut self.q, &mut self.host);
    }

    // ----------------------------------------------------------- statistics

    #[inline]
    fn check_windows(&mut self, ftl: &impl FtlPort) {
        if self.engine_windows < ftl.windows_closed() {
            self.close_windows(ftl);
        }
    }

    /// Close the windows the engine closed since the last look.
    #[cold]
    fn close_windows(&mut self, ftl: &impl FtlPort) {
        let n = ftl.windows_closed();
        while self.engine_windows < n {
            let w = self.engine_windows;
            self.close_window(w);
            self.engine_windows += 1;
        }
    }

    fn requests_done(&self) -> u64 {
        self.c.reads + self.c.writes + self.c.trims
    }

    fn programs(&self) -> u64 {
        self.flash.stats().programs
    }

    fn user_programs(&self) -> u64 {
        self.flash.stats().ops[Class::UserWrite as usize]
    }

    fn close_window(&mut self, window: usize) {
        let now = self.now;
        let secs = (now - self.mark.time) as f64 * 1e-9;
        let requests = self.requests_done() - self.mark.requests;
        let bytes = self.c.read_bytes + self.c.write_bytes - self.mark.bytes;
        let user = self.user_programs() - self.mark.user_programs;
        let programs = self.programs() - self.mark.programs;
        let rate = |x: f64| if secs > 0.0 { x / secs } else { 0.0 };
        self.windows.push(TimingWindow {
            window,
            end_seconds: now as f64 * 1e-9,
            requests,
            iops: rate(requests as f64),
            bandwidth_bytes_per_s: rate(bytes as f64),
            read_mean_us: self.win_read.mean() / 1e3,
            read_p99_us: self.win_read.quantile(0.99) / 1e3,
            write_mean_us: self.win_write.mean() / 1e3,
            write_p99_us: self.win_write.quantile(0.99) / 1e3,
            flash_waf: (user > 0).then(|| programs as f64 / user as f64),
        });
        self.win_read.clear();
        self.win_write.clear();
        self.mark = WindowMark {
            time: now,
            requests: self.requests_done(),
            bytes: self.c.read_bytes + self.c.write_bytes,
            user_programs: self.user_programs(),
            programs: self.programs(),
        };
    }

    /// Whether timing has started (the precondition is over).
    pub fn started(&self) -> bool {
        self.started
    }
}
