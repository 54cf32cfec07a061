//! A record source read on a thread of its own, a few batches ahead of its
//! consumer, so that decompressing and parsing a text trace overlap the
//! engine's (or a split's, or a statistic's) work on the records before.
//!
//! The first [`DIRECT`] records are read on the caller's thread: a caller
//! that wants only the first records (a multi-volume run finding where each
//! volume's clock starts) starts no thread and reads nothing ahead. After
//! them the source moves to its thread, which fills batches of [`BATCH`]
//! records into a channel of [`AHEAD`] batches; the batches come back to be
//! refilled, so reading allocates nothing per batch. Records, the error
//! that ends a source (after the records read before it) and the reading
//! counts arrive in the source's own order: a replay's result is the same
//! with or without the thread. The reading counts (`lines`, ...) are those
//! of the batches delivered, so a run that stops before the trace's end
//! (`writes`, `end_seconds`) counts up to a batch more lines read than it
//! applied, as it counted the reader's smaller buffer before.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use super::{ReadStats, Record, RecordSource};
use crate::error::{Error, Result};

/// Records read on the caller's thread before the source moves to its own.
pub const DIRECT: u64 = 1 << 14;
/// Records per batch read ahead.
const BATCH: usize = 8192;
/// Batches read ahead at most.
const AHEAD: usize = 4;

/// One batch from the reading thread.
struct Batch {
    records: Vec<Record>,
    /// The error met after `records`, which ends the source.
    error: Option<Error>,
    /// The source's counts after `records`.
    stats: ReadStats,
    /// The source has nothing after this batch.
    last: bool,
}

enum State {
    /// Still on the caller's thread.
    Direct(Box<dyn RecordSource>),
    /// On its thread.
    Ahead {
        rx: Receiver<Batch>,
        /// Emptied batches, back to the thread.
        back: SyncSender<Vec<Record>>,
        cur: Vec<Record>,
        pos: usize,
        error: Option<Error>,
        last: bool,
    },
    /// Moving between the two.
    Moving,
}

/// A source read ahead on its own thread (see the module doc).
pub struct ReadAhead {
    state: State,
    stats: ReadStats,
    taken: u64,
    /// No thread could be had: read on the caller's thread to the end.
    stay: bool,
    /// `next_record`'s one-record buffer, kept so a record costs no
    /// allocation.
    one: Vec<Record>,
}

impl ReadAhead {
    /// `inner`, read ahead once [`DIRECT`] records were taken.
    pub fn new(inner: Box<dyn RecordSource>) -> Self {
        ReadAhead {
            stats: *inner.stats(),
            state: State::Direct(inner),
            taken: 0,
            stay: false,
            one: Vec::with_capacity(1),
        }
    }

    /// Move the source to its thread (it stays on the caller's if the
    /// system has no thread to give).
    fn start(&mut self) {
        let State::Direct(inner) = std::mem::replace(&mut self.state, State::Moving) else {
            unreachable!("started once");
        };
        let slot = std::sync::Arc::new(std::sync::Mutex::new(Some(inner)));
        let theirs = slot.clone();
        let (tx, rx) = sync_channel::<Batch>(AHEAD);
        let (back, spare) = sync_channel::<Vec<Record>>(AHEAD + 2);
        let started = std::thread::Builder::new()
            .name("wafer-trace-reader".into())
            .spawn(move || {
                let Some(mut inner) = theirs.lock().unwrap_or_else(|e| e.into_inner()).take()
                else {
                    return;
                };
                loop {
                    let mut records = spare
                        .try_recv()
                        .unwrap_or_else(|_| Vec::with_capacity(BATCH));
                    records.clear();
                    let error = inner.fill(&mut records, BATCH);
                    let last = error.is_some() || records.len() < BATCH;
                    let batch = Batch {
                        records,
                        error,
                        stats: *inner.stats(),
                        last,
                    };
                    // The consumer is gone (a run stopped early): stop reading.
                    if tx.send(batch).is_err() || last {
                        return;
                    }
                }
            });
        if started.is_err() {
            let inner = slot.lock().unwrap_or_else(|e| e.into_inner()).take();
            self.state = State::Direct(inner.expect("a thread that never started took nothing"));
            self.stay = true;
            return;
        }
        self.state = State::Ahead {
            rx,
            back,
            cur: Vec::new(),
            pos: 0,
            error: None,
            last: false,
        };
    }
}

impl RecordSource for ReadAhead {
    fn next_record(&mut self) -> Result<Option<Record>> {
        let mut one = std::mem::take(&mut self.one);
        let got = self.fill(&mut one, 1);
        let r = one.pop();
        self.one = one;
        match got {
            Some(e) if r.is_none() => Err(e),
            Some(_) => unreachable!("one record is returned before its error"),
            None => Ok(r),
        }
    }

    fn fill(&mut self, out: &mut Vec<Record>, max: usize) -> Option<Error> {
        if let State::Direct(inner) = &mut self.state {
            let before = out.len();
            let error = inner.fill(out, max);
            self.stats = *inner.stats();
            self.taken += (out.len() - before) as u64;
            if error.is_none() && out.len() - before == max && self.taken >= DIRECT && !self.stay {
                self.start();
            }
            return error;
        }
        let State::Ahead {
            rx,
            back,
            cur,
            pos,
            error,
            last,
        } = &mut self.state
        else {
            unreachable!("moved");
        };
        let start = out.len();
        while out.len() - start < max {
            if *pos == cur.len() {
                if let Some(e) = error.take() {
                    *last = true;
                    return Some(e);
                }
                if *last {
                    return None;
                }
                match rx.recv() {
                    Ok(b) => {
                        let used = std::mem::replace(cur, b.records);
                        let _ = back.try_send(used);
                        *pos = 0;
                        *error = b.error;
                        *last = b.last;
                        self.stats = b.stats;
                    }
                    Err(_) => {
                        *last = true;
                        return Some(Error::Simulation(
                            "the trace's reading thread stopped without an error (a bug)".into(),
                        ));
                    }
                }
                continue;
            }
            let n = (max - (out.len() - start)).min(cur.len() - *pos);
            out.extend_from_slice(&cur[*pos..*pos + n]);
            *pos += n;
        }
        None
    }

    fn stats(&self) -> &ReadStats {
        &self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Op;

    /// `n` records, then `error` (if any) after them.
    struct Counted {
        n: u64,
        next: u64,
        fail: bool,
        stats: ReadStats,
    }

    impl RecordSource for Counted {
        fn next_record(&mut self) -> Result<Option<Record>> {
            if self.next == self.n {
                if self.fail {
                    self.fail = false;
                    return Err(Error::trace("t", Some(self.next + 1), "bad line"));
                }
                return Ok(None);
            }
            self.next += 1;
            self.stats.lines += 1;
            Ok(Some(Record {
                time_ns: self.next,
                device: 0,
                op: Op::Write,
                offset: self.next * 4096,
                size: 4096,
            }))
        }
        fn stats(&self) -> &ReadStats {
            &self.stats
        }
    }

    fn source(n: u64, fail: bool) -> Box<dyn RecordSource> {
        Box::new(Counted {
            n,
            next: 0,
            fail,
            stats: ReadStats::default(),
        })
    }

    /// Every record, in order, then the error, in batches of `max`.
    fn drain(mut s: ReadAhead, max: usize) -> (Vec<u64>, Option<String>) {
        let mut all = Vec::new();
        loop {
            let mut out = Vec::new();
            let e = s.fill(&mut out, max);
            all.extend(out.iter().map(|r| r.time_ns));
            if let Some(e) = e {
                return (all, Some(e.to_string()));
            }
            if out.len() < max {
                assert_eq!(
                    s.stats().lines,
                    all.len() as u64,
                    "the counts of the records delivered"
                );
                return (all, None);
            }
        }
    }

    #[test]
    fn the_same_records_and_error_in_the_same_order() {
        for n in [
            0,
            5,
            DIRECT - 1,
            DIRECT,
            DIRECT + 1,
            DIRECT + 3 * BATCH as u64 + 17,
        ] {
            for fail in [false, true] {
                for max in [1, 1000, 1024] {
                    let (got, e) = drain(ReadAhead::new(source(n, fail)), max);
                    assert_eq!(
                        got,
                        (1..=n).collect::<Vec<_>>(),
                        "n {n} fail {fail} max {max}"
                    );
                    assert_eq!(e.is_some(), fail, "n {n} max {max}");
                }
            }
        }
        let mut s = ReadAhead::new(source(DIRECT + 10, false));
        let mut k = 0;
        while let Some(r) = s.next_record().unwrap() {
            k += 1;
            assert_eq!(r.time_ns, k);
        }
        assert_eq!(k, DIRECT + 10);
    }

    #[test]
    fn a_consumer_that_stops_early_ends_the_thread() {
        let mut s = ReadAhead::new(source(DIRECT * 4, false));
        let mut out = Vec::new();
        for _ in 0..(DIRECT as usize / 1024 + 2) {
            out.clear();
            assert!(s.fill(&mut out, 1024).is_none());
        }
        drop(s); // the thread's next send fails and it returns
    }
}
