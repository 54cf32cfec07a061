//! The DRAM cache manager: an LRU of host pages (write-back, read, or both;
//! MQSim's `Data_Cache_Manager_Flash_Advanced`), the flush limit that makes writes wait when too
//! many dirty pages are on their way to flash, and the list of host pages
//! waiting for room. It decides; the driver writes the pages it evicts to
//! flash through the FTL.

use std::collections::VecDeque;

use super::cache::Lru;
use super::config::{CacheMode, SsdConfig};
use super::flash::NONE;
use super::keymap::Recent;

/// Marks a cached page that flash does not hold yet.
const DIRTY: u64 = 1 << 63;

/// What placing a host page in the cache asks of the driver.
pub(super) enum Place {
    /// No room: the page waits for a flush to finish.
    Wait,
    /// Placed.
    Placed {
        /// A dirty page evicted for it, and its sectors: write it to flash
        /// first.
        evicted: Option<(u32, u64)>,
        /// The page itself goes to flash now (a cold full-page write,
        /// `eager_cold_writeback`); it stays in the cache clean.
        through: bool,
        /// The page the cache evicts next (to prefetch its entries).
        next_lru: Option<u32>,
    },
}

/// What the cache counted.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct CacheCounts {
    /// Reads served whole from the cache.
    pub read_hits: u64,
    /// Reads that went to flash.
    pub read_misses: u64,
    /// Writes to a cached page.
    pub write_hits: u64,
    /// Writes that took a new entry.
    pub write_misses: u64,
    /// Host pages that waited for room.
    pub waits: u64,
}

/// The DRAM cache (see the module doc).
pub(super) struct WriteCache {
    /// Writes are cached (write-back).
    write: bool,
    /// Reads are cached.
    read: bool,
    /// The cached pages: a small share of the drive's, so hash-indexed.
    lru: Lru<u64>,
    /// Before timing starts: the pages written last ([`WriteCache::stamp_write`]).
    written: Recent,
    /// Host pages waiting for room: (request, page, sectors).
    waiting: VecDeque<(u32, u32, u64)>,
    /// Dirty pages on their way to flash.
    flushing: u32,
    flush_limit: u32,
    eager: bool,
    /// MQSim's cold-write window (`CacheConfig::cold_window_ns`; 0: off),
    /// the pages written in the current one, and when it ends.
    cold_window: u64,
    recent: std::collections::HashSet<u32>,
    window_end: u64,
    /// What it counted.
    counts: CacheCounts,
}

impl WriteCache {
    /// The cache of `ssd` over `logical` pages of `page_bytes`; a flush
    /// limit of 0 in the preset means one page per plane (`planes`).
    pub fn new(ssd: &SsdConfig, logical: usize, page_bytes: u32, planes: u32) -> WriteCache {
        let cap = ((ssd.cache.capacity_mib * 1048576.0) / page_bytes as f64).floor() as u32;
        let (write, read) = match ssd.cache.mode {
            CacheMode::Off => (false, false),
            CacheMode::Write => (true, false),
            CacheMode::Read => (false, true),
            CacheMode::ReadWrite => (true, true),
        };
        let on = (write || read) && cap > 0;
        WriteCache {
            write: write && on,
            read: read && on,
            lru: Lru::hashed(if on { logical } else { 0 }, if on { cap } else { 0 }),
            written: Recent::new(0),
            waiting: VecDeque::new(),
            flushing: 0,
            flush_limit: if ssd.cache.flush_limit_pages > 0 {
                ssd.cache.flush_limit_pages
            } else {
                planes
            },
            eager: ssd.cache.eager_cold_writeback,
            cold_window: ssd.cache.cold_window_ns,
            recent: std::collections::HashSet::new(),
            window_end: 0,
            counts: CacheCounts::default(),
        }
    }

    /// Whether writes are cached (write-back); else they go to flash
    /// through [`WriteCache::write_around`].
    #[inline]
    pub fn caches_writes(&self) -> bool {
        self.write
    }

    /// What the cache counted.
    pub fn counts(&self) -> &CacheCounts {
        &self.counts
    }

    /// Place a host write of sectors `mask` of page `lpn` (`full`: every
    /// sector); `unmapped` says whether flash holds no copy of it yet (asked
    /// only for a full-page miss with `eager_cold_writeback`).
    #[inline]
    pub fn place(
        &mut self,
        lpn: u32,
        mask: u64,
        full: u64,
        now: u64,
        unmapped: impl FnOnce() -> bool,
    ) -> Place {
        let mqsim = self.cold_window > 0;
        if mqsim {
            if now > self.window_end {
                self.recent.clear();
                self.window_end = now + self.cold_window;
            }
            // Back-pressure for every page, hits too (MQSim's
            // `back_pressure_buffer_depth` check comes first).
            if self.flushing >= self.flush_limit {
                return Place::Wait;
            }
        }
        if let Some(s) = self.lru.touch(lpn) {
            self.counts.write_hits += 1;
            if mqsim && self.recent.insert(lpn) {
                // Cold in this window: to flash now, the entry clean.
                *self.lru.val_mut(s) = (self.lru.val(s) | mask) & !DIRTY;
                self.flushing += 1;
                return Place::Placed {
                    evicted: None,
                    through: true,
                    next_lru: None,
                };
            }
            *self.lru.val_mut(s) |= mask | DIRTY;
            return Place::Placed {
                evicted: None,
                through: false,
                next_lru: None,
            };
        }
        let mut evicted = None;
        let mut next_lru = None;
        if self.lru.full() {
            let (s, k) = self.lru.lru().expect("a full cache has an LRU entry");
            let v = self.lru.val(s);
            if v & DIRTY != 0 {
                if self.flushing >= self.flush_limit {
                    return Place::Wait;
                }
                self.flushing += 1;
                evicted = Some((k, v & !DIRTY));
            }
            self.lru.remove(k);
            next_lru = self.lru.prefetch_lru();
        }
        self.counts.write_misses += 1;
        let through = if mqsim {
            self.recent.insert(lpn)
        } else {
            self.eager && mask == full && self.flushing < self.flush_limit && unmapped()
        };
        if through {
            self.flushing += 1;
            self.lru.insert(lpn, mask);
        } else {
            self.lru.insert(lpn, mask | DIRTY);
        }
        Place::Placed {
            evicted,
            through,
            next_lru,
        }
    }

    /// A flush finished: room for one more.
    pub fn flushed(&mut self) {
        self.flushing -= 1;
    }

    /// Whether sectors `mask` of `lpn` are all cached (a read served from
    /// DRAM); counts the hit or miss.
    #[inline]
    pub fn read_hit(&mut self, lpn: u32, mask: u64) -> bool {
        if self.write || self.read {
            if let Some(s) = self.lru.touch(lpn) {
                if self.lru.val(s) & mask == mask {
                    self.counts.read_hits += 1;
                    return true;
                }
            }
        }
        self.counts.read_misses += 1;
        false
    }

    /// A read from flash fills the read cache with page `lpn` (`full`:
    /// every sector) while there is room.
    pub fn fill(&mut self, lpn: u32, full: u64) {
        if self.read && !self.lru.full() {
            self.lru.insert(lpn, full);
        }
    }

    /// Page `lpn` changed behind the cache (a trim): its cached copy goes.
    pub fn invalidate(&mut self, lpn: u32) {
        self.lru.remove(lpn);
    }

    /// A write of page `lpn` went to flash around the cache (writes are
    /// not cached): a read-cached copy goes.
    #[inline]
    pub fn write_around(&mut self, lpn: u32) {
        if self.read {
            self.lru.remove(lpn);
        }
    }

    /// Whether host pages wait for room (a new one waits behind them).
    #[inline]
    pub fn any_waiting(&self) -> bool {
        !self.waiting.is_empty()
    }

    /// Sectors `mask` of page `lpn` of request `id` wait for room (behind
    /// those waiting already).
    pub fn wait(&mut self, id: u32, lpn: u32, mask: u64) {
        self.counts.waits += 1;
        self.waiting.push_back((id, lpn, mask));
    }

    /// The first page waiting for room: (request, page, sectors).
    #[inline]
    pub fn first_waiting(&self) -> Option<(u32, u32, u64)> {
        self.waiting.front().copied()
    }

    /// The first page waiting got its place: it stops waiting.
    #[inline]
    pub fn admit_first(&mut self) {
        self.waiting.pop_front();
    }

    /// Before timing starts: the cache keeps the pages written last
    /// ([`Recent`]), not a list.
    pub fn begin_stamps(&mut self) {
        self.lru.clear();
        self.written = Recent::new(self.lru.capacity());
    }

    /// Before timing starts: a full-page write of `lpn`, the `clock`-th
    /// write of the preconditioning. Returns whether the cache absorbs it:
    /// the page was written within the cache's last `capacity` writes, so
    /// it is still cached dirty and the FTL gets one program for both. (A
    /// list would also absorb a page last written more writes ago when few
    /// distinct pages came between; the preconditioning's workloads repeat
    /// pages rarely inside a cache's span.)
    #[inline]
    pub fn stamp_write(&mut self, lpn: u32, clock: u32) -> bool {
        let prev = self.written.stamp(lpn, clock);
        prev != NONE && clock - prev < self.lru.capacity()
    }

    /// Hint: `lpn` is written soon, before timing starts.
    #[inline(always)]
    pub fn prefetch_stamp(&self, lpn: u32) {
        self.written.prefetch(lpn);
    }

    /// Before timing starts: `lpn` changed behind the cache.
    #[inline]
    pub fn unstamp(&mut self, lpn: u32) {
        self.written.forget(lpn);
    }

    /// Stamps move `by` earlier.
    pub fn rebase_stamps(&mut self, by: u32) {
        self.written.rebase(by);
    }

    /// Timing starts: the cache holds the most recently written pages,
    /// clean (`full`: every sector; the preconditioning wrote them to
    /// flash), so the end's flush writes only what the timed requests
    /// wrote.
    pub fn end_stamps(&mut self, full: u64) {
        for k in self.written.newest() {
            self.lru.insert(k, full);
        }
        self.written = Recent::new(0);
    }

    /// The cached pages, least recent first.
    pub fn keys(&self) -> Vec<u32> {
        self.lru.entries().map(|(k, _)| k).collect()
    }

    /// Pages the write cache holds at most (0 without one).
    pub fn capacity(&self) -> u32 {
        if self.write {
            self.lru.capacity()
        } else {
            0
        }
    }

    /// The dirty pages and their sectors, least recent first.
    pub fn dirty(&self) -> Vec<(u32, u64)> {
        self.lru
            .entries()
            .filter(|&(_, v)| v & DIRTY != 0)
            .map(|(k, v)| (k, v & !DIRTY))
            .collect()
    }

    /// How many pages are dirty (no list built: a result asks it).
    pub fn dirty_count(&self) -> u64 {
        self.lru.entries().filter(|&(_, v)| v & DIRTY != 0).count() as u64
    }

    /// Page `lpn` is on its way to flash (the end's flush): clean in the
    /// cache, counted as flushing.
    pub fn flush_page(&mut self, lpn: u32) {
        if let Some(s) = self.lru.peek(lpn) {
            *self.lru.val_mut(s) &= !DIRTY;
        }
        self.flushing += 1;
    }

    /// Hint: `lpn` is accessed soon (its index entry).
    #[inline(always)]
    pub fn prefetch(&self, lpn: u32) {
        self.lru.prefetch(lpn);
    }

    /// Hint: `lpn` is accessed very soon (its slot).
    #[inline(always)]
    pub fn prefetch_slot(&self, lpn: u32) {
        self.lru.prefetch_slot(lpn);
    }
}
