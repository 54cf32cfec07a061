//! `blktrace`: raw binary output of Linux `blktrace -d DEV`, the per-CPU
//! files `NAME.blktrace.N` that `blkparse` reads. Each event is a
//! `struct blk_io_trace` (include/uapi/linux/blktrace_api.h), 48 bytes in
//! the tracing host's byte order, then `pdu_len` bytes of payload:
//!
//! | bytes | field | meaning |
//! |---|---|---|
//! | 0..4 | magic | `0x65617400 | version`; wafer reads version 7 |
//! | 4..8 | sequence | per-CPU event number, ignored |
//! | 8..16 | time | ns (the kernel's clock; only differences matter) |
//! | 16..24 | sector | start, 512-byte sectors |
//! | 24..28 | bytes | length [bytes] |
//! | 28..32 | action | low 16 bits: action (`__BLK_TA_*`), high 16: categories (`BLK_TC_*`) |
//! | 32..36 | pid | ignored |
//! | 36..40 | device | kernel `dev_t`: `major << 20 | minor` |
//! | 40..44 | cpu | ignored |
//! | 44..46 | error | ignored |
//! | 46..48 | pdu_len | payload bytes that follow, skipped |
//!
//! The byte order is read from each event's magic, so traces from big- and
//! little-endian hosts both read. As with the `blkparse` text reader, one
//! action is kept: issue (`D`, `__BLK_TA_ISSUE` = 7) by default, queue with
//! `blktrace:Q` (`__BLK_TA_QUEUE` = 1). Categories give the operation like
//! blkparse's RWBS: `BLK_TC_DISCARD` (1 << 13) is a trim, else
//! `BLK_TC_WRITE` (1 << 1) a write, else a read; events of 0 bytes (flushes),
//! notify events (`BLK_TC_NOTIFY`, 1 << 10: process names, messages) and SCSI
//! pass-through (`BLK_TC_PC`, 1 << 9) carry no data and are skipped. The
//! record's device id is `major << 32 | minor`, as the blkparse reader
//! numbers it, so `--device MAJ,MIN` selects the same disk either way.
//!
//! Inputs, each optionally gzip/xz/zstd-compressed:
//! * one file: a per-CPU file `NAME.blktrace.N` (read alone), or the single
//!   stream of `blktrace -o -`;
//! * a base name `NAME` that is not a file: every `NAME.blktrace.N` beside
//!   it, merged by time;
//! * a tar archive: every member named `*.blktrace.N`, merged by time (a
//!   compressed archive is decompressed once per member).

use std::io::{BufRead, Read};
use std::path::Path;

use super::compress;
use super::{ReadStats, Record, RecordSource};
use crate::error::{Error, Result};
use crate::request::Op;

const MAGIC: u32 = 0x6561_7400;
const VERSION: u32 = 7;
/// Size of `struct blk_io_trace` [bytes].
const EVENT: usize = 48;
const TC_SHIFT: u32 = 16;
const TC_WRITE: u32 = 1 << 1;
const TC_PC: u32 = 1 << 9;
const TC_NOTIFY: u32 = 1 << 10;
const TC_DISCARD: u32 = 1 << 13;
/// Minor-number bits of the kernel's `dev_t`.
const MINOR_BITS: u32 = 20;
/// Read buffer per merged stream [bytes].
const STREAM_BUFFER: usize = 64 << 10;

/// The event kept per request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// `Q`, `__BLK_TA_QUEUE`: the request as the file system submitted it.
    Queue,
    /// `D`, `__BLK_TA_ISSUE`: the request as sent to the device.
    Issue,
}

impl Action {
    fn code(self) -> u32 {
        match self {
            Action::Queue => 1,
            Action::Issue => 7,
        }
    }
    fn letter(self) -> char {
        match self {
            Action::Queue => 'Q',
            Action::Issue => 'D',
        }
    }
}

/// Whether `head` (decompressed) starts with a blktrace event magic, in
/// either byte order.
pub fn is_blktrace(head: &[u8]) -> bool {
    head.len() >= 4 && {
        let m = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
        m & 0xffff_ff00 == MAGIC || m.swap_bytes() & 0xffff_ff00 == MAGIC
    }
}

/// Whether `head` (decompressed) is the start of a tar archive (POSIX ustar
/// or GNU magic at byte 257).
pub fn is_tar(head: &[u8]) -> bool {
    head.len() >= 262 && &head[257..262] == b"ustar"
}

/// Whether `name` is a per-CPU file name, `*.blktrace.N`.
pub(super) fn is_per_cpu(name: &str) -> bool {
    name.rsplit_once(".blktrace.")
        .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// CPU number of a per-CPU name, for ordering.
fn cpu_of(name: &str) -> u64 {
    name.rsplit_once(".blktrace.")
        .and_then(|(_, n)| n.parse().ok())
        .unwrap_or(u64::MAX)
}

/// The per-CPU files `BASE.blktrace.N` beside base name `base`, by CPU.
pub fn per_cpu_files(base: &str) -> Vec<String> {
    let p = Path::new(base);
    let Some(stem) = p.file_name().and_then(|s| s.to_str()) else {
        return Vec::new();
    };
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => Path::new(".").to_path_buf(),
    };
    let prefix = format!("{stem}.blktrace.");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<(u64, String)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let cpu = name.strip_prefix(&prefix)?;
            (!cpu.is_empty() && cpu.bytes().all(|b| b.is_ascii_digit()))
                .then(|| (cpu.parse().unwrap_or(u64::MAX), dir.join(&name)))
        })
        .filter_map(|(cpu, path)| Some((cpu, path.to_str()?.to_string())))
        .collect();
    files.sort();
    files.into_iter().map(|(_, f)| f).collect()
}

/// A per-CPU member of a tar archive.
pub struct Member {
    /// Name inside the archive.
    pub name: String,
    /// Start of its data in the (decompressed) archive [bytes].
    pub position: u64,
    /// Its length [bytes].
    pub size: u64,
}

/// The non-empty `*.blktrace.N` members of tar archive `path`, by CPU.
pub fn tar_members(path: &str) -> Result<Vec<Member>> {
    let bad = |e: std::io::Error| Error::trace(path, None, format!("bad tar archive: {e}"));
    let mut archive = tar::Archive::new(compress::open(path)?);
    let mut out = Vec::new();
    for entry in archive.entries().map_err(bad)? {
        let entry = entry.map_err(bad)?;
        if !entry.header().entry_type().is_file() || entry.size() == 0 {
            continue;
        }
        let full = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let name = full.rsplit('/').next().unwrap_or(&full);
        if is_per_cpu(name) {
            out.push(Member {
                name: full.clone(),
                position: entry.raw_file_position(),
                size: entry.size(),
            });
        }
    }
    out.sort_by_key(|m| (cpu_of(&m.name), m.name.clone()));
    Ok(out)
}

/// One decoded event.
#[derive(Clone, Copy, Debug)]
struct Event {
    time: u64,
    sector: u64,
    bytes: u32,
    action: u32,
    device: u32,
}

/// One input stream of events.
struct Stream {
    /// File (or `archive:member`) for messages.
    label: String,
    reader: Box<dyn BufRead + Send>,
    buf: [u8; EVENT],
    /// Bytes consumed so far.
    pos: u64,
    done: bool,
}

impl Stream {
    fn new(label: String, reader: Box<dyn BufRead + Send>) -> Self {
        Stream {
            label,
            reader,
            buf: [0; EVENT],
            pos: 0,
            done: false,
        }
    }

    /// The next event, `None` at the end; `Err(reason)` on bad data.
    fn next_event(&mut self) -> Result<Option<Event>, String> {
        let mut got = 0;
        while got < EVENT {
            match self.reader.read(&mut self.buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(format!(
                        "reading stopped at byte {}: {e} (truncated or corrupt file?)",
                        self.pos + got as u64
                    ))
                }
            }
        }
        if got == 0 {
            return Ok(None);
        }
        if got < EVENT {
            return Err(format!(
                "truncated event at byte {}: {got} of {EVENT} bytes",
                self.pos
            ));
        }
        let b = &self.buf;
        let raw = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let swap = if raw & 0xffff_ff00 == MAGIC {
            false
        } else if raw.swap_bytes() & 0xffff_ff00 == MAGIC {
            true
        } else {
            return Err(format!(
                "no blktrace magic at byte {} (found {raw:#010x}): not blktrace data, or corrupt",
                self.pos
            ));
        };
        let u32_at = |i: usize| {
            let v = u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
            if swap {
                v.swap_bytes()
            } else {
                v
            }
        };
        let u64_at = |i: usize| {
            let v = u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
            if swap {
                v.swap_bytes()
            } else {
                v
            }
        };
        let version = u32_at(0) & 0xff;
        if version != VERSION {
            return Err(format!(
                "blktrace version {version} at byte {} (wafer reads version {VERSION})",
                self.pos
            ));
        }
        let pdu = {
            let v = u16::from_le_bytes([b[46], b[47]]);
            if swap {
                v.swap_bytes()
            } else {
                v
            }
        };
        let event = Event {
            time: u64_at(8),
            sector: u64_at(16),
            bytes: u32_at(24),
            action: u32_at(28),
            device: u32_at(36),
        };
        self.pos += EVENT as u64;
        let mut left = pdu as usize;
        while left > 0 {
            let n = match self.reader.fill_buf() {
                Ok(avail) => avail.len().min(left),
                Err(e) => return Err(format!("reading stopped at byte {}: {e}", self.pos)),
            };
            if n == 0 {
                return Err(format!(
                    "truncated payload at byte {}: {left} of {pdu} bytes missing",
                    self.pos
                ));
            }
            self.reader.consume(n);
            left -= n;
            self.pos += n as u64;
        }
        Ok(Some(event))
    }
}

/// Records from binary blktrace input, merged by time across CPUs.
pub struct BlktraceRecords {
    path: String,
    streams: Vec<Stream>,
    /// Next kept record of each stream.
    heads: Vec<Option<Record>>,
    action: Action,
    skip_bad: bool,
    stats: ReadStats,
    /// Records returned so far.
    kept: u64,
    /// Error met reading ahead, returned after the record already taken.
    pending: Option<Error>,
    primed: bool,
    done: bool,
}

impl BlktraceRecords {
    /// Open `path` (a per-CPU file, a base name or a tar archive) keeping
    /// `action` events.
    pub fn open(path: &str, action: Action, skip_bad: bool) -> Result<Self> {
        let streams = if Path::new(path).is_file() {
            let head = head(path)?;
            if is_tar(&head) {
                let members = tar_members(path)?;
                if members.is_empty() {
                    return Err(Error::trace(
                        path,
                        None,
                        "tar archive without a non-empty NAME.blktrace.N member",
                    ));
                }
                members
                    .into_iter()
                    .map(|m| {
                        let r = compress::open_at(path, m.position, STREAM_BUFFER)?;
                        Ok(Stream::new(
                            format!("{path}:{}", m.name),
                            Box::new(r.take(m.size)),
                        ))
                    })
                    .collect::<Result<Vec<_>>>()?
            } else {
                vec![Stream::new(
                    path.to_string(),
                    compress::open_with(path, STREAM_BUFFER)?,
                )]
            }
        } else {
            let files = per_cpu_files(path);
            if files.is_empty() {
                return Err(Error::trace(
                    path,
                    None,
                    format!("cannot open: no such file, and no per-CPU files {path}.blktrace.N"),
                ));
            }
            files
                .into_iter()
                .map(|f| {
                    Ok(Stream::new(
                        f.clone(),
                        compress::open_with(&f, STREAM_BUFFER)?,
                    ))
                })
                .collect::<Result<Vec<_>>>()?
        };
        Ok(BlktraceRecords {
            path: path.to_string(),
            heads: vec![None; streams.len()],
            streams,
            action,
            skip_bad,
            stats: ReadStats::default(),
            kept: 0,
            pending: None,
            primed: false,
            done: false,
        })
    }

    /// Move stream `i` to its next kept record.
    fn advance(&mut self, i: usize) -> Result<()> {
        self.heads[i] = None;
        let s = &mut self.streams[i];
        while !s.done {
            let event = match s.next_event() {
                Ok(Some(e)) => e,
                Ok(None) => {
                    s.done = true;
                    break;
                }
                Err(reason) => {
                    s.done = true;
                    if self.skip_bad {
                        self.stats.truncated = true;
                        break;
                    }
                    return Err(Error::trace(&s.label, None, reason));
                }
            };
            self.stats.lines += 1;
            let category = event.action >> TC_SHIFT;
            if event.action & 0xffff != self.action.code()
                || category & (TC_NOTIFY | TC_PC) != 0
                || event.bytes == 0
            {
                continue;
            }
            let op = if category & TC_DISCARD != 0 {
                Op::Trim
            } else if category & TC_WRITE != 0 {
                Op::Write
            } else {
                Op::Read
            };
            let Some(offset) = event.sector.checked_mul(512) else {
                let reason = format!("sector {} x 512 overflows 64 bits", event.sector);
                if self.skip_bad {
                    self.stats.skipped_bad += 1;
                    continue;
                }
                return Err(Error::trace(&s.label, None, reason));
            };
            let (major, minor) = (
                event.device >> MINOR_BITS,
                event.device & ((1 << MINOR_BITS) - 1),
            );
            self.heads[i] = Some(Record {
                time_ns: event.time,
                device: (major as u64) << 32 | minor as u64,
                op,
                offset,
                size: event.bytes as u64,
            });
            break;
        }
        Ok(())
    }

    #[cold]
    fn end(&mut self) -> Result<Option<Record>> {
        self.done = true;
        if self.stats.lines == 0 || self.kept > 0 {
            return Ok(None);
        }
        Err(Error::trace(
            &self.path,
            None,
            format!(
                "{} blktrace events read, none is a '{}' event with data: traced with a filter \
                 (-a) that leaves them out? (blktrace:Q keeps queue events)",
                self.stats.lines,
                self.action.letter()
            ),
        ))
    }
}

impl RecordSource for BlktraceRecords {
    fn next_record(&mut self) -> Result<Option<Record>> {
        if let Some(e) = self.pending.take() {
            self.done = true;
            return Err(e);
        }
        if self.done {
            return Ok(None);
        }
        if !self.primed {
            self.primed = true;
            for i in 0..self.streams.len() {
                self.advance(i)?;
            }
        }
        let mut best: Option<(usize, u64)> = None;
        for (i, h) in self.heads.iter().enumerate() {
            if let Some(r) = h {
                if best.is_none_or(|(_, t)| r.time_ns < t) {
                    best = Some((i, r.time_ns));
                }
            }
        }
        let Some((i, _)) = best else {
            return self.end();
        };
        let r = self.heads[i].take().expect("chosen");
        self.kept += 1;
        if let Err(e) = self.advance(i) {
            self.pending = Some(e);
        }
        Ok(Some(r))
    }

    fn stats(&self) -> &ReadStats {
        &self.stats
    }
}

/// The first decompressed bytes of `path` (enough for the tar magic).
pub fn head(path: &str) -> Result<Vec<u8>> {
    let mut r = compress::open_with(path, 4096)?;
    let mut head = Vec::with_capacity(512);
    let mut chunk = [0u8; 512];
    while head.len() < 512 {
        match r.read(&mut chunk[..512 - head.len()]) {
            Ok(0) => break,
            Ok(n) => head.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::trace(path, None, format!("cannot read: {e}"))),
        }
    }
    Ok(head)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_magic() {
        assert!(is_per_cpu("sda.blktrace.0") && is_per_cpu("dir/x.blktrace.12"));
        assert!(!is_per_cpu("sda.blktrace.") && !is_per_cpu("sda.blktrace.0.txt"));
        assert!(is_blktrace(&0x6561_7407u32.to_le_bytes()));
        assert!(is_blktrace(&0x6561_7407u32.to_be_bytes()));
        assert!(!is_blktrace(b"8,0 "));
    }
}
