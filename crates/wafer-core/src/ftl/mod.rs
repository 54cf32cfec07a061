//! The flash translation layer: page-level mapping, segments, groups, and the
//! GC loop ([`engine`]), with the engine's statistics ([`stats`]) and the
//! invariant checker ([`check`]).
//!
//! State is kept in flat arrays indexed by `u32` ids (structure of arrays):
//! 4 bytes per logical block for the forward map, 4 bytes per physical block
//! for the reverse map (which doubles as the valid bitmap: an entry is either
//! the LBA stored there or [`UNMAPPED`]), and a few words per segment.

pub mod check;
pub(crate) mod semantics;
pub mod sink;
pub mod stats;

use std::collections::VecDeque;

use crate::device::Geometry;

pub use sink::FlashOp;

/// Marks an unmapped LBA in the forward map and a free or invalid slot in the
/// reverse map.
pub const UNMAPPED: u32 = u32::MAX;
/// Marks "no open segment" in a group.
pub const NO_SEGMENT: u32 = u32::MAX;

/// Identifier of a group (stream, temperature class): an index into the
/// engine's group table.
pub type GroupId = u16;
/// Identifier of a segment.
pub type SegmentId = u32;

/// Life cycle of a segment: free -> open (appended to) -> sealed (GC candidate) -> free.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[repr(u8)]
pub enum SegState {
    /// Erased, in the free pool.
    Free,
    /// The append point of one group.
    Open,
    /// Full and read-only; may be chosen as a GC victim.
    Sealed,
}

/// An append point: the open segment of one group.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct Group {
    /// Open segment, or [`NO_SEGMENT`] until the group's next write.
    pub open: SegmentId,
    /// Next free slot in the open segment [blocks].
    pub next: u32,
}

/// Per-segment metadata, structure of arrays.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Segments {
    /// Valid blocks in each segment.
    pub valid: Vec<u32>,
    /// State of each segment.
    pub state: Vec<SegState>,
    /// Group that owns each open or sealed segment.
    pub group: Vec<GroupId>,
    /// Logical time at which each segment was opened [user blocks].
    pub open_time: Vec<u64>,
    /// Logical time at which each segment was sealed [user blocks].
    pub seal_time: Vec<u64>,
    /// Global sealing order of each segment (1, 2, ...): FIFO order, and a
    /// tag that tells a stale queue entry from a current one.
    pub seal_seq: Vec<u64>,
    /// Erase count of each segment.
    pub erase_count: Vec<u32>,
}

impl Segments {
    /// `n` free segments that were never written.
    pub fn erased(n: usize) -> Self {
        Segments {
            valid: vec![0; n],
            state: vec![SegState::Free; n],
            group: vec![0; n],
            open_time: vec![0; n],
            seal_time: vec![0; n],
            seal_seq: vec![0; n],
            erase_count: vec![0; n],
        }
    }
}

/// The FTL's state and its primitive operations. Policies see it read-only
/// (through [`crate::policy::Ctx`]); only the [`Engine`] mutates it.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Ftl {
    /// Device shape.
    pub geo: Geometry,
    /// LBA -> physical block, or [`UNMAPPED`].
    pub(crate) map: Vec<u32>,
    /// Physical block -> LBA stored there, or [`UNMAPPED`] if free or invalid.
    pub(crate) rev: Vec<u32>,
    /// Segment metadata.
    pub segs: Segments,
    /// Free segments, used in FIFO order (spreads erases evenly).
    pub(crate) free: VecDeque<SegmentId>,
    /// Append points, one per group.
    pub(crate) groups: Vec<Group>,
    /// Logical clock: user blocks written so far, prefill included [user blocks].
    pub now: u64,
    /// Arrival time of the request being applied [ns since the workload's
    /// start] (trace time: the replayer's cost-benefit age, WARCIP's and
    /// SFS's clocks). 0 during the prefill.
    pub now_ns: u64,
    /// Free segments the engine's GC keeps in reserve [segments] (the
    /// device's `gc_low`, set by the engine): policies that model their
    /// space budget (DOGI's configuration model) read it here.
    pub gc_reserve: u32,
    /// Segments sealed so far (source of `seal_seq`).
    seals: u64,
    /// log2(segment_blocks) when it is a power of two: a shift instead of a division.
    seg_shift: Option<u32>,
}

impl Ftl {
    /// An erased device with `groups` append points.
    pub fn new(geo: Geometry, groups: usize) -> Self {
        let n = geo.segments as usize;
        Ftl {
            geo,
            map: crate::huge::filled(UNMAPPED, geo.logical_blocks as usize),
            rev: crate::huge::filled(UNMAPPED, geo.physical_blocks as usize),
            segs: Segments::erased(n),
            free: (0..geo.segments).collect(),
            groups: vec![
                Group {
                    open: NO_SEGMENT,
                    next: 0
                };
                groups
            ],
            now: 0,
            now_ns: 0,
            gc_reserve: 0,
            seals: 0,
            seg_shift: geo
                .segment_blocks
                .is_power_of_two()
                .then(|| geo.segment_blocks.trailing_zeros()),
        }
    }

    /// Segment holding physical block `pba`.
    #[inline(always)]
    pub fn segment_of(&self, pba: u32) -> SegmentId {
        match self.seg_shift {
            Some(s) => pba >> s,
            None => pba / self.geo.segment_blocks,
        }
    }

    /// Physical block of `lba`, if mapped.
    #[inline(always)]
    pub fn lookup(&self, lba: u32) -> Option<u32> {
        let p = self.map[lba as usize];
        (p != UNMAPPED).then_some(p)
    }

    /// LBA stored at physical block `pba`, if that copy is valid.
    #[inline(always)]
    pub fn stored_at(&self, pba: u32) -> Option<u32> {
        let l = self.rev[pba as usize];
        (l != UNMAPPED).then_some(l)
    }

    /// Number of free segments.
    #[inline(always)]
    pub fn free_segments(&self) -> usize {
        self.free.len()
    }

    /// Number of groups (append points).
    pub fn group_count(&self) -> usize {
        self.groups.len()
    }

    /// Invalidate the copy at `pba`. Returns its segment and that segment's
    /// new valid count.
    #[inline(always)]
    pub(crate) fn invalidate(&mut self, pba: u32) -> (SegmentId, u32) {
        debug_assert!(self.rev[pba as usize] != UNMAPPED);
        self.rev[pba as usize] = UNMAPPED;
        let seg = self.segment_of(pba);
        let v = &mut self.segs.valid[seg as usize];
        *v -= 1;
        (seg, *v)
    }

    /// Append `lba` to group `g`'s open segment, opening a free segment if the
    /// group has none. Updates both maps. Returns the new physical block and,
    /// if the append filled the segment, that (now sealed) segment. Fails only
    /// when no free segment is left.
    #[inline(always)]
    pub(crate) fn append(&mut self, g: GroupId, lba: u32) -> Result<(u32, Option<SegmentId>), ()> {
        let seg_blocks = self.geo.segment_blocks;
        let grp = &mut self.groups[g as usize];
        if grp.open == NO_SEGMENT {
            let seg = self.free.pop_front().ok_or(())?;
            self.segs.state[seg as usize] = SegState::Open;
            self.segs.group[seg as usize] = g;
            self.segs.open_time[seg as usize] = self.now;
            grp.open = seg;
            grp.next = 0;
        }
        let seg = grp.open;
        let pba = seg * seg_blocks + grp.next;
        grp.next += 1;
        let sealed = if grp.next == seg_blocks {
            grp.open = NO_SEGMENT;
            self.seals += 1;
            self.segs.state[seg as usize] = SegState::Sealed;
            self.segs.seal_time[seg as usize] = self.now;
            self.segs.seal_seq[seg as usize] = self.seals;
            Some(seg)
        } else {
            None
        };
        self.rev[pba as usize] = lba;
        self.map[lba as usize] = pba;
        self.segs.valid[seg as usize] += 1;
        Ok((pba, sealed))
    }

    /// Erase a sealed segment whose valid blocks have all been moved or are
    /// invalid, and return it to the free pool.
    pub(crate) fn erase(&mut self, seg: SegmentId) {
        let s = seg as usize;
        let b = self.geo.segment_blocks as usize;
        self.rev[s * b..(s + 1) * b].fill(UNMAPPED);
        self.segs.valid[s] = 0;
        self.segs.state[s] = SegState::Free;
        self.segs.erase_count[s] += 1;
        self.free.push_back(seg);
    }

    /// Unmap `lba` (trim). Returns the invalidated copy's segment and new
    /// valid count, or `None` if it was not mapped.
    #[inline(always)]
    pub(crate) fn unmap(&mut self, lba: u32) -> Option<(SegmentId, u32)> {
        let p = self.map[lba as usize];
        if p == UNMAPPED {
            return None;
        }
        self.map[lba as usize] = UNMAPPED;
        Some(self.invalidate(p))
    }

    /// Seal group `g`'s open segment as it is (a group no longer in use);
    /// returns it and how many of its slots were never written.
    pub(crate) fn close_group(&mut self, g: GroupId) -> Option<(SegmentId, u32)> {
        let grp = self.groups.get_mut(g as usize)?;
        if grp.open == NO_SEGMENT {
            return None;
        }
        let seg = grp.open;
        let unwritten = self.geo.segment_blocks - grp.next;
        grp.open = NO_SEGMENT;
        grp.next = 0;
        self.seals += 1;
        self.segs.state[seg as usize] = SegState::Sealed;
        self.segs.seal_time[seg as usize] = self.now;
        self.segs.seal_seq[seg as usize] = self.seals;
        Some((seg, unwritten))
    }

    /// Make sure group `g` exists (policies may add groups at run time).
    #[inline(always)]
    pub(crate) fn ensure_group(&mut self, g: GroupId) {
        if g as usize >= self.groups.len() {
            self.groups.resize(
                g as usize + 1,
                Group {
                    open: NO_SEGMENT,
                    next: 0,
                },
            );
        }
    }

    /// Start loading what a write of `lba` will touch: its forward-map entry
    /// and, if that is already cached, the reverse-map slot of its old copy.
    #[inline(always)]
    pub fn prefetch_write(&self, lba: u32, deep: bool) {
        crate::prefetch::prefetch(&self.map, lba as usize);
        if deep {
            let p = self.map[lba as usize];
            if p != UNMAPPED {
                crate::prefetch::prefetch(&self.rev, p as usize);
            }
        }
    }

    /// Bytes held by the engine's per-block and per-segment state: the
    /// tables' sizes, not their vectors' capacities (spare room for huge
    /// pages is address space, and a state loaded from a file has other
    /// capacities than one built: the figure must not depend on it).
    pub fn memory_bytes(&self) -> usize {
        use std::mem::{size_of, size_of_val};
        let s = &self.segs;
        size_of_val(&self.map[..])
            + size_of_val(&self.rev[..])
            + size_of_val(&s.valid[..])
            + size_of_val(&s.state[..])
            + size_of_val(&s.group[..])
            + size_of_val(&s.open_time[..])
            + size_of_val(&s.seal_time[..])
            + size_of_val(&s.seal_seq[..])
            + size_of_val(&s.erase_count[..])
            // The free queue holds at most every segment.
            + s.valid.len() * size_of::<SegmentId>()
            + size_of_val(&self.groups[..])
    }
}
