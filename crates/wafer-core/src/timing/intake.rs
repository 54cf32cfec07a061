//! Host intake: how requests arrive (trace timestamps, a closed loop, as
//! fast as admitted), wait for a submission-queue slot, are fetched by the
//! device (with a write's data over the host link), and free their slots
//! when they complete. Request slots are a flat array reused through a free
//! list.

use std::collections::VecDeque;

use super::config::{Interface, SsdConfig};
use super::events::{Event, EventQueue};
use super::host::Host;
use super::port::RequestFeed;
use super::{Arrival, Think, TimingRun};
use crate::error::Error;
use crate::request::{Op, Request};
use crate::trace::Extent;

/// A host request in flight.
#[derive(Clone, Copy, Debug)]
pub(super) struct Req {
    /// Arrival at the host [ns of simulated time].
    pub arrival: u64,
    /// Entry into the submission queue [ns].
    pub submitted: u64,
    /// The request's own timestamp (trace or workload) [ns].
    pub time_ns: u64,
    /// First logical page.
    pub lba: u32,
    /// Pages.
    pub blocks: u32,
    /// Offset of the first byte in the first page [bytes].
    pub head: u32,
    /// Bytes the request covers.
    pub bytes: u64,
    /// Read, write or trim.
    pub op: Op,
    /// Tenant.
    pub tenant: u32,
    /// Flash operations (or cache places) it still waits for (the
    /// intake's to count: [`Intake::page_pending`], [`Intake::page_done`]).
    pending: u32,
    /// When its device part is ready at the latest so far [ns].
    ready_at: u64,
}

impl Req {
    /// The request as the FTL sees it.
    pub fn request(&self) -> Request {
        Request {
            time_ns: self.time_ns,
            lba: self.lba as u64,
            blocks: self.blocks,
            op: self.op,
            tenant: self.tenant,
        }
    }
}

/// The host side of a timed replay (see the module doc).
pub(super) struct Intake {
    /// Request slots (free ones are in `free`).
    reqs: Vec<Req>,
    free: Vec<u32>,
    /// Arrived, waiting for a submission-queue slot.
    host_q: VecDeque<u32>,
    /// In the submission queue, waiting for the device to fetch them.
    unfetched: VecDeque<u32>,
    sq_count: u32,
    sq_cap: u32,
    fetched: u32,
    fetch_cap: u32,
    /// Requests arrived and not completed.
    in_flight: u64,
    /// The next request drawn from the feed, not arrived yet.
    next: Option<(Request, Extent)>,
    /// Closed loop: when the next requests may be issued [ns], after
    /// `idle_slots` slots free from the start (a count, not a list: a
    /// queue depth of a billion costs nothing until requests use it).
    issue_times: VecDeque<u64>,
    idle_slots: u64,
    /// The feed is over (or failed: `error`).
    done: bool,
    /// An error the feed met, returned once the requests before it ran.
    error: Option<Error>,
    /// The trace time of the first arrival [ns].
    base_ns: Option<u64>,
    /// The last idle period reported lasts until here [ns].
    idle_until: u64,
    arrival: Arrival,
    think_ns: u64,
    /// AutoBlox's think time, and the first request's timestamp it counts from.
    think: Option<Think>,
    think_base: Option<u64>,
    /// Requests arrived.
    arrived: u64,
    /// Requests admitted to the submission queue.
    admitted: u64,
    /// Time requests waited for a submission-queue slot [ns]: sum, max.
    wait_sum: u64,
    wait_max: u64,
}

impl Intake {
    /// The intake of `run` on `ssd`'s host interface.
    pub fn new(run: &TimingRun, ssd: &SsdConfig) -> Intake {
        let (sq_cap, fetch_cap) = match ssd.host.interface {
            Interface::Nvme => (ssd.host.queue_depth - 1, ssd.host.fetch_size),
            Interface::Sata => (ssd.host.queue_depth, ssd.host.queue_depth),
        };
        let idle_slots = match run.arrival {
            Arrival::Afap => sq_cap.min(fetch_cap) as u64,
            Arrival::Closed => run.queue_depth as u64,
            _ => 0,
        };
        Intake {
            reqs: Vec::new(),
            free: Vec::new(),
            host_q: VecDeque::new(),
            unfetched: VecDeque::new(),
            sq_count: 0,
            sq_cap,
            fetched: 0,
            fetch_cap,
            in_flight: 0,
            next: None,
            issue_times: VecDeque::new(),
            idle_slots,
            done: false,
            error: None,
            base_ns: None,
            idle_until: 0,
            arrival: run.arrival,
            think_ns: run.think_ns,
            think: run.think.clone(),
            think_base: None,
            arrived: 0,
            admitted: 0,
            wait_sum: 0,
            wait_max: 0,
        }
    }

    /// Whether a request may be drawn: none drawn waits to arrive and the
    /// feed is not over.
    #[inline]
    pub fn wants_next(&self) -> bool {
        self.next.is_none() && !self.done
    }

    /// Draw the next request of `feed` (it arrives at
    /// [`Intake::next_arrival`]); `None` when the feed is over (an error it
    /// met is returned by [`Intake::take_error`]).
    pub fn draw(&mut self, feed: &mut dyn RequestFeed, page_bytes: u32) -> Option<Request> {
        if self.done {
            return None;
        }
        self.next = match feed.next(page_bytes) {
            Ok(Some(x)) => {
                self.done = feed.ended();
                Some(x)
            }
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                self.error = Some(e);
                None
            }
        };
        self.next.map(|(r, _)| r)
    }

    /// The error the feed met, once (after the requests before it ran).
    pub fn take_error(&mut self) -> Option<Error> {
        self.error.take()
    }

    /// Every request drawn has completed and the feed is over.
    #[inline]
    pub fn drained(&self) -> bool {
        self.done && !self.outstanding()
    }

    /// Whether requests are still to complete: arrived, or drawn and not
    /// arrived.
    #[inline]
    pub fn outstanding(&self) -> bool {
        self.in_flight > 0 || self.next.is_some()
    }

    /// Requests arrived and not completed.
    #[inline]
    pub fn in_flight(&self) -> u64 {
        self.in_flight
    }

    /// An idle period lasting until `until` [ns]: whether it is a new one
    /// (the last reported does not reach it), which it then records.
    #[inline]
    pub fn idle_until(&mut self, until: u64) -> bool {
        if self.idle_until < until {
            self.idle_until = until;
            true
        } else {
            false
        }
    }

    /// Request `id` (arrived, not completed).
    #[inline]
    pub fn req(&self, id: u32) -> &Req {
        &self.reqs[id as usize]
    }

    /// One more page of request `id` is under way (a flash operation, or a
    /// place in the cache it waits for).
    #[inline]
    pub fn page_pending(&mut self, id: u32) {
        self.reqs[id as usize].pending += 1;
    }

    /// A page of request `id` is done at `now`: when its device part is
    /// ready, if that was its last [ns].
    #[inline]
    pub fn page_done(&mut self, id: u32, now: u64) -> Option<u64> {
        let r = &mut self.reqs[id as usize];
        r.pending -= 1;
        r.ready_at = r.ready_at.max(now);
        (r.pending == 0).then_some(r.ready_at)
    }

    /// Request `id`'s device part is ready no earlier than `t` (a DRAM
    /// access of its data ends then) [ns].
    #[inline]
    pub fn ready_by(&mut self, id: u32, t: u64) {
        let r = &mut self.reqs[id as usize];
        r.ready_at = r.ready_at.max(t);
    }

    /// When request `id`'s device part is ready, looked at `now`, if no
    /// page of it is under way [ns].
    #[inline]
    pub fn ready(&self, id: u32, now: u64) -> Option<u64> {
        let r = &self.reqs[id as usize];
        (r.pending == 0).then(|| r.ready_at.max(now))
    }

    /// Requests arrived so far.
    pub fn arrived(&self) -> u64 {
        self.arrived
    }

    /// Mean time requests waited for a submission-queue slot (0 before any
    /// was admitted) [ns].
    pub fn queue_wait_mean_ns(&self) -> f64 {
        if self.admitted > 0 {
            self.wait_sum as f64 / self.admitted as f64
        } else {
            0.0
        }
    }

    /// Longest time a request waited for a submission-queue slot [ns].
    pub fn queue_wait_max_ns(&self) -> u64 {
        self.wait_max
    }

    /// The trace time of the first arrival [ns] (0 before it).
    pub fn base(&self) -> u64 {
        self.base_ns.unwrap_or(0)
    }

    /// When the request in `next` arrives, unclamped [ns]: its trace time
    /// (open loop) or the next issue time (closed loop); `None` without one.
    #[inline]
    pub fn next_arrival(&mut self) -> Option<u64> {
        match (&self.next, self.arrival) {
            (None, _) => None,
            (Some((r, _)), Arrival::Trace) => {
                let base = *self.base_ns.get_or_insert(r.time_ns);
                Some(r.time_ns.saturating_sub(base))
            }
            (Some(_), _) if self.idle_slots > 0 => Some(0),
            (Some(_), _) => self.issue_times.front().copied(),
        }
    }

    /// The request in `next` arrives at `now`: a slot for it; it enters the
    /// submission queue if there is room ([`Intake::admit`]), else waits.
    pub fn arrive(&mut self, now: u64, q: &mut EventQueue, host: &mut Host) -> u32 {
        if self.arrival != Arrival::Trace {
            if self.idle_slots > 0 {
                self.idle_slots -= 1;
            } else {
                self.issue_times.pop_front();
            }
        }
        let (r, ext) = self.next.take().expect("an arrival");
        if self.think.is_some() {
            self.think_base.get_or_insert(r.time_ns);
        }
        let req = Req {
            arrival: now,
            submitted: now,
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
        let id = match self.free.pop() {
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
        self.arrived += 1;
        if self.sq_count < self.sq_cap {
            self.admit(id, now, q, host);
        } else {
            self.host_q.push_back(id);
        }
        id
    }

    /// Request `id` enters the submission queue at `now`.
    fn admit(&mut self, id: u32, now: u64, q: &mut EventQueue, host: &mut Host) {
        self.sq_count += 1;
        let r = &mut self.reqs[id as usize];
        r.submitted = now;
        let wait = now - r.arrival;
        self.admitted += 1;
        self.wait_sum += wait;
        self.wait_max = self.wait_max.max(wait);
        if self.fetched < self.fetch_cap {
            self.fetch(id, now, q, host);
        } else {
            self.unfetched.push_back(id);
        }
    }

    /// The device fetches request `id` (and a write's data): an
    /// [`Event::Fetched`] when it is there.
    fn fetch(&mut self, id: u32, now: u64, q: &mut EventQueue, host: &mut Host) {
        self.fetched += 1;
        let r = self.reqs[id as usize];
        let mut t = host.command_at(now);
        if r.op == Op::Write {
            t = host.write_data(t, r.bytes);
        }
        q.push(t, Event::Fetched(id).payload());
    }

    /// Request `id` completed at `now`: its slots are free, the next
    /// waiting requests move up, and a closed loop issues another after the
    /// think time.
    pub fn complete(&mut self, id: u32, now: u64, q: &mut EventQueue, host: &mut Host) {
        self.in_flight -= 1;
        self.free.push(id);
        self.sq_count -= 1;
        self.fetched -= 1;
        if let Some(next) = self.host_q.pop_front() {
            self.admit(next, now, q, host);
        }
        while self.fetched < self.fetch_cap {
            match self.unfetched.pop_front() {
                Some(n) => self.fetch(n, now, q, host),
                None => break,
            }
        }
        if self.arrival != Arrival::Trace {
            let think = match &self.think {
                Some(t) => {
                    let r = &self.reqs[id as usize];
                    t.delay(
                        r.time_ns.saturating_sub(self.think_base.unwrap_or(0)),
                        r.bytes,
                    )
                }
                None => self.think_ns,
            };
            self.issue_times.push_back(now + think);
        }
    }
}
