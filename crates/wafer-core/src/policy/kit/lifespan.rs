//! ℓ, SepBIT's threshold (FAST'22 §3.2): the mean lifespan of a group's
//! last collected segments.

use crate::engine::{Ctx, Event};
use crate::ftl::GroupId;

/// ℓ: the mean lifespan of the last `window` collected group-0 segments,
/// ∞ until there are that many (shared by SepBIT and its ablations UW, GW).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Ell {
    /// Threshold ℓ [user blocks].
    pub ell: f64,
    /// The group whose segments are measured.
    group: GroupId,
    /// Its segments are sealed by user writes (the clock ticks after the
    /// seal) rather than GC.
    user: bool,
    window: u32,
    sum: u64,
    n: u32,
    /// `previous-seal` lifespans: when the open segment's life began, and
    /// that start for every sealed segment [user blocks].
    created: Option<(u64, Vec<u64>)>,
}

impl Ell {
    /// ℓ over `window` group-0 segments; lifespans from the previous
    /// group-0 seal if `previous_seal`, else from the segment's first write.
    pub fn new(window: u32, previous_seal: bool, segments: u32) -> Self {
        Self::of_group(0, window, previous_seal, segments, true)
    }

    /// As [`Ell::new`], over the segments of `group` (sealed by user writes
    /// if `user`, else by GC).
    pub fn of_group(
        group: GroupId,
        window: u32,
        previous_seal: bool,
        segments: u32,
        user: bool,
    ) -> Self {
        Ell {
            ell: f64::INFINITY,
            group,
            user,
            window: window.max(1),
            sum: 0,
            n: 0,
            created: previous_seal.then(|| (0, vec![0; segments as usize])),
        }
    }

    /// Follow an engine event; true when ℓ was recomputed.
    pub fn on_event(&mut self, ctx: &Ctx, ev: &Event) -> bool {
        match *ev {
            Event::Sealed { seg, group } if group == self.group => {
                if let Some((start, created)) = &mut self.created {
                    // a seal by a user write comes before the clock ticks
                    // (the replayer's `accessId` has ticked already)
                    created[seg as usize] = *start;
                    *start = ctx.now() + self.user as u64;
                }
                false
            }
            Event::Collected { seg, .. } if ctx.ftl.segs.group[seg as usize] == self.group => {
                let s = seg as usize;
                let born = match &self.created {
                    Some((_, created)) => created[s],
                    None => ctx.ftl.segs.open_time[s],
                };
                self.sum += ctx.now().saturating_sub(born);
                self.n += 1;
                if self.n < self.window {
                    return false;
                }
                self.ell = self.sum as f64 / self.n as f64;
                self.sum = 0;
                self.n = 0;
                true
            }
            _ => false,
        }
    }

    /// ℓ if known.
    pub fn get(&self) -> Option<f64> {
        self.ell.is_finite().then_some(self.ell)
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.created.as_ref().map_or(0, |(_, c)| c.capacity() * 8)
    }
}
