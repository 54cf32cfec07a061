//! `vscsi`: the CSV cut of the CloudPhysics VMware vscsi traces (Waldspurger
//! et al., "Efficient MRC Construction with SHARDS", FAST'15), as shipped
//! with libCacheSim (`data/cloudPhysicsIO.csv`, `data/trace.csv`), with an
//! optional header line `version,time,op,size,lbn`:
//!
//! `version,time,op,size,lbn` e.g. `1,33898,2a,512,42932745`
//!
//! * version: vscsi record version, `1` or `2`; ignored otherwise;
//! * time: seconds (libCacheSim's FAQ: "time is in seconds"; its binary
//!   reader divides the records' microseconds by 10^6 the same way),
//!   integer or decimal; `vscsi-us` reads the cuts that keep the binary
//!   records' microseconds (`1,33898123456,28,4096,...`), which as seconds
//!   overflow or span centuries (detection tells the two apart by how
//!   plausible the times are, [`super::detect`]);
//! * op: the SCSI command's opcode in hexadecimal, as the cut writes it
//!   (`2a`, `0x2a` also read): READ(6/10/12/16) `08` `28` `a8` `88` are
//!   reads, WRITE(6/10/12/16) `0a` `2a` `aa` `8a` and WRITE AND VERIFY
//!   (10/12/16) `2e` `ae` `8e` are writes; any other opcode is a non-data
//!   command (INQUIRY, TEST UNIT READY, ...) and its line is skipped. Decimal
//!   opcodes are not accepted: `40` would be read as 0x40, so a decimal dump
//!   needs `--format csv:...`;
//! * size: bytes;
//! * lbn: logical block number in 512-byte sectors.
//!
//! The record's device id is 0 (one file holds one virtual disk).

use super::fields::{decimal, expect_fields, first, mul, uint};
use super::{LineFormat, Record};
use crate::request::Op;

/// The CloudPhysics vscsi CSV cut.
pub struct Vscsi {
    /// Times in microseconds (`vscsi-us`) instead of seconds.
    pub micros: bool,
}

/// The operation of a SCSI opcode, `None` for commands that move no data.
fn op_of(code: u8) -> Option<Op> {
    match code {
        0x08 | 0x28 | 0xa8 | 0x88 => Some(Op::Read),
        0x0a | 0x2a | 0xaa | 0x8a | 0x2e | 0xae | 0x8e => Some(Op::Write),
        _ => None,
    }
}

fn opcode(s: &str) -> Option<u8> {
    let s = s.trim();
    let hex = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    if hex.is_empty() || hex.len() > 2 {
        return None;
    }
    u8::from_str_radix(hex, 16).ok()
}

fn is_header(first_field: &str) -> bool {
    first_field.trim().eq_ignore_ascii_case("version")
}

impl LineFormat for Vscsi {
    fn parse(&self, line: &str) -> Result<Option<Record>, String> {
        let (f, n) = first::<5>(line.split(','));
        expect_fields(n, 5, "version,time,op,size,lbn")?;
        if is_header(f[0]) {
            return Ok(None);
        }
        let version = uint(f[0], "version")?;
        if !matches!(version, 1 | 2) {
            return Err(format!("version {version} is neither 1 nor 2"));
        }
        let code = opcode(f[2])
            .ok_or_else(|| format!("op '{}' is not a SCSI opcode in hexadecimal", f[2].trim()))?;
        let Some(op) = op_of(code) else {
            return Ok(None);
        };
        let time_ns = if self.micros {
            decimal(f[1], 3, "time")?
        } else {
            decimal(f[1], 9, "time").map_err(|e| {
                if e.ends_with("overflows") {
                    format!("{e} as seconds: a time in microseconds? (--format vscsi-us)")
                } else {
                    e
                }
            })?
        };
        Ok(Some(Record {
            time_ns,
            device: 0,
            op,
            size: uint(f[3], "size")?,
            offset: mul(uint(f[4], "lbn")?, 512, "lbn")?,
        }))
    }

    fn looks_like(&self, line: &str) -> bool {
        let (f, n) = first::<5>(line.split(','));
        n == 5 && (is_header(f[0]) || (matches!(f[0].trim(), "1" | "2") && opcode(f[2]).is_some()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Vscsi = Vscsi { micros: false };

    #[test]
    fn microseconds() {
        let us = Vscsi { micros: true };
        let r = us.parse("1,33898123456,8a,4096,8").unwrap().unwrap();
        assert_eq!((r.time_ns, r.op), (33_898_123_456_000, Op::Write));
        assert_eq!(us.parse("2,1.5,88,4096,8").unwrap().unwrap().time_ns, 1500);
        let e = S.parse("1,33898123456,8a,4096,8").unwrap_err();
        assert!(e.contains("--format vscsi-us"), "{e}");
    }

    #[test]
    fn opcodes_units_and_header() {
        let r = S.parse("1,33898,2a,512,42932745").unwrap().unwrap();
        assert_eq!(
            r,
            Record {
                time_ns: 33_898_000_000_000,
                device: 0,
                op: Op::Write,
                offset: 42932745 * 512,
                size: 512
            }
        );
        assert_eq!(S.parse("2,1.5,0x28,4096,8").unwrap().unwrap().op, Op::Read);
        assert_eq!(S.parse("1,5,12,36,0"), Ok(None), "INQUIRY moves no data");
        assert_eq!(S.parse("version,time,op,size,lbn"), Ok(None));
        assert!(S
            .parse("1,5,168,4096,0")
            .unwrap_err()
            .contains("hexadecimal"));
        assert!(S.parse("3,5,2a,4096,0").unwrap_err().contains("version"));
        assert!(S.looks_like("1,33898,2a,512,42932745"));
        assert!(!S.looks_like("1538323200,1012232,8,1,1063"));
    }
}
