//! `tencent`: Tencent Cloud Block Storage traces (SNIA IOTTA #27917, Zhang et
//! al., "OSCA", ATC'20), CSV without header:
//!
//! `Timestamp,Offset,Size,IOType,VolumeID`
//!
//! * Timestamp: seconds (Unix epoch);
//! * Offset, Size: 512-byte sectors;
//! * IOType: `0` = read, `1` = write;
//! * VolumeID: the record's device.

use super::fields::{expect_fields, first, mul, uint};
use super::{LineFormat, Record};
use crate::request::Op;

/// The Tencent CBS CSV layout.
pub struct Tencent;

impl LineFormat for Tencent {
    fn parse(&self, line: &str) -> Result<Option<Record>, String> {
        let (f, n) = first::<5>(line.split(','));
        expect_fields(n, 5, "Timestamp,Offset,Size,IOType,VolumeID")?;
        let op = match f[3].trim() {
            "1" => Op::Write,
            "0" => Op::Read,
            t => return Err(format!("IOType '{t}' is neither 0 (read) nor 1 (write)")),
        };
        Ok(Some(Record {
            time_ns: mul(uint(f[0], "timestamp")?, 1_000_000_000, "timestamp")?,
            offset: mul(uint(f[1], "offset")?, 512, "offset")?,
            size: mul(uint(f[2], "size")?, 512, "size")?,
            op,
            device: uint(f[4], "volume id")?,
        }))
    }

    fn looks_like(&self, line: &str) -> bool {
        let f: Vec<&str> = line.split(',').collect();
        f.len() == 5
            && matches!(f[3].trim(), "0" | "1")
            && f.iter()
                .all(|x| x.trim().bytes().all(|b| b.is_ascii_digit()))
    }
}
