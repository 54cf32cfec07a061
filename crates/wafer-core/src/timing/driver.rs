//! The driver of a timed replay: host requests in, the cache and mapping
//! table, the FTL's flash operations out to the flash model, completions
//! back to the host, statistics (see the module doc of [`super`]).
//!
//! Event payloads: upper 3 bits the kind (die, channel, command fetched,
//! request completed), lower 29 bits the object (die with generation,
//! channel, request slot). Request slots, operations and cache entries are
//! flat arrays reused through free lists.

use std::collections::VecDeque;
use std::time::Instant;

use super::cache::{Cmt, Lru};
use super::config::{CacheMode, Interface, SsdConfig};
use super::events::{Event, EventQueue};
use super::flash::{Class, Flash, Kind, Op, CLASS_NAMES, NONE};
use super::hist::Histogram;
use super::host::{Dram, Host};
use super::layout::Layout;
use super::result::*;
use super::{Arrival, Fit, TimingRun};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::ftl::FlashOp;
use crate::request::{Op as ReqOp, Request};
use crate::source::Source;
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
const OWN_ID: u32 = (1 << 30) - 1;

const DIRTY: u64 = 1 << 63;

#[derive(Clone, Copy, Debug)]
struct Req {
    arrival: u64,
    submitted: u64,
    time_ns: u64,
    lba: u32,
    blocks: u32,
    head: u32,
    bytes: u64,
    op: ReqOp,
    tenant: u32,
    pending: u32,
    ready_at: u64,
}

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

#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    Read,
    Write,
    Gc,
}

#[derive(Default)]
struct Counts {
    arrived: u64,
    reads: u64,
    writes: u64,
    trims: u64,
    read_bytes: u64,
    write_bytes: u64,
    cache_read_hits: u64,
    cache_read_misses: u64,
    cache_write_hits: u64,
    cache_write_misses: u64,
    cache_waits: u64,
    cmt_hits: u64,
    cmt_misses: u64,
    mapping_programs: u64,
    mapping_reads: u64,
    user_programs: u64,
    gc_programs: u64,
    copybacks: u64,
    rmw_reads: u64,
    host_pages_written: u64,
    admitted: u64,
    host_wait_sum: u64,
    host_wait_max: u64,
    idle_periods: u64,
    violations: u64,
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
    reqs: Vec<Req>,
    free_reqs: Vec<u32>,
    host_q: VecDeque<u32>,
    unfetched: VecDeque<u32>,
    sq_count: u32,
    sq_cap: u32,
    fetched: u32,
    fetch_cap: u32,
    in_flight: u64,
    /// The next request drawn from the source, not arrived yet.
    next: Option<(Request, Extent)>,
    issue_times: VecDeque<u64>,
    intake_done: bool,
    source_error: Option<Error>,
    base_ns: Option<u64>,
    idle_until: u64,
    // cache
    write_cache: bool,
    read_cache: bool,
    cache: Lru,
    wait_q: VecDeque<(u32, u32, u64)>,
    flush_inflight: u32,
    flush_limit: u32,
    eager: bool,
    // mapping table
    ideal: bool,
    cmt: Cmt,
    per_tpage: u32,
    mvpn_loc: Vec<u32>,
    ring_owner: Vec<u32>,
    ring_head: u64,
    ring_slots: u32,
    row_slots: u32,
    rows: u32,
    row_dirty: Vec<bool>,
    // geometry
    logical: u64,
    page_bytes: u32,
    sector_bytes: u32,
    full_mask: u64,
    segments: u32,
    hard_segments: u32,
    map_read_bytes: u32,
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
    precondition_target: u64,
    precondition_writes: u64,
    precondition_from: Option<u64>,
    precondition_done: u64,
    started: bool,
    wall: f64,
    log: Vec<FlashOp>,
}

impl Driver {
    /// A driver for `engine`'s device (shaped by [`super::fit_device`] into
    /// `fit`); timing starts after `precondition_writes` more user blocks.
    pub fn new(
        run: TimingRun,
        fit: Fit,
        engine: &Engine,
        precondition_writes: u64,
    ) -> Result<Driver> {
        run.validate()?;
        let ssd: &SsdConfig = &run.ssd;
        let geo = engine.ftl.geo;
        let logical = geo.logical_blocks as usize;
        let page_bytes = ssd.flash.page_bytes;
        let segments = geo.segments;
        let layout = Layout::new(ssd, fit.segment_pages, segments)?;
        let planes = layout.planes;
        let ppb = ssd.flash.pages_per_block;
        // Mapping table sizes (timing-autoblox §2.5).
        let log2 = (geo.physical_blocks.max(2) as f64).log2().ceil() as u32;
        let spp = (page_bytes / 512).max(1);
        let m = &ssd.mapping;
        let entry = if m.entry_bytes > 0 {
            m.entry_bytes
        } else {
            (2 * log2 + spp).div_ceil(8)
        };
        let tentry = if m.translation_entry_bytes > 0 {
            m.translation_entry_bytes
        } else {
            (log2 + spp).div_ceil(8)
        };
        let per_tpage = (page_bytes / tentry).max(1);
        let tpages = (logical as u64).div_ceil(per_tpage as u64) as u32;
        let row_slots = planes * ppb;
        let rows = if m.ideal {
            0
        } else {
            ((tpages as f64 * m.translation_area_factor / row_slots as f64).ceil() as u32 + 1)
                .max(3)
        };
        let ring_slots = rows * row_slots;
        let cmt_cap = if m.ideal {
            0
        } else {
            ((m.cmt_mib * 1048576.0) / entry as f64).floor() as u32
        };
        let flash = Flash::new(ssd, layout, segments + rows);
        let cache_cap = ((ssd.cache.capacity_mib * 1048576.0) / page_bytes as f64).floor() as u32;
        let (write_cache, read_cache) = match ssd.cache.mode {
            CacheMode::Off => (false, false),
            CacheMode::Write => (true, false),
            CacheMode::Read => (false, true),
            CacheMode::ReadWrite => (true, true),
        };
        let cache_on = (write_cache || read_cache) && cache_cap > 0;
        let (sq_cap, fetch_cap) = match ssd.host.interface {
            Interface::Nvme => (ssd.host.queue_depth - 1, ssd.host.fetch_size),
            Interface::Sata => (ssd.host.queue_depth, ssd.host.queue_depth),
        };
        let sector_units = spp.min(32);
        let mut d = Driver {
            fit,
            q: EventQueue::new(),
            host: Host::new(ssd),
            dram: Dram::new(ssd),
            now: 0,
            reqs: Vec::new(),
            free_reqs: Vec::new(),
            host_q: VecDeque::new(),
            unfetched: VecDeque::new(),
            sq_count: 0,
            sq_cap,
            fetched: 0,
            fetch_cap,
            in_flight: 0,
            next: None,
            issue_times: VecDeque::new(),
            intake_done: false,
            source_error: None,
            base_ns: None,
            idle_until: 0,
            write_cache: write_cache && cache_on,
            read_cache: read_cache && cache_on,
            cache: Lru::new(
                if cache_on { logical } else { 0 },
                if cache_on { cache_cap } else { 0 },
            ),
            wait_q: VecDeque::new(),
            flush_inflight: 0,
            flush_limit: if ssd.cache.flush_limit_pages > 0 {
                ssd.cache.flush_limit_pages
            } else {
                planes
            },
            eager: ssd.cache.eager_cold_writeback,
            ideal: m.ideal,
            cmt: Cmt::new(if m.ideal { 0 } else { logical }, cmt_cap),
            per_tpage,
            mvpn_loc: vec![NONE; if m.ideal { 0 } else { tpages as usize }],
            ring_owner: vec![NONE; ring_slots as usize],
            ring_head: 0,
            ring_slots,
            row_slots,
            rows,
            row_dirty: vec![false; rows as usize],
            logical: logical as u64,
            page_bytes,
            sector_bytes: page_bytes / sector_units,
            full_mask: (1u64 << sector_units) - 1,
            segments,
            hard_segments: ((ssd.gc.hard_threshold * segments as f64).ceil() as u32).max(1),
            map_read_bytes: page_bytes.min(512),
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
            precondition_target: 0,
            precondition_writes,
            precondition_from: None,
            precondition_done: 0,
            started: false,
            wall: 0.0,
            log: Vec::with_capacity(1024),
            flash,
            run,
        };
        if let Arrival::Closed | Arrival::Afap = d.run.arrival {
            let depth = match d.run.arrival {
                Arrival::Afap => d.sq_cap.min(d.fetch_cap),
                _ => d.run.queue_depth,
            };
            d.issue_times.extend((0..depth).map(|_| 0));
        }
        Ok(d)
    }

    // ---------------------------------------------------------------- intake

    /// Advance: precondition first (WAF mode), then replay requests until
    /// `written` reaches `goal` (the whole run at `total`, then drain).
    pub(crate) fn advance(
        &mut self,
        eng: &mut Engine,
        src: &mut Source,
        written: &mut u64,
        taken: &mut u64,
        goal: u64,
        total: u64,
    ) -> Result<()> {
        if !self.started {
            let from = *self.precondition_from.get_or_insert(*written);
            self.precondition_target = (from + self.precondition_writes).min(total);
            self.precondition(
                eng,
                src,
                written,
                taken,
                goal.min(self.precondition_target),
                total,
            )?;
            if *written < self.precondition_target && !self.intake_done {
                return Ok(());
            }
            self.precondition_done = *written - from;
            self.start(eng);
        }
        let t0 = Instant::now();
        let r = self.run_events(eng, src, written, taken, goal, total);
        self.wall += t0.elapsed().as_secs_f64();
        r
    }

    /// Whether every request has been replayed and has completed.
    pub fn finished(&self) -> bool {
        self.started
            && self.intake_done
            && self.next.is_none()
            && self.in_flight == 0
            && self.q.is_empty()
    }

    fn pull(
        &mut self,
        src: &mut Source,
        written: &mut u64,
        taken: &mut u64,
        total: u64,
    ) -> Option<(Request, Extent)> {
        if self.intake_done {
            return None;
        }
        match src.next_extent(self.page_bytes) {
            Ok(Some((mut r, mut ext))) => {
                *taken += 1;
                if r.op == ReqOp::Write {
                    let room = total - *written;
                    if r.blocks as u64 >= room {
                        if (r.blocks as u64) > room {
                            r.blocks = room as u32;
                            let end = r.blocks as u64 * self.page_bytes as u64;
                            ext.bytes = ext.bytes.min(end - ext.head as u64);
                        }
                        self.intake_done = true;
                    }
                    *written += r.blocks as u64;
                }
                Some((r, ext))
            }
            Ok(None) => {
                self.intake_done = true;
                None
            }
            Err(e) => {
                self.intake_done = true;
                self.source_error = Some(e);
                None
            }
        }
    }

    /// WAF mode with the cache and mapping table warmed on the way.
    fn precondition(
        &mut self,
        eng: &mut Engine,
        src: &mut Source,
        written: &mut u64,
        taken: &mut u64,
        goal: u64,
        total: u64,
    ) -> Result<()> {
        while *written < goal {
            let Some((r, ext)) = self.pull(src, written, taken, total) else {
                break;
            };
            self.check_range(&r)?;
            match r.op {
                ReqOp::Write if self.write_cache => {
                    for k in 0..r.blocks {
                        let lpn = r.lba as u32 + k;
                        let mask = self.mask(ext, k);
                        self.warm_cmt(lpn);
                        if let Some(s) = self.cache.touch(lpn) {
                            *self.cache.val_mut(s) |= mask | DIRTY;
                            continue;
                        }
                        if let Some((old, v)) = self.cache.insert(lpn, mask | DIRTY) {
                            if v & DIRTY != 0 {
                                eng.submit(&Request {
                                    lba: old as u64,
                                    blocks: 1,
                                    ..r
                                })?;
                            }
                        }
                    }
                }
                _ => {
                    eng.submit(&r)?;
                    for k in 0..r.blocks {
                        let lpn = r.lba as u32 + k;
                        match r.op {
                            ReqOp::Trim => {
                                self.cache.remove(lpn);
                            }
                            _ => self.warm_cmt(lpn),
                        }
                    }
                }
            }
        }
        if let Some(e) = self.source_error.take() {
            return Err(e);
        }
        Ok(())
    }

    fn warm_cmt(&mut self, lpn: u32) {
        if !self.ideal && !self.cmt.hit(lpn, true, false) {
            self.cmt.load(lpn, false);
        }
    }

    /// Timing starts: translation pages of the mapped data are on flash,
    /// the engine records its flash operations.
    fn start(&mut self, eng: &mut Engine) {
        self.started = true;
        eng.record_flash(true);
        if !self.ideal {
            let per = self.per_tpage as usize;
            let map = &eng.ftl.map;
            let mut slot = 0u32;
            for m in 0..self.mvpn_loc.len() {
                let lo = m * per;
                let hi = ((m + 1) * per).min(map.len());
                if map[lo..hi].iter().any(|&p| p != crate::ftl::UNMAPPED) {
                    self.mvpn_loc[m] = slot;
                    self.ring_owner[slot as usize] = m as u32;
                    self.row_dirty[(slot / self.row_slots) as usize] = true;
                    slot += 1;
                }
            }
            self.ring_head = slot as u64;
            // The cache's dirty pages from the precondition flush as they
            // are evicted; its mapping entries start clean.
        }
        self.engine_windows = eng.stats.windows.len();
        self.update_urgent(eng);
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
        eng: &mut Engine,
        src: &mut Source,
        written: &mut u64,
        taken: &mut u64,
        goal: u64,
        total: u64,
    ) -> Result<()> {
        loop {
            if self.next.is_none() && !self.intake_done && *written < goal.max(1) {
                self.next = self.pull(src, written, taken, total);
                if let Some((r, _)) = &self.next {
                    self.check_range(r)?;
                    // Its arrival is many events away: start loading what
                    // it touches first (see `arrive` for the second step).
                    if r.blocks <= 4 {
                        for lpn in r.lba as u32..(r.lba + r.blocks as u64) as u32 {
                            self.cache.prefetch(lpn);
                            self.cmt.prefetch(lpn);
                            eng.prefetch_write(lpn, false);
                        }
                    }
                }
            }
            if *written >= goal && goal < total && !self.intake_done && self.next.is_none() {
                return Ok(());
            }
            // The next arrival's time before the present clamps it: only an
            // arrival or a completion (closed loop) changes it, so events run
            // in the inner loop without looking at the source again.
            let arrival = match (&self.next, self.run.arrival) {
                (None, _) => None,
                (Some((r, _)), Arrival::Trace) => {
                    let base = *self.base_ns.get_or_insert(r.time_ns);
                    Some(r.time_ns.saturating_sub(base))
                }
                (Some(_), _) => self.issue_times.front().copied(),
            };
            let next = loop {
                let ta = arrival.map(|t| t.max(self.now));
                match (ta, self.q.peek_time()) {
                    (None, None) => break Next::End,
                    (Some(ta), Some(te)) if ta < te => break Next::Arrival(ta),
                    (Some(ta), None) => break Next::Arrival(ta),
                    _ => {}
                }
                let (t, p) = self.q.pop().expect("an event");
                self.now = t;
                self.dispatch(eng, p)?;
                // Finished operations someone waits for; else the urgent
                // mode again only if what it reads changed (free segments
                // change only in `apply_log`, which updates it).
                if !self.flash.done.is_empty() {
                    self.process_done(eng)?;
                } else if self.flash.urgent_stale {
                    self.update_urgent(eng);
                }
                let ev = Event::of(p);
                if let Event::DieOutChannel(id) = ev {
                    // The channel's event it carries (it finishes nothing).
                    self.flash.hand_over(id, self.now, &mut self.q);
                }
                if let Event::Done(_) = ev {
                    // A completion may set the next issue time.
                    break Next::Look;
                }
            };
            let ta = match next {
                Next::End => break,
                Next::Look => continue,
                Next::Arrival(ta) => ta,
            };
            if self.q.is_empty()
                && self.in_flight == 0
                && ta >= self.now + self.run.idle_ns
                && self.idle_until < ta
            {
                // Nothing to do until the next arrival: an idle period.
                self.idle_until = ta;
                self.c.idle_periods += 1;
                eng.idle(self.base() + self.now, ta - self.now)?;
                self.apply_log(eng, Writer::Background)?;
                self.process_done(eng)?;
                continue;
            }
            self.now = ta;
            self.q.advance(ta);
            if self.run.arrival != Arrival::Trace {
                self.issue_times.pop_front();
            }
            let (r, ext) = self.next.take().expect("an arrival");
            self.arrive(eng, r, ext);
        }
        if let Some(e) = self.source_error.take() {
            return Err(e);
        }
        // Nothing left to happen, yet requests wait: a stall of the model,
        // reported rather than looped on by a caller that steps again.
        if self.in_flight > 0 || self.next.is_some() {
            self.c.violations += 1;
            return Err(Error::Simulation(format!(
                "{} requests never completed (the event queue ran dry at {} ns, {} programs parked behind erases)",
                self.in_flight,
                self.now,
                self.flash.parked()
            )));
        }
        Ok(())
    }

    fn base(&self) -> u64 {
        self.base_ns.unwrap_or(0)
    }

    fn dispatch(&mut self, eng: &mut Engine, p: u32) -> Result<()> {
        match Event::of(p) {
            Event::Die(id) | Event::DieOutChannel(id) => {
                self.flash.on_die(id, self.now, &mut self.q)
            }
            Event::Channel(id) => self.flash.on_channel(id, self.now, &mut self.q),
            Event::Fetched(id) => self.on_fetched(eng, id)?,
            Event::Done(id) => self.on_done(id),
        }
        Ok(())
    }

    // ------------------------------------------------------------ host side

    fn arrive(&mut self, eng: &Engine, r: Request, ext: Extent) {
        let req = Req {
            arrival: self.now,
            submitted: self.now,
            time_ns: r.time_ns,
            lba: r.lba as u32,
            blocks: r.blocks,
            head: ext.head,
            bytes: ext.bytes,
            op: r.op,
            tenant: r.tenant,
            pending: 0,
            ready_at: 0,
        };
        let id = match self.free_reqs.pop() {
            Some(id) => {
                self.reqs[id as usize] = req;
                id
            }
            None => {
                self.reqs.push(req);
                (self.reqs.len() - 1) as u32
            }
        };
        self.in_flight += 1;
        self.c.arrived += 1;
        if r.blocks <= 4 {
            // The index entries and forward-map entries were asked for when
            // the request was drawn: now what they point to.
            for k in 0..r.blocks {
                let lpn = req.lba + k;
                self.cache.prefetch_slot(lpn);
                eng.prefetch_write(lpn, true);
            }
        }
        if self.sq_count < self.sq_cap {
            self.admit(id);
        } else {
            self.host_q.push_back(id);
        }
    }

    fn admit(&mut self, id: u32) {
        self.sq_count += 1;
        let r = &mut self.reqs[id as usize];
        r.submitted = self.now;
        let wait = self.now - r.arrival;
        self.c.admitted += 1;
        self.c.host_wait_sum += wait;
        self.c.host_wait_max = self.c.host_wait_max.max(wait);
        if self.fetched < self.fetch_cap {
            self.fetch(id);
        } else {
            self.unfetched.push_back(id);
        }
    }

    fn fetch(&mut self, id: u32) {
        self.fetched += 1;
        let r = self.reqs[id as usize];
        let mut t = self.now + self.host.submit_ns;
        if r.op == ReqOp::Write {
            t = self.host.write_data(t, r.bytes);
        }
        self.q.push(t, Event::Fetched(id).payload());
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
        let r = &self.reqs[id as usize];
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

    fn request_of(&self, id: u32) -> Request {
        let r = &self.reqs[id as usize];
        Request {
            time_ns: r.time_ns,
            lba: r.lba as u64,
            blocks: r.blocks,
            op: r.op,
            tenant: r.tenant,
        }
    }

    fn on_fetched(&mut self, eng: &mut Engine, id: u32) -> Result<()> {
        let r = self.reqs[id as usize];
        let now = self.now;
        match r.op {
            ReqOp::Read => {
                eng.submit(&self.request_of(id))?;
                for k in 0..r.blocks {
                    let lpn = r.lba + k;
                    let mask = self.req_mask(id, k);
                    let bytes = self.covered_bytes(mask);
                    if self.write_cache || self.read_cache {
                        if let Some(s) = self.cache.touch(lpn) {
                            if self.cache.val(s) & mask == mask {
                                self.c.cache_read_hits += 1;
                                let t = self.dram.access(now, bytes as u64);
                                let rr = &mut self.reqs[id as usize];
                                rr.ready_at = rr.ready_at.max(t);
                                continue;
                            }
                        }
                    }
                    self.c.cache_read_misses += 1;
                    let Some(pba) = eng.ftl.lookup(lpn) else {
                        continue; // never written: zeroes, no flash read
                    };
                    let map = self.cmt_access(lpn, Access::Read);
                    let loc = self.flash.layout().locate(pba);
                    let op = self.flash.alloc(Op::new(
                        Kind::Read,
                        Class::UserRead,
                        loc,
                        loc.block,
                        bytes,
                        OWN_REQ | id,
                    ));
                    self.reqs[id as usize].pending += 1;
                    self.start_chain(map, NONE, op);
                    if self.read_cache && !self.cache.full() {
                        self.cache.insert(lpn, self.full_mask);
                    }
                }
                self.c.read_bytes += r.bytes;
            }
            ReqOp::Write => {
                self.c.write_bytes += r.bytes;
                self.c.host_pages_written += r.blocks as u64;
                if self.write_cache {
                    for k in 0..r.blocks {
                        let lpn = r.lba + k;
                        let mask = self.req_mask(id, k);
                        if !self.wait_q.is_empty() || !self.try_place(eng, id, lpn, mask)? {
                            self.c.cache_waits += 1;
                            self.reqs[id as usize].pending += 1;
                            self.wait_q.push_back((id, lpn, mask));
                        }
                    }
                } else {
                    self.write_through(eng, id)?;
                }
            }
            ReqOp::Trim => {
                eng.submit(&self.request_of(id))?;
                for k in 0..r.blocks {
                    self.cache.remove(r.lba + k);
                }
            }
        }
        self.check_windows(eng);
        let rr = self.reqs[id as usize];
        if rr.pending == 0 {
            self.device_done(id, rr.ready_at.max(now));
        }
        Ok(())
    }

    /// Submit `op` after its optional mapping read and read-modify-write read.
    #[inline]
    fn start_chain(&mut self, map: Option<u32>, rmw: u32, op: u32) {
        let mut head = op;
        if rmw != NONE {
            self.flash.chain(rmw, op);
            head = rmw;
        }
        if let Some(m) = map {
            self.flash.chain(m, head);
            head = m;
        }
        self.flash.submit(head, self.now, &mut self.q);
    }

    /// A read of the old copy of a partially written page, or NONE.
    fn rmw_read(&mut self, eng: &Engine, lpn: u32, mask: u64) -> u32 {
        if mask == self.full_mask {
            return NONE;
        }
        let Some(old) = eng.ftl.lookup(lpn) else {
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

    fn write_through(&mut self, eng: &mut Engine, id: u32) -> Result<()> {
        let r = self.reqs[id as usize];
        let mut rmw = [(NONE, NONE); 2];
        for (i, k) in [0, r.blocks - 1].into_iter().enumerate() {
            if i == 1 && k == 0 {
                break;
            }
            let m = self.req_mask(id, k);
            rmw[i] = (k, self.rmw_read(eng, r.lba + k, m));
        }
        if self.read_cache {
            for k in 0..r.blocks {
                self.cache.remove(r.lba + k);
            }
        }
        eng.submit(&self.request_of(id))?;
        self.apply_log(
            eng,
            Writer::Request {
                id,
                lba: r.lba,
                rmw,
            },
        )
    }

    /// Put one host page in the write cache; false when it must wait.
    fn try_place(&mut self, eng: &mut Engine, id: u32, lpn: u32, mask: u64) -> Result<bool> {
        let now = self.now;
        let bytes = self.covered_bytes(mask) as u64;
        if let Some(s) = self.cache.touch(lpn) {
            *self.cache.val_mut(s) |= mask | DIRTY;
            self.c.cache_write_hits += 1;
        } else {
            if self.cache.full() {
                let (s, k) = self.cache.lru().expect("a full cache has an LRU entry");
                let v = self.cache.val(s);
                if v & DIRTY != 0 {
                    if self.flush_inflight >= self.flush_limit {
                        return Ok(false);
                    }
                    self.cache.remove(k);
                    self.flush(eng, k, v & !DIRTY)?;
                } else {
                    self.cache.remove(k);
                }
                if let Some(next) = self.cache.prefetch_lru() {
                    eng.prefetch_write(next, false);
                    self.cmt.prefetch(next);
                }
            }
            self.c.cache_write_misses += 1;
            let cold = self.eager && mask == self.full_mask && eng.ftl.lookup(lpn).is_none();
            if cold && self.flush_inflight < self.flush_limit {
                self.cache.insert(lpn, mask);
                self.flush(eng, lpn, mask)?;
            } else {
                self.cache.insert(lpn, mask | DIRTY);
            }
        }
        let t = self.dram.access(now, bytes);
        let r = &mut self.reqs[id as usize];
        r.ready_at = r.ready_at.max(t);
        Ok(true)
    }

    /// Write one cached page to flash.
    fn flush(&mut self, eng: &mut Engine, lpn: u32, mask: u64) -> Result<()> {
        let rmw = self.rmw_read(eng, lpn, mask);
        self.flush_inflight += 1;
        eng.submit(&Request {
            time_ns: self.base() + self.now,
            lba: lpn as u64,
            blocks: 1,
            op: ReqOp::Write,
            tenant: 0,
        })?;
        self.apply_log(eng, Writer::Flush { rmw })
    }

    /// Turn the flash operations the engine logged into timed operations.
    fn apply_log(&mut self, eng: &mut Engine, writer: Writer) -> Result<()> {
        let mut log = std::mem::take(&mut self.log);
        if let Some(ops) = eng.flash_ops() {
            std::mem::swap(&mut log, ops);
        }
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
                            self.reqs[*id as usize].pending += 1;
                            (OWN_REQ | id, lba + k, r)
                        }
                        Writer::Flush { rmw } => {
                            (OWN_FLUSH, eng.ftl.stored_at(pba).unwrap_or(NONE), *rmw)
                        }
                        Writer::Background => (NONE, eng.ftl.stored_at(pba).unwrap_or(NONE), NONE),
                    };
                    k += 1;
                    self.c.user_programs += 1;
                    let map = if lpn != NONE {
                        self.cmt_access(lpn, Access::Write)
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
                    if let Some(lpn) = eng.ftl.stored_at(to) {
                        self.cmt_access(lpn, Access::Gc);
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
        self.update_urgent(eng);
        self.check_windows(eng);
        Ok(())
    }

    fn update_urgent(&mut self, eng: &Engine) {
        let free = eng.ftl.free_segments() as u32;
        let erased = free.saturating_sub(self.flash.erasing_segments);
        self.flash.urgent =
            !self.run.ssd.gc.preemptible || self.flash.parked() > 0 || erased < self.hard_segments;
        self.flash.urgent_stale = false;
    }

    // ------------------------------------------------------- mapping table

    /// Look `lpn` up in the cached mapping table; a miss loads the entry
    /// (evicting the least recent, whose write back is issued if dirty)
    /// and returns the translation-page read the access must wait for
    /// (not for GC, which knows the new address, nor for a translation
    /// page never written).
    #[inline]
    fn cmt_access(&mut self, lpn: u32, a: Access) -> Option<u32> {
        // GC updates an entry without making it recent: moving a page is
        // not a use of it.
        if self.ideal || self.cmt.hit(lpn, a != Access::Gc, a != Access::Read) {
            self.c.cmt_hits += 1;
            return None;
        }
        self.cmt_miss(lpn, a)
    }

    /// A mapping-table miss (see [`Driver::cmt_access`]).
    #[inline(never)]
    fn cmt_miss(&mut self, lpn: u32, a: Access) -> Option<u32> {
        self.c.cmt_misses += 1;
        let m = lpn / self.per_tpage;
        let loc = self.mvpn_loc[m as usize];
        let evicted = self.cmt.load(lpn, a != Access::Read);
        let read = (a != Access::Gc && loc != NONE).then(|| {
            self.c.mapping_reads += 1;
            let l = self.flash.layout().locate_translation(loc);
            self.flash.alloc(Op::new(
                Kind::Read,
                Class::MapRead,
                l,
                l.block,
                self.map_read_bytes,
                NONE,
            ))
        });
        if let Some(k) = evicted {
            self.write_back(k / self.per_tpage);
        }
        read
    }

    /// Write translation page `m` back: read it (to merge), program it at
    /// the translation log's head (timing-autoblox §2.5; executed, unlike
    /// MQSim's, §2.12b).
    fn write_back(&mut self, m: u32) {
        let old = std::mem::replace(&mut self.mvpn_loc[m as usize], NONE);
        let read = (old != NONE).then(|| {
            self.c.mapping_reads += 1;
            let l = self.flash.layout().locate_translation(old);
            self.flash.alloc(Op::new(
                Kind::Read,
                Class::MapWrite,
                l,
                l.block,
                self.page_bytes,
                NONE,
            ))
        });
        let slot = self.translation_slot(m);
        self.mvpn_loc[m as usize] = slot;
        self.program_translation(slot, read);
    }

    fn program_translation(&mut self, slot: u32, after: Option<u32>) {
        self.c.mapping_programs += 1;
        let l = self.flash.layout().locate_translation(slot);
        let prog = self.flash.alloc(Op::new(
            Kind::Program,
            Class::MapWrite,
            l,
            l.block,
            self.page_bytes,
            NONE,
        ));
        match after {
            Some(r) => {
                self.flash.chain(r, prog);
                self.flash.submit(r, self.now, &mut self.q);
            }
            None => self.flash.submit(prog, self.now, &mut self.q),
        }
    }

    /// The next slot of the translation log for page `m`; entering a block
    /// row cleans the row after it (live pages moved, blocks erased).
    fn translation_slot(&mut self, m: u32) -> u32 {
        let slot = (self.ring_head % self.ring_slots as u64) as u32;
        self.ring_head += 1;
        if slot.is_multiple_of(self.row_slots) {
            let next = (slot / self.row_slots + 1) % self.rows;
            self.clean_row(next);
        }
        self.ring_owner[slot as usize] = m;
        self.row_dirty[(slot / self.row_slots) as usize] = true;
        slot
    }

    fn clean_row(&mut self, row: u32) {
        if !self.row_dirty[row as usize] {
            return;
        }
        self.row_dirty[row as usize] = false;
        let lo = row * self.row_slots;
        for s in lo..lo + self.row_slots {
            let m = std::mem::replace(&mut self.ring_owner[s as usize], NONE);
            if m != NONE && self.mvpn_loc[m as usize] == s {
                self.c.mapping_reads += 1;
                let l = self.flash.layout().locate_translation(s);
                let read = self.flash.alloc(Op::new(
                    Kind::Read,
                    Class::MapWrite,
                    l,
                    l.block,
                    self.page_bytes,
                    NONE,
                ));
                self.mvpn_loc[m as usize] = NONE;
                let slot = self.translation_slot(m);
                self.mvpn_loc[m as usize] = slot;
                self.program_translation(slot, Some(read));
            }
        }
        self.flash
            .arm_erase(self.segments + row, self.now, &mut self.q);
    }

    // ---------------------------------------------------------- completions

    fn process_done(&mut self, eng: &mut Engine) -> Result<()> {
        while !self.flash.done.is_empty() {
            let done = std::mem::take(&mut self.flash.done);
            for &id in &done {
                let owner = self.flash.op(id).owner;
                self.flash.release(id);
                if owner == NONE {
                    continue;
                }
                match owner & OWN_KIND {
                    OWN_REQ => self.page_done(owner & OWN_ID),
                    OWN_FLUSH => self.flush_done(eng)?,
                    _ => unreachable!("owner tag"),
                }
            }
            let mut done = done;
            done.clear();
            if self.flash.done.is_empty() {
                self.flash.done = done;
            }
        }
        self.update_urgent(eng);
        Ok(())
    }

    fn page_done(&mut self, id: u32) {
        let now = self.now;
        let r = &mut self.reqs[id as usize];
        r.pending -= 1;
        r.ready_at = r.ready_at.max(now);
        if r.pending == 0 {
            let t = r.ready_at;
            self.device_done(id, t);
        }
    }

    fn flush_done(&mut self, eng: &mut Engine) -> Result<()> {
        self.flush_inflight -= 1;
        while let Some(&(id, lpn, mask)) = self.wait_q.front() {
            if !self.try_place(eng, id, lpn, mask)? {
                break;
            }
            self.wait_q.pop_front();
            let now = self.now;
            let r = &mut self.reqs[id as usize];
            r.pending -= 1;
            if r.pending == 0 {
                let t = r.ready_at.max(now);
                self.device_done(id, t);
            }
        }
        Ok(())
    }

    /// The device finished its part of request `id` at `t`: data to the
    /// host (reads), then the completion.
    fn device_done(&mut self, id: u32, t: u64) {
        let r = self.reqs[id as usize];
        let t = if r.op == ReqOp::Read {
            self.host.read_data(t, r.bytes)
        } else {
            t
        };
        self.q
            .push(t + self.host.complete_ns, Event::Done(id).payload());
    }

    fn on_done(&mut self, id: u32) {
        let r = self.reqs[id as usize];
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
        self.in_flight -= 1;
        self.free_reqs.push(id);
        self.sq_count -= 1;
        self.fetched -= 1;
        if let Some(next) = self.host_q.pop_front() {
            self.admit(next);
        }
        while self.fetched < self.fetch_cap {
            match self.unfetched.pop_front() {
                Some(n) => self.fetch(n),
                None => break,
            }
        }
        if self.run.arrival != Arrival::Trace {
            self.issue_times.push_back(now + self.run.think_ns);
        }
    }

    // ----------------------------------------------------------- statistics

    #[inline]
    fn check_windows(&mut self, eng: &Engine) {
        if self.engine_windows < eng.stats.windows.len() {
            self.close_windows(eng);
        }
    }

    /// Close the windows the engine closed since the last look.
    #[cold]
    fn close_windows(&mut self, eng: &Engine) {
        let n = eng.stats.windows.len();
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
        self.flash.stats.programs
    }

    fn close_window(&mut self, window: usize) {
        let now = self.now;
        let secs = (now - self.mark.time) as f64 * 1e-9;
        let requests = self.requests_done() - self.mark.requests;
        let bytes = self.c.read_bytes + self.c.write_bytes - self.mark.bytes;
        let user = self.flash.stats.ops[Class::UserWrite as usize] - self.mark.user_programs;
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
            user_programs: self.flash.stats.ops[Class::UserWrite as usize],
            programs: self.programs(),
        };
    }

    /// Whether timing has started (the precondition is over).
    pub fn started(&self) -> bool {
        self.started
    }

    /// Everything measured so far.
    pub fn result(&self) -> TimingResult {
        let ssd = &self.run.ssd;
        let t = self.now.max(1);
        let secs = self.now as f64 * 1e-9;
        let frac = |ns: u64| ns as f64 / t as f64;
        let per_s = |x: f64| if secs > 0.0 { x / secs } else { 0.0 };
        let fs = &self.flash.stats;
        let chans: Vec<f64> = self.flash.channel_busy().into_iter().map(frac).collect();
        let dies: Vec<f64> = self.flash.die_busy().into_iter().map(frac).collect();
        let mean = |v: &[f64]| {
            if v.is_empty() {
                0.0
            } else {
                v.iter().sum::<f64>() / v.len() as f64
            }
        };
        let requests = self.requests_done();
        let bytes = self.c.read_bytes + self.c.write_bytes;
        // Energy (timing-autoblox §1.11, §2.14).
        let e = &ssd.energy;
        let bits = self.page_bytes as f64 * 8.0;
        let flash_read_j = fs.reads as f64 * bits * e.read_nj_per_bit * 1e-9;
        let flash_program_j = fs.programs as f64 * bits * e.program_nj_per_bit * 1e-9;
        let flash_erase_j =
            fs.erases as f64 * bits * self.fit.slice as f64 * e.erase_nj_per_bit * 1e-9;
        let idle_ns: u64 = self
            .flash
            .chip_busy(self.now)
            .iter()
            .map(|&b| self.now.saturating_sub(b))
            .sum();
        let flash_idle_j = idle_ns as f64 * 1e-9 * e.idle_mw_per_chip * 1e-3;
        let channel_j = fs.channel_bytes as f64 * e.channel_pj_per_byte * 1e-12;
        let dram_j =
            secs * e.dram_mw * 1e-3 + self.dram.bytes as f64 * 8.0 * e.dram_pj_per_bit * 1e-12;
        let controller_j = secs * e.controller_mw * 1e-3;
        let total_j = flash_read_j
            + flash_program_j
            + flash_erase_j
            + flash_idle_j
            + channel_j
            + dram_j
            + controller_j;
        let mut waits = Waits {
            host_queue_mean_us: if self.c.admitted > 0 {
                self.c.host_wait_sum as f64 / self.c.admitted as f64 / 1e3
            } else {
                0.0
            },
            host_queue_max_us: self.c.host_wait_max as f64 / 1e3,
            cache_waits: self.c.cache_waits,
            programs_parked: fs.parked,
            ..Default::default()
        };
        let mut by_class = std::collections::BTreeMap::new();
        for (c, name) in CLASS_NAMES.iter().enumerate() {
            let name = name.to_string();
            by_class.insert(name.clone(), fs.ops[c]);
            let n = fs.ops[c].max(1);
            waits
                .flash_mean_us
                .insert(name.clone(), fs.wait_sum[c] as f64 / n as f64 / 1e3);
            waits.flash_max_us.insert(name, fs.wait_max[c] as f64 / 1e3);
        }
        let user_programs = fs.ops[Class::UserWrite as usize];
        let cache_total = self.c.cache_read_hits
            + self.c.cache_read_misses
            + self.c.cache_write_hits
            + self.c.cache_write_misses;
        let cmt_total = self.c.cmt_hits + self.c.cmt_misses;
        let mut windows = self.windows.clone();
        if requests > self.mark.requests {
            // the last, partial window
            let mut tmp = TimingWindow {
                window: self.engine_windows,
                end_seconds: secs,
                requests: requests - self.mark.requests,
                read_mean_us: self.win_read.mean() / 1e3,
                read_p99_us: self.win_read.quantile(0.99) / 1e3,
                write_mean_us: self.win_write.mean() / 1e3,
                write_p99_us: self.win_write.quantile(0.99) / 1e3,
                ..Default::default()
            };
            let ws = (self.now - self.mark.time) as f64 * 1e-9;
            if ws > 0.0 {
                tmp.iops = tmp.requests as f64 / ws;
                tmp.bandwidth_bytes_per_s = (bytes - self.mark.bytes) as f64 / ws;
            }
            let user = user_programs - self.mark.user_programs;
            tmp.flash_waf =
                (user > 0).then(|| (fs.programs - self.mark.programs) as f64 / user as f64);
            windows.push(tmp);
        }
        let all_ops: u64 = fs.ops.iter().sum();
        TimingResult {
            preset: ssd.name.clone(),
            arrival: format!("{:?}", self.run.arrival).to_lowercase(),
            queue_depth: self.run.queue_depth,
            slice_pages: self.fit.slice,
            erase_us: self.flash.t.erase as f64 / 1e3,
            precondition_writes: self.precondition_done,
            simulated_seconds: secs,
            arrived: self.c.arrived,
            requests,
            reads: self.c.reads,
            writes: self.c.writes,
            trims: self.c.trims,
            read_bytes: self.c.read_bytes,
            write_bytes: self.c.write_bytes,
            read_latency: Latency {
                device: self.read_dev.summary(),
                end_to_end: self.read_e2e.summary(),
            },
            write_latency: Latency {
                device: self.write_dev.summary(),
                end_to_end: self.write_e2e.summary(),
            },
            throughput: Throughput {
                iops: per_s(requests as f64),
                read_iops: per_s(self.c.reads as f64),
                write_iops: per_s(self.c.writes as f64),
                bandwidth_bytes_per_s: per_s(bytes as f64),
                read_bandwidth_bytes_per_s: per_s(self.c.read_bytes as f64),
                write_bandwidth_bytes_per_s: per_s(self.c.write_bytes as f64),
            },
            utilisation: Utilisation {
                channel_mean: mean(&chans),
                channel_max: chans.iter().copied().fold(0.0, f64::max),
                die_mean: mean(&dies),
                die_min: dies.iter().copied().fold(f64::INFINITY, f64::min).min(1.0),
                die_max: dies.iter().copied().fold(0.0, f64::max),
                channels: chans,
                dies,
                host_link_down: frac(self.host.down.busy_ns),
                host_link_up: frac(self.host.up.busy_ns),
                dram: frac(self.dram.bus.busy_ns),
            },
            waits,
            hits: Hits {
                cache_read_hits: self.c.cache_read_hits,
                cache_read_misses: self.c.cache_read_misses,
                cache_write_hits: self.c.cache_write_hits,
                cache_write_misses: self.c.cache_write_misses,
                cache_hit_rate: (cache_total > 0).then(|| {
                    (self.c.cache_read_hits + self.c.cache_write_hits) as f64 / cache_total as f64
                }),
                cmt_hits: self.c.cmt_hits,
                cmt_misses: self.c.cmt_misses,
                cmt_hit_rate: (cmt_total > 0).then(|| self.c.cmt_hits as f64 / cmt_total as f64),
            },
            flash: FlashCounts {
                by_class,
                reads: fs.reads,
                user_programs,
                gc_programs: fs.ops[Class::GcWrite as usize],
                mapping_programs: self.c.mapping_programs,
                mapping_reads: self.c.mapping_reads,
                erases: fs.erases,
                copybacks: self.c.copybacks,
                multiplane_batches: fs.multiplane,
                batches: fs.batches,
                suspended_programs: fs.suspended_programs,
                suspended_erases: fs.suspended_erases,
                rmw_reads: self.c.rmw_reads,
            },
            waf_with_mapping: (user_programs > 0)
                .then(|| fs.programs as f64 / user_programs as f64),
            host_waf: (self.c.host_pages_written > 0)
                .then(|| fs.programs as f64 / self.c.host_pages_written as f64),
            energy: Energy {
                flash_read_j,
                flash_program_j,
                flash_erase_j,
                flash_idle_j,
                channel_j,
                dram_j,
                controller_j,
                total_j,
                average_power_w: if secs > 0.0 { total_j / secs } else { 0.0 },
                per_request_j: (requests > 0).then(|| total_j / requests as f64),
                per_byte_j: (bytes > 0).then(|| total_j / bytes as f64),
            },
            windows,
            requests_per_wall_second: if self.wall > 0.0 {
                requests as f64 / self.wall
            } else {
                0.0
            },
            flash_ops_per_wall_second: if self.wall > 0.0 {
                all_ops as f64 / self.wall
            } else {
                0.0
            },
            wall_seconds: self.wall,
            idle_periods: self.c.idle_periods,
            invariant_violations: self.c.violations + self.flash.busy_violations,
        }
    }
}
