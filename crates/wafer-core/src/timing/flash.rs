//! The flash back end: channels, dies, the transaction scheduler (TSU) and
//! the operations in flight (MQSim's `TSU_Priority_OutOfOrder` and `NVM_PHY_ONFI_NVDDR2`).
//!
//! * Operations live in a slab of small records (`Op`), reused through a
//!   free list: memory grows with the operations in flight, never with the
//!   device (nothing per physical page).
//! * Each die has one FIFO per class ([`Class`]); when the die is idle and
//!   has work it asks for its channel, and when the channel grants it (at
//!   once, or when the bus frees), the die picks its next batch by priority
//!   at that moment (late binding, as MQSim's TSU does on channel-idle):
//!   mapping reads > user reads > mapping writes > user writes > GC reads >
//!   GC writes > erases; in urgent GC mode GC reads, writes and erases go
//!   right after mapping reads.
//! * A batch is up to one operation per plane of the die with the same
//!   kind and page offset (multi-plane), gathered from the class's queue and
//!   its partner's (user + GC), keeping each plane's order; any plane count.
//!   Dies of a chip and chips of a channel interleave: the channel is held
//!   only for command and data transfers. Dies whose read data waits for
//!   the channel go before dies waiting to send a command: mapping reads'
//!   data first, then user reads', then GC reads', each in the order their
//!   arrays finished (MQSim's PHY serves its waiting read transfers so).
//! * Suspension: a read arriving at a die busy programming (or erasing; a
//!   user write too for erases) suspends the array operation when more than
//!   the preset's threshold remains, at the preset's cost, serves what it
//!   may, then resumes the remaining time. Each operation is suspended at
//!   most once, and GC operations are not suspended in urgent mode.
//! * Ordering the synchronous FTL cannot see: an erase of a segment waits
//!   until every operation on it has finished, except the programs parked
//!   behind that erase; a program into a segment whose erase has not
//!   finished is parked until it has (urgent mode is on while anything is
//!   parked); a GC program waits for its read. (The FTL runs ahead of the
//!   flash: with little spare space it refills a segment whose erase still
//!   waits for the reads that moved its data, so the new programs must not
//!   hold that erase back; an erase asked for again before it was issued
//!   is one erase.) A copyback
//!   is a GC read and program on one die that move no data over the channel.

use super::config::{ChipIssue, SsdConfig, Suspend};
use super::events::{Event, EventQueue};
use super::layout::{Layout, Loc};

/// "No operation / no link".
pub const NONE: u32 = u32::MAX;

/// Bits of a payload that hold the object id ([`Event::ID_BITS`]).
pub const ID_BITS: u32 = Event::ID_BITS;
const DIE_BITS: u32 = 17;
const GEN_MASK: u32 = (1 << (ID_BITS - DIE_BITS)) - 1;

/// The die part of a die timer's id.
const DIE_MASK: u32 = (1 << DIE_BITS) - 1;

/// The id of a die timer: the die, and its generation (a suspension bumps
/// it, so the timer of the suspended operation is recognised as stale).
#[inline]
fn die_timer(die: u32, gen: u16) -> u32 {
    die | ((gen as u32) << DIE_BITS)
}

/// Queue (and statistics) class of an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Class {
    /// Translation-page read for a mapping-table miss.
    MapRead = 0,
    /// Host read (and the read of a read-modify-write).
    UserRead = 1,
    /// GC read of a valid page.
    GcRead = 2,
    /// Translation-page write back (its merge read, its program, and the
    /// translation area's cleaning).
    MapWrite = 3,
    /// Program of host data.
    UserWrite = 4,
    /// GC program of a moved page.
    GcWrite = 5,
    /// Block erase.
    Erase = 6,
}

/// Number of classes.
pub const CLASSES: usize = 7;
/// Class names, in `Class` order (JSON keys).
pub const CLASS_NAMES: [&str; CLASSES] = [
    "mapping_read",
    "user_read",
    "gc_read",
    "mapping_write",
    "user_write",
    "gc_write",
    "erase",
];

const NORMAL: [Class; CLASSES] = [
    Class::MapRead,
    Class::UserRead,
    Class::MapWrite,
    Class::UserWrite,
    Class::GcRead,
    Class::GcWrite,
    Class::Erase,
];
const URGENT: [Class; CLASSES] = [
    Class::MapRead,
    Class::GcRead,
    Class::GcWrite,
    Class::Erase,
    Class::UserRead,
    Class::MapWrite,
    Class::UserWrite,
];

fn partner(c: Class) -> Option<Class> {
    match c {
        Class::MapRead | Class::GcRead => Some(Class::UserRead),
        Class::UserRead => Some(Class::GcRead),
        Class::MapWrite | Class::GcWrite => Some(Class::UserWrite),
        Class::UserWrite => Some(Class::GcWrite),
        Class::Erase => None,
    }
}

/// What the die does with an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// Command, array read, data out.
    Read,
    /// Command and data in, array program.
    Program,
    /// Command, array erase.
    Erase,
}

/// One flash operation in flight.
#[derive(Clone, Copy, Debug)]
pub struct Op {
    /// What the die does.
    pub kind: Kind,
    /// Its queue.
    pub class: Class,
    suspended: bool,
    /// Global die.
    pub die: u32,
    /// Global plane.
    pub plane: u32,
    /// Page inside the block (page type).
    pub page: u32,
    /// Unit whose erase must wait for this operation (segment, or
    /// translation block row), or [`NONE`].
    pub seg: u32,
    /// Bytes moved over the channel.
    pub bytes: u32,
    /// The driver's tag (who waits for this operation).
    pub owner: u32,
    /// Operation made ready when this one finishes, or [`NONE`].
    pub then: u32,
    next: u32,
    enq: u64,
}

impl Op {
    /// An operation at `at` with no dependents.
    pub fn new(kind: Kind, class: Class, at: Loc, seg: u32, bytes: u32, owner: u32) -> Op {
        Op {
            kind,
            class,
            suspended: false,
            die: at.die,
            plane: at.plane,
            page: at.page,
            seg,
            bytes,
            owner,
            then: NONE,
            next: NONE,
            enq: 0,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Idle,
    WantChannel,
    Array,
    WantDataOut,
    DataOut,
    Suspending,
}

/// What the scheduler reads of a die at every event: one cache line
/// (queue tails and the suspended operation are kept apart, in `Flash`).
#[derive(Clone, Debug)]
#[repr(align(64))]
struct Die {
    /// Head of each class's queue.
    head: [u32; CLASSES],
    batch: u32,
    /// Timer generation (12 bits, see `die_timer`).
    gen: u16,
    phase: Phase,
    batch_kind: Kind,
    /// Bit `c` set while class `c`'s queue holds operations.
    queued: u8,
    active: bool,
    /// An operation is suspended (its state in `Flash::susp`).
    suspended: bool,
    /// Its chip and channel.
    chip: u32,
    chan: u32,
    array_end: u64,
    busy_ns: u64,
}

const _: () = assert!(std::mem::size_of::<Die>() == 64);

/// A die's suspended operation, and when its array operation started.
#[derive(Clone, Debug)]
struct Susp {
    batch: u32,
    remaining: u64,
    kind: Kind,
    served: u32,
    array_start: u64,
}

#[derive(Clone, Debug)]
struct Channel {
    free_at: u64,
    /// Dies waiting, in four lines served in order: read data out by
    /// priority (mapping, user, GC reads; before any command, as MQSim's
    /// PHY serves its waiting read transfers), then commands (and a
    /// program's data). Each line is a list through `Flash::wait_next`, in
    /// the order the dies came.
    head: [u32; 4],
    tail: [u32; 4],
    /// Dies in the data-out lines, and in all.
    outs_waiting: u32,
    waiting: u32,
    event: bool,
    busy_ns: u64,
}

impl Channel {
    fn new() -> Channel {
        Channel {
            free_at: 0,
            head: [NONE; 4],
            tail: [NONE; 4],
            outs_waiting: 0,
            waiting: 0,
            event: false,
            busy_ns: 0,
        }
    }

    /// Die `die` waits: for a data out of priority `line` (0-2), or
    /// (`line` 3) to send a command.
    #[inline]
    fn wait(&mut self, next: &mut [u32], die: u32, line: usize) {
        self.waiting += 1;
        if line < 3 {
            self.outs_waiting += 1;
        }
        next[die as usize] = NONE;
        match self.tail[line] {
            NONE => self.head[line] = die,
            t => next[t as usize] = die,
        }
        self.tail[line] = die;
    }

    /// The die the channel goes to next.
    #[inline]
    fn next_waiter(&mut self, next: &[u32]) -> Option<u32> {
        if self.waiting == 0 {
            return None;
        }
        self.waiting -= 1;
        let line = if self.outs_waiting > 0 {
            self.outs_waiting -= 1;
            (0..3)
                .find(|&l| self.head[l] != NONE)
                .expect("a data-out waiter")
        } else {
            3
        };
        let d = self.head[line];
        self.head[line] = next[d as usize];
        if self.head[line] == NONE {
            self.tail[line] = NONE;
        }
        Some(d)
    }
}

/// Precomputed timing of the preset [ns].
#[derive(Clone, Debug)]
pub struct Timing {
    ns_per_byte: f64,
    page_bytes: u32,
    xfer_page: u64,
    read: Vec<u64>,
    program: Vec<u64>,
    /// Erase time of one segment slice on one plane [ns].
    pub erase: u64,
    cmd_read: u64,
    cmd_program: u64,
    cmd_erase: u64,
    dbsy: u64,
    suspend: Suspend,
    suspend_program: u64,
    suspend_erase: u64,
    program_for_read: u64,
    erase_for_read: u64,
    erase_for_write: u64,
    technology: super::config::Technology,
}

impl Timing {
    /// The timing of `ssd` with segment slices of `slice` pages per plane
    /// (the erase time scales with the slice, see `Layout`).
    pub fn new(ssd: &SsdConfig, slice: u32) -> Timing {
        let f = &ssd.flash;
        let ns_per_byte = if f.channel_rate_mts > 0.0 {
            1000.0 / (f.channel_width_bytes as f64 * f.channel_rate_mts)
        } else {
            0.0
        };
        let scale = slice as f64 / f.pages_per_block as f64;
        Timing {
            ns_per_byte,
            page_bytes: f.page_bytes,
            xfer_page: (f.page_bytes as f64 * ns_per_byte).round() as u64,
            read: f.read_ns.iter().map(|r| r + f.read_rb_ns).collect(),
            program: f.program_ns.clone(),
            erase: ((f.erase_ns as f64 * scale).round() as u64).max(1),
            cmd_read: f.cmd_read_ns,
            cmd_program: f.cmd_program_ns,
            cmd_erase: f.cmd_erase_ns,
            dbsy: f.dbsy_ns,
            suspend: f.suspend,
            suspend_program: f.suspend_program_ns,
            suspend_erase: f.suspend_erase_ns,
            program_for_read: f.suspend_program_for_read_ns,
            erase_for_read: f.suspend_erase_for_read_ns,
            erase_for_write: f.suspend_erase_for_write_ns,
            technology: f.technology,
        }
    }

    /// Channel time of `bytes` [ns], rounded to the nearest ns (no integer
    /// truncation of the cycle time, unlike MQSim's `(int)(1000 / rate)`).
    #[inline]
    pub fn xfer(&self, bytes: u32) -> u64 {
        if bytes == self.page_bytes {
            self.xfer_page
        } else {
            (bytes as f64 * self.ns_per_byte + 0.5) as u64
        }
    }

    /// n-plane command time: cmd + (n - 1) (tDBSY + cmd), any n.
    #[inline]
    fn cmd(&self, c: u64, n: u64) -> u64 {
        c + (n - 1) * (self.dbsy + c)
    }

    /// Array read time of page `page` (R/B delay included) [ns].
    #[inline]
    pub fn read_ns(&self, page: u32) -> u64 {
        self.read[self.technology.page_type(page)]
    }

    /// Array program time of page `page` [ns].
    #[inline]
    pub fn program_ns(&self, page: u32) -> u64 {
        self.program[self.technology.page_type(page)]
    }

    /// One-plane read command [ns].
    pub fn cmd_read(&self) -> u64 {
        self.cmd_read
    }

    /// One-plane program command [ns].
    pub fn cmd_program(&self) -> u64 {
        self.cmd_program
    }
}

/// What the flash back end counted.
#[derive(Clone, Debug, Default)]
pub struct FlashStats {
    /// Operations finished per class.
    pub ops: [u64; CLASSES],
    /// Pages read.
    pub reads: u64,
    /// Pages programmed.
    pub programs: u64,
    /// Pages programmed per page type (LSB, CSB or MSB, MSB; a page's type
    /// follows its row in its physical block).
    pub programs_by_type: [u64; 3],
    /// Erase operations (one per plane slice).
    pub erases: u64,
    /// Batches of more than one plane.
    pub multiplane: u64,
    /// Batches in all.
    pub batches: u64,
    /// Suspensions of a program / an erase.
    pub suspended_programs: u64,
    /// Suspensions of an erase.
    pub suspended_erases: u64,
    /// Time from ready to start, summed per class [ns].
    pub wait_sum: [u64; CLASSES],
    /// Longest wait per class [ns].
    pub wait_max: [u64; CLASSES],
    /// Bytes moved over the channels.
    pub channel_bytes: u64,
    /// Programs that waited for an erase of their block.
    pub parked: u64,
}

/// Channels, dies, queues and operations in flight.
pub struct Flash {
    ops: Vec<Op>,
    free: Vec<u32>,
    dies: Vec<Die>,
    /// Tail of each class's queue, per die.
    tails: Vec<[u32; CLASSES]>,
    /// Suspension state per die.
    susp: Vec<Susp>,
    chans: Vec<Channel>,
    /// The die after each in its channel's waiting line.
    wait_next: Vec<u32>,
    chip_active: Vec<u32>,
    chip_since: Vec<u64>,
    chip_busy: Vec<u64>,
    /// Operations allocated on each unit and not finished (parked included).
    seg_inflight: Vec<u32>,
    /// Erase operations issued on each unit and not finished.
    seg_erase: Vec<u32>,
    /// An erase asked for and not issued yet.
    seg_armed: Vec<bool>,
    /// Parked programs of each unit: a list through `Op::next`, and its length.
    seg_park: Vec<u32>,
    seg_parked: Vec<u32>,
    parked: u32,
    /// Units whose erase is armed or running.
    erasing: u32,
    /// Of those, data segments.
    erasing_segments: u32,
    /// Operations with an owner finished since the driver last looked (it
    /// frees them; those without one are freed when they finish).
    done: Vec<u32>,
    /// What the urgent mode is computed from (parked programs, erasing
    /// segments) changed since the driver last computed it.
    urgent_stale: bool,
    /// Urgent GC mode (the driver's rule, [`Flash::update_urgent`]; see the module doc).
    urgent: bool,
    /// Timing constants.
    t: Timing,
    /// Counts.
    stats: FlashStats,
    layout: Layout,
    ppd: u32,
    /// Dies whose operation is under way (the "no operation on a busy die"
    /// check counts a violation here; always 0).
    busy_violations: u64,
    /// `chip_issue = "chip"`: the die of each chip that holds it (`NONE`:
    /// the chip is idle); empty when dies are scheduled on their own.
    chip_owner: Vec<u32>,
    dies_per_chip: u32,
}

/// A chip's owner while the operations its die finished are handed on.
const HANDING: u32 = NONE - 1;

/// Batches a die serves while an operation is suspended, before it resumes.
const SUSPEND_SERVE_MAX: u32 = 8;
/// Queue entries scanned for multi-plane partners.
const SCAN_LIMIT: u32 = 64;

impl Flash {
    /// An idle array for `layout`; `units` = segments + translation block
    /// rows (the units erases wait on).
    pub fn new(ssd: &SsdConfig, layout: Layout, units: u32) -> Flash {
        let die = Die {
            head: [NONE; CLASSES],
            batch: NONE,
            gen: 0,
            phase: Phase::Idle,
            batch_kind: Kind::Read,
            queued: 0,
            active: false,
            suspended: false,
            chip: 0,
            chan: 0,
            array_end: 0,
            busy_ns: 0,
        };
        let susp = Susp {
            batch: NONE,
            remaining: 0,
            kind: Kind::Program,
            served: 0,
            array_start: 0,
        };
        let chips = layout.chips() as usize;
        let dies = (0..layout.dies)
            .map(|i| Die {
                chip: layout.chip_of(i),
                chan: layout.channel_of(i),
                ..die.clone()
            })
            .collect();
        Flash {
            ops: Vec::with_capacity(1024),
            free: Vec::new(),
            tails: vec![[NONE; CLASSES]; layout.dies as usize],
            susp: vec![susp; layout.dies as usize],
            dies,
            chans: vec![Channel::new(); layout.channels as usize],
            wait_next: vec![NONE; layout.dies as usize],
            chip_active: vec![0; chips],
            chip_since: vec![0; chips],
            chip_busy: vec![0; chips],
            seg_inflight: vec![0; units as usize],
            seg_erase: vec![0; units as usize],
            seg_armed: vec![false; units as usize],
            seg_park: vec![NONE; units as usize],
            seg_parked: vec![0; units as usize],
            parked: 0,
            erasing: 0,
            erasing_segments: 0,
            done: Vec::new(),
            urgent_stale: false,
            urgent: false,
            t: Timing::new(ssd, layout.slice),
            stats: FlashStats::default(),
            ppd: layout.planes_per_die,
            chip_owner: match ssd.flash.chip_issue {
                ChipIssue::Die => Vec::new(),
                ChipIssue::Chip => vec![NONE; chips],
            },
            dies_per_chip: ssd.flash.dies_per_chip,
            layout,
            busy_violations: 0,
        }
    }

    /// The layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Whether operations with an owner finished since the driver last
    /// took them ([`Flash::take_done`]).
    #[inline]
    pub fn has_done(&self) -> bool {
        !self.done.is_empty()
    }

    /// The operations with an owner that finished since the last look (the
    /// driver releases them; those without one are released when they
    /// finish). Give the list back with [`Flash::recycle_done`].
    #[inline]
    pub fn take_done(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.done)
    }

    /// A list [`Flash::take_done`] gave, handled: its room is reused when
    /// no operation finished meanwhile.
    #[inline]
    pub fn recycle_done(&mut self, mut list: Vec<u32>) {
        list.clear();
        if self.done.is_empty() {
            self.done = list;
        }
    }

    /// Whether what the urgent mode is computed from (parked programs,
    /// erasing segments) changed since [`Flash::update_urgent`] last ran.
    #[inline]
    pub fn urgent_stale(&self) -> bool {
        self.urgent_stale
    }

    /// Compute the urgent GC mode: on when GC is not preemptible
    /// (`preemptible` false), when programs are parked behind erases, or
    /// when fewer than `hard_segments` of the FTL's `free_segments` are
    /// erased (not waiting for their erase).
    #[inline]
    pub fn update_urgent(&mut self, free_segments: u32, hard_segments: u32, preemptible: bool) {
        let erased = free_segments.saturating_sub(self.erasing_segments);
        self.urgent = !preemptible || self.parked() > 0 || erased < hard_segments;
        self.urgent_stale = false;
    }

    /// What the flash counted.
    pub fn stats(&self) -> &FlashStats {
        &self.stats
    }

    /// Erase time of one segment slice on one plane [ns].
    pub fn erase_ns(&self) -> u64 {
        self.t.erase
    }

    /// Operations started on a busy die (a check of the model; always 0).
    pub fn busy_violations(&self) -> u64 {
        self.busy_violations
    }

    /// The operation `id`.
    #[inline]
    pub fn op(&self, id: u32) -> &Op {
        &self.ops[id as usize]
    }

    /// Make `id` run after `first` finishes.
    #[inline]
    pub fn chain(&mut self, first: u32, id: u32) {
        self.ops[first as usize].then = id;
    }

    /// Store a new operation (not ready yet); counts it against its unit.
    #[inline]
    pub fn alloc(&mut self, op: Op) -> u32 {
        if op.seg != NONE && op.kind != Kind::Erase {
            self.seg_inflight[op.seg as usize] += 1;
        }
        match self.free.pop() {
            Some(id) => {
                self.ops[id as usize] = op;
                id
            }
            None => {
                self.ops.push(op);
                (self.ops.len() - 1) as u32
            }
        }
    }

    /// Return a finished operation's slot (the driver, after reading its owner).
    #[inline]
    pub fn release(&mut self, id: u32) {
        self.free.push(id);
    }

    /// Operations in flight (allocated, not released).
    pub fn in_flight(&self) -> usize {
        self.ops.len() - self.free.len()
    }

    /// Programs parked behind an erase.
    pub fn parked(&self) -> u32 {
        self.parked
    }

    /// Operation `id` is ready at `now`: queue it on its die (or park it
    /// behind its block's erase).
    pub fn submit(&mut self, id: u32, now: u64, q: &mut EventQueue) {
        let op = &mut self.ops[id as usize];
        op.enq = now;
        op.next = NONE;
        let (kind, class, die, seg) = (op.kind, op.class, op.die, op.seg);
        if kind == Kind::Program && seg != NONE && self.erase_pending(seg) {
            self.ops[id as usize].next = self.seg_park[seg as usize];
            self.seg_park[seg as usize] = id;
            self.seg_parked[seg as usize] += 1;
            self.parked += 1;
            self.urgent_stale = true;
            self.stats.parked += 1;
            self.try_erase(seg, now, q);
            return;
        }
        let d = &mut self.dies[die as usize];
        let c = class as usize;
        let tail = &mut self.tails[die as usize][c];
        if *tail == NONE {
            d.head[c] = id;
        } else {
            self.ops[*tail as usize].next = id;
        }
        *tail = id;
        d.queued |= 1 << c;
        match d.phase {
            Phase::Idle => self.try_start(die, now, q),
            Phase::Array => self.maybe_suspend(die, class, now, q),
            _ => {}
        }
    }

    /// The FTL erased segment (or translation row) `unit`: its erase runs
    /// once every operation on it has finished, one erase per plane.
    /// (Block index `unit` of every plane: data segments, then translation
    /// block rows.)
    pub fn arm_erase(&mut self, unit: u32, now: u64, q: &mut EventQueue) {
        let u = unit as usize;
        if !self.erase_pending(unit) {
            self.erasing += 1;
            if unit < self.layout.segments {
                self.erasing_segments += 1;
                self.urgent_stale = true;
            }
        }
        self.seg_armed[u] = true;
        self.try_erase(unit, now, q);
    }

    /// Issue `unit`'s armed erase once no erase runs on it and every
    /// operation left on it is a program parked behind it.
    #[inline]
    fn try_erase(&mut self, unit: u32, now: u64, q: &mut EventQueue) {
        let u = unit as usize;
        if self.seg_armed[u] && self.seg_erase[u] == 0 && self.seg_inflight[u] == self.seg_parked[u]
        {
            self.issue_erase(unit, now, q);
        }
    }

    #[inline(never)]
    fn issue_erase(&mut self, unit: u32, now: u64, q: &mut EventQueue) {
        self.seg_armed[unit as usize] = false;
        self.seg_erase[unit as usize] = self.layout.planes;
        for plane in 0..self.layout.planes {
            let die = plane / self.ppd;
            let at = Loc {
                die,
                plane,
                page: 0,
                block: unit,
            };
            let id = self.alloc(Op::new(Kind::Erase, Class::Erase, at, unit, 0, NONE));
            self.submit(id, now, q);
        }
    }

    #[inline]
    fn maybe_suspend(&mut self, die: u32, class: Class, now: u64, q: &mut EventQueue) {
        let t = &self.t;
        // A chip issued as a whole is not suspended (MQSim's TSU never
        // suspends: its WRITING/ERASING cases fall through to `false`).
        if t.suspend == Suspend::None || !self.chip_owner.is_empty() {
            return;
        }
        let d = &self.dies[die as usize];
        if d.suspended || d.batch == NONE || now < self.susp[die as usize].array_start {
            return;
        }
        let head = &self.ops[d.batch as usize];
        if head.suspended
            || (self.urgent && matches!(head.class, Class::GcWrite | Class::Erase | Class::GcRead))
        {
            return;
        }
        let read = matches!(class, Class::MapRead | Class::UserRead);
        let write = class == Class::UserWrite;
        let (threshold, cost) = match (d.batch_kind, t.suspend) {
            (Kind::Program, Suspend::Program | Suspend::ProgramErase) if read => {
                (t.program_for_read, t.suspend_program)
            }
            (Kind::Erase, Suspend::Erase | Suspend::ProgramErase) if read => {
                (t.erase_for_read, t.suspend_erase)
            }
            (Kind::Erase, Suspend::Erase | Suspend::ProgramErase) if write => {
                (t.erase_for_write, t.suspend_erase)
            }
            _ => return,
        };
        let remaining = d.array_end.saturating_sub(now);
        if remaining <= threshold {
            return;
        }
        let batch = d.batch;
        let kind = d.batch_kind;
        let mut id = batch;
        while id != NONE {
            self.ops[id as usize].suspended = true;
            id = self.ops[id as usize].next;
        }
        let d = &mut self.dies[die as usize];
        d.gen = (d.gen + 1) & GEN_MASK as u16;
        d.suspended = true;
        let su = &mut self.susp[die as usize];
        su.batch = batch;
        su.remaining = remaining;
        su.kind = kind;
        su.served = 0;
        d.batch = NONE;
        d.phase = Phase::Suspending;
        d.busy_ns = d.busy_ns - remaining + cost;
        if kind == Kind::Program {
            self.stats.suspended_programs += 1;
        } else {
            self.stats.suspended_erases += 1;
        }
        q.push(now + cost, Event::Die(die_timer(die, d.gen)).payload());
    }

    /// The classes (bit per class) that may run on a die whose `kind`
    /// operation is suspended.
    #[inline]
    fn allowed_during(kind: Kind) -> u8 {
        const READS: u8 = 1 << Class::MapRead as u8 | 1 << Class::UserRead as u8;
        match kind {
            Kind::Erase => READS | 1 << Class::UserWrite as u8,
            _ => READS,
        }
    }

    fn try_start(&mut self, die: u32, now: u64, q: &mut EventQueue) {
        let d = &mut self.dies[die as usize];
        if d.phase != Phase::Idle {
            return;
        }
        if d.suspended {
            let su = &mut self.susp[die as usize];
            let can =
                su.served < SUSPEND_SERVE_MAX && d.queued & Self::allowed_during(su.kind) != 0;
            if !can {
                // Resume the suspended operation for what it had left.
                d.batch = su.batch;
                d.batch_kind = su.kind;
                d.suspended = false;
                su.batch = NONE;
                d.phase = Phase::Array;
                su.array_start = now;
                d.array_end = now + su.remaining;
                d.busy_ns += su.remaining;
                let ev = Event::Die(die_timer(die, d.gen)).payload();
                let end = d.array_end;
                self.set_active(die, true, now);
                q.push(end, ev);
                return;
            }
            su.served += 1;
        } else if d.queued == 0 {
            return;
        }
        if !self.chip_owner.is_empty() {
            // One die of a chip at a time: the chip is taken until the
            // operation completes (`complete` hands it on).
            let owner = &mut self.chip_owner[d.chip as usize];
            if *owner != NONE && *owner != die {
                return;
            }
            *owner = die;
        }
        d.phase = Phase::WantChannel;
        self.request_channel(die, now, q, false);
    }

    /// `chip_issue = "chip"`: chip `chip` became idle; the die whose next
    /// operation comes first (the highest-priority class, then the oldest)
    /// takes it, as MQSim's TSU serves a chip's queues in priority order.
    fn hand_on_chip(&mut self, chip: u32, now: u64, q: &mut EventQueue) {
        self.chip_owner[chip as usize] = NONE;
        let first_class = if self.urgent {
            &FIRST_URGENT
        } else {
            &FIRST_NORMAL
        };
        let order = if self.urgent { &URGENT } else { &NORMAL };
        let lo = chip * self.dies_per_chip;
        let mut best: Option<(usize, u64, u32)> = None;
        for die in lo..lo + self.dies_per_chip {
            let d = &self.dies[die as usize];
            if d.phase != Phase::Idle || d.queued == 0 {
                continue;
            }
            let c = first_class[d.queued as usize];
            let rank = order.iter().position(|&x| x == c).unwrap_or(CLASSES);
            let enq = self.ops[d.head[c as usize] as usize].enq;
            if best.is_none_or(|(r, e, _)| (rank, enq) < (r, e)) {
                best = Some((rank, enq, die));
            }
        }
        if let Some((_, _, die)) = best {
            self.try_start(die, now, q);
        }
    }

    #[inline(always)]
    fn request_channel(&mut self, die: u32, now: u64, q: &mut EventQueue, data_out: bool) {
        let ch = self.dies[die as usize].chan;
        let c = &self.chans[ch as usize];
        if c.free_at <= now && c.waiting == 0 {
            self.grant(die, now, q);
            return;
        }
        let line = if data_out {
            match self.ops[self.dies[die as usize].batch as usize].class {
                Class::MapRead | Class::MapWrite => 0,
                Class::UserRead => 1,
                _ => 2,
            }
        } else {
            3
        };
        let c = &mut self.chans[ch as usize];
        c.wait(&mut self.wait_next, die, line);
        if !c.event {
            c.event = true;
            q.push(c.free_at.max(now), Event::Channel(ch).payload());
        }
    }

    /// A channel's bus became free: the next waiting die gets it.
    ///
    /// When that die moves its data out and more dies wait, the channel's
    /// next event would be scheduled right after the die's, for the same
    /// moment (the end of the transfer): nothing can come between the two,
    /// so the die's event carries the channel's ([`Event::DieOutChannel`]), one
    /// event instead of two (a seventh of all events in a random-write
    /// run). Same order, same results.
    pub fn on_channel(&mut self, ch: u32, now: u64, q: &mut EventQueue) {
        let c = &mut self.chans[ch as usize];
        c.event = false;
        if c.free_at > now {
            c.event = true;
            q.push(c.free_at, Event::Channel(ch).payload());
            return;
        }
        if let Some(die) = c.next_waiter(&self.wait_next) {
            if c.waiting > 0 && self.dies[die as usize].phase == Phase::WantDataOut {
                c.event = true;
                self.grant_data_out(die, now, q, true);
                return;
            }
            self.grant(die, now, q);
        }
        let c = &mut self.chans[ch as usize];
        if c.waiting > 0 && !c.event {
            c.event = true;
            q.push(c.free_at.max(now), Event::Channel(ch).payload());
        }
    }

    /// The channel part of an [`Event::DieOutChannel`] event of die `id` (the
    /// payload's id), after the die's part and what the driver did with
    /// the operations it finished.
    pub fn hand_over(&mut self, id: u32, now: u64, q: &mut EventQueue) {
        let die = id & DIE_MASK;
        self.on_channel(self.dies[die as usize].chan, now, q);
    }

    fn set_active(&mut self, die: u32, active: bool, now: u64) {
        let d = &mut self.dies[die as usize];
        if d.active == active {
            return;
        }
        d.active = active;
        let chip = d.chip as usize;
        if active {
            if self.chip_active[chip] == 0 {
                self.chip_since[chip] = now;
            }
            self.chip_active[chip] += 1;
        } else {
            self.chip_active[chip] -= 1;
            if self.chip_active[chip] == 0 {
                self.chip_busy[chip] += now - self.chip_since[chip];
            }
        }
    }

    /// Pop the head of class `c` on `die`.
    #[inline]
    fn pop(&mut self, die: u32, c: usize) -> u32 {
        let d = &mut self.dies[die as usize];
        let id = d.head[c];
        let next = self.ops[id as usize].next;
        d.head[c] = next;
        if next == NONE {
            self.tails[die as usize][c] = NONE;
            d.queued &= !(1 << c);
        }
        id
    }

    /// Pick the die's next batch (late binding at channel grant): the head
    /// of the first non-empty class in priority order, plus same-kind,
    /// same-page operations on other planes of the die.
    fn pick(&mut self, die: u32) -> (u32, u32) {
        let d = &self.dies[die as usize];
        let susp = d.suspended.then_some(self.susp[die as usize].kind);
        let ready = d.queued & susp.map_or(u8::MAX, Self::allowed_during);
        assert!(ready != 0, "a die asks for its channel only with work");
        let first_class = if self.urgent {
            &FIRST_URGENT
        } else {
            &FIRST_NORMAL
        };
        let class = first_class[ready as usize];
        let first = self.pop(die, class as usize);
        let mut n = 1;
        let (kind, page) = (self.ops[first as usize].kind, self.ops[first as usize].page);
        if self.ppd > 1 {
            let mut used: u64 = 1 << (self.ops[first as usize].plane % self.ppd);
            let mut last = first;
            for c in [Some(class), partner(class)].into_iter().flatten() {
                if susp.is_some_and(|k| Self::allowed_during(k) & (1 << c as u8) == 0) {
                    continue;
                }
                let mut blocked = used;
                let mut prev = NONE;
                let mut id = self.dies[die as usize].head[c as usize];
                let mut scanned = 0;
                while id != NONE && n < self.ppd && scanned < SCAN_LIMIT {
                    scanned += 1;
                    let o = &self.ops[id as usize];
                    let bit = 1u64 << (o.plane % self.ppd);
                    let next = o.next;
                    if blocked & bit == 0 {
                        blocked |= bit;
                        if o.kind == kind && (kind == Kind::Erase || o.page == page) {
                            // unlink and append to the batch
                            let d = &mut self.dies[die as usize];
                            if prev == NONE {
                                d.head[c as usize] = next;
                            } else {
                                self.ops[prev as usize].next = next;
                            }
                            let tail = &mut self.tails[die as usize][c as usize];
                            if *tail == id {
                                *tail = prev;
                            }
                            if d.head[c as usize] == NONE {
                                d.queued &= !(1 << c as u8);
                            }
                            self.ops[last as usize].next = id;
                            last = id;
                            used |= bit;
                            n += 1;
                            id = next;
                            continue;
                        }
                    }
                    prev = id;
                    id = next;
                }
            }
            self.ops[last as usize].next = NONE;
        } else {
            self.ops[first as usize].next = NONE;
        }
        (first, n)
    }

    fn grant(&mut self, die: u32, now: u64, q: &mut EventQueue) {
        let phase = self.dies[die as usize].phase;
        let ch = self.dies[die as usize].chan as usize;
        match phase {
            Phase::WantChannel => {
                let (batch, n) = self.pick(die);
                let t = &self.t;
                let mut chan = 0u64;
                let mut array = 0u64;
                let kind = self.ops[batch as usize].kind;
                let mut id = batch;
                while id != NONE {
                    let o = &self.ops[id as usize];
                    let wait = now - o.enq;
                    let c = o.class as usize;
                    self.stats.wait_sum[c] += wait;
                    self.stats.wait_max[c] = self.stats.wait_max[c].max(wait);
                    match o.kind {
                        Kind::Program => {
                            chan += t.xfer(o.bytes);
                            self.stats.channel_bytes += o.bytes as u64;
                            array = array.max(t.program_ns(o.page));
                        }
                        Kind::Read => array = array.max(t.read_ns(o.page)),
                        Kind::Erase => array = t.erase,
                    }
                    id = o.next;
                }
                let n64 = n as u64;
                chan += match kind {
                    Kind::Read => t.cmd(t.cmd_read, n64),
                    Kind::Program => t.cmd(t.cmd_program, n64),
                    Kind::Erase => t.cmd(t.cmd_erase, n64),
                };
                self.stats.batches += 1;
                if n > 1 {
                    self.stats.multiplane += 1;
                }
                self.hold_channel(ch, now, chan);
                let d = &mut self.dies[die as usize];
                if d.batch != NONE {
                    self.busy_violations += 1;
                }
                d.batch = batch;
                d.batch_kind = kind;
                d.phase = Phase::Array;
                if self.t.suspend != Suspend::None {
                    self.susp[die as usize].array_start = now + chan;
                }
                d.array_end = now + chan + array;
                d.busy_ns += chan + array;
                let ev = Event::Die(die_timer(die, d.gen)).payload();
                let end = d.array_end;
                self.set_active(die, true, now);
                q.push(end, ev);
            }
            Phase::WantDataOut => self.grant_data_out(die, now, q, false),
            _ => unreachable!("a die is granted the channel only when it asked"),
        }
    }

    /// Channel `ch` is busy from `now` for `chan` ns (it was free: checked).
    #[inline]
    fn hold_channel(&mut self, ch: usize, now: u64, chan: u64) {
        let c = &mut self.chans[ch];
        if c.free_at > now {
            self.busy_violations += 1;
        }
        c.free_at = now + chan;
        c.busy_ns += chan;
    }

    /// The channel moves the data `die` read out; its event at the end is
    /// the die's ([`Event::Die`]), or carries the channel's too
    /// ([`Event::DieOutChannel`]) when `with_channel`.
    fn grant_data_out(&mut self, die: u32, now: u64, q: &mut EventQueue, with_channel: bool) {
        let ch = self.dies[die as usize].chan as usize;
        let mut chan = 0;
        let mut id = self.dies[die as usize].batch;
        while id != NONE {
            let o = &self.ops[id as usize];
            chan += self.t.xfer(o.bytes);
            self.stats.channel_bytes += o.bytes as u64;
            id = o.next;
        }
        self.hold_channel(ch, now, chan);
        let d = &mut self.dies[die as usize];
        d.phase = Phase::DataOut;
        d.busy_ns += chan;
        let timer = die_timer(die, d.gen);
        let ev = if with_channel {
            Event::DieOutChannel(timer)
        } else {
            Event::Die(timer)
        };
        q.push(now + chan, ev.payload());
    }

    /// A die's timer fired (array done, data out done, suspension done).
    pub fn on_die(&mut self, id: u32, now: u64, q: &mut EventQueue) {
        let (die, gen) = (id & DIE_MASK, id >> DIE_BITS);
        let d = &mut self.dies[die as usize];
        if d.gen as u32 != gen {
            return; // the operation it timed was suspended
        }
        match d.phase {
            Phase::Array if d.batch_kind == Kind::Read => {
                d.phase = Phase::WantDataOut;
                self.request_channel(die, now, q, true);
            }
            Phase::Array | Phase::DataOut => self.complete(die, now, q),
            Phase::Suspending => {
                d.phase = Phase::Idle;
                self.try_start(die, now, q);
            }
            _ => unreachable!("die timer in phase {:?}", d.phase),
        }
    }

    fn complete(&mut self, die: u32, now: u64, q: &mut EventQueue) {
        let d = &mut self.dies[die as usize];
        let mut id = d.batch;
        d.batch = NONE;
        d.phase = Phase::Idle;
        let keep_active = d.suspended;
        let chip = d.chip as usize;
        if !keep_active {
            self.set_active(die, false, now);
        }
        if !self.chip_owner.is_empty() {
            // Nobody takes the chip while its finished operations are
            // handed on (they may queue more): `hand_on_chip` chooses.
            self.chip_owner[chip] = HANDING;
        }
        while id != NONE {
            let next = self.ops[id as usize].next;
            self.finish(id, now, q);
            id = next;
        }
        if self.chip_owner.is_empty() {
            self.try_start(die, now, q);
        } else {
            let chip = self.dies[die as usize].chip;
            self.hand_on_chip(chip, now, q);
        }
    }

    fn finish(&mut self, id: u32, now: u64, q: &mut EventQueue) {
        let o = self.ops[id as usize];
        self.stats.ops[o.class as usize] += 1;
        match o.kind {
            Kind::Read => self.stats.reads += 1,
            Kind::Program => {
                self.stats.programs += 1;
                self.stats.programs_by_type[self.t.technology.page_type(o.page)] += 1;
            }
            Kind::Erase => self.stats.erases += 1,
        }
        if o.seg != NONE {
            let u = o.seg as usize;
            if o.kind == Kind::Erase {
                self.seg_erase[u] -= 1;
                if self.seg_erase[u] == 0 {
                    if self.seg_armed[u] {
                        // Asked for again while it ran: erase once more.
                        self.try_erase(o.seg, now, q);
                    } else {
                        self.erasing -= 1;
                        if o.seg < self.layout.segments {
                            self.erasing_segments -= 1;
                            self.urgent_stale = true;
                        }
                        self.unpark(o.seg, now, q);
                    }
                }
            } else {
                self.seg_inflight[u] -= 1;
                if self.seg_armed[u] {
                    self.try_erase(o.seg, now, q);
                }
            }
        }
        if o.then != NONE {
            self.submit(o.then, now, q);
        }
        // Nobody waits for most (GC, erases): freed here, so that the
        // driver looks only at the finished operations someone waits for.
        if o.owner == NONE {
            self.free.push(id);
        } else {
            self.done.push(id);
        }
    }

    fn unpark(&mut self, unit: u32, now: u64, q: &mut EventQueue) {
        let mut id = std::mem::replace(&mut self.seg_park[unit as usize], NONE);
        self.seg_parked[unit as usize] = 0;
        let mut list = Vec::new();
        while id != NONE {
            list.push(id);
            id = self.ops[id as usize].next;
        }
        self.parked -= list.len() as u32;
        self.urgent_stale |= !list.is_empty();
        for &id in list.iter().rev() {
            self.submit(id, now, q);
        }
    }

    /// Whether the erase of `unit` is armed or running.
    pub fn erase_pending(&self, unit: u32) -> bool {
        self.seg_erase[unit as usize] > 0 || self.seg_armed[unit as usize]
    }

    /// Busy time of each channel [ns].
    pub fn channel_busy(&self) -> Vec<u64> {
        self.chans.iter().map(|c| c.busy_ns).collect()
    }

    /// Busy time of each die [ns] (transfers, array time, suspension costs).
    pub fn die_busy(&self) -> Vec<u64> {
        self.dies.iter().map(|d| d.busy_ns).collect()
    }

    /// Time each chip had at least one die at work, up to `now` [ns].
    pub fn chip_busy(&self, now: u64) -> Vec<u64> {
        (0..self.chip_busy.len())
            .map(|c| {
                self.chip_busy[c]
                    + if self.chip_active[c] > 0 {
                        now - self.chip_since[c]
                    } else {
                        0
                    }
            })
            .collect()
    }

    /// Nothing queued, parked, suspended or running anywhere.
    pub fn idle(&self) -> bool {
        self.in_flight() == 0
    }
}

/// For each set of classes with work (bit per class), the first of them
/// in an order of priority.
const fn first_in(order: &[Class; CLASSES]) -> [Class; 1 << CLASSES] {
    let mut t = [Class::MapRead; 1 << CLASSES];
    let mut set = 1;
    while set < 1 << CLASSES {
        let mut i = 0;
        while set & (1 << order[i] as usize) == 0 {
            i += 1;
        }
        t[set] = order[i];
        set += 1;
    }
    t
}
const FIRST_NORMAL: [Class; 1 << CLASSES] = first_in(&NORMAL);
const FIRST_URGENT: [Class; 1 << CLASSES] = first_in(&URGENT);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::config::Technology;

    /// One channel, one chip of four one-plane SLC dies.
    fn one_channel() -> Flash {
        let mut s = SsdConfig::default();
        let f = &mut s.flash;
        f.technology = Technology::Slc;
        f.channels = 1;
        f.chips_per_channel = 1;
        f.dies_per_chip = 4;
        f.planes_per_die = 1;
        f.read_ns = vec![50_000];
        f.program_ns = vec![500_000];
        f.suspend = Suspend::None;
        let layout = Layout::new(&s, 4 * s.flash.pages_per_block, 8).unwrap();
        Flash::new(&s, layout, 8)
    }

    /// Run every event the way the driver does (a carried channel event
    /// after its die's part); (operation, time) as they finish.
    fn drain(f: &mut Flash, q: &mut EventQueue) -> Vec<(u32, u64)> {
        let mut finished = Vec::new();
        while let Some((t, p)) = q.pop() {
            let ev = Event::of(p);
            match ev {
                Event::Die(id) | Event::DieOutChannel(id) => f.on_die(id, t, q),
                Event::Channel(id) => f.on_channel(id, t, q),
                _ => unreachable!("flash events only"),
            }
            for o in std::mem::take(&mut f.done) {
                finished.push((o, t));
                f.release(o);
            }
            if let Event::DieOutChannel(id) = ev {
                f.hand_over(id, t, q);
            }
        }
        finished
    }

    /// One 4 KiB read of each class on dies 0, 1, ... submitted at t = 0.
    fn reads(f: &mut Flash, q: &mut EventQueue, classes: &[Class]) -> Vec<u32> {
        let ids: Vec<u32> = (0..classes.len() as u32)
            .map(|die| {
                let at = Loc {
                    die,
                    plane: die,
                    page: 0,
                    block: 0,
                };
                let class = classes[die as usize];
                f.alloc(Op::new(Kind::Read, class, at, NONE, 4096, die))
            })
            .collect();
        for &id in &ids {
            f.submit(id, 0, q);
        }
        ids
    }

    #[test]
    fn waiting_user_data_goes_out_before_gc_data() {
        // As MQSim's PHY: of the reads whose data waits for the channel, a
        // user read's goes before a GC read's that finished earlier.
        let mut f = one_channel();
        let mut q = EventQueue::new();
        let ids = reads(
            &mut f,
            &mut q,
            &[Class::UserRead, Class::GcRead, Class::UserRead],
        );
        let order: Vec<u32> = drain(&mut f, &mut q).iter().map(|&(o, _)| o).collect();
        assert_eq!(order, vec![ids[0], ids[2], ids[1]]);
    }

    #[test]
    fn reads_of_one_channel_move_their_data_back_to_back() {
        // Three reads on three dies at t = 0: the commands go out one after
        // the other, the arrays overlap, the data outs queue for the
        // channel and follow each other without a gap (the third's grant
        // rides on the end of the second's transfer).
        let mut f = one_channel();
        let mut q = EventQueue::new();
        let (c, r, x) = (f.t.cmd_read(), f.t.read_ns(0), f.t.xfer(4096));
        assert!(x > c && r > 2 * c);
        let ids = reads(&mut f, &mut q, &[Class::UserRead; 3]);
        let finished = drain(&mut f, &mut q);
        let times: Vec<u64> = finished.iter().map(|&(_, t)| t).collect();
        assert_eq!(times, (1..=3).map(|k| c + r + k * x).collect::<Vec<_>>());
        // The first read's data goes out at once, the other two in the
        // order their arrays finished.
        let order: Vec<u32> = finished.iter().map(|&(o, _)| o).collect();
        assert_eq!(order, ids);
        assert_eq!(f.channel_busy(), vec![3 * (c + x)]);
        assert_eq!(f.busy_violations, 0);
        assert!(f.idle());
    }
}
