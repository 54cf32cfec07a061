//! One block I/O request, already converted to the device's block units.

/// Kind of a request. A whole word, so that [`Request`] has no padding: with
/// a one-byte `Op`, moving an `Option<Request>` copied the seven bytes after
/// it as two overlapping 4-byte moves, and the load that followed waited on
/// a failed store forward for every request (~5% of `base`'s replay).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[repr(u64)]
pub enum Op {
    /// Read: counted, changes nothing.
    #[default]
    Read,
    /// Write: each block is a user write.
    Write,
    /// Trim / discard: the blocks' data become invalid.
    Trim,
}

impl Op {
    /// Its number in columns and digests: 0 read, 1 write, 2 trim.
    #[inline]
    pub fn code(self) -> u8 {
        match self {
            Op::Read => 0,
            Op::Write => 1,
            Op::Trim => 2,
        }
    }
}

/// A request: `blocks` consecutive logical blocks starting at `lba`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Request {
    /// Arrival time [ns since the start of the workload].
    pub time_ns: u64,
    /// First logical block [blocks].
    pub lba: u64,
    /// Length [blocks], at least 1.
    pub blocks: u32,
    /// Read, write or trim.
    pub op: Op,
    /// Who issued it: the tenant of a `mix:` workload (0, 1, ...), a trace's
    /// device / volume id (low 32 bits), 0 otherwise.
    pub tenant: u32,
}

/// Largest batch of user blocks handed to a policy at once [blocks]: the
/// engine splits a longer request into batches of this size.
pub const MAX_BATCH: usize = 256;
