//! `eti`: extent-based temperature identification (Shafaei, Desnoyers &
//! Fitzpatrick, "Write Amplification Reduction in Flash-Based SSDs Through
//! Extent-Based Temperature Identification", HotStorage'16), as SepBIT's
//! trace replayer implements it (`trace_replay/.../placement/ETI.java`), the
//! reference here.
//!
//! The address space is a list of extents, each with a write count (0..15).
//! A write request bumps the count of the extents it covers, splitting an
//! extent it covers in part (while fewer than 1,024 extents exist; a partly
//! covered extent is left alone otherwise, a fully covered one is bumped);
//! every 4,096 requests all counts halve and neighbours merge (two hot
//! extents of equal count, or two cold ones). A user block is hot (group 0)
//! if its extent's count is at least 4, else cold (group 1); GC writes go to
//! group 2. The initial extent spans the logical space plus 1,024 blocks, as
//! the replayer's does. No deviation from the replayer. `classes` is the
//! replayer's open segments per log: ETI writes to 3 of them whatever the
//! count, which only changes the order in which the replayer lists segments
//! (`--setup sepbit-replayer`'s ties).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Ctx, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::ftl::GroupId;
use crate::params;

/// ETI's parameters.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// The replayer's open segments per log (ETI uses 3 of them) [segments].
    pub classes: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params { classes: 6 }
    }
}

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "eti",
    description: "ETI (HotStorage'16): per-extent write counts with split/decay/merge; hot, cold and GC groups",
    family: crate::policy::Family::RuleBased,
    needs_future: false,
    defaults: params::defaults::<Params>,
    build: |p, geo| {
        let p = params::parse::<Params>("eti", p)?;
        super::kit::classes::check_classes("eti", p.classes, 3)?;
        let mut extents = BTreeMap::new();
        extents.insert(0, (geo.logical_blocks as u64 + SLACK, 0));
        Ok(Box::new(Eti {
            extents,
            requests: 0,
        }))
    },
};

/// Blocks the initial extent spans beyond the logical space (the replayer's).
const SLACK: u64 = 1024;
/// Most extents kept.
const MAX_EXTENTS: usize = 1024;
/// Requests between decays.
const DECAY_REQUESTS: u64 = 4096;
/// Count at which an extent is hot.
const HOT: u8 = 4;
/// Largest count.
const MAX_COUNT: u8 = 15;

/// ETI state: extents by start block, (length [blocks], write count).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Eti {
    extents: BTreeMap<u64, (u64, u8)>,
    requests: u64,
}

impl Eti {
    /// Halve every count and merge neighbours of equal hot count or both cold.
    fn decay(&mut self) {
        let mut merged = BTreeMap::new();
        let mut cur: Option<(u64, u64, u8)> = None;
        for (&off, &(len, count)) in &self.extents {
            let count = count / 2;
            cur = match cur {
                None => Some((off, len, count)),
                Some((o, l, c)) if (c >= HOT && c == count) || (c < HOT && count < HOT) => {
                    Some((o, l + len, c))
                }
                Some((o, l, c)) => {
                    merged.insert(o, (l, c));
                    Some((off, len, count))
                }
            };
        }
        if let Some((o, l, c)) = cur {
            merged.insert(o, (l, c));
        }
        self.extents = merged;
    }

    /// A write request of `len` blocks at `lba`.
    fn add_request(&mut self, lba: u64, len: u64) {
        self.requests += 1;
        if self.requests >= DECAY_REQUESTS {
            self.decay();
            self.requests = 0;
        }
        let end = lba + len;
        let mut off = lba;
        while off < end {
            let Some((&e_off, &(e_len, e_count))) = self.extents.range(..=off).next_back() else {
                return;
            };
            let rest = end - off;
            let room = self.extents.len() < MAX_EXTENTS;
            if e_count == MAX_COUNT {
                // saturated: skip the extent
            } else if e_off == off && rest >= e_len {
                self.extents.insert(e_off, (e_len, e_count + 1));
            } else if e_off == off {
                if room {
                    self.extents.insert(e_off, (rest, e_count + 1));
                    self.extents.insert(e_off + rest, (e_len - rest, e_count));
                }
            } else if off + rest >= e_off + e_len {
                if room {
                    self.extents.insert(e_off, (off - e_off, e_count));
                    self.extents.insert(off, (e_off + e_len - off, e_count + 1));
                }
            } else if room {
                self.extents.insert(e_off, (off - e_off, e_count));
                self.extents.insert(off, (rest, e_count + 1));
                self.extents
                    .insert(off + rest, (e_off + e_len - (off + rest), e_count));
            }
            off = e_off + e_len;
        }
    }
}

impl Placement for Eti {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "eti"
    }

    fn groups(&self) -> usize {
        3
    }

    fn place_user(&mut self, _ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]) {
        for (w, g) in writes.iter().zip(out.iter_mut()) {
            if w.req_offset == 0 {
                self.add_request(w.lba as u64, w.req_blocks as u64);
            }
            let hot = self
                .extents
                .range(..=w.lba as u64)
                .next_back()
                .is_some_and(|(_, &(_, c))| c >= HOT);
            *g = if hot { 0 } else { 1 };
        }
    }

    fn place_gc(&mut self, _ctx: &Ctx, _b: &GcBlock) -> GroupId {
        2
    }

    fn state(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({"extents": self.extents.len()}))
    }

    fn memory_bytes(&self) -> usize {
        self.extents.len() * 40
    }
}
