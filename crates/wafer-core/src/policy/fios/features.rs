//! FIOS's per-chunk features (FIOS §3.2, §3.4), accumulated in one pass over
//! a training trace's requests: frequency F, adjacent access A, sequentiality
//! S, coherency C (spec §2.3).
//!
//! * F: f_c = write requests touching chunk c (a request spanning several
//!   chunks touches each once).
//! * A (`adjacent=time`, default): a_c = normalised time of c's last write,
//!   (t_last − t_0)/(t_end − t_0): "δ[adjacent_access] constructs multiple
//!   groups according to the access time". `adjacent=space`: the share of
//!   c's coherency windows in which chunk c−1 or c+1 is written too.
//! * S: a touch of c by write w is sequential when w starts where the
//!   previous write request ended (global order) or c is not w's first
//!   chunk; s_c = sequential touches / touches.
//! * C: the training span cut into `windows` equal windows; n_c = windows in
//!   which c is written. Binary C is n_c ≥ 2 ("friendly to somebody"); the
//!   decimal C counts c's friendly groups, the pairwise intersections of
//!   window lists that hold c: g_c = n_c(n_c − 1)/2 (§3.3).
//!
//! Reads count for F and A only with `count_reads` (the paper says
//! "accessed"; our default is writes, the writes being what is placed).
//!
//! Flat per-chunk arrays, no allocation per request.

/// Sentinel: chunk not touched yet.
const NONE16: u16 = u16::MAX;

/// Per-chunk raw feature values of one training trace.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Raw {
    /// f_c: write requests touching c (plus reads with `count_reads`).
    pub freq: Vec<u32>,
    /// a_c in [0, 1] (0 for untouched chunks).
    pub adj: Vec<f64>,
    /// s_c: share of c's touches that were sequential.
    pub seq: Vec<f64>,
    /// n_c: coherency windows in which c was written.
    pub windows: Vec<u16>,
    /// Whether c was touched at all.
    pub touched: Vec<bool>,
    /// Coherency windows the span was cut into.
    pub n_windows: u16,
}

/// How A is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Adjacent {
    /// Normalised time of the last write.
    Time,
    /// Share of windows in which a neighbour chunk is written too.
    Space,
}

/// The accumulator of one training trace.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Accumulator {
    /// Chunks of the address space.
    chunks: usize,
    /// Training span [t0, t1) in the clock's unit (trace ns or user blocks).
    t0: u64,
    span: u64,
    n_windows: u16,
    adjacent: Adjacent,
    count_reads: bool,
    freq: Vec<u32>,
    seq: Vec<u32>,
    touches: Vec<u32>,
    last_t: Vec<u64>,
    last_win: Vec<u16>,
    n_win: Vec<u16>,
    /// `adjacent=space`: windows credited, and the last one credited (+1).
    adj_n: Vec<u16>,
    adj_win: Vec<u16>,
    /// End of the previous write request [blocks], for S.
    prev_end: Option<u64>,
    /// The request being fed block by block: its first chunk and last chunk.
    cur_first: u32,
    cur_last: u32,
    cur_seq: bool,
    /// Latest time seen (the end of the span when it was not given).
    t_max: u64,
    /// Requests fed.
    pub requests: u64,
}

impl Accumulator {
    /// For `chunks` chunks over the span [t0, t0 + span) (clock units),
    /// cut into `windows` coherency windows.
    pub fn new(
        chunks: u32,
        t0: u64,
        span: u64,
        windows: u16,
        adjacent: Adjacent,
        count_reads: bool,
    ) -> Self {
        let n = chunks as usize;
        let space = adjacent == Adjacent::Space;
        Accumulator {
            chunks: n,
            t0,
            span: span.max(1),
            n_windows: windows.max(1),
            adjacent,
            count_reads,
            freq: vec![0; n],
            seq: vec![0; n],
            touches: vec![0; n],
            last_t: vec![0; n],
            last_win: vec![NONE16; n],
            n_win: vec![0; n],
            adj_n: if space { vec![0; n] } else { Vec::new() },
            adj_win: if space { vec![0; n] } else { Vec::new() },
            prev_end: None,
            cur_first: u32::MAX,
            cur_last: u32::MAX,
            cur_seq: false,
            t_max: t0,
            requests: 0,
        }
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.chunks * (4 + 4 + 4 + 8 + 2 + 2) + self.adj_n.len() * 4
    }

    #[inline(always)]
    fn window_of(&self, t: u64) -> u16 {
        let off = t.saturating_sub(self.t0).min(self.span - 1);
        ((off as u128 * self.n_windows as u128 / self.span as u128) as u16).min(self.n_windows - 1)
    }

    /// A write request starts at block `lba` (`blocks` long) at clock `t`:
    /// call before its blocks.
    #[inline]
    pub fn begin_write(&mut self, lba: u64, blocks: u64, t: u64) {
        self.requests += 1;
        self.cur_seq = self.prev_end == Some(lba);
        self.prev_end = Some(lba + blocks);
        self.cur_first = u32::MAX;
        self.cur_last = u32::MAX;
        self.t_max = self.t_max.max(t);
    }

    /// The current write request touches `chunk` at clock `t` (call for each
    /// of its blocks in order, or once per chunk).
    #[inline(always)]
    pub fn write_chunk(&mut self, chunk: u32, t: u64) {
        if chunk == self.cur_last {
            return;
        }
        let first = self.cur_first == u32::MAX;
        if first {
            self.cur_first = chunk;
        }
        self.cur_last = chunk;
        let c = chunk as usize;
        if c >= self.chunks {
            return;
        }
        self.freq[c] = self.freq[c].saturating_add(1);
        self.touches[c] = self.touches[c].saturating_add(1);
        if self.cur_seq || !first {
            self.seq[c] = self.seq[c].saturating_add(1);
        }
        self.last_t[c] = t;
        let w = self.window_of(t);
        if self.last_win[c] != w {
            self.last_win[c] = w;
            self.n_win[c] = self.n_win[c].saturating_add(1);
            if self.adjacent == Adjacent::Space {
                for nb in [c.wrapping_sub(1), c + 1] {
                    if nb < self.chunks && self.last_win[nb] == w {
                        self.credit(c, w);
                        self.credit(nb, w);
                    }
                }
            }
        }
    }

    fn credit(&mut self, c: usize, w: u16) {
        if self.adj_win[c] != w + 1 {
            self.adj_win[c] = w + 1;
            self.adj_n[c] += 1;
        }
    }

    /// A whole write request (`lba`, `blocks`, in chunks of `chunk_blocks`).
    pub fn write(&mut self, lba: u64, blocks: u64, chunk_blocks: u32, t: u64) {
        self.begin_write(lba, blocks, t);
        let (a, b) = (
            lba / chunk_blocks as u64,
            (lba + blocks - 1) / chunk_blocks as u64,
        );
        for c in a..=b {
            self.write_chunk(c as u32, t);
        }
    }

    /// A read request: counts for F and A with `count_reads`.
    pub fn read(&mut self, lba: u64, blocks: u64, chunk_blocks: u32, t: u64) {
        self.t_max = self.t_max.max(t);
        if !self.count_reads {
            return;
        }
        let (a, b) = (
            lba / chunk_blocks as u64,
            (lba + blocks - 1) / chunk_blocks as u64,
        );
        for c in a..=b.min(self.chunks as u64 - 1) {
            let c = c as usize;
            self.freq[c] = self.freq[c].saturating_add(1);
            self.last_t[c] = self.last_t[c].max(t);
        }
    }

    /// The raw features. A is normalised by the span from t0 to the last
    /// request seen; coherency windows cut the span given at construction.
    pub fn finish(self) -> Raw {
        let span = (self.t_max.saturating_sub(self.t0)).max(1) as f64;
        let n = self.chunks;
        let mut raw = Raw {
            freq: self.freq,
            adj: vec![0.0; n],
            seq: vec![0.0; n],
            windows: self.n_win,
            touched: vec![false; n],
            n_windows: self.n_windows,
        };
        for c in 0..n {
            let touched = raw.freq[c] > 0;
            raw.touched[c] = touched;
            if !touched {
                continue;
            }
            raw.adj[c] = match self.adjacent {
                Adjacent::Time => ((self.last_t[c].saturating_sub(self.t0)) as f64 / span).min(1.0),
                Adjacent::Space => {
                    if raw.windows[c] > 0 {
                        self.adj_n[c] as f64 / raw.windows[c] as f64
                    } else {
                        0.0
                    }
                }
            };
            if self.touches[c] > 0 {
                raw.seq[c] = self.seq[c] as f64 / self.touches[c] as f64;
            }
        }
        raw
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Chunks of 4 blocks; span [0, 100) in 4 windows of 25.
    fn acc() -> Accumulator {
        Accumulator::new(8, 0, 100, 4, Adjacent::Time, false)
    }

    #[test]
    fn frequency_counts_requests_per_chunk() {
        let mut a = acc();
        a.write(0, 1, 4, 0); // chunk 0
        a.write(1, 1, 4, 1); // chunk 0
        a.write(2, 8, 4, 2); // chunks 0, 1, 2: each once
        let r = a.finish();
        assert_eq!(&r.freq[..4], &[3, 1, 1, 0]);
        assert_eq!(&r.touched[..4], &[true, true, true, false]);
    }

    #[test]
    fn adjacent_is_the_normalised_last_write_time() {
        let mut a = acc();
        a.write(0, 1, 4, 10);
        a.write(4, 1, 4, 50);
        a.write(0, 1, 4, 80); // chunk 0's last write
        a.write(8, 1, 4, 100); // the span's end
        let r = a.finish();
        assert!((r.adj[0] - 0.8).abs() < 1e-12);
        assert!((r.adj[1] - 0.5).abs() < 1e-12);
        assert!((r.adj[2] - 1.0).abs() < 1e-12);
        assert_eq!(r.adj[3], 0.0);
    }

    #[test]
    fn sequential_touches() {
        let mut a = acc();
        a.write(0, 2, 4, 0); // first write: not sequential (nothing before); chunk 0
        a.write(2, 4, 4, 1); // starts at the previous end: chunk 0 seq, chunk 1 seq
        a.write(20, 1, 4, 2); // random: chunk 5 not sequential
        a.write(12, 8, 4, 3); // random, but chunk 4 is not its first chunk: chunk 3 no, chunk 4 yes
        let r = a.finish();
        assert!((r.seq[0] - 0.5).abs() < 1e-12, "{}", r.seq[0]);
        assert_eq!(r.seq[1], 1.0);
        assert_eq!(r.seq[5], 0.0);
        assert_eq!((r.seq[3], r.seq[4]), (0.0, 1.0));
    }

    #[test]
    fn coherency_counts_windows() {
        let mut a = acc();
        for t in [0, 10, 30, 60, 99] {
            a.write(0, 1, 4, t); // chunk 0: windows 0, 0, 1, 2, 3 -> 4
        }
        a.write(4, 1, 4, 5); // chunk 1: one window
        a.write(4, 1, 4, 20); // still window 0
        let r = a.finish();
        assert_eq!(&r.windows[..3], &[4, 1, 0]);
    }

    #[test]
    fn spatial_adjacency_credits_neighbours_in_the_same_window() {
        let mut a = Accumulator::new(8, 0, 100, 4, Adjacent::Space, false);
        a.write(0, 1, 4, 0); // chunk 0, w0
        a.write(4, 1, 4, 1); // chunk 1, w0: neighbour 0 written in w0
        a.write(4, 1, 4, 30); // chunk 1, w1: alone
        let r = a.finish();
        assert_eq!(r.adj[0], 1.0);
        assert_eq!(r.adj[1], 0.5);
    }

    #[test]
    fn reads_count_only_when_asked() {
        let mut a = acc();
        a.read(0, 1, 4, 5);
        assert_eq!(a.finish().freq[0], 0);
        let mut a = Accumulator::new(8, 0, 100, 4, Adjacent::Time, true);
        a.read(0, 1, 4, 5);
        let r = a.finish();
        assert_eq!((r.freq[0], r.windows[0]), (1, 0));
    }
}
