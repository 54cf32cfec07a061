//! `ofios`: Online FIOS (Bhimani et al., ACM TOS 18(2) 2022, §3.7,
//! Algs. 1–2, §6.4, Figs. 14–17): FIOS's dictionary
//! rebuilt every run window from a trace of the end of that window, and
//! applied from the next one.
//!
//! Windows in trace seconds (`run_s`, T_Run = T_Train = 100 s) or, with
//! `window_dw`, in drive-writes of the logical clock (100 s is a sliver of
//! a week-long trace). For run window k, [kT, (k+1)T) from the first
//! request: training starts at kT + (1 − n)T with n = `train_frac`
//! (T_Train / T_Run, Figs. 16–17), the training trace is collected for the
//! first `trace_frac` (0.75) of the training window, the rest of it builds
//! the dictionary (in a simulation the build takes no time; `build_delay_s`
//! postpones the new dictionary to model F18's cost), and at (k+1)T the new
//! SID replaces the old one. Window 0 has no SID: legacy stream 0 (Alg. 1
//! line 9). ψ is chosen per window from the training trace's attributes
//! (`features=auto`; `psi_lag=1` uses the previous window's choice, Alg. 2's
//! "W_ψ generated in the last window"), or fixed (`features=F` is F14's
//! static-feature baseline run online). The per-window ψ, θ and dictionary
//! sizes are in `policy_state.windows`.
//!
//! Deviations, and choices where the paper is silent: θ is computed from each
//! training trace (the paper's Alg. 1 read it from a per-workload table
//! given by the user); LBA sampling (`sample`, future work in the paper)
//! keeps a chunk in the training trace when a hash of its number falls
//! below the rate (unsampled chunks become zero rows); a window whose
//! training trace is empty keeps the previous dictionary; the matrix is
//! decimal by default (FIOS's default; the paper does not say).

use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::fios::{self, Config, Training};
use super::fios::{dictionary::Dictionary, matrix::FeatureSet};
use super::kit::streams::{warning, Clock, ShortRun, MIN_WINDOWS};
use super::{Ctx, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::device::Geometry;
use crate::engine::RunService;
use crate::error::{Error, Result};
use crate::ftl::GroupId;
use crate::model::train::TrainingStats;
use crate::params;
use crate::request::Request;

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "ofios",
    description: "OFIOS (ACM TOS 2022 §3.7): FIOS rebuilt every run window (100 s) from a trace of its last part, features chosen per window, applied from the next window",
    family: crate::policy::Family::Stream,
    needs_future: false,
    defaults: params::defaults::<Params>,
    build: |p, geo| {
        let p: Params = params::parse("ofios", p)?;
        Ok(Box::new(Ofios::new(&p, geo)?))
    },
};

/// Parameters: FIOS's dictionary build (the same struct, flattened) and
/// the windows.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Params {
    /// Streams, chunks, features, matrix, K-means, cut-offs (see `fios`).
    #[serde(flatten)]
    pub common: fios::Common,
    /// Run window T_Run [trace seconds] (§6.4: 100 s).
    pub run_s: f64,
    /// Run window in drive-writes instead of seconds [drive-writes].
    pub window_dw: Option<f64>,
    /// A run shorter than one window: `scale` the window to a tenth of it
    /// (with a warning) or `refuse` it (the earlier rule).
    pub short_run: ShortRun,
    /// n = T_Train / T_Run, in (0, 1] (F16/F17; F14 uses 1).
    pub train_frac: f64,
    /// Part of the training window traced (T_Trace = 0.75 T_Train).
    pub trace_frac: f64,
    /// Fraction of chunks traced (LBA sampling), in (0, 1].
    pub sample: f64,
    /// 0: ψ from this window's trace; 1: from the previous window's.
    pub psi_lag: u32,
    /// The new dictionary applies this long after the window ends [s, or
    /// drive-writes with `window_dw`].
    pub build_delay_s: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            common: fios::Common::default(),
            run_s: 100.0,
            window_dw: None,
            short_run: ShortRun::Scale,
            train_frac: 1.0,
            trace_frac: 0.75,
            sample: 1.0,
            psi_lag: 0,
            build_delay_s: 0.0,
        }
    }
}

/// Log of one window's build.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
struct WindowLog {
    /// Run window whose trace built it.
    window: u64,
    /// ψ used.
    psi: String,
    /// ψ this window's θ selects.
    auto_psi: String,
    /// θ.
    theta: String,
    /// Why this ψ (automatic selection: attributes against cut-offs).
    reason: String,
    /// Requests in the training trace.
    requests: u64,
    /// Streams holding chunks.
    streams_used: u32,
    /// SID rows.
    sid_runs: u64,
    /// Build wall time [ms] (features included).
    build_ms: f64,
}

/// Most windows kept in the log.
const MAX_LOG: usize = 100_000;

/// The `ofios` policy.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Ofios {
    cfg: Config,
    clock: Clock,
    short_run: ShortRun,
    /// Warnings for the result (a window scaled to a short run).
    warnings: Vec<Value>,
    train_frac: f64,
    trace_frac: f64,
    /// Chunks with hash below this are traced (u64::MAX: all).
    sample_below: u64,
    psi_lag: bool,
    delay: u64,
    /// Clock reading of the workload's first request.
    origin: Option<u64>,
    started: bool,
    /// Current run window.
    window: u64,
    /// Clock reading at which the current window ends.
    next_boundary: u64,
    /// The current window's training trace: [trace_start, trace_end).
    trace_start: u64,
    trace_end: u64,
    training: Option<Training>,
    dict: Option<Dictionary>,
    pending: Option<(Dictionary, u64)>,
    prev_psi: Option<FeatureSet>,
    log: Vec<WindowLog>,
    builds: u64,
    psi_counts: std::collections::BTreeMap<String, u64>,
    stats: TrainingStats,
    build_max: f64,
    last_footprint: Option<fios::dictionary::Footprint>,
}

impl Ofios {
    fn new(p: &Params, geo: &Geometry) -> Result<Self> {
        let bad = |reason: String| Error::Parameter {
            policy: "ofios".into(),
            reason,
        };
        let cfg = fios::config("ofios", &p.common, geo)?;
        let clock = Clock::new("ofios", "run_s", p.run_s, p.window_dw, geo.logical_blocks)?;
        for (name, v) in [
            ("train_frac", p.train_frac),
            ("trace_frac", p.trace_frac),
            ("sample", p.sample),
        ] {
            if !(v.is_finite() && v > 0.0 && v <= 1.0) {
                return Err(bad(format!("{name} = {v}; must be in (0, 1]")));
            }
        }
        if p.psi_lag > 1 {
            return Err(bad(format!("psi_lag = {}; must be 0 or 1", p.psi_lag)));
        }
        if !(p.build_delay_s.is_finite() && p.build_delay_s >= 0.0) {
            return Err(bad(format!(
                "build_delay_s = {}; must be >= 0",
                p.build_delay_s
            )));
        }
        let delay = match clock {
            Clock::Seconds(_) => (p.build_delay_s * 1e9).round() as u64,
            Clock::Blocks(_) => (p.build_delay_s * geo.logical_blocks as f64).round() as u64,
        };
        Ok(Ofios {
            cfg,
            clock,
            short_run: p.short_run,
            warnings: Vec::new(),
            train_frac: p.train_frac,
            trace_frac: p.trace_frac,
            sample_below: if p.sample >= 1.0 {
                u64::MAX
            } else {
                (p.sample * u64::MAX as f64) as u64
            },
            psi_lag: p.psi_lag == 1,
            delay,
            origin: None,
            started: false,
            window: 0,
            next_boundary: u64::MAX,
            trace_start: u64::MAX,
            trace_end: 0,
            training: None,
            dict: None,
            pending: None,
            prev_psi: None,
            log: Vec::new(),
            builds: 0,
            psi_counts: Default::default(),
            stats: TrainingStats::default(),
            build_max: 0.0,
            last_footprint: None,
        })
    }

    #[inline(always)]
    fn sampled(&self, chunk: u32) -> bool {
        self.sample_below == u64::MAX || sampled_chunk(self.sample_below, chunk)
    }

    /// Open run window `k`: its training trace's span.
    fn open_window(&mut self, k: u64) {
        let t = self.clock.len();
        let o = self.origin.expect("origin set");
        self.window = k;
        self.next_boundary = o + (k + 1) * t;
        let train = (self.train_frac * t as f64).round() as u64;
        self.trace_start = o + k * t + (t - train.min(t));
        self.trace_end =
            self.trace_start + ((self.trace_frac * train as f64).round() as u64).max(1);
        let span_ns = match self.clock {
            Clock::Seconds(_) => Some(self.trace_end - self.trace_start),
            Clock::Blocks(_) => None,
        };
        self.training = Some(Training::new(
            &self.cfg,
            self.trace_start,
            self.trace_end - self.trace_start,
            span_ns,
        ));
    }

    /// Close the current window: build its dictionary.
    fn close_window(&mut self) {
        let Some(t) = self.training.take() else {
            return;
        };
        if t.features.requests == 0 {
            return; // nothing traced: keep the current dictionary
        }
        let start = Instant::now();
        let lag = if self.psi_lag { self.prev_psi } else { None };
        let (dict, built) = fios::build(&self.cfg, t, lag);
        let auto_psi = {
            let th = built.attributes.theta(&self.cfg.cutoffs);
            fios::selection::select(&th, self.cfg.fallback).0
        };
        self.prev_psi = Some(self.cfg.features.unwrap_or(auto_psi));
        let secs = start.elapsed().as_secs_f64() + built.feature_seconds;
        self.builds += 1;
        self.stats.trainings += 1;
        self.stats.seconds += secs;
        self.stats.last_examples = built.dictionary.chunks;
        self.build_max = self.build_max.max(secs);
        *self.psi_counts.entry(built.psi.to_string()).or_default() += 1;
        self.last_footprint = Some(built.dictionary);
        if self.log.len() < MAX_LOG {
            self.log.push(WindowLog {
                window: self.window,
                psi: built.psi.to_string(),
                auto_psi: auto_psi.to_string(),
                theta: built.theta.clone(),
                reason: built.selection.reason.clone(),
                requests: built.requests,
                streams_used: built.dictionary.streams_used,
                sid_runs: built.dictionary.sid_runs,
                build_ms: secs * 1e3,
            });
        }
        self.pending = Some((dict, self.next_boundary + self.delay));
    }

    /// Move to the window holding clock reading `t`, closing the ones passed.
    #[inline]
    fn advance(&mut self, t: u64) {
        if self.origin.is_none() {
            if !self.started {
                return;
            }
            self.origin = Some(t);
            self.open_window(0);
        }
        if t >= self.next_boundary {
            self.cross(t);
        }
        if let Some((_, at)) = &self.pending {
            if t >= *at {
                self.dict = self.pending.take().map(|p| p.0);
            }
        }
    }

    #[cold]
    fn cross(&mut self, t: u64) {
        while t >= self.next_boundary {
            self.close_window();
            let k = self.window + 1;
            self.open_window(k);
        }
    }

    #[inline(always)]
    fn tracing(&self, t: u64) -> bool {
        t >= self.trace_start && t < self.trace_end
    }
}

impl Placement for Ofios {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "ofios"
    }
    fn groups(&self) -> usize {
        self.cfg.streams as usize
    }
    fn prepare(&mut self, run: &dyn RunService) -> Result<()> {
        let span = run.span()?;
        let (clock, note) = self.clock.fit(
            "ofios",
            "the run window",
            &span,
            (1, MIN_WINDOWS),
            self.short_run,
        )?;
        self.clock = clock;
        if let Some(n) = note {
            self.warnings.push(warning("window-scaled", &n));
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
        let t = self.clock.read(first.req_time_ns, first.time);
        self.advance(t);
        if self.started && self.tracing(t) {
            let ch = self.cfg.chunking;
            let below = self.sample_below;
            let sampled_first = self.sampled(ch.of(first.lba - first.req_offset));
            if let Some(tr) = self.training.as_mut() {
                let t0 = Instant::now();
                for w in writes {
                    let tw = match self.clock {
                        Clock::Seconds(_) => t,
                        Clock::Blocks(_) => w.time,
                    };
                    if w.req_offset == 0 {
                        let start = w.lba as u64;
                        tr.features.begin_write(start, w.req_blocks as u64, tw);
                        if sampled_first {
                            tr.attributes
                                .write(start, w.req_blocks as u64, w.req_time_ns);
                        }
                    }
                    let c = ch.of(w.lba);
                    if below == u64::MAX || sampled_chunk(below, c) {
                        tr.features.write_chunk(c, tw);
                    }
                }
                tr.feed_seconds += t0.elapsed().as_secs_f64();
            }
        }
        match &self.dict {
            None => out.fill(self.cfg.untrained as GroupId),
            Some(d) => {
                let ch = self.cfg.chunking;
                for (w, g) in writes.iter().zip(out.iter_mut()) {
                    *g = d.get(ch.of(w.lba)) as GroupId;
                }
            }
        }
    }
    fn on_read(&mut self, _ctx: &Ctx, req: &Request) {
        if let Clock::Seconds(_) = self.clock {
            self.advance(req.time_ns);
            if self.started
                && self.tracing(req.time_ns)
                && self.sampled(self.cfg.chunking.of(req.lba as u32))
            {
                let blocks = self.cfg.chunking.blocks;
                if let Some(tr) = self.training.as_mut() {
                    tr.request(blocks, req, req.time_ns);
                }
            }
        }
    }
    fn place_gc(&mut self, _ctx: &Ctx, b: &GcBlock) -> GroupId {
        b.from_group
    }
    fn memory_bytes(&self) -> usize {
        self.dict.as_ref().map_or(0, |d| d.ids.len())
            + self.pending.as_ref().map_or(0, |d| d.0.ids.len())
            + self.training.as_ref().map_or(0, |t| t.memory_bytes())
    }
    fn state(&self) -> Option<Value> {
        let unit = match self.clock {
            Clock::Seconds(n) => json!({"run_s": n as f64 * 1e-9}),
            Clock::Blocks(n) => json!({"run_blocks": n}),
        };
        Some(json!({
            "window": unit,
            "train_frac": self.train_frac,
            "trace_frac": self.trace_frac,
            "windows_seen": self.window + u64::from(self.origin.is_some()),
            "builds": self.builds,
            "features": self.cfg.features.map_or("auto".to_string(), |f| f.to_string()),
            "psi_counts": self.psi_counts,
            "build_seconds": self.stats.seconds,
            "build_seconds_max": self.build_max,
            "chunks": self.cfg.chunking.chunks,
            "chunk_blocks": self.cfg.chunking.blocks,
            "dictionary": self.last_footprint,
            "windows": self.log,
            "warnings": self.warnings,
        }))
    }
    fn training(&self) -> Option<TrainingStats> {
        (self.builds > 0).then_some(self.stats)
    }
}

#[inline(always)]
fn sampled_chunk(below: u64, chunk: u32) -> bool {
    (chunk as u64)
        .wrapping_add(0x9E37_79B9_7F4A_7C15)
        .wrapping_mul(0xBF58_476D_1CE4_E5B9)
        .rotate_left(31)
        .wrapping_mul(0x94D0_49BB_1331_11EB)
        < below
}
