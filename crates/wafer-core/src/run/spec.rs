//! What a user gives for a run ([`RunSpec`]: every field optional, absent =
//! not given) and the one place that settles it into a [`RunConfig`]
//! ([`RunSpec::settle`]). The CLI, the Python API and any program that
//! drives the engine with JSON all go through it, so a rule (a timed run's
//! whole drive, a trace's default arrival, a workload's default length, the
//! replayer's kept addresses, fitted segments) exists once.
//!
//! [`RUN_FIELDS`] describes every field of [`RunSpec`] (type, unit,
//! choices, default, doc, CLI flag, group): `wafer.Run`, `replay`'s keyword
//! arguments and the CLI's run and timing flags are drawn from it; a test
//! checks it against the struct.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::config::RunConfig;
use super::setup::Setup;
use crate::device::DeviceConfig;
use crate::error::{Error, Result};
use crate::source::TraceConfig;
use crate::timing::{Arrival, PreconditionCache, SsdConfig, Think, TimingRun};
use crate::trace::Selection;
use crate::victim::{CostBenefitClock, CostBenefitConfig, CostBenefitForm};

/// The workload a run replays when none is given: Zipf(1.0), FIO-like,
/// skewed enough for placement to matter.
pub const DEFAULT_WORKLOAD: &str = "zipf:1.0";

/// A trace run's length when none is given: the whole trace.
pub const WHOLE_TRACE: u64 = 1 << 63;

/// A synthetic run's length when none is given [drive-writes].
pub const DEFAULT_DRIVE_WRITES: u64 = 4;

/// A run as the user gave it: every field optional (absent or null = not
/// given); [`RunSpec::settle`] fills in the rest.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunSpec {
    /// Placement policy name.
    pub policy: Option<String>,
    /// Synthetic workload spec (or a trace file's path).
    pub workload: Option<String>,
    /// Policy parameter overrides (a JSON object).
    pub params: Option<Value>,
    /// Victim selector name.
    pub victim: Option<String>,
    /// Seed of every random choice.
    pub seed: Option<u64>,
    /// User blocks to write [blocks].
    pub writes: Option<u64>,
    /// User writes as a multiple of the logical capacity [drive-writes].
    pub drive_writes: Option<f64>,
    /// Annotate block deaths and score the policy's predictions.
    pub accuracy: Option<bool>,
    /// Folder of wafer's caches.
    pub cache_dir: Option<String>,
    /// Refuse runs estimated above this (bytes, or a size such as "8GiB").
    pub memory_limit: Option<Value>,
    /// Write one row per collected victim to this file.
    pub dump_gc: Option<String>,
    /// Trace file to replay instead of the workload.
    pub trace: Option<String>,
    /// Trace format (detected when absent).
    pub format: Option<String>,
    /// What part of the trace to replay.
    pub selection: Option<Selection>,
    /// Map a sized device's touched blocks densely.
    pub remap: Option<bool>,
    /// Size the device to the trace's highest block, addresses kept.
    pub address_space: Option<bool>,
    /// Passes of the trace [passes].
    pub repeat: Option<u32>,
    /// Continue the trace to this many drive-writes [drive-writes].
    pub extend: Option<f64>,
    /// The device fields given (a partial [`DeviceConfig`]; `capacity` and
    /// `segment_size` in bytes or a size string may replace
    /// `logical_blocks` and `segment_blocks`).
    pub device: Option<Map<String, Value>>,
    /// Whose conventions to follow.
    pub setup: Option<Setup>,
    /// What `cost-benefit` maximises.
    pub cost_benefit: Option<CostBenefitForm>,
    /// The age's clock in `cost-benefit`.
    pub cost_benefit_clock: Option<CostBenefitClock>,
    /// Count the prefill in the WAF.
    pub waf_counts_prefill: Option<bool>,
    /// Timing mode's SSD: a preset name, a TOML or MQSim XML file, or the
    /// SSD as an object.
    pub timing: Option<Value>,
    /// How requests arrive (timing).
    pub arrival: Option<Arrival>,
    /// Closed loop's outstanding requests (timing).
    pub queue_depth: Option<u32>,
    /// Closed loop's think time [ns], or AutoBlox's think model (an object:
    /// `peak_bytes_per_ns`, `windows`).
    pub think_ns: Option<Value>,
    /// Preconditioning drive-writes (timing).
    pub precondition: Option<f64>,
    /// The preconditioning overwrites' workload (timing).
    pub precondition_workload: Option<String>,
    /// Size the timed device to the run instead of the whole drive.
    pub fit_device: Option<bool>,
    /// Flush the dirty cache at the end, timed.
    pub flush: Option<bool>,
    /// Where the preconditioned drive is kept (true, false or a folder).
    pub precondition_cache: Option<PreconditionCache>,
}

/// One field of [`RunSpec`], described for Python and the CLI.
pub struct RunField {
    /// Its name in JSON and Python (`replay`'s keyword).
    pub name: &'static str,
    /// Its JSON type: `int`, `float`, `bool`, `str`, `object`, or a union
    /// (`int|object`, `bool|str`, `int|str`).
    pub kind: &'static str,
    /// Its unit, or empty.
    pub unit: &'static str,
    /// The values a `str` field takes (empty: any, or a registry's).
    pub choices: &'static [&'static str],
    /// The default as JSON (`null`: unset, the doc says what happens).
    pub default: &'static str,
    /// One line: what it sets.
    pub doc: &'static str,
    /// The CLI flag that sets it (empty: none; several flags: the doc says).
    pub flag: &'static str,
    /// The CLI's argument group: `run`, `trace`, `conventions`, `timing`.
    pub group: &'static str,
}

#[allow(clippy::too_many_arguments)]
const fn f(
    name: &'static str,
    kind: &'static str,
    unit: &'static str,
    choices: &'static [&'static str],
    default: &'static str,
    flag: &'static str,
    group: &'static str,
    doc: &'static str,
) -> RunField {
    RunField {
        name,
        kind,
        unit,
        choices,
        default,
        doc,
        flag,
        group,
    }
}

/// The choices of `arrival`.
pub const ARRIVALS: &[&str] = &["trace", "closed", "afap"];

/// Every field of [`RunSpec`], in its order.
pub const RUN_FIELDS: &[RunField] = &[
    f("policy", "str", "", &[], "\"base\"", "--policy", "run", "placement policy (see `wafer policies`)"),
    f("workload", "str", "", &[], "\"zipf:1.0\"", "--workload", "run", "synthetic workload spec; a path to an existing file is a trace"),
    f("params", "object", "", &[], "{}", "--param", "run", "policy parameter overrides (KEY=VALUE on the CLI)"),
    f("victim", "str", "", &[], "\"greedy\"", "--victim", "run", "GC victim selector (see `wafer policies`)"),
    f("seed", "int", "", &[], "1", "--seed", "run", "seed of every random choice"),
    f("writes", "int", "blocks", &[], "null", "--writes", "run", "user blocks to write; unset: 4 drive-writes of a workload, all of a trace"),
    f("drive_writes", "float", "drive-writes", &[], "null", "--drive-writes", "run", "user writes as a multiple of the logical capacity (a trace's footprint once sized), instead of writes"),
    f("accuracy", "bool", "", &[], "false", "--accuracy", "run", "annotate every block's death time (cached next to a trace) and score the policy's lifetime predictions: accuracy, precision, recall, F1, confusion, per window"),
    f("cache_dir", "str", "", &[], "null", "--cache-dir", "run", "folder of wafer's caches (lifetime annotations, split traces, preconditioned drives); unset: $WAFER_CACHE_DIR, else $XDG_CACHE_HOME/wafer, else ~/.cache/wafer"),
    f("memory_limit", "int|str", "bytes", &[], "null", "--memory-limit", "run", "refuse runs estimated to need more memory (bytes or a size such as \"8GiB\"); unset: what the machine has available"),
    f("dump_gc", "str", "", &[], "null", "--dump-gc", "run", "write one row per collected victim to this file, as SepBIT's replayer prints its removed segments (time, segment, group, valid and invalid blocks, garbage proportion, age and lifespan in user writes, erase count): Arrow for a name ending .arrow, else CSV"),
    f("trace", "str", "", &[], "null", "--trace", "trace", "replay this trace file instead of the workload"),
    f("format", "str", "", &[], "null", "--format", "trace", "the trace's format; unset: detected from its content"),
    f("selection", "object", "", &[], "null", "--device, --start, --end, --max-requests, --drop-reads, --skip-bad", "trace", "what part of the trace to replay (device, time window, first N requests, reads, bad lines)"),
    f("remap", "bool", "", &[], "false", "--remap", "trace", "with a logical size given: map the blocks the trace touches densely"),
    f("address_space", "bool", "", &[], "false", "--address-space", "trace", "size the device to the trace's highest block, addresses kept (set by setup sepbit-replayer when no size is given)"),
    f("repeat", "int", "passes", &[], "1", "--repeat", "trace", "replay the trace this many times in a row, timestamps shifted; every block then lives exactly one pass: prefer extend"),
    f("extend", "float", "drive-writes", &[], "null", "--extend", "trace", "continue the trace to this many drive-writes in all, drawn from its own lifetimes, sizes, read/write mix and locality (seeded by the seed)"),
    f("device", "object", "", &[], "null", "the device flags", "device", "the device fields given (wafer.Device); unset fields take their defaults, a timed run the preset's drive"),
    f("setup", "str", "", &["wafer", "sepbit-replayer", "midas-sim", "mqsim"], "\"wafer\"", "--setup", "conventions", "follow a peer simulator's conventions (it fixes the GC trigger and check, garbage accounting, prefill and cost-benefit)"),
    f("cost_benefit", "str", "", &["lfs", "sqrt"], "\"lfs\"", "--cost-benefit", "conventions", "what the cost-benefit selector maximises: lfs (1-u)*age/(1+u), sqrt (1-u)/u*sqrt(age)"),
    f("cost_benefit_clock", "str", "", &["user-writes", "trace-time"], "\"user-writes\"", "--cost-benefit-clock", "conventions", "cost-benefit's age: user writes since sealing, or trace time since the segment's last append"),
    f("waf_counts_prefill", "bool", "", &[], "false", "--waf-counts-prefill", "conventions", "count the prefill's writes in the WAF (MiDAS-Simulation's WAF)"),
    f("timing", "str|object", "", &[], "null", "--timing", "timing", "simulate this SSD's timing: a timing preset, a TOML file (copy one with `wafer presets NAME > my.toml`), an MQSim ssdconfig.xml, or the SSD as an object"),
    f("arrival", "str", "", ARRIVALS, "null", "--arrival", "timing", "trace: open loop at the timestamps; closed: queue_depth outstanding; afap: as fast as the device admits; unset: trace for traces, else closed"),
    f("queue_depth", "int", "requests", &[], "32", "--queue-depth", "timing", "closed loop: outstanding requests"),
    f("think_ns", "int|object", "ns", &[], "0", "--think-us", "timing", "closed loop: host time between a completion and the next request, or AutoBlox's think model {peak_bytes_per_ns, windows}"),
    f("precondition", "float", "drive-writes", &[], "null", "--precondition", "timing", "drive-writes in WAF mode before timing starts, never of the trace: a sequential fill counts as the first (0: a fresh drive; 0.5: half filled), then random overwrites of whole pages, the preset's page size; unset: the preset's [precondition], 2 for every shipped preset"),
    f("precondition_workload", "str", "", &[], "null", "--precondition-workload", "timing", "the preconditioning overwrites' workload (e.g. 'uniform,size=1-4' for other sizes); unset: a synthetic run's own, else the preset's: uniform"),
    f("fit_device", "bool", "", &[], "false", "--fit-device", "timing", "size the device to the run (a trace's footprint, or the device's size) instead of the preset's whole drive: quicker, but fewer and partial superblocks (mostly fast LSB pages) and a cache that may hold the whole device"),
    f("flush", "bool", "", &[], "true", "--no-flush", "timing", "at the end, write the dirty cache to flash, timed (timing.flush); false leaves it (timing.cache.dirty_pages_at_end)"),
    f("precondition_cache", "bool|str", "", &[], "true", "--precondition-cache, --no-precondition-cache", "timing", "keep the preconditioned drive and load it in later runs of the same drive, preconditioning, policy and seed: true (the cache folder's precondition/, for preconditionings of 16 Mi page writes or more; about 0.7 GiB per intel750 drive, the folder bounded to 8 GiB: $WAFER_PRECONDITION_CACHE_GIB), a folder, or false"),
];

/// [`RUN_FIELDS`] as JSON (each `default` parsed).
pub fn fields_json() -> Value {
    Value::Array(
        RUN_FIELDS
            .iter()
            .map(|f| {
                serde_json::json!({"name": f.name, "type": f.kind, "unit": f.unit, "choices": f.choices,
                    "default": serde_json::from_str::<Value>(f.default).expect("a JSON default"),
                    "doc": f.doc, "flag": f.flag, "group": f.group})
            })
            .collect(),
    )
}

/// Fields only a timed run uses: given without `timing` they are an error,
/// never silently unused.
const TIMING_ONLY: &[&str] = &[
    "arrival",
    "queue_depth",
    "think_ns",
    "precondition",
    "precondition_workload",
    "fit_device",
    "flush",
    "precondition_cache",
];

/// Device sizes given in bytes (or a size string) instead of blocks:
/// `capacity` for `logical_blocks`, `segment_size` for `segment_blocks`.
const SIZES: &[&str] = &["capacity", "segment_size"];

/// Why a size given for a whole-drive timed run is refused (here and by the
/// engine, for callers that skip the spec).
pub(crate) const TIMED_SIZE: &str = "a timed run uses the preset's whole drive (its capacity and \
    over-provisioning; a trace is placed inside it); give fit_device (--fit-device) to size the \
    device yourself";

const TIMED_PREPARATION: &str = "does not apply to a timed run: the preconditioning \
    (precondition, the preset's [precondition] by default) prepares the drive and the \
    statistics start after it";

const TIMED_SHAPE: &str = "a timed run's block is the preset's page (flash.page_bytes) and its \
    segment the preset's superblock (a block per plane); change them in a preset file \
    (`wafer presets NAME > my.toml`, then --timing my.toml)";

/// A preset's over-provisioning (a share of the physical pages) as the
/// device's `op`, (physical - logical) / logical.
pub fn preset_op(ssd: &SsdConfig) -> f64 {
    let p = ssd.flash.overprovisioning;
    p / (1.0 - p)
}

/// Bytes in `v`: a whole number, or a size such as `"8GiB"`, `"1.5 TB"`
/// (bare K/M/G/T and KiB/MiB/... are powers of 1024, KB/MB/... of 1000).
pub fn parse_size(field: &str, v: &Value) -> Result<u64> {
    let bad = |why: String| Error::config(field, why);
    match v {
        Value::Number(n) => match n.as_u64() {
            Some(b) if b > 0 => Ok(b),
            _ => Err(bad(format!("{n} must be > 0 bytes"))),
        },
        Value::String(s) => {
            let t = s.trim();
            let split = t
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(t.len());
            let (num, unit) = (t[..split].trim(), t[split..].trim().to_ascii_lowercase());
            let scale: u64 = match unit.as_str() {
                "" | "b" => 1,
                "k" | "kib" => 1 << 10,
                "kb" => 1000,
                "m" | "mib" => 1 << 20,
                "mb" => 1_000_000,
                "g" | "gib" => 1 << 30,
                "gb" => 1_000_000_000,
                "t" | "tib" => 1 << 40,
                "tb" => 1_000_000_000_000,
                _ => 0,
            };
            // `[0-9]*.?[0-9]+`: a digit ends the number.
            let x: f64 = if num.ends_with(|c: char| c.is_ascii_digit()) {
                num.parse().unwrap_or(f64::NAN)
            } else {
                f64::NAN
            };
            if scale == 0 || !x.is_finite() {
                return Err(bad(format!(
                    "cannot read size '{s}'; use bytes or a number with K, M, G, T, KiB, MiB, GiB, \
                     TiB, KB, MB, GB, TB"
                )));
            }
            let b = (x * scale as f64) as u64;
            if b == 0 {
                return Err(bad(format!("'{s}' must be > 0 bytes")));
            }
            Ok(b)
        }
        other => Err(bad(format!(
            "{other} is not a size (bytes, or a string such as '4GiB')"
        ))),
    }
}

/// The device `given` asks for (a partial [`DeviceConfig`]: the fields
/// given, `capacity` / `segment_size` in bytes or a size string) over the
/// defaults, every device rule applied once: sizes in bytes count blocks of
/// the run's block size; `gc_high` not given is `gc_low` when that is
/// larger (GC stops no earlier than it starts); under `timing` the preset's
/// whole drive (see [`TIMED_SIZE`]), its page as the block, and no prefill
/// or warm-up of the run's own (the preconditioning prepares the drive).
pub fn device_of(given: &Map<String, Value>, timing: Option<&TimingRun>) -> Result<DeviceConfig> {
    let dev: Map<String, Value> = given
        .iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let has = |k: &str| dev.contains_key(k);
    for (blocks, bytes) in [
        ("logical_blocks", "capacity"),
        ("segment_blocks", "segment_size"),
    ] {
        if has(blocks) && has(bytes) {
            return Err(Error::config(
                bytes,
                format!("give {blocks} or {bytes}, not both"),
            ));
        }
    }
    let defaults = serde_json::to_value(DeviceConfig::default()).expect("a device serialises");
    let mut dv = defaults.clone();
    for (k, v) in dev.iter().filter(|(k, _)| !SIZES.contains(&k.as_str())) {
        if dv.get(k).is_none() {
            return Err(Error::config(
                &format!("device.{k}"),
                format!(
                    "no such device field; known: {}",
                    crate::device::FIELDS
                        .iter()
                        .map(|f| f.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        dv[k] = v.clone();
    }
    if let Some(t) = timing {
        let op = preset_op(&t.ssd);
        if !t.fit_device {
            for k in ["logical_blocks", "capacity", "physical_blocks"] {
                if has(k) {
                    return Err(Error::config(k, TIMED_SIZE));
                }
            }
            if let Some(o) = dev.get("op").and_then(Value::as_f64) {
                if (o - op).abs() > 1e-9 {
                    return Err(Error::config("op", TIMED_SIZE));
                }
            }
        }
        if let Some(k) = ["segment_blocks", "segment_size"]
            .into_iter()
            .find(|k| has(k))
        {
            return Err(Error::config(k, TIMED_SHAPE));
        }
        if dev
            .get("block_size")
            .is_some_and(|b| b.as_u64() != defaults["block_size"].as_u64())
        {
            return Err(Error::config("block_size", TIMED_SHAPE));
        }
        // The engine replaces both on a timed run: given otherwise, they
        // would be silently unused.
        for k in ["prefill", "warmup_drive_writes"] {
            if dev.get(k).is_some_and(|v| {
                v.as_f64()
                    .zip(defaults[k].as_f64())
                    .map_or(*v != defaults[k], |(a, b)| a != b)
            }) {
                return Err(Error::config(k, TIMED_PREPARATION));
            }
        }
        if !has("op") {
            dv["op"] = serde_json::json!(op);
        }
        dv["block_size"] = serde_json::json!(t.ssd.flash.page_bytes);
    }
    // Sizes in bytes count blocks of the run's block size (a timed run's
    // page).
    let block = dv["block_size"].as_u64().unwrap_or(1).max(1);
    if let Some(c) = dev.get("capacity") {
        dv["logical_blocks"] = serde_json::json!(parse_size("capacity", c)? / block);
    }
    if let Some(c) = dev.get("segment_size") {
        dv["segment_blocks"] = serde_json::json!(parse_size("segment_size", c)?.div_ceil(block));
    }
    let mut device: DeviceConfig = serde_path_to_error::deserialize(dv)
        .map_err(|e| Error::config(&format!("device.{}", e.path()), e.into_inner().to_string()))?;
    if !has("gc_high") {
        device.gc_high = device.gc_high.max(device.gc_low);
    }
    Ok(device)
}

/// Whether field `name` is given with a value other than its default (a
/// default given explicitly changes nothing, so it never conflicts).
fn differs(given: &Map<String, Value>, name: &str) -> bool {
    let Some(v) = given.get(name) else {
        return false;
    };
    let default = RUN_FIELDS
        .iter()
        .find(|f| f.name == name)
        .map(|f| serde_json::from_str::<Value>(f.default).expect("a JSON default"));
    match (v, default) {
        (_, Some(Value::Null)) | (_, None) => true,
        (Value::Object(m), _) if name == "selection" => {
            let none = serde_json::to_value(Selection::default()).expect("a selection serialises");
            Value::Object(m.clone()) != none
        }
        (v, Some(d)) => v.as_f64().zip(d.as_f64()).map_or(*v != d, |(a, b)| a != b),
    }
}

impl RunSpec {
    /// The fields given, by name (for messages).
    fn given(&self) -> Map<String, Value> {
        match serde_json::to_value(self).expect("a run spec serialises") {
            Value::Object(m) => m.into_iter().filter(|(_, v)| !v.is_null()).collect(),
            _ => Map::new(),
        }
    }

    /// The whole run this spec asks for, every rule applied once: a file
    /// named as the workload is a trace; a timed run takes the preset's
    /// whole drive (a size or over-provisioning given is refused unless
    /// `fit_device`, a block or segment size always), its block is the
    /// preset's page and its arrival `trace` for a trace, else `closed`;
    /// a setup's fixed conventions given too are refused; the replayer's
    /// setup keeps a trace's addresses when no size is given; a trace
    /// without a size sizes the device (and fits its segments unless one
    /// was given); a workload runs 4 drive-writes, a trace all of it.
    pub fn settle(&self) -> Result<RunConfig> {
        let given = self.given();
        let mut cfg = RunConfig::default();
        let workload = self
            .workload
            .clone()
            .unwrap_or_else(|| DEFAULT_WORKLOAD.to_string());
        let trace = self.trace.clone().or_else(|| {
            std::path::Path::new(&workload)
                .is_file()
                .then(|| workload.clone())
        });

        // Timing first: it shapes the device.
        let timing = match &self.timing {
            None => {
                if let Some(k) = TIMING_ONLY.iter().find(|k| differs(&given, k)) {
                    return Err(Error::config(
                        &format!("timing.{k}"),
                        "only with timing (--timing PRESET|FILE)",
                    ));
                }
                None
            }
            Some(v) => Some(self.timing_run(v, trace.is_some())?),
        };

        // The device: the fields given over the defaults.
        let dev: Map<String, Value> = self
            .device
            .clone()
            .unwrap_or_default()
            .into_iter()
            .filter(|(_, v)| !v.is_null())
            .collect();
        let has = |k: &str| dev.contains_key(k);
        let size_given = has("logical_blocks") || has("capacity");
        let segment_given = has("segment_blocks") || has("segment_size");
        let mut device = device_of(&dev, timing.as_ref())?;

        let setup = self.setup.unwrap_or_default();

        // The run's length.
        if self.writes == Some(0) {
            return Err(Error::config("writes", "0; must be at least 1 user block"));
        }
        if let Some(k) = self.drive_writes {
            if !(k.is_finite() && k > 0.0) {
                return Err(Error::config(
                    "drive_writes",
                    format!("{k}; must be a finite number > 0"),
                ));
            }
            if self.writes.is_some() {
                return Err(Error::config(
                    "drive_writes",
                    "give writes or drive_writes, not both",
                ));
            }
        }
        if self.repeat == Some(0) {
            return Err(Error::config("repeat", "0; must be at least 1 pass"));
        }
        if let Some(x) = self.extend {
            if !(x.is_finite() && x > 0.0) {
                return Err(Error::config(
                    "extend",
                    format!("{x}; must be a finite number of drive-writes > 0"),
                ));
            }
        }
        if trace.is_none() {
            if let Some(k) = [
                "extend",
                "repeat",
                "format",
                "selection",
                "remap",
                "address_space",
            ]
            .into_iter()
            .find(|k| differs(&given, k))
            {
                return Err(Error::config(
                    k,
                    "only with a trace (a workload runs as long as writes or drive_writes say)",
                ));
            }
        }

        match &trace {
            Some(path) => {
                // The replayer keeps a trace's addresses (chunk- and
                // extent-based schemes depend on them).
                let address_space = self.address_space.unwrap_or(false)
                    || (setup == Setup::SepbitReplayer && !size_given);
                // A device sized from a small footprint gets segments that
                // fit it, unless the user chose the segment size.
                // A given fit_segments is the user's.
                if !has("fit_segments") {
                    device.fit_segments = !size_given && !segment_given && !address_space;
                }
                cfg.trace = Some(TraceConfig {
                    path: path.clone(),
                    format: self.format.clone(),
                    selection: self.selection.clone().unwrap_or_default(),
                    remap: self.remap.unwrap_or(false),
                    capacity_from_trace: !size_given,
                    address_space,
                    repeat: self.repeat.unwrap_or(1),
                    extend: self.extend,
                    resolved: None,
                });
                cfg.workload = path.clone();
                cfg.writes = self.writes.unwrap_or(WHOLE_TRACE);
            }
            None => {
                cfg.workload = workload;
                cfg.writes = self
                    .writes
                    .unwrap_or(DEFAULT_DRIVE_WRITES * device.logical_blocks);
            }
        }
        cfg.drive_writes = self.drive_writes;
        cfg.device = device;
        if let Some(p) = &self.policy {
            cfg.policy = p.clone();
        }
        cfg.params = match &self.params {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(p @ Value::Object(_)) => p.clone(),
            Some(other) => {
                return Err(Error::config(
                    "params",
                    format!("{other} is not an object of parameter names and values"),
                ))
            }
        };
        if let Some(v) = &self.victim {
            cfg.victim = v.clone();
        }
        cfg.seed = self.seed.unwrap_or(1);
        cfg.accuracy = self.accuracy.unwrap_or(false);
        cfg.cache_dir = self.cache_dir.clone();
        cfg.memory_limit = self
            .memory_limit
            .as_ref()
            .map(|v| parse_size("memory_limit", v))
            .transpose()?;
        cfg.setup = setup;
        cfg.cost_benefit = CostBenefitConfig {
            form: self.cost_benefit.unwrap_or_default(),
            clock: self.cost_benefit_clock.unwrap_or_default(),
        };
        cfg.waf_counts_prefill = self.waf_counts_prefill.unwrap_or(false);
        cfg.timing = timing;
        if self.dump_gc.as_deref().is_some_and(|p| p.trim().is_empty()) {
            return Err(Error::config("dump_gc", "an empty file name"));
        }
        cfg.dump_gc = self.dump_gc.clone();
        // A setup fixes its conventions: one given otherwise is an error,
        // never silently replaced (the same value given is harmless).
        let mut fixed = cfg.clone();
        setup.apply(&mut fixed);
        let (d, e) = (&cfg.device, &fixed.device);
        let clash: Vec<&str> = [
            (
                "cost_benefit",
                given.contains_key("cost_benefit")
                    && cfg.cost_benefit.form != fixed.cost_benefit.form,
            ),
            (
                "cost_benefit_clock",
                given.contains_key("cost_benefit_clock")
                    && cfg.cost_benefit.clock != fixed.cost_benefit.clock,
            ),
            (
                "waf_counts_prefill",
                given.contains_key("waf_counts_prefill")
                    && cfg.waf_counts_prefill != fixed.waf_counts_prefill,
            ),
            ("gc_mode", has("gc_mode") && d.gc_mode != e.gc_mode),
            ("prefill", has("prefill") && d.prefill != e.prefill),
            (
                "garbage_accounting",
                has("garbage_accounting") && d.garbage_accounting != e.garbage_accounting,
            ),
            ("gc_check", has("gc_check") && d.gc_check != e.gc_check),
            (
                "placement_batch",
                has("placement_batch") && d.placement_batch != e.placement_batch,
            ),
        ]
        .into_iter()
        .filter_map(|(k, c)| c.then_some(k))
        .collect();
        if let Some(k) = clash.first() {
            return Err(Error::config(
                k,
                format!(
                    "setup {} fixes {} otherwise; leave {} out, or use setup wafer and set each convention",
                    setup.name(),
                    clash.join(", "),
                    if clash.len() > 1 { "them" } else { "it" }
                ),
            ));
        }
        Ok(cfg)
    }

    /// The timed run of `ssd` (a preset name, a file, or the SSD itself).
    fn timing_run(&self, ssd: &Value, is_trace: bool) -> Result<TimingRun> {
        let ssd = match ssd {
            Value::String(s) => SsdConfig::load(s)?,
            Value::Object(_) => serde_path_to_error::deserialize(ssd.clone()).map_err(|e| {
                Error::config(&format!("timing.{}", e.path()), e.into_inner().to_string())
            })?,
            other => {
                return Err(Error::config(
                    "timing",
                    format!("{other}: give a preset name, a TOML or MQSim XML file, or the SSD as an object"),
                ))
            }
        };
        let (think_ns, think) = match &self.think_ns {
            None => (0, None),
            Some(Value::Number(n)) => (
                n.as_u64().ok_or_else(|| {
                    Error::config(
                        "timing.think_ns",
                        format!("{n}; must be a whole number of ns >= 0"),
                    )
                })?,
                None,
            ),
            Some(v @ Value::Object(_)) => (
                0,
                Some(
                    serde_path_to_error::deserialize::<_, Think>(v.clone()).map_err(|e| {
                        Error::config(
                            &format!("timing.think.{}", e.path()),
                            e.into_inner().to_string(),
                        )
                    })?,
                ),
            ),
            Some(other) => {
                return Err(Error::config(
                    "timing.think_ns",
                    format!("{other}: give ns, or a think model {{peak_bytes_per_ns, windows}}"),
                ))
            }
        };
        let d = TimingRun::default();
        Ok(TimingRun {
            ssd,
            arrival: self.arrival.unwrap_or(if is_trace {
                Arrival::Trace
            } else {
                Arrival::Closed
            }),
            queue_depth: self.queue_depth.unwrap_or(d.queue_depth),
            think_ns,
            think,
            precondition_drive_writes: self.precondition,
            precondition_workload: self.precondition_workload.clone(),
            fit_device: self.fit_device.unwrap_or(false),
            flush: self.flush.unwrap_or(true),
            idle_ns: d.idle_ns,
            precondition_cache: self.precondition_cache.clone().unwrap_or_default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_table_is_the_spec() {
        let mut every = RunSpec::default();
        // Every field given, so the serde form lists each.
        let v = serde_json::to_value(&every).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        let names: Vec<&str> = RUN_FIELDS.iter().map(|f| f.name).collect();
        let (mut a, mut b) = (keys, names);
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b, "RUN_FIELDS must list every RunSpec field once");
        // Each literal default is what settling an empty spec gives.
        every.timing = Some(serde_json::json!("intel750"));
        let workload = serde_json::to_value(RunSpec::default().settle().unwrap()).unwrap();
        let timed = serde_json::to_value(every.settle().unwrap()).unwrap();
        for f in RUN_FIELDS {
            let want: Value = serde_json::from_str(f.default).unwrap();
            let got = match f.name {
                "cost_benefit" => workload["cost_benefit"]["form"].clone(),
                "cost_benefit_clock" => workload["cost_benefit"]["clock"].clone(),
                "queue_depth" | "think_ns" | "fit_device" | "flush" | "precondition_cache" => {
                    timed["timing"][f.name].clone()
                }
                "repeat"
                | "remap"
                | "address_space"
                | "selection"
                | "format"
                | "extend"
                | "trace"
                | "device"
                | "timing"
                | "arrival"
                | "precondition"
                | "precondition_workload"
                | "writes" => continue,
                n => workload[n].clone(),
            };
            assert_eq!(got, want, "{}: default", f.name);
            for c in f.choices {
                let mut s = serde_json::Map::new();
                s.insert(f.name.into(), serde_json::json!(c));
                if f.group == "timing" {
                    s.insert("timing".into(), serde_json::json!("intel750"));
                }
                serde_json::from_value::<RunSpec>(Value::Object(s))
                    .unwrap_or_else(|e| panic!("{}={c}: {e}", f.name))
                    .settle()
                    .unwrap_or_else(|e| panic!("{}={c}: {e}", f.name));
            }
        }
        assert_eq!(fields_json().as_array().unwrap().len(), RUN_FIELDS.len());
    }

    fn spec(v: Value) -> RunSpec {
        serde_json::from_value(v).unwrap()
    }

    fn refused(v: Value, field: &str) {
        match spec(v.clone()).settle() {
            Err(Error::Config { field: f, .. }) => assert_eq!(f, field, "{v}"),
            other => panic!("{v}: {other:?}"),
        }
    }

    #[test]
    fn a_workload_runs_four_drive_writes() {
        let c = spec(serde_json::json!({"device": {"logical_blocks": 1000}}))
            .settle()
            .unwrap();
        assert_eq!(c.writes, 4000);
        assert!(c.trace.is_none());
        assert_eq!(c.workload, DEFAULT_WORKLOAD);
    }

    #[test]
    fn a_timed_run_takes_the_presets_drive() {
        let c = spec(serde_json::json!({"timing": "intel750", "trace": "t.csv"}))
            .settle()
            .unwrap();
        let t = c.timing.as_ref().unwrap();
        assert_eq!(t.arrival, Arrival::Trace);
        assert_eq!(c.device.block_size, t.ssd.flash.page_bytes);
        assert!((c.device.op - preset_op(&t.ssd)).abs() < 1e-12);
        let w = spec(serde_json::json!({"timing": "intel750"}))
            .settle()
            .unwrap();
        assert_eq!(w.timing.unwrap().arrival, Arrival::Closed);
        refused(
            serde_json::json!({"timing": "intel750", "device": {"logical_blocks": 10}}),
            "logical_blocks",
        );
        refused(
            serde_json::json!({"timing": "intel750", "device": {"op": 0.5}}),
            "op",
        );
        refused(
            serde_json::json!({"timing": "intel750", "device": {"segment_blocks": 8}}),
            "segment_blocks",
        );
        refused(serde_json::json!({"queue_depth": 4}), "timing.queue_depth");
        spec(serde_json::json!({"timing": "intel750", "fit_device": true,
                                "device": {"logical_blocks": 4096}}))
        .settle()
        .unwrap();
    }

    #[test]
    fn a_trace_sizes_the_device_and_the_replayer_keeps_its_addresses() {
        let c = spec(serde_json::json!({"trace": "t.csv"}))
            .settle()
            .unwrap();
        let t = c.trace.as_ref().unwrap();
        assert!(t.capacity_from_trace && !t.address_space && c.device.fit_segments);
        assert_eq!(c.writes, WHOLE_TRACE);
        let r = spec(serde_json::json!({"trace": "t.csv", "setup": "sepbit-replayer"}))
            .settle()
            .unwrap();
        assert!(r.trace.as_ref().unwrap().address_space && !r.device.fit_segments);
        let s = spec(serde_json::json!({"trace": "t.csv", "device": {"segment_blocks": 64}}))
            .settle()
            .unwrap();
        assert!(!s.device.fit_segments);
    }

    #[test]
    fn conflicts_are_refused_by_name() {
        refused(
            serde_json::json!({"setup": "midas-sim", "cost_benefit": "lfs"}),
            "cost_benefit",
        );
        // The value the setup fixes, given too, is no clash.
        spec(serde_json::json!({"setup": "midas-sim", "cost_benefit": "sqrt"}))
            .settle()
            .unwrap();
        refused(
            serde_json::json!({"setup": "sepbit-replayer", "device": {"prefill": true}}),
            "prefill",
        );
        refused(
            serde_json::json!({"writes": 5, "drive_writes": 1.0}),
            "drive_writes",
        );
        refused(serde_json::json!({"writes": 0}), "writes");
        refused(serde_json::json!({"extend": 2.0}), "extend");
        refused(
            serde_json::json!({"memory_limit": "8 parsecs"}),
            "memory_limit",
        );
        refused(serde_json::json!({"device": {"nope": 1}}), "device.nope");
        refused(serde_json::json!({"timing": 5}), "timing");
        assert!(serde_json::from_value::<RunSpec>(serde_json::json!({"sede": 1})).is_err());
    }

    #[test]
    fn sizes_read_as_python_reads_them() {
        let s = |x: Value| parse_size("m", &x).unwrap();
        assert_eq!(s(serde_json::json!("8GiB")), 8 << 30);
        assert_eq!(s(serde_json::json!("1.5 TB")), 1_500_000_000_000);
        assert_eq!(s(serde_json::json!("64k")), 64 << 10);
        assert_eq!(s(serde_json::json!(4096)), 4096);
        assert!(parse_size("m", &serde_json::json!(0)).is_err());
        assert!(parse_size("m", &serde_json::json!("-1G")).is_err());
        assert!(parse_size("m", &serde_json::json!("1.G")).is_err());
    }
}
