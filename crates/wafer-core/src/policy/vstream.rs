//! `vstream`: vStream (Yong et al., "vStream: virtual stream management for
//! multi-streamed SSDs", HotStorage'18), a baseline of FIOS §6.4, Fig. 15.
//! FIOS describes it in one sentence: vStream "identifies virtual streams by post-processing the dead
//! pages, and then uses k-means clustering to group any number of virtual
//! streams to an available number of physical streams" (§8, §2: the
//! applications give the virtual stream ids, RocksDB SST levels). The rest
//! is our reconstruction from vStream's public abstract: per-vStream lifetime
//! monitoring "with negligible memory overhead" and a run-time mapping of
//! vStreams onto physical streams.
//!
//! 1. vStream id: the application hint. `source=tenant` uses the tenant of
//!    a `mix:` workload (a trace's device id), a proxy for SST-level hints;
//!    `source=region` cuts the address space into `vstreams` equal ranges,
//!    for traces without application information.
//! 2. Dead-page monitor: one logical block in `sample` (16) is watched (one
//!    per aligned group of 16, chosen by a hash): when a watched block is
//!    overwritten or trimmed, its lifetime (user blocks since its write) is
//!    added to the vStream that wrote it.
//! 3. Every `remap_s` trace seconds (100 s, OFIOS's window; or `remap_dw`
//!    drive-writes) each vStream's mean log-lifetime of the window updates
//!    an EWMA (α = 0.5); a 1-D K-means weighted by the window's writes
//!    (quantile seeding) groups the vStreams into `streams` clusters,
//!    numbered by lifetime (shortest first, stream 0), and each vStream goes
//!    to its cluster's stream. vStreams with no dead page yet go to the
//!    longest-lifetime cluster's stream. Before the first remap every write
//!    is stream 0.
//! 4. GC keeps the physical stream.

use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::kit::kmeans::{kmeans, Init};
use super::kit::streams::{rank_map, warning, Clock, ShortRun, MIN_WINDOWS};
use super::{Ctx, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::device::Geometry;
use crate::engine::RunService;
use crate::error::{Error, Result};
use crate::ftl::GroupId;
use crate::model::train::TrainingStats;
use crate::params;
use crate::request::Request;

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "vstream",
    description: "vStream (HotStorage'18, as FIOS §6.4 compares it; reconstructed): virtual streams (tenant or region) with sampled dead-page lifetimes, 1-D K-means onto physical streams every 100 s",
    family: crate::policy::Family::Stream,
    needs_future: false,
    defaults: params::defaults::<Params>,
    build: |p, geo| {
        let p: Params = params::parse("vstream", p)?;
        Ok(Box::new(VStream::new(&p, geo)?))
    },
};

/// Where vStream ids come from.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The request's tenant (a mix's tenant, a trace's device id).
    Tenant,
    /// `vstreams` equal LBA ranges.
    Region,
}

/// Parameters.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Physical streams K.
    pub streams: u32,
    /// vStream ids: "tenant" or "region".
    pub source: Source,
    /// vStreams (region ranges; tenant ids are folded modulo this).
    pub vstreams: u32,
    /// Remapping period [trace seconds].
    pub remap_s: f64,
    /// Remapping period in drive-writes instead [drive-writes].
    pub remap_dw: Option<f64>,
    /// A run shorter than one period: `scale` the period to a tenth of it
    /// (with a warning) or `refuse` it (the earlier rule).
    pub short_run: ShortRun,
    /// One logical block in this many is watched by the dead-page monitor.
    pub sample: u32,
    /// EWMA weight of the newest window's mean log-lifetime.
    pub alpha: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            streams: 16,
            source: Source::Tenant,
            vstreams: 64,
            remap_s: 100.0,
            remap_dw: None,
            short_run: ShortRun::Scale,
            sample: 16,
            alpha: 0.5,
        }
    }
}

const NOT_LIVE: u64 = u64::MAX;

/// The `vstream` policy.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct VStream {
    streams: u32,
    source: Source,
    vstreams: u32,
    logical: u64,
    clock: Clock,
    short_run: ShortRun,
    /// Warnings for the result (a period scaled to a short run, a single
    /// tenant).
    warnings: Vec<Value>,
    alpha: f64,
    sample: u32,
    /// Watched block of each group of `sample` blocks: its write time and vStream.
    born: Vec<u64>,
    born_vs: Vec<u16>,
    /// Per vStream: this window's Σ ln(1 + lifetime), deaths, writes.
    log_sum: Vec<f64>,
    deaths: Vec<u64>,
    writes: Vec<u64>,
    /// EWMA of the mean log-lifetime (NaN: none yet).
    ewma: Vec<f64>,
    /// Physical stream of each vStream.
    map: Vec<u8>,
    mapped: bool,
    started: bool,
    next_remap: Option<u64>,
    remaps: u64,
    stats: TrainingStats,
}

impl VStream {
    fn new(p: &Params, geo: &Geometry) -> Result<Self> {
        let bad = |reason: String| Error::Parameter {
            policy: "vstream".into(),
            reason,
        };
        if p.streams == 0 || p.streams > 255 {
            return Err(bad(format!("streams = {}; must be 1..=255", p.streams)));
        }
        if p.vstreams == 0 || p.vstreams > 65_535 {
            return Err(bad(format!("vstreams = {}; must be 1..=65535", p.vstreams)));
        }
        if p.sample == 0 {
            return Err(bad("sample must be >= 1 (one watched block in N)".into()));
        }
        if !(p.alpha.is_finite() && p.alpha > 0.0 && p.alpha <= 1.0) {
            return Err(bad(format!("alpha = {}; must be in (0, 1]", p.alpha)));
        }
        let clock = Clock::new(
            "vstream",
            "remap_s",
            p.remap_s,
            p.remap_dw,
            geo.logical_blocks,
        )?;
        let groups = (geo.logical_blocks as usize).div_ceil(p.sample as usize);
        let v = p.vstreams as usize;
        Ok(VStream {
            streams: p.streams,
            source: p.source,
            vstreams: p.vstreams,
            logical: geo.logical_blocks as u64,
            clock,
            short_run: p.short_run,
            warnings: Vec::new(),
            alpha: p.alpha,
            sample: p.sample,
            born: vec![NOT_LIVE; groups],
            born_vs: vec![0; groups],
            log_sum: vec![0.0; v],
            deaths: vec![0; v],
            writes: vec![0; v],
            ewma: vec![f64::NAN; v],
            map: vec![0; v],
            mapped: false,
            started: false,
            next_remap: None,
            remaps: 0,
            stats: TrainingStats::default(),
        })
    }

    #[inline(always)]
    fn vstream_of(&self, w: &UserWrite) -> usize {
        match self.source {
            Source::Tenant => (w.tenant % self.vstreams) as usize,
            Source::Region => (w.lba as u64 * self.vstreams as u64 / self.logical) as usize,
        }
    }

    /// The watched block of `lba`'s group, if `lba` is it.
    #[inline(always)]
    fn watched(&self, lba: u32) -> Option<usize> {
        let g = lba / self.sample;
        let pick = (g as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
        (lba % self.sample == (pick % self.sample as u64) as u32).then_some(g as usize)
    }

    #[inline]
    fn death(&mut self, g: usize, now: u64) {
        let b = self.born[g];
        if b != NOT_LIVE {
            let v = self.born_vs[g] as usize;
            self.log_sum[v] += ((now - b) as f64 + 1.0).ln();
            self.deaths[v] += 1;
            self.born[g] = NOT_LIVE;
        }
    }

    /// Recompute the vStream → stream map from this window's deaths.
    fn remap(&mut self) {
        let start = Instant::now();
        for v in 0..self.ewma.len() {
            if self.deaths[v] > 0 {
                let m = self.log_sum[v] / self.deaths[v] as f64;
                self.ewma[v] = if self.ewma[v].is_nan() {
                    m
                } else {
                    self.alpha * m + (1.0 - self.alpha) * self.ewma[v]
                };
            }
        }
        let known: Vec<usize> = (0..self.ewma.len())
            .filter(|&v| !self.ewma[v].is_nan())
            .collect();
        self.map
            .iter_mut()
            .for_each(|m| *m = (self.streams - 1) as u8);
        if !known.is_empty() {
            let pts: Vec<f64> = known.iter().map(|&v| self.ewma[v]).collect();
            let w: Vec<f64> = known
                .iter()
                .map(|&v| (self.writes[v] as f64).max(1.0))
                .collect();
            let c = kmeans(&pts, &w, 1, self.streams as usize, &Init::Quantile, 300);
            let mut order: Vec<usize> = (0..c.centers.len()).collect();
            order.sort_by(|&a, &b| c.centers[a].total_cmp(&c.centers[b]));
            let rank = rank_map(&order);
            // vStreams not seen dying yet share the longest-lifetime stream.
            let longest = (c.centers.len() - 1) as u8;
            self.map.iter_mut().for_each(|m| *m = longest);
            for (i, &v) in known.iter().enumerate() {
                self.map[v] = rank[c.labels[i] as usize];
            }
        }
        self.log_sum.iter_mut().for_each(|x| *x = 0.0);
        self.deaths.iter_mut().for_each(|x| *x = 0);
        self.writes.iter_mut().for_each(|x| *x = 0);
        self.mapped = true;
        self.remaps += 1;
        self.stats.trainings += 1;
        self.stats.seconds += start.elapsed().as_secs_f64();
        self.stats.last_examples = known.len() as u64;
    }

    #[inline]
    fn advance(&mut self, t: u64) {
        match self.next_remap {
            None if self.started => self.next_remap = Some(t + self.clock.len()),
            None => {}
            Some(due) if t >= due => {
                self.remap();
                let len = self.clock.len();
                self.next_remap = Some(due + (t - due) / len * len + len);
            }
            _ => {}
        }
    }
}

impl Placement for VStream {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "vstream"
    }
    fn groups(&self) -> usize {
        self.streams as usize
    }
    fn prepare(&mut self, run: &dyn RunService) -> Result<()> {
        let span = run.span()?;
        let (clock, note) = self.clock.fit(
            "vstream",
            "the remapping period",
            &span,
            (1, MIN_WINDOWS),
            self.short_run,
        )?;
        self.clock = clock;
        if let Some(n) = note {
            self.warnings.push(warning("window-scaled", &n));
        }
        if self.source == Source::Tenant && super::kit::streams::tenants(run)? <= 1 {
            self.warnings.push(warning(
                "single-virtual-stream",
                "every request comes from one tenant, so source=tenant gives one virtual stream \
                 and every write goes to one physical stream: the result equals base's; use a \
                 mix: workload or source=region",
            ));
        }
        Ok(())
    }
    fn on_workload_start(&mut self, _ctx: &Ctx) {
        self.started = true;
    }
    fn place_user(&mut self, _ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]) {
        let Some(first) = writes.first() else {
            return;
        };
        self.advance(self.clock.read(first.req_time_ns, first.time));
        for (w, g) in writes.iter().zip(out.iter_mut()) {
            let v = self.vstream_of(w);
            *g = if self.mapped {
                self.map[v] as GroupId
            } else {
                0
            };
            if !self.started {
                continue;
            }
            self.writes[v] += 1;
            if let Some(grp) = self.watched(w.lba) {
                self.death(grp, w.time);
                self.born[grp] = w.time;
                self.born_vs[grp] = v as u16;
            }
        }
    }
    fn on_trim(&mut self, ctx: &Ctx, lba: u32) {
        if let Some(g) = self.watched(lba) {
            self.death(g, ctx.now());
        }
    }
    fn on_read(&mut self, _ctx: &Ctx, req: &Request) {
        if let Clock::Seconds(_) = self.clock {
            self.advance(req.time_ns);
        }
    }
    fn place_gc(&mut self, _ctx: &Ctx, b: &GcBlock) -> GroupId {
        b.from_group
    }
    fn memory_bytes(&self) -> usize {
        self.born.len() * 10 + self.ewma.len() * 33
    }
    fn state(&self) -> Option<Value> {
        let lifetimes: Vec<Option<f64>> = self
            .ewma
            .iter()
            .map(|&e| (!e.is_nan()).then(|| e.exp() - 1.0))
            .collect();
        let used = lifetimes
            .iter()
            .rposition(|l| l.is_some())
            .map_or(0, |i| i + 1);
        Some(json!({
            "remaps": self.remaps,
            "remap_seconds": self.stats.seconds,
            "mapping": &self.map[..used.max(1).min(self.map.len())],
            "lifetime_blocks": &lifetimes[..used],
            "warnings": self.warnings,
        }))
    }
    fn training(&self) -> Option<TrainingStats> {
        (self.remaps > 0).then_some(self.stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geo() -> Geometry {
        crate::device::DeviceConfig {
            logical_blocks: 1024,
            segment_blocks: 16,
            ..Default::default()
        }
        .geometry()
        .unwrap()
    }

    #[test]
    fn short_lived_vstreams_get_the_low_streams() {
        let p = Params {
            streams: 2,
            source: Source::Region,
            vstreams: 2,
            sample: 1,
            remap_dw: Some(0.5),
            ..Default::default()
        };
        let mut v = VStream::new(&p, &geo()).unwrap();
        v.started = true;
        let w = |lba: u32, time: u64| UserWrite {
            lba,
            time,
            ..Default::default()
        };
        // Region 0 (LBAs < 512) rewritten every 2 writes, region 1 every 200.
        let mut t = 0;
        for i in 0..400u32 {
            for lba in [i % 2, 512 + (i % 200)] {
                let mut out = [0];
                v.place_user(&Ctx::new(&dummy_ftl()), &[w(lba, t)], &mut out);
                t += 1;
            }
        }
        assert!(v.remaps >= 1);
        assert_eq!(v.map[0], 0, "short-lived region on stream 0");
        assert_eq!(v.map[1], 1);
    }

    fn dummy_ftl() -> crate::ftl::Ftl {
        crate::ftl::Ftl::new(geo(), 1)
    }
}
