//! The timed replay's two seams: the FTL it drives ([`FtlPort`], which the
//! engine implements) and the host requests it replays ([`RequestFeed`],
//! which the run layer implements over its request source).

use crate::engine::Engine;
use crate::error::Result;
use crate::ftl::FlashOp;
use crate::request::Request;
use crate::trace::Extent;

/// What the driver asks of the FTL: requests in, the flash operations they
/// caused out, and the few facts the cache and the mapping table read.
pub trait FtlPort {
    /// Apply one request (placement, GC, statistics).
    fn submit(&mut self, r: &Request) -> Result<()>;
    /// Physical page of logical page `lpn`, if mapped.
    fn lookup(&self, lpn: u32) -> Option<u32>;
    /// Logical page stored at physical page `pba`, if it is valid.
    fn stored_at(&self, pba: u32) -> Option<u32>;
    /// Start logging the flash operations requests cause.
    fn record_flash(&mut self);
    /// Statistics start again from here (the preconditioning is over).
    fn reset_stats(&mut self);
    /// Swap the flash operations logged since the last call into `log`
    /// (left as it is when nothing is logged).
    fn take_flash_ops(&mut self, log: &mut Vec<FlashOp>);
    /// Free segments now.
    fn free_segments(&self) -> usize;
    /// Hint: `lpn` is written soon; start loading its table entries
    /// (`deep`: what those entries point to, a step later).
    fn prefetch(&self, lpn: u32, deep: bool);
    /// The device is idle from `now_ns` for `gap_ns` (background GC).
    fn idle(&mut self, now_ns: u64, gap_ns: u64) -> Result<()>;
    /// Statistics windows the FTL has closed so far.
    fn windows_closed(&self) -> usize;
    /// Whether any logical page of `lo..hi` is mapped.
    fn any_mapped(&self, lo: usize, hi: usize) -> bool;
}

impl FtlPort for Engine {
    #[inline(always)]
    fn submit(&mut self, r: &Request) -> Result<()> {
        Engine::submit(self, r)
    }
    #[inline(always)]
    fn lookup(&self, lpn: u32) -> Option<u32> {
        self.ftl.lookup(lpn)
    }
    #[inline(always)]
    fn stored_at(&self, pba: u32) -> Option<u32> {
        self.ftl.stored_at(pba)
    }
    fn record_flash(&mut self) {
        Engine::record_flash(self, true);
    }
    fn reset_stats(&mut self) {
        Engine::reset_stats(self);
    }
    #[inline(always)]
    fn take_flash_ops(&mut self, log: &mut Vec<FlashOp>) {
        if let Some(ops) = self.flash_ops() {
            std::mem::swap(log, ops);
        }
    }
    #[inline(always)]
    fn free_segments(&self) -> usize {
        self.ftl.free_segments()
    }
    #[inline(always)]
    fn prefetch(&self, lpn: u32, deep: bool) {
        self.prefetch_write(lpn, deep);
    }
    fn idle(&mut self, now_ns: u64, gap_ns: u64) -> Result<()> {
        Engine::idle(self, now_ns, gap_ns)
    }
    #[inline(always)]
    fn windows_closed(&self) -> usize {
        self.stats.windows.len()
    }
    fn any_mapped(&self, lo: usize, hi: usize) -> bool {
        self.ftl.map[lo..hi]
            .iter()
            .any(|&p| p != crate::ftl::UNMAPPED)
    }
}

/// The host requests a timed replay consumes, in order.
pub trait RequestFeed {
    /// The next request and the bytes it covers; `None` once the stream
    /// (or the run's length, which may cut the last write short) is over.
    fn next(&mut self, page_bytes: u32) -> Result<Option<(Request, Extent)>>;
    /// Whether the feed is over: the last request handed out ended it.
    fn ended(&self) -> bool;
    /// User blocks handed out so far [blocks].
    fn written(&self) -> u64;
}
