//! Setups: the conventions of a peer simulator, set at once, so that
//! wafer's numbers can be compared with the peer's on the same input
//! (issue 14). A setup fixes how GC is triggered and counted, how
//! cost-benefit scores, whether the device is prefilled and whether the
//! prefill counts in the WAF, and gives policies the peer's variants of their
//! rules (a policy parameter the user sets still wins).
//!
//! * `wafer` (default): the run's own settings, nothing overridden.
//! * `sepbit-replayer`: SepBIT's Java trace replayer (`trace_replay/` in
//!   github.com/fallfish/sepbit): a log-structured store (`garbage-proportion`
//!   GC mode), no prefill, an open segment's garbage counted when it is
//!   sealed (`Log.sealSegment`), GC checked after each request
//!   (`GCScheduler.schedule`) collecting `pick_segments` victims (default 1,
//!   the replayer's `--setPickSegAmount`), cost-benefit as (1-u)/u·√age with
//!   the age in trace microseconds since the segment's last append
//!   (`selection/CostBenefit.java`); `sepbit` tests user writes as the
//!   replayer does (a FIFO of recent writes, `placement/SepBIT.java`) and
//!   measures segment lifespans from the previous seal of its class;
//!   `sepbit` (and its variants), `uw`, `fadac` and `multilog` read the
//!   replayer's valid-block count of the log (`valid_count = "log"`), which
//!   needs a request's blocks placed one at a time (`Log.append`); the
//!   selectors list their candidates in the replayer's hash-map order and
//!   sort them stably, so equal scores go as there (`victim_ties`).
//! * `midas-sim`: MiDAS-Simulation (github.com/sungkyun123/MiDAS-Simulation):
//!   a fixed-capacity SSD (`watermark` GC mode) prefilled sequentially, GC
//!   checked after each block until the reserve (`gc_low`, 4 free segments
//!   by default, the simulator's `FREENUM`) is back, cost-benefit as
//!   (1-u)/u·√age with the age in user writes since sealing (`CB_VS`), the
//!   prefill counted in the WAF (`cur_wp` includes it). `midas` runs as the
//!   simulator runs MiDAS: the start-up chain of 4 groups with victims over
//!   all sealed segments (`startup_groups = 4`), the hot filter from the
//!   start with the simulator's τ schedule (`hot_filter = "always"`), the
//!   model window 4 physical device sizes long and first opened after 2
//!   logical ones (`uid_window = 4`, `window_unit = "physical"`,
//!   `first_window = 2`), the model's budget all segments but `FREENUM` = 4
//!   (`model_reserve = 4`), and the last group's victims by the run's
//!   selector as the simulator's `vs_policy` chooses them (`last_victim`:
//!   `greedy`, `cost-benefit-sqrt` under cost-benefit, `fifo`), and a new
//!   configuration applied at the next GB of writes, only if predicted no
//!   worse than the last GB measured, the start-up groups joining its last
//!   group (`apply_at = "gb"`, `apply_gate`, `startup_to_last`,
//!   `g1_one_less`), its last group's victims found by its queue scan
//!   (`last_scan = "queue"`). Under
//!   greedy and cost-benefit it is within 2% of the simulator
//!   (docs/FIDELITY.md has the numbers and commands).
//! * `mqsim`: MQSim's timing conventions (github.com/CMU-SAFARI/MQSim),
//!   timed runs only: a chip takes a command only when it is idle, one die
//!   at a time (`flash.chip_issue = "chip"`), nothing is suspended, and the
//!   cache sends a page's first write of each second to flash at once
//!   (`cache.cold_window_ns`, MQSim's `bloom_filter` reset every second).
//!   Its CMT accounting too (`mapping.mqsim_accounting`): every translation
//!   page on flash from the start, write-backs read but never programmed,
//!   later misses on their pages free. Not modelled: MQSim removes a
//!   cold-written page from the cache once written (wafer keeps it clean),
//!   and its address-fixed placement (docs/FIDELITY.md, "wafer vs MQSim").

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::RunConfig;
use crate::device::{GarbageAccounting, GcCheck, GcMode, PlacementBatch};
use crate::victim::{CostBenefitClock, CostBenefitConfig, CostBenefitForm, VictimTies};

/// Whose conventions a run follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Setup {
    /// wafer's own: the run's settings as given.
    #[default]
    Wafer,
    /// SepBIT's Java trace replayer.
    SepbitReplayer,
    /// MiDAS-Simulation.
    MidasSim,
    /// MQSim's timing conventions (a timed run only).
    Mqsim,
}

/// Every setup, by name, with one line each (for `--help`).
pub const SETUPS: &[(&str, &str)] = &[
    ("wafer", "wafer's own conventions: the flags as given (default)"),
    (
        "sepbit-replayer",
        "SepBIT's trace replayer: log-structured GC at garbage proportion --gp-threshold, no prefill, \
         open-segment garbage counted at seal, GC checked per request collecting --pick-segments victims \
         (default 1), cost-benefit (1-u)/u*sqrt(age) on trace time since the last append, SepBIT's FIFO user test; \
         a trace keeps its addresses unless a size is given (chunk- and extent-based schemes depend on them)",
    ),
    (
        "midas-sim",
        "MiDAS-Simulation: prefilled SSD, GC per block below --gc-reserve free segments, cost-benefit \
         (1-u)/u*sqrt(age) on user writes since sealing, WAF counting the prefill; midas as the simulator \
         runs it (start-up chain of 4, hot filter from the start, model window of 4 device sizes opened after 2)",
    ),
    (
        "mqsim",
        "MQSim (timed runs only): a chip takes a command only when it is idle, so one die of a chip works at \
         a time (its TSU), no operation is suspended, and a page's first write in each second goes to flash \
         at once (its cache's cold-write rule), and its CMT accounting (translation pages on flash from the start, \
         write-backs never programmed, later misses on their pages free)",
    ),
];

/// The conventions a run used, reported with its result.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Conventions {
    /// The setup that chose them.
    pub setup: Setup,
    /// When GC runs.
    pub gc_mode: GcMode,
    /// Whether the logical space was written once before the workload.
    pub prefill: bool,
    /// When an overwritten copy counts as garbage of the log.
    pub garbage_accounting: GarbageAccounting,
    /// When GC is checked.
    pub gc_check: GcCheck,
    /// Victims per GC check at most (`None`: until the trigger clears).
    pub pick_segments: Option<u32>,
    /// What `cost-benefit` computes.
    pub cost_benefit: CostBenefitConfig,
    /// How victim selectors break ties.
    pub victim_ties: VictimTies,
    /// How many of a request's blocks the policy places at once.
    pub placement_batch: PlacementBatch,
    /// Whether `waf` counts the prefill's writes.
    pub waf_counts_prefill: bool,
}

impl Conventions {
    /// The conventions of `cfg` (after [`Setup::apply`]).
    pub fn of(cfg: &RunConfig) -> Self {
        let d = &cfg.device;
        Conventions {
            setup: cfg.setup,
            gc_mode: d.gc_mode,
            prefill: d.prefill,
            garbage_accounting: d.garbage_accounting,
            gc_check: d.gc_check,
            pick_segments: d.pick_segments.or(match d.gc_check {
                GcCheck::Request => Some(1),
                GcCheck::Block => None,
            }),
            cost_benefit: cfg.cost_benefit,
            victim_ties: cfg.victim_ties,
            placement_batch: d.placement_batch,
            waf_counts_prefill: cfg.waf_counts_prefill,
        }
    }
}

impl Setup {
    /// Its name, as `--setup` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Setup::Wafer => "wafer",
            Setup::SepbitReplayer => "sepbit-replayer",
            Setup::MidasSim => "midas-sim",
            Setup::Mqsim => "mqsim",
        }
    }

    /// Set this setup's conventions in `cfg` (the setup wins over the
    /// fields it fixes; `pick_segments`, the thresholds, the GC reserve and
    /// the device size stay as given) and merge its policy parameters under
    /// the user's. Under every setup the run's seed reaches the policies
    /// that draw from their own seeded generator (`multilog`), unless their
    /// `seed` parameter is given.
    pub fn apply(self, cfg: &mut RunConfig) {
        let d = &mut cfg.device;
        match self {
            Setup::Wafer => {}
            Setup::SepbitReplayer => {
                d.gc_mode = GcMode::GarbageProportion;
                d.prefill = false;
                d.garbage_accounting = GarbageAccounting::AtSeal;
                d.gc_check = GcCheck::Request;
                d.placement_batch = PlacementBatch::Block;
                cfg.cost_benefit = CostBenefitConfig {
                    form: CostBenefitForm::Sqrt,
                    clock: CostBenefitClock::TraceTime,
                };
                cfg.victim_ties = VictimTies::Replayer;
                cfg.waf_counts_prefill = false;
            }
            Setup::MidasSim => {
                d.gc_mode = GcMode::Watermark;
                d.prefill = true;
                d.garbage_accounting = GarbageAccounting::Immediate;
                d.gc_check = GcCheck::Block;
                cfg.cost_benefit = CostBenefitConfig {
                    form: CostBenefitForm::Sqrt,
                    clock: CostBenefitClock::UserWrites,
                };
                cfg.waf_counts_prefill = true;
            }
            Setup::Mqsim => {
                if let Some(t) = cfg.timing.as_mut() {
                    // `TSU_Priority_OutOfOrder::service_*_transaction` issue to
                    // a chip only when `GetChipStatus(chip) == IDLE`; their
                    // WRITING/ERASING cases fall through to `return false`, so
                    // MQSim never suspends.
                    t.ssd.flash.chip_issue = crate::timing::config::ChipIssue::Chip;
                    t.ssd.flash.suspend = crate::timing::config::Suspend::None;
                    // Its cache's cold-write rule: the first write of a page in
                    // each second goes to flash at once
                    // (`Data_Cache_Manager_Flash_Advanced::write_to_destage_buffer`).
                    t.ssd.cache.cold_window_ns = 1_000_000_000;
                    t.ssd.cache.eager_cold_writeback = false;
                    // Its CMT accounting: translation pages on flash from the
                    // start, write-backs never programmed, misses on their
                    // pages free (`Address_Mapping_Unit_Page_Level`).
                    t.ssd.mapping.mqsim_accounting = true;
                }
            }
        }
        // An unknown name gets no setup parameters; building it says why.
        let base = crate::policy::PolicyName::parse(&cfg.policy)
            .map_or("", |n| n.base)
            .to_string();
        let ours = self.policy_params(&base, &cfg.victim);
        if let Value::Object(mut merged) = ours {
            if let Value::Object(user) = &cfg.params {
                for (k, v) in user {
                    merged.insert(k.clone(), v.clone());
                }
            }
            if !merged.is_empty() {
                cfg.params = Value::Object(merged);
            }
        }
        if base == "multilog" && cfg.params.get("seed").is_none() {
            let mut p = match std::mem::take(&mut cfg.params) {
                Value::Object(m) => m,
                Value::Null => Map::new(),
                other => {
                    // not an object: the policy's own parse reports it
                    cfg.params = other;
                    return;
                }
            };
            p.insert("seed".into(), json!(cfg.seed));
            cfg.params = Value::Object(p);
        }
    }

    /// The parameters this setup gives `policy` (under victim selector
    /// `victim`), as a JSON object (empty for most).
    pub fn policy_params(self, policy: &str, victim: &str) -> Value {
        match (self, policy) {
            // the replayer's valid-block count (`Log.getnValidBlocks`) where
            // its policies read one, and its GC age (`accessId - lastAccess`)
            (Setup::SepbitReplayer, "sepbit" | "bit-half" | "bit-double" | "bit-gw") => json!({
                "user_test": "fifo",
                "lifespan_start": "previous-seal",
                "valid_count": "log",
                "gc_age": "access-id",
            }),
            (Setup::SepbitReplayer, "uw" | "fadac" | "multilog") => json!({
                "valid_count": "log",
            }),
            (Setup::SepbitReplayer, "gw") => json!({
                "gc_age": "access-id",
                "ell_update": "before-moves",
            }),
            // MiDAS as the simulator runs it: the start-up chain of 4 groups
            // (its "naive MiDA") with its hot filter running from the start,
            // the first model window opened after 2
            // logical device sizes of writes and 4 physical ones long, the
            // model's budget all segments but FREENUM = 4, and the last
            // group's victims by the run's selector (its `vs_policy`: FIFO,
            // greedy, or cost-benefit in the simulator's sqrt form).
            (Setup::MidasSim, "midas") => {
                let mut p = json!({
                    "startup_groups": 4,
                    "first_window": 2.0,
                    "uid_window": 4.0,
                    "window_unit": "physical",
                    "model_reserve": 4,
                    "hot_filter": "always",
                    // when and whether a configuration is applied, and how
                    // the start-up groups join it (`algorithm.cpp`'s
                    // `check_applying_config`, the per-GB pause)
                    "apply_at": "gb",
                    "apply_gate": true,
                    "startup_to_last": true,
                    "g1_one_less": true,
                    "last_scan": "queue",
                });
                let last = match victim {
                    "greedy" => Some("greedy"),
                    "fifo" => Some("fifo"),
                    "cost-benefit" => Some("cost-benefit-sqrt"),
                    _ => None,
                };
                if let Some(last) = last {
                    p["last_victim"] = json!(last);
                }
                p
            }
            _ => Value::Object(Map::new()),
        }
    }
}
