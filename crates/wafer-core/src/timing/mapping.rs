//! The mapping-table manager: the cached mapping table of a demand-based
//! FTL (DFTL, Gupta et al. ASPLOS'09, as MQSim's `Address_Mapping_Unit_Page_Level` runs it). Entries live in translation pages on
//! flash, in a log of block rows of their own; the controller caches some
//! entries in DRAM ([`Cmt`]). A miss reads the entry's translation page
//! before the access it serves; evicting a dirty entry writes its
//! translation page back at the log's head; entering a row cleans the row
//! after it (live translation pages moved, blocks erased). An ideal table
//! (`mapping.ideal`) never misses.

use super::cache::Cmt;
use super::config::SsdConfig;
use super::events::EventQueue;
use super::flash::{Class, Flash, Kind, Op, NONE};
use super::port::FtlPort;

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

/// The cached mapping table and its translation pages (see the module doc).
pub(super) struct MappingTable {
    ideal: bool,
    cmt: Cmt,
    /// Mapping entries per translation page.
    per_tpage: u32,
    /// Slot of the log holding each translation page, or [`NONE`].
    mvpn_loc: Vec<u32>,
    /// Translation page held by each slot of the log, or [`NONE`].
    ring_owner: Vec<u32>,
    ring_head: u64,
    ring_slots: u32,
    row_slots: u32,
    rows: u32,
    row_dirty: Vec<bool>,
    /// The translation area's rows follow this many data superblocks.
    segments: u32,
    /// Logical pages mapped.
    logical: usize,
    page_bytes: u32,
    /// Bytes a mapping read transfers (one entry's sector).
    read_bytes: u32,
    /// Accesses served from DRAM.
    pub hits: u64,
    /// Accesses that loaded their entry.
    pub misses: u64,
    /// Translation pages programmed.
    pub programs: u64,
    /// Translation pages read (misses, write-back merges, cleaning).
    pub reads: u64,
}

impl MappingTable {
    /// The table of `ssd` for `logical` pages over `physical` pages, its
    /// translation rows after `segments` data superblocks of
    /// `planes` blocks of `ssd.flash.pages_per_block` pages.
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
        MappingTable {
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
            segments,
            logical,
            page_bytes,
            read_bytes: page_bytes.min(512),
            hits: 0,
            misses: 0,
            programs: 0,
            reads: 0,
        }
    }

    /// Block rows of the translation area (erase units after the data
    /// superblocks).
    pub fn rows(&self) -> u32 {
        self.rows
    }

    /// Before timing starts: `lpn` was accessed (its entry is cached,
    /// clean).
    pub fn warm(&mut self, lpn: u32) {
        if !self.ideal && !self.cmt.hit(lpn, true, false) {
            self.cmt.load(lpn, false);
        }
    }

    /// Timing starts: every translation page that maps data is on flash,
    /// in the log's first slots.
    pub fn start(&mut self, ftl: &impl FtlPort) {
        if self.ideal {
            return;
        }
        let per = self.per_tpage as usize;
        let logical = self.logical;
        let mut slot = 0u32;
        for m in 0..self.mvpn_loc.len() {
            let lo = m * per;
            let hi = ((m + 1) * per).min(logical);
            if ftl.any_mapped(lo, hi) {
                self.mvpn_loc[m] = slot;
                self.ring_owner[slot as usize] = m as u32;
                self.row_dirty[(slot / self.row_slots) as usize] = true;
                slot += 1;
            }
        }
        self.ring_head = slot as u64;
    }

    /// Hint: `lpn`'s entry is looked up soon.
    #[inline(always)]
    pub fn prefetch(&self, lpn: u32) {
        self.cmt.prefetch(lpn);
    }

    /// Look `lpn` up; a miss loads the entry (evicting the least recent,
    /// whose write back is issued if dirty) and returns the
    /// translation-page read the access must wait for (not for GC, which
    /// knows the new address, nor for a translation page never written).
    #[inline]
    pub fn access(
        &mut self,
        lpn: u32,
        a: Access,
        flash: &mut Flash,
        q: &mut EventQueue,
        now: u64,
    ) -> Option<u32> {
        // GC updates an entry without making it recent: moving a page is
        // not a use of it.
        if self.ideal || self.cmt.hit(lpn, a != Access::Gc, a != Access::Read) {
            self.hits += 1;
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
        self.misses += 1;
        let m = lpn / self.per_tpage;
        let loc = self.mvpn_loc[m as usize];
        let evicted = self.cmt.load(lpn, a != Access::Read);
        let read = (a != Access::Gc && loc != NONE).then(|| {
            self.reads += 1;
            let l = flash.layout().locate_translation(loc);
            flash.alloc(Op::new(
                Kind::Read,
                Class::MapRead,
                l,
                l.block,
                self.read_bytes,
                NONE,
            ))
        });
        if let Some(k) = evicted {
            self.write_back(k / self.per_tpage, flash, q, now);
        }
        read
    }

    /// Write translation page `m` back: read it (to merge), program it at
    /// the translation log's head (DFTL; executed, unlike
    /// MQSim's, whose translation programs are queued and never serviced:
    /// docs/FIDELITY.md, "Timing").
    fn write_back(&mut self, m: u32, flash: &mut Flash, q: &mut EventQueue, now: u64) {
        let old = std::mem::replace(&mut self.mvpn_loc[m as usize], NONE);
        let read = (old != NONE).then(|| {
            self.reads += 1;
            let l = flash.layout().locate_translation(old);
            flash.alloc(Op::new(
                Kind::Read,
                Class::MapWrite,
                l,
                l.block,
                self.page_bytes,
                NONE,
            ))
        });
        let slot = self.slot(m, flash, q, now);
        self.mvpn_loc[m as usize] = slot;
        self.program(slot, read, flash, q, now);
    }

    fn program(
        &mut self,
        slot: u32,
        after: Option<u32>,
        flash: &mut Flash,
        q: &mut EventQueue,
        now: u64,
    ) {
        self.programs += 1;
        let l = flash.layout().locate_translation(slot);
        let prog = flash.alloc(Op::new(
            Kind::Program,
            Class::MapWrite,
            l,
            l.block,
            self.page_bytes,
            NONE,
        ));
        match after {
            Some(r) => {
                flash.chain(r, prog);
                flash.submit(r, now, q);
            }
            None => flash.submit(prog, now, q),
        }
    }

    /// The next slot of the translation log for page `m`; entering a block
    /// row cleans the row after it (live pages moved, blocks erased).
    fn slot(&mut self, m: u32, flash: &mut Flash, q: &mut EventQueue, now: u64) -> u32 {
        let slot = (self.ring_head % self.ring_slots as u64) as u32;
        self.ring_head += 1;
        if slot.is_multiple_of(self.row_slots) {
            let next = (slot / self.row_slots + 1) % self.rows;
            self.clean_row(next, flash, q, now);
        }
        self.ring_owner[slot as usize] = m;
        self.row_dirty[(slot / self.row_slots) as usize] = true;
        slot
    }

    fn clean_row(&mut self, row: u32, flash: &mut Flash, q: &mut EventQueue, now: u64) {
        if !self.row_dirty[row as usize] {
            return;
        }
        self.row_dirty[row as usize] = false;
        let lo = row * self.row_slots;
        for s in lo..lo + self.row_slots {
            let m = std::mem::replace(&mut self.ring_owner[s as usize], NONE);
            if m != NONE && self.mvpn_loc[m as usize] == s {
                self.reads += 1;
                let l = flash.layout().locate_translation(s);
                let read = flash.alloc(Op::new(
                    Kind::Read,
                    Class::MapWrite,
                    l,
                    l.block,
                    self.page_bytes,
                    NONE,
                ));
                self.mvpn_loc[m as usize] = NONE;
                let slot = self.slot(m, flash, q, now);
                self.mvpn_loc[m as usize] = slot;
                self.program(slot, Some(read), flash, q, now);
            }
        }
        flash.arm_erase(self.segments + row, now, q);
    }
}
