//! The page classifier's six input features (Shiro §III-B, Fig. 4) and
//! their hexadecimal encoding (one input neuron per hex digit).
//!
//! | feature | what | digits |
//! |---|---|---|
//! | `prev_lifetime` | pages written since the page's previous write (all F: never written) | 8 |
//! | `io_len` | request length [4 KiB units] | 4 |
//! | `is_seq` | with the 32 most recent write requests, ≥ 128 KiB of consecutive data ending with this request | 1 |
//! | `chunk_write` | write requests that touched the page's 1 MiB chunk in this write window | 4 |
//! | `chunk_read` | read requests that touched the chunk in this window | 4 |
//! | `rw_rat` | reads / (reads + writes) of all requests so far, × 4095 | 3 |
//!
//! 24 digits, most significant first, a value too large for its digits
//! saturating to all F; the model sees digit d as d/15. The paper gives
//! the features, the encoding and (§V-E) 24 B per time step; the digit
//! counts, units, chunk size and what "recent" means are ours.

use crate::policy::UserWrite;
use crate::request::Request;

/// Digits of each feature, in input order.
pub const DIGITS: [usize; 6] = [8, 4, 1, 4, 4, 3];
/// Input neurons: one per digit.
pub const INPUTS: usize = 24;
/// Write requests `is_seq` looks back over (Shiro §III-B).
pub const SEQ_WINDOW: usize = 32;
/// Consecutive bytes that make a request sequential (Shiro §III-B).
pub const SEQ_BYTES: u64 = 128 << 10;
/// Chunk of `chunk_write` / `chunk_read` [bytes] (ours: one 64-page
/// superpage of the paper's device).
pub const CHUNK_BYTES: u64 = 1 << 20;
/// `io_len`'s unit [bytes].
pub const IO_UNIT: u64 = 4096;

/// Hex digits of `v` in `n` digits, most significant first, saturating.
#[inline(always)]
pub fn hex_digits(v: u64, n: usize, out: &mut [u8]) {
    let max = if n >= 16 {
        u64::MAX
    } else {
        (1u64 << (4 * n)) - 1
    };
    let v = v.min(max);
    for (i, d) in out[..n].iter_mut().enumerate() {
        *d = ((v >> (4 * (n - 1 - i))) & 0xF) as u8;
    }
}

/// The six raw feature values of one page write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Raw {
    /// Pages since the previous write of the page; `None` for its first.
    pub prev_lifetime: Option<u64>,
    /// Request length [4 KiB units].
    pub io_len: u64,
    /// The request is part of a sequential run.
    pub is_seq: bool,
    /// Write requests that touched the chunk in this window.
    pub chunk_write: u64,
    /// Read requests that touched the chunk in this window.
    pub chunk_read: u64,
    /// Read share of all requests so far, × 4095.
    pub rw_rat: u64,
}

impl Raw {
    /// The 24 hex digits.
    pub fn encode(&self) -> [u8; INPUTS] {
        let mut d = [0u8; INPUTS];
        let vals = [
            self.prev_lifetime.unwrap_or(u64::MAX),
            self.io_len,
            self.is_seq as u64,
            self.chunk_write,
            self.chunk_read,
            self.rw_rat,
        ];
        let mut at = 0;
        for (v, n) in vals.into_iter().zip(DIGITS) {
            hex_digits(v, n, &mut d[at..at + n]);
            at += n;
        }
        d
    }
}

/// d / 15 for each hex digit d.
const SCALED: [f32; 16] = {
    let mut t = [0f32; 16];
    let mut d = 0;
    while d < 16 {
        t[d] = d as f32 / 15.0;
        d += 1;
    }
    t
};

/// Digits as the model's inputs (d / 15).
#[inline(always)]
pub fn to_inputs(d: &[u8; INPUTS], x: &mut [f32; INPUTS]) {
    for (xi, &di) in x.iter_mut().zip(d) {
        *xi = SCALED[(di & 0xF) as usize];
    }
}

/// Request-level state the features need: the recent write requests, the
/// per-chunk counters of the current window, the read/write totals.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Features {
    block_bytes: u64,
    chunk_blocks: u64,
    /// Recent write requests [start, end) in blocks, a ring.
    recent: [(u64, u64); SEQ_WINDOW],
    recent_n: usize,
    recent_at: usize,
    chunk_write: Vec<u16>,
    chunk_read: Vec<u16>,
    reads: u64,
    writes: u64,
    /// The request being placed: length [4 KiB], sequential, last chunk counted.
    io_len: u64,
    is_seq: bool,
    last_chunk: u64,
}

impl Features {
    /// For a device of `logical_blocks` blocks of `block_bytes`.
    pub fn new(logical_blocks: u32, block_bytes: u32) -> Self {
        let chunk_blocks = (CHUNK_BYTES / block_bytes as u64).max(1);
        let chunks = (logical_blocks as u64).div_ceil(chunk_blocks) as usize;
        Features {
            block_bytes: block_bytes as u64,
            chunk_blocks,
            recent: [(0, 0); SEQ_WINDOW],
            recent_n: 0,
            recent_at: 0,
            chunk_write: vec![0; chunks],
            chunk_read: vec![0; chunks],
            reads: 0,
            writes: 0,
            io_len: 0,
            is_seq: false,
            last_chunk: u64::MAX,
        }
    }

    /// Whether the write request [start, end) with the recent ones covers
    /// `SEQ_BYTES` of consecutive data ending with it: its run is extended
    /// backwards through requests ending where the run starts.
    pub fn sequential(&self, start: u64, end: u64) -> bool {
        let need = SEQ_BYTES.div_ceil(self.block_bytes);
        let mut run = start;
        if end - run >= need {
            return true;
        }
        // Each pass extends the run by one earlier request, if any.
        for _ in 0..self.recent_n {
            match self.recent[..self.recent_n]
                .iter()
                .find(|&&(s, e)| e == run && s < run)
            {
                Some(&(s, _)) => {
                    run = s;
                    if end - run >= need {
                        return true;
                    }
                }
                None => return false,
            }
        }
        false
    }

    /// The raw features of write `w` whose page was last written
    /// `prev_lifetime` pages ago; call for the blocks of a request in
    /// order (a request's first block, `req_offset` 0, starts it).
    #[inline]
    pub fn observe(&mut self, w: &UserWrite, prev_lifetime: Option<u64>) -> Raw {
        let lba = w.lba as u64;
        if w.req_offset == 0 {
            let (start, end) = (lba, lba + w.req_blocks as u64);
            self.is_seq = self.sequential(start, end);
            self.recent[self.recent_at] = (start, end);
            self.recent_at = (self.recent_at + 1) % SEQ_WINDOW;
            self.recent_n = (self.recent_n + 1).min(SEQ_WINDOW);
            self.writes += 1;
            self.io_len = (w.req_blocks as u64 * self.block_bytes).div_ceil(IO_UNIT);
            self.last_chunk = u64::MAX;
        }
        let chunk = lba / self.chunk_blocks;
        if chunk != self.last_chunk {
            self.last_chunk = chunk;
            let c = &mut self.chunk_write[chunk as usize];
            *c = c.saturating_add(1);
        }
        Raw {
            prev_lifetime,
            io_len: self.io_len,
            is_seq: self.is_seq,
            chunk_write: self.chunk_write[chunk as usize] as u64,
            chunk_read: self.chunk_read[chunk as usize] as u64,
            rw_rat: (self.reads * 4095) / (self.reads + self.writes).max(1),
        }
    }

    /// A read request: counted once, and once per chunk it touches.
    pub fn read(&mut self, req: &Request) {
        self.reads += 1;
        let first = req.lba / self.chunk_blocks;
        let last = (req.lba + req.blocks.max(1) as u64 - 1) / self.chunk_blocks;
        for c in first..=last.min(self.chunk_read.len() as u64 - 1) {
            let r = &mut self.chunk_read[c as usize];
            *r = r.saturating_add(1);
        }
    }

    /// A write window ended: the chunk counters start again.
    pub fn new_window(&mut self) {
        self.chunk_write.fill(0);
        self.chunk_read.fill(0);
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        (self.chunk_write.capacity() + self.chunk_read.capacity()) * 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_encoding_by_hand() {
        let mut d = [9u8; 8];
        hex_digits(0x1A2B, 8, &mut d);
        assert_eq!(d, [0, 0, 0, 0, 1, 0xA, 2, 0xB]);
        hex_digits(0x12345, 4, &mut d[..4]);
        assert_eq!(&d[..4], &[0xF; 4], "saturates");
        let raw = Raw {
            prev_lifetime: Some(300),
            io_len: 4,
            is_seq: true,
            chunk_write: 0x10,
            chunk_read: 0,
            rw_rat: 4095,
        };
        assert_eq!(
            raw.encode(),
            [
                0, 0, 0, 0, 0, 1, 2, 0xC, // 300 = 0x12C
                0, 0, 0, 4, // io_len
                1, // is_seq
                0, 0, 1, 0, // chunk_write
                0, 0, 0, 0, // chunk_read
                0xF, 0xF, 0xF // rw_rat
            ]
        );
        let never = Raw::default().encode();
        assert_eq!(&never[..8], &[0xF; 8], "a first write: all F");
        let mut x = [0f32; INPUTS];
        to_inputs(&raw.encode(), &mut x);
        assert_eq!((x[7], x[12], x[21]), (12.0 / 15.0, 1.0 / 15.0, 1.0));
    }

    fn w(lba: u32, req_blocks: u32, req_offset: u32) -> UserWrite {
        UserWrite {
            lba: lba + req_offset,
            req_blocks,
            req_offset,
            ..Default::default()
        }
    }

    #[test]
    fn sequential_runs_chunks_and_ratio() {
        // 16 KiB pages: 128 KiB = 8 pages; a chunk = 64 pages.
        let mut f = Features::new(1024, 16384);
        assert!(!f.observe(&w(0, 3, 0), None).is_seq);
        // Contiguous with the previous request: 3 + 3 = 6 pages < 8.
        assert!(!f.observe(&w(3, 3, 0), None).is_seq);
        // An unrelated request in between does not break the run.
        f.observe(&w(500, 1, 0), None);
        let r = f.observe(&w(6, 2, 0), Some(7));
        assert!(r.is_seq, "0..8 is 128 KiB");
        assert_eq!(
            (r.io_len, r.prev_lifetime),
            (8, Some(7)),
            "2 pages = 8 x 4 KiB"
        );
        // One big request is sequential by itself.
        assert!(f.observe(&w(700, 8, 0), None).is_seq);
        // Chunk counters: requests, not pages; a request over two chunks counts in both.
        let mut f = Features::new(1024, 16384);
        for off in 0..4 {
            let r = f.observe(&w(62, 4, off), None);
            assert_eq!(r.chunk_write, 1, "page {off}");
        }
        assert_eq!(f.observe(&w(0, 1, 0), None).chunk_write, 2);
        f.read(&Request {
            time_ns: 0,
            lba: 60,
            blocks: 10,
            op: crate::request::Op::Read,
            tenant: 0,
        });
        let r = f.observe(&w(65, 1, 0), None);
        assert_eq!((r.chunk_write, r.chunk_read), (2, 1));
        // 1 read of 4 requests.
        assert_eq!(r.rw_rat, 4095 / 4);
        f.new_window();
        assert_eq!(f.observe(&w(65, 1, 0), None).chunk_write, 1);
    }
}
