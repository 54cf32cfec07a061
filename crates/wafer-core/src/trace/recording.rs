//! A text trace read once (issue 48 item 2): the footprint pass keeps the
//! records it parses, and the replay (every pass of it, and every run that
//! shares the configuration) reads them from memory instead of
//! decompressing and parsing the file a second time.
//!
//! The records are kept below the selection, as the reader yields them,
//! with the reader's counts at every point they changed and the error that
//! ended the source: a [`Replayed`] source under the same [`super::Selected`]
//! gives the same records, the same selection, the same counts at the same
//! points and the same error after the same records as the file does, so a
//! result is byte for byte the one a second read gives (tested).
//!
//! Memory is bounded: a recording that would pass its budget (by default
//! the smaller of [`MAX_BYTES`] and a quarter of the memory this process
//! can still have) is dropped, and the replay reads the file again as it
//! did before. Native traces are never recorded: they are read as fast as
//! they are used.

use std::sync::{Arc, Mutex};

use super::{ReadStats, Record, RecordSource};
use crate::error::{Error, Result};

/// Most bytes of records kept (40 bytes a record: 26.8 M records).
pub const MAX_BYTES: u64 = 1 << 30;

/// Bytes a recording may take in this process: `$WAFER_TRACE_MEMORY_MIB`
/// MiB when set (0: read a text trace twice, keeping nothing), else the
/// smaller of [`MAX_BYTES`] and a quarter of what
/// [`crate::host::available`] says is left (so the run's own
/// tables keep the rest).
pub fn budget() -> u64 {
    if let Some(mib) = std::env::var("WAFER_TRACE_MEMORY_MIB")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
    {
        return mib.saturating_mul(1 << 20);
    }
    let left = crate::host::available().map_or(u64::MAX, |(m, _)| m / 4);
    MAX_BYTES.min(left)
}

/// What a source yielded, in order.
#[derive(Debug, Default)]
pub struct Recording {
    records: Vec<Record>,
    /// (calls answered, the source's counts from then on), in order: the
    /// counts are those after the same call of the same caller (a
    /// [`super::Selected`] asks the same way each time), so they change at
    /// the same points as the file's.
    stats: Vec<(u64, ReadStats)>,
    /// The error that ended the source, after every record.
    error: Option<Error>,
}

/// Where a [`Tap`] leaves its recording when it is dropped (with the
/// [`super::Selected`] that owns it).
pub type Slot = Arc<Mutex<Option<Recording>>>;

/// A source that records what it yields, up to a budget.
pub struct Tap {
    inner: Box<dyn RecordSource>,
    rec: Recording,
    slot: Slot,
    calls: u64,
    /// Most records kept; past it the recording is dropped.
    max_records: usize,
    over: bool,
}

impl Tap {
    /// Record `inner` within `budget` bytes; the recording (none if it
    /// passed the budget) goes to `slot` when the tap is dropped.
    pub fn new(inner: Box<dyn RecordSource>, budget: u64, slot: Slot) -> Self {
        let stats = vec![(0, *inner.stats())];
        Tap {
            inner,
            slot,
            rec: Recording {
                stats,
                ..Recording::default()
            },
            calls: 0,
            max_records: (budget / std::mem::size_of::<Record>() as u64) as usize,
            over: false,
        }
    }

    /// Keep what one call yielded, the counts after it and its error.
    fn keep(&mut self, got: &[Record], error: Option<&Error>) {
        self.calls += 1;
        if self.over {
            return;
        }
        if self.rec.records.len() + got.len() > self.max_records {
            // Too large to keep: the replay reads the file again.
            self.over = true;
            self.rec = Recording::default();
            return;
        }
        self.rec.records.extend_from_slice(got);
        let now = *self.inner.stats();
        if self.rec.stats.last().is_none_or(|(_, s)| *s != now) {
            self.rec.stats.push((self.calls, now));
        }
        if let Some(e) = error {
            self.rec.error = Some(e.clone());
        }
    }
}

impl RecordSource for Tap {
    fn next_record(&mut self) -> Result<Option<Record>> {
        let r = self.inner.next_record();
        match &r {
            Ok(Some(one)) => self.keep(std::slice::from_ref(one), None),
            Ok(None) => self.keep(&[], None),
            Err(e) => self.keep(&[], Some(e)),
        }
        r
    }

    fn fill(&mut self, out: &mut Vec<Record>, max: usize) -> Option<Error> {
        let from = out.len();
        let error = self.inner.fill(out, max);
        // `out` is the caller's buffer: keep only what this call added.
        self.keep(&out[from..], error.as_ref());
        error
    }

    fn stats(&self) -> &ReadStats {
        self.inner.stats()
    }
}

impl Drop for Tap {
    fn drop(&mut self) {
        let rec = std::mem::take(&mut self.rec);
        if !self.over {
            *self.slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(rec);
        }
    }
}

/// A recording read back as the source it was taken from.
pub struct Replayed {
    rec: Arc<Recording>,
    pos: usize,
    calls: u64,
    /// Index in `rec.stats` of the counts in force.
    at: usize,
    /// The error was returned: the source is over.
    ended: bool,
}

impl Replayed {
    /// Read `rec` from its start.
    pub fn new(rec: Arc<Recording>) -> Self {
        Replayed {
            rec,
            pos: 0,
            calls: 0,
            at: 0,
            ended: false,
        }
    }

    /// One call answered: the counts after it.
    fn answered(&mut self) {
        self.calls += 1;
        let s = &self.rec.stats;
        while self.at + 1 < s.len() && s[self.at + 1].0 <= self.calls {
            self.at += 1;
        }
    }

    /// The recorded error, once, after every record.
    fn end(&mut self) -> Option<Error> {
        if self.ended {
            return None;
        }
        self.ended = true;
        self.rec.error.clone()
    }
}

impl RecordSource for Replayed {
    fn next_record(&mut self) -> Result<Option<Record>> {
        let got = self.rec.records.get(self.pos).copied();
        self.answered();
        match got {
            Some(r) => {
                self.pos += 1;
                Ok(Some(r))
            }
            None => self.end().map_or(Ok(None), Err),
        }
    }

    fn fill(&mut self, out: &mut Vec<Record>, max: usize) -> Option<Error> {
        let n = max.min(self.rec.records.len() - self.pos);
        out.extend_from_slice(&self.rec.records[self.pos..self.pos + n]);
        self.pos += n;
        self.answered();
        if n < max {
            return self.end();
        }
        None
    }

    fn stats(&self) -> &ReadStats {
        &self.rec.stats[self.at].1
    }
}

#[cfg(test)]
mod tests {
    use super::super::{footprint_recorded, open_recorded, open_selected, Selection};
    use super::*;

    /// Every record, and the counts after each, read through `s`.
    fn read_all(mut s: super::super::Selected) -> (Vec<(Record, ReadStats)>, Option<Error>) {
        let mut out = Vec::new();
        loop {
            match s.next_record() {
                Ok(Some(r)) => out.push((r, s.stats())),
                Ok(None) => return (out, None),
                Err(e) => return (out, Some(e)),
            }
        }
    }

    /// A text trace read back from its recording gives what a second read
    /// of the file gives: the same records, counts at every point, error
    /// after the same records; under several selections, past the read
    /// ahead's first records, with and without a bad line.
    #[test]
    fn a_recording_reads_back_as_the_file() {
        let dir = std::env::temp_dir().join(format!("wafer-recording-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut text = String::new();
        for i in 0..40_000u64 {
            let op = if i % 5 == 0 { "Read" } else { "Write" };
            let size = if i % 997 == 0 { 0 } else { 4096 * (1 + i % 3) };
            text.push_str(&format!(
                "{},h,{},{op},{},{size},1\n",
                128166372003061629 + i * 1000 - (i % 211 == 0) as u64 * 5000,
                i % 3,
                (i * 7919 % 50_000) * 4096
            ));
        }
        let good = dir.join("good.csv");
        std::fs::write(&good, &text).unwrap();
        let bad = dir.join("bad.csv");
        std::fs::write(
            &bad,
            format!("{}not,a,line\n{}", &text[..text.len() / 2 + 1], ""),
        )
        .unwrap();
        let sels = [
            Selection::default(),
            Selection {
                device: Some("1".into()),
                drop_reads: true,
                ..Selection::default()
            },
            Selection {
                start_seconds: Some(0.2),
                end_seconds: Some(3.0),
                ..Selection::default()
            },
            Selection {
                max_requests: Some(20_000),
                ..Selection::default()
            },
        ];
        for path in [&good, &bad] {
            let path = path.to_str().unwrap();
            for sel in &sels {
                let (_, _, error, rec) =
                    footprint_recorded(path, Some("msr"), sel, 4096, Some(MAX_BYTES)).unwrap();
                let rec = Arc::new(rec.expect("within the budget"));
                let file = read_all(open_selected(path, Some("msr"), sel).unwrap().0);
                for _ in 0..2 {
                    let again = read_all(open_recorded(Arc::clone(&rec), sel).unwrap());
                    assert_eq!(again, file, "{path} {sel:?}");
                }
                assert_eq!(error, file.1);
                if *sel == Selection::default() {
                    assert_eq!(path == bad.to_str().unwrap(), error.is_some());
                }
            }
        }
        // Over its budget nothing is kept (the replay reads the file).
        let sel = Selection::default();
        let (.., rec) =
            footprint_recorded(good.to_str().unwrap(), Some("msr"), &sel, 4096, Some(4000))
                .unwrap();
        assert!(rec.is_none());
        std::fs::remove_dir_all(&dir).ok();
    }
}
