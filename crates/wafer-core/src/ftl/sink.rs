//! What the FTL tells a timing model: every flash operation it performs, in
//! order, with its physical block (docs/ARCHITECTURE.md, step 8: timing
//! owns the replay, the FTL stays one). The engine records them only when a
//! listener asked ([`crate::engine::Engine::record_flash`]); in WAF mode the record is `None` and
//! each recording site is one predictable branch on a field in cache.

use super::SegmentId;

/// One flash operation the FTL performed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum FlashOp {
    /// A user-written block was programmed at physical block `pba`.
    Program {
        /// Where.
        pba: u32,
    },
    /// GC moved a valid block: a read at `from`, then a program at `to`.
    Move {
        /// Source physical block (in the victim).
        from: u32,
        /// Destination physical block.
        to: u32,
    },
    /// GC erased segment `seg` (after moving its valid blocks).
    Erase {
        /// The victim.
        seg: SegmentId,
    },
}
