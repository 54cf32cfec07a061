//! `msr`: MSR Cambridge block traces (SNIA IOTTA #388, Narayanan et al.,
//! "Write off-loading", FAST'08), one CSV line per request, no header:
//!
//! `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`
//!
//! * Timestamp: Windows FILETIME, 100 ns ticks since 1601-01-01;
//! * Hostname: server name (e.g. `hm`); ignored, one file holds one server;
//! * DiskNumber: volume number on that server: the record's device id;
//! * Type: `Read` or `Write` (case-insensitive);
//! * Offset, Size: bytes; ResponseTime: 100 ns ticks, ignored.

use super::fields::{expect_fields, first, mul, uint};
use super::{LineFormat, Record};
use crate::request::Op;

/// The MSR Cambridge CSV layout.
pub struct Msr;

impl LineFormat for Msr {
    fn parse(&self, line: &str) -> Result<Option<Record>, String> {
        let (f, n) = first::<7>(line.split(','));
        expect_fields(
            n,
            7,
            "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime",
        )?;
        let op = match f[3].trim() {
            t if t.eq_ignore_ascii_case("write") => Op::Write,
            t if t.eq_ignore_ascii_case("read") => Op::Read,
            t => return Err(format!("type '{t}' is neither Read nor Write")),
        };
        Ok(Some(Record {
            time_ns: mul(uint(f[0], "timestamp")?, 100, "timestamp")?,
            device: uint(f[2], "disk number")?,
            op,
            offset: uint(f[4], "offset")?,
            size: uint(f[5], "size")?,
        }))
    }

    fn looks_like(&self, line: &str) -> bool {
        let f: Vec<&str> = line.split(',').collect();
        f.len() == 7 && matches!(f[3].to_ascii_lowercase().as_str(), "read" | "write")
    }
}
