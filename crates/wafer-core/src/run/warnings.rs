//! Warnings every result carries: things about a run that make its numbers
//! mean less than they seem (GC never ran, too short a steady state, a
//! result that is only the prefill's transient, a repeated or exhausted
//! trace, odd timestamps, a device much larger than what the trace touches,
//! a segment size the engine chose, a trace read from the wrong events). A
//! warning never changes a result; it says why to distrust one and which
//! flag helps.

use serde::Serialize;

use super::{RunResult, Sizing};
use crate::timing::SsdConfig;

/// Steady-state drive-writes below which a steady WAF is called short.
pub const MIN_STEADY_DRIVE_WRITES: f64 = 2.0;
/// Footprint share of the logical space below which a device is called
/// much larger than the trace.
pub const MIN_FOOTPRINT_SHARE: f64 = 0.1;
/// A trace lasting longer than this is implausible [s] (one year).
pub const MAX_PLAUSIBLE_SECONDS: f64 = 365.0 * 86_400.0;
/// Share of a trace's duration one gap may take before it is suspicious.
pub const MAX_GAP_SHARE: f64 = 0.9;
/// Drive-writes after the warm-up below which a result is only the
/// transient after the prefill (every block still holds its prefilled copy
/// or its first rewrite).
pub const MIN_SETTLED_DRIVE_WRITES: f64 = 1.0;
/// A run asked to write this many user blocks or more asks for all the
/// trace has (the Python API passes 2^63, Rust callers `u64::MAX`).
pub const ALL_WRITES: u64 = 1 << 62;
/// A blkparse trace read from its issue events whose queue events are more
/// than this many times as many is read from the wrong events.
pub const MAX_QUEUE_PER_ISSUE: f64 = 10.0;

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

/// The warnings of `r` (its `warnings` field is ignored); `asked_writes`:
/// the user blocks the run was to write, when its source ended before.
pub fn collect(r: &RunResult, warmup_drive_writes: f64, asked_writes: Option<u64>) -> Vec<Warning> {
    let mut out = Vec::new();
    policy_warnings(r, &mut out);
    let geo = &r.geometry;
    let repeat_hint = if r.trace.is_some() {
        "extend the trace with --extend K (K drive-writes in all, its lifetimes kept)"
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
    if r.timing.is_none() && r.user_writes > 0 && r.steady_waf.is_none() {
        warn(
            &mut out,
            "warm-up-not-reached",
            format!(
                "the run ended after {:.2} drive-writes, before the warm-up of {warmup_drive_writes} \
                 drive-writes ended: no steady-state WAF; {repeat_hint}, or lower --warmup-drive-writes",
                r.drive_writes
            ),
        );
    } else if r.timing.is_none()
        && r.steady_waf.is_some()
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
    let settled = r.drive_writes - warmup_drive_writes;
    if r.timing.is_none() && r.user_writes > 0 && settled < MIN_SETTLED_DRIVE_WRITES {
        warn(
            &mut out,
            "prefill-transient",
            format!(
                "{} is only the transient after the {}: {:.2} drive-writes, {}, so most blocks \
                 still hold their first copy or first rewrite; {repeat_hint}",
                "the WAF",
                if r.conventions.prefill {
                    "prefill"
                } else {
                    "start on an empty device"
                },
                r.drive_writes,
                if settled > 0.0 {
                    format!(
                        "{settled:.2} after the warm-up of {warmup_drive_writes} (fewer than \
                         {MIN_SETTLED_DRIVE_WRITES})"
                    )
                } else {
                    format!("all inside the warm-up of {warmup_drive_writes}")
                },
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
    // The GC reserve's free segments come out of the spare area: past half
    // of it, garbage has little room and WAF is the reserve's, not the
    // policy's (MQSim's shipped config keeps 5% of its blocks free out of
    // 7% spare: WAF 24 on random writes).
    let seg = geo.segment_blocks.max(1) as u64;
    let spare = (geo.segments as u64).saturating_sub((geo.logical_blocks as u64).div_ceil(seg));
    let reserve = r.gc.start_below as u64;
    if spare > 0 && 2 * reserve > spare {
        let op = |segs: u64| segs as f64 * seg as f64 / geo.logical_blocks.max(1) as f64;
        warn(
            &mut out,
            "gc-reserve-takes-op",
            format!(
                "the GC reserve of {reserve} free segments takes {:.0}% of the {spare} spare segments: \
                 over-provisioning is {:.3} on paper but {:.3} for garbage, so WAF reflects the reserve; \
                 lower the reserve (--gc-reserve, a preset's gc.exec_threshold) or raise the over-provisioning",
                100.0 * reserve as f64 / spare as f64,
                op(spare),
                op(spare.saturating_sub(reserve))
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
        if let Some(asked) = asked_writes.filter(|&a| a > r.user_writes && a < ALL_WRITES) {
            let dw = |w: u64| w as f64 / geo.logical_blocks as f64;
            warn(
                &mut out,
                "trace-shorter-than-asked",
                format!(
                    "the run was to write {asked} user blocks ({:.2} drive-writes) but the trace ended \
                     after {} ({:.2} drive-writes); extend it with --extend {:.2} (its lifetimes kept) \
                     to write that much",
                    dw(asked),
                    r.user_writes,
                    dw(r.user_writes),
                    dw(asked)
                ),
            );
        }
        if t.passes > 1 {
            warn(
                &mut out,
                "periodic-repeat",
                format!(
                    "--repeat replayed the trace {} times in the same order: every block written \
                     once per pass lives exactly one pass, so policies that separate blocks by age \
                     or lifetime can reach WAF 1.000 on it whatever the real workload; --extend K \
                     continues the trace with its own lifetime distribution instead",
                    t.passes
                ),
            );
        }
        if t.read.truncated {
            warn(
                &mut out,
                "trace-truncated",
                "reading stopped before the trace's end (a cut tar archive, or a corrupt one read \
                 with --skip-bad): the results cover the requests before the cut"
                    .to_string(),
            );
        }
        let kept = t.read.requests + t.read.filtered + t.read.zero_size;
        if t.format.starts_with("blkparse")
            && t.format != "blkparse:Q"
            && t.read.unkept_events as f64 > MAX_QUEUE_PER_ISSUE * kept as f64
        {
            warn(
                &mut out,
                "few-issue-events",
                format!(
                    "the trace was read from its {kept} issue (D) events, but it has {} queue (Q) \
                     events: most requests never show an issue event on this device (stacked or \
                     remapped?); --format blkparse:Q reads the queue events",
                    t.read.unkept_events
                ),
            );
        }
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
        // A timed run's drive is the preset's, preconditioned whole: a
        // small trace inside it is what a real drive sees.
        if r.timing.is_none() && t.sizing != Sizing::Footprint && share < MIN_FOOTPRINT_SHARE {
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
    if let Some(t) = &r.timing {
        timing(&mut out, r, t);
    }
    out
}

/// A timed run that timed nothing: its latency and throughput are empty,
/// not fast.
fn no_timed_requests(t: &crate::timing::TimingResult) -> Option<Warning> {
    (t.requests == 0).then(|| Warning {
        code: "no-timed-requests",
        message: "no request was timed: the trace or workload gave none after the \
                  preconditioning, so the latency and throughput figures are empty, not fast"
            .to_string(),
    })
}

/// The warnings of a timed run.
fn timing(out: &mut Vec<Warning>, r: &RunResult, t: &crate::timing::TimingResult) {
    if let Some(w) = no_timed_requests(t) {
        out.push(w);
        return;
    }
    let logical = r.geometry.logical_blocks as f64;
    let pre = t.precondition_writes as f64 / logical;
    if r.user_writes > 0 && pre - 1.0 < MIN_SETTLED_DRIVE_WRITES {
        warn(
            out,
            "prefill-transient",
            format!(
                "every timing and WAF figure is taken {}: GC is not in its steady state; \
                 precondition the drive to 2 drive-writes or more (--precondition 2)",
                if pre < 1.0 {
                    format!("on a drive {:.0}% written", 100.0 * pre)
                } else {
                    format!("{:.2} drive-writes after the fill", pre - 1.0)
                }
            ),
        );
    }
    if t.fit_device && t.cache.capacity_pages >= r.geometry.logical_blocks as u64 {
        warn(
            out,
            "device-smaller-than-cache",
            format!(
                "the {}-page write cache holds the whole {}-page device (--fit-device sized it to \
                 the run): writes need never reach flash; drop --fit-device for the preset's drive",
                t.cache.capacity_pages, r.geometry.logical_blocks
            ),
        );
    }
    let host_pages = t.write_bytes.div_ceil(r.geometry.block_size as u64);
    let flushed = t.flush.map_or(0, |f| f.user_programs);
    if t.writes > 0 && t.flash.user_programs == flushed {
        warn(
            out,
            "writes-stayed-in-cache",
            format!(
                "no host write reached flash while requests ran: the {} pages written stayed in the \
                 {}-page write cache ({}), so write latencies are DRAM's; replay more (--extend) or \
                 use a preset with a smaller cache",
                host_pages,
                t.cache.capacity_pages,
                match t.flush {
                    Some(f) => format!("{} pages flushed at the end in {:.3} s", f.pages, f.seconds),
                    None => format!("{} dirty at the end, never flushed", t.cache.dirty_pages_at_end),
                }
            ),
        );
    }
    if t.flash.unmapped_reads > 0 {
        let page_reads = t.hits.cache_read_hits + t.hits.cache_read_misses;
        warn(
            out,
            "reads-of-unwritten-pages",
            format!(
                "{} page reads ({:.1}% of them) were of pages never written: zeroes, no flash \
                 access, so read latencies are low; precondition the drive (--precondition 1 or \
                 more) so every page holds data",
                t.flash.unmapped_reads,
                100.0 * t.flash.unmapped_reads as f64 / page_reads.max(1) as f64
            ),
        );
    }
}

/// Warning `mqsim-xml-unsupported` of a timed run whose SSD was imported
/// from an MQSim configuration file (`--timing FILE.xml`, or the preset
/// `wafer presets import` wrote from one): what the file asks for that the
/// run does not do, one clause per element, as the import found it
/// (`SsdConfig::import_warnings`, timing/mqsim_xml.rs). `None` when the
/// import applied everything, and for wafer's own presets.
pub fn mqsim_xml_unsupported(ssd: &SsdConfig) -> Option<Warning> {
    if ssd.import_warnings.is_empty() {
        return None;
    }
    Some(Warning {
        code: "mqsim-xml-unsupported",
        message: format!(
            "the MQSim configuration of timing device '{}' asks for what this run does not do \
             (docs/FIDELITY.md, \"MQSim's configuration files\"): {}",
            ssd.name,
            ssd.import_warnings.join("; ")
        ),
    })
}

/// A timed run's saved preconditioning was not used as it stood: an entry
/// found was rebuilt (corrupt, of another version or drive), or the new
/// one could not be saved (e.g. an unwritable folder: the run goes on
/// without the cache).
pub fn precondition_cache(
    r: Option<&crate::timing::result::PreconditionCacheReport>,
) -> Option<Warning> {
    let r = r?;
    let note = r.note.as_ref()?;
    Some(Warning {
        code: "precondition-cache",
        message: format!("saved preconditioning {}: {note}", r.path),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timed_run_that_timed_nothing_says_so() {
        let mut t = crate::timing::TimingResult::default();
        assert_eq!(no_timed_requests(&t).unwrap().code, "no-timed-requests");
        t.requests = 1;
        assert!(no_timed_requests(&t).is_none());
    }

    #[test]
    fn mqsim_xml_unsupported_names_the_elements() {
        let mut ssd = SsdConfig::load("mqsim-default").unwrap();
        assert_eq!(mqsim_xml_unsupported(&ssd), None);
        ssd.name = "drive".into();
        ssd.import_warnings = vec!["Seed (line 3): a".into(), "FIFO (line 9): b".into()];
        let w = mqsim_xml_unsupported(&ssd).unwrap();
        assert_eq!(w.code, "mqsim-xml-unsupported");
        assert!(
            w.message.contains("'drive'")
                && w.message.ends_with("Seed (line 3): a; FIFO (line 9): b")
        );
    }
}
