//! Time of the last user write of every LBA: the basis of lifetime
//! (invalidation-interval) features. A block's lifetime when it is
//! overwritten is `now - last(lba)`; the age of a valid block is the same
//! difference, since GC does not change when the user wrote it.

/// Last user-write time per LBA [user blocks]; `NEVER` before the first.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct LastWrite {
    t: Vec<u64>,
}

impl LastWrite {
    /// No LBA written yet.
    pub const NEVER: u64 = u64::MAX;

    /// For a device of `logical_blocks`.
    pub fn new(logical_blocks: u32) -> Self {
        LastWrite {
            t: vec![Self::NEVER; logical_blocks as usize],
        }
    }

    /// When `lba` was last written, or `NEVER`.
    #[inline(always)]
    pub fn get(&self, lba: u32) -> u64 {
        self.t[lba as usize]
    }

    /// Time since `lba` was last written, `None` if never [user blocks].
    /// `now` must not be earlier than the recorded write.
    #[inline(always)]
    pub fn since(&self, lba: u32, now: u64) -> Option<u64> {
        let t = self.t[lba as usize];
        debug_assert!(
            t == Self::NEVER || t <= now,
            "write of LBA {lba} recorded ahead of the clock"
        );
        (t != Self::NEVER).then(|| now - t)
    }

    /// Record a user write of `lba` at `now`.
    #[inline(always)]
    pub fn record(&mut self, lba: u32, now: u64) {
        self.t[lba as usize] = now;
    }

    /// Start loading the entry of `lba`.
    #[inline(always)]
    pub fn prefetch(&self, lba: u32) {
        crate::prefetch::prefetch(&self.t, lba as usize);
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.t.capacity() * 8
    }
}
