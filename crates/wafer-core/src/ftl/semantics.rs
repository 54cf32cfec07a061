//! GC-check semantics that differ between wafer and its peers (issue 14),
//! chosen once per run: when an overwritten copy counts as garbage of the
//! log, whether GC is checked per block or per request, and how many victims
//! one check may collect. The engine reads these flags outside its per-block
//! work; with the defaults every branch they guard is never taken.

use crate::device::{DeviceConfig, GarbageAccounting, GcCheck};

/// The engine's GC-check conventions.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct GcSemantics {
    /// Garbage of open segments joins the log's count only at seal.
    pub at_seal: bool,
    /// GC is checked after each write / trim request, not after each block.
    pub per_request: bool,
    /// Victims per check at most; `u32::MAX`: until the trigger clears.
    pub pick: u32,
}

impl GcSemantics {
    /// The conventions `cfg` asks for.
    pub fn new(cfg: &DeviceConfig) -> Self {
        let per_request = cfg.gc_check == GcCheck::Request;
        GcSemantics {
            at_seal: cfg.garbage_accounting == GarbageAccounting::AtSeal,
            per_request,
            pick: cfg
                .pick_segments
                .unwrap_or(if per_request { 1 } else { u32::MAX }),
        }
    }
}
