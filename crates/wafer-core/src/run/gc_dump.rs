//! `--dump-gc FILE`: one row per collected victim, the per-victim lines
//! SepBIT's trace replayer prints with `--printGCInfo` (`rmed_seg: gp age
//! lifespan log blocks valid invalid`, `Log.java`) with what its output
//! leaves to be joined from other lines (the victim's class, from its
//! `seal:` line) or leaves out (time, segment id, erase count).
//!
//! Columns: `victim` (0, 1, ... in collection order), `time_ns` (trace time
//! of the request being served), `user_writes` (user blocks written so
//! far, the prefill included: the clock of every other column), `segment`,
//! `group`, `blocks`, `valid`, `invalid`, `gp` (invalid / blocks),
//! `age_writes` (since the victim was sealed, the replayer's "age"),
//! `lifespan_writes` (from its opening to its seal, the replayer's
//! "lifespan"; both in user blocks where the replayer counts trace
//! seconds), `open_time`, `seal_time`, `erase_count` (erases before this
//! one). A file ending `.arrow` is an Arrow IPC file (pyarrow, pandas),
//! anything else CSV with a header line.
//!
//! Rows start with the workload: a prefill's or a timed run's
//! preconditioning's victims are not in it. The file is written as
//! `FILE.part` (created when the run is built, so a path that cannot be
//! written is said at once) and renamed to `FILE` when the run ends, also
//! early; a run that fails before its workload starts leaves `FILE` as it
//! was.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, RecordBatch, UInt32Array, UInt64Array};
use arrow_ipc::writer::FileWriter;
use arrow_schema::{DataType, Field, Schema};

use crate::engine::{VictimRow, VictimSink};
use crate::error::{Error, Result};

/// Rows per Arrow record batch.
const BATCH: usize = 1 << 16;

const U64: &[&str] = &["victim", "time_ns", "user_writes"];
const U32: &[&str] = &["segment", "group", "blocks", "valid", "invalid"];
const TAIL_U64: &[&str] = &["age_writes", "lifespan_writes", "open_time", "seal_time"];

/// A victim dump being written.
pub struct GcDump {
    path: String,
    /// `path.part`, where it is written.
    part: String,
    /// The workload started (else the file is dropped, not kept).
    started: bool,
    out: Out,
    error: Option<String>,
    /// `finish` ran (the Arrow footer is written once).
    finished: bool,
}

enum Out {
    Csv(BufWriter<File>),
    Arrow(Box<ArrowOut>),
}

struct ArrowOut {
    w: FileWriter<BufWriter<File>>,
    schema: Arc<Schema>,
    rows: Vec<VictimRow>,
}

impl GcDump {
    /// Create `path` (truncated): Arrow for `.arrow`, else CSV.
    pub fn create(path: &str) -> Result<Self> {
        let bad = |e: &dyn std::fmt::Display| {
            Error::config("dump_gc", format!("{path}: cannot write: {e}"))
        };
        let part = format!("{path}.part");
        let file = BufWriter::with_capacity(1 << 20, File::create(&part).map_err(|e| bad(&e))?);
        let out = if path.ends_with(".arrow") {
            let mut fields: Vec<Field> = Vec::new();
            fields.extend(U64.iter().map(|n| Field::new(*n, DataType::UInt64, false)));
            fields.extend(U32.iter().map(|n| Field::new(*n, DataType::UInt32, false)));
            fields.push(Field::new("gp", DataType::Float64, false));
            fields.extend(
                TAIL_U64
                    .iter()
                    .map(|n| Field::new(*n, DataType::UInt64, false)),
            );
            fields.push(Field::new("erase_count", DataType::UInt32, false));
            let schema = Arc::new(Schema::new(fields));
            let w = FileWriter::try_new(file, &schema).map_err(|e| bad(&e))?;
            Out::Arrow(Box::new(ArrowOut {
                w,
                schema,
                rows: Vec::with_capacity(BATCH),
            }))
        } else {
            let mut f = file;
            let header = [U64, U32, &["gp"], TAIL_U64, &["erase_count"]]
                .concat()
                .join(",");
            writeln!(f, "{header}").map_err(|e| bad(&e))?;
            Out::Csv(f)
        };
        Ok(GcDump {
            path: path.to_string(),
            part,
            started: false,
            out,
            error: None,
            finished: false,
        })
    }

    fn write_batch(a: &mut ArrowOut) -> std::result::Result<(), String> {
        let rows = std::mem::take(&mut a.rows);
        let u64s = |f: fn(&VictimRow) -> u64| -> ArrayRef {
            Arc::new(UInt64Array::from_iter_values(rows.iter().map(f)))
        };
        let u32s = |f: fn(&VictimRow) -> u32| -> ArrayRef {
            Arc::new(UInt32Array::from_iter_values(rows.iter().map(f)))
        };
        let cols: Vec<ArrayRef> = vec![
            u64s(|r| r.victim),
            u64s(|r| r.time_ns),
            u64s(|r| r.now),
            u32s(|r| r.segment),
            u32s(|r| r.group),
            u32s(|r| r.blocks),
            u32s(|r| r.valid),
            u32s(|r| r.blocks - r.valid),
            Arc::new(Float64Array::from_iter_values(rows.iter().map(gp))),
            u64s(|r| r.now - r.seal_time),
            u64s(|r| r.seal_time - r.open_time),
            u64s(|r| r.open_time),
            u64s(|r| r.seal_time),
            u32s(|r| r.erase_count),
        ];
        let batch = RecordBatch::try_new(a.schema.clone(), cols).map_err(|e| e.to_string())?;
        a.w.write(&batch).map_err(|e| e.to_string())?;
        a.rows = rows;
        a.rows.clear();
        Ok(())
    }
}

/// A run that stops early (an error, Ctrl-C, a caller that stops stepping)
/// still leaves a readable file: what was dumped, the Arrow footer written.
impl Drop for GcDump {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

/// The victim's garbage proportion.
fn gp(r: &VictimRow) -> f64 {
    (r.blocks - r.valid) as f64 / r.blocks as f64
}

impl VictimSink for GcDump {
    fn start(&mut self) {
        self.started = true;
    }

    fn victim(&mut self, r: &VictimRow) {
        if self.error.is_some() {
            return;
        }
        let res = match &mut self.out {
            Out::Csv(f) => writeln!(
                f,
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                r.victim,
                r.time_ns,
                r.now,
                r.segment,
                r.group,
                r.blocks,
                r.valid,
                r.blocks - r.valid,
                gp(r),
                r.now - r.seal_time,
                r.seal_time - r.open_time,
                r.open_time,
                r.seal_time,
                r.erase_count
            )
            .map_err(|e| e.to_string()),
            Out::Arrow(a) => {
                a.rows.push(*r);
                if a.rows.len() == BATCH {
                    Self::write_batch(a)
                } else {
                    Ok(())
                }
            }
        };
        self.error = res.err();
    }

    fn finish(&mut self) -> std::result::Result<(), String> {
        if std::mem::replace(&mut self.finished, true) {
            return Ok(());
        }
        if !self.started {
            let _ = std::fs::remove_file(&self.part);
            return Ok(());
        }
        if self.error.is_none() {
            let res = match &mut self.out {
                Out::Csv(f) => f.flush().map_err(|e| e.to_string()),
                Out::Arrow(a) => {
                    let rest = if a.rows.is_empty() {
                        Ok(())
                    } else {
                        Self::write_batch(a)
                    };
                    rest.and_then(|_| a.w.finish().map_err(|e| e.to_string()))
                }
            };
            self.error = res.err();
        }
        if self.error.is_none() {
            if let Err(e) = std::fs::rename(&self.part, &self.path) {
                self.error = Some(e.to_string());
            }
        }
        match self.error.take() {
            Some(e) => Err(format!("{}: cannot write the victim dump: {e}", self.path)),
            None => Ok(()),
        }
    }
}
