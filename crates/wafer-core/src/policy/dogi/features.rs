//! ML-Alloc's six input features (DOGI §4.2.2, Table 3) and the per-LBA
//! structures behind them (§4.2.3):
//!
//! | # | feature | kept as | scaled to |
//! |---|---|---|---|
//! | 0 | LBA | the request | lba / C |
//! | 1 | previously accessed LBA | one global | prev / C |
//! | 2 | frequency | 8-bit access bitmap per LBA, one bit per window | popcount / 8 |
//! | 3 | frequency per chunk | counter per 2 MiB chunk | log2(1 + n) / 24 |
//! | 4 | recency-weighted frequency | the same bitmap, bit i weighted 2^i (newest highest) | value / 255 |
//! | 5 | latest invalidation time | last-write time per LBA | log2(1 + t) / log2(1 + 16 C), 1 if never written |
//!
//! C is the logical capacity [blocks]. Deviations: the last-write time is
//! exact (8 bytes per LBA) where the paper keeps a 1-byte approximation;
//! the chunk counters halve when the bitmap window turns, so they count
//! recent writes (the paper does not say when they reset).

use crate::features::LastWrite;

/// Features per block.
pub const FEATURES: usize = 6;

/// The per-LBA and global state the features are read from.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct FeatureState {
    /// Last user write of every LBA.
    pub last: LastWrite,
    /// Per LBA: the access bitmap (bit 7 = the current window, older
    /// windows shifted towards bit 0), then a byte the policy keeps beside
    /// it (DOGI's category and flags), so that both come in one cache line.
    bits: Vec<[u8; 2]>,
    /// Writes per chunk (halved at every window turn).
    chunks: Vec<u32>,
    chunk_shift: u32,
    prev_lba: u32,
    /// Logical blocks, as f32 for scaling.
    capacity: f32,
    /// log2(1 + 16 C): the scale of the latest invalidation time.
    life_scale: f32,
}

impl FeatureState {
    /// For `logical_blocks` LBAs and chunks of `chunk_blocks` (a power of
    /// two), every LBA's policy byte `tag`.
    pub fn new(logical_blocks: u32, chunk_blocks: u32, tag: u8) -> Self {
        let chunk_shift = chunk_blocks.max(1).next_power_of_two().trailing_zeros();
        FeatureState {
            last: LastWrite::new(logical_blocks),
            bits: vec![[0, tag]; logical_blocks as usize],
            chunks: vec![0; ((logical_blocks as usize) >> chunk_shift) + 1],
            chunk_shift,
            prev_lba: 0,
            capacity: logical_blocks.max(1) as f32,
            life_scale: (1.0 + 16.0 * logical_blocks.max(1) as f32).log2(),
        }
    }

    /// Features of a write of `lba` at `now` into `x` (the write itself not
    /// counted yet), then count it in the global and per-chunk state (the
    /// per-LBA state is updated by [`FeatureState::record`] once the block
    /// is applied).
    #[inline]
    pub fn extract(&mut self, lba: u32, now: u64, x: &mut [f32]) {
        let b = self.bits[lba as usize][0];
        let c = &mut self.chunks[(lba >> self.chunk_shift) as usize];
        x[0] = lba as f32 / self.capacity;
        x[1] = self.prev_lba as f32 / self.capacity;
        x[2] = b.count_ones() as f32 / 8.0;
        x[3] = ((1 + *c) as f32).log2() / 24.0;
        x[4] = b as f32 / 255.0;
        x[5] = match self.last.since(lba, now) {
            Some(t) => (1.0 + t as f32).log2() / self.life_scale,
            None => 1.0,
        };
        *c = c.saturating_add(1);
        self.prev_lba = lba;
    }

    /// The write of `lba` at `now` was applied.
    #[inline(always)]
    pub fn record(&mut self, lba: u32, now: u64) {
        self.last.record(lba, now);
        self.bits[lba as usize][0] |= 0x80;
    }

    /// The bitmap window turned: every LBA's history moves one bit older and
    /// the chunk counters halve.
    pub fn turn_window(&mut self) {
        for b in &mut self.bits {
            b[0] >>= 1;
        }
        for c in &mut self.chunks {
            *c >>= 1;
        }
    }

    /// The policy's byte of `lba` (see `bits`).
    #[inline(always)]
    pub fn tag(&self, lba: u32) -> u8 {
        self.bits[lba as usize][1]
    }

    /// The policy's byte of `lba`, to change.
    #[inline(always)]
    pub fn tag_mut(&mut self, lba: u32) -> &mut u8 {
        &mut self.bits[lba as usize][1]
    }

    /// Clear the bits `mask` of every LBA's policy byte.
    pub fn clear_tags(&mut self, mask: u8) {
        for b in &mut self.bits {
            b[1] &= !mask;
        }
    }

    /// Start loading what [`FeatureState::tag`] reads.
    #[inline(always)]
    pub fn prefetch_tag(&self, lba: u32) {
        crate::prefetch::prefetch(&self.bits, lba as usize);
    }

    /// Start loading `lba`'s entries.
    #[inline(always)]
    pub fn prefetch(&self, lba: u32) {
        self.last.prefetch(lba);
        crate::prefetch::prefetch(&self.bits, lba as usize);
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.last.memory_bytes() + self.bits.capacity() * 2 + self.chunks.capacity() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_follow_the_history() {
        let mut f = FeatureState::new(1024, 64, 0);
        let mut x = [0f32; FEATURES];
        f.extract(100, 0, &mut x);
        assert_eq!(x[2], 0.0);
        assert_eq!(x[5], 1.0, "never written");
        f.record(100, 0);
        f.extract(101, 1, &mut x);
        assert!((x[1] - 100.0 / 1024.0).abs() < 1e-6, "previous LBA");
        assert!(
            (x[3] - 1.0 / 24.0).abs() < 1e-6,
            "one earlier write in the chunk"
        );
        f.record(101, 1);
        f.turn_window();
        f.extract(100, 7, &mut x);
        assert_eq!(x[2], 1.0 / 8.0);
        assert_eq!(x[4], 64.0 / 255.0, "written one window ago");
        assert!((x[5] - 8f32.log2() / (1.0 + 16.0 * 1024.0f32).log2()).abs() < 1e-6);
    }
}
