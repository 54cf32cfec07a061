//! Placement policies: which group each written block goes to. The trait
//! they implement and the values the engine hands them are the engine's
//! ([`crate::engine::placement`], re-exported here).
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
pub(crate) use crate::engine::forward_block_hooks;
pub use crate::engine::{BlockEvent, Ctx, Event, GcBlock, Placement, UserWrite};
use crate::error::{lookup, Result};

/// A registered policy.
pub struct PolicyInfo {
    /// Name used by the CLI and the Python API.
    pub name: &'static str,
    /// One line: what it does and where it comes from.
    pub description: &'static str,
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
    sepbit::INFO_HALF,
    sepbit::INFO_DOUBLE,
    sepbit::INFO_GW,
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

/// Policies that train online: they need the process's trainer
/// ([`crate::model::train`]), so wafer-core's own tests leave them to
/// wafer-learn's.
pub const LEARNED: &[&str] = &["shiro", "shiro-ng", "phftl", "ml-dt", "dogi", "lstm-km"];

/// The parameter defaults of the policy registered under `name`, if any.
pub fn defaults(name: &str) -> Option<Value> {
    REGISTRY
        .iter()
        .find(|p| p.name == name)
        .map(|p| (p.defaults)())
}

/// Build the policy registered under `name` with parameter overrides `params`.
/// `POLICY+nu` / `POLICY+ngc` build the oracle-assisted variant ([`assisted`]);
/// `nodap+POLICY-user` NoDaP with POLICY's user predictions ([`nodap::user`]).
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
    let info = lookup("policy", REGISTRY, name, |p| p.name)?;
    (info.build)(params, geo)
}
