//! The FIFO of recent user writes that SepBIT's trace replayer tests
//! lifetimes against (`trace_replay/.../placement/SepBIT.java`): SepBIT's
//! `user_test = fifo` and UW's test.

use std::collections::VecDeque;

/// Marks an LBA whose last write has left the FIFO.
const OUT: u64 = u64::MAX;

/// The replayer's FIFO of recent user writes (`user_test = fifo`; UW's test).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct RecentWrites {
    /// LBAs of the most recent writes, oldest first.
    lbas: VecDeque<u32>,
    /// Per LBA, the write number (1-based) of its write in the FIFO, or [`OUT`].
    pos: Vec<u64>,
    /// LBAs written so far (the valid block count without trims).
    written: u64,
}

impl RecentWrites {
    /// An empty FIFO for `logical_blocks` LBAs.
    pub fn new(logical_blocks: u32) -> Self {
        RecentWrites {
            lbas: VecDeque::new(),
            pos: vec![OUT; logical_blocks as usize],
            written: 0,
        }
    }

    /// Whether a user write of `lba`, write number `id` (1-based; `first`:
    /// the LBA's first write), is short-lived under threshold `ell`; then
    /// the FIFO takes it and sheds at most two of its oldest entries while
    /// it holds more than min(V, ℓ), V the valid blocks: `valid` if given
    /// (the replayer's log count, [`LogValid`](super::log_valid::LogValid)), else the LBAs written.
    pub fn test(&mut self, lba: u32, id: u64, first: bool, ell: f64, valid: Option<f64>) -> bool {
        if first {
            self.written += 1;
        }
        let valid = valid.unwrap_or(self.written as f64);
        let prev = self.pos[lba as usize];
        let short = prev != OUT && ((id - prev) as f64) < ell.min(self.lbas.len() as f64);
        self.pos[lba as usize] = id;
        self.lbas.push_back(lba);
        if self.lbas.len() as f64 > valid.min(ell) {
            let head = id + 1 - self.lbas.len() as u64;
            for (round, number) in (head..head + 2).enumerate() {
                if round == 1 && self.lbas.len() as f64 <= ell {
                    break;
                }
                let old = self.lbas.pop_front().expect("non-empty fifo");
                if self.pos[old as usize] == number {
                    self.pos[old as usize] = OUT;
                }
            }
        }
        short
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.lbas.capacity() * 4 + self.pos.capacity() * 8
    }
}
