//! `midas`: MiDAS-Simulation's input (`sungkyun123/MiDAS-Simulation`,
//! `ssdsimul.cpp`; the layout the MiDAS README documents), whitespace
//! separated, no header:
//!
//! `time type lba size`
//!
//! * time: seconds (decimal);
//! * type: `0` read, `1` write, `3` trim; `2` is unused by the simulator
//!   (skipped, counted as events not kept);
//! * lba: 4 KiB pages; size: bytes. The simulator reads `size / 4096`
//!   whole pages (a partial page is dropped, a request under 4 KiB does
//!   nothing): wafer reads the same pages, so a 8,182-byte request is one
//!   page and one under 4 KiB counts as zero-size;
//! * a line `LOAD_END` marks the end of the load phase (the simulator counts
//!   the writes after it apart); it carries no request. Extra fields are
//!   ignored, as the simulator ignores them.

use std::sync::atomic::{AtomicU64, Ordering};

use super::fields::{decimal, first, mul, uint};
use super::{LineFormat, LoadEnd, Record};
use crate::request::Op;

/// The simulator's page [bytes].
const PAGE: u64 = 4096;

/// MiDAS-Simulation's input layout.
#[derive(Default)]
pub struct Midas {
    /// Type-2 lines seen.
    unused: AtomicU64,
    /// Requests read, and the bytes they wrote.
    requests: AtomicU64,
    write_bytes: AtomicU64,
    /// Requests before the first `LOAD_END` + 1 (0: none yet), and their
    /// bytes written.
    marker: AtomicU64,
    marker_bytes: AtomicU64,
}

const LAYOUT: &str = "time_s type(0 r/1 w/3 trim) lba(4KiB) size_B";

impl LineFormat for Midas {
    fn parse(&self, line: &str) -> Result<Option<Record>, String> {
        if line.trim() == "LOAD_END" {
            if self.marker.load(Ordering::Relaxed) == 0 {
                let (r, b) = (
                    self.requests.load(Ordering::Relaxed),
                    self.write_bytes.load(Ordering::Relaxed),
                );
                self.marker_bytes.store(b, Ordering::Relaxed);
                self.marker.store(r + 1, Ordering::Relaxed);
            }
            return Ok(None);
        }
        let (f, n) = first::<4>(line.split_ascii_whitespace());
        if n < 4 {
            return Err(format!("{n} fields; expected at least 4: {LAYOUT}"));
        }
        let op = match f[1] {
            "0" => Op::Read,
            "1" => Op::Write,
            "3" => Op::Trim,
            "2" => {
                self.unused.fetch_add(1, Ordering::Relaxed);
                return Ok(None);
            }
            t => {
                return Err(format!(
                    "type '{t}' is none of 0 (read), 1 (write), 2 (unused), 3 (trim)"
                ))
            }
        };
        let r = Record {
            time_ns: decimal(f[0], 9, "time")?,
            device: 0,
            op,
            offset: mul(uint(f[2], "lba")?, PAGE, "lba")?,
            size: uint(f[3], "size")? / PAGE * PAGE,
        };
        self.requests.fetch_add(1, Ordering::Relaxed);
        if op == Op::Write {
            self.write_bytes.fetch_add(r.size, Ordering::Relaxed);
        }
        Ok(Some(r))
    }

    fn looks_like(&self, line: &str) -> bool {
        if line.trim() == "LOAD_END" {
            return true;
        }
        let (f, n) = first::<5>(line.split_ascii_whitespace());
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        n == 4
            && !f[0].is_empty()
            && f[0].bytes().all(|b| b.is_ascii_digit() || b == b'.')
            && matches!(f[1], "0" | "1" | "2" | "3")
            && digits(f[2])
            && digits(f[3])
    }

    fn unkept_events(&self) -> u64 {
        self.unused.load(Ordering::Relaxed)
    }

    fn load_end(&self) -> Option<LoadEnd> {
        let m = self.marker.load(Ordering::Relaxed);
        (m > 0).then(|| LoadEnd {
            requests: m - 1,
            write_bytes: self.marker_bytes.load(Ordering::Relaxed),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_seconds_and_the_simulators_whole_pages() {
        let m = Midas::default();
        let r = m.parse("0.000003 1 4 4096 ").unwrap().unwrap();
        assert_eq!(
            r,
            Record {
                time_ns: 3_000,
                device: 0,
                op: Op::Write,
                offset: 16384,
                size: 4096
            }
        );
        assert_eq!(
            m.parse("0.0000945 0 5 8182").unwrap().unwrap().size,
            4096,
            "a partial page is dropped"
        );
        assert_eq!(
            m.parse("1 0 5 100").unwrap().unwrap().size,
            0,
            "under a page: nothing (zero-size)"
        );
        assert_eq!(m.parse("2 3 7 8192").unwrap().unwrap().op, Op::Trim);
        assert_eq!(m.load_end(), None);
        assert_eq!(m.parse("LOAD_END").unwrap(), None);
        // Four requests before it: one write of a page, two reads, a trim (which writes nothing).
        assert_eq!(
            m.load_end(),
            Some(LoadEnd {
                requests: 4,
                write_bytes: 4096
            })
        );
        m.parse("3 1 9 4096").unwrap();
        m.parse("LOAD_END").unwrap();
        assert_eq!(m.load_end().unwrap().requests, 4, "the first marker counts");
        assert_eq!(m.parse("2 2 7 8192").unwrap(), None);
        assert_eq!(m.unkept_events(), 1);
        assert!(m.parse("2 5 7 8192").unwrap_err().contains("type '5'"));
        assert!(m.parse("2 1 7").unwrap_err().contains("at least 4"));
        assert!(m.looks_like("0.000003 1 4 4096 ") && m.looks_like("LOAD_END"));
        assert!(
            !m.looks_like("0.000003 1 4 4096 1"),
            "five fields are another layout"
        );
    }
}
