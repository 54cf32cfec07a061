//! `flashnet`: the 7-column replayed-trace profile of FlashNet (Kurniawan et
//! al., "FlashNet", and its public trace profiles, e.g. the Tencent and
//! Alibaba cuts): the output log of the I/O replayer, CSV, no header (a
//! header line naming these columns is accepted and skipped):
//!
//! `ts_record,latency,io_type,size,offset,ts_submit,size_after_replay`
//!
//! * ts_record: arrival time in the source trace [ms, decimal] (the record's
//!   time; coarse in Tencent cuts, whose source stamps whole seconds);
//! * latency: replayed latency [us], ignored;
//! * io_type: `1` = read, `0` = write (FlashNet's tail analyser: "io_type
//!   (r=1/w=0)");
//! * size: request size [bytes]; offset: [bytes];
//! * ts_submit: time the replayer submitted it [ms], ignored: lines are in
//!   completion order, so it goes back and forth;
//! * size_after_replay: bytes the replayer moved, ignored (FlashNet drops
//!   requests where it differs from `size`; wafer keeps them).
//!
//! Requests keep file order; the device id is 0. Columns past the seventh
//! (FlashNet's later `reject` label) are ignored.

use super::fields::{decimal, expect_fields, first, uint};
use super::{LineFormat, Record};
use crate::request::Op;

/// FlashNet's replayed-trace layout.
pub struct FlashNet;

const COLUMNS: [&str; 7] = [
    "ts_record",
    "latency",
    "io_type",
    "size",
    "offset",
    "ts_submit",
    "size_after_replay",
];

impl LineFormat for FlashNet {
    fn parse(&self, line: &str) -> Result<Option<Record>, String> {
        let (f, n) = first::<7>(line.split(','));
        expect_fields(
            n,
            7,
            "ts_record,latency,io_type,size,offset,ts_submit,size_after_replay",
        )?;
        if f[0].trim() == COLUMNS[0] {
            return if f.iter().zip(COLUMNS).all(|(a, b)| a.trim() == b) {
                Ok(None)
            } else {
                Err(format!(
                    "header '{line}' is not FlashNet's column order ({}); use --format csv:...",
                    COLUMNS.join(",")
                ))
            };
        }
        let op = match f[2].trim() {
            "1" => Op::Read,
            "0" => Op::Write,
            t => return Err(format!("io_type '{t}' is neither 1 (read) nor 0 (write)")),
        };
        Ok(Some(Record {
            time_ns: decimal(f[0], 6, "ts_record")?,
            device: 0,
            op,
            size: uint(f[3], "size")?,
            offset: uint(f[4], "offset")?,
        }))
    }

    fn looks_like(&self, line: &str) -> bool {
        let (f, n) = first::<7>(line.split(','));
        let number = |s: &str| {
            let s = s.trim();
            !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        };
        n >= 7
            && (f[0].trim() == COLUMNS[0]
                || (f.iter().all(|s| number(s)) && matches!(f[2].trim(), "0" | "1")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_units_and_header() {
        let r = FlashNet
            .parse("1000.000,1075,1,4096,282624,1000.070,4096")
            .unwrap()
            .unwrap();
        assert_eq!(
            r,
            Record {
                time_ns: 1_000_000_000,
                device: 0,
                op: Op::Read,
                offset: 282624,
                size: 4096
            }
        );
        let header = "ts_record,latency,io_type,size,offset,ts_submit,size_after_replay";
        assert_eq!(FlashNet.parse(header), Ok(None));
        assert!(FlashNet.looks_like(header));
        assert!(FlashNet
            .parse("ts_record,io_type,size,offset,ts_submit,size_after_replay,latency")
            .unwrap_err()
            .contains("column order"));
        assert!(FlashNet
            .parse("0.000,45,2,4096,0,0.6,4096")
            .unwrap_err()
            .contains("io_type"));
    }
}
