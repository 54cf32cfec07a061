//! `hpsrt`: HP Labs' SRT binary traces (the 1992 HP-UX disk traces, Ruemmler
//! and Wilkes), as DiskSim reads them with its `hpl` / `hpl2` trace format
//! (`src/disksim_iotrace.c`, `iotrace_hpl_get_ioreq_event`; the record in
//! `src/disksim_hptrace.h`).
//!
//! The file opens with a text header (`$$TR_IOREC-1.3 ...`, the traced
//! machine and its disks) ended by a form feed (0x0C); DiskSim's `hpl2`
//! files have none. Then big-endian 32-bit records, each sized by its first
//! word:
//!
//! | bytes | field | meaning |
//! |---|---|---|
//! | 0..4 | size | record length: 52, + 4 for version 4, + 4 for type 4 |
//! | 4..8 | id | `version << 16 \| type`; version 1..=4; type 1 (an I/O) kept, type 4 (a suspect I/O) skipped and counted, others refused |
//! | 8..16 | sec, usec | time from the trace's start |
//! | 16..24 | start, stop | queueing times, unused |
//! | 24..28 | size | request length [bytes] |
//! | 28..32 | sectno | start sector on the disk |
//! | 32..36 | devno | `major << 24 \| disk << 8 \| section`; the record's device is the disk, `(devno >> 8) & 0xff`, as DiskSim numbers it |
//! | 36..44 | driver type, cylinder | unused |
//! | 44..48 | flags | bit 0: read, else write |
//!
//! **The sector unit.** The header gives each disk's `sectorsize`: 256 bytes
//! for the HP 335H disks of the shipped `ajw.1week.srt` (and the data agree:
//! every record's cylinder is its sector / (113 sectors x 8 heads), and the
//! highest sector fits the 335 MB disk only in 256-byte sectors). `hpsrt`
//! reads offsets in the header's unit (512 bytes without a header);
//! `hpsrt:512` reads them as 512-byte sectors, as DiskSim does (it takes
//! `sectno` as its block number unless an `iomap` scales it), for parity
//! with DiskSim's numbers.

use std::io::{BufRead, Read};

use super::compress;
use super::{ReadStats, Record, RecordSource};
use crate::error::{Error, Result};
use crate::request::Op;

/// The header's first bytes.
const MAGIC: &[u8] = b"$$TR_IOREC";
/// The byte that ends the header.
const FORM_FEED: u8 = 0x0c;
/// Record type of an I/O request.
const SHORTIO: u32 = 1;
/// Record type of a suspect I/O request (skipped, as DiskSim skips it).
const SUSPECTIO: u32 = 4;
/// Bytes of a record up to and including its flags.
const BASE: usize = 52;
/// Longest header read before the form feed must have come [bytes].
const MAX_HEADER: usize = 1 << 20;

/// How `hpsrt` reads sector numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SectorUnit {
    /// The header's `sectorsize` (512 bytes without a header).
    Header,
    /// 512-byte sectors, as DiskSim reads them.
    Disksim,
}

/// The record length a record's id implies, or why the id is not one.
fn record_len(id: u32) -> std::result::Result<usize, String> {
    let (version, kind) = (id >> 16, id & 0xffff);
    if !(1..=4).contains(&version) {
        return Err(format!("record version {version} is not 1..=4"));
    }
    if kind != SHORTIO && kind != SUSPECTIO {
        return Err(format!(
            "record type {kind} is neither 1 (I/O) nor 4 (suspect I/O)"
        ));
    }
    Ok(BASE + 4 * usize::from(version == 4) + 4 * usize::from(kind == SUSPECTIO))
}

fn be(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// Whether `head` (decompressed) is an HP SRT trace: its header's magic
/// followed, after the form feed, by a valid record; or (no header) four
/// valid records in a row.
pub fn is_hpsrt(head: &[u8]) -> bool {
    let valid = |b: &[u8], n: usize| {
        let mut at = 0;
        for _ in 0..n {
            if b.len() < at + 8 {
                return false;
            }
            match record_len(be(b, at + 4)) {
                Ok(len) if be(b, at) as usize == len => at += len,
                _ => return false,
            }
        }
        true
    };
    if head.starts_with(MAGIC) {
        return match head.iter().position(|&c| c == FORM_FEED) {
            Some(ff) => valid(&head[ff + 1..], 1),
            // a header longer than the head read: the magic decides
            None => true,
        };
    }
    valid(head, 4)
}

/// The disks' sector sizes the header states (`sectorsize = N;`), in order.
fn sector_sizes(header: &str) -> Vec<u64> {
    header
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == "sectorsize")
                .then(|| v.trim().trim_end_matches([',', ';']).trim().parse().ok())
                .flatten()
        })
        .collect()
}

/// Records of an HP SRT trace.
pub struct HpSrtRecords {
    path: String,
    input: Box<dyn BufRead + Send>,
    sector: u64,
    skip_bad: bool,
    stats: ReadStats,
    buf: Vec<u8>,
    ended: bool,
}

impl HpSrtRecords {
    /// Open `path` (optionally compressed), reading sectors in `unit`.
    pub fn open(path: &str, unit: SectorUnit, skip_bad: bool) -> Result<Self> {
        let mut input = compress::open(path)?;
        let fail = |why: String| Error::trace(path, None, why);
        let head = input
            .fill_buf()
            .map_err(|e| fail(format!("cannot read: {e}")))?;
        let mut sector = 512;
        if head.starts_with(MAGIC) {
            let mut header = Vec::new();
            loop {
                let mut byte = [0u8];
                match input.read(&mut byte) {
                    Ok(1) if byte[0] == FORM_FEED => break,
                    Ok(1) if header.len() < MAX_HEADER => header.push(byte[0]),
                    Ok(1) => {
                        return Err(fail(format!(
                            "no end (form feed) of the header in its first {MAX_HEADER} bytes"
                        )))
                    }
                    Ok(_) => {
                        return Err(fail("the header has no end (form feed): no records".into()))
                    }
                    Err(e) => return Err(fail(format!("cannot read the header: {e}"))),
                }
            }
            let sizes = sector_sizes(&String::from_utf8_lossy(&header));
            if unit == SectorUnit::Header {
                match sizes.first() {
                    None => {}
                    Some(&s) if sizes.iter().all(|&x| x == s) => {
                        if !(s.is_power_of_two() && (128..=65536).contains(&s)) {
                            return Err(fail(format!(
                                "the header's sectorsize {s} is not a power of two from 128 to 65536 \
                                 bytes; give --format hpsrt:512 to read 512-byte sectors"
                            )));
                        }
                        sector = s;
                    }
                    Some(_) => {
                        return Err(fail(format!(
                            "the header's disks have different sector sizes ({sizes:?}); \
                             give --format hpsrt:512 to read every sector number as 512 bytes"
                        )))
                    }
                }
            }
        }
        Ok(HpSrtRecords {
            path: path.to_string(),
            input,
            sector,
            skip_bad,
            stats: ReadStats::default(),
            buf: vec![0; BASE + 8],
            ended: false,
        })
    }

    /// Read exactly `buf.len()` bytes: `Ok(false)` at a clean end (none
    /// read), an error when the end cuts a record.
    fn read_exact_or_end(&mut self, from: usize, to: usize) -> Result<bool> {
        let mut at = from;
        while at < to {
            match self.input.read(&mut self.buf[at..to]) {
                Ok(0) if at == 0 => return Ok(false),
                Ok(0) => {
                    return Err(self.bad(format!(
                        "the file ends inside a record ({at} of {to} bytes)"
                    )))
                }
                Ok(n) => at += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.bad(format!("cannot read: {e}"))),
            }
        }
        Ok(true)
    }

    fn bad(&self, why: String) -> Error {
        Error::trace(
            &self.path,
            Some(self.stats.lines + 1),
            format!("record {}: {why}", self.stats.lines + 1),
        )
    }
}

impl RecordSource for HpSrtRecords {
    fn next_record(&mut self) -> Result<Option<Record>> {
        loop {
            if self.ended {
                return Ok(None);
            }
            let next = self.read_exact_or_end(0, 8).and_then(|more| {
                if !more {
                    return Ok(None);
                }
                let (size, id) = (be(&self.buf, 0) as usize, be(&self.buf, 4));
                let len = record_len(id).map_err(|e| self.bad(e))?;
                if size != len {
                    return Err(self.bad(format!(
                        "length {size} does not match its type's {len} bytes"
                    )));
                }
                if !self.read_exact_or_end(8, len)? {
                    unreachable!("8 bytes were read");
                }
                Ok(Some(id & 0xffff))
            });
            let kind = match next {
                Ok(Some(k)) => k,
                Ok(None) => {
                    self.ended = true;
                    return Ok(None);
                }
                // A record stream cannot resync after a bad length: stop
                // there (reported as truncated under skip_bad).
                Err(e) if self.skip_bad => {
                    self.stats.skipped_bad += 1;
                    self.stats.truncated = true;
                    self.ended = true;
                    let _ = e;
                    return Ok(None);
                }
                Err(e) => return Err(e),
            };
            self.stats.lines += 1;
            if kind == SUSPECTIO {
                self.stats.unkept_events += 1;
                continue;
            }
            let b = &self.buf;
            let time_ns = be(b, 8) as u64 * 1_000_000_000 + be(b, 12) as u64 * 1_000;
            let flags = be(b, 44);
            return Ok(Some(Record {
                time_ns,
                device: ((be(b, 32) >> 8) & 0xff) as u64,
                op: if flags & 1 == 1 { Op::Read } else { Op::Write },
                offset: be(b, 28) as u64 * self.sector,
                size: be(b, 24) as u64,
            }));
        }
    }

    fn stats(&self) -> &ReadStats {
        &self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A version-1 I/O record.
    fn record(sec: u32, usec: u32, bytes: u32, sectno: u32, disk: u32, read: bool) -> Vec<u8> {
        let mut v = Vec::new();
        for w in [
            52,
            (1 << 16) | SHORTIO,
            sec,
            usec,
            0,
            0,
            bytes,
            sectno,
            (8 << 24) | (disk << 8) | 14,
            0,
            0,
            u32::from(read),
            0,
        ] {
            v.extend_from_slice(&u32::to_be_bytes(w));
        }
        v
    }

    /// A trace file named `name` with `header` (and its form feed) and
    /// `records`.
    fn file(name: &str, header: &str, records: &[Vec<u8>]) -> String {
        let dir = std::env::temp_dir().join(format!("wafer-hpsrt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        let mut b = header.as_bytes().to_vec();
        if !header.is_empty() {
            b.push(FORM_FEED);
        }
        for r in records {
            b.extend_from_slice(r);
        }
        std::fs::write(&p, b).unwrap();
        p.display().to_string()
    }

    fn read_all(path: &str, unit: SectorUnit) -> Result<Vec<Record>> {
        let mut r = HpSrtRecords::open(path, unit, false)?;
        let mut out = Vec::new();
        while let Some(x) = r.next_record()? {
            out.push(x);
        }
        Ok(out)
    }

    const HEADER: &str = "$$TR_IOREC-1.3\ndisks = {\n 0 -> {\n  sectorsize  = 256,\n }\n};\n";

    #[test]
    fn records_read_in_the_headers_sector_unit_or_disksims() {
        let recs = [
            record(0, 0, 4096, 1056, 1, true),
            record(30, 183_968, 8192, 10, 0, false),
        ];
        let p = file("t1.srt", HEADER, &recs);
        let head = std::fs::read(&p).unwrap();
        assert!(is_hpsrt(&head));
        let r = read_all(&p, SectorUnit::Header).unwrap();
        assert_eq!(
            r[0],
            Record {
                time_ns: 0,
                device: 1,
                op: Op::Read,
                offset: 1056 * 256,
                size: 4096
            }
        );
        assert_eq!(
            r[1],
            Record {
                time_ns: 30_183_968_000,
                device: 0,
                op: Op::Write,
                offset: 2560,
                size: 8192
            }
        );
        assert_eq!(
            read_all(&p, SectorUnit::Disksim).unwrap()[0].offset,
            1056 * 512
        );
        // Without a header (DiskSim's hpl2): 512-byte sectors, detected by
        // four valid records in a row.
        let p = file(
            "t2.srt",
            "",
            &[
                recs[0].clone(),
                recs[1].clone(),
                recs[0].clone(),
                recs[1].clone(),
            ],
        );
        assert!(is_hpsrt(&std::fs::read(&p).unwrap()));
        assert_eq!(
            read_all(&p, SectorUnit::Header).unwrap()[0].offset,
            1056 * 512
        );
        assert!(!is_hpsrt(b"1,2,3,4,5\n6,7,8,9,10\n"));
    }

    #[test]
    fn a_suspect_record_is_skipped_and_a_bad_one_named() {
        let mut suspect = record(1, 0, 512, 1, 0, false);
        suspect[0..4].copy_from_slice(&56u32.to_be_bytes());
        suspect[4..8].copy_from_slice(&((1u32 << 16) | SUSPECTIO).to_be_bytes());
        suspect.extend_from_slice(&[0; 4]);
        let p = file("t3.srt", HEADER, &[suspect, record(2, 0, 512, 1, 0, false)]);
        let mut r = HpSrtRecords::open(&p, SectorUnit::Header, false).unwrap();
        assert_eq!(r.next_record().unwrap().unwrap().time_ns, 2_000_000_000);
        assert_eq!((r.stats().lines, r.stats().unkept_events), (2, 1));

        let mut bad = record(1, 0, 512, 1, 0, false);
        bad[4..8].copy_from_slice(&((1u32 << 16) | 9).to_be_bytes());
        let p = file("t4.srt", HEADER, &[record(0, 0, 512, 1, 0, false), bad]);
        let e = read_all(&p, SectorUnit::Header).unwrap_err().to_string();
        assert!(e.contains("record 2: record type 9"), "{e}");
        let mut r = HpSrtRecords::open(&p, SectorUnit::Header, true).unwrap();
        assert!(r.next_record().unwrap().is_some());
        assert!(r.next_record().unwrap().is_none());
        assert!(r.stats().truncated && r.stats().skipped_bad == 1);

        let mut cut = record(0, 0, 512, 1, 0, false);
        cut.truncate(30);
        let p = file("t5.srt", HEADER, &[cut]);
        let e = read_all(&p, SectorUnit::Header).unwrap_err().to_string();
        assert!(e.contains("ends inside a record"), "{e}");

        let two = "$$TR_IOREC\nsectorsize = 256;\nsectorsize = 512;\n";
        let p = file("t6.srt", two, &[record(0, 0, 512, 1, 0, false)]);
        let e = HpSrtRecords::open(&p, SectorUnit::Header, false)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("hpsrt:512"), "{e}");
        assert!(HpSrtRecords::open(&p, SectorUnit::Disksim, false).is_ok());

        let odd = "$$TR_IOREC\nsectorsize = 1000;\n";
        let p = file("t7.srt", odd, &[record(0, 0, 512, 1, 0, false)]);
        let e = HpSrtRecords::open(&p, SectorUnit::Header, false)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("not a power of two"), "{e}");
    }
}
