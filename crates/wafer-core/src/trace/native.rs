//! The native trace format: an Arrow IPC file (readable by pyarrow, polars,
//! DuckDB ...) with one row per request, written by `wafer traces convert`.
//!
//! | column | type | meaning |
//! |---|---|---|
//! | `time_ns` | uint64 | time since the first request [ns] |
//! | `device` | uint64 | device / volume id, as the source format numbers it |
//! | `op` | uint8 | 0 read, 1 write, 2 trim |
//! | `offset` | uint64 | start [bytes] |
//! | `size` | uint64 | length [bytes] |
//!
//! Schema metadata: `wafer.version` (`1`), `wafer.source`, `wafer.source_format`.
//! Rows are written in batches of 2^16; the reader needs nothing but this
//! layout, so a file written by another tool with these columns also replays.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{UInt64Type, UInt8Type};
use arrow_array::{ArrayRef, RecordBatch, UInt64Array, UInt8Array};
use arrow_buffer::ScalarBuffer;
use arrow_ipc::reader::FileReader;
use arrow_ipc::writer::FileWriter;
use arrow_schema::{DataType, Field, Schema};

use super::{ReadStats, Record, RecordSource, Selected};
use crate::error::{Error, Result};
use crate::request::Op;

/// Rows per batch: ~2 MiB of columns, small enough that the allocator recycles
/// batch buffers instead of mapping fresh pages for each (33 MiB batches
/// read at half the speed).
const BATCH: usize = 1 << 16;
const MAGIC: &[u8] = b"ARROW1";

fn schema(meta: HashMap<String, String>) -> Schema {
    Schema::new_with_metadata(
        vec![
            Field::new("time_ns", DataType::UInt64, false),
            Field::new("device", DataType::UInt64, false),
            Field::new("op", DataType::UInt8, false),
            Field::new("offset", DataType::UInt64, false),
            Field::new("size", DataType::UInt64, false),
        ],
        meta,
    )
}

/// Whether `path` starts with the Arrow IPC file magic.
pub fn is_native(path: &str) -> Result<bool> {
    let mut f =
        File::open(path).map_err(|e| Error::trace(path, None, format!("cannot open: {e}")))?;
    let mut head = [0u8; 6];
    let n = f
        .read(&mut head)
        .map_err(|e| Error::trace(path, None, format!("cannot read: {e}")))?;
    Ok(n == 6 && head == MAGIC)
}

fn op_code(op: Op) -> u8 {
    match op {
        Op::Read => 0,
        Op::Write => 1,
        Op::Trim => 2,
    }
}

/// One batch of rows being collected for writing.
#[derive(Default)]
struct Rows {
    time: Vec<u64>,
    device: Vec<u64>,
    op: Vec<u8>,
    offset: Vec<u64>,
    size: Vec<u64>,
}

/// Write the selected records of `src` to `out`. Returns the read counts.
pub fn write(
    src: &mut Selected,
    out: &str,
    source: &str,
    source_format: &str,
) -> Result<ReadStats> {
    write_records(|| src.next_record(), out, source, source_format)?;
    Ok(src.stats())
}

/// Write the records `next` yields (until `None`) to `out`.
pub fn write_records(
    mut next: impl FnMut() -> Result<Option<Record>>,
    out: &str,
    source: &str,
    source_format: &str,
) -> Result<()> {
    let io = |e: &dyn std::fmt::Display| Error::trace(out, None, format!("cannot write: {e}"));
    let meta = HashMap::from([
        ("wafer.version".to_string(), "1".to_string()),
        ("wafer.source".to_string(), source.to_string()),
        ("wafer.source_format".to_string(), source_format.to_string()),
    ]);
    let schema = Arc::new(schema(meta));
    let file = File::create(out).map_err(|e| io(&e))?;
    let mut w = FileWriter::try_new(BufWriter::with_capacity(1 << 20, file), &schema)
        .map_err(|e| io(&e))?;
    let mut rows = Rows::default();
    loop {
        let rec = next()?;
        if let Some(r) = rec {
            rows.time.push(r.time_ns);
            rows.device.push(r.device);
            rows.op.push(op_code(r.op));
            rows.offset.push(r.offset);
            rows.size.push(r.size);
        }
        if rows.time.len() == BATCH || (rec.is_none() && !rows.time.is_empty()) {
            let c = std::mem::take(&mut rows);
            let arrays: Vec<ArrayRef> = vec![
                Arc::new(UInt64Array::from(c.time)),
                Arc::new(UInt64Array::from(c.device)),
                Arc::new(UInt8Array::from(c.op)),
                Arc::new(UInt64Array::from(c.offset)),
                Arc::new(UInt64Array::from(c.size)),
            ];
            let batch = RecordBatch::try_new(schema.clone(), arrays).map_err(|e| io(&e))?;
            w.write(&batch).map_err(|e| io(&e))?;
        }
        if rec.is_none() {
            break;
        }
    }
    w.finish().map_err(|e| io(&e))
}

/// The columns of one batch, typed (cheap reference-counted views).
struct Columns {
    time: ScalarBuffer<u64>,
    device: ScalarBuffer<u64>,
    op: ScalarBuffer<u8>,
    offset: ScalarBuffer<u64>,
    size: ScalarBuffer<u64>,
}

/// Records from a native file, batch by batch.
pub struct NativeRecords {
    file: String,
    reader: FileReader<BufReader<File>>,
    cols: Option<Columns>,
    row: usize,
    stats: ReadStats,
}

impl NativeRecords {
    /// Open a native trace, checking its columns.
    pub fn open(path: &str) -> Result<Self> {
        let f =
            File::open(path).map_err(|e| Error::trace(path, None, format!("cannot open: {e}")))?;
        let reader = FileReader::try_new(BufReader::with_capacity(1 << 20, f), None)
            .map_err(|e| Error::trace(path, None, format!("not a readable Arrow IPC file: {e}")))?;
        let want = schema(HashMap::new());
        for field in want.fields() {
            match reader.schema().field_with_name(field.name()) {
                Ok(got) if got.data_type() == field.data_type() => {}
                Ok(got) => {
                    return Err(Error::trace(
                        path,
                        None,
                        format!(
                            "column '{}' is {}, expected {}",
                            field.name(),
                            got.data_type(),
                            field.data_type()
                        ),
                    ))
                }
                Err(_) => {
                    return Err(Error::trace(
                        path,
                        None,
                        format!("not a wafer trace: no column '{}'", field.name()),
                    ))
                }
            }
        }
        Ok(NativeRecords {
            file: path.to_string(),
            reader,
            cols: None,
            row: 0,
            stats: ReadStats::default(),
        })
    }

    fn load(&mut self) -> Result<bool> {
        loop {
            match self.reader.next() {
                None => return Ok(false),
                Some(Err(e)) => {
                    return Err(Error::trace(
                        &self.file,
                        None,
                        format!("corrupt batch: {e}"),
                    ))
                }
                Some(Ok(b)) => {
                    if b.num_rows() == 0 {
                        continue;
                    }
                    if b.columns().iter().any(|c| c.null_count() > 0) {
                        return Err(Error::trace(
                            &self.file,
                            None,
                            "null values in a trace column",
                        ));
                    }
                    let u64s = |n: &str| {
                        b.column_by_name(n)
                            .expect("schema checked")
                            .as_primitive::<UInt64Type>()
                            .values()
                            .clone()
                    };
                    let op = b
                        .column_by_name("op")
                        .expect("schema checked")
                        .as_primitive::<UInt8Type>()
                        .values()
                        .clone();
                    self.cols = Some(Columns {
                        time: u64s("time_ns"),
                        device: u64s("device"),
                        op,
                        offset: u64s("offset"),
                        size: u64s("size"),
                    });
                    self.row = 0;
                    return Ok(true);
                }
            }
        }
    }
}

impl RecordSource for NativeRecords {
    #[inline]
    fn next_record(&mut self) -> Result<Option<Record>> {
        let rows = self.cols.as_ref().map_or(0, |c| c.time.len());
        if self.row >= rows && !self.load()? {
            return Ok(None);
        }
        let c = self.cols.as_ref().expect("loaded");
        let i = self.row;
        self.row += 1;
        self.stats.lines += 1;
        let op = match c.op[i] {
            0 => Op::Read,
            1 => Op::Write,
            2 => Op::Trim,
            x => {
                return Err(Error::trace(
                    &self.file,
                    Some(self.stats.lines),
                    format!("op code {x} is not 0, 1 or 2"),
                ))
            }
        };
        Ok(Some(Record {
            time_ns: c.time[i],
            device: c.device[i],
            op,
            offset: c.offset[i],
            size: c.size[i],
        }))
    }

    fn fill(&mut self, out: &mut Vec<Record>, max: usize) -> Option<Error> {
        while out.len() < max {
            let rows = self.cols.as_ref().map_or(0, |c| c.time.len());
            if self.row >= rows {
                match self.load() {
                    Ok(true) => {}
                    Ok(false) => break,
                    Err(e) => return Some(e),
                }
            }
            let c = self.cols.as_ref().expect("loaded");
            let end = (self.row + max - out.len()).min(c.time.len());
            for i in self.row..end {
                let op = match c.op[i] {
                    0 => Op::Read,
                    1 => Op::Write,
                    2 => Op::Trim,
                    x => {
                        self.stats.lines += (i - self.row) as u64 + 1;
                        self.row = i + 1;
                        return Some(Error::trace(
                            &self.file,
                            Some(self.stats.lines),
                            format!("op code {x} is not 0, 1 or 2"),
                        ));
                    }
                };
                out.push(Record {
                    time_ns: c.time[i],
                    device: c.device[i],
                    op,
                    offset: c.offset[i],
                    size: c.size[i],
                });
            }
            self.stats.lines += (end - self.row) as u64;
            self.row = end;
        }
        None
    }

    fn stats(&self) -> &ReadStats {
        &self.stats
    }
}
