//! Trace extension that keeps lifetimes: a continuation of a short trace
//! whose block lifetimes, request sizes, read/write mix and spatial locality
//! follow the trace's own, so a trace of a fraction of a drive-write can be
//! replayed for several without `repeat`'s artefact (a repeated trace
//! rewrites every block once per pass in the same order: every block lives
//! exactly one pass, and policies that separate by age reach WAF 1.000).
//!
//! # The model
//!
//! Time is the papers' logical clock: user-written blocks (SepBIT FAST'22
//! §2, MiDAS FAST'24 §3: a block's lifetime, or update interval, is the
//! number of blocks written between two writes of it). The trace writes `L`
//! blocks; its continuation starts at `L`.
//!
//! * **Units** (spatial locality, request sizes). The trace's writes are cut
//!   into *runs*: consecutive write requests each starting where the one
//!   before ended (at most [`MAX_RUN_REQUESTS`] requests, [`MAX_RUN_BLOCKS`]
//!   blocks). At the trace's end, the blocks whose last write came from the
//!   same run and lie next to each other form a *unit*; the continuation
//!   rewrites a unit whole, as the run's own requests (clipped to the unit),
//!   so sizes, sequential runs and the addresses written stay the trace's.
//!   Blocks trimmed and not written again belong to no unit.
//! * **Classes and laws** (lifetimes). A block's class is its number of
//!   writes in the trace, in powers of two (1-2, 3-4, 5-8, ...): how hot
//!   the trace shows it. Blocks written once share the class of those
//!   written twice: a block written once may be one whose next write falls
//!   just past the trace's end (a sequential log the trace sees wrap once
//!   has half its blocks written twice, half once, all with one period),
//!   and its class's intervals are the nearest evidence of when that comes.
//!   A class's law is the Kaplan-Meier estimate
//!   (Kaplan & Meier, "Nonparametric estimation from incomplete
//!   observations", JASA 1958) of the update intervals of its blocks: the
//!   intervals the trace shows are events, and each block's time from its
//!   last write to the trace's end is censored (it lives at least that
//!   long). Kaplan-Meier undoes the bias of a short window towards short
//!   intervals. The law's mass beyond its longest interval is the chance
//!   that a rewrite comes later than the trace can show (*beyond the
//!   horizon*). A unit's class is that of its blocks' mean write count.
//! * **Renewal.** Each unit is rewritten again and again, each interval a
//!   fresh draw from its class's law. The first draw after the trace is
//!   conditioned on the unit having already lived from its last write to
//!   the trace's end (its censored time). A draw beyond the horizon makes
//!   the rewrite *cold*.
//! * **Cold rewrites.** The trace shows a cold unit written once in a
//!   window of its length `L`, and such writes are its share of the
//!   traffic. The continuation keeps both: its clock is cut into *cycles* of
//!   `L` blocks after the trace (`[L, 2L)`, `[2L, 3L)`, ...), and a unit that
//!   goes cold in one cycle is rewritten in the next, at a place drawn
//!   afresh for each cycle. So cold units never die in the trace's order
//!   (`repeat`'s artefact) and never twice within a cycle (which the trace
//!   never shows).
//! * **Order.** The clock advances by the blocks of each unit written. A
//!   unit is written when its rewrite is due (earliest due first); when none
//!   is due, the next cold unit of the cycle (or of an earlier one) fills
//!   the gap: cold traffic fills what the hot units leave, as in the trace.
//!   When the cycle has no cold unit left, the next hot unit comes early.
//! * **Reads, time.** After each write request, read requests are added at
//!   the trace's ratio of read to write requests, each drawn from the
//!   trace's reads (a uniform sample of up to [`SAMPLES`]), addresses and
//!   sizes kept. Each request follows the one before by a gap drawn from
//!   the trace's inter-arrival gaps (a sample as large; 1 ms for a trace of
//!   one request).
//!
//! What it does not model: trims (the continuation has none; a trim in the
//! trace only breaks the interval it falls in), correlation between units
//! beyond their class (units written together in the trace drift apart),
//! and a block's own interval history beyond its class. A request partly
//! overwritten later in the trace is rewritten as the part it still holds,
//! so requests run a little smaller than the trace's. Laws are built from
//! uniform samples of up to [`RESERVOIR`] intervals per class. No published
//! generator is followed; the lifetime definition is the papers'.
//!
//! Measured (tests/integration/extend.rs, a 3,000-request MSR-layout day of
//! 0.45 drive-writes: Zipf 0.8 writes of 1-8 blocks, uniform reads): the
//! update intervals the continuation shows inside windows as long as the
//! trace are at a Kolmogorov-Smirnov distance of 0.024 from the trace's
//! (the test asserts < 0.1), write sizes at 0.09 (< 0.15), the read share
//! within 0.02; `repeat` 12 gives two-r, sepbit and nodap a steady WAF of
//! 1.000 each, an extension to 6 drive-writes 1.064, 1.066 and 1.001. On a
//! trace that sees a sequential log wrap once, the period is kept within 1%.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::sync::Arc;

use serde::Serialize;

use super::stats::BlockMap;
use super::{blocks_of, footprint, native, open_selected, ReadStats, Record, Selection};
use crate::error::{Error, Result};
use crate::request::Op;
use crate::rng::Rng;

/// Requests a write run holds at most.
pub const MAX_RUN_REQUESTS: usize = 32;
/// Blocks a write run spans at most (1 MiB of 4 KiB blocks): longer
/// sequential writes are several units, rewritten apart.
pub const MAX_RUN_BLOCKS: u64 = 256;
/// Intervals (and censored times) kept per class: a uniform sample.
pub const RESERVOIR: usize = 1 << 15;
/// Read requests and inter-arrival gaps kept: a uniform sample.
pub const SAMPLES: usize = 1 << 16;
/// The gap between requests when the trace has a single one [ns].
const DEFAULT_GAP_NS: u64 = 1_000_000;
/// Seed of the measurement's samples (the model is a function of the trace).
const MEASURE_SEED: u64 = 0x7ace_e87e;
const NONE: u32 = u32::MAX;
const NEVER: u64 = u64::MAX;

/// A uniform sample of up to `cap` values (Vitter's algorithm R).
struct Reservoir<T> {
    kept: Vec<T>,
    seen: u64,
    cap: usize,
}

impl<T> Reservoir<T> {
    fn new(cap: usize) -> Self {
        Reservoir {
            kept: Vec::new(),
            seen: 0,
            cap,
        }
    }

    fn add(&mut self, x: T, rng: &mut Rng) {
        self.seen += 1;
        if self.kept.len() < self.cap {
            self.kept.push(x);
        } else {
            let i = rng.below(self.seen);
            if (i as usize) < self.cap {
                self.kept[i as usize] = x;
            }
        }
    }

    /// Weight of each kept value: values seen per value kept.
    fn weight(&self) -> f64 {
        if self.kept.is_empty() {
            0.0
        } else {
            self.seen as f64 / self.kept.len() as f64
        }
    }
}

/// A class's interval law: the Kaplan-Meier survival function over the
/// intervals seen (events) and the times lived to the trace's end
/// (censored), as steps at the event values.
#[derive(Clone, Debug, Default)]
pub struct Law {
    /// Distinct interval values with an event, increasing [user blocks].
    values: Vec<u64>,
    /// Survival just after each value, decreasing.
    surv: Vec<f64>,
}

impl Law {
    fn new(events: &Reservoir<u64>, censored: &Reservoir<u64>) -> Law {
        let (we, wc) = (events.weight(), censored.weight());
        let mut obs: Vec<(u64, bool)> = events
            .kept
            .iter()
            .map(|&v| (v, true))
            .chain(censored.kept.iter().map(|&v| (v, false)))
            .collect();
        obs.sort_unstable();
        let mut at_risk = we * events.kept.len() as f64 + wc * censored.kept.len() as f64;
        let mut law = Law::default();
        let mut s = 1.0;
        let mut i = 0;
        while i < obs.len() {
            let v = obs[i].0;
            let (mut d, mut c) = (0.0, 0.0);
            while i < obs.len() && obs[i].0 == v {
                if obs[i].1 {
                    d += we;
                } else {
                    c += wc;
                }
                i += 1;
            }
            // Censored at v count as at risk at v (the usual convention).
            if d > 0.0 && at_risk > 0.0 {
                s *= (1.0 - d / at_risk).max(0.0);
                law.values.push(v);
                law.surv.push(s);
            }
            at_risk -= d + c;
        }
        law
    }

    /// The chance of an interval beyond the longest one seen.
    pub fn beyond(&self) -> f64 {
        self.surv.last().copied().unwrap_or(1.0)
    }

    /// An interval longer than `lived`, drawn from the law conditioned on
    /// it; `None` when it falls beyond the horizon (also when the law has
    /// no mass left past `lived`).
    fn draw_after(&self, lived: u64, rng: &mut Rng) -> Option<u64> {
        let i0 = self.values.partition_point(|&v| v <= lived);
        let s0 = if i0 == 0 { 1.0 } else { self.surv[i0 - 1] };
        if s0 <= 0.0 {
            return None;
        }
        let target = s0 * (1.0 - rng.next_f64());
        let i = i0 + self.surv[i0..].partition_point(|&s| s >= target);
        self.values.get(i).copied()
    }
}

/// Blocks last written together by one run, rewritten whole.
#[derive(Clone, Debug)]
struct Unit {
    /// The run's requests clipped to the unit: (offset, size) [bytes].
    reqs: Vec<(u64, u64)>,
    /// Device of the run's requests.
    device: u64,
    /// Blocks it spans.
    blocks: u64,
    /// Clock of its last write in the trace [user blocks].
    last: u64,
    /// Its class (index of its law).
    class: usize,
}

/// A run of the trace being measured.
struct Run {
    device: u64,
    reqs: Vec<(u64, u64)>,
    /// Byte where the run ends (the next request must start there).
    end: u64,
    blocks: u64,
    /// Blocks whose last write is this run's.
    owned: u64,
}

/// Per block: clock of its last write (`NEVER` after a trim or before a
/// write) and the run that wrote it last (`NONE` if trimmed).
#[derive(Clone, Copy)]
struct BlockState {
    last: u64,
    run: u32,
}

/// Class of a block written `k` times: 1-2, 3-4, 5-8, 9-16, ... -> 0, 1,
/// 2, 3, ...
fn class_of(k: u64) -> usize {
    (64 - k.max(2).saturating_sub(1).leading_zeros()) as usize - 1
}

/// What a continuation is generated from: the trace's units, laws, reads
/// and gaps (one measurement, shared by every continuation of it).
#[derive(Debug)]
pub struct Model {
    units: Vec<Unit>,
    laws: Vec<Law>,
    /// Sampled read requests: (device, offset, size).
    reads: Vec<(u64, u64, u64)>,
    /// Sampled inter-arrival gaps [ns].
    gaps: Vec<u64>,
    /// Read requests per write request.
    /// Write requests of the trace.
    write_requests: u64,
    read_ratio: f64,
    /// Blocks the trace writes: the clock at its end [user blocks].
    written: u64,
    /// Time of the trace's last request [ns since its first].
    end_ns: u64,
}

impl Model {
    /// Measure the selected requests of `path` (two passes) in blocks of
    /// `block_size`.
    pub fn measure(
        path: &str,
        format: Option<&str>,
        sel: &Selection,
        block_size: u32,
    ) -> Result<Model> {
        // Pass 1: how often each block is written (its class).
        let (mut src, format) = open_selected(path, format, sel)?;
        let mut count: BlockMap<u64> = BlockMap::default();
        while let Some(r) = src.next_record()? {
            if r.op == Op::Write {
                let (first, n) = blocks_of(&r, block_size);
                for b in first..first + n {
                    *count.entry(b).or_insert(0) += 1;
                }
            }
        }
        // Pass 2: intervals by class, runs, reads, gaps.
        let (mut src, _) = open_selected(path, Some(&format), sel)?;
        let mut rng = Rng::new(MEASURE_SEED);
        // The file is read twice: a block the first pass did not see (the
        // file changed between them) counts as written once.
        let writes_of = |b: &u64| count.get(b).copied().unwrap_or(1);
        let classes = count.values().map(|&k| class_of(k)).max().unwrap_or(0) + 1;
        let mut events: Vec<Reservoir<u64>> =
            (0..classes).map(|_| Reservoir::new(RESERVOIR)).collect();
        let mut censored: Vec<Reservoir<u64>> =
            (0..classes).map(|_| Reservoir::new(RESERVOIR)).collect();
        let mut reads = Reservoir::new(SAMPLES);
        let mut gaps = Reservoir::new(SAMPLES);
        let mut blocks: BlockMap<BlockState> = BlockMap::default();
        let mut runs: Vec<Run> = Vec::new();
        let mut cur = NONE;
        let (mut clock, mut n_reads, mut n_writes) = (0u64, 0u64, 0u64);
        let mut prev_t: Option<u64> = None;
        let mut end_ns = 0;
        while let Some(r) = src.next_record()? {
            if let Some(p) = prev_t {
                gaps.add(r.time_ns - p, &mut rng);
            }
            prev_t = Some(r.time_ns);
            end_ns = r.time_ns;
            let (first, n) = blocks_of(&r, block_size);
            match r.op {
                Op::Read => {
                    n_reads += 1;
                    reads.add((r.device, r.offset, r.size), &mut rng);
                }
                Op::Trim => {
                    for b in first..first + n {
                        if let Some(st) = blocks.get_mut(&b) {
                            st.last = NEVER;
                            release(&mut runs, st.run);
                            st.run = NONE;
                        }
                    }
                }
                Op::Write => {
                    n_writes += 1;
                    let extends = cur != NONE && {
                        let run = &runs[cur as usize];
                        run.end == r.offset
                            && run.device == r.device
                            && run.reqs.len() < MAX_RUN_REQUESTS
                            && run.blocks + n <= MAX_RUN_BLOCKS
                    };
                    if !extends {
                        if runs.len() >= NONE as usize {
                            return Err(Error::trace(
                                path,
                                None,
                                "too many write runs to extend (over 4 billion)",
                            ));
                        }
                        runs.push(Run {
                            device: r.device,
                            reqs: Vec::new(),
                            end: r.offset,
                            blocks: 0,
                            owned: 0,
                        });
                        cur = runs.len() as u32 - 1;
                    }
                    let run = &mut runs[cur as usize];
                    run.reqs.push((r.offset, r.size));
                    run.end = r.offset.saturating_add(r.size);
                    run.blocks += n;
                    for b in first..first + n {
                        let st = blocks.entry(b).or_insert(BlockState {
                            last: NEVER,
                            run: NONE,
                        });
                        if st.last != NEVER {
                            events[class_of(writes_of(&b)).min(classes - 1)]
                                .add(clock - st.last, &mut rng);
                        }
                        st.last = clock;
                        if st.run != cur {
                            release(&mut runs, st.run);
                            st.run = cur;
                            runs[cur as usize].owned += 1;
                        }
                        clock += 1;
                    }
                }
            }
        }
        if clock == 0 {
            return Err(Error::trace(
                path,
                None,
                "the selected requests write no block: nothing to extend",
            ));
        }
        // The trace's end censors every block's last interval.
        let mut owned: Vec<(u32, u64, u64)> = Vec::new();
        for (&b, st) in &blocks {
            if st.last != NEVER {
                censored[class_of(writes_of(&b)).min(classes - 1)].add(clock - st.last, &mut rng);
            }
            if st.run != NONE {
                owned.push((st.run, b, st.last));
            }
        }
        owned.sort_unstable();
        let bs = block_size as u64;
        let mut units = Vec::new();
        let mut i = 0;
        while i < owned.len() {
            let (run, start, mut last) = owned[i];
            let (mut end, mut writes) = (start + 1, writes_of(&start));
            i += 1;
            while i < owned.len() && owned[i].0 == run && owned[i].1 == end {
                last = last.min(owned[i].2);
                writes += writes_of(&end);
                end += 1;
                i += 1;
            }
            let r = &runs[run as usize];
            let (lo, hi) = (start * bs, end * bs);
            let reqs = r
                .reqs
                .iter()
                .filter_map(|&(o, s)| {
                    let (a, z) = (o.max(lo), o.saturating_add(s).min(hi));
                    (a < z).then(|| (a, z - a))
                })
                .collect();
            let blocks = end - start;
            units.push(Unit {
                reqs,
                device: r.device,
                blocks,
                last,
                class: class_of((writes as f64 / blocks as f64).round() as u64).min(classes - 1),
            });
        }
        let laws = events
            .iter()
            .zip(&censored)
            .map(|(e, c)| Law::new(e, c))
            .collect();
        Ok(Model {
            units,
            laws,
            reads: reads.kept,
            gaps: gaps.kept,
            read_ratio: n_reads as f64 / n_writes.max(1) as f64,
            write_requests: n_writes,
            written: clock,
            end_ns,
        })
    }

    /// Blocks the trace writes [user blocks].
    pub fn written_blocks(&self) -> u64 {
        self.written
    }

    /// Requests a continuation writing `blocks` user blocks makes, about:
    /// writes of the trace's mean size, and its reads per write.
    pub fn requests_for(&self, blocks: u64) -> f64 {
        let per_write = self.written.max(1) as f64 / self.write_requests.max(1) as f64;
        blocks as f64 / per_write * (1.0 + self.read_ratio)
    }

    /// Units the continuation rewrites.
    pub fn units(&self) -> usize {
        self.units.len()
    }

    /// The law of class `c` (blocks written 1, 2, 3-4, ... times).
    pub fn law(&self, c: usize) -> Option<&Law> {
        self.laws.get(c)
    }
}

/// The run that lost block ownership: free its requests once it owns none.
fn release(runs: &mut [Run], run: u32) {
    if run != NONE {
        let r = &mut runs[run as usize];
        r.owned -= 1;
        if r.owned == 0 {
            r.reqs = Vec::new();
        }
    }
}

/// A trace's extension as a run plans it: the model, the seed and the
/// user blocks to add.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The trace's model.
    pub model: Arc<Model>,
    /// Seed of the continuation's draws.
    pub seed: u64,
    /// User blocks the continuation writes.
    pub blocks: u64,
}

impl Plan {
    /// Extend the selected requests of `path` to `drive_writes` in all
    /// (trace and continuation) of a `logical_blocks`-block device; a trace
    /// already that long gets no continuation.
    pub fn new(
        path: &str,
        format: Option<&str>,
        sel: &Selection,
        block_size: u32,
        logical_blocks: u64,
        drive_writes: f64,
        seed: u64,
    ) -> Result<Plan> {
        if !(drive_writes.is_finite() && drive_writes > 0.0) {
            return Err(Error::config(
                "extend",
                format!("{drive_writes}; must be a finite number of drive-writes > 0"),
            ));
        }
        let model = Model::measure(path, format, sel, block_size)?;
        let total = (drive_writes * logical_blocks as f64).round() as u64;
        Ok(Plan {
            blocks: total.saturating_sub(model.written),
            model: Arc::new(model),
            seed,
        })
    }

    /// The continuation, from its start.
    pub fn continuation(&self) -> Continuation {
        Continuation::new(Arc::clone(&self.model), self.seed, self.blocks)
    }
}

/// Counts of a continuation so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ContinuationStats {
    /// User blocks the trace writes (where the continuation starts).
    pub trace_write_blocks: u64,
    /// User blocks the continuation was planned to write.
    pub planned_write_blocks: u64,
    /// Requests generated so far.
    pub requests: u64,
    /// User blocks they write.
    pub write_blocks: u64,
}

/// The requests after a trace, drawn from its [`Model`] with a seed, until
/// a given number of user blocks is written.
pub struct Continuation {
    model: Arc<Model>,
    rng: Rng,
    /// Units by due clock (rewrite drawn from the law).
    hot: BinaryHeap<Reverse<(u64, u32)>>,
    /// Cold units by cycle (of `L` blocks; the trace is cycle 0) and a
    /// random place in it.
    cold: BinaryHeap<Reverse<(u64, u64, u32)>>,
    /// Clock [user blocks since the trace's start] and where to stop.
    clock: u64,
    end: u64,
    /// Time of the last request [ns since the trace's first].
    time: u64,
    pending: VecDeque<Record>,
    read_credit: f64,
    stats: ContinuationStats,
}

impl Continuation {
    /// A continuation of `model`'s trace that writes `blocks` user blocks
    /// (the unit that reaches them is written whole), drawn with `seed`.
    pub fn new(model: Arc<Model>, seed: u64, blocks: u64) -> Self {
        let mut c = Continuation {
            rng: Rng::derive(seed, 0x00e8_7e4d),
            hot: BinaryHeap::with_capacity(model.units.len()),
            cold: BinaryHeap::new(),
            clock: model.written,
            end: model.written.saturating_add(blocks),
            time: model.end_ns,
            pending: VecDeque::new(),
            read_credit: 0.0,
            stats: ContinuationStats {
                trace_write_blocks: model.written,
                planned_write_blocks: blocks,
                ..Default::default()
            },
            model,
        };
        let m = Arc::clone(&c.model);
        for (id, u) in m.units.iter().enumerate() {
            let lived = m.written - u.last;
            match m.laws[u.class].draw_after(lived, &mut c.rng) {
                Some(d) => c.hot.push(Reverse((u.last + d, id as u32))),
                None => c.go_cold(0, id as u32),
            }
        }
        c
    }

    /// Unit `id`, written in cycle `cycle`, goes cold: rewritten in the next
    /// cycle at a random place.
    fn go_cold(&mut self, cycle: u64, id: u32) {
        let place = self.rng.next_u64();
        self.cold.push(Reverse((cycle + 1, place, id)));
    }

    fn gap(&mut self) -> u64 {
        match self.model.gaps.len() {
            0 => DEFAULT_GAP_NS,
            n => self.model.gaps[self.rng.below(n as u64) as usize],
        }
    }

    /// The unit to write next: a hot one due, else a cold one of this cycle
    /// (or an earlier one), else the next hot one early, else the next
    /// cycle's cold one.
    fn pick(&mut self) -> Option<u32> {
        let cycle = self.clock / self.model.written;
        let hot_due = matches!(self.hot.peek(), Some(Reverse((due, _))) if *due <= self.clock);
        let cold_now = matches!(self.cold.peek(), Some(Reverse((c, _, _))) if *c <= cycle);
        let hot = |s: &mut Self| s.hot.pop().map(|Reverse((_, id))| id);
        let cold = |s: &mut Self| s.cold.pop().map(|Reverse((_, _, id))| id);
        if hot_due || (!cold_now && !self.hot.is_empty()) {
            hot(self)
        } else {
            cold(self)
        }
    }

    /// The next request, `None` once the continuation has written its blocks.
    pub fn next_record(&mut self) -> Option<Record> {
        if let Some(r) = self.pending.pop_front() {
            return Some(r);
        }
        if self.clock >= self.end {
            return None;
        }
        let id = self.pick()?;
        let m = Arc::clone(&self.model);
        let u = &m.units[id as usize];
        for &(offset, size) in &u.reqs {
            self.time += self.gap();
            self.pending.push_back(Record {
                time_ns: self.time,
                device: u.device,
                op: Op::Write,
                offset,
                size,
            });
            self.read_credit += m.read_ratio;
            while self.read_credit >= 1.0 && !m.reads.is_empty() {
                self.read_credit -= 1.0;
                let (device, offset, size) = m.reads[self.rng.below(m.reads.len() as u64) as usize];
                self.time += self.gap();
                self.pending.push_back(Record {
                    time_ns: self.time,
                    device,
                    op: Op::Read,
                    offset,
                    size,
                });
            }
        }
        let at = self.clock;
        self.clock += u.blocks;
        self.stats.write_blocks += u.blocks;
        self.stats.requests += self.pending.len() as u64;
        match m.laws[u.class].draw_after(0, &mut self.rng) {
            Some(d) => self.hot.push(Reverse((at + d, id))),
            None => self.go_cold(at / m.written, id),
        }
        self.pending.pop_front()
    }

    /// Counts so far.
    pub fn stats(&self) -> ContinuationStats {
        self.stats
    }
}

/// What `wafer traces extend` wrote.
#[derive(Clone, Debug, Serialize)]
pub struct Written {
    /// The trace's format.
    pub format: String,
    /// Its footprint, the drive-writes' base [blocks].
    pub footprint_blocks: u64,
    /// Drive-writes of the trace alone.
    pub trace_drive_writes: f64,
    /// Drive-writes of the file written (trace and continuation).
    pub drive_writes: f64,
    /// Reading counts of the trace.
    pub read: ReadStats,
    /// The continuation.
    pub continuation: ContinuationStats,
}

/// Free space an extension leaves on its disk at least [bytes].
const DISK_MARGIN: u64 = 256 << 20;

/// Write the selected requests of `path` and a continuation to
/// `drive_writes` in all (of its footprint in `block_size` blocks, the
/// device a replay sizes from it) to `out`, a native trace.
pub fn write_extended(
    path: &str,
    format: Option<&str>,
    sel: &Selection,
    block_size: u32,
    drive_writes: f64,
    seed: u64,
    out: &str,
) -> Result<Written> {
    if !block_size.is_power_of_two() || block_size < 512 {
        return Err(Error::config(
            "block_size",
            format!("{block_size}: must be a power of two >= 512"),
        ));
    }
    let (mut src, format) = open_selected(path, format, sel)?;
    let (_, map, error) = footprint(path, Some(&format), sel, block_size)?;
    if let Some(e) = error {
        return Err(e);
    }
    let blocks = map.blocks();
    let plan = Plan::new(
        path,
        Some(&format),
        sel,
        block_size,
        blocks,
        drive_writes,
        seed,
    )?;
    // The file's size, about (a native row is 33 bytes), against the disk's
    // free space: a drive-writes count too large for the disk is refused
    // before anything is written.
    let rows = plan
        .model
        .requests_for(plan.blocks + plan.model.written_blocks());
    let bytes = rows * native::ROW_BYTES as f64;
    let dir = std::path::Path::new(out)
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    if let Some(free) = crate::host::disk_free(dir) {
        if bytes > free.saturating_sub(DISK_MARGIN) as f64 {
            return Err(Error::config(
                "drive_writes",
                format!(
                    "{drive_writes} drive-writes of this trace's {blocks}-block footprint would write \
                     about {:.1} GB ({:.3e} requests) to {out}, more than the {:.1} GB free there \
                     (less a {} MiB margin); ask for fewer drive-writes",
                    bytes / 1e9,
                    rows,
                    free as f64 / 1e9,
                    DISK_MARGIN >> 20,
                ),
            ));
        }
    }
    let mut cont = plan.continuation();
    native::write_records(
        || match src.next_record()? {
            Some(r) => Ok(Some(r)),
            None => Ok(cont.next_record()),
        },
        out,
        path,
        &format!("{format}+extend"),
    )?;
    let c = cont.stats();
    let dw = |b: u64| b as f64 / blocks.max(1) as f64;
    Ok(Written {
        format,
        footprint_blocks: blocks,
        trace_drive_writes: dw(c.trace_write_blocks),
        drive_writes: dw(c.trace_write_blocks + c.write_blocks),
        read: src.stats(),
        continuation: c,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reservoir(values: &[u64]) -> Reservoir<u64> {
        let mut r = Reservoir::new(RESERVOIR);
        let mut rng = Rng::new(1);
        for &v in values {
            r.add(v, &mut rng);
        }
        r
    }

    #[test]
    fn classes_are_powers_of_two_of_the_write_count() {
        let c: Vec<usize> = [1, 2, 3, 4, 5, 8, 9].iter().map(|&k| class_of(k)).collect();
        assert_eq!(c, [0, 0, 1, 1, 2, 2, 3]);
    }

    #[test]
    fn kaplan_meier_counts_censored_lives() {
        // events 10, 20; censored 15 and 30: S(10) = 3/4, S(20) = 3/4 * 1/2
        let law = Law::new(&reservoir(&[10, 20]), &reservoir(&[15, 30]));
        assert_eq!(law.values, [10, 20]);
        assert!((law.surv[0] - 0.75).abs() < 1e-12 && (law.surv[1] - 0.375).abs() < 1e-12);
        assert!((law.beyond() - 0.375).abs() < 1e-12);
        let mut rng = Rng::new(7);
        let n = 100_000;
        let (mut ten, mut twenty, mut beyond) = (0, 0, 0);
        for _ in 0..n {
            match law.draw_after(0, &mut rng) {
                Some(10) => ten += 1,
                Some(20) => twenty += 1,
                None => beyond += 1,
                other => panic!("{other:?}"),
            }
        }
        let share = |k: i32| k as f64 / n as f64;
        assert!((share(ten) - 0.25).abs() < 0.01, "{ten}");
        assert!((share(twenty) - 0.375).abs() < 0.01, "{twenty}");
        assert!((share(beyond) - 0.375).abs() < 0.01, "{beyond}");
        // having lived 12: only 20 or beyond, half and half
        for _ in 0..1000 {
            assert_ne!(law.draw_after(12, &mut rng), Some(10));
        }
        // a class written once has no interval: always beyond
        let once = Law::new(&reservoir(&[]), &reservoir(&[5, 9]));
        assert_eq!(once.draw_after(0, &mut rng), None);
    }
}
