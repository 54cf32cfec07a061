//! Policy names: the one parser of the composite-name grammar
//! ([`super::COMPOSITES`]). [`super::build`] builds what it parses,
//! [`super::describe_name`] describes it, and its family and
//! `needs_future` class it; none of them reads a name any other way.
//!
//! ```text
//! NAME   := POLICY                       a registered policy
//!         | POLICY+ASSIST[+ASSIST...]    DOGI §3.2: POLICY with NoDaP's components
//!         | nodap+POLICY-user            DOGI Fig. 2(a): NoDaP with POLICY's user predictions
//!         | dogi+STAGE                   DOGI Fig. 14: STAGE = User | Grp | GC, any case
//! ASSIST := nu | ngc | ngrp
//! ```

use std::fmt;

use super::assisted::Assists;
use super::dogi::Stage;
use super::{info, Composite, Family, NameInfo, PolicyInfo, COMPOSITES};
use crate::error::{Error, Result};

/// The prefix and suffix around POLICY in `nodap+POLICY-user`.
const NODAP_USER: (&str, &str) = ("nodap+", "-user");

/// DOGI's stages as `dogi+STAGE` spells them (any case).
const STAGES: [(&str, Stage); 3] = [
    ("User", Stage::User),
    ("Grp", Stage::Grp),
    ("GC", Stage::Full),
];

/// A policy name, parsed once: the registered policy it takes its
/// parameters from and, for a composite, its form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PolicyName<'a> {
    /// The name as given.
    pub name: &'a str,
    /// The registered policy whose parameters the name takes (`dogi` for
    /// `dogi+User`, `nodap` for `nodap+sepbit-user`, `midas` for
    /// `midas+ngc`; the name itself for a registered one).
    pub base: &'static str,
    /// The composite form; `None` for a registered name.
    pub form: Option<Form>,
}

/// A composite form with what its name says ([`COMPOSITES`] describes each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// `POLICY+ASSIST[+ASSIST...]`: POLICY (the base) with NoDaP's assists.
    Assisted(Assists),
    /// `nodap+POLICY-user`: NoDaP with the registered practical policy
    /// `predictor`'s user-write predictions.
    NodapUser {
        /// The policy whose predictions NoDaP takes.
        predictor: &'static str,
    },
    /// `dogi+STAGE`: one of DOGI's ablations.
    DogiStage(Stage),
}

impl Form {
    /// The row of [`COMPOSITES`] that describes this form.
    pub fn composite(self) -> &'static Composite {
        let form = match self {
            Form::Assisted(_) => "POLICY+ASSIST[+ASSIST...]",
            Form::NodapUser { .. } => "nodap+POLICY-user",
            Form::DogiStage(_) => "dogi+STAGE",
        };
        COMPOSITES
            .iter()
            .find(|c| c.form == form)
            .expect("every form has its row in COMPOSITES")
    }
}

impl<'a> PolicyName<'a> {
    /// Parse `name`; an unknown policy, assist or predictor, or a form that
    /// does not apply to its policy, is an error naming what exists.
    pub fn parse(name: &'a str) -> Result<Self> {
        let (base, form) = if let Some(stage) = stage_of(name) {
            ("dogi", Some(Form::DogiStage(stage)))
        } else if let Some(predictor) = name
            .strip_prefix(NODAP_USER.0)
            .and_then(|n| n.strip_suffix(NODAP_USER.1))
        {
            let predictor = check_predictor(name, predictor)?.name;
            ("nodap", Some(Form::NodapUser { predictor }))
        } else if let Some((base, assists)) = parse_assists(name)? {
            (base, Some(Form::Assisted(assists)))
        } else {
            (name, None)
        };
        Ok(PolicyName {
            name,
            base: info(base)?.name,
            form,
        })
    }

    /// The registry entry of the base policy.
    pub fn info(&self) -> &'static PolicyInfo {
        info(self.base).expect("a parsed name's base is registered")
    }

    /// The family the name runs in: its form's, else its policy's.
    pub fn family(&self) -> Family {
        self.form
            .map_or(self.info().family, |f| f.composite().family)
    }

    /// Whether the name places by the annotated future.
    pub fn needs_future(&self) -> bool {
        self.form
            .map_or(self.info().needs_future, |f| f.composite().needs_future)
    }

    /// What the name stands for, as [`super::describe_name`] gives it.
    pub fn describe(&self) -> NameInfo {
        let (mut assists, mut predictor, mut stage) = (Vec::new(), None, None);
        match self.form {
            Some(Form::Assisted(a)) => assists = a.names(),
            Some(Form::NodapUser { predictor: p }) => predictor = Some(p),
            Some(Form::DogiStage(s)) => stage = Some(s.name()),
            None => {}
        }
        NameInfo {
            name: self.name.into(),
            base: self.base,
            form: self.form.map(|f| f.composite().form),
            assists,
            predictor,
            stage,
            family: self.family(),
            needs_future: self.needs_future(),
        }
    }
}

/// The canonical spelling: assists in the order `nu`, `ngc`, `ngrp`, a
/// stage as `User`, `Grp` or `GC`; parsing it gives the same name back.
impl fmt::Display for PolicyName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.form {
            None => f.write_str(self.base),
            Some(Form::Assisted(a)) => {
                f.write_str(self.base)?;
                a.names().iter().try_for_each(|s| write!(f, "+{s}"))
            }
            Some(Form::NodapUser { predictor }) => {
                write!(f, "{}{predictor}{}", NODAP_USER.0, NODAP_USER.1)
            }
            Some(Form::DogiStage(s)) => {
                let (spelt, _) = STAGES
                    .iter()
                    .find(|(_, t)| *t == s)
                    .expect("every stage is spelt");
                write!(f, "dogi+{spelt}")
            }
        }
    }
}

/// The stage of `dogi+STAGE`, if `name` is one.
fn stage_of(name: &str) -> Option<Stage> {
    let lower = name.to_ascii_lowercase();
    let spelt = lower.strip_prefix("dogi+")?;
    STAGES
        .iter()
        .find(|(s, _)| s.eq_ignore_ascii_case(spelt))
        .map(|&(_, stage)| stage)
}

/// The registered policy `predictor` of `nodap+PREDICTOR-user` (`name`),
/// if it can be one: a registered policy that does not place by the future.
fn check_predictor(name: &str, predictor: &str) -> Result<&'static PolicyInfo> {
    if predictor.contains('+') {
        return Err(Error::Parameter {
            policy: name.into(),
            reason: format!(
                "the predictor must be a registered policy, not a composite: '{predictor}'"
            ),
        });
    }
    let p = info(predictor)?;
    if p.needs_future {
        return Err(Error::Parameter {
            policy: name.into(),
            reason: format!(
                "the predictor must be a practical policy (sepbit, midas, phftl, ml-dt, dogi, ...); \
                 '{predictor}' places by the future"
            ),
        });
    }
    Ok(p)
}

/// Split `name` into a base policy and its oracle-assist suffixes, if it
/// has any (the base is checked against the registry by the caller).
fn parse_assists(name: &str) -> Result<Option<(&str, Assists)>> {
    let mut parts = name.split('+');
    let base = parts.next().unwrap_or_default();
    let mut a = Assists::default();
    let mut any = false;
    for s in parts {
        any = true;
        match s {
            "nu" => a.user = true,
            "ngc" => a.gc = true,
            "ngrp" if base == "ml-dt" => a.grp = true,
            "ngrp" => {
                return Err(Error::Parameter {
                    policy: name.into(),
                    reason: "+ngrp (NoDaP's group configuration) applies to ml-dt, the policy \
                             with multi-class lifetime predictions and one GC group (DOGI §3.2)"
                        .into(),
                })
            }
            other => {
                return Err(Error::Parameter {
                    policy: name.into(),
                    reason: format!(
                        "unknown oracle assist '+{other}'; known: +nu (NoDaP user placement), \
                         +ngc (NoDaP GC relocation), +ngrp (NoDaP groups, ml-dt)"
                    ),
                })
            }
        }
    }
    let oracle = info(base).is_ok_and(|p| p.needs_future);
    if any && oracle {
        return Err(Error::Parameter {
            policy: name.into(),
            reason: format!(
                "'{base}' already places by the future; oracle assists apply to practical policies"
            ),
        });
    }
    Ok(any.then_some((base, a)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assists_parse_in_any_order_and_print_in_one() {
        let a = |user, gc, grp| Some(Form::Assisted(Assists { user, gc, grp }));
        let p = |n| PolicyName::parse(n).unwrap();
        assert_eq!(p("midas").form, None);
        assert_eq!(
            (p("midas+ngc").base, p("midas+ngc").form),
            ("midas", a(false, true, false))
        );
        assert_eq!(p("sepbit+ngc+nu").form, a(true, true, false));
        assert_eq!(p("sepbit+ngc+nu").to_string(), "sepbit+nu+ngc");
        assert_eq!(p("ml-dt+ngc+ngrp").form, a(false, true, true));
        let e = |n| PolicyName::parse(n).unwrap_err().to_string();
        assert!(e("midas+ngrp").contains("applies to ml-dt"));
        let unknown = e("midas+xyz");
        assert!(
            unknown.contains("+nu") && unknown.contains("+ngc"),
            "{unknown}"
        );
        assert!(e("nodap+nu").contains("already places by the future"));
    }

    /// The tokens the parser reads are the parts [`COMPOSITES`] lists.
    #[test]
    fn the_parsers_tokens_are_the_grammars_parts() {
        let parts = |f: Form| f.composite().parts.to_vec();
        let all = Assists {
            user: true,
            gc: true,
            grp: true,
        };
        let assists: Vec<String> = all.names().iter().map(|a| format!("+{a}")).collect();
        assert_eq!(parts(Form::Assisted(Assists::default())), assists);
        let nodap = parts(Form::NodapUser {
            predictor: "sepbit",
        });
        assert_eq!(nodap, [NODAP_USER.0, NODAP_USER.1]);
        let stages: Vec<&str> = STAGES.iter().map(|(s, _)| *s).collect();
        assert_eq!(parts(Form::DogiStage(Stage::User)), stages);
    }

    #[test]
    fn predictors_and_stages() {
        let p = |n| PolicyName::parse(n).unwrap();
        assert_eq!(
            p("nodap+ml-dt-user").form,
            Some(Form::NodapUser { predictor: "ml-dt" })
        );
        assert_eq!(p("nodap+ml-dt-user").base, "nodap");
        assert_eq!(p("DOGI+user").form, Some(Form::DogiStage(Stage::User)));
        assert_eq!(p("dogi+gc").to_string(), "dogi+GC");
        assert_eq!(
            p("sepbit+nu").form.map(|f| f.composite().form),
            Some("POLICY+ASSIST[+ASSIST...]")
        );
        assert_eq!(stage_of("dogi+full"), None);
        assert_eq!(stage_of("dogi+User+nu"), None);
    }
}
