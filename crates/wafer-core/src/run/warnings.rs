//! Warnings every result carries: things about a run that make its numbers
//! mean less than they seem (GC never ran, too short a steady state, odd
//! timestamps, a device much larger than what the trace touches, a segment
//! size the engine chose). A warning never changes a result; it says why
//! to distrust one and which flag helps.

use serde::Serialize;

use super::{RunResult, Sizing};

/// Steady-state drive-writes below which a steady WAF is called short.
pub const MIN_STEADY_DRIVE_WRITES: f64 = 2.0;
/// Footprint share of the logical space below which a device is called
/// much larger than the trace.
pub const MIN_FOOTPRINT_SHARE: f64 = 0.1;
/// A trace lasting longer than this is implausible [s] (one year).
pub const MAX_PLAUSIBLE_SECONDS: f64 = 365.0 * 86_400.0;
/// Share of a trace's duration one gap may take before it is suspicious.
pub const MAX_GAP_SHARE: f64 = 0.9;

/// One warning: a stable code for programs and a sentence for people.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Warning {
    /// Stable identifier, e.g. `gc-never-ran`.
    pub code: &'static str,
    /// What happened and what to do about it.
    pub message: String,
}

fn warn(out: &mut Vec<Warning>, code: &'static str, message: String) {
    out.push(Warning { code, message });
}

/// The codes a policy may raise through its `policy_state.warnings` (a
/// list of `{"code", "message"}`): a window scaled down to fit a short run,
/// a result that used future knowledge, a placement that cannot separate.
pub const POLICY_CODES: &[&str] = &["window-scaled", "future-knowledge", "single-virtual-stream"];

/// The warnings a policy put in its state.
fn policy_warnings(r: &RunResult, out: &mut Vec<Warning>) {
    let Some(list) = r
        .policy_state
        .as_ref()
        .and_then(|s| s.get("warnings"))
        .and_then(|w| w.as_array())
    else {
        return;
    };
    for w in list {
        let code = w.get("code").and_then(|c| c.as_str()).unwrap_or("");
        let message = w.get("message").and_then(|m| m.as_str()).unwrap_or("");
        let code = POLICY_CODES
            .iter()
            .find(|&&c| c == code)
            .copied()
            .unwrap_or("policy");
        warn(out, code, format!("{}: {message}", r.policy));
    }
}

/// The warnings of `r` (its `warnings` field is ignored).
pub fn collect(r: &RunResult, warmup_drive_writes: f64) -> Vec<Warning> {
    let mut out = Vec::new();
    policy_warnings(r, &mut out);
    let geo = &r.geometry;
    let repeat_hint = if r.trace.is_some() {
        "replay the trace several times with --repeat K, or size the device smaller"
    } else {
        "write more (--writes / --drive-writes) or use a smaller device"
    };
    if r.user_writes > 0 && r.counters.victims == 0 {
        warn(
            &mut out,
            "gc-never-ran",
            format!(
                "GC never ran: {} user blocks ({:.2} drive-writes) on a {}-block device never filled it, \
                 so WAF is 1 whatever the policy; {repeat_hint}",
                r.user_writes, r.drive_writes, geo.logical_blocks
            ),
        );
    }
    if r.user_writes > 0 && r.steady_waf.is_none() {
        warn(
            &mut out,
            "warm-up-not-reached",
            format!(
                "the run ended after {:.2} drive-writes, before the warm-up of {warmup_drive_writes} \
                 drive-writes ended: no steady-state WAF; {repeat_hint}, or lower --warmup-drive-writes",
                r.drive_writes
            ),
        );
    } else if r.steady_waf.is_some()
        && r.drive_writes - warmup_drive_writes < MIN_STEADY_DRIVE_WRITES
    {
        warn(
            &mut out,
            "short-steady-state",
            format!(
                "only {:.2} drive-writes after the warm-up (fewer than {MIN_STEADY_DRIVE_WRITES}): the \
                 steady-state WAF may not have settled; {repeat_hint}",
                r.drive_writes - warmup_drive_writes
            ),
        );
    }
    if let Some(asked) = r.gc.lowered_from {
        warn(
            &mut out,
            "gc-watermark-lowered",
            format!(
                "the foreground GC watermark of {asked} free segments (gc_low_fraction) cannot be held \
                 with every logical block valid beside the policy's open segments; GC started below {} \
                 free segments instead (raise --op or use smaller segments to keep it)",
                r.gc.start_below
            ),
        );
    }
    if geo.segment_blocks < geo.requested_segment_blocks {
        warn(
            &mut out,
            "segments-fitted",
            format!(
                "segment size reduced from {} to {} blocks so that the {}-block device has spare room \
                 for at least {} segments; pass --segment-blocks to choose it",
                geo.requested_segment_blocks,
                geo.segment_blocks,
                geo.logical_blocks,
                crate::device::FIT_SPARE_SEGMENTS
            ),
        );
    }
    if let Some(t) = &r.trace {
        if t.read.backwards_timestamps > 0 {
            warn(
                &mut out,
                "timestamps-out-of-order",
                format!(
                    "{} requests had a timestamp earlier than the one before; they were raised to it \
                     (requests keep file order)",
                    t.read.backwards_timestamps
                ),
            );
        }
        if t.duration_seconds > MAX_PLAUSIBLE_SECONDS {
            warn(
                &mut out,
                "implausible-duration",
                format!(
                    "the trace spans {:.3e} s ({:.1} years): a timestamp is probably bogus or in \
                     another unit; check the format (--format) or select a time window (--start/--end)",
                    t.duration_seconds,
                    t.duration_seconds / MAX_PLAUSIBLE_SECONDS
                ),
            );
        } else if t.read.requests >= 100
            && t.max_gap_seconds > MAX_GAP_SHARE * t.duration_seconds
            && t.max_gap_seconds > 0.0
        {
            warn(
                &mut out,
                "implausible-gap",
                format!(
                    "one gap of {:.3e} s is {:.0}% of the trace's {:.3e} s: probably a bogus timestamp",
                    t.max_gap_seconds,
                    100.0 * t.max_gap_seconds / t.duration_seconds,
                    t.duration_seconds
                ),
            );
        }
        let share = t.footprint_blocks as f64 / geo.logical_blocks as f64;
        if t.sizing != Sizing::Footprint && share < MIN_FOOTPRINT_SHARE {
            warn(
                &mut out,
                "device-larger-than-footprint",
                format!(
                    "the trace touches {} blocks, {:.2}% of the {}-block device: the rest only holds \
                     prefilled data and GC rarely needs it; size the device from the footprint (the \
                     default: drop --capacity/--logical-blocks/--address-space)",
                    t.footprint_blocks,
                    100.0 * share,
                    geo.logical_blocks
                ),
            );
        }
    }
    out
}
