//! `msr-cut`: the MSR-style cut that I/O replayers read (the input of
//! Huaicheng Li's `replayer`, used by LinnOS and FlashNet; its README lists
//! the columns), whitespace-separated, no header:
//!
//! `ts dev offset size type`
//!
//! * ts: milliseconds since the trace start, integer or decimal (`3.410`);
//! * dev: disk id (the record's device);
//! * offset, size: bytes (not sectors: read as DiskSim's sectors they would
//!   make a 512x larger device);
//! * type: `1` = read, `0` = write.

use super::fields::{decimal, expect_fields, first, uint};
use super::{LineFormat, Record};
use crate::request::Op;

/// The MSR-style replayer cut.
pub struct MsrCut;

const LAYOUT: &str = "ts_ms dev offset_B size_B type";

impl LineFormat for MsrCut {
    fn parse(&self, line: &str) -> Result<Option<Record>, String> {
        let (f, n) = first::<5>(line.split_ascii_whitespace());
        expect_fields(n, 5, LAYOUT)?;
        let op = match f[4] {
            "1" => Op::Read,
            "0" => Op::Write,
            t => return Err(format!("type '{t}' is neither 1 (read) nor 0 (write)")),
        };
        Ok(Some(Record {
            time_ns: decimal(f[0], 6, "timestamp")?,
            device: uint(f[1], "dev")?,
            offset: uint(f[2], "offset")?,
            size: uint(f[3], "size")?,
            op,
        }))
    }

    fn looks_like(&self, line: &str) -> bool {
        let (f, n) = first::<5>(line.split_ascii_whitespace());
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        n == 5
            && !f[0].is_empty()
            && f[0].bytes().all(|b| b.is_ascii_digit() || b == b'.')
            && f[1..4].iter().all(|s| digits(s))
            && matches!(f[4], "0" | "1")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_and_milliseconds() {
        let r = MsrCut.parse("3.410 0 4923392 4096 1").unwrap().unwrap();
        assert_eq!(
            r,
            Record {
                time_ns: 3_410_000,
                device: 0,
                op: Op::Read,
                offset: 4923392,
                size: 4096
            }
        );
        assert_eq!(MsrCut.parse("7 2 0 512 0").unwrap().unwrap().op, Op::Write);
        assert!(MsrCut.parse("7 2 0 512 2").unwrap_err().contains("neither"));
        assert!(MsrCut.looks_like("0.000 0 4923392 4096 1"));
        assert!(!MsrCut.looks_like("0.000,0,4923392,4096,1"));
    }
}
