//! Oracle-assisted variants, DOGI §3.2: a policy with one of its components
//! replaced by NoDaP's, to isolate what each component costs. Selected by
//! name: `POLICY+nu` (user-written blocks placed by their exact lifetime),
//! `POLICY+ngc` (GC-written blocks relocated by their exact remaining
//! lifetime), or both (`midas+nu+ngc`). Everything else (groups, victims,
//! the policy's own bookkeeping) stays the policy's.
//!
//! The policy's groups have no BIRs, so, as DOGI does for MiDAS and ML-DT,
//! a first replay of the unmodified policy measures the lifetimes of the
//! blocks each group receives; the groups, ordered by median lifetime, then
//! split the lifetime axis at the geometric means of neighbouring medians (a
//! group whose median is "never" takes everything above 4× the median
//! before it). Groups that share a median bin with a shorter-lived one get
//! no oracle placements, and a group the policy does not use at the moment
//! (MiDAS shrinks its chain) passes its blocks to the nearest one it uses.
//!
//! User-written blocks go only to groups that received user writes in the
//! measuring replay, GC-written ones only to groups that received GC writes
//! (SepBIT's and MiDAS's user and GC groups keep their roles), and a
//! relocation lands in its victim's own group only where the policy itself
//! would put it (a size-capped FIFO group would otherwise cycle the same
//! blocks).
//!
//! `+ngrp` (DOGI §3.2, `ml-dt+ngrp`): NoDaP's group configuration with the
//! policy's own predictions. NoDaP's offline search ([`super::nodap::search`])
//! runs on the stream first; a user block then goes to the NoDaP group whose
//! BIR holds its predicted lifetime (the geometric middle of the predicted
//! class's range), its other components unchanged (ML-DT's single GC group
//! and victims; NoDaP's size caps are not applied, its victim rule being
//! NoDaP's). With `+nu` / `+ngc` as well, the exact (remaining) lifetime
//! picks the NoDaP group (`ml-dt+nu+ngrp`, `ml-dt+ngc+ngrp`). Only ML-DT
//! takes it, as in the paper: the hot/non-hot policies predict no lifetime
//! classes to map, and DOGI's GC groups share ids with NoDaP's.

use serde_json::{json, Value};

use super::{Ctx, Event, GcBlock, Placement, UserWrite};
use crate::engine::RunService;
use crate::error::Result;
use crate::ftl::{GroupId, SegmentId};
use crate::future::{accuracy::class_of, remaining, NEVER};

/// A policy with NoDaP's user placement and/or GC relocation. Its bins come
/// from the measuring replay in `prepare` (run again on resume); its
/// checkpointed state is the inner policy's.
pub struct Assisted {
    inner: Box<dyn Placement>,
    name: &'static str,
    base: String,
    user: bool,
    gc: bool,
    /// Destinations of user-written blocks: the groups that received user
    /// writes in the measuring replay.
    user_bins: Bins,
    /// Destinations of GC-written blocks: the groups that received GC writes.
    gc_bins: Bins,
    medians: Vec<Option<u64>>,
    /// `+ngrp`: NoDaP's searched BIR bounds once prepared.
    grp: Option<Vec<u64>>,
}

/// Groups ordered by median lifetime, and the lifetime axis cut between them.
#[derive(Clone, Debug, Default, serde::Serialize)]
struct Bins {
    /// Groups by increasing median lifetime.
    order: Vec<GroupId>,
    /// Lifetime bounds between consecutive groups of `order`.
    bounds: Vec<u64>,
}

impl Bins {
    /// Bins of the groups with a median (`None`: not a destination).
    fn new(medians: &[Option<u64>]) -> Self {
        let mut by: Vec<(u64, GroupId)> = medians
            .iter()
            .enumerate()
            .filter_map(|(g, m)| m.map(|m| (m, g as GroupId)))
            .collect();
        by.sort_unstable();
        by.dedup_by_key(|(m, _)| *m);
        let bounds = by
            .windows(2)
            .map(|w| {
                let (a, b) = (w[0].0.max(1), w[1].0);
                if b == NEVER {
                    a.saturating_mul(4)
                } else {
                    ((a as f64 * b as f64).sqrt().round() as u64).max(a + 1)
                }
            })
            .collect();
        Bins {
            order: by.iter().map(|&(_, g)| g).collect(),
            bounds,
        }
    }

    /// The group whose range holds `lifetime`; if the policy does not use
    /// that group now (fewer than `active` groups), the nearest one it uses
    /// (shorter-lived first). `None` with no bins.
    #[inline]
    fn group(&self, lifetime: u64, active: usize) -> Option<GroupId> {
        self.group_but(lifetime, active, GroupId::MAX)
    }

    /// As [`Bins::group`], never choosing `except`.
    #[inline]
    fn group_but(&self, lifetime: u64, active: usize, except: GroupId) -> Option<GroupId> {
        let k = class_of(&self.bounds, lifetime);
        let ok = |i: &usize| (self.order[*i] as usize) < active && self.order[*i] != except;
        let i = (0..=k.min(self.order.len().checked_sub(1)?))
            .rev()
            .find(ok)
            .or_else(|| (k + 1..self.order.len()).find(ok))?;
        Some(self.order[i])
    }

    fn class(&self, group: GroupId) -> Option<u8> {
        self.order.iter().position(|&g| g == group).map(|k| k as u8)
    }
}

/// Which components an assisted variant takes from NoDaP.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Assists {
    /// User placement by exact lifetime (`+nu`).
    pub user: bool,
    /// GC relocation by exact remaining lifetime (`+ngc`).
    pub gc: bool,
    /// NoDaP's group configuration (`+ngrp`).
    pub grp: bool,
}

impl Assists {
    /// The assists' suffixes without the `+`, in the order `nu`, `ngc`, `ngrp`.
    pub fn names(&self) -> Vec<&'static str> {
        [(self.user, "nu"), (self.gc, "ngc"), (self.grp, "ngrp")]
            .into_iter()
            .filter_map(|(on, n)| on.then_some(n))
            .collect()
    }
}

/// A lifetime standing for class `k` of `bounds`: the geometric middle of
/// its range (half the first bound, twice the last).
fn representative(bounds: &[u64], k: usize) -> u64 {
    match (k.checked_sub(1).map(|j| bounds[j]), bounds.get(k)) {
        (None, Some(&hi)) => (hi / 2).max(1),
        (Some(lo), Some(&hi)) => (lo as f64 * hi as f64).sqrt().round() as u64,
        (Some(lo), None) => lo.saturating_mul(2),
        (None, None) => NEVER,
    }
}

impl Assisted {
    /// Wrap `inner` (registered as `base`) under the full name `name`.
    pub fn new(inner: Box<dyn Placement>, name: &str, base: &str, a: Assists) -> Self {
        Assisted {
            inner,
            name: crate::codec::static_str::intern(name),
            base: base.to_string(),
            user: a.user,
            gc: a.gc,
            user_bins: Bins::default(),
            gc_bins: Bins::default(),
            medians: Vec::new(),
            grp: a.grp.then(Vec::new),
        }
    }

    fn bins(&self, gc: bool) -> Option<&Bins> {
        match gc {
            true if self.gc => Some(&self.gc_bins),
            false if self.user => Some(&self.user_bins),
            _ => None,
        }
    }

    /// `+ngrp`: NoDaP's configuration for this stream.
    fn prepare_groups(&mut self, run: &dyn RunService) -> Result<()> {
        let opts = super::nodap::search::Options {
            min_gain: 0.05,
            max_groups: 10,
        };
        let r = super::nodap::search::search(run, &opts, &mut |_| {})?;
        self.grp = Some(r.birs);
        Ok(())
    }
}

impl Placement for Assisted {
    fn save_state(&self) -> Result<Vec<u8>> {
        self.inner.save_state()
    }
    fn load_state(&mut self, bytes: &[u8]) -> Result<()> {
        self.inner.load_state(bytes)
    }
    fn training_in_flight(&self) -> bool {
        self.inner.training_in_flight()
    }
    fn name(&self) -> &'static str {
        self.name
    }
    fn groups(&self) -> usize {
        self.inner.groups()
    }
    fn needs_future(&self) -> bool {
        true
    }

    fn prepare(&mut self, run: &dyn RunService) -> Result<()> {
        self.inner.prepare(run)?;
        if self.grp.is_some() {
            return self.prepare_groups(run);
        }
        let r = run.replay(&self.base, None, &mut |p| p)?;
        let medians: Vec<Option<u64>> = r
            .groups
            .iter()
            .map(|g| g.lifetime.as_ref().map(|l| l.median.unwrap_or(NEVER)))
            .collect();
        let only = |keep: &dyn Fn(usize) -> bool| -> Vec<Option<u64>> {
            medians
                .iter()
                .enumerate()
                .map(|(g, m)| m.filter(|_| keep(g)))
                .collect()
        };
        self.user_bins = Bins::new(&only(&|g| r.groups[g].user_writes > 0));
        self.gc_bins = Bins::new(&only(&|g| r.groups[g].gc_writes > 0));
        self.medians = medians;
        Ok(())
    }

    fn place_user(&mut self, ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]) {
        self.inner.place_user(ctx, writes, out);
        if let Some(birs) = &self.grp {
            let classes = self.inner.class_bounds(false);
            for (i, (w, g)) in writes.iter().zip(out.iter_mut()).enumerate() {
                let life = match (self.user, ctx.future) {
                    (true, Some(f)) => remaining(f.batch_death(i), w.time),
                    _ => match self.inner.predicted_user_class(i, *g) {
                        Some(k) => representative(classes, k as usize),
                        // No prediction yet (before the first model): the
                        // coldest group, as ML-DT itself does.
                        None => NEVER,
                    },
                };
                *g = class_of(birs, life) as GroupId;
            }
            return;
        }
        if let (true, Some(f)) = (self.user, ctx.future) {
            let active = self.inner.active_groups();
            for (i, (w, g)) in writes.iter().zip(out.iter_mut()).enumerate() {
                let life = remaining(f.batch_death(i), w.time);
                *g = self.user_bins.group(life, active).unwrap_or(*g);
            }
        }
    }
    fn on_user_write(&mut self, lba: u32, time: u64, group: GroupId) {
        self.inner.on_user_write(lba, time, group);
    }
    fn prefetch(&self, lba: u32) {
        self.inner.prefetch(lba);
    }
    fn place_gc(&mut self, ctx: &Ctx, b: &GcBlock) -> GroupId {
        let g = self.inner.place_gc(ctx, b);
        if let (Some(birs), true, Some(f)) = (&self.grp, self.gc, ctx.future) {
            return class_of(birs, remaining(f.live_death(b.lba), ctx.now())) as GroupId;
        }
        match (self.gc, ctx.future) {
            (true, Some(f)) => {
                let life = remaining(f.live_death(b.lba), ctx.now());
                // Back into the victim's own group only where the policy
                // itself sends blocks: size-capped FIFO groups (MiDAS) would
                // otherwise move the same blocks round in a loop.
                let except = if g == b.from_group {
                    GroupId::MAX
                } else {
                    b.from_group
                };
                self.gc_bins
                    .group_but(life, self.inner.active_groups(), except)
                    .unwrap_or(g)
            }
            _ => g,
        }
    }
    fn select_victim(&mut self, ctx: &Ctx, max_valid: u32) -> Option<SegmentId> {
        self.inner.select_victim(ctx, max_valid)
    }
    super::forward_block_hooks!();
    fn on_event(&mut self, ctx: &Ctx, ev: &Event) {
        self.inner.on_event(ctx, ev);
    }
    fn on_workload_start(&mut self, ctx: &Ctx) {
        self.inner.on_workload_start(ctx);
    }
    fn on_read(&mut self, ctx: &Ctx, req: &crate::request::Request) {
        self.inner.on_read(ctx, req);
    }
    fn retired_groups(&self, out: &mut Vec<GroupId>) {
        if self.grp.is_none() {
            self.inner.retired_groups(out);
        }
    }
    fn active_groups(&self) -> usize {
        self.inner.active_groups()
    }
    fn on_trim(&mut self, ctx: &Ctx, lba: u32) {
        self.inner.on_trim(ctx, lba);
    }
    fn memory_bytes(&self) -> usize {
        self.inner.memory_bytes()
    }
    fn state(&self) -> Option<Value> {
        Some(json!({
            "policy": self.inner.state(),
            "assist": {
                "user": self.user,
                "gc": self.gc,
                "user_destinations": self.bins(false),
                "gc_destinations": self.bins(true),
                "median_lifetimes": self.medians,
                "nodap_groups": self.grp,
            }
        }))
    }
    fn class_bounds(&self, gc: bool) -> &[u64] {
        if let (Some(b), false) = (&self.grp, gc && !self.gc) {
            return b;
        }
        match self.bins(gc) {
            Some(b) => &b.bounds,
            None => self.inner.class_bounds(gc),
        }
    }
    fn predicted_user_class(&self, i: usize, group: GroupId) -> Option<u8> {
        if self.grp.is_some() {
            let predicted = self.user || self.inner.predicted_user_class(i, group).is_some();
            return predicted.then_some(group as u8);
        }
        if self.user {
            self.predicted_class(group, false)
        } else {
            self.inner.predicted_user_class(i, group)
        }
    }
    fn predicted_class(&self, group: GroupId, gc: bool) -> Option<u8> {
        if self.grp.is_some() {
            return (!gc || self.gc).then_some(group as u8);
        }
        match self.bins(gc) {
            Some(b) => b.class(group),
            None => self.inner.predicted_class(group, gc),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_class_stands_for_the_geometric_middle_of_its_range() {
        assert_eq!(representative(&[10, 40], 0), 5);
        assert_eq!(representative(&[10, 40], 1), 20);
        assert_eq!(representative(&[10, 40], 2), 80);
    }

    #[test]
    fn bins_split_at_geometric_means() {
        let b = Bins::new(&[Some(1 << 20), Some(1 << 10), None, Some(NEVER)]);
        assert_eq!(b.order, vec![1, 0, 3]);
        assert_eq!(b.bounds, vec![1 << 15, 1 << 22]);
        assert_eq!(b.group(5, 4), Some(1));
        assert_eq!(b.group(1 << 16, 4), Some(0));
        assert_eq!(b.group(NEVER, 4), Some(3));
        assert_eq!(b.class(3), Some(2));
        assert_eq!(b.class(2), None);
        // With groups 0 and 1 in use only, group 3's blocks go to the
        // nearest group in use, the shorter-lived side first.
        assert_eq!(b.group(NEVER, 2), Some(0));
        assert_eq!(Bins::default().group(5, 4), None);
    }
}
