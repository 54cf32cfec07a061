//! The DiskSim-style ASCII traces, whitespace-separated, no header:
//!
//! `time device lba size type`
//!
//! with `lba` and `size` in 512-byte sectors, in three variants that differ in
//! the unit of `time` and the meaning of `type`:
//!
//! | name | time | type |
//! |---|---|---|
//! | `mqsim` | integer nanoseconds (MQSim's `Time_Unit` NANOSECOND) | `0` write, `1` read |
//! | `ssdsim` | integer nanoseconds | `0` write, `1` read (SSDsim's `ope`) |
//! | `disksim` | decimal milliseconds | flags: bit 0 set = read, clear = write |
//!
//! The record's device id is the `device` column.

use super::fields::{decimal, expect_fields, first, mul, uint};
use super::{LineFormat, Record};
use crate::request::Op;

/// Which ASCII variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// MQSim.
    Mqsim,
    /// SSDsim.
    Ssdsim,
    /// DiskSim.
    Disksim,
}

/// DiskSim-style ASCII.
pub struct Ascii(pub Variant);

impl LineFormat for Ascii {
    fn parse(&self, line: &str) -> Result<Option<Record>, String> {
        let (f, n) = first::<5>(line.split_ascii_whitespace());
        if n == 0 {
            return Ok(None);
        }
        expect_fields(n, 5, "time device lba size type")?;
        let (time_ns, op) = match self.0 {
            Variant::Mqsim | Variant::Ssdsim => {
                let op = match f[4] {
                    "0" => Op::Write,
                    "1" => Op::Read,
                    t => return Err(format!("type '{t}' is neither 0 (write) nor 1 (read)")),
                };
                (uint(f[0], "time")?, op)
            }
            Variant::Disksim => {
                let flags = uint(f[4], "flags")?;
                (
                    decimal(f[0], 6, "time")?,
                    if flags & 1 == 1 { Op::Read } else { Op::Write },
                )
            }
        };
        Ok(Some(Record {
            time_ns,
            device: uint(f[1], "device")?,
            offset: mul(uint(f[2], "lba")?, 512, "lba")?,
            size: mul(uint(f[3], "size")?, 512, "size")?,
            op,
        }))
    }

    fn looks_like(&self, line: &str) -> bool {
        let f: Vec<&str> = line.split_ascii_whitespace().collect();
        f.len() == 5
            && f[1..].iter().all(|x| x.bytes().all(|b| b.is_ascii_digit()))
            && match self.0 {
                Variant::Disksim => f[0].contains('.'),
                _ => f[0].bytes().all(|b| b.is_ascii_digit()) && matches!(f[4], "0" | "1"),
            }
    }
}
