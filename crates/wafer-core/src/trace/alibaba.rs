//! `alibaba`: Alibaba Cloud block traces (2020 release, Li et al., "An
//! in-depth analysis of cloud block storage workloads in large-scale
//! production", IISWC'20), CSV without header:
//!
//! `device_id,opcode,offset,length,timestamp`
//!
//! * device_id: virtual disk id (the record's device);
//! * opcode: `R` or `W`;
//! * offset, length: bytes;
//! * timestamp: microseconds (Unix epoch).

use super::fields::{expect_fields, first, mul, uint};
use super::{LineFormat, Record};
use crate::request::Op;

/// The Alibaba Cloud CSV layout.
pub struct Alibaba;

impl LineFormat for Alibaba {
    fn parse(&self, line: &str) -> Result<Option<Record>, String> {
        let (f, n) = first::<5>(line.split(','));
        expect_fields(n, 5, "device_id,opcode,offset,length,timestamp")?;
        let op = match f[1].trim() {
            "W" | "w" => Op::Write,
            "R" | "r" => Op::Read,
            t => return Err(format!("opcode '{t}' is neither R nor W")),
        };
        Ok(Some(Record {
            device: uint(f[0], "device_id")?,
            op,
            offset: uint(f[2], "offset")?,
            size: uint(f[3], "length")?,
            time_ns: mul(uint(f[4], "timestamp")?, 1_000, "timestamp")?,
        }))
    }

    fn looks_like(&self, line: &str) -> bool {
        let f: Vec<&str> = line.split(',').collect();
        f.len() == 5 && matches!(f[1].trim(), "R" | "W" | "r" | "w")
    }
}
