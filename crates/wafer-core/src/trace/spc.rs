//! `spc`: SPC-1 format of the UMass Trace Repository (OLTP "Financial" and
//! "WebSearch" traces; SNIA/Storage Performance Council trace spec), CSV
//! without header:
//!
//! `ASU,LBA,Size,Opcode,Timestamp[,...]`
//!
//! * ASU: application storage unit (the record's device);
//! * LBA: 512-byte sectors; Size: bytes;
//! * Opcode: `r`/`R` = read, `w`/`W` = write;
//! * Timestamp: seconds since the trace start, decimal (kept to the ns).
//!
//! Fields past the fifth (some releases add one) are ignored.

use super::fields::{decimal, expect_fields, first, mul, uint};
use super::{LineFormat, Record};
use crate::request::Op;

/// The SPC CSV layout.
pub struct Spc;

impl LineFormat for Spc {
    fn parse(&self, line: &str) -> Result<Option<Record>, String> {
        let (f, n) = first::<5>(line.split(','));
        expect_fields(n, 5, "ASU,LBA,Size,Opcode,Timestamp")?;
        let op = match f[3].trim() {
            "w" | "W" => Op::Write,
            "r" | "R" => Op::Read,
            t => return Err(format!("opcode '{t}' is neither r nor w")),
        };
        Ok(Some(Record {
            device: uint(f[0], "ASU")?,
            offset: mul(uint(f[1], "LBA")?, 512, "LBA")?,
            size: uint(f[2], "size")?,
            op,
            time_ns: decimal(f[4], 9, "timestamp")?,
        }))
    }

    fn looks_like(&self, line: &str) -> bool {
        let f: Vec<&str> = line.split(',').collect();
        f.len() >= 5 && matches!(f[3].trim(), "r" | "w" | "R" | "W") && f[4].contains('.')
    }
}
