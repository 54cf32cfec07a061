//! Group counts of the replayer's schemes (SepBIT's `trace_replay/`): the
//! range check every scheme with a `classes` parameter makes, and the
//! parameters of those that take nothing else.

use serde::{Deserialize, Serialize};

use crate::error::Error;

/// An error unless `classes` is in `min..=64`.
pub fn check_classes(policy: &str, classes: u32, min: u32) -> crate::error::Result<()> {
    if (min..=64).contains(&classes) {
        return Ok(());
    }
    Err(Error::Parameter {
        policy: policy.into(),
        reason: format!("classes = {classes}; must be {min}..=64"),
    })
}

/// The parameters of the replayer's schemes that take only a group count
/// (DAC, FK, SFS), with the replayer's default.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassCount {
    /// Groups (DAC: levels, one group each; SFS: hotness clusters), the
    /// replayer's `--setNumOpenSegments`.
    pub classes: u32,
}

impl Default for ClassCount {
    fn default() -> Self {
        ClassCount { classes: 6 }
    }
}
