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
//!
//! The file's footer (custom metadata, written once every row is) carries
//! `wafer.rows` (the row count) and `wafer.rows_xxh3` (a checksum of every
//! column's values, [`RowsDigest`]; issue 42). A file that has them is
//! verified when opened, before any row is used: a trace damaged or edited
//! since `wafer traces convert` wrote it is an error naming the file, never
//! a silently different replay. The verification reads the file once per
//! process (later opens of the same unchanged file, e.g. a search's many
//! replays, reuse it; a file modified in the last seconds is never
//! remembered). A file whose schema or footer shows wafer wrote it must
//! carry them; another tool's file (no `wafer.*` keys, no footer metadata)
//! is not checked.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use arrow_array::cast::AsArray;
use arrow_array::types::{UInt64Type, UInt8Type};
use arrow_array::{ArrayRef, RecordBatch, UInt64Array, UInt8Array};
use arrow_buffer::ScalarBuffer;
use arrow_ipc::reader::FileReader;
use arrow_ipc::writer::FileWriter;
use arrow_schema::{DataType, Field, Schema};
use xxhash_rust::xxh3::{xxh3_64, Xxh3Default};

use super::compress::Counted;
use super::{ReadStats, Record, RecordSource, Selected};
use crate::error::{Error, Result};
use crate::request::Op;

/// Rows per batch: ~2 MiB of columns, small enough that the allocator recycles
/// batch buffers instead of mapping fresh pages for each (33 MiB batches
/// read at half the speed).
const BATCH: usize = 1 << 16;
/// Bytes of one row's columns (time, device, op, offset, size) on disk.
pub const ROW_BYTES: usize = 8 + 8 + 1 + 8 + 8;

/// The reader's buffer [bytes]: the footer and batch headers pass through
/// it; a batch's bodies are read past it.
const READ_BUFFER: usize = 64 << 10;
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

/// Footer keys of the row count and checksum.
const ROWS_KEY: &str = "wafer.rows";
const DIGEST_KEY: &str = "wafer.rows_xxh3";

/// The checksum of a native trace's rows: one xxh3 stream per column over
/// its values' little-endian bytes (the Arrow buffers as stored), combined
/// with the row count. Independent of how rows are cut into batches.
#[derive(Default)]
struct RowsDigest {
    cols: [Xxh3Default; 5],
    rows: u64,
}

impl RowsDigest {
    /// Add one batch's columns (time, device, op, offset, size).
    fn add(&mut self, cols: [&[u8]; 5], rows: usize) {
        for (h, c) in self.cols.iter_mut().zip(cols) {
            h.update(c);
        }
        self.rows += rows as u64;
    }

    /// The checksum so far.
    fn digest(&self) -> u64 {
        let mut b = Vec::with_capacity(6 * 8);
        for h in &self.cols {
            b.extend_from_slice(&h.digest().to_le_bytes());
        }
        b.extend_from_slice(&self.rows.to_le_bytes());
        xxh3_64(&b)
    }
}

/// The bytes of the five columns of a batch (types checked), in
/// [`RowsDigest`]'s order.
fn column_bytes(b: &RecordBatch) -> [&[u8]; 5] {
    let col = |n: &str| b.column_by_name(n).expect("schema checked");
    let u64s = |n: &str| {
        col(n)
            .as_primitive::<UInt64Type>()
            .values()
            .inner()
            .as_slice()
    };
    [
        u64s("time_ns"),
        u64s("device"),
        col("op")
            .as_primitive::<UInt8Type>()
            .values()
            .inner()
            .as_slice(),
        u64s("offset"),
        u64s("size"),
    ]
}

/// Native files verified by this process: path, size, inode and
/// modification time (a file rewritten since is verified again).
type Identity = (String, u64, u64, Option<SystemTime>);

/// A file modified less than this long before its check is never
/// remembered as verified: file systems stamp times at a coarse tick
/// (jiffies, or 2 s on FAT), so a rewrite of the same size within one tick
/// keeps the same identity (git's "racy clean" problem).
const RACY: std::time::Duration = std::time::Duration::from_secs(3);
static VERIFIED: Mutex<Option<HashSet<Identity>>> = Mutex::new(None);

/// `f`, an Arrow call on the file at `path`: Arrow's IPC reader panics on
/// some damaged files (a buffer sliced past its end) instead of returning
/// an error; that panic is this file's error, never the process's.
fn arrow<T>(path: &str, f: impl FnOnce() -> T) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|_| {
        Error::trace(
            path,
            None,
            "corrupt: Arrow cannot decode it (the file was damaged or edited after `wafer \
             traces convert` wrote it; convert the source trace again)",
        )
    })
}

/// Check the rows of the native trace at `path` against the checksum its
/// footer carries (once per process per unchanged file); a file without
/// one passes.
fn verify(path: &str, reader: &mut FileReader<BufReader<Counted>>) -> Result<()> {
    let meta = reader.custom_metadata();
    let wafers = !meta.is_empty() || reader.schema().metadata().keys().any(|k| wafer_key(k));
    let (want, rows) = (meta.get(DIGEST_KEY).cloned(), meta.get(ROWS_KEY).cloned());
    let Some(want) = want else {
        if wafers {
            return Err(Error::trace(
                path,
                None,
                format!(
                    "corrupt: wafer wrote it but its footer has no `{DIGEST_KEY}` checksum \
                     (the file was damaged, or an older wafer converted it; convert the source \
                     trace again)"
                ),
            ));
        }
        return Ok(());
    };
    let id: Identity = match std::fs::metadata(path) {
        Ok(m) => (
            path.to_string(),
            m.len(),
            std::os::unix::fs::MetadataExt::ino(&m),
            m.modified().ok(),
        ),
        Err(e) => return Err(Error::trace(path, None, format!("cannot read: {e}"))),
    };
    let seen = |v: &Option<HashSet<Identity>>| v.as_ref().is_some_and(|s| s.contains(&id));
    if seen(&VERIFIED.lock().unwrap_or_else(|e| e.into_inner())) {
        return Ok(());
    }
    let corrupt = |why: String| {
        Error::trace(
            path,
            None,
            format!(
                "corrupt: {why} (the file was damaged or edited after `wafer traces convert` \
                 wrote it; convert the source trace again)"
            ),
        )
    };
    let mut d = RowsDigest::default();
    while let Some(b) = arrow(path, || reader.next())? {
        let b = b.map_err(|e| corrupt(format!("a batch does not read ({e})")))?;
        d.add(column_bytes(&b), b.num_rows());
    }
    reader
        .set_index(0)
        .map_err(|e| corrupt(format!("cannot read it again ({e})")))?;
    let got = format!("{:016x}", d.digest());
    if rows.as_deref() != Some(d.rows.to_string().as_str()) {
        return Err(corrupt(format!(
            "it has {} rows, its footer says {}",
            d.rows,
            rows.unwrap_or_else(|| "nothing".into())
        )));
    }
    if got != want {
        return Err(corrupt(format!(
            "the checksum of its rows is {got}, its footer says {want}"
        )));
    }
    let settled =
        id.3.and_then(|m| SystemTime::now().duration_since(m).ok())
            .is_some_and(|age| age >= RACY);
    if settled {
        VERIFIED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(HashSet::new)
            .insert(id);
    }
    Ok(())
}

/// Whether a schema key looks like one wafer writes (`wafer.version`,
/// `wafer.source`, ...), also with one byte of its prefix damaged: a file
/// wafer wrote must carry its checksum, and a flipped key name must not
/// pass it off as another tool's file that is read unchecked.
fn wafer_key(k: &str) -> bool {
    let b = k.as_bytes();
    let near = b.len() >= 6 && b[..6].iter().zip(b"wafer.").filter(|(x, y)| x != y).count() <= 1;
    near || [".version", ".source", ".source_format"]
        .iter()
        .any(|s| k.ends_with(s))
}

/// Check that `got` has the native columns with their types.
fn check_columns(path: &str, got: &Schema) -> Result<()> {
    let want = schema(HashMap::new());
    for field in want.fields() {
        match got.field_with_name(field.name()) {
            Ok(g) if g.data_type() == field.data_type() => {}
            Ok(g) => {
                return Err(Error::trace(
                    path,
                    None,
                    format!(
                        "column '{}' is {}, expected {}",
                        field.name(),
                        g.data_type(),
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
    Ok(())
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
    // Written under `OUT.part` and renamed when whole: an error, Ctrl-C
    // (checked every batch) or a kill never leaves a cut file under the
    // name asked for (a rerun overwrites the `.part`).
    let part = format!("{out}.part");
    let written = (|| {
        let file = File::create(&part).map_err(|e| io(&e))?;
        write_batches(&mut next, file, &schema, &io)
    })();
    match written {
        Ok(()) => std::fs::rename(&part, out).map_err(|e| io(&e)),
        Err(e) => {
            let _ = std::fs::remove_file(&part);
            Err(e)
        }
    }
}

/// The records `next` yields as Arrow batches into `file`, then the footer.
fn write_batches(
    next: &mut impl FnMut() -> Result<Option<Record>>,
    file: File,
    schema: &Arc<Schema>,
    io: &dyn Fn(&dyn std::fmt::Display) -> Error,
) -> Result<()> {
    let mut w =
        FileWriter::try_new(BufWriter::with_capacity(1 << 20, file), schema).map_err(|e| io(&e))?;
    let mut rows = Rows::default();
    let mut digest = RowsDigest::default();
    loop {
        let rec = next()?;
        if let Some(r) = rec {
            rows.time.push(r.time_ns);
            rows.device.push(r.device);
            rows.op.push(r.op.code());
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
            digest.add(column_bytes(&batch), batch.num_rows());
            w.write(&batch).map_err(|e| io(&e))?;
            crate::interrupt::check()?;
        }
        if rec.is_none() {
            break;
        }
    }
    w.write_metadata(ROWS_KEY, digest.rows.to_string());
    w.write_metadata(DIGEST_KEY, format!("{:016x}", digest.digest()));
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
    reader: FileReader<BufReader<Counted>>,
    cols: Option<Columns>,
    row: usize,
    stats: ReadStats,
}

impl NativeRecords {
    /// Open a native trace, checking its columns and, when its footer
    /// carries one, its rows' checksum (see the module's doc).
    pub fn open(path: &str) -> Result<Self> {
        let f =
            File::open(path).map_err(|e| Error::trace(path, None, format!("cannot open: {e}")))?;
        // A batch's columns are read whole (past the buffer), so a small
        // buffer costs nothing and keeps a fleet's open volumes light
        // (a 1 MiB buffer was 1.3 MB of every volume in flight).
        let mut reader = arrow(path, || {
            FileReader::try_new(BufReader::with_capacity(READ_BUFFER, Counted(f)), None)
        })?
        .map_err(|e| Error::trace(path, None, format!("not a readable Arrow IPC file: {e}")))?;
        check_columns(path, reader.schema().as_ref())?;
        verify(path, &mut reader)?;
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
            let file = &self.file;
            let reader = &mut self.reader;
            match arrow(file, || reader.next())? {
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
