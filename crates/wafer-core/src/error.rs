//! Errors are values: every failure the engine can meet is a variant here, so
//! the binding layer maps each one to a Python exception and no panic crosses
//! the FFI boundary.

use thiserror::Error;

/// Result type of the engine.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in a replay, with the reason spelled out.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// The device configuration is impossible (zero capacity, OP <= 0, ...).
    #[error("invalid device configuration: {field}: {reason}")]
    Config {
        /// Name of the offending field, as the user spells it.
        field: String,
        /// What is wrong and what would be accepted.
        reason: String,
    },
    /// A policy or victim-selector name that is not registered.
    #[error("unknown {kind} '{name}'; known: {known}")]
    UnknownName {
        /// "policy" or "victim selector".
        kind: &'static str,
        /// The name asked for.
        name: String,
        /// Comma-separated registered names.
        known: String,
    },
    /// A policy parameter that does not exist or has a bad value.
    #[error("policy '{policy}': {reason}")]
    Parameter {
        /// Policy the parameter was given to.
        policy: String,
        /// What is wrong and which keys exist.
        reason: String,
    },
    /// A workload spec string that does not parse.
    #[error("workload spec '{spec}': {reason}")]
    Workload {
        /// The spec as given.
        spec: String,
        /// What is wrong and what would be accepted.
        reason: String,
    },
    /// The simulation cannot go on (for example GC cannot free a segment
    /// because over-provisioning is too small for the number of groups).
    #[error("simulation stopped: {0}")]
    Simulation(String),
    /// A trace file that cannot be read: bad line, unknown format, I/O error.
    #[error("{file}{}: {reason}", line.map(|l| format!(":{l}")).unwrap_or_default())]
    Trace {
        /// The file.
        file: String,
        /// 1-based line number, when the problem is on one line.
        line: Option<u64>,
        /// What is wrong.
        reason: String,
    },
    /// A model file that cannot be used: unreadable, corrupt, of another
    /// shape or policy, or holding non-finite weights.
    #[error("model {file}: {reason}")]
    Model {
        /// The file (or the model's source).
        file: String,
        /// What is wrong.
        reason: String,
    },
    /// The run would need more memory than the machine has (or than the
    /// limit allows): what it needs, what there is, which flags help.
    #[error("not enough memory: {0}")]
    Resources(String),
    /// An FTL invariant was broken (only reported by the checker).
    #[error("FTL invariant broken: {0}")]
    Invariant(String),
    /// A stop was asked for (Ctrl-C; [`crate::interrupt`]).
    #[error("interrupted")]
    Interrupted,
    /// A checkpoint that cannot be written or resumed from: unreadable,
    /// truncated, of another wafer version, or of a run that cannot be
    /// checkpointed.
    #[error("checkpoint {file}: {reason}")]
    Checkpoint {
        /// The checkpoint file (or what was being checkpointed).
        file: String,
        /// What is wrong and what would help.
        reason: String,
    },
}

/// The entry of a registry table named `name`, or an error listing the names
/// that exist (never a silent fallback).
pub(crate) fn lookup<'a, T>(
    kind: &'static str,
    table: &'a [T],
    name: &str,
    name_of: fn(&T) -> &str,
) -> Result<&'a T> {
    table
        .iter()
        .find(|t| name_of(t) == name)
        .ok_or_else(|| Error::UnknownName {
            kind,
            name: name.to_string(),
            known: table.iter().map(name_of).collect::<Vec<_>>().join(", "),
        })
}

impl Error {
    pub(crate) fn config(field: &str, reason: impl Into<String>) -> Self {
        Error::Config {
            field: field.to_string(),
            reason: reason.into(),
        }
    }
    pub(crate) fn trace(file: &str, line: Option<u64>, reason: impl Into<String>) -> Self {
        Error::Trace {
            file: file.to_string(),
            line,
            reason: reason.into(),
        }
    }
    pub(crate) fn workload(spec: &str, reason: impl Into<String>) -> Self {
        Error::Workload {
            spec: spec.to_string(),
            reason: reason.into(),
        }
    }
}
