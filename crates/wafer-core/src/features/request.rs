//! The per-write inputs of the sequence models (PHFTL's GRU, ML-DT's TCN):
//! what is known of a block when it is written, scaled to about [0, 1].
//!
//! | # | input | scaled |
//! |---|---|---|
//! | 0 | time since the LBA's previous write | log2(1 + t) / log2(1 + 16 C); 1 if never written |
//! | 1 | request length [blocks] | log2(len) / 16 |
//! | 2 | position in the request | offset / len |
//! | 3 | LBA | lba / C |

use super::LastWrite;
use crate::engine::UserWrite;

/// Inputs per write.
pub const INPUTS: usize = 4;

/// The inputs of write `w` (before it is recorded in `last`), for a device
/// of `capacity` logical blocks.
#[inline]
pub fn inputs(last: &LastWrite, w: &UserWrite, capacity: u32) -> [f32; INPUTS] {
    let c = capacity.max(1) as f32;
    let since = match last.since(w.lba, w.time) {
        Some(t) => (1.0 + t as f32).log2() / (1.0 + 16.0 * c).log2(),
        None => 1.0,
    };
    let len = w.req_blocks.max(1) as f32;
    [
        since,
        len.log2() / 16.0,
        w.req_offset as f32 / len,
        w.lba as f32 / c,
    ]
}
