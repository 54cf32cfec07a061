//! `blkparse`: the default text output of `blkparse -i TRACE` (blktrace,
//! Linux), one event per line:
//!
//! `maj,min cpu seq seconds.nanoseconds pid action RWBS sector + nsectors [process]`
//!
//! * seconds.nanoseconds: time since tracing began;
//! * action: the event; a request appears several times (Q queued, G get,
//!   I inserted, D issued to the device, C completed ...). One event is kept:
//!   `D` by default (`blkparse:Q` keeps queue events instead);
//! * RWBS: `D` discard (a trim), else `W` write, else `R` read; flags such as
//!   `S` sync, `M` meta, `A` read-ahead, `F` flush/FUA are ignored; events with
//!   neither (`N`, a bare flush) carry no data and are skipped;
//! * sector, nsectors: 512-byte sectors;
//! * the record's device id is `maj << 32 | min`.
//!
//! Lines that are not events (per-CPU and total summaries, `P`/`U` plug
//! events, messages) are skipped; an event of the chosen action that does not
//! parse is an error. Data events of the other action (`Q` when `D` is kept,
//! `D` when `Q` is) are counted: a trace whose issue events are a small share
//! of its queue events (a stacked or remapped device issues elsewhere) is
//! better read from its queue events, and a replay warns about it.

use std::cell::Cell;

use super::fields::{decimal, mul, uint};
use super::{LineFormat, Record};
use crate::request::Op;

/// blkparse text, keeping one action.
pub struct Blkparse {
    /// The action kept: `Q` or `D`.
    pub action: &'static str,
    /// Data events of the other of `Q` / `D` seen.
    pub other: Cell<u64>,
}

impl Blkparse {
    /// A parser keeping `action` (`Q` or `D`) events.
    pub fn new(action: &'static str) -> Self {
        Blkparse {
            action,
            other: Cell::new(0),
        }
    }
}

/// Whether RWBS flags `rwbs` move data (read, write or discard).
fn moves_data(rwbs: Option<&str>) -> bool {
    rwbs.is_some_and(|f| f.contains(['D', 'W', 'R']))
}

fn device(s: &str) -> Option<u64> {
    let (a, b) = s.split_once(',')?;
    let (a, b) = (a.parse::<u32>().ok()?, b.parse::<u32>().ok()?);
    Some((a as u64) << 32 | b as u64)
}

impl LineFormat for Blkparse {
    fn parse(&self, line: &str) -> Result<Option<Record>, String> {
        let mut f = line.split_ascii_whitespace();
        let (Some(dev), Some(_cpu), Some(_seq), Some(time), Some(_pid), Some(action)) =
            (f.next(), f.next(), f.next(), f.next(), f.next(), f.next())
        else {
            return Ok(None);
        };
        let Some(dev) = device(dev) else {
            return Ok(None);
        };
        if action != self.action {
            if matches!(action, "Q" | "D") && moves_data(f.next()) {
                self.other.set(self.other.get() + 1);
            }
            return Ok(None);
        }
        let rwbs = f.next().ok_or("missing RWBS field")?;
        let op = if rwbs.contains('D') {
            Op::Trim
        } else if rwbs.contains('W') {
            Op::Write
        } else if rwbs.contains('R') {
            Op::Read
        } else {
            return Ok(None);
        };
        let (Some(sector), Some(plus), Some(n)) = (f.next(), f.next(), f.next()) else {
            // e.g. a flush with no data range
            return Ok(None);
        };
        if plus != "+" {
            return Err(format!(
                "expected 'sector + nsectors', found '{sector} {plus} {n}'"
            ));
        }
        Ok(Some(Record {
            time_ns: decimal(time, 9, "timestamp")?,
            device: dev,
            op,
            offset: mul(uint(sector, "sector")?, 512, "sector")?,
            size: mul(uint(n, "nsectors")?, 512, "nsectors")?,
        }))
    }

    fn looks_like(&self, line: &str) -> bool {
        let f: Vec<&str> = line.split_ascii_whitespace().collect();
        f.len() >= 7 && device(f[0]).is_some() && f[3].contains('.') && f[5].len() <= 2
    }

    fn unkept_events(&self) -> u64 {
        self.other.get()
    }
}
