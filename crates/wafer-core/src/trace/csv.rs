//! `csv:KEYS`: any delimited text trace, described by a column map given with
//! the format name, for layouts wafer has no reader for:
//!
//! `--format csv:time=0,op=1,offset=2,size=3,offset_unit=sector`
//!
//! Keys (column indices are 0-based):
//!
//! | key | value | default |
//! |---|---|---|
//! | `time`, `op`, `offset`, `size` | column index (required) | |
//! | `device` | column index of the device / volume id | all device 0 |
//! | `sep` | `comma`, `tab`, `space` (any run of blanks), `semicolon`, `pipe`, or one character | `comma` |
//! | `header` | content lines to skip at the start, or `auto` | `auto`: the first line is skipped when its offset or size is not a number |
//! | `time_unit` | `ns`, `us`, `ms` or `s` (values may be decimal) | `s` |
//! | `offset_unit`, `size_unit` | `byte`, `sector` (512 B), `block4k`, or a number of bytes | `byte` |
//! | `read`, `write`, `trim` | values of the op column, `|`-separated, case-insensitive | `r|read`, `w|write`, `trim|discard` |
//! | `skip` | op values of lines that carry no request (flush, ...) | none |
//!
//! Giving any of `read`/`write`/`trim` replaces all three defaults. A numeric
//! op value with the default words is an error, not a guess: traces code
//! reads as 0 or as 1 (Tencent 0 = read, MQSim 0 = write), so say which.
//! Blank and `#` lines are ignored as in every format; `header` counts the
//! other lines.

use std::cell::Cell;

use super::fields::{decimal, mul, uint};
use super::{LineFormat, Record};
use crate::request::Op;

/// Every key, for messages.
pub const KEYS: &str =
    "time, op, offset, size, device, sep, header, time_unit, offset_unit, size_unit, read, write, trim, skip";

const EXAMPLE: &str = "csv:time=0,op=1,offset=2,size=3";

/// Column indices beyond this are refused (a typo, not a layout).
const MAX_COLUMN: usize = 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sep {
    Char(char),
    Blanks,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Header {
    Auto,
    Lines(u64),
}

/// A column map: a text layout described by the user.
#[derive(Debug)]
pub struct ColumnMap {
    /// Column of each role: time, op, offset, size, device.
    columns: [Option<usize>; 5],
    sep: Sep,
    header: Header,
    /// Decimal digits from the time unit down to ns (s 9, ms 6, us 3, ns 0).
    time_digits: u32,
    /// Bytes per unit of the offset column.
    offset_unit: u64,
    /// Bytes per unit of the size column.
    size_unit: u64,
    /// Accepted op values, lowercase: read, write, trim, skip.
    ops: [Vec<String>; 4],
    /// Whether the op values were given (numbers are then allowed).
    explicit_ops: bool,
    /// Content lines seen, for `header`.
    seen: Cell<u64>,
}

const TIME: usize = 0;
const OP: usize = 1;
const OFFSET: usize = 2;
const SIZE: usize = 3;
const DEVICE: usize = 4;
const ROLES: [&str; 5] = ["time", "op", "offset", "size", "device"];

fn unit(key: &str, v: &str) -> Result<u64, String> {
    match v {
        "byte" | "bytes" | "b" => Ok(1),
        "sector" | "sectors" => Ok(512),
        "block4k" => Ok(4096),
        _ => match v.parse::<u64>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!(
                "{key}={v}: one of byte, sector (512 B), block4k, or a number of bytes"
            )),
        },
    }
}

fn values(key: &str, v: &str) -> Result<Vec<String>, String> {
    let list: Vec<String> = v
        .split('|')
        .map(|s| s.trim().to_ascii_lowercase())
        .collect();
    if list.iter().any(|s| s.is_empty()) {
        return Err(format!(
            "{key}={v}: a value of the op column, or several separated by '|'"
        ));
    }
    Ok(list)
}

impl ColumnMap {
    /// Parse the keys after `csv:`.
    pub fn parse(spec: &str) -> Result<Self, String> {
        let mut m = ColumnMap {
            columns: [None; 5],
            sep: Sep::Char(','),
            header: Header::Auto,
            time_digits: 9,
            offset_unit: 1,
            size_unit: 1,
            ops: [
                vec!["r".into(), "read".into()],
                vec!["w".into(), "write".into()],
                vec!["trim".into(), "discard".into()],
                Vec::new(),
            ],
            explicit_ops: false,
            seen: Cell::new(0),
        };
        let mut given: Vec<&str> = Vec::new();
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let Some((key, v)) = item.split_once('=') else {
                return Err(format!(
                    "'{item}' is not KEY=VALUE; keys: {KEYS} (e.g. {EXAMPLE})"
                ));
            };
            let (key, v) = (key.trim(), v.trim());
            if given.contains(&key) {
                return Err(format!("key '{key}' given twice"));
            }
            given.push(key);
            if let Some(role) = ROLES.iter().position(|r| *r == key) {
                m.columns[role] = Some(match v.parse::<usize>() {
                    Ok(i) if i < MAX_COLUMN => i,
                    _ => return Err(format!("{key}={v}: not a column index (0-based)")),
                });
                continue;
            }
            match key {
                "sep" => {
                    m.sep = match v {
                        "comma" => Sep::Char(','),
                        "tab" | "\\t" => Sep::Char('\t'),
                        "space" | "blank" | "whitespace" => Sep::Blanks,
                        "semicolon" => Sep::Char(';'),
                        "pipe" => Sep::Char('|'),
                        _ if v.chars().count() == 1 => Sep::Char(v.chars().next().expect("one")),
                        _ => {
                            return Err(format!(
                            "sep={v}: one of comma, tab, space, semicolon, pipe, or one character"
                        ))
                        }
                    }
                }
                "header" => {
                    m.header = match v {
                        "auto" => Header::Auto,
                        _ => Header::Lines(v.parse().map_err(|_| {
                            format!("header={v}: a number of lines to skip, or auto")
                        })?),
                    }
                }
                "time_unit" => {
                    m.time_digits = match v {
                        "s" => 9,
                        "ms" => 6,
                        "us" => 3,
                        "ns" => 0,
                        _ => return Err(format!("time_unit={v}: one of ns, us, ms, s")),
                    }
                }
                "offset_unit" => m.offset_unit = unit(key, v)?,
                "size_unit" => m.size_unit = unit(key, v)?,
                "read" | "write" | "trim" | "skip" => {
                    let i = ["read", "write", "trim", "skip"]
                        .iter()
                        .position(|k| *k == key)
                        .expect("listed");
                    if i < 3 && !m.explicit_ops {
                        m.explicit_ops = true;
                        for set in &mut m.ops[..3] {
                            set.clear();
                        }
                    }
                    m.ops[i] = values(key, v)?;
                }
                _ => return Err(format!("unknown key '{key}'; keys: {KEYS}")),
            }
        }
        let missing: Vec<&str> = (0..4)
            .filter(|&r| m.columns[r].is_none())
            .map(|r| ROLES[r])
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "missing column {} (time, op, offset and size are required; e.g. {EXAMPLE})",
                missing.join(", ")
            ));
        }
        for (a, col) in m.columns.iter().enumerate() {
            if let Some(twin) = col.and_then(|c| (a + 1..5).find(|&b| m.columns[b] == Some(c))) {
                return Err(format!(
                    "columns {} and {} are both {}",
                    ROLES[a],
                    ROLES[twin],
                    col.expect("some")
                ));
            }
        }
        for a in 0..4 {
            for b in a + 1..4 {
                if let Some(v) = m.ops[a].iter().find(|v| m.ops[b].contains(v)) {
                    return Err(format!(
                        "op value '{v}' is given to both {} and {}",
                        ["read", "write", "trim", "skip"][a],
                        ["read", "write", "trim", "skip"][b]
                    ));
                }
            }
        }
        Ok(m)
    }

    /// The fields of the roles, and how many fields the line has.
    fn pick<'a>(&self, line: &'a str) -> ([&'a str; 5], usize) {
        let mut out = [""; 5];
        let mut n = 0;
        let mut put = |i: usize, piece: &'a str| {
            for (role, col) in self.columns.iter().enumerate() {
                if *col == Some(i) {
                    out[role] = unquote(piece);
                }
            }
        };
        match self.sep {
            Sep::Char(c) => {
                for (i, p) in line.split(c).enumerate() {
                    put(i, p);
                    n = i + 1;
                }
            }
            Sep::Blanks => {
                for (i, p) in line.split_ascii_whitespace().enumerate() {
                    put(i, p);
                    n = i + 1;
                }
            }
        }
        (out, n)
    }

    fn op(&self, v: &str) -> Result<Option<Op>, String> {
        let v = v.trim();
        let is = |set: &[String]| set.iter().any(|s| s.eq_ignore_ascii_case(v));
        for (set, op) in self.ops[..3].iter().zip([Op::Read, Op::Write, Op::Trim]) {
            if is(set) {
                return Ok(Some(op));
            }
        }
        if is(&self.ops[3]) {
            return Ok(None);
        }
        if !self.explicit_ops && !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!(
                "op '{v}' is a number and codings differ between traces (0 = read or 0 = write?): \
                 give read=... and write=... in the column map"
            ));
        }
        let list = |i: usize| self.ops[i].join("|");
        Err(format!(
            "op '{v}' is none of read={} write={} trim={}{} (set them in the column map, or skip=...)",
            list(0),
            list(1),
            list(2),
            if self.ops[3].is_empty() {
                String::new()
            } else {
                format!(" skip={}", list(3))
            }
        ))
    }
}

fn unquote(s: &str) -> &str {
    let s = s.trim();
    s.strip_prefix('"')
        .and_then(|x| x.strip_suffix('"'))
        .unwrap_or(s)
}

impl LineFormat for ColumnMap {
    fn parse(&self, line: &str) -> Result<Option<Record>, String> {
        let seen = self.seen.get();
        self.seen.set(seen + 1);
        let (f, n) = self.pick(line);
        match self.header {
            Header::Lines(k) if seen < k => return Ok(None),
            Header::Auto
                if seen == 0
                    && (uint(f[OFFSET], "offset").is_err() || uint(f[SIZE], "size").is_err()) =>
            {
                return Ok(None)
            }
            _ => {}
        }
        let need = self.columns.iter().flatten().max().expect("required") + 1;
        if n < need {
            return Err(format!(
                "{n} fields, the column map reads column {}",
                need - 1
            ));
        }
        let Some(op) = self.op(f[OP])? else {
            return Ok(None);
        };
        Ok(Some(Record {
            time_ns: decimal(f[TIME], self.time_digits, "time")?,
            device: match self.columns[DEVICE] {
                Some(_) => uint(f[DEVICE], "device")?,
                None => 0,
            },
            op,
            offset: mul(uint(f[OFFSET], "offset")?, self.offset_unit, "offset")?,
            size: mul(uint(f[SIZE], "size")?, self.size_unit, "size")?,
        }))
    }

    fn looks_like(&self, line: &str) -> bool {
        let (f, n) = self.pick(line);
        n > self.columns.iter().flatten().max().copied().unwrap_or(0)
            && uint(f[OFFSET], "offset").is_ok()
            && uint(f[SIZE], "size").is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(time_ns: u64, device: u64, op: Op, offset: u64, size: u64) -> Record {
        Record {
            time_ns,
            device,
            op,
            offset,
            size,
        }
    }

    #[test]
    fn maps_columns_units_and_ops() {
        let m = ColumnMap::parse(
            "time=4,op=3,offset=1,size=2,device=0,offset_unit=sector,size_unit=sector,read=0,write=1",
        )
        .unwrap();
        assert_eq!(
            m.parse("1063,1012232,8,1,1538323200").unwrap(),
            Some(rec(
                1_538_323_200_000_000_000,
                1063,
                Op::Write,
                1012232 * 512,
                4096
            ))
        );
        let m = ColumnMap::parse("time=0,op=1,offset=2,size=3,sep=space,time_unit=ms").unwrap();
        assert_eq!(m.parse("time op offset size").unwrap(), None, "auto header");
        assert_eq!(
            m.parse("1.5  W  4096 8192").unwrap(),
            Some(rec(1_500_000, 0, Op::Write, 4096, 8192))
        );
        assert_eq!(m.parse("2 discard 0 4096").unwrap().unwrap().op, Op::Trim);
        assert!(m
            .parse("2 1 0 4096")
            .unwrap_err()
            .contains("read=... and write="));
        assert!(m
            .parse("2 X 0 4096")
            .unwrap_err()
            .contains("none of read=r|read"));
        let m = ColumnMap::parse(
            "time=0,op=1,offset=2,size=3,header=1,sep=tab,skip=F,offset_unit=4096",
        )
        .unwrap();
        assert_eq!(m.parse("0\tW\t1\t4096").unwrap(), None, "header=1");
        assert_eq!(m.parse("0\tF\t1\t0").unwrap(), None, "skip");
        assert_eq!(m.parse("0\tR\t1\t4096").unwrap().unwrap().offset, 4096);
    }

    #[test]
    fn bad_maps_name_the_key() {
        let err = |s: &str| ColumnMap::parse(s).unwrap_err();
        assert!(err("time=0,op=1,offset=2,size=3,colour=4")
            .contains("unknown key 'colour'; keys: time, op"));
        assert!(err("time=0,op=1,offset=2").contains("missing column size"));
        assert!(err("time=0,op=1,offset=2,size=2").contains("offset and size are both 2"));
        assert!(err("time=0,op=1,offset=2,size=3,offset_unit=kb").contains("offset_unit=kb"));
        assert!(err("time=0,op=1,offset=2,size=3,time_unit=min").contains("time_unit=min"));
        assert!(err("time=x,op=1,offset=2,size=3").contains("time=x"));
        assert!(err("time=0,op=1,offset=2,size=3,read=0,write=0").contains("both read and write"));
        assert!(err("time=0,time=1").contains("twice"));
        assert!(err("").contains("missing column time, op, offset, size"));
    }
}
