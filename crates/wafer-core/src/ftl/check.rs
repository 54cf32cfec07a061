//! The FTL invariant checker, used by property tests and by the debug mode
//! (`check_every`). O(physical blocks); never on the hot path.
//!
//! Invariants:
//! 1. every mapped LBA has exactly one valid physical copy, and it points back;
//! 2. each segment's valid count equals the number of valid slots in it;
//! 3. segment states partition the device: free segments are exactly the free
//!    pool (empty, unique), open segments are exactly the groups' append
//!    points (nothing valid past the write pointer), the rest are sealed.

use super::{Ftl, SegState, NO_SEGMENT, UNMAPPED};
use crate::error::{Error, Result};

fn broken(msg: String) -> Result<()> {
    Err(Error::Invariant(msg))
}

/// Check every invariant of `ftl`.
pub fn check(ftl: &Ftl) -> Result<()> {
    let geo = &ftl.geo;
    let sb = geo.segment_blocks as usize;
    let mut mapped = 0u64;
    for (lba, &p) in ftl.map.iter().enumerate() {
        if p == UNMAPPED {
            continue;
        }
        mapped += 1;
        if p as u64 >= geo.physical_blocks {
            return broken(format!("LBA {lba} maps to {p}, beyond the device"));
        }
        if ftl.rev[p as usize] != lba as u32 {
            return broken(format!(
                "LBA {lba} maps to {p}, which holds {}",
                ftl.rev[p as usize]
            ));
        }
        if ftl.segs.state[p as usize / sb] == SegState::Free {
            return broken(format!(
                "LBA {lba} maps into free segment {}",
                p as usize / sb
            ));
        }
    }
    let mut valid_total = 0u64;
    for seg in 0..geo.segments as usize {
        let slots = &ftl.rev[seg * sb..(seg + 1) * sb];
        let valid = slots.iter().filter(|&&l| l != UNMAPPED).count() as u32;
        if valid != ftl.segs.valid[seg] {
            return broken(format!(
                "segment {seg} counts {} valid blocks but holds {valid}",
                ftl.segs.valid[seg]
            ));
        }
        for (off, &l) in slots.iter().enumerate() {
            if l != UNMAPPED && ftl.map[l as usize] != (seg * sb + off) as u32 {
                return broken(format!(
                    "slot {} holds LBA {l}, which maps elsewhere",
                    seg * sb + off
                ));
            }
        }
        valid_total += valid as u64;
    }
    if valid_total != mapped {
        return broken(format!(
            "{valid_total} valid slots for {mapped} mapped LBAs"
        ));
    }
    let mut in_pool = vec![false; geo.segments as usize];
    for &s in &ftl.free {
        if std::mem::replace(&mut in_pool[s as usize], true) {
            return broken(format!("segment {s} is twice in the free pool"));
        }
        if ftl.segs.state[s as usize] != SegState::Free || ftl.segs.valid[s as usize] != 0 {
            return broken(format!("pooled segment {s} is not free and empty"));
        }
    }
    let mut open_owner = vec![usize::MAX; geo.segments as usize];
    for (g, grp) in ftl.groups.iter().enumerate() {
        if grp.open == NO_SEGMENT {
            continue;
        }
        let s = grp.open as usize;
        if ftl.segs.state[s] != SegState::Open
            || ftl.segs.group[s] as usize != g
            || open_owner[s] != usize::MAX
        {
            return broken(format!(
                "group {g}'s append point {s} is not an open segment of its own"
            ));
        }
        open_owner[s] = g;
        if ftl.rev[s * sb + grp.next as usize..(s + 1) * sb]
            .iter()
            .any(|&l| l != UNMAPPED)
        {
            return broken(format!("segment {s} holds data past its write pointer"));
        }
    }
    for seg in 0..geo.segments as usize {
        let ok = match ftl.segs.state[seg] {
            SegState::Free => in_pool[seg],
            SegState::Open => open_owner[seg] != usize::MAX,
            SegState::Sealed => !in_pool[seg] && open_owner[seg] == usize::MAX,
        };
        if !ok {
            return broken(format!(
                "segment {seg} is {:?} but not accounted as such",
                ftl.segs.state[seg]
            ));
        }
    }
    Ok(())
}
