//! `wiscsee`: the event files WiscSee replays (He et al., "The Unwritten
//! Contract of Solid State Drives", EuroSys'17; github junhe/wiscsee,
//! `blkparse-events-for-ftlsim.txt`), made from blkparse output,
//! space-separated, no header, in one of two layouts:
//!
//! * `pid action operation offset size timestamp pre_wait_time sync`
//!   (current WiscSee, `event_file_column_names` in its `config.py`);
//! * `pid operation offset size timestamp pre_wait_time [sync]` (earlier
//!   versions).
//!
//! Columns:
//! * pid: issuing process, ignored;
//! * action: the blktrace action, `D` (issued) or `C` (completed, traced
//!   with `trace_issue_and_complete`): only `D` lines are requests. Files
//!   of the earlier layout hold issue events only (WiscSee traces with
//!   `blktrace -a issue`);
//! * operation: `read`, `write` or `discard` (a trim);
//! * offset, size: bytes (sectors x 512, minus WiscSee's partition padding;
//!   a negative offset is a malformed line);
//! * timestamp: seconds since tracing began, decimal (blkparse's clock);
//! * pre_wait_time: seconds since the previous event (or `NA`), ignored;
//! * sync: `True`/`False`, ignored.
//!
//! The record's device id is 0.

use super::fields::{decimal, first, uint};
use super::{LineFormat, Record};
use crate::request::Op;

/// WiscSee event files.
pub struct WiscSee;

const LAYOUT: &str = "pid [action] operation offset size timestamp pre_wait_time [sync]";

fn operation(s: &str) -> Option<Op> {
    match s {
        "read" => Some(Op::Read),
        "write" => Some(Op::Write),
        "discard" => Some(Op::Trim),
        _ => None,
    }
}

/// Index of the operation column: 1 (earlier layout) or 2 (with action).
fn op_column(f: &[&str; 8]) -> Option<usize> {
    if operation(f[1]).is_some() {
        Some(1)
    } else if operation(f[2]).is_some() && !f[1].is_empty() && f[1].len() <= 2 {
        Some(2)
    } else {
        None
    }
}

impl LineFormat for WiscSee {
    fn parse(&self, line: &str) -> Result<Option<Record>, String> {
        let (f, n) = first::<8>(line.split_ascii_whitespace());
        let Some(k) = op_column(&f) else {
            return Err(format!(
                "expected '{LAYOUT}' with operation read, write or discard"
            ));
        };
        if n < k + 4 {
            return Err(format!("expected '{LAYOUT}', found {n} fields"));
        }
        if k == 2 && f[1] != "D" {
            return Ok(None);
        }
        uint(f[0], "pid")?;
        Ok(Some(Record {
            time_ns: decimal(f[k + 3], 9, "timestamp")?,
            device: 0,
            op: operation(f[k]).expect("checked"),
            offset: uint(f[k + 1], "offset")?,
            size: uint(f[k + 2], "size")?,
        }))
    }

    fn looks_like(&self, line: &str) -> bool {
        let (f, n) = first::<8>(line.split_ascii_whitespace());
        n >= 6
            && !f[0].is_empty()
            && f[0].bytes().all(|b| b.is_ascii_digit())
            && op_column(&f).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_layouts_and_actions() {
        let want = Record {
            time_ns: 1_500_000,
            device: 0,
            op: Op::Read,
            offset: 299008,
            size: 4096,
        };
        let new = "29162 D read 299008 4096 0.001500000 0 False";
        assert_eq!(WiscSee.parse(new), Ok(Some(want)));
        assert_eq!(
            WiscSee.parse("29162 C read 299008 4096 0.001723461 0.000223461 False"),
            Ok(None),
            "completions are not requests"
        );
        let old = "1123 read 299008 4096 0.0015 NA True";
        assert_eq!(WiscSee.parse(old), Ok(Some(want)));
        assert_eq!(
            WiscSee
                .parse("7 D discard 0 1048576 2.0 0.1 False")
                .unwrap()
                .unwrap()
                .op,
            Op::Trim
        );
        assert!(WiscSee.parse("7 D erase 0 4096 2.0 0 False").is_err());
        assert!(WiscSee
            .parse("7 write -8192 4096 2.0 0 False")
            .unwrap_err()
            .contains("negative offset"));
        assert!(WiscSee.looks_like(new) && WiscSee.looks_like(old));
        assert!(!WiscSee
            .looks_like("  8,0    3        5     0.000008312   697  D  WS 223490 + 8 [jbd2]"));
    }
}
