//! Placement policies: which group each written block goes to. The trait
//! they implement and the values the engine hands them are the engine's
//! ([`crate::engine::placement`], re-exported here).
//!
//! Adding a policy touches its own file and one line of [`REGISTRY`]. Each
//! file opens with a doc comment naming the paper and section it follows and
//! every deliberate deviation, then its parameter struct (paper defaults,
//! units), then the implementation. A file (or folder) holds one policy and
//! its own variants; what several policies share is in [`kit`], and names
//! are parsed in one place, [`PolicyName`].

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
pub mod kit;
mod lstm_km;
mod midas;
mod ml_dt;
mod multilog;
mod multiqueue;
mod name;
pub mod nodap;
mod ofios;
mod oracle_hotcold;
mod oracle_sort;
mod phftl;
mod sepbit;
mod sfr;
mod sfs;
pub mod shiro;
mod two_r;
mod uw;
mod vstream;
mod warcip;

use serde_json::Value;

use crate::device::Geometry;
pub(crate) use crate::engine::forward_block_hooks;
pub use crate::engine::{BlockEvent, Ctx, Event, GcBlock, Placement, UserWrite};
use crate::error::{lookup, Result};
/// The stream policies' device model, where the run layer names it
/// (`policy::streams::StreamLimit`).
pub use kit::streams;
pub use name::{Form, PolicyName};

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
    /// model of [`kit::streams`] (FIOS, OFIOS, vStream, AutoStream, equal
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

/// The registered policy `name`, or an error listing those that exist.
pub fn info(name: &str) -> Result<&'static PolicyInfo> {
    lookup("policy", REGISTRY, name, |p| p.name)
}

/// One form of composite policy name, described as data (`wafer policies`
/// prints these; [`PolicyName`] parses them for [`describe_name`] and
/// [`build`]).
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
/// one ([`COMPOSITES`]), as [`PolicyName`] parses it for [`build`] too.
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
    Ok(PolicyName::parse(name)?.describe())
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

/// The parameter defaults of the policy registered under `name`, if any.
pub fn defaults(name: &str) -> Option<Value> {
    REGISTRY
        .iter()
        .find(|p| p.name == name)
        .map(|p| (p.defaults)())
}

/// Build the policy registered under `name` with parameter overrides `params`.
/// `POLICY+nu` / `POLICY+ngc` build the oracle-assisted variant ([`assisted`]);
/// `nodap+POLICY-user` NoDaP with POLICY's user predictions ([`nodap::user`]);
/// `dogi+STAGE` one of DOGI's ablations ([`COMPOSITES`]).
pub fn build(name: &str, params: &Value, geo: &Geometry) -> Result<Box<dyn Placement>> {
    let parsed = PolicyName::parse(name)?;
    let base = parsed.info();
    match parsed.form {
        None => (base.build)(params, geo),
        Some(Form::DogiStage(stage)) => {
            let mut p = params.clone();
            if !p.is_object() {
                p = serde_json::json!({});
            }
            p["stage"] = serde_json::to_value(stage).expect("a stage serialises");
            (base.build)(&p, geo)
        }
        Some(Form::NodapUser { predictor }) => Ok(Box::new(nodap::user::NoDapUser::build(
            name, predictor, params, geo,
        )?)),
        Some(Form::Assisted(assists)) => {
            let inner = (base.build)(params, geo)?;
            Ok(Box::new(assisted::Assisted::new(
                inner, name, base.name, assists,
            )))
        }
    }
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

    /// The one parser: every name of the grammar prints canonically and
    /// parses back to itself, classes as its form's row says (and as
    /// [`describe_name`] does), and every row of [`COMPOSITES`] is a form
    /// it parses.
    #[test]
    fn names_round_trip_through_the_parser_and_class_as_their_form() {
        let mut rows_seen = Vec::new();
        for name in names() {
            let p = PolicyName::parse(&name).unwrap_or_else(|e| panic!("{name}: {e}"));
            let printed = p.to_string();
            let again = PolicyName::parse(&printed).unwrap();
            assert_eq!(
                (again.base, again.form),
                (p.base, p.form),
                "{name} -> {printed}"
            );
            assert_eq!(again.to_string(), printed, "{name}");
            let d = describe_name(&name).unwrap();
            assert_eq!(
                (p.family(), p.needs_future()),
                (d.family, d.needs_future),
                "{name}"
            );
            match p.form {
                None => {
                    assert_eq!(printed, name);
                    let i = info(&name).unwrap();
                    assert_eq!((p.family(), p.needs_future()), (i.family, i.needs_future));
                }
                Some(f) => {
                    let c = f.composite();
                    assert_eq!(
                        (p.family(), p.needs_future()),
                        (c.family, c.needs_future),
                        "{name}"
                    );
                    if !c.applies_to.is_empty() {
                        assert!(c.applies_to.contains(&p.base), "{name}");
                    }
                    rows_seen.push(c.form);
                }
            }
        }
        for c in COMPOSITES {
            assert!(rows_seen.contains(&c.form), "no name parses as {}", c.form);
            for e in c.examples {
                let p = PolicyName::parse(e).unwrap();
                assert_eq!(p.form.map(|f| f.composite().form), Some(c.form), "{e}");
                assert_eq!(&p.to_string(), e, "an example is spelt canonically");
            }
        }
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
