//! The cost of Shiro's on-flash ML metadata (§III-D, Fig. 6), modelled,
//! not stored: every data page has a 36 B entry (its int8 hidden state,
//! 32 B, and its last-write time, 4 B) in a meta page at the tail of its
//! superblock, ⌊page / 36⌋ entries per meta page; a page at offset o of a
//! superblock has its entry in meta page ⌊o / entries⌋ of it. A user
//! write of a page already written looks its old copy's entry up in an LRU
//! cache of meta pages holding 1% of all meta pages; a miss is one extra
//! flash read (the meta page is then cached). GC reads the metadata from
//! the pages' out-of-band area, so it costs no lookup; an erased
//! superblock's meta pages leave the cache.
//!
//! Choices: the meta pages are counted (`meta_fraction`: about 0.22% of the
//! flash) but do not take data slots, so the device's OP is the same for
//! every policy; an entry is found by its copy's offset in the whole
//! superblock.

use serde::Serialize;

/// Bytes of metadata per data page: an int8 hidden state of 32 units and
/// a 4 B timestamp (§III-D).
pub const ENTRY_BYTES: u32 = 36;

const NIL: u32 = u32::MAX;

/// What the metadata cost, for the result.
#[derive(Clone, Copy, Debug, Serialize, serde::Deserialize)]
pub struct MetaReport {
    /// Entries per meta page.
    pub entries_per_meta_page: u32,
    /// Meta pages per superblock.
    pub meta_pages_per_segment: u32,
    /// Share of the flash the meta pages would take.
    pub meta_fraction: f64,
    /// Meta pages the cache holds (1% of all).
    pub cache_pages: u64,
    /// RAM of the cache [bytes].
    pub cache_bytes: u64,
    /// RAM of the cache per logical page [bytes].
    pub cache_bytes_per_logical_page: f64,
    /// Lookups (user writes of pages written before).
    pub lookups: u64,
    /// Found in the cache.
    pub hits: u64,
    /// Missed: one extra flash read each.
    pub extra_flash_reads: u64,
    /// hits / lookups.
    pub hit_rate: Option<f64>,
    /// Meta pages programmed (per sealed superblock).
    pub meta_page_writes: u64,
}

/// LRU cache of meta pages over flat arrays (a doubly linked list of
/// slots, a slot per cached meta page, a slot index per meta page).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct MetaCache {
    segment_blocks: u32,
    entries: u32,
    per_segment: u32,
    page_bytes: u32,
    logical_pages: u64,
    /// Slot of each meta page, or NIL.
    slot_of: Vec<u32>,
    page: Vec<u32>,
    prev: Vec<u32>,
    next: Vec<u32>,
    head: u32,
    tail: u32,
    used: u32,
    lookups: u64,
    hits: u64,
    meta_writes: u64,
}

impl MetaCache {
    /// For `segments` superblocks of `segment_blocks` pages of `page_bytes`,
    /// caching `fraction` of the meta pages (at least one).
    pub fn new(
        segments: u32,
        segment_blocks: u32,
        page_bytes: u32,
        logical_pages: u32,
        fraction: f64,
    ) -> Self {
        let entries = (page_bytes / ENTRY_BYTES).max(1);
        let per_segment = segment_blocks.div_ceil(entries);
        let total = segments as u64 * per_segment as u64;
        let cap = ((total as f64 * fraction).ceil() as u64).clamp(1, total.max(1)) as usize;
        MetaCache {
            segment_blocks,
            entries,
            per_segment,
            page_bytes,
            logical_pages: logical_pages as u64,
            slot_of: vec![NIL; total as usize],
            page: vec![NIL; cap],
            prev: vec![NIL; cap],
            next: vec![NIL; cap],
            head: NIL,
            tail: NIL,
            used: 0,
            lookups: 0,
            hits: 0,
            meta_writes: 0,
        }
    }

    fn unlink(&mut self, s: u32) {
        let (p, n) = (self.prev[s as usize], self.next[s as usize]);
        if p == NIL {
            self.head = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NIL {
            self.tail = p;
        } else {
            self.prev[n as usize] = p;
        }
    }

    fn push_front(&mut self, s: u32) {
        self.prev[s as usize] = NIL;
        self.next[s as usize] = self.head;
        if self.head != NIL {
            self.prev[self.head as usize] = s;
        }
        self.head = s;
        if self.tail == NIL {
            self.tail = s;
        }
    }

    /// A user write whose old copy is at physical page `old`: look its
    /// entry up; true on a hit.
    #[inline]
    pub fn lookup(&mut self, old: u32) -> bool {
        self.lookups += 1;
        let seg = old / self.segment_blocks;
        let off = old % self.segment_blocks;
        let mp = (seg * self.per_segment + off / self.entries) as usize;
        let s = self.slot_of[mp];
        if s != NIL {
            self.hits += 1;
            if self.head != s {
                self.unlink(s);
                self.push_front(s);
            }
            return true;
        }
        let s = if (self.used as usize) < self.page.len() {
            self.used += 1;
            self.used - 1
        } else {
            let victim = self.tail;
            self.unlink(victim);
            let old = self.page[victim as usize];
            if old != FREED {
                self.slot_of[old as usize] = NIL;
            }
            victim
        };
        self.page[s as usize] = mp as u32;
        self.slot_of[mp] = s;
        self.push_front(s);
        false
    }

    /// Superblock `seg` was sealed: its meta pages are programmed.
    pub fn sealed(&mut self) {
        self.meta_writes += self.per_segment as u64;
    }

    /// Superblock `seg` is erased: its meta pages leave the cache.
    pub fn erased(&mut self, seg: u32) {
        let first = seg as usize * self.per_segment as usize;
        for mp in first..first + self.per_segment as usize {
            let s = self.slot_of[mp];
            if s != NIL {
                self.slot_of[mp] = NIL;
                self.unlink(s);
                // The freed slot goes to the back: it is reused first.
                self.prev[s as usize] = self.tail;
                self.next[s as usize] = NIL;
                self.page[s as usize] = FREED;
                if self.tail != NIL {
                    self.next[self.tail as usize] = s;
                }
                self.tail = s;
                if self.head == NIL {
                    self.head = s;
                }
            }
        }
    }

    /// The figures so far.
    pub fn report(&self) -> MetaReport {
        let cap = self.page.len() as u64;
        let bytes = cap * self.page_bytes as u64;
        MetaReport {
            entries_per_meta_page: self.entries,
            meta_pages_per_segment: self.per_segment,
            meta_fraction: self.per_segment as f64
                / (self.segment_blocks + self.per_segment) as f64,
            cache_pages: cap,
            cache_bytes: bytes,
            cache_bytes_per_logical_page: bytes as f64 / self.logical_pages.max(1) as f64,
            lookups: self.lookups,
            hits: self.hits,
            extra_flash_reads: self.lookups - self.hits,
            hit_rate: (self.lookups > 0).then(|| self.hits as f64 / self.lookups as f64),
            meta_page_writes: self.meta_writes,
        }
    }

    /// Bytes held by the model (not the modelled RAM).
    pub fn memory_bytes(&self) -> usize {
        (self.slot_of.capacity() + self.page.capacity() * 3) * 4
    }
}

/// Page of a slot freed by an erase (never a meta page index).
const FREED: u32 = u32::MAX - 1;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_of_the_papers_device() {
        // 16 KiB pages: 455 entries per meta page; a 16,384-page
        // superblock has 37 meta pages over its 16,384 slots (the paper's
        // 36 are over its 16,348 data pages).
        let c = MetaCache::new(171, 16_384, 16_384, 2_621_440, 0.01);
        let r = c.report();
        assert_eq!(
            (r.entries_per_meta_page, r.meta_pages_per_segment),
            (455, 37)
        );
        assert_eq!(r.cache_pages, (171.0f64 * 37.0 * 0.01).ceil() as u64);
        assert!((r.meta_fraction - 37.0 / 16_421.0).abs() < 1e-12);
        // ~0.38 B of RAM per logical page (the paper: 0.36).
        assert!(
            (r.cache_bytes_per_logical_page - 0.39).abs() < 0.02,
            "{}",
            r.cache_bytes_per_logical_page
        );
    }

    #[test]
    fn lru_hits_misses_and_erase() {
        // 2 segments of 10 pages, 4 entries per meta page: 3 meta pages
        // each, 6 in all; a cache of 2.
        let c = MetaCache::new(2, 10, 4 * ENTRY_BYTES, 20, 0.34);
        assert_eq!(c.report().cache_pages, 3);
        let mut c = MetaCache::new(2, 10, 4 * ENTRY_BYTES, 20, 0.3);
        assert_eq!(c.report().cache_pages, 2);
        assert!(!c.lookup(0)); // meta page 0
        assert!(c.lookup(3)); // same meta page
        assert!(!c.lookup(4)); // meta page 1
        assert!(c.lookup(0)); // 0 is most recent now
        assert!(!c.lookup(12)); // segment 1, meta page 3: evicts 1
        assert!(!c.lookup(5), "meta page 1 was evicted");
        assert!(!c.lookup(1), "meta page 0 was evicted by 1");
        assert!(!c.lookup(12)); // cache: meta pages 3, 0
        c.erased(1);
        // Meta page 3 left with segment 1 (its slot is reused first); 0 stays.
        assert!(c.lookup(2));
        assert!(!c.lookup(13));
        assert!(c.lookup(0), "the freed slot was reused, 0 kept");
        let r = c.report();
        assert_eq!((r.lookups, r.hits, r.extra_flash_reads), (11, 4, 7));
        c.sealed();
        assert_eq!(c.report().meta_page_writes, 3);
    }
}
