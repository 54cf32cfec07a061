//! The valid-block count SepBIT's trace replayer reads (`valid_count =
//! "log"`), followed from a policy's own hooks.

use crate::engine::{Ctx, Event, UserWrite};
use crate::error::Error;

/// The replayer's valid-block count of a log (`Log.getnValidBlocks`: its
/// blocks less the garbage it has counted), which the replayer's SepBIT,
/// UW, FADaC and MultiLog read (`valid_count = "log"`). It differs from the
/// LBAs written in three ways: a request's blocks join the log's block count
/// only after the whole request (`appendRequest`), an overwritten copy in an
/// open segment counts as garbage only when that segment is sealed, and GC
/// adds and removes the same blocks (net nothing). Followed here from the
/// policy's own hooks: the engine must place one block at a time
/// (`placement_batch = block`, the `sepbit-replayer` setup) for the count
/// to be exact within a request.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct LogValid {
    /// Blocks of finished requests less counted garbage.
    valid: i64,
    /// Blocks of the request in progress.
    pending: u64,
}

impl LogValid {
    /// A user block `w` is about to be placed: a new request moves the
    /// previous one's blocks into the count.
    pub fn user_block(&mut self, w: &UserWrite) {
        if w.req_offset == 0 {
            self.valid += self.pending as i64;
            self.pending = 0;
        }
        self.pending += 1;
    }

    /// The count after the old copy of `lba` (if any) was invalidated,
    /// before its new copy is appended (where the replayer's policies read
    /// it).
    pub fn before_append(&self, ctx: &Ctx, lba: u32) -> f64 {
        let sealed_copy = ctx.ftl.lookup(lba).is_some_and(|pba| {
            ctx.ftl.segs.state[ctx.ftl.segment_of(pba) as usize] == crate::ftl::SegState::Sealed
        });
        (self.valid - sealed_copy as i64) as f64
    }

    /// The count at the start of the request whose first block is next
    /// (call after [`LogValid::user_block`] of that block).
    pub fn at_request_start(&self) -> f64 {
        self.valid as f64
    }

    /// The count between requests (where GC runs): the finished request's
    /// blocks are in.
    pub fn settled(&self) -> f64 {
        (self.valid + self.pending as i64) as f64
    }

    /// A copy in `seg` was invalidated.
    pub fn invalidated(&mut self, seg: crate::ftl::SegmentId, ftl: &crate::ftl::Ftl) {
        if ftl.segs.state[seg as usize] == crate::ftl::SegState::Sealed {
            self.valid -= 1;
        }
    }

    /// Follow a seal: the segment's garbage joins the count.
    pub fn on_event(&mut self, ctx: &Ctx, ev: &Event) {
        if let Event::Sealed { seg, .. } = *ev {
            let garbage = ctx.ftl.geo.segment_blocks - ctx.ftl.segs.valid[seg as usize];
            self.valid -= garbage as i64;
        }
    }
}

/// Which valid-block count a policy reads: `written` (LBAs written, wafer)
/// or `log` (the replayer's, [`LogValid`]).
pub fn log_valid(policy: &str, valid_count: &str) -> crate::error::Result<Option<LogValid>> {
    match valid_count {
        "written" => Ok(None),
        "log" => Ok(Some(LogValid::default())),
        v => Err(Error::Parameter {
            policy: policy.into(),
            reason: format!("valid_count = '{v}'; known: written, log"),
        }),
    }
}
