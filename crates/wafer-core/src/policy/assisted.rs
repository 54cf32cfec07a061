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
//! `+ngrp` (NoDaP's group configuration with the policy's predictions) needs
//! a policy that predicts multi-class lifetimes (ML-DT, DOGI) and is not
//! offered yet.

use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{json, Value};

use super::{Ctx, Event, GcBlock, Placement, UserWrite};
use crate::error::{Error, Result};
use crate::ftl::{GroupId, SegmentId};
use crate::future::{accuracy::class_of, remaining, Annotation, NEVER};
use crate::sim::{RunConfig, Simulation};

/// A policy with NoDaP's user placement and/or GC relocation.
pub struct Assisted {
    inner: Box<dyn Placement>,
    name: &'static str,
    base: String,
    user: bool,
    gc: bool,
    /// Groups by increasing median lifetime.
    order: Vec<GroupId>,
    /// Lifetime bounds between consecutive groups of `order`.
    bounds: Vec<u64>,
    medians: Vec<Option<u64>>,
}

/// Interned composite names (`name()` is `&'static str`; few distinct ones).
fn intern(name: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<Vec<&'static str>>> = OnceLock::new();
    let mut v = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(n) = v.iter().find(|n| **n == name) {
        return n;
    }
    let n: &'static str = Box::leak(name.to_string().into_boxed_str());
    v.push(n);
    n
}

/// Split `name` into a base policy and its oracle-assist suffixes, if it has any.
pub fn parse(name: &str) -> Result<Option<(&str, bool, bool)>> {
    let mut parts = name.split('+');
    let base = parts.next().unwrap_or_default();
    let (mut user, mut gc) = (false, false);
    let mut any = false;
    for s in parts {
        any = true;
        match s {
            "nu" => user = true,
            "ngc" => gc = true,
            "ngrp" => {
                return Err(Error::Parameter {
                    policy: name.into(),
                    reason: "+ngrp (NoDaP's group configuration) needs a policy that predicts \
                             multi-class lifetimes (ML-DT, DOGI), which wafer does not have yet"
                        .into(),
                })
            }
            other => {
                return Err(Error::Parameter {
                    policy: name.into(),
                    reason: format!(
                        "unknown oracle assist '+{other}'; known: +nu (NoDaP user placement), \
                         +ngc (NoDaP GC relocation)"
                    ),
                })
            }
        }
    }
    Ok(any.then_some((base, user, gc)))
}

impl Assisted {
    /// Wrap `inner` (registered as `base`) under the full name `name`.
    pub fn new(inner: Box<dyn Placement>, name: &str, base: &str, user: bool, gc: bool) -> Self {
        Assisted {
            inner,
            name: intern(name),
            base: base.to_string(),
            user,
            gc,
            order: Vec::new(),
            bounds: Vec::new(),
            medians: Vec::new(),
        }
    }

    /// The group whose range holds `lifetime`; if the policy does not use
    /// that group now, the nearest one it uses (shorter-lived first).
    #[inline]
    fn oracle_group(&self, lifetime: u64) -> GroupId {
        let k = class_of(&self.bounds, lifetime);
        let active = self.inner.active_groups();
        let ok = |i: &usize| (self.order[*i] as usize) < active;
        let i = (0..=k)
            .rev()
            .find(ok)
            .or_else(|| (k + 1..self.order.len()).find(ok));
        i.map_or(0, |i| self.order[i])
    }

    /// Order groups by median lifetime and cut the axis between them.
    fn set_bins(&mut self, medians: Vec<Option<u64>>) {
        let mut by: Vec<(u64, GroupId)> = medians
            .iter()
            .enumerate()
            .filter_map(|(g, m)| m.map(|m| (m, g as GroupId)))
            .collect();
        by.sort_unstable();
        by.dedup_by_key(|(m, _)| *m);
        self.order = by.iter().map(|&(_, g)| g).collect();
        self.bounds = by
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
        self.medians = medians;
    }
}

impl Placement for Assisted {
    fn name(&self) -> &'static str {
        self.name
    }
    fn groups(&self) -> usize {
        self.inner.groups()
    }
    fn needs_future(&self) -> bool {
        true
    }

    fn prepare(&mut self, run: &RunConfig, ann: &Arc<Annotation>) -> Result<()> {
        self.inner.prepare(run, ann)?;
        let mut c = run.clone();
        c.policy = self.base.clone();
        c.accuracy = false;
        let mut sim = Simulation::with_annotation(c, Some(ann.clone()))?;
        sim.run()?;
        let r = sim.result();
        let medians = r
            .groups
            .iter()
            .map(|g| {
                g.lifetime
                    .as_ref()
                    .map(|l| l.median.unwrap_or(NEVER))
                    .filter(|_| g.user_writes + g.gc_writes > 0)
            })
            .collect();
        self.set_bins(medians);
        Ok(())
    }

    fn place_user(&mut self, ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]) {
        self.inner.place_user(ctx, writes, out);
        if let (true, false, Some(f)) = (self.user, self.order.is_empty(), ctx.future) {
            for (i, (w, g)) in writes.iter().zip(out.iter_mut()).enumerate() {
                *g = self.oracle_group(remaining(f.batch_death(i), w.time));
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
        match (self.gc, self.order.is_empty(), ctx.future) {
            (true, false, Some(f)) => self.oracle_group(remaining(f.live_death(b.lba), ctx.now())),
            _ => g,
        }
    }
    fn select_victim(&mut self, ctx: &Ctx, max_valid: u32) -> Option<SegmentId> {
        self.inner.select_victim(ctx, max_valid)
    }
    fn on_event(&mut self, ctx: &Ctx, ev: &Event) {
        self.inner.on_event(ctx, ev);
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
                "group_order": self.order,
                "bounds": self.bounds,
                "median_lifetimes": self.medians,
            }
        }))
    }
    fn class_bounds(&self, gc: bool) -> &[u64] {
        if (gc && self.gc) || (!gc && self.user) {
            &self.bounds
        } else {
            self.inner.class_bounds(gc)
        }
    }
    fn predicted_class(&self, group: GroupId, gc: bool) -> Option<u8> {
        if (gc && self.gc) || (!gc && self.user) {
            self.order.iter().position(|&g| g == group).map(|k| k as u8)
        } else {
            self.inner.predicted_class(group, gc)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(parse("midas").unwrap(), None);
        assert_eq!(parse("midas+ngc").unwrap(), Some(("midas", false, true)));
        assert_eq!(
            parse("sepbit+nu+ngc").unwrap(),
            Some(("sepbit", true, true))
        );
        let e = parse("midas+ngrp").unwrap_err().to_string();
        assert!(e.contains("multi-class"), "{e}");
        let e = parse("midas+xyz").unwrap_err().to_string();
        assert!(e.contains("+nu") && e.contains("+ngc"), "{e}");
        assert!(std::ptr::eq(intern("a+nu"), intern("a+nu")));
    }

    #[test]
    fn bins_split_at_geometric_means() {
        let inner = Box::new(super::super::two_r::TwoR);
        let mut a = Assisted::new(inner, "two-r+ngc", "two-r", false, true);
        a.set_bins(vec![Some(1 << 20), Some(1 << 10), None, Some(NEVER)]);
        assert_eq!(a.order, vec![1, 0, 3]);
        assert_eq!(a.bounds, vec![1 << 15, 1 << 22]);
        assert_eq!(a.oracle_group(5), 1);
        assert_eq!(a.oracle_group(1 << 16), 0);
        // 2R uses groups 0 and 1 only: group 3's blocks go to the nearest
        // group in use, the shorter-lived side first.
        assert_eq!(a.oracle_group(NEVER), 0);
    }
}
