//! The simulated SSD's hardware as a TOML file: host interface, DRAM cache,
//! mapping-table cache, flash array and its timing, GC urgency, energy
//! constants. Presets live in the repository's `presets/` folder (embedded
//! in the binary, loaded by name); a user copies one, edits it and passes
//! its path. Unknown keys and impossible values are errors naming the key.
//!
//! Every field's default is MQSim's shipped `ssdconfig.xml` (MQSim
//! at commit 7ec40e3), so a partial file means "MQSim, except ...". Times are integer
//! nanoseconds, sizes bytes or MiB as the key says, rates MT/s or GB/s.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

// MQSim's ssdconfig.xml read into an SsdConfig (declared here to keep timing/mod.rs untouched).
#[path = "mqsim_xml.rs"]
pub mod mqsim_xml;

/// The presets shipped with wafer: name and TOML text.
pub const PRESETS: &[(&str, &str)] = &[
    (
        "intel750",
        include_str!("../../../../presets/intel750.toml"),
    ),
    (
        "mqsim-default",
        include_str!("../../../../presets/mqsim-default.toml"),
    ),
    ("femu", include_str!("../../../../presets/femu.toml")),
    ("850pro", include_str!("../../../../presets/850pro.toml")),
    ("zssd", include_str!("../../../../presets/zssd.toml")),
];

/// Host interface protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Interface {
    /// NVMe over PCIe: submission/completion queues, DMA over the link.
    Nvme,
    /// SATA with NCQ: a fixed processing delay at submit and at completion.
    Sata,
}

/// Host interface (MQSim's `Host_Interface_NVMe` / `SATA`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HostConfig {
    /// Protocol.
    pub interface: Interface,
    /// PCIe lanes.
    pub pcie_lanes: u32,
    /// PCIe rate per lane [GB/s].
    pub pcie_lane_gbps: f64,
    /// Largest TLP payload [bytes].
    pub pcie_max_payload_bytes: u32,
    /// Header + DLLP + PHY bytes added to every TLP [bytes].
    pub pcie_tlp_overhead_bytes: u32,
    /// Submission-queue entries (SATA: NCQ depth); a full NVMe queue holds
    /// one entry less [entries].
    pub queue_depth: u32,
    /// Commands the NVMe controller keeps fetched and in flight at most
    /// [commands].
    pub fetch_size: u32,
    /// SATA link payload rate [GB/s] (6 Gb/s with 8b/10b coding = 0.6).
    pub sata_link_gbps: f64,
    /// SATA: processing delay added at submit and again at completion [ns].
    pub sata_delay_ns: u64,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            interface: Interface::Nvme,
            pcie_lanes: 4,
            pcie_lane_gbps: 1.0,
            pcie_max_payload_bytes: 128,
            pcie_tlp_overhead_bytes: 28,
            queue_depth: 65535,
            fetch_size: 512,
            sata_link_gbps: 0.6,
            sata_delay_ns: 400_000,
        }
    }
}

/// What the DRAM data cache holds (MQSim's `Device_Level_Data_Caching_Mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CacheMode {
    /// No cache: writes go to flash before they complete, reads always read flash.
    Off,
    /// Write-back buffer; reads hit only what it holds.
    Write,
    /// Reads are cached (clean); writes go to flash before they complete.
    Read,
    /// Both.
    ReadWrite,
}

/// DRAM data cache / write buffer (MQSim's `Data_Cache_Manager_Flash_Advanced`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CacheConfig {
    /// What is cached.
    pub mode: CacheMode,
    /// Capacity [MiB].
    pub capacity_mib: f64,
    /// DRAM data rate [MT/s].
    pub dram_rate_mts: f64,
    /// DRAM burst size [bytes].
    pub dram_burst_bytes: u32,
    /// DRAM row (page) size [bytes].
    pub dram_row_bytes: u32,
    /// Row-to-column delay [ns].
    pub dram_trcd_ns: u64,
    /// CAS latency [ns].
    pub dram_tcl_ns: u64,
    /// Row precharge [ns].
    pub dram_trp_ns: u64,
    /// MQSim's rule: the first write of a logical page that was never
    /// written is sent to flash at once instead of staying dirty.
    pub eager_cold_writeback: bool,
    /// Flash writes the cache may have in flight before new writes wait
    /// (back-pressure) [pages]; 0 = one page per plane, as MQSim.
    pub flush_limit_pages: u32,
    /// MQSim's cold-write window [ns] (0: off, `eager_cold_writeback`
    /// decides): a page written for the first time in the current window
    /// (hit or miss, whole or partial, mapped or not) goes to flash at once
    /// (the host waits only for DRAM), and every page, hits included, waits
    /// while the flush limit is reached; the set of pages seen is cleared
    /// when a write comes after the window's end, and a new window starts
    /// (`Data_Cache_Manager_Flash_Advanced::write_to_destage_buffer`, its
    /// `bloom_filter` and `bloom_filter_reset_step` = 1 s). `--setup mqsim`.
    pub cold_window_ns: u64,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig {
            mode: CacheMode::Write,
            capacity_mib: 256.0,
            dram_rate_mts: 100.0,
            dram_burst_bytes: 1,
            dram_row_bytes: 8192,
            dram_trcd_ns: 13,
            dram_tcl_ns: 13,
            dram_trp_ns: 13,
            eager_cold_writeback: true,
            flush_limit_pages: 0,
            cold_window_ns: 0,
        }
    }
}

/// Cached mapping table, DFTL-style (Gupta et al. ASPLOS'09; MQSim's `Address_Mapping_Unit_Page_Level`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MappingConfig {
    /// DRAM given to cached mapping entries [MiB].
    pub cmt_mib: f64,
    /// The whole table is in DRAM: no mapping reads or writes.
    pub ideal: bool,
    /// Bytes per cached entry; 0 = MQSim's ceil((2 log2(pages) + sectors per page) / 8).
    pub entry_bytes: u32,
    /// Bytes per entry in a translation page on flash; 0 = MQSim's
    /// ceil((log2(pages) + sectors per page) / 8).
    pub translation_entry_bytes: u32,
    /// Flash set aside for translation pages, as a multiple of the pages the
    /// table needs (a circular log; > 1 leaves room so its cleaning moves
    /// few live pages).
    pub translation_area_factor: f64,
    /// MQSim's CMT accounting (`--setup mqsim`): every full translation
    /// page is on flash from the start (`Store_mapping_table_on_flash_at_start`),
    /// so a miss on a fresh drive reads flash; a write-back reads its page
    /// but its program is never serviced (MQSim queues it in a queue no
    /// service function reads), and later misses on that page are served
    /// without flash (its `DepartingMappingEntries`).
    pub mqsim_accounting: bool,
}

impl Default for MappingConfig {
    fn default() -> Self {
        MappingConfig {
            cmt_mib: 2.0,
            ideal: false,
            entry_bytes: 0,
            translation_entry_bytes: 0,
            translation_area_factor: 2.0,
            mqsim_accounting: false,
        }
    }
}

/// Cell technology: how many page types a block interleaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Technology {
    /// One bit per cell: one page type.
    Slc,
    /// Two bits: LSB and MSB pages alternate.
    Mlc,
    /// Three bits: LSB, CSB, MSB.
    Tlc,
}

impl Technology {
    /// Page types (entries of `read_ns` / `program_ns`).
    pub fn page_types(self) -> usize {
        match self {
            Technology::Slc => 1,
            Technology::Mlc => 2,
            Technology::Tlc => 3,
        }
    }

    /// Type (0 = LSB, 1 = CSB for TLC / MSB for MLC, 2 = MSB) of page
    /// `page` of a block (MQSim's rule in `NVM_PHY_ONFI_NVDDR2`).
    #[inline]
    pub fn page_type(self, page: u32) -> usize {
        match self {
            Technology::Slc => 0,
            Technology::Mlc => (page & 1) as usize,
            Technology::Tlc => match page {
                0..=5 => 0,
                6 | 7 => 1,
                _ => ((page - 8) >> 1) as usize % 3,
            },
        }
    }
}

/// Which operations a read (or write) may suspend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Suspend {
    /// Never.
    None,
    /// Reads suspend programs.
    Program,
    /// Reads and writes suspend erases.
    Erase,
    /// Both.
    ProgramErase,
}

/// When a chip takes a new command ([`FlashConfig::chip_issue`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChipIssue {
    /// Each die is scheduled on its own: a chip's dies overlap their array
    /// operations (interleaving, as ONFI allows).
    #[default]
    Die,
    /// A chip takes a command only when it is idle, so one of its dies
    /// works at a time: MQSim's TSU (`TSU_Priority_OutOfOrder::service_*`
    /// issue only when `GetChipStatus(chip) == IDLE`; the PHY sets the chip
    /// IDLE when no die is active and a read's data is out).
    Chip,
}

/// The flash array, its parallelism and timing (MQSim's `Flash_Parameter_Set` and ONFI NV-DDR2 timing).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FlashConfig {
    /// Cell technology.
    pub technology: Technology,
    /// Channels.
    pub channels: u32,
    /// Chips (ways) per channel.
    pub chips_per_channel: u32,
    /// Dies per chip.
    pub dies_per_chip: u32,
    /// Planes per die.
    pub planes_per_die: u32,
    /// Blocks per plane.
    pub blocks_per_plane: u32,
    /// Pages per block.
    pub pages_per_block: u32,
    /// Page size [bytes]; the replay's block size in timing mode.
    pub page_bytes: u32,
    /// Channel width [bytes].
    pub channel_width_bytes: u32,
    /// Channel transfer rate [MT/s]; 0 = transfers take no time (FEMU's default).
    pub channel_rate_mts: f64,
    /// Array read time per page type (LSB[, CSB], MSB) [ns].
    pub read_ns: Vec<u64>,
    /// Array program time per page type [ns].
    pub program_ns: Vec<u64>,
    /// Block erase time [ns].
    pub erase_ns: u64,
    /// Ready/busy delay after a read [ns].
    pub read_rb_ns: u64,
    /// One-plane read command on the channel (tCS + 6 tWC + tWB + tRR) [ns].
    pub cmd_read_ns: u64,
    /// One-plane program command (tCS + 6 tWC + tADL + tWPST + tWPSTH + tWB) [ns].
    pub cmd_program_ns: u64,
    /// One-plane erase command (tCS + 4 tWC + tWB) [ns].
    pub cmd_erase_ns: u64,
    /// Dummy busy between the planes of a multi-plane command [ns]; an
    /// n-plane command takes cmd + (n - 1) (tDBSY + cmd), for any n.
    pub dbsy_ns: u64,
    /// Stripe order of a segment's pages over the planes: a permutation of
    /// C (channel), W (way = chip), D (die), P (plane), fastest first
    /// (MQSim's 24 `Plane_Allocation_Scheme`s).
    pub allocation: String,
    /// GC moves a page inside its die without a channel transfer when source
    /// and destination share the die.
    pub copyback: bool,
    /// Over-provisioning as a fraction of the physical pages; the replay's
    /// OP when none is given.
    pub overprovisioning: f64,
    /// Which operations may be suspended.
    pub suspend: Suspend,
    /// When a chip takes a command: `die` (each die on its own, wafer's
    /// default) or `chip` (only when the whole chip is idle: one die's
    /// operation at a time, as MQSim's TSU issues; `--setup mqsim`).
    pub chip_issue: ChipIssue,
    /// Cost of suspending a program [ns].
    pub suspend_program_ns: u64,
    /// Cost of suspending an erase [ns].
    pub suspend_erase_ns: u64,
    /// A read suspends a program only if more than this remains [ns].
    pub suspend_program_for_read_ns: u64,
    /// A read suspends an erase only if more than this remains [ns].
    pub suspend_erase_for_read_ns: u64,
    /// A write suspends an erase only if more than this remains [ns].
    pub suspend_erase_for_write_ns: u64,
}

impl Default for FlashConfig {
    fn default() -> Self {
        FlashConfig {
            technology: Technology::Mlc,
            channels: 8,
            chips_per_channel: 4,
            dies_per_chip: 2,
            planes_per_die: 2,
            blocks_per_plane: 2048,
            pages_per_block: 256,
            page_bytes: 8192,
            channel_width_bytes: 1,
            channel_rate_mts: 333.0,
            read_ns: vec![75_000, 75_000],
            program_ns: vec![750_000, 750_000],
            erase_ns: 3_800_000,
            read_rb_ns: 20,
            cmd_read_ns: 290,
            cmd_program_ns: 361,
            cmd_erase_ns: 220,
            dbsy_ns: 500,
            allocation: "CWDP".into(),
            copyback: false,
            overprovisioning: 0.07,
            suspend: Suspend::Erase,
            chip_issue: ChipIssue::Die,
            suspend_program_ns: 100_000,
            suspend_erase_ns: 700_000,
            suspend_program_for_read_ns: 100_000,
            suspend_erase_for_read_ns: 700_000,
            suspend_erase_for_write_ns: 700_000,
        }
    }
}

/// How the drive is prepared before a timed replay's first request (the
/// SNIA Solid State Storage Performance Test Specification's
/// preconditioning, as MQSim users run it): a sequential fill, then random
/// overwrites, in WAF mode. A run's `--precondition` /
/// `--precondition-workload` override these.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PreconditionConfig {
    /// Drive-writes before timing starts; the sequential fill counts as the
    /// first (0: a fresh drive; 0.5: half of it filled; 2: filled, then one
    /// drive-write of `workload`) [drive-writes].
    pub drive_writes: f64,
    /// The workload of the overwrites after the fill (a workload spec;
    /// "uniform": random single-page writes over the whole drive).
    pub workload: String,
}

impl Default for PreconditionConfig {
    fn default() -> Self {
        PreconditionConfig {
            drive_writes: 2.0,
            workload: "uniform".into(),
        }
    }
}

/// When GC work jumps ahead of user I/O (MQSim's `TSU_Priority_OutOfOrder` and `GC_and_WL_Unit_Page_Level`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GcConfig {
    /// GC starts below this fraction of free segments (MQSim's
    /// `GC_Exec_Threshold`, per plane there); the replay's GC reserve is the
    /// larger of this and the device's `gc_low`.
    pub exec_threshold: f64,
    /// Below this fraction of erased free segments GC is urgent: its reads,
    /// programs and erases go before user I/O (`GC_Hard_Threshold`).
    pub hard_threshold: f64,
    /// GC yields to user I/O unless urgent (`Preemptible_GC_Enabled`);
    /// false = GC is always urgent.
    pub preemptible: bool,
}

impl Default for GcConfig {
    fn default() -> Self {
        GcConfig {
            exec_threshold: 0.05,
            hard_threshold: 0.005,
            preemptible: false,
        }
    }
}

/// Energy constants (AutoBlox ASPLOS'23 §3.5; its artifact's MLC numbers in `evaluate_target_conf.py`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EnergyConfig {
    /// Array read energy [nJ per bit read].
    pub read_nj_per_bit: f64,
    /// Array program energy [nJ per bit programmed].
    pub program_nj_per_bit: f64,
    /// Erase energy [nJ per bit of the block].
    pub erase_nj_per_bit: f64,
    /// Power of a chip with no die busy [mW].
    pub idle_mw_per_chip: f64,
    /// Channel I/O energy [pJ per byte moved]; AutoBlox does not model it.
    pub channel_pj_per_byte: f64,
    /// DRAM background power of all devices [mW].
    pub dram_mw: f64,
    /// DRAM access energy [pJ per bit moved]; AutoBlox charges DRAM as
    /// constant power only.
    pub dram_pj_per_bit: f64,
    /// Controller power [mW] (AutoBlox: a constant 2 W ARM).
    pub controller_mw: f64,
}

impl Default for EnergyConfig {
    fn default() -> Self {
        EnergyConfig {
            read_nj_per_bit: 0.15,
            program_nj_per_bit: 3.31,
            erase_nj_per_bit: 0.07,
            idle_mw_per_chip: 12.7,
            channel_pj_per_byte: 0.0,
            dram_mw: 432.0,
            dram_pj_per_bit: 0.0,
            controller_mw: 2000.0,
        }
    }
}

/// A whole SSD: what a preset file holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SsdConfig {
    /// Preset name (or the file's own).
    pub name: String,
    /// One line saying what drive this is.
    pub description: String,
    /// Host interface.
    pub host: HostConfig,
    /// DRAM data cache.
    pub cache: CacheConfig,
    /// Mapping-table cache.
    pub mapping: MappingConfig,
    /// Flash array.
    pub flash: FlashConfig,
    /// GC urgency.
    pub gc: GcConfig,
    /// Energy constants.
    pub energy: EnergyConfig,
    /// Preparation before timing starts.
    pub precondition: PreconditionConfig,
    /// What the file this config was imported from asked for that wafer
    /// does not do, one sentence per element ([`mqsim_xml`] fills it); every
    /// run reports them as warning `mqsim-xml-unsupported`. Empty for
    /// wafer's own presets.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub import_warnings: Vec<String>,
}

impl Default for SsdConfig {
    fn default() -> Self {
        SsdConfig {
            name: "custom".into(),
            description: String::new(),
            host: HostConfig::default(),
            cache: CacheConfig::default(),
            mapping: MappingConfig::default(),
            flash: FlashConfig::default(),
            gc: GcConfig::default(),
            energy: EnergyConfig::default(),
            precondition: PreconditionConfig::default(),
            import_warnings: Vec::new(),
        }
    }
}

fn bad(key: &str, reason: impl Into<String>) -> Error {
    Error::config(&format!("timing.{key}"), reason)
}

fn positive(key: &str, v: f64) -> Result<()> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(bad(key, format!("{v}; must be a finite number > 0")))
    }
}

fn non_negative(key: &str, v: f64) -> Result<()> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(bad(key, format!("{v}; must be a finite number >= 0")))
    }
}

fn fraction(key: &str, v: f64, open_low: bool) -> Result<()> {
    if v.is_finite() && v < 1.0 && (v > 0.0 || (!open_low && v == 0.0)) {
        Ok(())
    } else {
        let low = if open_low { "(0" } else { "[0" };
        Err(bad(key, format!("{v}; must be a fraction in {low}, 1)")))
    }
}

fn at_least_one(key: &str, v: u32) -> Result<()> {
    if v >= 1 {
        Ok(())
    } else {
        Err(bad(key, "must be at least 1"))
    }
}

impl SsdConfig {
    /// Parse a preset's TOML text; `origin` names it in errors.
    pub fn from_toml(text: &str, origin: &str) -> Result<SsdConfig> {
        let c: SsdConfig = toml::from_str(text)
            .map_err(|e| bad("preset", format!("{origin}: {}", e.to_string().trim_end())))?;
        c.validate()?;
        Ok(c)
    }

    /// The preset called `spec`, the TOML file at path `spec`, or an MQSim
    /// device configuration (`ssdconfig.xml`) when `spec` ends in `.xml`.
    pub fn load(spec: &str) -> Result<SsdConfig> {
        if let Some((name, text)) = PRESETS.iter().find(|(n, _)| *n == spec) {
            return Self::from_toml(text, &format!("preset '{name}'"));
        }
        if spec.to_ascii_lowercase().ends_with(".xml") {
            return mqsim_xml::load(std::path::Path::new(spec));
        }
        let path = std::path::Path::new(spec);
        if path.is_file() {
            let text = std::fs::read_to_string(path)
                .map_err(|e| bad("preset", format!("cannot read {spec}: {e}")))?;
            let mut c = Self::from_toml(&text, spec)?;
            if c.name.is_empty() || c.name == "custom" {
                c.name = path
                    .file_stem()
                    .map_or_else(|| spec.to_string(), |s| s.to_string_lossy().into_owned());
            }
            return Ok(c);
        }
        Err(bad(
            "preset",
            format!(
                "'{spec}' is neither a preset nor a file; presets: {}",
                PRESETS.iter().map(|p| p.0).collect::<Vec<_>>().join(", ")
            ),
        ))
    }

    /// Every impossible value is an error naming its key.
    pub fn validate(&self) -> Result<()> {
        let h = &self.host;
        at_least_one("host.pcie_lanes", h.pcie_lanes)?;
        positive("host.pcie_lane_gbps", h.pcie_lane_gbps)?;
        at_least_one("host.pcie_max_payload_bytes", h.pcie_max_payload_bytes)?;
        if h.queue_depth < 2 {
            return Err(bad(
                "host.queue_depth",
                format!(
                    "{}; must be at least 2 (a full queue holds one entry less)",
                    h.queue_depth
                ),
            ));
        }
        at_least_one("host.fetch_size", h.fetch_size)?;
        positive("host.sata_link_gbps", h.sata_link_gbps)?;
        let c = &self.cache;
        non_negative("cache.capacity_mib", c.capacity_mib)?;
        if c.mode != CacheMode::Off && c.capacity_mib <= 0.0 {
            return Err(bad(
                "cache.capacity_mib",
                "is 0 with a cache mode other than \"off\"",
            ));
        }
        positive("cache.dram_rate_mts", c.dram_rate_mts)?;
        at_least_one("cache.dram_burst_bytes", c.dram_burst_bytes)?;
        at_least_one("cache.dram_row_bytes", c.dram_row_bytes)?;
        let m = &self.mapping;
        non_negative("mapping.cmt_mib", m.cmt_mib)?;
        if !m.ideal && m.cmt_mib <= 0.0 {
            return Err(bad(
                "mapping.cmt_mib",
                "is 0 with a non-ideal mapping table",
            ));
        }
        if !(m.translation_area_factor.is_finite() && m.translation_area_factor >= 1.0) {
            return Err(bad(
                "mapping.translation_area_factor",
                format!("{}; must be >= 1", m.translation_area_factor),
            ));
        }
        let f = &self.flash;
        for (k, v) in [
            ("flash.channels", f.channels),
            ("flash.chips_per_channel", f.chips_per_channel),
            ("flash.dies_per_chip", f.dies_per_chip),
            ("flash.planes_per_die", f.planes_per_die),
            ("flash.blocks_per_plane", f.blocks_per_plane),
            ("flash.pages_per_block", f.pages_per_block),
            ("flash.channel_width_bytes", f.channel_width_bytes),
        ] {
            at_least_one(k, v)?;
        }
        if !f.page_bytes.is_power_of_two() || f.page_bytes < 512 {
            return Err(bad(
                "flash.page_bytes",
                format!("{}; must be a power of two >= 512", f.page_bytes),
            ));
        }
        let dies = f.channels as u64 * f.chips_per_channel as u64 * f.dies_per_chip as u64;
        let planes = dies * f.planes_per_die as u64;
        if planes > u32::MAX as u64 / 4 {
            return Err(bad(
                "flash.channels",
                format!("{planes} planes in all is more than the model addresses"),
            ));
        }
        let pages = planes * f.blocks_per_plane as u64 * f.pages_per_block as u64;
        if pages > crate::device::MAX_BLOCKS {
            // The geometry's product is too large: name every factor.
            return Err(bad(
                "flash",
                format!(
                    "{} channels x {} chips x {} dies x {} planes x {} blocks x {} pages = {pages} \
                     pages, more than the engine's limit of {} blocks",
                    f.channels,
                    f.chips_per_channel,
                    f.dies_per_chip,
                    f.planes_per_die,
                    f.blocks_per_plane,
                    f.pages_per_block,
                    crate::device::MAX_BLOCKS
                ),
            ));
        }
        non_negative("flash.channel_rate_mts", f.channel_rate_mts)?;
        let types = f.technology.page_types();
        for (k, v) in [
            ("flash.read_ns", &f.read_ns),
            ("flash.program_ns", &f.program_ns),
        ] {
            if v.len() != types {
                return Err(bad(
                    k,
                    format!(
                        "has {} values; {:?} flash has {types} page types (LSB{}MSB)",
                        v.len(),
                        f.technology,
                        match types {
                            1 => "=",
                            2 => ", ",
                            _ => ", CSB, ",
                        }
                    ),
                ));
            }
            if v.contains(&0) {
                return Err(bad(k, "every latency must be > 0 ns"));
            }
        }
        if f.erase_ns == 0 {
            return Err(bad("flash.erase_ns", "must be > 0 ns"));
        }
        parse_allocation(&f.allocation)?;
        fraction("flash.overprovisioning", f.overprovisioning, true)?;
        fraction("gc.exec_threshold", self.gc.exec_threshold, false)?;
        fraction("gc.hard_threshold", self.gc.hard_threshold, false)?;
        let e = &self.energy;
        for (k, v) in [
            ("energy.read_nj_per_bit", e.read_nj_per_bit),
            ("energy.program_nj_per_bit", e.program_nj_per_bit),
            ("energy.erase_nj_per_bit", e.erase_nj_per_bit),
            ("energy.idle_mw_per_chip", e.idle_mw_per_chip),
            ("energy.channel_pj_per_byte", e.channel_pj_per_byte),
            ("energy.dram_mw", e.dram_mw),
            ("energy.dram_pj_per_bit", e.dram_pj_per_bit),
            ("energy.controller_mw", e.controller_mw),
        ] {
            non_negative(k, v)?;
        }
        non_negative("precondition.drive_writes", self.precondition.drive_writes)?;
        Ok(())
    }

    /// Planes in all.
    pub fn planes(&self) -> u32 {
        let f = &self.flash;
        f.channels * f.chips_per_channel * f.dies_per_chip * f.planes_per_die
    }

    /// Dies in all.
    pub fn dies(&self) -> u32 {
        let f = &self.flash;
        f.channels * f.chips_per_channel * f.dies_per_chip
    }

    /// Raw capacity [pages].
    pub fn raw_pages(&self) -> u64 {
        self.planes() as u64
            * self.flash.blocks_per_plane as u64
            * self.flash.pages_per_block as u64
    }
}

/// A dimension of the flash array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dim {
    /// Channel.
    Channel,
    /// Way (chip on a channel).
    Way,
    /// Die of a chip.
    Die,
    /// Plane of a die.
    Plane,
}

/// The four dimensions of an allocation scheme such as "CWDP", fastest first.
pub fn parse_allocation(s: &str) -> Result<[Dim; 4]> {
    let mut out = [Dim::Channel; 4];
    let mut seen = [false; 4];
    let upper = s.to_ascii_uppercase();
    if upper.len() != 4 {
        return Err(bad(
            "flash.allocation",
            format!("'{s}'; must be a permutation of C, W, D, P such as CWDP or PDWC"),
        ));
    }
    for (i, ch) in upper.chars().enumerate() {
        let (d, k) = match ch {
            'C' => (Dim::Channel, 0),
            'W' => (Dim::Way, 1),
            'D' => (Dim::Die, 2),
            'P' => (Dim::Plane, 3),
            _ => {
                return Err(bad(
                    "flash.allocation",
                    format!("'{s}': '{ch}' is not one of C, W, D, P"),
                ))
            }
        };
        if seen[k] {
            return Err(bad(
                "flash.allocation",
                format!("'{s}' names '{ch}' twice; must be a permutation of C, W, D, P"),
            ));
        }
        seen[k] = true;
        out[i] = d;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_loads_and_validates() {
        for (name, _) in PRESETS {
            let c = SsdConfig::load(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(&c.name, name);
        }
    }

    #[test]
    fn unknown_keys_name_the_key() {
        let e = SsdConfig::from_toml("[flash]\nchanels = 4\n", "test").unwrap_err();
        assert!(e.to_string().contains("chanels"), "{e}");
        let e = SsdConfig::from_toml("[flsh]\nchannels = 4\n", "test").unwrap_err();
        assert!(e.to_string().contains("flsh"), "{e}");
    }

    #[test]
    fn impossible_geometries_name_the_key() {
        for (text, key) in [
            ("[flash]\nchannels = 0\n", "flash.channels"),
            ("[flash]\npage_bytes = 3000\n", "flash.page_bytes"),
            ("[flash]\nallocation = \"CWDX\"\n", "flash.allocation"),
            ("[flash]\nallocation = \"CWDC\"\n", "flash.allocation"),
            (
                "[flash]\ntechnology = \"tlc\"\nread_ns = [1, 2]\n",
                "flash.read_ns",
            ),
            ("[host]\nqueue_depth = 1\n", "host.queue_depth"),
            (
                "[flash]\noverprovisioning = 1.5\n",
                "flash.overprovisioning",
            ),
            ("[energy]\ndram_mw = -1\n", "energy.dram_mw"),
        ] {
            match SsdConfig::from_toml(text, "test") {
                Err(Error::Config { field, .. }) => assert_eq!(field, format!("timing.{key}")),
                other => panic!("{text}: expected an error naming {key}, got {other:?}"),
            }
        }
    }

    #[test]
    fn all_24_allocation_schemes_parse() {
        let mut n = 0;
        for a in "CWDP".chars() {
            for b in "CWDP".chars() {
                for c in "CWDP".chars() {
                    for d in "CWDP".chars() {
                        let s: String = [a, b, c, d].iter().collect();
                        if parse_allocation(&s).is_ok() {
                            n += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(n, 24);
    }

    #[test]
    fn page_types_follow_mqsim() {
        assert_eq!(Technology::Mlc.page_type(0), 0);
        assert_eq!(Technology::Mlc.page_type(7), 1);
        assert_eq!(Technology::Tlc.page_type(5), 0);
        assert_eq!(Technology::Tlc.page_type(6), 1);
        assert_eq!(Technology::Tlc.page_type(8), 0);
        assert_eq!(Technology::Tlc.page_type(10), 1);
        assert_eq!(Technology::Tlc.page_type(12), 2);
    }

    #[test]
    fn unknown_preset_lists_the_presets() {
        let e = SsdConfig::load("nope").unwrap_err().to_string();
        assert!(e.contains("intel750") && e.contains("femu"), "{e}");
    }
}
