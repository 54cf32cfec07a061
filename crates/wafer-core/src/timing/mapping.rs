//! The mapping-table manager: the cached mapping table of a demand-based
//! FTL (DFTL, Gupta et al. ASPLOS'09, as MQSim's
//! `Address_Mapping_Unit_Page_Level` runs it). Entries live in translation
//! pages on flash, in a log of block rows of their own; the controller
//! caches some entries in DRAM (an exact LRU of entries, or two bits per
//! page when every entry fits).
//!
//! * A miss loads the entry and reads its translation page (one sector)
//!   before the access it serves; concurrent misses to one translation page
//!   share that one read (they wait for it together).
//! * Evicting a dirty entry writes its translation page back, once for
//!   every dirty cached entry of that page: the program carries them all
//!   and they are clean afterwards (a generation number per translation
//!   page makes that O(1)). The write-back reads the old page to merge it,
//!   then programs the new one at the log's head; nobody waits for it.
//! * The log (block rows of its own) is cleaned incrementally: once fewer
//!   than two rows are free, every write-back also moves a few live
//!   translation pages out of the row with the fewest (greedy), as many as
//!   free that row before the log runs out of room, so no access waits
//!   behind a whole-row clean.
//! * An ideal table (`mapping.ideal`) never misses.

use super::cache::Lru;
use super::config::SsdConfig;
use super::events::EventQueue;
use super::flash::{Class, Flash, Kind, Op, NONE};
use super::port::FtlPort;

/// The owner tag of a translation-page read someone waits for (the
/// page in the low bits); the driver hands it back to
/// [`MappingTable::read_done`].
pub(super) const OWNER: u32 = 3 << 30;

/// Why the mapping table is consulted.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Access {
    /// A host read.
    Read,
    /// A host write reaching flash.
    Write,
    /// GC moved the page: it knows the new address, so it waits for no read.
    Gc,
}

/// Generations wrap at 2^31 (a cached value holds one and a dirty bit).
const GEN_MASK: u32 = (1 << 31) - 1;

/// The entries a preconditioning left cached ([`MappingTable::warm_entries`]).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum WarmEntries {
    /// An ideal table caches nothing.
    Ideal,
    /// Every entry fits: the loaded bits.
    Loaded(Vec<u64>),
    /// The cached pages, least recent first.
    Keys(Vec<u32>),
}

/// [`WarmEntries`] read from the table as they are serialized (the same
/// bytes; no copy of the keys).
#[derive(serde::Serialize)]
pub enum WarmEntriesOf<'a> {
    /// An ideal table.
    Ideal,
    /// Every entry fits: the loaded bits.
    Loaded(&'a Vec<u64>),
    /// The cached pages, least recent first.
    Keys(KeysOf<'a>),
}

/// An LRU's keys, least recent first, serialized as a sequence.
pub struct KeysOf<'a>(&'a Lru<u32>);

impl serde::Serialize for KeysOf<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.0.len() as usize))?;
        for (k, _) in self.0.entries() {
            seq.serialize_element(&k)?;
        }
        seq.end()
    }
}

/// The cached entries.
enum Cached {
    /// Every entry fits: nothing is ever evicted and recency does not
    /// matter, so two bits per page (loaded, dirty) give the same hits and
    /// misses with a fraction of the memory traffic.
    All { loaded: Vec<u64>, dirty: Vec<u64> },
    /// Fewer entries than pages: an LRU whose value is
    /// `generation << 1 | dirty` (dirty only while the generation is its
    /// translation page's; 31 bits of generation, so a 16-byte slot: an
    /// entry cached across 2^31 write-backs of its page could be taken for
    /// dirty, which no run comes near).
    Lru(Lru<u32>),
}

/// What the mapping table counted.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct MapCounts {
    /// Accesses served from DRAM.
    pub hits: u64,
    /// Accesses that loaded their entry.
    pub misses: u64,
    /// Misses that joined a read of their translation page already in
    /// flight.
    pub merged_misses: u64,
    /// Translation pages programmed (write-backs and cleaning moves).
    pub programs: u64,
    /// Translation pages read (misses, write-back merges, cleaning).
    pub reads: u64,
    /// Write-backs of evicted dirty entries.
    pub write_backs: u64,
    /// Dirty entries the write-backs carried.
    pub entries_written_back: u64,
    /// Translation pages moved by cleaning.
    pub cleaning_moves: u64,
}

/// The cached mapping table and its translation pages (see the module doc).
pub(super) struct MappingTable {
    ideal: bool,
    /// MQSim's accounting (`MappingConfig::mqsim_accounting`), and per
    /// translation page whether a write-back left it "departing" (misses
    /// on it read nothing).
    mqsim: bool,
    departing: Vec<bool>,
    cached: Cached,
    /// Mapping entries per translation page.
    per_tpage: u32,
    /// Per translation page: the slot of the log holding it, or [`NONE`].
    mvpn_loc: Vec<u32>,
    /// Per translation page: its write-back generation (below 2^31).
    gen: Vec<u32>,
    /// Per translation page: its cached entries dirty in this generation.
    dirty: Vec<u32>,
    /// Per translation page: the read of it in flight, or [`NONE`].
    reading: Vec<u32>,
    /// Operations waiting for a translation-page read: (page, operation).
    waiting: Vec<(u32, u32)>,
    /// Per slot of the log: the translation page written there, or [`NONE`].
    ring_owner: Vec<u32>,
    row_slots: u32,
    rows: u32,
    /// Per row: live translation pages in it.
    row_live: Vec<u32>,
    /// Per row: written since its last erase.
    row_written: Vec<bool>,
    /// The row the log writes into, and its next slot (`row_slots`: full).
    head_row: u32,
    head_pos: u32,
    /// Erased rows, in the order the log takes them.
    free_rows: std::collections::VecDeque<u32>,
    /// The row being cleaned, and its next slot to look at.
    victim: Option<u32>,
    victim_pos: u32,
    /// The translation area's rows follow this many data superblocks.
    segments: u32,
    /// Logical pages mapped.
    logical: usize,
    page_bytes: u32,
    /// Bytes a mapping read transfers (one entry's sector).
    read_bytes: u32,
    /// What it counted.
    counts: MapCounts,
}

impl MappingTable {
    /// The table of `ssd` for `logical` pages over `physical` pages, its
    /// translation rows after `segments` data superblocks of `planes`
    /// blocks of `ssd.flash.pages_per_block` pages.
    pub fn new(ssd: &SsdConfig, logical: usize, physical: u64, segments: u32, planes: u32) -> Self {
        let page_bytes = ssd.flash.page_bytes;
        let ppb = ssd.flash.pages_per_block;
        let log2 = (physical.max(2) as f64).log2().ceil() as u32;
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
        let tpages = if m.ideal {
            0
        } else {
            (logical as u64).div_ceil(per_tpage as u64) as usize
        };
        let row_slots = planes * ppb;
        let rows = if m.ideal {
            0
        } else {
            ((tpages as f64 * m.translation_area_factor / row_slots as f64).ceil() as u32 + 1)
                .max(3)
        };
        let cap = if m.ideal {
            0
        } else {
            ((m.cmt_mib * 1048576.0) / entry as f64).floor() as u32
        };
        let cached = if m.ideal || cap as usize >= logical {
            let words = if m.ideal { 0 } else { logical.div_ceil(64) };
            Cached::All {
                loaded: vec![0; words],
                dirty: vec![0; words],
            }
        } else {
            Cached::Lru(Lru::new(logical, cap))
        };
        MappingTable {
            ideal: m.ideal,
            mqsim: m.mqsim_accounting,
            departing: if m.mqsim_accounting {
                vec![false; tpages]
            } else {
                Vec::new()
            },
            cached,
            per_tpage,
            mvpn_loc: vec![NONE; tpages],
            gen: vec![0; tpages],
            dirty: vec![0; tpages],
            reading: vec![NONE; tpages],
            waiting: Vec::new(),
            ring_owner: vec![NONE; (rows * row_slots) as usize],
            row_slots,
            rows,
            row_live: vec![0; rows as usize],
            row_written: vec![false; rows as usize],
            head_row: 0,
            head_pos: 0,
            free_rows: (1..rows).collect(),
            victim: None,
            victim_pos: 0,
            segments,
            logical,
            page_bytes,
            read_bytes: page_bytes.min(512),
            counts: MapCounts::default(),
        }
    }

    /// What the table counted.
    pub fn counts(&self) -> &MapCounts {
        &self.counts
    }

    /// Block rows of the translation area (erase units after the data
    /// superblocks).
    pub fn rows(&self) -> u32 {
        self.rows
    }

    /// Entries the table holds at most (0 for an ideal table: it caches
    /// nothing, it never misses).
    pub fn capacity(&self) -> u64 {
        match &self.cached {
            _ if self.ideal => 0,
            Cached::All { .. } => self.logical as u64,
            Cached::Lru(l) => l.capacity() as u64,
        }
    }

    /// Before timing starts: the table keeps access stamps rather than
    /// a list ([`Lru::begin_stamps`]); [`MappingTable::stamp`] records
    /// accesses until [`MappingTable::end_stamps`].
    pub fn begin_stamps(&mut self) {
        if let Cached::Lru(l) = &mut self.cached {
            l.begin_stamps();
        }
    }

    /// Stamp mode: `lpn` was accessed at `clock`.
    #[inline]
    pub fn stamp(&mut self, lpn: u32, clock: u32) {
        if self.ideal {
            return;
        }
        match &mut self.cached {
            Cached::All { loaded, .. } => loaded[(lpn >> 6) as usize] |= 1 << (lpn & 63),
            Cached::Lru(l) => {
                l.stamp(lpn, clock);
            }
        }
    }

    /// Stamps move `by` earlier ([`Lru::rebase_stamps`]).
    pub fn rebase_stamps(&mut self, by: u32) {
        if let Cached::Lru(l) = &mut self.cached {
            l.rebase_stamps(by);
        }
    }

    /// Stamp mode ends at `clock`: the table caches the most recently
    /// accessed entries, clean.
    pub fn end_stamps(&mut self, clock: u32) {
        if let Cached::Lru(l) = &mut self.cached {
            l.end_stamps(clock, 0);
        }
    }

    /// The cached entries (least recent first), to restore with
    /// [`MappingTable::restore_warm`].
    pub fn warm_entries(&self) -> WarmEntriesOf<'_> {
        match &self.cached {
            _ if self.ideal => WarmEntriesOf::Ideal,
            Cached::All { loaded, .. } => WarmEntriesOf::Loaded(loaded),
            Cached::Lru(l) => WarmEntriesOf::Keys(KeysOf(l)),
        }
    }

    /// The entries [`MappingTable::warm_entries`] gave, cached again (clean);
    /// false if they do not fit this table. The list is dropped once
    /// stamped, before the table's slots fill (on a whole drive it is a
    /// tenth of the table).
    pub fn restore_warm(&mut self, w: WarmEntries) -> bool {
        let logical = self.logical;
        match (&mut self.cached, w) {
            (_, w) if self.ideal => matches!(w, WarmEntries::Ideal),
            (Cached::All { loaded, .. }, WarmEntries::Loaded(l)) if l.len() == loaded.len() => {
                loaded.copy_from_slice(&l);
                true
            }
            (Cached::Lru(l), WarmEntries::Keys(keys))
                if keys.len() <= l.capacity() as usize
                    && keys.iter().all(|&k| (k as usize) < logical) =>
            {
                l.begin_stamps();
                for (i, &k) in keys.iter().enumerate() {
                    l.stamp(k, i as u32);
                }
                let n = keys.len() as u32;
                drop(keys);
                l.end_stamps(n, 0);
                true
            }
            _ => false,
        }
    }

    /// Timing starts: every translation page that maps data is on flash,
    /// in the log's first slots; every cached entry is clean.
    pub fn start(&mut self, ftl: &impl FtlPort) {
        if self.ideal {
            return;
        }
        let per = self.per_tpage as usize;
        for m in 0..self.mvpn_loc.len() {
            let lo = m * per;
            let hi = ((m + 1) * per).min(self.logical);
            // MQSim stores every full translation page at the start.
            let full = self.mqsim && hi - lo == per;
            if full || ftl.any_mapped(lo, hi) {
                let Some(slot) = self.take_slot() else {
                    break;
                };
                self.place(m as u32, slot);
            }
        }
    }

    /// Hint: `lpn`'s entry is looked up soon.
    #[inline(always)]
    pub fn prefetch(&self, lpn: u32) {
        match &self.cached {
            Cached::All { loaded, .. } => crate::prefetch::prefetch(loaded, (lpn >> 6) as usize),
            Cached::Lru(l) => l.prefetch(lpn),
        }
    }

    /// Look `lpn` up for access `a`. On a miss the entry is loaded
    /// (evicting the least recent, whose translation page is written back
    /// if the entry is dirty) and, unless the access is GC's or the page was
    /// never written, the access must wait for its translation page's read:
    /// the page is returned, and the caller hands its operation to
    /// [`MappingTable::wait`].
    #[inline]
    pub fn access(
        &mut self,
        lpn: u32,
        a: Access,
        flash: &mut Flash,
        q: &mut EventQueue,
        now: u64,
    ) -> Option<u32> {
        if self.ideal {
            self.counts.hits += 1;
            return None;
        }
        let dirty = a != Access::Read;
        let held = match &mut self.cached {
            Cached::All { loaded, dirty: d } => {
                let (w, b) = ((lpn >> 6) as usize, 1u64 << (lpn & 63));
                let held = loaded[w] & b != 0;
                if held && dirty {
                    d[w] |= b;
                }
                held
            }
            Cached::Lru(l) => {
                // GC updates an entry without making it recent: moving a
                // page is not a use of it.
                let s = if a != Access::Gc {
                    l.touch(lpn)
                } else {
                    l.peek(lpn)
                };
                match s {
                    Some(s) => {
                        if dirty {
                            let m = (lpn / self.per_tpage) as usize;
                            let mark = self.gen[m] << 1 | 1;
                            let v = l.val_mut(s);
                            if *v != mark {
                                *v = mark;
                                self.dirty[m] += 1;
                            }
                        }
                        true
                    }
                    None => false,
                }
            }
        };
        if held {
            self.counts.hits += 1;
            return None;
        }
        self.miss(lpn, a, flash, q, now)
    }

    /// A miss (see [`MappingTable::access`]).
    #[inline(never)]
    fn miss(
        &mut self,
        lpn: u32,
        a: Access,
        flash: &mut Flash,
        q: &mut EventQueue,
        now: u64,
    ) -> Option<u32> {
        self.counts.misses += 1;
        let m = lpn / self.per_tpage;
        let dirty = a != Access::Read;
        let evicted = match &mut self.cached {
            Cached::All { loaded, dirty: d } => {
                let (w, b) = ((lpn >> 6) as usize, 1u64 << (lpn & 63));
                loaded[w] |= b;
                if dirty {
                    d[w] |= b;
                }
                None
            }
            Cached::Lru(l) => {
                let v = if dirty {
                    self.dirty[m as usize] += 1;
                    self.gen[m as usize] << 1 | 1
                } else {
                    0
                };
                l.insert(lpn, v)
            }
        };
        let departing = self.mqsim && self.departing[m as usize];
        let wait =
            (a != Access::Gc && self.mvpn_loc[m as usize] != NONE && !departing).then(|| {
                if self.reading[m as usize] == NONE {
                    let (slot, bytes) = (self.mvpn_loc[m as usize], self.read_bytes);
                    let read = self.read_op(flash, slot, Class::MapRead, bytes, OWNER | m);
                    self.reading[m as usize] = read;
                    flash.submit(read, now, q);
                } else {
                    self.counts.merged_misses += 1;
                }
                m
            });
        if let Some((old, v)) = evicted {
            let mo = old / self.per_tpage;
            if v & 1 != 0 && v >> 1 == self.gen[mo as usize] {
                self.write_back(mo, flash, q, now);
            }
        }
        wait
    }

    /// Operation `op` (the head of an access's chain) runs once the read of
    /// translation page `m` in flight ends.
    #[inline]
    pub fn wait(&mut self, m: u32, op: u32) {
        self.waiting.push((m, op));
    }

    /// The read of translation page `m` ended at `now`: the operations
    /// waiting for it go.
    pub fn read_done(&mut self, m: u32, flash: &mut Flash, q: &mut EventQueue, now: u64) {
        self.reading[m as usize] = NONE;
        let mut i = 0;
        while i < self.waiting.len() {
            if self.waiting[i].0 == m {
                let (_, op) = self.waiting.remove(i);
                flash.submit(op, now, q);
            } else {
                i += 1;
            }
        }
    }

    /// Write translation page `m` back with every dirty cached entry of it:
    /// read it (to merge), program it at the log's head (executed, unlike
    /// MQSim's, whose translation programs are queued and never serviced:
    /// docs/FIDELITY.md, "Timing").
    fn write_back(&mut self, m: u32, flash: &mut Flash, q: &mut EventQueue, now: u64) {
        self.counts.write_backs += 1;
        self.counts.entries_written_back += self.dirty[m as usize] as u64;
        self.dirty[m as usize] = 0;
        self.gen[m as usize] = self.gen[m as usize].wrapping_add(1) & GEN_MASK;
        if self.mqsim {
            // MQSim: the merge read runs, the program never does, and the
            // page is "departing" from then on
            // (`generate_flash_writeback_request_for_mapping_data`).
            let loc = self.mvpn_loc[m as usize];
            if loc != NONE {
                let read = self.read_op(flash, loc, Class::MapWrite, self.read_bytes, NONE);
                flash.submit(read, now, q);
            }
            self.departing[m as usize] = true;
            return;
        }
        self.rewrite(m, flash, q, now);
        self.clean(flash, q, now);
    }

    /// Read translation page `m` where it is (if it is on flash) and
    /// program it at the log's head.
    fn rewrite(&mut self, m: u32, flash: &mut Flash, q: &mut EventQueue, now: u64) {
        let old = self.mvpn_loc[m as usize];
        let read = (old != NONE).then(|| {
            self.unplace(m, old);
            self.read_op(flash, old, Class::MapWrite, self.page_bytes, NONE)
        });
        let slot = self
            .take_slot()
            .expect("cleaning keeps a free row ahead of the log's head");
        self.place(m, slot);
        self.counts.programs += 1;
        let l = flash.layout().locate_translation(slot);
        let prog = flash.alloc(Op::new(
            Kind::Program,
            Class::MapWrite,
            l,
            l.block,
            self.page_bytes,
            NONE,
        ));
        match read {
            Some(r) => {
                flash.chain(r, prog);
                flash.submit(r, now, q);
            }
            None => flash.submit(prog, now, q),
        }
    }

    /// A read of `bytes` of the translation page in `slot` for `class`
    /// (a miss, or a write-back's merge), owned by `owner`; counted, not
    /// submitted.
    fn read_op(
        &mut self,
        flash: &mut Flash,
        slot: u32,
        class: Class,
        bytes: u32,
        owner: u32,
    ) -> u32 {
        self.counts.reads += 1;
        let l = flash.layout().locate_translation(slot);
        flash.alloc(Op::new(Kind::Read, class, l, l.block, bytes, owner))
    }

    /// Page `m` now lives in `slot`.
    fn place(&mut self, m: u32, slot: u32) {
        self.mvpn_loc[m as usize] = slot;
        self.ring_owner[slot as usize] = m;
        let r = (slot / self.row_slots) as usize;
        self.row_live[r] += 1;
        self.row_written[r] = true;
    }

    /// Page `m` leaves `slot`.
    fn unplace(&mut self, m: u32, slot: u32) {
        debug_assert_eq!(self.mvpn_loc[m as usize], slot);
        self.mvpn_loc[m as usize] = NONE;
        self.row_live[(slot / self.row_slots) as usize] -= 1;
    }

    /// The log's next slot (a full head row takes the next free row);
    /// `None` when no row is free.
    fn take_slot(&mut self) -> Option<u32> {
        if self.head_pos == self.row_slots {
            self.head_row = self.free_rows.pop_front()?;
            self.head_pos = 0;
        }
        let slot = self.head_row * self.row_slots + self.head_pos;
        self.head_pos += 1;
        Some(slot)
    }

    /// Slots the log can still take: the rest of the head row and the free
    /// rows.
    fn room(&self) -> u32 {
        (self.row_slots - self.head_pos) + self.free_rows.len() as u32 * self.row_slots
    }

    /// Clean while fewer than two rows are free: move live pages out of the
    /// victim (the written row other than the head's with the fewest live
    /// pages), as many as free it before the log's room runs out. With
    /// `f` slots of room and `l` live pages left, `l / (f - l)` per
    /// write-back does it (each write-back lowers `f - l` by one).
    fn clean(&mut self, flash: &mut Flash, q: &mut EventQueue, now: u64) {
        while self.victim.is_none() && self.free_rows.len() < 2 {
            let victim = (0..self.rows)
                .filter(|&r| r != self.head_row && self.row_written[r as usize])
                .min_by_key(|&r| self.row_live[r as usize]);
            let Some(v) = victim else {
                return;
            };
            self.victim = Some(v);
            self.victim_pos = 0;
            // A victim without live pages is freed at once; look again.
            self.move_live(0, flash, q, now);
        }
        let Some(v) = self.victim else {
            return;
        };
        let live = self.row_live[v as usize];
        let room = self.room();
        let moves = if room > live {
            live.div_ceil(room - live)
        } else {
            live
        };
        self.move_live(moves, flash, q, now);
    }

    /// Move up to `n` live pages of the victim to the log's head; a victim
    /// left without live pages is erased and joins the free rows.
    fn move_live(&mut self, mut n: u32, flash: &mut Flash, q: &mut EventQueue, now: u64) {
        let Some(v) = self.victim else {
            return;
        };
        let lo = v * self.row_slots;
        while n > 0 && self.row_live[v as usize] > 0 && self.victim_pos < self.row_slots {
            let s = lo + self.victim_pos;
            self.victim_pos += 1;
            let m = self.ring_owner[s as usize];
            if m != NONE && self.mvpn_loc[m as usize] == s {
                self.counts.cleaning_moves += 1;
                self.rewrite(m, flash, q, now);
                n -= 1;
            }
        }
        if self.row_live[v as usize] == 0 {
            self.row_written[v as usize] = false;
            for s in lo..lo + self.row_slots {
                self.ring_owner[s as usize] = NONE;
            }
            self.victim = None;
            self.free_rows.push_back(v);
            flash.arm_erase(self.segments + v, now, q);
        }
    }
}
