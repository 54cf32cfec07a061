//! Placement policies: which group each written block goes to.
//!
//! Adding a policy touches its own file and one line of [`REGISTRY`]. Each
//! file opens with a doc comment naming the paper and section it follows and
//! every deliberate deviation, then its parameter struct (paper defaults,
//! units), then the implementation.

pub mod assisted;
mod autostream;
mod base;
mod dac;
pub mod dogi;
mod equal_partition;
mod eti;
mod fadac;
pub mod fios;
mod fk;
mod gw;
mod lstm_km;
mod midas;
mod ml_dt;
mod multilog;
mod multiqueue;
pub mod nodap;
mod ofios;
mod online;
mod oracle_hotcold;
mod oracle_sort;
mod phftl;
mod sampler;
mod sealed;
mod sepbit;
mod sfr;
mod sfs;
pub mod shiro;
pub mod streams;
mod two_r;
mod uw;
mod vstream;
mod warcip;

use serde_json::Value;

use crate::device::Geometry;
use crate::error::{lookup, Error, Result};
use crate::ftl::{Ftl, GroupId, SegmentId};
use crate::future::{Annotation, Future, NEVER};
use crate::model::train::TrainingStats;
use crate::model::Tensors;
use crate::sim::RunConfig;
pub use crate::victim::BlockEvent;
use std::sync::Arc;

/// One user-written block, as the policy sees it.
#[derive(Clone, Copy, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct UserWrite {
    /// Logical block written.
    pub lba: u32,
    /// Logical time of this write [user blocks] (the clock before it ticks).
    pub time: u64,
    /// Length of the request the block came from [blocks].
    pub req_blocks: u32,
    /// Position of the block inside its request [blocks].
    pub req_offset: u32,
    /// Arrival time of the request the block came from [ns since the
    /// workload's start] (a trace's timestamps; a synthetic workload's
    /// arrival process).
    pub req_time_ns: u64,
    /// Tenant that issued the request (see [`crate::request::Request::tenant`]).
    pub tenant: u32,
}

/// One valid block that GC moves out of a victim.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct GcBlock {
    /// Logical block moved.
    pub lba: u32,
    /// Victim segment it comes from.
    pub victim: SegmentId,
    /// Group of the victim segment.
    pub from_group: GroupId,
}

/// Things that happen in the engine that a policy may react to.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub enum Event {
    /// A segment of `group` became full and was sealed.
    Sealed {
        /// The segment.
        seg: SegmentId,
        /// Its group.
        group: GroupId,
    },
    /// GC moved the `valid` blocks out of `seg` and is about to erase it
    /// (its group and times are still readable).
    Collected {
        /// The victim.
        seg: SegmentId,
        /// Blocks it moved.
        valid: u32,
    },
    /// A statistics window closed (retraining / re-configuration point).
    Window {
        /// Index of the window that closed.
        index: u64,
    },
}

/// The block-following hooks of a policy that wraps another (`inner`),
/// passed on to it: GC prefetch, block events and invalidations.
macro_rules! forward_block_hooks {
    () => {
        fn prefetch_gc(&self, lba: u32) {
            self.inner.prefetch_gc(lba);
        }
        fn tracks_blocks(&self) -> bool {
            self.inner.tracks_blocks()
        }
        fn on_block(
            &mut self,
            lba: u32,
            seg: $crate::ftl::SegmentId,
            ev: $crate::policy::BlockEvent,
            ftl: &$crate::ftl::Ftl,
        ) {
            self.inner.on_block(lba, seg, ev, ftl);
        }
        fn tracks_invalidations(&self) -> bool {
            self.inner.tracks_invalidations()
        }
        fn on_invalidate(&mut self, seg: $crate::ftl::SegmentId, ftl: &$crate::ftl::Ftl) {
            self.inner.on_invalidate(seg, ftl);
        }
    };
}
pub(crate) use forward_block_hooks;

/// Read-only view of the engine handed to policies.
#[derive(Clone, Copy)]
pub struct Ctx<'a> {
    /// The FTL state: mapping, segments, clock.
    pub ftl: &'a Ftl,
    /// The annotated future, when the run has one. Only oracles may place by
    /// it (a real policy that reads it is cheating).
    pub future: Option<&'a Future>,
}

impl<'a> Ctx<'a> {
    /// A view of `ftl` without future knowledge.
    pub fn new(ftl: &'a Ftl) -> Self {
        Ctx { ftl, future: None }
    }
    /// Logical clock [user blocks].
    #[inline(always)]
    pub fn now(&self) -> u64 {
        self.ftl.now
    }
    /// Device shape.
    #[inline(always)]
    pub fn geometry(&self) -> &Geometry {
        &self.ftl.geo
    }
    /// Death [run clock] of the `i`-th block of the user-write batch being
    /// placed; [`NEVER`] without the future. Oracles only.
    #[inline(always)]
    pub fn batch_death(&self, i: usize) -> u64 {
        self.future.map_or(NEVER, |f| f.batch_death(i))
    }
    /// Death [run clock] of the live copy of `lba`; [`NEVER`] without the
    /// future. Oracles only.
    #[inline(always)]
    pub fn live_death(&self, lba: u32) -> u64 {
        self.future.map_or(NEVER, |f| f.live_death(lba))
    }
}

/// A placement policy (see DESIGN.md, "Policies").
pub trait Placement: Send {
    /// Registry name.
    fn name(&self) -> &'static str;
    /// Groups the policy uses at start; it may return higher ids later (the
    /// engine adds groups on demand).
    fn groups(&self) -> usize;
    /// Groups the policy uses now (ids `0..n`); more than [`Placement::groups`]
    /// for a policy that grows its groups at run time. Oracle assists place
    /// blocks only into these.
    fn active_groups(&self) -> usize {
        self.groups()
    }
    /// Group of each block of a batch of user writes (one request, or part of
    /// it); `out` has the same length as `writes`. The blocks are applied in
    /// order after the call.
    fn place_user(&mut self, ctx: &Ctx, writes: &[UserWrite], out: &mut [GroupId]);
    /// A user write of `lba` at logical time `time` into `group` was applied
    /// (after the old copy was invalidated and before any GC it triggers):
    /// the place to update per-LBA history, which must not run ahead of the
    /// engine while a batch is being applied.
    #[inline(always)]
    fn on_user_write(&mut self, _lba: u32, _time: u64, _group: GroupId) {}
    /// Hint: `lba` will be written or moved soon; start loading its per-LBA
    /// state (the engine calls this where it prefetches its own tables).
    #[inline(always)]
    fn prefetch(&self, _lba: u32) {}
    /// Hint: GC will move `lba` soon; start loading what
    /// [`Placement::place_gc`] reads of it (by default what
    /// [`Placement::prefetch`] loads).
    #[inline(always)]
    fn prefetch_gc(&self, lba: u32) {
        self.prefetch(lba);
    }
    /// Group of a valid block moved by GC.
    fn place_gc(&mut self, ctx: &Ctx, block: &GcBlock) -> GroupId;
    /// The group of every valid block GC moves out of a victim of
    /// `from_group`, for a policy that decides per victim and not per
    /// block: the engine then moves the victim's blocks there without
    /// calling [`Placement::place_gc`] or [`Placement::prefetch_gc`] per
    /// block. `None` (the default): ask per block.
    #[inline(always)]
    fn gc_group(&self, _from_group: GroupId) -> Option<GroupId> {
        None
    }
    /// Choose the GC victim among sealed segments with at most `max_valid`
    /// valid blocks; `None` leaves it to the configured selector.
    fn select_victim(&mut self, _ctx: &Ctx, _max_valid: u32) -> Option<SegmentId> {
        None
    }
    /// What a victim selector that scores by the policy's predictions
    /// (Adjusted Greedy) should know before its next choice; `None` if the
    /// policy has nothing to say. Asked only when such a selector runs.
    fn victim_hint(&self) -> Option<crate::victim::VictimHint> {
        None
    }
    /// Whether the policy follows individual blocks into segments
    /// ([`Placement::on_block`]); asked once, so the engine skips the calls
    /// for the others.
    fn tracks_blocks(&self) -> bool {
        false
    }
    /// `lba`'s copy in `seg` was appended or invalidated (only if
    /// [`Placement::tracks_blocks`]); an invalidation comes before the
    /// append of the new copy. `ftl.now_ns` is the request's time.
    fn on_block(&mut self, _lba: u32, _seg: SegmentId, _ev: BlockEvent, _ftl: &Ftl) {}
    /// Whether the policy follows invalidations
    /// ([`Placement::on_invalidate`]); asked once, so the engine skips the
    /// calls for the others.
    fn tracks_invalidations(&self) -> bool {
        false
    }
    /// One of `seg`'s blocks became invalid, by an overwrite or a trim
    /// (only if [`Placement::tracks_invalidations`]);
    /// `ftl.segs.valid[seg]` no longer counts it.
    fn on_invalidate(&mut self, _seg: SegmentId, _ftl: &Ftl) {}
    /// The group whose segments the `multilog` victim selector should
    /// choose among (MultiLog's model); `None` leaves the choice open. Asked
    /// before each choice, only when that selector runs.
    fn victim_group(&mut self, _ctx: &Ctx, _max_valid: u32) -> Option<GroupId> {
        None
    }
    /// The policy's current lifetime threshold [user blocks] (SepBIT's ℓ),
    /// recorded in every time-series window; `None` if it has none (yet).
    fn threshold(&self) -> Option<f64> {
        None
    }
    /// React to an engine event.
    fn on_event(&mut self, _ctx: &Ctx, _ev: &Event) {}
    /// The workload starts now (after the prefill, if the run has one):
    /// learned policies begin sampling and training here, so no example
    /// comes from prefilled blocks.
    fn on_workload_start(&mut self, _ctx: &Ctx) {}
    /// A trim invalidated `lba`.
    fn on_trim(&mut self, _ctx: &Ctx, _lba: u32) {}
    /// The workload read `blocks` blocks from `lba` (policies whose features
    /// count reads: Shiro, FIOS). Once per read request.
    #[inline(always)]
    fn on_read(&mut self, _ctx: &Ctx, _req: &crate::request::Request) {}
    /// The device is idle from `now_ns` for `gap_ns` [ns] (timing mode
    /// only: the gap before the next request arrives). Shiro runs
    /// background GC in such gaps.
    fn on_idle(&mut self, _ctx: &Ctx, _now_ns: u64, _gap_ns: u64) {}
    /// Groups the policy no longer writes to (a configuration shrank): the
    /// engine closes their open segments, so they stop holding space. Asked once per
    /// statistics window; a group may be used again later.
    fn retired_groups(&self, _out: &mut Vec<GroupId>) {}
    /// Bytes of the policy's own state.
    fn memory_bytes(&self) -> usize {
        0
    }
    /// What the policy decided at run time (configuration, thresholds), for
    /// the run's result; `None` if there is nothing to report.
    fn state(&self) -> Option<Value> {
        None
    }
    /// Offline preparation before the run, given the run and the annotation
    /// of its request stream (NoDaP searches its configuration here). Only
    /// called for runs with an annotation.
    fn prepare(&mut self, _run: &RunConfig, _ann: &Arc<Annotation>) -> Result<()> {
        Ok(())
    }
    /// Offline preparation from the run's own request stream, before the
    /// prefill: a policy that trains on the whole trace (FIOS `train=full`)
    /// or must know the trace's span (time windows) reads it here with
    /// [`crate::source::replay_requests`]. Called for every run.
    fn prepare_stream(&mut self, _run: &RunConfig) -> Result<()> {
        Ok(())
    }
    /// Whether the policy places by the annotated future (an oracle): the
    /// run then annotates its request stream first.
    fn needs_future(&self) -> bool {
        false
    }
    /// Upper bounds [user blocks] of the lifetime classes the policy
    /// predicts for user-written blocks (`gc` false) or the remaining
    /// lifetimes of GC-written ones: class k holds `[bounds[k-1], bounds[k])`,
    /// the last class is unbounded. Empty for a policy that predicts none.
    /// They may change during a run; a prediction is judged by the bounds of
    /// its time.
    fn class_bounds(&self, _gc: bool) -> &[u64] {
        &[]
    }
    /// The lifetime class the policy predicted for the block it just placed
    /// in `group` (for a GC-written block, `gc`, the class of its remaining
    /// lifetime); `None` when it makes no prediction for such a block.
    fn predicted_class(&self, _group: GroupId, _gc: bool) -> Option<u8> {
        None
    }
    /// The lifetime class predicted for the `i`-th block of the batch last
    /// placed by [`Placement::place_user`], which went to `group`. By
    /// default the group's class; a policy whose classes are finer than its
    /// groups (several classes per group) overrides it.
    fn predicted_user_class(&self, _i: usize, group: GroupId) -> Option<u8> {
        self.predicted_class(group, false)
    }
    /// An error the policy met that stops the run (e.g. its online training
    /// diverged); the engine asks after every [`Placement::place_user`] and
    /// stops before applying that batch, so the results so far stand.
    fn take_error(&mut self) -> Option<Error> {
        None
    }
    /// What the policy's online training did (learned policies).
    fn training(&self) -> Option<TrainingStats> {
        None
    }
    /// The policy's current model, ready to save (learned policies).
    fn model(&self) -> Option<Tensors> {
        None
    }
    /// The policy's complete state for a checkpoint ([`crate::checkpoint`]):
    /// everything it needs to go on exactly as if never stopped. Every
    /// registered policy has one (most by [`crate::checkpoint_by_serde`]).
    fn save_state(&self) -> Result<Vec<u8>> {
        Err(crate::checkpoint::unsupported(self.name()))
    }
    /// Replace the state of this policy (built from the same configuration)
    /// by one saved with [`Placement::save_state`].
    fn load_state(&mut self, _bytes: &[u8]) -> Result<()> {
        Err(crate::checkpoint::unsupported(self.name()))
    }
    /// A training runs on a thread now: a checkpoint waits until it is
    /// deployed (its model is not state yet).
    fn training_in_flight(&self) -> bool {
        false
    }
}

/// What kind of policy a name is: the report's legend groups, and what a
/// run needs (a learned policy needs the process's trainer,
/// [`crate::model::train`]; an oracle needs the annotated future).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// No separation at all (`base`).
    Trivial,
    /// Hand-written rules over the write history (2R, SepBIT, MiDAS, the
    /// replayer's schemes).
    RuleBased,
    /// Trains a model online, through the process's trainer (DOGI, PHFTL,
    /// ML-DT, Shiro, LSTM+KM).
    Learned,
    /// Host-side stream identification for a multi-stream SSD, on the
    /// model of [`streams`] (FIOS, OFIOS, vStream, AutoStream, equal
    /// partition).
    Stream,
    /// Places by the annotated future (NoDaP, the simple oracles, FK, and
    /// every oracle-assisted composite).
    Oracle,
}

impl Family {
    /// Every family, in the order listings and legends give them.
    pub const ALL: [Family; 5] = [
        Family::Trivial,
        Family::RuleBased,
        Family::Stream,
        Family::Learned,
        Family::Oracle,
    ];

    /// The family's name, as in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Family::Trivial => "trivial",
            Family::RuleBased => "rule-based",
            Family::Learned => "learned",
            Family::Stream => "stream",
            Family::Oracle => "oracle",
        }
    }
}

/// A registered policy.
pub struct PolicyInfo {
    /// Name used by the CLI and the Python API.
    pub name: &'static str,
    /// One line: what it does and where it comes from.
    pub description: &'static str,
    /// What kind of policy it is.
    pub family: Family,
    /// Whether it places by the annotated future (the run annotates its
    /// request stream first); equals [`Placement::needs_future`] of every
    /// policy it builds (a test checks).
    pub needs_future: bool,
    /// Parameter defaults, as a JSON object.
    pub defaults: fn() -> Value,
    /// Constructor from parameter overrides.
    pub build: fn(&Value, &Geometry) -> Result<Box<dyn Placement>>,
}

/// Every placement policy, by name.
pub const REGISTRY: &[PolicyInfo] = &[
    base::INFO,
    two_r::INFO,
    sepbit::INFO,
    sepbit::INFO_NG,
    midas::INFO,
    midas::INFO_NG,
    shiro::INFO,
    shiro::INFO_NG,
    phftl::INFO,
    ml_dt::INFO,
    dogi::INFO,
    nodap::INFO,
    oracle_hotcold::INFO,
    oracle_sort::INFO,
    autostream::INFO,
    autostream::INFO_PUB,
    equal_partition::INFO,
    warcip::INFO,
    dac::INFO,
    eti::INFO,
    multiqueue::INFO,
    sfr::INFO,
    sfs::INFO,
    multilog::INFO,
    fadac::INFO,
    uw::INFO,
    gw::INFO,
    fk::INFO,
    fios::INFO,
    ofios::INFO,
    vstream::INFO,
    lstm_km::INFO,
];

/// The registered policy `name`, or an error listing those that exist.
pub fn info(name: &str) -> Result<&'static PolicyInfo> {
    lookup("policy", REGISTRY, name, |p| p.name)
}

/// One form of composite policy name, described as data (`wafer policies`
/// prints these; [`describe_name`] parses them, [`build`] builds them).
pub struct Composite {
    /// The form, `POLICY` standing for a registered name.
    pub form: &'static str,
    /// One line: what a name of this form runs, and where it comes from.
    pub description: &'static str,
    /// Names of this form (every one describes and builds; a test checks).
    pub examples: &'static [&'static str],
    /// The registered policies `POLICY` may be; empty: any that does not
    /// place by the future.
    pub applies_to: &'static [&'static str],
    /// The suffixes or stage names the form takes (`+nu`, `User`, ...).
    pub parts: &'static [&'static str],
    /// Family of the names of this form.
    pub family: Family,
    /// Whether names of this form place by the annotated future.
    pub needs_future: bool,
}

/// The composite-name grammar. A composite takes the parameters of its
/// `base` ([`NameInfo::base`]); `nodap+POLICY-user` takes POLICY's under
/// `predictor`.
pub const COMPOSITES: &[Composite] = &[
    Composite {
        form: "POLICY+ASSIST[+ASSIST...]",
        description: "oracle-assisted variant (DOGI §3.2, Fig. 3): POLICY with NoDaP's user placement (+nu: exact \
                      lifetimes), GC relocation (+ngc: exact remaining lifetimes) or group configuration (+ngrp, \
                      ml-dt only: its predictions in NoDaP's searched groups); assists combine",
        examples: &["midas+ngc", "sepbit+nu", "sepbit+nu+ngc", "ml-dt+ngrp", "ml-dt+nu+ngrp"],
        applies_to: &[],
        parts: &["+nu", "+ngc", "+ngrp"],
        family: Family::Oracle,
        needs_future: true,
    },
    Composite {
        form: "nodap+POLICY-user",
        description: "NoDaP with POLICY's user-write predictions (DOGI Fig. 2(a): NoDaP^{+SeU} is \
                      nodap+sepbit-user); NoDaP's groups, GC relocation and victims stay; the mirror of \
                      POLICY+nu",
        examples: &[
            "nodap+sepbit-user",
            "nodap+midas-user",
            "nodap+phftl-user",
            "nodap+ml-dt-user",
        ],
        applies_to: &[],
        parts: &["nodap+", "-user"],
        family: Family::Oracle,
        needs_future: true,
    },
    Composite {
        form: "dogi+STAGE",
        description: "DOGI's ablations (FAST'26 Fig. 14): dogi+User (hot filter and the model's groups), dogi+Grp \
                      (+ the group configuration and expired victims), dogi+GC (+ the frozen filter and \
                      ML-Reloc: DOGI itself); the stage name in any case",
        examples: &["dogi+User", "dogi+Grp", "dogi+GC"],
        applies_to: &["dogi"],
        parts: &["User", "Grp", "GC"],
        family: Family::Learned,
        needs_future: false,
    },
];

/// What a policy name stands for: a registered policy, or a composite of
/// one ([`COMPOSITES`]), parsed by the same functions [`build`] uses.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct NameInfo {
    /// The name as given.
    pub name: String,
    /// The registered policy whose parameters the name takes (`dogi` for
    /// `dogi+User`, `nodap` for `nodap+sepbit-user`, `midas` for
    /// `midas+ngc`; the name itself for a registered one).
    pub base: &'static str,
    /// The composite form ([`Composite::form`]); `None` for a registered name.
    pub form: Option<&'static str>,
    /// Oracle assists, in the order `nu`, `ngc`, `ngrp` (`POLICY+...`).
    pub assists: Vec<&'static str>,
    /// The policy whose user-write predictions NoDaP takes
    /// (`nodap+POLICY-user`).
    pub predictor: Option<&'static str>,
    /// DOGI's stage (`user`, `grp`, `full`) for `dogi+STAGE`.
    pub stage: Option<&'static str>,
    /// What kind of policy the name runs.
    pub family: Family,
    /// Whether it places by the annotated future.
    pub needs_future: bool,
}

/// What `name` stands for (see [`NameInfo`]); an unknown policy, assist or
/// predictor is the error [`build`] would give.
pub fn describe_name(name: &str) -> Result<NameInfo> {
    let named = |base: &str, form: Option<&'static Composite>| -> Result<NameInfo> {
        let p = info(base)?;
        Ok(NameInfo {
            name: name.into(),
            base: p.name,
            form: form.map(|c| c.form),
            assists: Vec::new(),
            predictor: None,
            stage: None,
            family: form.map_or(p.family, |c| c.family),
            needs_future: form.map_or(p.needs_future, |c| c.needs_future),
        })
    };
    let form = |f: &str| COMPOSITES.iter().find(|c| c.form == f);
    if let Some(stage) = dogi::Dogi::stage_of(name) {
        let mut d = named("dogi", form("dogi+STAGE"))?;
        d.stage = Some(stage.name());
        return Ok(d);
    }
    if let Some(predictor) = nodap::user::predictor_of(name) {
        let p = nodap::user::check_predictor(name, predictor)?;
        let mut d = named("nodap", form("nodap+POLICY-user"))?;
        d.predictor = Some(p.name);
        return Ok(d);
    }
    if let Some((base, assists)) = assisted::parse(name)? {
        let mut d = named(base, form("POLICY+ASSIST[+ASSIST...]"))?;
        d.assists = assists.names();
        return Ok(d);
    }
    named(name, None)
}

/// The registry as JSON: every policy (name, description, family,
/// needs_future, defaults), the families and the composite-name grammar.
pub fn registry_json() -> Value {
    let policies: Vec<Value> = REGISTRY
        .iter()
        .map(|p| {
            serde_json::json!({"name": p.name, "description": p.description, "family": p.family,
                               "needs_future": p.needs_future, "defaults": (p.defaults)()})
        })
        .collect();
    let composites: Vec<Value> = COMPOSITES
        .iter()
        .map(|c| {
            serde_json::json!({"form": c.form, "description": c.description, "examples": c.examples,
                               "applies_to": c.applies_to, "parts": c.parts, "family": c.family,
                               "needs_future": c.needs_future})
        })
        .collect();
    let families: Vec<&str> = Family::ALL.iter().map(|f| f.name()).collect();
    serde_json::json!({"policies": policies, "families": families, "composites": composites})
}

/// Build the policy registered under `name` with parameter overrides `params`.
/// `POLICY+nu` / `POLICY+ngc` build the oracle-assisted variant ([`assisted`]);
/// `nodap+POLICY-user` NoDaP with POLICY's user predictions ([`nodap::user`]);
/// `dogi+STAGE` one of DOGI's ablations ([`COMPOSITES`]).
pub fn build(name: &str, params: &Value, geo: &Geometry) -> Result<Box<dyn Placement>> {
    if let Some(stage) = dogi::Dogi::stage_of(name) {
        let mut p = params.clone();
        if !p.is_object() {
            p = serde_json::json!({});
        }
        p["stage"] = serde_json::to_value(stage).expect("a stage serialises");
        return build("dogi", &p, geo);
    }
    if let Some(predictor) = nodap::user::predictor_of(name) {
        return Ok(Box::new(nodap::user::NoDapUser::build(
            name, predictor, params, geo,
        )?));
    }
    if let Some((base, assists)) = assisted::parse(name)? {
        let inner = build(base, params, geo)?;
        return Ok(Box::new(assisted::Assisted::new(
            inner, name, base, assists,
        )));
    }
    (info(name)?.build)(params, geo)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::DeviceConfig;

    fn geo() -> Geometry {
        DeviceConfig {
            logical_blocks: 1 << 16,
            ..Default::default()
        }
        .geometry()
        .unwrap()
    }

    /// Every name the grammar makes of the registry: each policy, each
    /// example of a form, and every practical policy with `+nu`, `+ngc` and
    /// as NoDaP's predictor.
    fn names() -> Vec<String> {
        let mut v: Vec<String> = REGISTRY.iter().map(|p| p.name.to_string()).collect();
        v.extend(
            COMPOSITES
                .iter()
                .flat_map(|c| c.examples.iter().map(|e| e.to_string())),
        );
        for p in REGISTRY.iter().filter(|p| !p.needs_future) {
            v.push(format!("{}+nu", p.name));
            v.push(format!("{}+ngc", p.name));
            v.push(format!("nodap+{}-user", p.name));
        }
        v
    }

    #[test]
    fn registry_needs_future_is_what_built_policies_say() {
        let g = geo();
        for name in names() {
            let d = describe_name(&name).unwrap_or_else(|e| panic!("{name}: {e}"));
            let built =
                build(&name, &serde_json::json!({}), &g).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(d.needs_future, built.needs_future(), "{name}");
            assert_eq!(d.name, name);
            if d.form.is_none() {
                assert_eq!(built.name(), name);
            }
        }
    }

    #[test]
    fn composites_describe_as_their_form_says() {
        for c in COMPOSITES {
            for e in c.examples {
                let d = describe_name(e).unwrap();
                assert_eq!(d.form, Some(c.form), "{e}");
                assert_eq!(
                    (d.family, d.needs_future),
                    (c.family, c.needs_future),
                    "{e}"
                );
                if !c.applies_to.is_empty() {
                    assert!(c.applies_to.contains(&d.base), "{e}");
                }
            }
        }
        let d = describe_name("sepbit+ngc+nu").unwrap();
        assert_eq!((d.base, d.assists.clone()), ("sepbit", vec!["nu", "ngc"]));
        let d = describe_name("nodap+ml-dt-user").unwrap();
        assert_eq!((d.base, d.predictor), ("nodap", Some("ml-dt")));
        let d = describe_name("DOGI+user").unwrap();
        assert_eq!(
            (d.base, d.stage, d.family),
            ("dogi", Some("user"), Family::Learned)
        );
        let d = describe_name("fk").unwrap();
        assert_eq!(
            (d.family, d.needs_future, d.form),
            (Family::Oracle, true, None)
        );
        assert_eq!(describe_name("base").unwrap().family, Family::Trivial);
    }

    #[test]
    fn bad_names_are_the_errors_build_gives() {
        let g = geo();
        for bad in [
            "nope",
            "nope+nu",
            "sepbit+xx",
            "sepbit+ngrp",
            "nodap+nu",
            "fk+ngc",
            "oracle-sort+nu",
            "nodap+fk-user",
            "nodap+nope-user",
            "nodap+dogi+User-user",
        ] {
            let e = describe_name(bad)
                .err()
                .unwrap_or_else(|| panic!("{bad} described"));
            let b = build(bad, &serde_json::json!({}), &g).err().unwrap();
            assert_eq!(e.to_string(), b.to_string(), "{bad}");
        }
    }

    #[test]
    fn registry_json_lists_every_policy_with_its_family() {
        let v = registry_json();
        let ps = v["policies"].as_array().unwrap();
        assert_eq!(ps.len(), REGISTRY.len());
        let families: Vec<&str> = Family::ALL.iter().map(|f| f.name()).collect();
        for p in ps {
            assert!(families.contains(&p["family"].as_str().unwrap()), "{p}");
            assert!(
                p["needs_future"].is_boolean() && p["defaults"].is_object(),
                "{p}"
            );
        }
        assert_eq!(v["composites"].as_array().unwrap().len(), COMPOSITES.len());
        // Oracles and only they need the future.
        for p in REGISTRY {
            assert_eq!(p.needs_future, p.family == Family::Oracle, "{}", p.name);
        }
    }
}
