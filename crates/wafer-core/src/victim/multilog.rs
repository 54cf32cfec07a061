//! MultiLog's victim selection (Stoica & Ailamaki, "Improving Flash Write
//! Performance by Using Update Frequency", VLDB'13), as SepBIT's trace
//! replayer does it (`selection/MultiLog.java`): the `multilog` placement
//! picks the class whose growth lowers the predicted WAF most
//! ([`crate::policy::Placement::victim_group`]); its least recently appended
//! eligible segment is the victim. Only meaningful with `--policy multilog`
//! (the run refuses other policies, as the replayer would crash on them).
//! When the class it names has no eligible segment, nothing is collected
//! (the replayer's GC then does nothing); when no class is named, the
//! oldest eligible segment of any class is taken.

use super::lru::oldest;
use super::VictimSelector;
use crate::ftl::{Ftl, GroupId, SegmentId};

/// LRU within the class MultiLog's model picks.
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub struct MultiLogVictim {
    group: Option<GroupId>,
}

impl VictimSelector for MultiLogVictim {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "multilog"
    }

    fn on_seal(&mut self, _seg: SegmentId, _ftl: &Ftl) {}

    fn needs_policy_group(&self) -> bool {
        true
    }

    fn set_policy_group(&mut self, group: Option<GroupId>) {
        self.group = group;
    }

    fn select(&mut self, ftl: &Ftl, max_valid: u32) -> Option<SegmentId> {
        let named = self.group.take();
        let in_class = named.and_then(|g| oldest(ftl, max_valid, |s| ftl.segs.group[s] == g));
        // under a watermark GC must free space: fall back to any class
        let fallback = named.is_none() || max_valid >= ftl.geo.segment_blocks;
        in_class.or_else(|| fallback.then(|| oldest(ftl, max_valid, |_| true)).flatten())
    }

    fn remove(&mut self, _seg: SegmentId, _ftl: &Ftl) {}

    fn memory_bytes(&self) -> usize {
        0
    }
}
