//! `warcip`: WARCIP, "Write Amplification Reduction by Clustering I/O
//! Pages" (Yang et al., SYSTOR'19), as SepBIT's trace replayer implements it
//! (`trace_replay/.../placement/Warcip.java`), the reference here.
//!
//! User writes are clustered by their rewrite interval: the time since the
//! LBA's last user write plus a penalty (the age it had when GC last moved
//! it), 0 for a new LBA; each write joins the cluster with the nearest
//! centre (ties: the higher cluster), and the centre becomes the mean of the
//! intervals written into the cluster's current segment. GC writes form a
//! cluster of their own (cluster 0). Every 256 sealed user-cluster segments,
//! a cluster that took more than half of the writes since the last check is
//! split (a new cluster at the midpoint of its neighbours' centres) while
//! fewer than `classes` clusters exist; otherwise the first cluster that took
//! less than a segment's worth is merged away when its segment next seals.
//! Intervals are in trace microseconds (the request's time), as in the
//! replayer.
//!
//! Clusters are kept in centre order as the replayer's list is; each owns a
//! wafer group (a split takes a free group id, a merge frees one).
//! Deviation: the interval clock is the request's arrival time; the replayer
//! uses the same (its `globalTimestampInUs`).

use serde::{Deserialize, Serialize};

use super::kit::classes::check_classes;
use super::{Ctx, Event, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::ftl::GroupId;
use crate::params;

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "warcip",
    description: "WARCIP (SYSTOR'19): user writes clustered by rewrite interval, split/merge every 256 segments, GC writes apart; 6 groups",
    family: crate::policy::Family::RuleBased,
    needs_future: false,
    defaults: params::defaults::<Params>,
    build: |p, geo| {
        let p: Params = params::parse("warcip", p)?;
        check_classes("warcip", p.classes, 2)?;
        Ok(Box::new(Warcip::new(&p, geo.logical_blocks, geo.segment_blocks)))
    },
};

/// WARCIP's parameters (the replayer's defaults).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Most clusters, the GC cluster included (the replayer's open segments).
    pub classes: u32,
    /// Sealed user-cluster segments between split/merge checks [segments].
    pub check_segments: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            classes: 6,
            check_segments: 256,
        }
    }
}

/// One cluster.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
struct Cluster {
    /// Mean rewrite interval of the blocks in its current segment [µs].
    center: f64,
    /// Blocks written into its current segment.
    blocks: u64,
    /// Writes since the last split/merge check.
    writes: u64,
    /// The wafer group it writes to.
    group: GroupId,
}

/// Never written by the user.
const NEVER: u64 = u64::MAX;

/// WARCIP state.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Warcip {
    max_clusters: usize,
    check_segments: u32,
    seg_blocks: u64,
    /// Last user write of each LBA [µs], or [`NEVER`].
    last_us: Vec<u64>,
    /// Penalty of each LBA: its age when GC last moved it [µs].
    penalty_us: Vec<u64>,
    /// Clusters in the replayer's list order; 0 is the GC cluster.
    clusters: Vec<Cluster>,
    total_writes: u64,
    sealed_user: u32,
    /// Cluster index to merge away at its next seal.
    next_merge: Option<usize>,
    splits: u32,
    merges: u32,
}

impl Warcip {
    fn new(p: &Params, logical_blocks: u32, segment_blocks: u32) -> Self {
        Warcip {
            max_clusters: p.classes as usize,
            check_segments: p.check_segments.max(1),
            seg_blocks: segment_blocks as u64,
            last_us: vec![NEVER; logical_blocks as usize],
            penalty_us: vec![0; logical_blocks as usize],
            clusters: (0..p.classes)
                .map(|g| Cluster {
                    center: 0.0,
                    blocks: 0,
                    writes: 0,
                    group: g as GroupId,
                })
                .collect(),
            total_writes: 0,
            sealed_user: 0,
            next_merge: None,
            splits: 0,
            merges: 0,
        }
    }

    /// The nearest user cluster to `interval` (ties: the higher index).
    fn nearest(&self, interval: f64) -> usize {
        let mut best = (1, f64::MAX);
        for i in (1..self.clusters.len()).rev() {
            let d = (self.clusters[i].center - interval).abs();
            if d < best.1 {
                best = (i, d);
            }
        }
        best.0
    }

    /// The replayer's `splitAndMerge`, every `check_segments` user seals.
    fn split_and_merge(&mut self) {
        let n = self.clusters.len();
        let hot = (1..n).find(|&i| self.clusters[i].writes > self.total_writes / 2);
        match hot {
            Some(i) if n < self.max_clusters => {
                let free = (0..self.max_clusters as GroupId)
                    .find(|g| self.clusters.iter().all(|c| c.group != *g))
                    .expect("fewer clusters than groups");
                // after the insertion, the old cluster i sits at i + 1
                let center = (self.clusters[i - 1].center + self.clusters[i].center) / 2.0;
                self.clusters.insert(
                    i,
                    Cluster {
                        center,
                        blocks: 0,
                        writes: 0,
                        group: free,
                    },
                );
                self.splits += 1;
            }
            _ => {
                if let Some(i) = (1..n).find(|&i| self.clusters[i].writes < self.seg_blocks) {
                    self.next_merge.get_or_insert(i);
                }
            }
        }
        self.total_writes = 0;
        for c in &mut self.clusters {
            c.writes = 0;
        }
    }
}

impl Placement for Warcip {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "warcip"
    }

    fn groups(&self) -> usize {
        self.max_clusters
    }

    fn place_user(&mut self, _ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]) {
        for (w, g) in writes.iter().zip(out.iter_mut()) {
            let l = w.lba as usize;
            let now = w.req_time_ns / 1000;
            let interval = match self.last_us[l] {
                NEVER => 0,
                t => now.saturating_sub(t) + self.penalty_us[l],
            };
            self.last_us[l] = now;
            self.penalty_us[l] = 0;
            let i = self.nearest(interval as f64);
            let c = &mut self.clusters[i];
            c.center = (c.center * c.blocks as f64 + interval as f64) / (c.blocks + 1) as f64;
            c.blocks += 1;
            c.writes += 1;
            self.total_writes += 1;
            *g = c.group;
        }
    }

    /// Both writes read the LBA's last time and penalty: start loading
    /// them early (they are far larger than the caches).
    fn prefetch(&self, lba: u32) {
        crate::prefetch::prefetch(&self.last_us, lba as usize);
        crate::prefetch::prefetch(&self.penalty_us, lba as usize);
    }

    fn place_gc(&mut self, ctx: &Ctx, b: &GcBlock) -> GroupId {
        let l = b.lba as usize;
        if self.last_us[l] != NEVER {
            self.penalty_us[l] = (ctx.ftl.now_ns / 1000).saturating_sub(self.last_us[l]);
        }
        self.clusters[0].group
    }

    fn on_event(&mut self, _ctx: &Ctx, ev: &Event) {
        let Event::Sealed { group, .. } = *ev else {
            return;
        };
        let Some(i) = self.clusters.iter().position(|c| c.group == group) else {
            return;
        };
        if i != 0 {
            self.sealed_user += 1;
        }
        if self.next_merge == Some(i) {
            self.clusters.remove(i);
            self.next_merge = None;
            self.merges += 1;
        } else {
            self.clusters[i].blocks = 0;
        }
        if self.sealed_user == self.check_segments {
            self.sealed_user = 0;
            self.split_and_merge();
        }
    }

    fn state(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({
            "clusters": self.clusters.len(),
            "centers_us": self.clusters.iter().map(|c| c.center).collect::<Vec<_>>(),
            "splits": self.splits,
            "merges": self.merges,
        }))
    }

    fn memory_bytes(&self) -> usize {
        self.last_us.capacity() * 8 + self.penalty_us.capacity() * 8
    }
}
