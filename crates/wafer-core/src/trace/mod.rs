//! Block I/O traces: readers for the field's formats (one file per format),
//! transparent gzip / xz / zstd and tar, selection, conversion to block
//! requests, the native columnar format ([`native`]), workload statistics
//! ([`stats`]) and the extension of a short trace that keeps its lifetimes
//! ([`extend`]).
//!
//! Pipeline: a [`RecordSource`] yields byte-level [`Record`]s (a text reader,
//! the binary [`blktrace`] reader or the native reader); [`Selected`]
//! applies the user's [`Selection`] and the defined behaviours for odd input;
//! [`BlockSource`] cuts records into block requests for the engine,
//! optionally remapped to a dense range.
//!
//! Defined behaviours, the same for every format:
//! * a malformed line is an error naming file, line and reason, unless
//!   `skip_bad` is set: then it is skipped and counted (`skipped_bad`);
//! * blank lines and lines starting with `#` are ignored;
//! * a request of size 0 is skipped and counted (`zero_size`);
//! * a timestamp earlier than the previous one is raised to it (requests keep
//!   file order; counted as `backwards_timestamps`); when a file is split
//!   into its volumes, the previous one of the same volume (each volume's
//!   clock is its own, as SepBIT's replayer keeps it: a file of volumes
//!   written one after another is not flattened);
//! * negative or non-numeric fields, and offsets or sizes whose byte value
//!   overflows 64 bits, are malformed lines;
//! * a truncated or corrupt archive is an error naming the line after which
//!   reading failed (with `skip_bad`, reading stops there and it is reported);
//! * a tar archive's regular members are read as one text; a cut tar (the
//!   first lines of one) is read up to its last complete line and reported
//!   as truncated ([`tartext`]);
//! * an empty file (or one with no selected request) replays nothing; a file
//!   with lines of which none is a request of the format is an error (a wrong
//!   `--format` must not replay nothing);
//! * without `--format` the layout is detected ([`detect`]): a clear winner
//!   among the plausible readings, or an error listing the candidates; binary
//!   data that is no known binary format is refused as not a text trace.

mod alibaba;
mod ascii;
mod blkparse;
pub mod blktrace;
mod compress;
mod csv;
pub mod detect;
pub mod extend;
mod fields;
mod fiu;
mod flashnet;
pub mod hpsrt;
mod midas;
mod msr;
mod msrcut;
pub mod native;
mod netapp;
pub mod rate;
mod read_ahead;
pub mod recording;
mod remap;
mod spc;
pub mod split;
pub mod stats;
mod tartext;
mod tencent;
mod text;
mod vscsi;
mod wiscsee;

pub use compress::bytes_read;

/// A device id as a selection names it (`N`, or `MAJ,MIN` for the block
/// device numbers of blktrace-style formats).
pub fn device_name(d: u64) -> String {
    if d >> 32 != 0 {
        format!("{},{}", d >> 32, d & 0xffff_ffff)
    } else {
        d.to_string()
    }
}
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::request::{Op, Request};

pub use compress::open;
pub use detect::detect;
pub use remap::Remap;
pub use text::TextRecords;

/// One request as a trace states it, in bytes and nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// Time as the format states it, converted to ns (epoch depends on the format).
    pub time_ns: u64,
    /// Device / volume id (format-specific; see each reader).
    pub device: u64,
    /// Read, write or trim.
    pub op: Op,
    /// Start [bytes].
    pub offset: u64,
    /// Length [bytes].
    pub size: u64,
}

/// Parser of one text format, line by line.
pub trait LineFormat: Send {
    /// `Ok(None)` for lines that carry no request (headers, summaries,
    /// events of another kind); `Err(reason)` for malformed lines.
    fn parse(&self, line: &str) -> Result<Option<Record>, String>;
    /// Whether `line` has the layout's column signature (for detection).
    fn looks_like(&self, line: &str) -> bool;
    /// Data events of the request kind the layout does not keep, seen so
    /// far (blkparse: queue events when issue events are read, and the
    /// reverse); 0 for layouts with one event per request.
    fn unkept_events(&self) -> u64 {
        0
    }
    /// Where the layout marks the end of a load phase (MiDAS-Simulation's
    /// `LOAD_END`), once its line was read.
    fn load_end(&self) -> Option<LoadEnd> {
        None
    }
}

/// What came before a trace's end-of-load marker (MiDAS-Simulation's
/// `LOAD_END`: the simulator reports the writes after it apart, as "write
/// after load size").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadEnd {
    /// Requests read before the marker (before any selection).
    pub requests: u64,
    /// Bytes those requests wrote.
    pub write_bytes: u64,
}

/// How a registered format is read.
#[derive(Clone, Copy)]
pub enum Reader {
    /// Text, line by line, with this parser.
    Text(fn() -> Box<dyn LineFormat>),
    /// Text whose layout the user gives after the name (`csv:KEYS`).
    ColumnMap,
    /// Binary blktrace events, keeping one action.
    Blktrace(blktrace::Action),
    /// Binary HP SRT records, sectors in this unit.
    HpSrt(hpsrt::SectorUnit),
}

/// A registered format.
pub struct FormatInfo {
    /// Name used with `--format`.
    pub name: &'static str,
    /// One line for `wafer traces formats`.
    pub description: &'static str,
    /// How it is read.
    pub reader: Reader,
}

/// Every format but the native one. Detection scores every text format
/// whose name has no `:` ([`detect`]); the order only names the first of
/// layouts that read a sample identically (`mqsim` before `ssdsim`).
pub const FORMATS: &[FormatInfo] = &[
    FormatInfo {
        name: "msr",
        description: "MSR Cambridge CSV: Timestamp(100ns),Hostname,DiskNumber,Type,Offset(B),Size(B),ResponseTime",
        reader: Reader::Text(|| Box::new(msr::Msr)),
    },
    FormatInfo {
        name: "alibaba",
        description: "Alibaba Cloud 2020 CSV: device_id,opcode(R/W),offset(B),length(B),timestamp(us)",
        reader: Reader::Text(|| Box::new(alibaba::Alibaba)),
    },
    FormatInfo {
        name: "tencent",
        description: "Tencent CBS CSV: Timestamp(s),Offset(sector),Size(sector),IOType(0 r/1 w),VolumeID",
        reader: Reader::Text(|| Box::new(tencent::Tencent)),
    },
    FormatInfo {
        name: "spc",
        description: "UMass/SPC CSV: ASU,LBA(sector),Size(B),Opcode(r/w),Timestamp(s)",
        reader: Reader::Text(|| Box::new(spc::Spc)),
    },
    FormatInfo {
        name: "fiu",
        description: "FIU IODedup: ts(ns) pid process lba(sector) nsectors R/W major minor md5",
        reader: Reader::Text(|| Box::new(fiu::Fiu)),
    },
    FormatInfo {
        name: "blkparse",
        description: "blkparse text output, issue (D) events; blkparse:Q keeps queue events",
        reader: Reader::Text(|| Box::new(blkparse::Blkparse::new("D"))),
    },
    FormatInfo {
        name: "blkparse:Q",
        description: "blkparse text output, queue (Q) events",
        reader: Reader::Text(|| Box::new(blkparse::Blkparse::new("Q"))),
    },
    FormatInfo {
        name: "blkparse:D",
        description: "blkparse text output, issue (D) events",
        reader: Reader::Text(|| Box::new(blkparse::Blkparse::new("D"))),
    },
    FormatInfo {
        name: "mqsim",
        description: "MQSim ASCII: time(ns) device lba(sector) size(sector) type(0 w/1 r)",
        reader: Reader::Text(|| Box::new(ascii::Ascii(ascii::Variant::Mqsim))),
    },
    FormatInfo {
        name: "disksim",
        description: "DiskSim ASCII: time(ms) device blkno(sector) size(sector) flags(bit0: 1 r/0 w)",
        reader: Reader::Text(|| Box::new(ascii::Ascii(ascii::Variant::Disksim))),
    },
    FormatInfo {
        name: "ssdsim",
        description: "SSDsim ASCII: time(ns) device lsn(sector) size(sector) ope(0 w/1 r)",
        reader: Reader::Text(|| Box::new(ascii::Ascii(ascii::Variant::Ssdsim))),
    },
    FormatInfo {
        name: "msr-cut",
        description: "MSR-style replayer cut, whitespace: ts(ms) dev offset(B) size(B) type(1 r/0 w)",
        reader: Reader::Text(|| Box::new(msrcut::MsrCut)),
    },
    FormatInfo {
        name: "flashnet",
        description: "FlashNet replayed trace CSV: ts_record(ms),latency(us),io_type(1 r/0 w),size(B),offset(B),ts_submit(ms),size_after_replay(B)",
        reader: Reader::Text(|| Box::new(flashnet::FlashNet)),
    },
    FormatInfo {
        name: "vscsi",
        description: "CloudPhysics vscsi CSV: version,time(s),op(SCSI opcode, hex),size(B),lbn(sector)",
        reader: Reader::Text(|| Box::new(vscsi::Vscsi { micros: false })),
    },
    FormatInfo {
        name: "vscsi-us",
        description: "CloudPhysics vscsi CSV with the records' microseconds: version,time(us),op(SCSI opcode, hex),size(B),lbn(sector)",
        reader: Reader::Text(|| Box::new(vscsi::Vscsi { micros: true })),
    },
    FormatInfo {
        name: "wiscsee",
        description: "WiscSee events: pid [action(D/C)] operation(read/write/discard) offset(B) size(B) timestamp(s) pre_wait_time [sync]",
        reader: Reader::Text(|| Box::new(wiscsee::WiscSee)),
    },
    FormatInfo {
        name: "blktrace",
        description: "raw binary blktrace (NAME.blktrace.N per-CPU files, their base name, or a tar of them), issue (D) events; blktrace:Q keeps queue events",
        reader: Reader::Blktrace(blktrace::Action::Issue),
    },
    FormatInfo {
        name: "blktrace:Q",
        description: "raw binary blktrace, queue (Q) events",
        reader: Reader::Blktrace(blktrace::Action::Queue),
    },
    FormatInfo {
        name: "blktrace:D",
        description: "raw binary blktrace, issue (D) events",
        reader: Reader::Blktrace(blktrace::Action::Issue),
    },
    FormatInfo {
        name: "netapp",
        description: "NetApp IOLogDump CSV (hfplayer): ELAPSED_USECS(us), CMD(RD_IN/WR_IN; *_OUT skipped), LUN_SSID, LBA(sector), NBLKS(sector), of 16 or 23 fields",
        reader: Reader::Text(|| Box::<netapp::NetApp>::default()),
    },
    FormatInfo {
        name: "midas",
        description: "MiDAS-Simulation input, whitespace: time(s) type(0 r/1 w/3 trim) lba(4KiB page) size(B, whole pages); LOAD_END lines",
        reader: Reader::Text(|| Box::<midas::Midas>::default()),
    },
    FormatInfo {
        name: "hpsrt",
        description: "HP SRT binary (DiskSim's hpl/hpl2): big-endian records; sectors of the header's sectorsize (512 without a header)",
        reader: Reader::HpSrt(hpsrt::SectorUnit::Header),
    },
    FormatInfo {
        name: "hpsrt:512",
        description: "HP SRT binary with 512-byte sectors, as DiskSim reads it",
        reader: Reader::HpSrt(hpsrt::SectorUnit::Disksim),
    },
    FormatInfo {
        name: "csv:KEYS",
        description: "any delimited text with a column map, e.g. csv:time=0,op=1,offset=2,size=3 [device=N sep=comma|tab|space header=N|auto time_unit=ns|us|ms|s offset_unit=/size_unit=byte|sector|block4k|BYTES read=/write=/trim=/skip=V1|V2]",
        reader: Reader::ColumnMap,
    },
];

/// Name of the native columnar format.
pub const NATIVE: &str = "native";

fn known_formats() -> String {
    let mut v: Vec<&str> = FORMATS.iter().map(|f| f.name).collect();
    v.push(NATIVE);
    v.join(", ")
}

fn find(name: &str) -> Result<&'static FormatInfo> {
    FORMATS
        .iter()
        .find(|f| f.name == name)
        .ok_or_else(|| Error::UnknownName {
            kind: "trace format",
            name: name.to_string(),
            known: known_formats(),
        })
}

/// The text format registered as `name`, or the column map `csv:KEYS`.
pub fn line_format(name: &str) -> Result<Box<dyn LineFormat>> {
    let spec_error = |reason: String| Error::trace(&format!("--format {name}"), None, reason);
    if let Some(keys) = name.strip_prefix("csv:") {
        return csv::ColumnMap::parse(keys)
            .map(|m| Box::new(m) as Box<dyn LineFormat>)
            .map_err(spec_error);
    }
    let needs_map = || {
        spec_error(format!(
            "csv needs a column map, e.g. csv:time=0,op=1,offset=2,size=3; keys: {}",
            csv::KEYS
        ))
    };
    if name == "csv" {
        return Err(needs_map());
    }
    match find(name)?.reader {
        Reader::Text(build) => Ok(build()),
        Reader::ColumnMap => Err(needs_map()),
        Reader::Blktrace(_) | Reader::HpSrt(_) => Err(spec_error(
            "a binary format, not read line by line".to_string(),
        )),
    }
}

/// Counts of what reading and selection did, reported with every replay.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadStats {
    /// Lines read (text formats), rows read (native) or events read (blktrace).
    pub lines: u64,
    /// Requests kept after selection.
    pub requests: u64,
    /// Malformed lines skipped under `skip_bad`.
    pub skipped_bad: u64,
    /// Requests of size 0, skipped.
    pub zero_size: u64,
    /// Timestamps raised to the previous one.
    pub backwards_timestamps: u64,
    /// Requests left out by the device, time or read selection.
    pub filtered: u64,
    /// Whether reading stopped early: on a corrupt archive under
    /// `skip_bad`, or at the end of a cut tar archive.
    pub truncated: bool,
    /// blkparse: data events of the action not kept (queue events when
    /// issue events are read, and the reverse).
    #[serde(default)]
    pub unkept_events: u64,
    /// The trace's end-of-load marker, if it has one.
    #[serde(default)]
    pub load_end: Option<LoadEnd>,
}

/// A stream of records.
pub trait RecordSource: Send {
    /// The next record, `None` at the end.
    fn next_record(&mut self) -> Result<Option<Record>>;
    /// Append up to `max` records to `out` (fewer only at the end or at an
    /// error). An error met after some records is returned with them, so the
    /// records read before bad input are never lost.
    fn fill(&mut self, out: &mut Vec<Record>, max: usize) -> Option<Error> {
        for _ in 0..max {
            match self.next_record() {
                Ok(Some(r)) => out.push(r),
                Ok(None) => break,
                Err(e) => return Some(e),
            }
        }
        None
    }
    /// Reading counts so far (lines, skipped_bad, truncated).
    fn stats(&self) -> &ReadStats;
}

/// What part of a trace to replay.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Selection {
    /// Keep only this device / volume (`N`, or `MAJ,MIN` for fiu, blkparse and blktrace).
    pub device: Option<String>,
    /// Start of the time window [s after the first selected request].
    pub start_seconds: Option<f64>,
    /// End of the time window (exclusive) [s after the first selected request].
    pub end_seconds: Option<f64>,
    /// Keep at most this many requests.
    pub max_requests: Option<u64>,
    /// Drop read requests.
    pub drop_reads: bool,
    /// Skip malformed lines (counted) instead of stopping.
    pub skip_bad: bool,
    /// Raise a backward timestamp to its own device's previous one, not the
    /// file's (for a split into volumes; a replay of the whole file as one
    /// log needs one clock). Internal: set by the split.
    #[serde(skip)]
    pub clock_per_device: bool,
}

/// Parse a device id as the readers number them.
pub fn parse_device(s: &str) -> Result<u64> {
    let s = s.trim();
    let bad = || {
        Error::config(
            "device",
            format!("'{s}' is not a device id (N, or MAJ,MIN)"),
        )
    };
    match s.split_once([',', ':']) {
        Some((a, b)) => {
            let (a, b) = (
                a.trim().parse::<u32>().map_err(|_| bad())?,
                b.trim().parse::<u32>().map_err(|_| bad())?,
            );
            Ok((a as u64) << 32 | b as u64)
        }
        None => s.parse().map_err(|_| bad()),
    }
}

/// Records a [`Selected`] reads from its source at once.
const READ_BATCH: usize = 1024;

/// A record source with the selection and the defined behaviours applied.
/// Times become ns since the first selected request.
pub struct Selected {
    inner: Box<dyn RecordSource>,
    /// Selection counts (requests, filtered, zero_size, backwards); the
    /// reading counts stay in `inner`.
    counts: ReadStats,
    /// Records read ahead from `inner`, served from `pos`.
    buf: Vec<Record>,
    pos: usize,
    /// Error `inner` met after the records in `buf`.
    error: Option<Error>,
    /// `inner` has no more records.
    ended: bool,
    device: Option<u64>,
    start_ns: u64,
    end_ns: u64,
    max: u64,
    drop_reads: bool,
    t0: Option<u64>,
    /// The clock so far: the file's, or with `clock_per_device` device
    /// `dev`'s (the other devices' in `lasts`).
    last: u64,
    per_device: bool,
    dev: u64,
    lasts: std::collections::HashMap<u64, u64>,
}

impl Selected {
    /// Apply `sel` to `inner`.
    pub fn new(inner: Box<dyn RecordSource>, sel: &Selection) -> Result<Self> {
        let secs = |v: Option<f64>, field: &str, default: u64| -> Result<u64> {
            match v {
                None => Ok(default),
                Some(x) if x.is_finite() && x >= 0.0 => Ok((x * 1e9) as u64),
                Some(x) => Err(Error::config(field, format!("{x}; must be seconds >= 0"))),
            }
        };
        let start_ns = secs(sel.start_seconds, "start_seconds", 0)?;
        let end_ns = secs(sel.end_seconds, "end_seconds", u64::MAX)?;
        if end_ns <= start_ns {
            return Err(Error::config(
                "end_seconds",
                "the time window is empty (end <= start)",
            ));
        }
        Ok(Selected {
            inner,
            counts: ReadStats::default(),
            buf: Vec::with_capacity(READ_BATCH),
            pos: 0,
            error: None,
            ended: false,
            device: sel.device.as_deref().map(parse_device).transpose()?,
            start_ns,
            end_ns,
            max: sel.max_requests.unwrap_or(u64::MAX),
            drop_reads: sel.drop_reads,
            t0: None,
            last: 0,
            per_device: sel.clock_per_device,
            dev: 0,
            lasts: std::collections::HashMap::new(),
        })
    }

    /// The next selected record.
    #[inline]
    pub fn next_record(&mut self) -> Result<Option<Record>> {
        loop {
            if self.counts.requests >= self.max {
                return Ok(None);
            }
            if self.pos == self.buf.len() {
                if !self.refill()? {
                    return Ok(None);
                }
                continue;
            }
            let mut r = self.buf[self.pos];
            self.pos += 1;
            if self.device.is_some_and(|d| d != r.device) {
                self.counts.filtered += 1;
                continue;
            }
            if r.size == 0 {
                self.counts.zero_size += 1;
                continue;
            }
            if self.per_device && r.device != self.dev {
                self.lasts.insert(self.dev, self.last);
                self.last = self.lasts.get(&r.device).copied().unwrap_or(0);
                self.dev = r.device;
            }
            let t0 = *self.t0.get_or_insert(r.time_ns);
            let mut t = r.time_ns.saturating_sub(t0);
            if r.time_ns < t0 || t < self.last {
                self.counts.backwards_timestamps += 1;
                t = self.last;
            }
            self.last = t;
            if t >= self.end_ns {
                return Ok(None);
            }
            if t < self.start_ns || (self.drop_reads && r.op == Op::Read) {
                self.counts.filtered += 1;
                continue;
            }
            r.time_ns = t - self.start_ns;
            self.counts.requests += 1;
            return Ok(Some(r));
        }
    }

    /// Refill the read-ahead buffer; false at the end of the source. A
    /// source error comes after the records read before it.
    #[cold]
    fn refill(&mut self) -> Result<bool> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if self.ended {
            return Ok(false);
        }
        self.buf.clear();
        self.pos = 0;
        self.error = self.inner.fill(&mut self.buf, READ_BATCH);
        self.ended = self.buf.len() < READ_BATCH;
        Ok(!self.buf.is_empty() || self.error.is_some())
    }

    /// Counts so far.
    pub fn stats(&self) -> ReadStats {
        let c = self.counts;
        ReadStats {
            requests: c.requests,
            filtered: c.filtered,
            zero_size: c.zero_size,
            backwards_timestamps: c.backwards_timestamps,
            ..*self.inner.stats()
        }
    }
}

/// Open `path` as `format` (`None` = detect) with the selection applied.
pub fn open_selected(
    path: &str,
    format: Option<&str>,
    sel: &Selection,
) -> Result<(Selected, String)> {
    let (inner, format) = open_source(path, format, sel)?;
    Ok((Selected::new(inner, sel)?, format))
}

/// `path`'s records as `format` (`None` = detect), before the selection.
fn open_source(
    path: &str,
    format: Option<&str>,
    sel: &Selection,
) -> Result<(Box<dyn RecordSource>, String)> {
    let format = match format {
        Some(f) => f.to_string(),
        None => detect(path)?,
    };
    let reader = find(&format).ok().map(|f| f.reader);
    let inner: Box<dyn RecordSource> = match reader {
        _ if format == NATIVE => Box::new(native::NativeRecords::open(path)?),
        Some(Reader::Blktrace(action)) => {
            Box::new(blktrace::BlktraceRecords::open(path, action, sel.skip_bad)?)
        }
        Some(Reader::HpSrt(unit)) => Box::new(hpsrt::HpSrtRecords::open(path, unit, sel.skip_bad)?),
        _ => Box::new(TextRecords::open(path, &format, sel.skip_bad)?),
    };
    // Parsed (and decompressed) on a thread of its own past the first
    // records; the native format is read as fast as it is used.
    let inner: Box<dyn RecordSource> = if format == NATIVE {
        inner
    } else {
        Box::new(read_ahead::ReadAhead::new(inner))
    };
    Ok((inner, format))
}

/// A recording of a trace's records (from [`footprint_recorded`]) with the
/// selection applied: the same requests, counts and error as
/// [`open_selected`] on the file it was taken from with `sel`.
pub fn open_recorded(
    rec: std::sync::Arc<recording::Recording>,
    sel: &Selection,
) -> Result<Selected> {
    Selected::new(Box::new(recording::Replayed::new(rec)), sel)
}

/// The device ids of a trace's selected requests, in order of first
/// appearance (one pass over the file).
pub fn devices(path: &str, format: Option<&str>, sel: &Selection) -> Result<Vec<u64>> {
    let (mut s, _) = open_selected(path, format, sel)?;
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    while let Some(r) = s.next_record()? {
        if seen.insert(r.device) {
            out.push(r.device);
        }
    }
    Ok(out)
}

/// First block and block count of a record.
#[inline]
pub fn blocks_of(r: &Record, block_size: u32) -> (u64, u64) {
    let bs = block_size as u64;
    let first = r.offset / bs;
    let end = r.offset.saturating_add(r.size).div_ceil(bs);
    (first, end - first)
}

/// Where a request's bytes sit in its blocks: the offset of its first byte
/// inside its first block and its length [bytes].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Extent {
    /// Offset of the first byte in the first block [bytes].
    pub head: u32,
    /// Length [bytes].
    pub bytes: u64,
}

/// Selected records as block requests, with an optional dense remapping,
/// and optionally followed by a continuation ([`extend`]).
pub struct BlockSource {
    sel: Selected,
    block_size: u32,
    remap: Option<Remap>,
    file: String,
    continuation: Option<extend::Continuation>,
    /// The selected records are all read.
    trace_done: bool,
}

impl BlockSource {
    /// Requests of `sel` in blocks of `block_size`.
    pub fn new(sel: Selected, block_size: u32, remap: Option<Remap>, file: &str) -> Self {
        BlockSource {
            sel,
            block_size,
            remap,
            file: file.to_string(),
            continuation: None,
            trace_done: false,
        }
    }

    /// The same requests followed by `c`'s (which must touch only blocks the
    /// selected requests touch, as a continuation of them does).
    pub fn with_continuation(mut self, c: Option<extend::Continuation>) -> Self {
        self.continuation = c;
        self
    }

    /// The continuation's counts, if there is one.
    pub fn continuation_stats(&self) -> Option<extend::ContinuationStats> {
        self.continuation.as_ref().map(|c| c.stats())
    }

    /// The next request, `None` at the end of the trace.
    #[inline]
    pub fn next_request(&mut self) -> Result<Option<Request>> {
        Ok(self.next_request_extent()?.map(|(r, _)| r))
    }

    /// The next request and where its bytes sit in its blocks (timing
    /// mode's partial-page writes), `None` at the end of the trace.
    pub fn next_request_extent(&mut self) -> Result<Option<(Request, Extent)>> {
        let next = match self.trace_done {
            false => self.sel.next_record()?,
            true => None,
        };
        let r = match next {
            Some(r) => r,
            None => {
                self.trace_done = true;
                match self.continuation.as_mut().and_then(|c| c.next_record()) {
                    Some(r) => r,
                    None => return Ok(None),
                }
            }
        };
        let (mut lba, blocks) = blocks_of(&r, self.block_size);
        if blocks > u32::MAX as u64 {
            return Err(Error::trace(
                &self.file,
                None,
                format!("request of {} bytes is too large", r.size),
            ));
        }
        if let Some(m) = &self.remap {
            lba = m.map(lba);
        }
        let extent = Extent {
            head: (r.offset % self.block_size as u64) as u32,
            bytes: r.size,
        };
        Ok(Some((
            Request {
                time_ns: r.time_ns,
                lba,
                blocks: blocks as u32,
                op: r.op,
                tenant: r.device as u32,
            },
            extent,
        )))
    }

    /// Counts so far.
    pub fn stats(&self) -> ReadStats {
        self.sel.stats()
    }
}

/// One pass over the selected requests: the address space they need (the
/// largest end block), the dense remapping of the blocks they touch (whose
/// size is the footprint), and the error that ended the pass early, if any
/// (the figures then cover the requests before it, which a replay of the
/// same selection applies before meeting the same error).
pub fn footprint(
    path: &str,
    format: Option<&str>,
    sel: &Selection,
    block_size: u32,
) -> Result<(u64, Remap, Option<Error>)> {
    footprint_recorded(path, format, sel, block_size, None).map(|(e, m, err, _)| (e, m, err))
}

/// [`footprint`], keeping the records it read within `record` bytes (see
/// [`recording`]; never for a native trace, read as fast as it is used):
/// `None` when not asked, native, or larger than the budget.
pub fn footprint_recorded(
    path: &str,
    format: Option<&str>,
    sel: &Selection,
    block_size: u32,
    record: Option<u64>,
) -> Result<(u64, Remap, Option<Error>, Option<recording::Recording>)> {
    let (inner, format) = open_source(path, format, sel)?;
    let slot = recording::Slot::default();
    let inner: Box<dyn RecordSource> = match record {
        Some(budget) if format != NATIVE => {
            Box::new(recording::Tap::new(inner, budget, slot.clone()))
        }
        _ => inner,
    };
    let mut s = Selected::new(inner, sel)?;
    let mut end = 0u64;
    let mut builder = remap::Builder::default();
    let mut seen = 0u64;
    let error = loop {
        seen += 1;
        if seen & 0xFFFF == 0 {
            crate::interrupt::check()?;
        }
        match s.next_record() {
            Ok(Some(r)) => {
                let (first, n) = blocks_of(&r, block_size);
                end = end.max(first + n);
                builder.add(first, first + n);
            }
            Ok(None) => break None,
            Err(e) => break Some(e),
        }
    };
    drop(s); // the tap leaves its recording in `slot`
    let rec = slot.lock().unwrap_or_else(|e| e.into_inner()).take();
    Ok((end, builder.finish(), error, rec))
}
