//! `netapp`: NetApp IOLogDump CSV, the traces hfplayer replays
//! (`umn-cris/hfplayer`: `TextDataSet.h` reads the header,
//! `HFPlayerUtils.cc` finds the columns by name, `hfcore.cc` keeps op 0
//! and 1). The first line is a typed header (`#DUMP_OFFSET.I,
//! ELAPSED_USECS.D,...`; wafer skips `#` lines); two schemas are known, told
//! apart by their field count:
//!
//! | fields | ELAPSED_USECS | CMD | LUN_SSID | OP | LBA | NBLKS |
//! |---|---|---|---|---|---|---|
//! | 16 (e.g. `small-tpch.csv`) | 1 | 3 | 7 | 8 | 10 | 11 |
//! | 23 (adds ABS_SECS, CORENUM, PAD1/2, THINK_*, LBA_SHIFT; `sample_raw.trace`) | 2 | 4 | 8 | 9 | 14 | 15 |
//!
//! * time: `ELAPSED_USECS`, microseconds (decimal), as hfplayer schedules
//!   by it (a capture whose first line says 0 keeps that gap);
//! * `CMD`: `RD_IN` a read, `WR_IN` a write (`OP` 0 / 1, checked);
//!   `RD_OUT` / `WR_OUT` are the completions of requests already read,
//!   skipped and counted as events not kept;
//! * offset `LBA` x 512 and size `NBLKS` x 512 [bytes]; device `LUN_SSID`.
//!
//! Another schema (another field count) is refused with the `csv:KEYS`
//! column map to read it by.

use std::sync::atomic::{AtomicU64, Ordering};

use super::fields::{decimal, mul, uint};
use super::{LineFormat, Record};
use crate::request::Op;

/// The NetApp IOLogDump layout.
#[derive(Default)]
pub struct NetApp {
    /// Completion (`*_OUT`) events seen.
    outs: AtomicU64,
}

/// Columns of (ELAPSED_USECS, CMD, LUN_SSID, OP, LBA, NBLKS) in a schema of
/// `n` fields.
fn columns(n: usize) -> Option<[usize; 6]> {
    match n {
        16 => Some([1, 3, 7, 8, 10, 11]),
        23 => Some([2, 4, 8, 9, 14, 15]),
        _ => None,
    }
}

impl LineFormat for NetApp {
    fn parse(&self, line: &str) -> Result<Option<Record>, String> {
        let f: Vec<&str> = line.split(',').collect();
        let Some([t, cmd, lun, op, lba, nblks]) = columns(f.len()) else {
            return Err(format!(
                "{} fields: the IOLogDump schemas wafer knows have 16 or 23; read another with \
                 csv:time=N,op=N,offset=N,size=N,device=N,time_unit=us,offset_unit=sector,\
                 size_unit=sector,read=RD_IN,write=WR_IN,skip=RD_OUT|WR_OUT",
                f.len()
            ));
        };
        let (kind, code) = match f[cmd].trim() {
            "RD_IN" => (Some(Op::Read), "0"),
            "WR_IN" => (Some(Op::Write), "1"),
            "RD_OUT" => (None, "2"),
            "WR_OUT" => (None, "3"),
            c => return Err(format!("CMD '{c}' is none of RD_IN, WR_IN, RD_OUT, WR_OUT")),
        };
        if f[op].trim() != code {
            return Err(format!(
                "OP '{}' disagrees with CMD '{}' (expected {code})",
                f[op].trim(),
                f[cmd].trim()
            ));
        }
        let Some(op) = kind else {
            self.outs.fetch_add(1, Ordering::Relaxed);
            return Ok(None);
        };
        Ok(Some(Record {
            time_ns: decimal(f[t], 3, "ELAPSED_USECS")?,
            device: uint(f[lun], "LUN_SSID")?,
            op,
            offset: mul(uint(f[lba], "LBA")?, 512, "LBA")?,
            size: mul(uint(f[nblks], "NBLKS")?, 512, "NBLKS")?,
        }))
    }

    fn looks_like(&self, line: &str) -> bool {
        let f: Vec<&str> = line.split(',').collect();
        columns(f.len())
            .is_some_and(|c| matches!(f[c[1]].trim(), "RD_IN" | "WR_IN" | "RD_OUT" | "WR_OUT"))
    }

    fn unkept_events(&self) -> u64 {
        self.outs.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_schemas_read_with_sectors_and_microseconds() {
        let n = NetApp::default();
        let r = n
            .parse("3610768,81442951.096,173744962312,WR_IN,0,30736997642535324,1483333685,1,1,0,2254431928,8,121408,6,1,56.910")
            .unwrap()
            .unwrap();
        assert_eq!(
            r,
            Record {
                time_ns: 81_442_951_096,
                device: 1,
                op: Op::Write,
                offset: 2254431928 * 512,
                size: 4096
            }
        );
        let raw = "4096,1443033226.409,0,36817835820,RD_IN,0,335362863407912,2130375,0,0,0,1,0,0,8178892672,8,0,0,0,0.000,0,0.000,0";
        assert!(n.looks_like(raw));
        let r = n.parse(raw).unwrap().unwrap();
        assert_eq!(
            (r.time_ns, r.device, r.op, r.offset, r.size),
            (0, 0, Op::Read, 8178892672 * 512, 4096)
        );
        let out = "4192,1443033226.416,18416300.000,36832564948,RD_OUT,2,335362878137040,2130377,0,2,0,1,0,0,0,8,0,0,0,0.000,0,0.000,0";
        assert_eq!(n.parse(out).unwrap(), None);
        assert_eq!(n.unkept_events(), 1);
        assert!(n
            .parse(&out.replace(",0,2,0,1,", ",0,1,0,1,"))
            .unwrap_err()
            .contains("disagrees"));
        assert!(n.parse("1,2,3").unwrap_err().contains("csv:time="));
        assert!(n
            .parse(&raw.replace("RD_IN", "XX_IN"))
            .unwrap_err()
            .contains("CMD 'XX_IN'"));
        assert!(!n.looks_like("128166372003061629,hm,1,Read,3584,4096,7"));
    }
}
