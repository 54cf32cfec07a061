//! `fiu`: FIU IODedup traces (SNIA IOTTA #391, Koller & Rangaswami,
//! "I/O Deduplication", FAST'10), space-separated, no header:
//!
//! `ts pid process lba nsectors R/W major minor md5`
//!
//! * ts: nanoseconds;
//! * pid, process: issuing process, ignored;
//! * lba: 512-byte sectors; nsectors: request size in 512-byte sectors;
//! * R/W: `R` = read, `W` = write;
//! * major, minor: the device (record device id = major << 32 | minor);
//! * md5: content hash of the request, ignored.

use super::fields::{expect_fields, first, mul, uint};
use super::{LineFormat, Record};
use crate::request::Op;

/// The FIU IODedup layout.
pub struct Fiu;

impl LineFormat for Fiu {
    fn parse(&self, line: &str) -> Result<Option<Record>, String> {
        let (f, n) = first::<8>(line.split_ascii_whitespace());
        expect_fields(n, 8, "ts pid process lba nsectors R/W major minor md5")?;
        let op = match f[5] {
            "W" | "w" => Op::Write,
            "R" | "r" => Op::Read,
            t => return Err(format!("operation '{t}' is neither R nor W")),
        };
        let major = uint(f[6], "major")?;
        let minor = uint(f[7], "minor")?;
        if major > u32::MAX as u64 || minor > u32::MAX as u64 {
            return Err("device major/minor beyond 32 bits".into());
        }
        Ok(Some(Record {
            time_ns: uint(f[0], "timestamp")?,
            offset: mul(uint(f[3], "lba")?, 512, "lba")?,
            size: mul(uint(f[4], "nsectors")?, 512, "nsectors")?,
            op,
            device: major << 32 | minor,
        }))
    }

    fn looks_like(&self, line: &str) -> bool {
        let f: Vec<&str> = line.split_ascii_whitespace().collect();
        f.len() >= 8 && matches!(f[5], "R" | "W" | "r" | "w")
    }
}
