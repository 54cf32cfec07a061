//! `fios`: Feature-based I/O Stream identification (Bhimani et al.,
//! "Automatic Stream Identification to Improve Flash Endurance in Data
//! Centers", ACM TOS 18(2) art. 17, 2022), §3.1–3.6, Figs. 3–8, Table 1,
//! Eqs. 1–3.
//!
//! Training: the requests of a training trace give four features per sector
//! chunk ([`features`]: frequency F, adjacent access A, sequentiality S,
//! coherency C), a binary or decimal feature matrix of the selected
//! features ([`matrix`]), weighted K-means of its distinct rows into K
//! streams ([`kmeans`](crate::policy::kit::kmeans)), and the chunk→stream dictionaries BD and SID
//! ([`dictionary`]). The features are chosen by hand (`features=FC`, any
//! of the 15 combinations) or automatically from the training trace's
//! attributes through the base matrix ([`selection`], `features=auto`).
//! Testing: each written block looks its chunk up (one byte load) and goes
//! to that stream; before a dictionary exists every write is legacy stream
//! 0 (Alg. 1: "if SID ≠ ∅"). FIOS trains once and keeps its dictionary
//! (OFIOS, `ofios`, rebuilds it every window).
//!
//! Device (§4.3, Fig. 9; [`crate::policy::kit::streams`]): one open segment per
//! stream, stream-blind victims, relocation keeps the stream.
//!
//! Where the paper is silent (our choices):
//! * Training part (the paper deploys FIOS trained once, F14: on the first
//!   100 s of its one-hour run, then serving the rest): `train=prefix:X`
//!   (the first fraction X of the user writes; default 0.028 = 100/3600) /
//!   `prefix:Ns` (the first N trace seconds): the dictionary built from the
//!   prefix applies from the first write after it (causal; earlier writes,
//!   and the prefill, are stream 0); the first pass over the stream stops at
//!   the prefix's end. `train=full` (the replays of §6.1-6.3 do not say
//!   which part trained) reads the whole run's stream before the replay
//!   through [`Placement::prepare`] and applies the dictionary from
//!   the first write, prefill included: future knowledge, marked in
//!   `policy_state` (`future_knowledge`) and in the result's warnings.
//! * Features count writes (`count_reads` adds reads to F and A); A is the
//!   normalised time of the last write (`adjacent=space`: neighbour chunks
//!   written in the same window); S needs ≥ `seq_share` sequential touches;
//!   coherency windows: `coh_windows` equal parts of the training span.
//! * Thresholds: medians / deciles over touched chunks (the paper's
//!   "piecewise linear regression" calibration cannot be reproduced).
//! * K-means: k-means++ seeded by `seed`, Lloyd to no change (≤ `max_iter`),
//!   Euclidean; streams numbered by centre (hottest F + C first).
//! * Cut-offs of the attributes: [`selection::Cutoffs`]; empty ψ → `fallback`.
//! * A chunk must be whole blocks (`chunk_sectors` a multiple of the
//!   block's sectors; use `--block-size 512` for sub-4-KiB chunks).

pub mod dictionary;
pub mod features;
pub mod matrix;
pub mod selection;

use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::kit::streams::Chunking;
use super::{Ctx, GcBlock, Placement, PolicyInfo, UserWrite};
use crate::device::Geometry;
use crate::engine::RunService;
use crate::error::{Error, Result};
use crate::ftl::GroupId;
use crate::model::train::TrainingStats;
use crate::params;
use crate::request::{Op, Request};

use dictionary::{ClusterStats, Dictionary, Footprint, Rows};
use features::{Accumulator, Adjacent};
use matrix::{Deciles, FeatureSet, Kind, Matrix, Settings};
use selection::{AcfKind, AttributeAccumulator, Attributes, Cutoffs, Fallback};

pub(super) const INFO: PolicyInfo = PolicyInfo {
    name: "fios",
    description: "FIOS (ACM TOS 2022): per-chunk features F/S/A/C, weighted K-means into K streams, chunk->stream dictionary trained on the run's first 100 s-equivalent (train=full: the whole run it places, future knowledge); features by hand or auto-selected from the workload's attributes",
    family: crate::policy::Family::Stream,
    needs_future: false,
    defaults: params::defaults::<Params>,
    build: |p, geo| {
        let p: Params = params::parse("fios", p)?;
        Ok(Box::new(Fios::new(&p, geo)?))
    },
};

/// Matrix values.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum MatrixKind {
    /// 0/1 importance bits (§3.2).
    Binary,
    /// Deciles and range-shifted coherency (§3.3).
    Decimal,
}

/// Which A.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum AdjacentKind {
    /// Normalised time of the last write.
    Time,
    /// Neighbour chunks written in the same window.
    Space,
}

/// Which rows K-means clusters.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RowsKind {
    /// All chunks (§3.1).
    All,
    /// Touched chunks only.
    Touched,
}

/// The dictionary-building parameters `fios` and `ofios` share (each
/// flattens them into its own; serde's `flatten` cannot deny unknown
/// fields: [`params::parse`] rejects the keys the defaults lack).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Common {
    /// Streams K (groups; "e.g., 16 streams in the latest SSD drives", §3.1).
    pub streams: u32,
    /// Chunk size [512-byte sectors] (64 = 32 KiB, §5).
    pub chunk_sectors: u32,
    /// Feature letters of F, S, A, C (e.g. "FC"), or "auto" (§3.6).
    pub features: String,
    /// "decimal" (default) or "binary".
    pub matrix: MatrixKind,
    /// Decimal deciles: "ranked" (ten categories, §3.3) or "tied" (tied
    /// values share one); see [`matrix`].
    pub deciles: Deciles,
    /// Weights of F, S, A, C (§3.1; all 1).
    pub weights: [f64; 4],
    /// Coherency windows per training trace.
    pub coh_windows: u32,
    /// A: "time" or "space".
    pub adjacent: AdjacentKind,
    /// S is 1 when at least this share of a chunk's touches is sequential.
    pub seq_share: f64,
    /// K-means over "all" chunks or "touched" ones.
    pub rows: RowsKind,
    /// Reads count for F and A.
    pub count_reads: bool,
    /// Seed of k-means++.
    pub seed: u64,
    /// Most Lloyd iterations.
    pub max_iter: u32,
    /// High/Low cut-offs of the attributes (features=auto).
    pub cutoffs: Cutoffs,
    /// The ACF θ uses: "rate" (per 5-minute window, §3.6) or "gaps"
    /// (consecutive inter-arrival times); see [`selection`].
    pub acf: AcfKind,
    /// ψ when no row of the base matrix survives: "f" or "nearest".
    pub fallback: Fallback,
    /// Where writes go before a dictionary applies (the prefill, the
    /// training part, OFIOS's first window), and stay through GC: "last"
    /// (default): stream K-1, the coldest-looking cluster's or none's once
    /// a dictionary applies; "first": stream 0, the hottest-looking
    /// cluster's (wafer before issue 49: the prefill's cold data then sat in
    /// the hot stream and was copied there for ~20 drive-writes). The
    /// papers train offline and are silent.
    pub untrained_stream: String,
}

impl Default for Common {
    fn default() -> Self {
        Common {
            streams: 16,
            chunk_sectors: 64,
            features: "auto".into(),
            matrix: MatrixKind::Decimal,
            deciles: Deciles::Ranked,
            weights: [1.0; 4],
            coh_windows: 10,
            adjacent: AdjacentKind::Time,
            seq_share: 0.5,
            rows: RowsKind::All,
            count_reads: false,
            seed: 1,
            max_iter: 300,
            cutoffs: Cutoffs::default(),
            acf: AcfKind::Rate,
            fallback: Fallback::F,
            untrained_stream: "last".into(),
        }
    }
}

/// Parameters.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Params {
    /// The dictionary build (shared with `ofios`).
    #[serde(flatten)]
    pub common: Common,
    /// Training part: "prefix:X" (the first fraction X of the user
    /// writes; default 0.028, the first 100 s of F14's one-hour run),
    /// "prefix:Ns" (the first N trace seconds), or "full" (the whole run it
    /// then places: future knowledge).
    pub train: String,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            common: Common::default(),
            train: DEFAULT_TRAIN.into(),
        }
    }
}

/// `fios`'s training part by default: the paper's deployment, a dictionary
/// from the first 100 s of the one-hour run it then serves (§6.4, F14):
/// 100/3600 of the user writes.
pub const DEFAULT_TRAIN: &str = "prefix:0.028";

/// Settings of one dictionary build, shared by `fios` and `ofios`.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Config {
    /// Streams K.
    pub streams: u32,
    /// Stream of the writes before a dictionary applies.
    pub untrained: u32,
    /// Chunks.
    pub chunking: Chunking,
    /// Fixed features, or `None` for automatic selection.
    pub features: Option<FeatureSet>,
    /// Matrix values.
    pub kind: Kind,
    /// Decimal deciles.
    pub deciles: Deciles,
    /// Weights of F, S, A, C.
    pub weights: [f64; 4],
    /// Coherency windows.
    pub coh_windows: u16,
    /// A.
    pub adjacent: Adjacent,
    /// S threshold.
    pub seq_share: f64,
    /// Rows clustered.
    pub rows: Rows,
    /// Reads in F and A.
    pub count_reads: bool,
    /// k-means++ seed.
    pub seed: u64,
    /// Lloyd iterations.
    pub max_iter: u32,
    /// Attribute cut-offs.
    pub cutoffs: Cutoffs,
    /// The ACF θ uses.
    pub acf: AcfKind,
    /// Empty-ψ fallback.
    pub fallback: Fallback,
    /// Device block size [bytes] and logical blocks.
    pub block_size: u32,
    /// Logical blocks.
    pub logical_blocks: u32,
}

/// Check and convert the parameters common to `fios` and `ofios`.
pub fn config(policy: &str, c: &Common, geo: &Geometry) -> Result<Config> {
    let Common {
        streams,
        chunk_sectors,
        ref features,
        matrix,
        deciles,
        weights,
        coh_windows,
        adjacent,
        seq_share,
        rows,
        count_reads,
        seed,
        max_iter,
        ref cutoffs,
        acf,
        fallback,
        ref untrained_stream,
    } = *c;
    let bad = |reason: String| Error::Parameter {
        policy: policy.into(),
        reason,
    };
    if streams == 0 || streams > 255 {
        return Err(bad(format!("streams = {streams}; must be 1..=255")));
    }
    let chunking =
        Chunking::from_sectors(policy, chunk_sectors, geo.block_size, geo.logical_blocks)?;
    let features = match features.trim() {
        "auto" => None,
        f => Some(FeatureSet::parse(f).map_err(bad)?),
    };
    if weights.iter().any(|w| !(w.is_finite() && *w >= 0.0)) {
        return Err(bad(format!("weights {weights:?} must be finite and >= 0")));
    }
    if coh_windows == 0 || coh_windows > 4096 {
        return Err(bad(format!(
            "coh_windows = {coh_windows}; must be 1..=4096"
        )));
    }
    if !(seq_share.is_finite() && (0.0..=1.0).contains(&seq_share)) {
        return Err(bad(format!("seq_share = {seq_share}; must be in [0, 1]")));
    }
    if max_iter == 0 {
        return Err(bad("max_iter must be >= 1".into()));
    }
    Ok(Config {
        untrained: super::kit::streams::untrained_stream(policy, untrained_stream, streams)?,
        streams,
        chunking,
        features,
        kind: match matrix {
            MatrixKind::Binary => Kind::Binary,
            MatrixKind::Decimal => Kind::Decimal,
        },
        deciles,
        weights,
        coh_windows: coh_windows as u16,
        adjacent: match adjacent {
            AdjacentKind::Time => Adjacent::Time,
            AdjacentKind::Space => Adjacent::Space,
        },
        seq_share,
        rows: match rows {
            RowsKind::All => Rows::All,
            RowsKind::Touched => Rows::Touched,
        },
        count_reads,
        seed,
        max_iter,
        cutoffs: cutoffs.clone(),
        acf,
        fallback,
        block_size: geo.block_size,
        logical_blocks: geo.logical_blocks,
    })
}

/// A training trace being read: features and attributes.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Training {
    /// Per-chunk features.
    pub features: Accumulator,
    /// Workload attributes.
    pub attributes: AttributeAccumulator,
    /// Span of the trace for λ [ns], when known.
    pub span_ns: Option<u64>,
    /// Wall time spent feeding it [s].
    pub feed_seconds: f64,
}

impl Training {
    /// For `cfg`, over the clock span [t0, t0 + span) (coherency windows).
    pub fn new(cfg: &Config, t0: u64, span: u64, span_ns: Option<u64>) -> Self {
        Training {
            features: Accumulator::new(
                cfg.chunking.chunks,
                t0,
                span,
                cfg.coh_windows,
                cfg.adjacent,
                cfg.count_reads,
            ),
            attributes: AttributeAccumulator::new(cfg.logical_blocks, cfg.block_size, cfg.acf),
            span_ns,
            feed_seconds: 0.0,
        }
    }

    /// A whole request at clock `t` in chunks of `chunk_blocks` (the
    /// attributes use its timestamp).
    pub fn request(&mut self, chunk_blocks: u32, r: &Request, t: u64) {
        match r.op {
            Op::Write => {
                self.features.write(r.lba, r.blocks as u64, chunk_blocks, t);
                self.attributes.write(r.lba, r.blocks as u64, r.time_ns);
            }
            Op::Read => {
                self.features.read(r.lba, r.blocks as u64, chunk_blocks, t);
                self.attributes.read(r.lba, r.blocks as u64, r.time_ns);
            }
            Op::Trim => {}
        }
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.features.memory_bytes() + self.attributes.memory_bytes()
    }
}

/// One dictionary build.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct Built {
    /// Features used.
    #[serde(serialize_with = "as_string", deserialize_with = "from_string")]
    pub psi: FeatureSet,
    /// Chosen automatically.
    pub auto: bool,
    /// θ = [ACF, RW, R, S, λ] High/Low.
    pub theta: String,
    /// The fallback was used (no row of B survived).
    pub fell_back: bool,
    /// Why ψ is what it is ([`selection::explain`]).
    pub selection: selection::Explanation,
    /// Attribute values.
    pub attributes: Attributes,
    /// Requests in the training trace.
    pub requests: u64,
    /// K-means.
    pub clustering: ClusterStats,
    /// BD / SID sizes.
    pub dictionary: Footprint,
    /// Wall time of the build: matrix, K-means, dictionary [s].
    pub build_seconds: f64,
    /// Wall time of reading the training trace into features [s].
    pub feature_seconds: f64,
}

fn from_string<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<FeatureSet, D::Error> {
    let s = <String as serde::Deserialize>::deserialize(d)?;
    FeatureSet::parse(&s).map_err(serde::de::Error::custom)
}

fn as_string<S: serde::Serializer>(f: &FeatureSet, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&f.to_string())
}

/// Build the dictionary of a training trace: ψ (given, `psi_override`, or
/// automatic from θ), matrix, K-means.
pub fn build(cfg: &Config, t: Training, psi_override: Option<FeatureSet>) -> (Dictionary, Built) {
    let start = Instant::now();
    let attributes = t.attributes.finish(t.span_ns);
    let theta = attributes.theta(&cfg.cutoffs);
    let (auto_psi, fell_back) = selection::select(&theta, cfg.fallback);
    let psi = psi_override.or(cfg.features).unwrap_or(auto_psi);
    let requests = t.features.requests;
    let raw = t.features.finish();
    let m = Matrix::build(
        &raw,
        &Settings {
            features: psi,
            kind: cfg.kind,
            weights: cfg.weights,
            seq_share: cfg.seq_share,
            deciles: cfg.deciles,
        },
    );
    let (dict, clustering) =
        dictionary::cluster(&m, cfg.streams as usize, cfg.rows, cfg.seed, cfg.max_iter);
    let built = Built {
        psi,
        auto: cfg.features.is_none() && psi_override.is_none(),
        theta: selection::theta_string(&theta),
        fell_back: fell_back && cfg.features.is_none(),
        selection: selection::explain(&attributes, &cfg.cutoffs, cfg.fallback),
        attributes,
        requests,
        clustering,
        dictionary: dict.footprint(),
        build_seconds: start.elapsed().as_secs_f64(),
        feature_seconds: t.feed_seconds,
    };
    (dict, built)
}

/// The training part of a run.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum TrainPart {
    /// The whole stream.
    Full,
    /// The first fraction of the user writes.
    Writes(f64),
    /// The first seconds of trace time.
    Seconds(f64),
}

impl TrainPart {
    /// Parse `full`, `prefix:X`, `prefix:Ns`.
    pub fn parse(policy: &str, s: &str) -> Result<Self> {
        let bad = || Error::Parameter {
            policy: policy.into(),
            reason: format!(
                "train = '{s}'; use 'full', 'prefix:X' (fraction of the user writes, 0 < X <= 1) \
                 or 'prefix:Ns' (the first N trace seconds)"
            ),
        };
        match s.trim() {
            "full" => Ok(TrainPart::Full),
            p => {
                let v = p.strip_prefix("prefix:").ok_or_else(bad)?;
                if let Some(secs) = v.strip_suffix('s') {
                    let x: f64 = secs.parse().map_err(|_| bad())?;
                    if !(x.is_finite() && x > 0.0) {
                        return Err(bad());
                    }
                    Ok(TrainPart::Seconds(x))
                } else {
                    let x: f64 = v.parse().map_err(|_| bad())?;
                    if !(x.is_finite() && x > 0.0 && x <= 1.0) {
                        return Err(bad());
                    }
                    Ok(TrainPart::Writes(x))
                }
            }
        }
    }
}

/// When the dictionary starts to apply.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
enum ApplyFrom {
    /// From the first write (prefill included).
    Always,
    /// Once this many user blocks of the workload were written.
    Writes(u64),
    /// From this request time [ns].
    Time(u64),
}

/// The `fios` policy.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Fios {
    cfg: Config,
    part: TrainPart,
    train_text: String,
    dict: Dictionary,
    /// The dictionary applies now.
    active: bool,
    apply_from: ApplyFrom,
    /// Logical clock at the workload's start.
    start: Option<u64>,
    built: Option<Built>,
    span_s: f64,
    training_stats: TrainingStats,
}

impl Fios {
    fn new(p: &Params, geo: &Geometry) -> Result<Self> {
        let cfg = config("fios", &p.common, geo)?;
        Ok(Fios {
            part: TrainPart::parse("fios", &p.train)?,
            train_text: p.train.clone(),
            cfg,
            dict: Dictionary::default(),
            active: false,
            apply_from: ApplyFrom::Always,
            start: None,
            built: None,
            span_s: 0.0,
            training_stats: TrainingStats::default(),
        })
    }

    #[inline]
    fn check_active(&mut self, w: &UserWrite) {
        if self.active || self.built.is_none() {
            return;
        }
        self.active = match self.apply_from {
            ApplyFrom::Always => true,
            ApplyFrom::Writes(n) => self.start.is_some_and(|s| w.time >= s + n),
            ApplyFrom::Time(t) => self.start.is_some() && w.req_time_ns >= t,
        };
    }
}

impl Placement for Fios {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "fios"
    }
    fn groups(&self) -> usize {
        self.cfg.streams as usize
    }
    fn prepare(&mut self, run: &dyn RunService) -> Result<()> {
        let span = run.span()?;
        let bad = |reason: String| Error::Parameter {
            policy: "fios".into(),
            reason,
        };
        if span.requests == 0 {
            return Err(bad("the run has no request to train on".into()));
        }
        self.span_s = span.duration_ns() as f64 * 1e-9;
        // The training part: requests before `end_writes` user blocks or `end_ns`.
        let (end_writes, end_ns, apply) = match self.part {
            TrainPart::Full => (u64::MAX, u64::MAX, ApplyFrom::Always),
            TrainPart::Writes(x) => {
                let n = ((x * span.writes as f64).round() as u64).max(1);
                (n, u64::MAX, ApplyFrom::Writes(n))
            }
            TrainPart::Seconds(s) => {
                let ns = (s * 1e9).round() as u64;
                if ns > span.duration_ns() {
                    return Err(bad(format!(
                        "train = {}: the training window of {s} s is longer than the trace ({:.3} s)",
                        self.train_text, self.span_s
                    )));
                }
                let end = span.first_ns + ns;
                (u64::MAX, end, ApplyFrom::Time(end))
            }
        };
        let train_ns = match self.part {
            TrainPart::Seconds(_) => end_ns - span.first_ns,
            _ => span.duration_ns(),
        };
        let t0 = Instant::now();
        // λ over the training window (a prefix of writes: the time it took).
        let lambda_span = matches!(self.part, TrainPart::Seconds(_)).then_some(train_ns);
        let mut t = Training::new(&self.cfg, span.first_ns, train_ns.max(1), lambda_span);
        let mut written = 0u64;
        let chunk_blocks = self.cfg.chunking.blocks;
        run.requests(&mut |r| {
            if written >= end_writes || r.time_ns >= end_ns {
                return false;
            }
            let mut r = *r;
            if r.op == Op::Write {
                r.blocks = r
                    .blocks
                    .min((end_writes - written).min(u32::MAX as u64) as u32);
                written += r.blocks as u64;
            }
            t.request(chunk_blocks, &r, r.time_ns);
            true
        })?;
        t.feed_seconds = t0.elapsed().as_secs_f64();
        let (dict, built) = build(&self.cfg, t, None);
        self.training_stats.trainings = 1;
        self.training_stats.seconds = built.build_seconds + built.feature_seconds;
        self.training_stats.last_examples = built.dictionary.chunks;
        self.dict = dict;
        self.apply_from = apply;
        self.built = Some(built);
        Ok(())
    }
    fn on_workload_start(&mut self, ctx: &Ctx) {
        self.start = Some(ctx.now());
    }
    fn place_user(&mut self, _ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]) {
        if let Some(w) = writes.first() {
            self.check_active(w);
        }
        if !self.active {
            out.fill(self.cfg.untrained as GroupId);
            return;
        }
        let ch = self.cfg.chunking;
        for (w, g) in writes.iter().zip(out.iter_mut()) {
            *g = self.dict.get(ch.of(w.lba)) as GroupId;
        }
    }
    fn place_gc(&mut self, _ctx: &Ctx, b: &GcBlock) -> GroupId {
        b.from_group
    }
    fn memory_bytes(&self) -> usize {
        self.dict.ids.len()
    }
    fn state(&self) -> Option<Value> {
        let b = self.built.as_ref()?;
        let future = self.part == TrainPart::Full;
        let warnings: Vec<Value> = if future {
            vec![super::kit::streams::warning(
                "future-knowledge",
                "train=full built the dictionary from the whole run before placing it (future \
                 knowledge); the paper's deployment trains on a prefix (the default)",
            )]
        } else {
            Vec::new()
        };
        Some(json!({
            "train": self.train_text,
            "future_knowledge": future,
            "warnings": warnings,
            "features": b.psi.to_string(),
            "auto": b.auto,
            "theta": b.theta,
            "fell_back": b.fell_back,
            "selection": b.selection,
            "attributes": b.attributes,
            "matrix": match self.cfg.kind { Kind::Binary => "binary", Kind::Decimal => "decimal" },
            "chunk_blocks": self.cfg.chunking.blocks,
            "chunks": self.cfg.chunking.chunks,
            "training_requests": b.requests,
            "trace_seconds": self.span_s,
            "distinct_rows": b.clustering.distinct_rows,
            "clusters": b.clustering.clusters,
            "kmeans_iterations": b.clustering.iterations,
            "streams_used": b.dictionary.streams_used,
            "bd_bytes": b.dictionary.bd_bytes,
            "sid_runs": b.dictionary.sid_runs,
            "sid_bytes": b.dictionary.sid_bytes,
            "feature_seconds": b.feature_seconds,
            "build_seconds": b.build_seconds,
            "centers": b.clustering.centers,
        }))
    }
    fn training(&self) -> Option<TrainingStats> {
        self.built.as_ref().map(|_| self.training_stats)
    }
}
