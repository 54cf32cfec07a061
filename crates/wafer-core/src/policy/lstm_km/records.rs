//! LSTM+KM's workload feature capture (WFC, §3.2–3.3): per chunk and
//! period, a record rec_t = (f_1, …, f_m, T_t). The paper's StoneNeedle
//! tool has more than 30 features per sector whose list is not published;
//! these are the candidates a block trace gives (spec §5), from which the
//! PCC selection keeps the ones correlated with temperature.
//!
//! T_t (temperature) is the write count of the chunk in the period: blocks
//! written (`temp_unit=blocks`, the default) or write requests.

use crate::policy::kit::streams::Chunking;
use crate::policy::UserWrite;
use crate::request::Request;

/// Candidate features, in record order (T follows them).
pub const CANDIDATES: [&str; 10] = [
    "write_requests",
    "mean_write_blocks",
    "max_write_blocks",
    "read_requests",
    "read_blocks",
    "mean_read_blocks",
    "seq_write_share",
    "distinct_blocks",
    "overwrite_share",
    "mean_write_gap_s",
];

/// Values per record: the candidates and T.
pub const WIDTH: usize = CANDIDATES.len() + 1;
/// Index of T in a record.
pub const T: usize = CANDIDATES.len();

/// One period's per-chunk counters (flat arrays).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Period {
    chunking: Chunking,
    wreq: Vec<u32>,
    wblocks: Vec<u32>,
    wmax: Vec<u32>,
    rreq: Vec<u32>,
    rblocks: Vec<u32>,
    seq: Vec<u32>,
    distinct: Vec<u32>,
    first_ns: Vec<u64>,
    last_ns: Vec<u64>,
    /// Per logical block, one bit: written in this period (a bitmap small
    /// enough to stay in cache, where a per-block stamp missed it on every
    /// write).
    seen: Vec<u64>,
    /// Words of `seen` set in this period, cleared at its end (so a
    /// period's end costs its writes, not the device's size).
    touched: Vec<u32>,
    /// The write request being fed: its current chunk and whether it is sequential.
    cur_chunk: u32,
    cur_seq: bool,
    cur_first: bool,
    prev_end: Option<u64>,
    /// Count requests, not blocks, as T.
    temp_requests: bool,
}

impl Period {
    /// Counters for `chunking` over `logical` blocks.
    pub fn new(chunking: Chunking, logical: u32, temp_requests: bool) -> Self {
        let n = chunking.chunks as usize;
        Period {
            chunking,
            wreq: vec![0; n],
            wblocks: vec![0; n],
            wmax: vec![0; n],
            rreq: vec![0; n],
            rblocks: vec![0; n],
            seq: vec![0; n],
            distinct: vec![0; n],
            first_ns: vec![0; n],
            last_ns: vec![0; n],
            seen: vec![0; (logical as usize).div_ceil(64)],
            touched: Vec::new(),
            cur_chunk: u32::MAX,
            cur_seq: false,
            cur_first: true,
            prev_end: None,
            temp_requests,
        }
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.wreq.len() * (7 * 4 + 2 * 8) + self.seen.len() * 8 + self.touched.capacity() * 4
    }

    /// One written block, of chunk `c` (`chunking.of(w.lba)`, which the
    /// caller has computed anyway).
    #[inline(always)]
    pub fn write(&mut self, w: &UserWrite, c: u32) {
        let ci = c as usize;
        if w.req_offset == 0 {
            let start = w.lba as u64;
            self.cur_seq = self.prev_end == Some(start);
            self.prev_end = Some(start + w.req_blocks as u64);
            self.cur_chunk = u32::MAX;
            self.cur_first = true;
        }
        if c != self.cur_chunk {
            // The request touches a new chunk: one request for it.
            if self.wreq[ci] == 0 {
                self.first_ns[ci] = w.req_time_ns;
            }
            self.wreq[ci] += 1;
            self.last_ns[ci] = w.req_time_ns;
            self.wmax[ci] = self.wmax[ci].max(w.req_blocks);
            if self.cur_seq || !self.cur_first {
                self.seq[ci] += 1;
            }
            self.cur_first = false;
            self.cur_chunk = c;
        }
        self.wblocks[ci] += 1;
        let (word, bit) = ((w.lba >> 6) as usize, 1u64 << (w.lba & 63));
        let s = &mut self.seen[word];
        if *s & bit == 0 {
            if *s == 0 {
                self.touched.push(word as u32);
            }
            *s |= bit;
            self.distinct[ci] += 1;
        }
    }

    /// One read request.
    pub fn read(&mut self, r: &Request) {
        let cb = self.chunking.blocks as u64;
        let (a, b) = (r.lba / cb, (r.lba + r.blocks as u64 - 1) / cb);
        for c in a..=b.min(self.chunking.chunks as u64 - 1) {
            let lo = (c * cb).max(r.lba);
            let hi = ((c + 1) * cb).min(r.lba + r.blocks as u64);
            self.rreq[c as usize] += 1;
            self.rblocks[c as usize] += (hi - lo) as u32;
        }
    }

    /// Write this period's records (chunks × [`WIDTH`]) into `out` and
    /// start the next period.
    pub fn finish(&mut self, out: &mut [f32]) {
        for (c, rec) in out.chunks_exact_mut(WIDTH).enumerate() {
            let (wq, wb, rq, rb) = (
                self.wreq[c] as f32,
                self.wblocks[c] as f32,
                self.rreq[c] as f32,
                self.rblocks[c] as f32,
            );
            let div = |a: f32, b: f32| if b > 0.0 { a / b } else { 0.0 };
            rec[0] = wq;
            rec[1] = div(wb, wq);
            rec[2] = self.wmax[c] as f32;
            rec[3] = rq;
            rec[4] = rb;
            rec[5] = div(rb, rq);
            rec[6] = div(self.seq[c] as f32, wq);
            rec[7] = self.distinct[c] as f32;
            rec[8] = div(wb - self.distinct[c] as f32, wb);
            rec[9] = if self.wreq[c] > 1 {
                (self.last_ns[c] - self.first_ns[c]) as f32 * 1e-9 / (wq - 1.0)
            } else {
                0.0
            };
            rec[T] = if self.temp_requests { wq } else { wb };
        }
        for v in [
            &mut self.wreq,
            &mut self.wblocks,
            &mut self.wmax,
            &mut self.rreq,
            &mut self.rblocks,
            &mut self.seq,
            &mut self.distinct,
        ] {
            v.iter_mut().for_each(|x| *x = 0);
        }
        for w in self.touched.drain(..) {
            self.seen[w as usize] = 0;
        }
    }
}

/// Pearson correlation of `x` and `y` (0 when either is constant).
pub fn pearson(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len() as f64;
    if n < 2.0 {
        return 0.0;
    }
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    if sxx <= 0.0 || syy <= 0.0 {
        0.0
    } else {
        sxy / (sxx * syy).sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(lba: u32, off: u32, blocks: u32, t: u64) -> UserWrite {
        UserWrite {
            lba,
            req_offset: off,
            req_blocks: blocks,
            req_time_ns: t,
            ..Default::default()
        }
    }

    #[test]
    fn records_of_a_hand_made_period() {
        let ch = Chunking::from_blocks(4, 16);
        let mut p = Period::new(ch, 16, false);
        // Request of 3 blocks at 2 (chunks 0 and 1), then 1 block at 5 (sequential), then 2 again.
        for i in 0..3 {
            {
                let x = w(2 + i, i, 3, 1_000_000_000);
                p.write(&x, ch.of(x.lba));
            }
        }
        {
            let x = w(5, 0, 1, 2_000_000_000);
            p.write(&x, ch.of(x.lba));
        }
        {
            let x = w(2, 0, 1, 4_000_000_000);
            p.write(&x, ch.of(x.lba));
        }
        p.read(&Request {
            time_ns: 0,
            lba: 3,
            blocks: 3,
            op: crate::request::Op::Read,
            tenant: 0,
        });
        let mut out = vec![0f32; 4 * WIDTH];
        p.finish(&mut out);
        let c0 = &out[..WIDTH];
        let c1 = &out[WIDTH..2 * WIDTH];
        // chunk 0: requests 2 (blocks 2,3 then 2), blocks 3, distinct 2.
        assert_eq!(&c0[..3], &[2.0, 1.5, 3.0]);
        assert_eq!((c0[3], c0[4]), (1.0, 1.0), "read of block 3");
        assert_eq!(
            c0[6], 0.0,
            "neither touch sequential (first chunk of random requests)"
        );
        assert_eq!((c0[7], c0[8]), (2.0, 1.0 / 3.0));
        assert!((c0[9] - 3.0).abs() < 1e-6, "gap {}", c0[9]);
        assert_eq!(c0[T], 3.0);
        // chunk 1: blocks 4 (second chunk of a request), 5 (sequential request).
        assert_eq!((c1[0], c1[6], c1[T]), (2.0, 1.0, 2.0));
        assert_eq!((c1[3], c1[4]), (1.0, 2.0));
        // The next period starts empty; its distinct counts start over.
        {
            let x = w(2, 0, 1, 5);
            p.write(&x, ch.of(x.lba));
        }
        p.finish(&mut out);
        assert_eq!((out[0], out[7], out[T]), (1.0, 1.0, 1.0));
    }

    #[test]
    fn pearson_values() {
        let x = [1.0, 2.0, 3.0, 4.0];
        assert!((pearson(&x, &[2.0, 4.0, 6.0, 8.0]) - 1.0).abs() < 1e-12);
        assert!((pearson(&x, &[8.0, 6.0, 4.0, 2.0]) + 1.0).abs() < 1e-12);
        assert_eq!(pearson(&x, &[1.0; 4]), 0.0);
    }
}
