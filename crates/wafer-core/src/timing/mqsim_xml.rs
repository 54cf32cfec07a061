//! MQSim's device configuration file (`ssdconfig.xml`, the `-i` file of
//! CMU-SAFARI/MQSim at commit 7ec40e3) read into an [`SsdConfig`], so
//! `--timing FILE.xml` runs the drive an MQSim user describes and `wafer
//! presets import FILE.xml -o NAME.toml` writes it as a preset.
//!
//! [`ELEMENTS`] is the whole mapping, one row per element MQSim's readers
//! know: the wafer key it sets, its unit, the line of MQSim's reader
//! (`exec/*_Parameter_Set.cpp` under MQSim's `src/`) and MQSim's built-in
//! value. docs/FIDELITY.md, "MQSim's configuration files", prints it.
//!
//! * An element is applied as MQSim applies it; an element the file omits
//!   takes MQSim's built-in value (its reader starts from it) and the
//!   omission is warned, except the geometry (channels, chips, dies, planes,
//!   blocks, pages, page size), which must be in the file: a drive file
//!   without its geometry would otherwise silently run MQSim's.
//! * What wafer does not do (a GC policy other than greedy, wear leveling,
//!   MQSim's preconditioning, multi-flow sharing modes, the plain
//!   out-of-order scheduler, the simple cache), an element MQSim's readers do
//!   not know (they match names exactly and skip the rest), and a value MQSim
//!   itself would run differently from what the file says (16- and 32-bit
//!   fields, its `(int)` transfer-rate truncation, more than 4 planes) are
//!   warnings. They are kept in [`SsdConfig::import_warnings`], so they
//!   reach every run's `warnings` (code `mqsim-xml-unsupported`) and the
//!   imported preset.
//! * Elements that change nothing MQSim simulates either (its seed, the
//!   erase-count limit that only sizes a statistics histogram, page metadata
//!   bytes, the response-time log period) are read and checked only.
//! * Malformed XML, another root element (e.g. a workload file), a missing
//!   geometry element, an element given twice, a non-numeric value, a name
//!   MQSim does not accept (MQSim stops on those too) or an impossible
//!   geometry is one [`Error::Config`] naming the file, line and element.
//!
//! Deviation: values are parsed strictly (MQSim's `stoul` reads "12abc" as
//! 12, and any boolean but "false" as true); wafer rejects both.

use std::collections::HashMap;
use std::path::Path;

use roxmltree::{Document, Node};

use crate::error::{Error, Result};
use crate::timing::config::{
    parse_allocation, CacheMode, Interface, SsdConfig, Suspend, Technology,
};

/// The parameter set of MQSim's file an element belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// `Execution_Parameter_Set/Host_Parameter_Set`.
    Host,
    /// `Execution_Parameter_Set/Device_Parameter_Set`.
    Device,
    /// `Device_Parameter_Set/Flash_Parameter_Set`.
    Flash,
}

impl Section {
    /// The element that holds this section.
    pub fn tag(self) -> &'static str {
        match self {
            Section::Host => "Host_Parameter_Set",
            Section::Device => "Device_Parameter_Set",
            Section::Flash => "Flash_Parameter_Set",
        }
    }

    /// Where MQSim sets the built-in values of this section's elements.
    pub fn defaults(self) -> &'static str {
        match self {
            Section::Host => "Host_Parameter_Set.cpp:5-9",
            Section::Device => "Device_Parameter_Set.cpp:6-43",
            Section::Flash => "Flash_Parameter_Set.cpp:6-23",
        }
    }
}

/// The root element of MQSim's device configuration (main.cpp:64).
pub const ROOT: &str = "Execution_Parameter_Set";

type Setter = fn(&mut Ctx, &str) -> std::result::Result<(), String>;

/// One element of MQSim's device configuration.
pub struct Element {
    /// Element name, as MQSim's reader spells it.
    pub name: &'static str,
    /// Where it lives.
    pub section: Section,
    /// The wafer key it sets (`flash.channels`), or what wafer does with it.
    pub key: &'static str,
    /// Its unit in MQSim's file and the conversion to wafer's.
    pub unit: &'static str,
    /// The line of MQSim's reader that parses it (MQSim `src/`, 7ec40e3).
    pub reads: &'static str,
    /// MQSim's built-in value, taken when the file omits the element
    /// (`None`: wafer requires the element).
    pub default: Option<&'static str>,
    /// Whether it changes a simulated result in MQSim (an omission of one
    /// that does is warned).
    pub effect: bool,
    set: Setter,
}

/// Other spellings an element is read under: MQSim's reader spells the
/// erase-for-read threshold "Prefered" (Device_Parameter_Set.cpp:599)
/// while its own shipped file (and AutoBlox's) spells it "Preferred",
/// which MQSim therefore ignores; wafer reads both.
const ALIASES: &[(&str, &str)] = &[(
    "Prefered_suspend_erase_time_for_read",
    "Preferred_suspend_erase_time_for_read",
)];

#[allow(clippy::too_many_arguments)] // one row of the table below, positional to stay one line a field
const fn el(
    name: &'static str,
    section: Section,
    key: &'static str,
    unit: &'static str,
    reads: &'static str,
    default: Option<&'static str>,
    effect: bool,
    set: Setter,
) -> Element {
    Element {
        name,
        section,
        key,
        unit,
        reads,
        default,
        effect,
        set,
    }
}

use Section::{Device as D, Flash as F, Host as H};

/// Every element MQSim's readers know (Host_Parameter_Set.cpp:42-67,
/// Device_Parameter_Set.cpp:377-639, Flash_Parameter_Set.cpp:134-215), in
/// the order they are applied. Built-in values: Host_Parameter_Set.cpp:5-9,
/// Device_Parameter_Set.cpp:6-43, Flash_Parameter_Set.cpp:6-23.
#[rustfmt::skip]
pub const ELEMENTS: &[Element] = &[
    el("PCIe_Lane_Bandwidth", H, "host.pcie_lane_gbps", "GB/s per lane", "exec/Host_Parameter_Set.cpp:46", Some("0.4"), true,
       |c, v| { c.c.host.pcie_lane_gbps = float(v)?; Ok(()) }),
    el("PCIe_Lane_Count", H, "host.pcie_lanes", "lanes", "exec/Host_Parameter_Set.cpp:49", Some("4"), true,
       |c, v| { c.c.host.pcie_lanes = u32_of(v)?; Ok(()) }),
    // A static without initialiser (Host_Parameter_Set.cpp:7): 0.
    el("SATA_Processing_Delay", H, "host.sata_delay_ns", "ns", "exec/Host_Parameter_Set.cpp:52", Some("0"), true,
       |c, v| { c.c.host.sata_delay_ns = uint(v)?; Ok(()) }),
    el("Enable_ResponseTime_Logging", H, "- (warned when true: wafer's result carries time series instead)", "true/false",
       "exec/Host_Parameter_Set.cpp:55", Some("false"), false,
       |c, v| {
           if boolean(v)? {
               c.warn("MQSim's per-flow response-time log file is not written; wafer's result has per-window \
                       time series (--window-drive-writes) instead");
           }
           Ok(())
       }),
    el("ResponseTime_Logging_Period_Length", H, "- (the log's period)", "ns", "exec/Host_Parameter_Set.cpp:59",
       Some("400000"), false, |_, v| uint(v).map(drop)),
    el("Seed", D, "- (the run's --seed / seed=)", "integer", "exec/Device_Parameter_Set.cpp:382", Some("123"), false,
       |_, v| v.trim().parse::<i64>().map(drop).map_err(|_| format!("'{}' is not an integer", v.trim()))),
    el("Enabled_Preconditioning", D, "- (warned when true: wafer's --precondition DW)", "true/false",
       "exec/Device_Parameter_Set.cpp:385", Some("true"), true,
       |c, v| {
           if boolean(v)? {
               c.warn("MQSim fills the drive to its workload's Initial_Occupancy_Percentage before timing \
                       (FTL.cpp:47); wafer preconditions by --precondition DW / precondition= instead");
           }
           Ok(())
       }),
    el("Memory_Type", D, "- (FLASH only)", "FLASH", "exec/Device_Parameter_Set.cpp:389", Some("FLASH"), true,
       |_, v| choice(v, &["FLASH"]).map(drop)),
    el("HostInterface_Type", D, "host.interface", "NVME -> nvme, SATA -> sata", "exec/Device_Parameter_Set.cpp:395",
       Some("NVME"), true,
       |c, v| {
           c.c.host.interface = match choice(v, &["NVME", "SATA"])? {
               "NVME" => Interface::Nvme,
               _ => Interface::Sata,
           };
           Ok(())
       }),
    el("IO_Queue_Depth", D, "host.queue_depth", "entries", "exec/Device_Parameter_Set.cpp:405", Some("1024"), true,
       |c, v| { c.c.host.queue_depth = c.u16_field(v)?; Ok(()) }),
    el("Queue_Fetch_Size", D, "host.fetch_size", "commands", "exec/Device_Parameter_Set.cpp:408", Some("512"), true,
       |c, v| { c.c.host.fetch_size = c.u16_field(v)?; Ok(()) }),
    el("Caching_Mechanism", D, "- (ADVANCED is wafer's cache; SIMPLE warned)", "SIMPLE/ADVANCED",
       "exec/Device_Parameter_Set.cpp:411", Some("ADVANCED"), true,
       |c, v| {
           if choice(v, &["SIMPLE", "ADVANCED"])? == "SIMPLE" {
               c.warn("wafer's DRAM cache is MQSim's ADVANCED one (Data_Cache_Manager_Flash_Advanced: LRU, \
                       DRAM timing, back-pressure); SIMPLE's is not modelled");
           }
           Ok(())
       }),
    el("Data_Cache_Sharing_Mode", D, "- (one I/O flow: SHARED; EQUAL_PARTITIONING warned)", "SHARED/EQUAL_PARTITIONING",
       "exec/Device_Parameter_Set.cpp:421", Some("SHARED"), true,
       |c, v| {
           if choice(v, &["SHARED", "EQUAL_PARTITIONING"])? != "SHARED" {
               c.warn("wafer runs one I/O flow, which has the whole cache (as MQSim gives one flow); \
                       multi-flow partitioning is not modelled");
           }
           Ok(())
       }),
    el("Data_Cache_Capacity", D, "cache.capacity_mib (0: cache.mode = off)", "bytes / 2^20 = MiB",
       "exec/Device_Parameter_Set.cpp:431", Some("536870912"), true,
       |c, v| {
           let b = c.u32_field(v, "Device_Parameter_Set.h:27")?;
           c.c.cache.capacity_mib = b as f64 / MIB;
           if b == 0 {
               c.c.cache.mode = CacheMode::Off;
           }
           Ok(())
       }),
    el("Data_Cache_DRAM_Row_Size", D, "cache.dram_row_bytes", "bytes", "exec/Device_Parameter_Set.cpp:434", Some("8192"), true,
       |c, v| { c.c.cache.dram_row_bytes = u32_of(v)?; Ok(()) }),
    el("Data_Cache_DRAM_Data_Rate", D, "cache.dram_rate_mts", "MT/s", "exec/Device_Parameter_Set.cpp:437", Some("800"), true,
       |c, v| { c.c.cache.dram_rate_mts = uint(v)? as f64; Ok(()) }),
    el("Data_Cache_DRAM_Data_Busrt_Size", D, "cache.dram_burst_bytes", "bytes", "exec/Device_Parameter_Set.cpp:440",
       Some("4"), true, |c, v| { c.c.cache.dram_burst_bytes = u32_of(v)?; Ok(()) }),
    el("Data_Cache_DRAM_tRCD", D, "cache.dram_trcd_ns", "ns", "exec/Device_Parameter_Set.cpp:443", Some("13"), true,
       |c, v| { c.c.cache.dram_trcd_ns = uint(v)?; Ok(()) }),
    el("Data_Cache_DRAM_tCL", D, "cache.dram_tcl_ns", "ns", "exec/Device_Parameter_Set.cpp:446", Some("13"), true,
       |c, v| { c.c.cache.dram_tcl_ns = uint(v)?; Ok(()) }),
    el("Data_Cache_DRAM_tRP", D, "cache.dram_trp_ns", "ns", "exec/Device_Parameter_Set.cpp:449", Some("13"), true,
       |c, v| { c.c.cache.dram_trp_ns = uint(v)?; Ok(()) }),
    el("Address_Mapping", D, "- (PAGE_LEVEL only)", "PAGE_LEVEL", "exec/Device_Parameter_Set.cpp:452", Some("PAGE_LEVEL"), true,
       |_, v| {
           if choice(v, &["PAGE_LEVEL", "HYBRID"])? == "HYBRID" {
               return Err("HYBRID: MQSim's hybrid mapping unit is an empty stub \
                           (ssd/Address_Mapping_Unit_Hybrid.cpp:12-22); wafer maps pages (PAGE_LEVEL)".into());
           }
           Ok(())
       }),
    el("Ideal_Mapping_Table", D, "mapping.ideal", "true/false", "exec/Device_Parameter_Set.cpp:463", Some("false"), true,
       |c, v| { c.c.mapping.ideal = boolean(v)?; Ok(()) }),
    el("CMT_Capacity", D, "mapping.cmt_mib", "bytes / 2^20 = MiB", "exec/Device_Parameter_Set.cpp:467", Some("2097152"), true,
       |c, v| { c.c.mapping.cmt_mib = c.u32_field(v, "Device_Parameter_Set.h:36")? as f64 / MIB; Ok(()) }),
    el("CMT_Sharing_Mode", D, "- (one I/O flow: SHARED; EQUAL_PARTITIONING warned)", "SHARED/EQUAL_PARTITIONING",
       "exec/Device_Parameter_Set.cpp:470", Some("SHARED"), true,
       |c, v| {
           // MQSim writes EQUAL_SIZE_PARTITIONING (:174) but reads only EQUAL_PARTITIONING (:475).
           if choice(v, &["SHARED", "EQUAL_PARTITIONING", "EQUAL_SIZE_PARTITIONING"])? != "SHARED" {
               c.warn("wafer runs one I/O flow, which has the whole mapping-table cache (as MQSim gives one \
                       flow); multi-flow partitioning is not modelled");
           }
           Ok(())
       }),
    el("Plane_Allocation_Scheme", D, "flash.allocation", "one of the 24 orders of C, W, D, P",
       "exec/Device_Parameter_Set.cpp:480", Some("CWDP"), true,
       |c, v| {
           let s = v.trim().to_ascii_uppercase();
           parse_allocation(&s).map_err(|e| match e {
               Error::Config { reason, .. } => reason,
               e => e.to_string(),
           })?;
           c.c.flash.allocation = s;
           Ok(())
       }),
    el("Transaction_Scheduling_Policy", D, "- (PRIORITY_OUT_OF_ORDER is wafer's scheduler; OUT_OF_ORDER warned)",
       "OUT_OF_ORDER/PRIORITY_OUT_OF_ORDER", "exec/Device_Parameter_Set.cpp:534", Some("OUT_OF_ORDER"), true,
       |c, v| {
           match choice(v, &["OUT_OF_ORDER", "PRIORITY_OUT_OF_ORDER", "FLIN"])? {
               "FLIN" => return Err("FLIN: MQSim has no implementation of it (exec/SSD_Device.cpp:152-171 \
                                     throws); wafer schedules as PRIORITY_OUT_OF_ORDER".into()),
               "OUT_OF_ORDER" => c.warn("wafer schedules flash transactions as MQSim's PRIORITY_OUT_OF_ORDER \
                                         (TSU_Priority_OutOfOrder); the plain TSU_OutOfOrder is not modelled"),
               _ => {}
           }
           Ok(())
       }),
    el("Overprovisioning_Ratio", D, "flash.overprovisioning", "ratio", "exec/Device_Parameter_Set.cpp:550", Some("0.07"), true,
       |c, v| { c.c.flash.overprovisioning = float(v)?; Ok(()) }),
    el("GC_Exec_Threshold", D, "gc.exec_threshold", "ratio (of free blocks per plane; wafer: of free superblocks)",
       "exec/Device_Parameter_Set.cpp:556", Some("0.05"), true,
       |c, v| { c.c.gc.exec_threshold = float(v)?; Ok(()) }),
    el("GC_Block_Selection_Policy", D, "- (GREEDY = wafer's default victim greedy; others warned with the --victim to use)",
       "GREEDY/RGA/RANDOM/RANDOM_P/RANDOM_PP/FIFO", "exec/Device_Parameter_Set.cpp:559", Some("RGA"), true,
       |c, v| {
           let p = choice(v, &["GREEDY", "RGA", "RANDOM", "RANDOM_P", "RANDOM_PP", "FIFO"])?;
           c.gc_policy = Some(p);
           Ok(())
       }),
    el("Use_Copyback_for_GC", D, "flash.copyback", "true/false", "exec/Device_Parameter_Set.cpp:577", Some("false"), true,
       |c, v| { c.c.flash.copyback = boolean(v)?; Ok(()) }),
    el("Preemptible_GC_Enabled", D, "gc.preemptible", "true/false", "exec/Device_Parameter_Set.cpp:581", Some("true"), true,
       |c, v| { c.c.gc.preemptible = boolean(v)?; Ok(()) }),
    el("GC_Hard_Threshold", D, "gc.hard_threshold", "ratio", "exec/Device_Parameter_Set.cpp:585", Some("0.005"), true,
       |c, v| { c.c.gc.hard_threshold = float(v)?; Ok(()) }),
    // Neither wear-leveling element reaches MQSim's GC unit (exec/SSD_Device.cpp:306-311 passes none, so the
    // constructor's defaults, both on at threshold 100, always apply: ssd/GC_and_WL_Unit_Page_Level.h:21).
    el("Dynamic_Wearleveling_Enabled", D, "- (warned when true: no wear leveling in wafer)", "true/false",
       "exec/Device_Parameter_Set.cpp:588", Some("true"), true,
       |c, v| { if boolean(v)? { c.warn(NO_WL); } Ok(()) }),
    el("Static_Wearleveling_Enabled", D, "- (warned when true: no wear leveling in wafer)", "true/false",
       "exec/Device_Parameter_Set.cpp:592", Some("true"), true,
       |c, v| { if boolean(v)? { c.warn(NO_WL); } Ok(()) }),
    el("Static_Wearleveling_Threshold", D, "- (static wear leveling's)", "erases", "exec/Device_Parameter_Set.cpp:596",
       Some("100"), false, |_, v| uint(v).map(drop)),
    el("Preferred_suspend_erase_time_for_read", D, "flash.suspend_erase_for_read_ns", "ns",
       "exec/Device_Parameter_Set.cpp:599 (spelt Prefered_)", Some("700000"), true,
       |c, v| { c.c.flash.suspend_erase_for_read_ns = uint(v)?; Ok(()) }),
    el("Preferred_suspend_erase_time_for_write", D, "flash.suspend_erase_for_write_ns", "ns",
       "exec/Device_Parameter_Set.cpp:602", Some("700000"), true,
       |c, v| { c.c.flash.suspend_erase_for_write_ns = uint(v)?; Ok(()) }),
    el("Preferred_suspend_write_time_for_read", D, "flash.suspend_program_for_read_ns", "ns",
       "exec/Device_Parameter_Set.cpp:605", Some("100000"), true,
       |c, v| { c.c.flash.suspend_program_for_read_ns = uint(v)?; Ok(()) }),
    el("Flash_Channel_Count", D, "flash.channels", "channels", "exec/Device_Parameter_Set.cpp:608", None, true,
       |c, v| { c.c.flash.channels = count(v)?; Ok(()) }),
    el("Flash_Channel_Width", D, "flash.channel_width_bytes", "bytes", "exec/Device_Parameter_Set.cpp:611", Some("1"), true,
       |c, v| { c.c.flash.channel_width_bytes = count(v)?; Ok(()) }),
    el("Channel_Transfer_Rate", D, "flash.channel_rate_mts", "MT/s", "exec/Device_Parameter_Set.cpp:614", Some("300"), true,
       |c, v| {
           let r = uint(v)?;
           if r == 0 {
               return Err("0; must be > 0 (MQSim divides 1000 by it, exec/SSD_Device.cpp:97)".into());
           }
           // MQSim times 2 bytes per (int)(1000 / rate) x 2 ns: it really runs 1000 / floor(1000 / rate) MT/s.
           let step = 1000 / r;
           let mqsim = if step == 0 { f64::INFINITY } else { 1000.0 / step as f64 };
           if (mqsim - r as f64).abs() > 0.01 * r as f64 {
               c.warn(&format!(
                   "{r} MT/s: wafer times {r} MT/s, while MQSim would move data at {} ((int) truncation of \
                    1000 / rate, exec/SSD_Device.cpp:97)",
                   if step == 0 { "no cost at all".to_string() } else { format!("{mqsim:.0} MT/s") }
               ));
           }
           c.c.flash.channel_rate_mts = r as f64;
           Ok(())
       }),
    el("Chip_No_Per_Channel", D, "flash.chips_per_channel", "chips", "exec/Device_Parameter_Set.cpp:617", None, true,
       |c, v| { c.c.flash.chips_per_channel = count(v)?; Ok(()) }),
    el("Flash_Comm_Protocol", D, "- (NVDDR2 only)", "NVDDR2", "exec/Device_Parameter_Set.cpp:620", Some("NVDDR2"), true,
       |_, v| choice(v, &["NVDDR2"]).map(drop)),
    el("Flash_Technology", F, "flash.technology", "SLC/MLC/TLC -> slc/mlc/tlc", "exec/Flash_Parameter_Set.cpp:138",
       Some("MLC"), true,
       |c, v| {
           c.c.flash.technology = match choice(v, &["SLC", "MLC", "TLC"])? {
               "SLC" => Technology::Slc,
               "MLC" => Technology::Mlc,
               _ => Technology::Tlc,
           };
           Ok(())
       }),
    el("CMD_Suspension_Support", F, "flash.suspend", "NONE/PROGRAM/ERASE/PROGRAM_ERASE -> none/program/erase/program-erase",
       "exec/Flash_Parameter_Set.cpp:148", Some("ERASE"), true,
       |c, v| {
           c.c.flash.suspend = match choice(v, &["NONE", "ERASE", "PROGRAM", "PROGRAM_ERASE"])? {
               "NONE" => Suspend::None,
               "ERASE" => Suspend::Erase,
               "PROGRAM" => Suspend::Program,
               _ => Suspend::ProgramErase,
           };
           Ok(())
       }),
    el("Page_Read_Latency_LSB", F, "flash.read_ns[0]", "ns", "exec/Flash_Parameter_Set.cpp:162", Some("75000"), true,
       |c, v| { c.read[0] = uint(v)?; Ok(()) }),
    el("Page_Read_Latency_CSB", F, "flash.read_ns[1] (TLC only)", "ns", "exec/Flash_Parameter_Set.cpp:165", Some("75000"), true,
       |c, v| { c.read[1] = uint(v)?; Ok(()) }),
    el("Page_Read_Latency_MSB", F, "flash.read_ns[last] (MLC, TLC)", "ns", "exec/Flash_Parameter_Set.cpp:168", Some("75000"), true,
       |c, v| { c.read[2] = uint(v)?; Ok(()) }),
    el("Page_Program_Latency_LSB", F, "flash.program_ns[0]", "ns", "exec/Flash_Parameter_Set.cpp:171", Some("750000"), true,
       |c, v| { c.program[0] = uint(v)?; Ok(()) }),
    el("Page_Program_Latency_CSB", F, "flash.program_ns[1] (TLC only)", "ns", "exec/Flash_Parameter_Set.cpp:174",
       Some("750000"), true, |c, v| { c.program[1] = uint(v)?; Ok(()) }),
    el("Page_Program_Latency_MSB", F, "flash.program_ns[last] (MLC, TLC)", "ns", "exec/Flash_Parameter_Set.cpp:177",
       Some("750000"), true, |c, v| { c.program[2] = uint(v)?; Ok(()) }),
    el("Block_Erase_Latency", F, "flash.erase_ns", "ns", "exec/Flash_Parameter_Set.cpp:180", Some("3800000"), true,
       |c, v| { c.c.flash.erase_ns = uint(v)?; Ok(()) }),
    // Only sizes a statistics histogram in MQSim (ssd/Stats.cpp:54).
    el("Block_PE_Cycles_Limit", F, "- (MQSim: a statistics histogram's size)", "erases", "exec/Flash_Parameter_Set.cpp:183",
       Some("10000"), false, |_, v| uint(v).map(drop)),
    el("Suspend_Erase_Time", F, "flash.suspend_erase_ns", "ns", "exec/Flash_Parameter_Set.cpp:186", Some("700000"), true,
       |c, v| { c.c.flash.suspend_erase_ns = uint(v)?; Ok(()) }),
    el("Suspend_Program_Time", F, "flash.suspend_program_ns", "ns", "exec/Flash_Parameter_Set.cpp:189", Some("100000"), true,
       |c, v| { c.c.flash.suspend_program_ns = uint(v)?; Ok(()) }),
    el("Die_No_Per_Chip", F, "flash.dies_per_chip", "dies", "exec/Flash_Parameter_Set.cpp:192", None, true,
       |c, v| { c.c.flash.dies_per_chip = count(v)?; Ok(()) }),
    el("Plane_No_Per_Die", F, "flash.planes_per_die", "planes", "exec/Flash_Parameter_Set.cpp:195", None, true,
       |c, v| {
           let n = count(v)?;
           if n > 4 {
               c.warn(&format!(
                   "{n} planes: wafer batches any number of planes, MQSim's command-time arrays hold 4 \
                    (ssd/ONFI_Channel_NVDDR2.h:26-33), so MQSim itself cannot run this drive correctly"
               ));
           }
           c.c.flash.planes_per_die = n;
           Ok(())
       }),
    el("Block_No_Per_Plane", F, "flash.blocks_per_plane", "blocks", "exec/Flash_Parameter_Set.cpp:198", None, true,
       |c, v| { c.c.flash.blocks_per_plane = count(v)?; Ok(()) }),
    el("Page_No_Per_Block", F, "flash.pages_per_block", "pages", "exec/Flash_Parameter_Set.cpp:201", None, true,
       |c, v| { c.c.flash.pages_per_block = count(v)?; Ok(()) }),
    el("Page_Capacity", F, "flash.page_bytes", "bytes", "exec/Flash_Parameter_Set.cpp:204", None, true,
       |c, v| { c.c.flash.page_bytes = count(v)?; Ok(()) }),
    // Read, never used by MQSim's simulation.
    el("Page_Metadat_Capacity", F, "- (unused by MQSim)", "bytes", "exec/Flash_Parameter_Set.cpp:207", Some("1872"), false,
       |_, v| uint(v).map(drop)),
];

const MIB: f64 = (1u64 << 20) as f64;

const NO_WL: &str =
    "wafer does not model wear leveling (MQSim runs both kinds whatever the file says: \
                     exec/SSD_Device.cpp:306-311 passes neither flag on)";

/// What MQSim's GC victim policy is closest to among wafer's victim
/// selectors (ssd/GC_and_WL_Unit_Page_Level.cpp:54-128), for the warning.
fn victim_hint(policy: &str, blocks_per_plane: u32) -> String {
    match policy {
        "RGA" => {
            let d = (blocks_per_plane as f64).log2() as u32;
            format!(
                "--victim d-choices:{d} (RGA takes the fewest-valid of log2(blocks per plane) = {d} random \
                 blocks, :69-87)"
            )
        }
        "RANDOM" | "RANDOM_P" => "--victim random (a random full block, :88-110)".into(),
        "FIFO" => "--victim fifo (:125-128)".into(),
        _ => "no wafer selector (RANDOM_PP: a random block with at least rho x pages invalid, :111-124)".into(),
    }
}

/// The element's row in [`ELEMENTS`], by name in its section (aliases too).
fn find(section: Section, name: &str) -> Option<usize> {
    let name = ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map_or(name, |(_, real)| real);
    ELEMENTS
        .iter()
        .position(|e| e.section == section && e.name == name)
}

/// The import's state: the config being filled, the latencies until the
/// technology is known, the warnings.
struct Ctx {
    c: SsdConfig,
    read: [u64; 3],
    program: [u64; 3],
    gc_policy: Option<&'static str>,
    /// The element being applied and its line (None: MQSim's built-in value).
    current: (String, Option<u32>),
    warnings: Vec<String>,
}

impl Ctx {
    fn warn(&mut self, msg: &str) {
        let (name, line) = &self.current;
        let at = line.map_or_else(|| "not in the file".into(), |l| format!("line {l}"));
        let w = format!("{name} ({at}): {msg}");
        if !self.warnings.contains(&w) {
            self.warnings.push(w);
        }
    }

    /// A field MQSim keeps in 16 bits (Device_Parameter_Set.h:23-24).
    fn u16_field(&mut self, v: &str) -> std::result::Result<u32, String> {
        let n = count(v)?;
        if n > u16::MAX as u32 {
            self.warn(&format!(
                "{n}: MQSim keeps it in 16 bits (exec/Device_Parameter_Set.h:23-24) and would run with {}; \
                 wafer uses {n}",
                n as u16
            ));
        }
        Ok(n)
    }

    /// A byte count MQSim keeps in 32 bits.
    fn u32_field(&mut self, v: &str, decl: &str) -> std::result::Result<u64, String> {
        let n = uint(v)?;
        if n > u32::MAX as u64 {
            self.warn(&format!(
                "{n} bytes: MQSim keeps it in 32 bits (exec/{decl}) and would run with {} bytes; wafer uses {n}",
                n as u32
            ));
        }
        Ok(n)
    }
}

fn uint(v: &str) -> std::result::Result<u64, String> {
    let t = v.trim();
    t.parse::<u64>().map_err(|_| {
        if t.is_empty() {
            "is empty; expected a whole number".to_string()
        } else {
            format!("'{t}' is not a whole number")
        }
    })
}

fn u32_of(v: &str) -> std::result::Result<u32, String> {
    let n = uint(v)?;
    u32::try_from(n).map_err(|_| format!("{n} is too large (at most {})", u32::MAX))
}

/// A count of something the drive has at least one of.
fn count(v: &str) -> std::result::Result<u32, String> {
    match u32_of(v)? {
        0 => Err("0; must be at least 1".into()),
        n => Ok(n),
    }
}

fn float(v: &str) -> std::result::Result<f64, String> {
    let t = v.trim();
    match t.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        _ if t.is_empty() => Err("is empty; expected a number".into()),
        _ => Err(format!("'{t}' is not a finite number")),
    }
}

fn boolean(v: &str) -> std::result::Result<bool, String> {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        t => Err(format!(
            "'{t}' is not true or false (MQSim would read anything but false as true)"
        )),
    }
}

/// One of `options`, matched as MQSim does (upper-cased).
fn choice(v: &str, options: &[&'static str]) -> std::result::Result<&'static str, String> {
    let up = v.trim().to_ascii_uppercase();
    options.iter().find(|o| **o == up).copied().ok_or_else(|| {
        format!(
            "'{}' is not one of {} (MQSim stops on it too)",
            v.trim(),
            options.join(", ")
        )
    })
}

/// Edit distance, for "did you mean" on unknown element names.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// Why an element MQSim's readers do not know is ignored, with the closest
/// known name.
fn unknown(section: Option<Section>, name: &str) -> String {
    let tags = [Section::Host, Section::Device, Section::Flash];
    let home = ELEMENTS
        .iter()
        .find(|e| e.name == name)
        .map(|e| e.section.tag())
        .or(match name {
            "Host_Parameter_Set" | "Device_Parameter_Set" => Some(ROOT),
            "Flash_Parameter_Set" => Some("Device_Parameter_Set"),
            _ => None,
        });
    if let Some(home) = home {
        return format!(
            "belongs in {home}, not here; MQSim ignores it here too, so it is not applied"
        );
    }
    let close = ELEMENTS
        .iter()
        .map(|e| e.name)
        .chain(ALIASES.iter().map(|a| a.0))
        .chain(tags.iter().map(|t| t.tag()))
        .map(|k| {
            let d = if k.eq_ignore_ascii_case(name) {
                0
            } else {
                distance(k, name)
            };
            (d, k)
        })
        .filter(|(d, _)| *d <= 3)
        .min();
    let hint = close.map_or(String::new(), |(_, k)| format!(" (did you mean {k}?)"));
    let place = section.map_or(ROOT, Section::tag);
    format!(
        "not an element MQSim reads in {place}{hint}; MQSim's reader skips names it does not know exactly, \
         and wafer does not apply it either"
    )
}

/// Read MQSim device configuration `path` (an `ssdconfig.xml`).
pub fn load(path: &Path) -> Result<SsdConfig> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::config("timing.preset", format!("cannot read {shown}: {e}")))?;
    let mut c = parse(&text, &shown)?;
    if let Some(stem) = path.file_stem() {
        c.name = stem.to_string_lossy().into_owned();
    }
    Ok(c)
}

/// Read the text of an MQSim device configuration; `origin` (its file)
/// names it in errors and in the description.
pub fn parse(text: &str, origin: &str) -> Result<SsdConfig> {
    let fail = |at: &str, reason: String| Error::config(&format!("{origin}{at}"), reason);
    let doc = Document::parse(text).map_err(|e| fail("", format!("not well-formed XML: {e}")))?;
    let line = |n: Node| doc.text_pos_at(n.range().start).row;
    let root = doc.root_element();
    if root.tag_name().name() != ROOT {
        let what = if root.tag_name().name() == "MQSim_IO_Scenarios" {
            " (an MQSim workload file; the device configuration is MQSim's -i file)"
        } else {
            ""
        };
        return Err(fail(
            &format!(":{}: <{}>", line(root), root.tag_name().name()),
            format!("the root element must be <{ROOT}> (MQSim's main.cpp:64){what}"),
        ));
    }
    let mut ctx = Ctx {
        c: SsdConfig {
            name: "mqsim".into(),
            ..SsdConfig::default()
        },
        read: [0; 3],
        program: [0; 3],
        gc_policy: None,
        current: (String::new(), None),
        warnings: Vec::new(),
    };
    // Element index -> (value, line); sections found.
    let mut given: HashMap<usize, (String, u32)> = HashMap::new();
    let mut sections: HashMap<String, u32> = HashMap::new();
    let mut seen = |n: Node, ctx: &mut Ctx, section: Option<Section>| -> Result<()> {
        let name = n.tag_name().name();
        let at = format!(":{}: <{name}>", line(n));
        let tag = [Section::Host, Section::Device, Section::Flash]
            .into_iter()
            .find(|s| s.tag() == name);
        let parent_ok = matches!(
            (section, tag),
            (None, Some(Section::Host | Section::Device))
                | (Some(Section::Device), Some(Section::Flash))
        );
        if parent_ok {
            if let Some(first) = sections.insert(name.to_string(), line(n)) {
                return Err(fail(&at, format!("given twice (first on line {first})")));
            }
            return Ok(());
        }
        match section.and_then(|s| find(s, name)) {
            Some(i) => {
                if n.children().any(|k| k.is_element()) {
                    return Err(fail(&at, "holds elements; expected a value".into()));
                }
                let value = n.text().unwrap_or("").to_string();
                if let Some((_, first)) = given.insert(i, (value, line(n))) {
                    return Err(fail(&at, format!("given twice (first on line {first})")));
                }
            }
            None => {
                ctx.current = (name.to_string(), Some(line(n)));
                let msg = unknown(section, name);
                ctx.warn(&msg);
            }
        }
        Ok(())
    };
    for n in root.children().filter(Node::is_element) {
        seen(n, &mut ctx, None)?;
        let section = match n.tag_name().name() {
            "Host_Parameter_Set" => Section::Host,
            "Device_Parameter_Set" => Section::Device,
            _ => continue,
        };
        for k in n.children().filter(Node::is_element) {
            seen(k, &mut ctx, Some(section))?;
            if section == Section::Device && k.tag_name().name() == "Flash_Parameter_Set" {
                for f in k.children().filter(Node::is_element) {
                    seen(f, &mut ctx, Some(Section::Flash))?;
                }
            }
        }
    }
    for required in [Section::Device, Section::Flash] {
        if !sections.contains_key(required.tag()) {
            return Err(fail(
                &format!(": <{}>", required.tag()),
                "missing; it holds the drive's geometry".into(),
            ));
        }
    }
    for (i, e) in ELEMENTS.iter().enumerate() {
        let (value, line) = match given.get(&i) {
            Some((v, l)) => (v.as_str(), Some(*l)),
            None => match e.default {
                Some(d) => (d, None),
                None => {
                    return Err(fail(
                        &format!(": <{}>", e.name),
                        format!(
                            "missing from <{}>; the drive's geometry must be in the file",
                            e.section.tag()
                        ),
                    ))
                }
            },
        };
        ctx.current = (e.name.to_string(), line);
        (e.set)(&mut ctx, value).map_err(|r| {
            let at = line.map_or_else(String::new, |l| format!(":{l}"));
            fail(&format!("{at}: <{}>", e.name), r)
        })?;
        if line.is_none() && e.effect && used(e.name, ctx.c.flash.technology) {
            ctx.warn(&format!(
                "MQSim's built-in value {value} is used (exec/{})",
                e.section.defaults()
            ));
        }
    }
    finish(&mut ctx, &given, origin)?;
    let mut c = ctx.c;
    c.import_warnings = ctx.warnings;
    c.validate().map_err(|e| at_element(e, &given, origin))?;
    Ok(c)
}

/// Whether a latency element matters for `tech` (MQSim reads LSB for SLC,
/// LSB and MSB for MLC, all three for TLC: exec/SSD_Device.cpp:40-70).
fn used(name: &str, tech: Technology) -> bool {
    !(name.ends_with("_CSB") && tech != Technology::Tlc
        || name.ends_with("_MSB") && tech == Technology::Slc)
}

/// Latencies by technology, the GC policy's warning, name and description.
fn finish(ctx: &mut Ctx, given: &HashMap<usize, (String, u32)>, origin: &str) -> Result<()> {
    let tech = ctx.c.flash.technology;
    let pick = |v: [u64; 3]| match tech {
        Technology::Slc => vec![v[0]],
        Technology::Mlc => vec![v[0], v[2]],
        Technology::Tlc => v.to_vec(),
    };
    for (kind, v) in [("Read", ctx.read), ("Program", ctx.program)] {
        for (i, bit) in ["LSB", "CSB", "MSB"].iter().enumerate() {
            let name = format!("Page_{kind}_Latency_{bit}");
            if v[i] == 0 && used(&name, tech) {
                let at = find(Section::Flash, &name)
                    .and_then(|k| given.get(&k))
                    .map_or_else(String::new, |(_, l)| format!(":{l}"));
                return Err(Error::config(
                    &format!("{origin}{at}: <{name}>"),
                    format!("0 ns; {tech:?} flash uses it, so it must be > 0"),
                ));
            }
        }
    }
    ctx.c.flash.read_ns = pick(ctx.read);
    ctx.c.flash.program_ns = pick(ctx.program);
    if let Some(p) = ctx.gc_policy.filter(|p| *p != "GREEDY") {
        let i = find(Section::Device, "GC_Block_Selection_Policy").expect("in the table");
        ctx.current = (ELEMENTS[i].name.to_string(), given.get(&i).map(|g| g.1));
        let hint = victim_hint(p, ctx.c.flash.blocks_per_plane);
        ctx.warn(&format!(
            "{p}: a timing preset does not choose the victim; wafer's runs use --victim (default greedy, \
             MQSim's GREEDY); closest to MQSim's {p}: {hint}"
        ));
    }
    let f = &ctx.c.flash;
    let file = Path::new(origin)
        .file_name()
        .map_or_else(|| origin.to_string(), |s| s.to_string_lossy().into_owned());
    ctx.c.description = format!(
        "MQSim configuration {file}: {} ch x {} chips x {} dies x {} planes, {} blocks of {} pages of {} KiB, {}, {}",
        f.channels,
        f.chips_per_channel,
        f.dies_per_chip,
        f.planes_per_die,
        f.blocks_per_plane,
        f.pages_per_block,
        f.page_bytes as f64 / 1024.0,
        format!("{:?}", f.technology).to_uppercase(),
        match ctx.c.host.interface {
            Interface::Nvme => "NVMe",
            Interface::Sata => "SATA",
        }
    );
    Ok(())
}

/// A validation error of the finished config, re-addressed to the element
/// that set the key.
fn at_element(e: Error, given: &HashMap<usize, (String, u32)>, origin: &str) -> Error {
    let Error::Config { field, reason } = &e else {
        return e;
    };
    let key = field.strip_prefix("timing.").unwrap_or(field);
    match ELEMENTS
        .iter()
        .position(|el| el.key.split(' ').next() == Some(key))
    {
        Some(i) => {
            let at = given
                .get(&i)
                .map_or_else(String::new, |(_, l)| format!(":{l}"));
            Error::config(
                &format!("{origin}{at}: <{}>", ELEMENTS[i].name),
                format!("{reason} (wafer's {key})"),
            )
        }
        None => Error::config(&format!("{origin}: {key}"), reason.clone()),
    }
}

/// The mapping as a Markdown table (docs/FIDELITY.md, "MQSim's
/// configuration files", holds it; a test keeps the two equal).
pub fn mapping_table() -> String {
    let mut out = String::from(
        "| MQSim element | in | wafer | unit | MQSim reads it at | if omitted |\n|---|---|---|---|---|---|\n",
    );
    for e in ELEMENTS {
        let section = match e.section {
            Section::Host => "host",
            Section::Device => "device",
            Section::Flash => "flash",
        };
        let key = match e.key.split_once(' ') {
            Some((k, rest)) if k != "-" => format!("`{k}` {rest}"),
            _ if e.key.starts_with("- ") => format!("none {}", &e.key[2..]),
            _ => format!("`{}`", e.key),
        };
        let default = e.default.unwrap_or("error (geometry)");
        out.push_str(&format!(
            "| `{}` | {section} | {key} | {} | {} | {default} |\n",
            e.name,
            e.unit.replace('|', "/"),
            e.reads
        ));
    }
    out
}

/// The preset TOML equivalent to `c` (as [`load`] returned it from
/// `source`): a header saying where it came from and what was not applied,
/// then every field. Loading it gives `c` again.
pub fn to_preset_toml(c: &SsdConfig, source: &str) -> Result<String> {
    let bare = SsdConfig {
        import_warnings: Vec::new(),
        ..c.clone()
    };
    let mut body = toml::to_string(&bare)
        .map_err(|e| Error::config("timing.preset", format!("cannot write TOML: {e}")))?;
    if !c.import_warnings.is_empty() {
        // One warning a line (toml writes arrays on one line), among the
        // top-level keys, before the first table.
        let list: String = c
            .import_warnings
            .iter()
            .map(|w| format!("    {},\n", toml::Value::String(w.clone())))
            .collect();
        let at = body.find("\n[").map_or(body.len(), |i| i + 1);
        body.insert_str(at, &format!("import_warnings = [\n{list}]\n\n"));
    }
    let mut out = format!(
        "# Imported by `wafer presets import` from the MQSim device configuration\n\
         # {source}\n\
         # (the ssdconfig.xml format of CMU-SAFARI/MQSim @ 7ec40e3; the element-by-element mapping is in\n\
         # docs/FIDELITY.md, \"MQSim's configuration files\"). `--timing` with this file runs exactly as\n\
         # with the XML.\n"
    );
    if c.import_warnings.is_empty() {
        out.push_str("# Every element of the file is applied.\n");
    } else {
        out.push_str(
            "# Not applied as the file asks (kept in import_warnings; every run reports them as\n\
             # warning mqsim-xml-unsupported; delete the key to silence it):\n",
        );
        for w in &c.import_warnings {
            out.push_str(&format!("# * {w}\n"));
        }
    }
    out.push('\n');
    out.push_str(&body);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    type Pairs<'a> = &'a [(&'a str, &'a str)];

    /// An MQSim-shaped device configuration: the root, the host set, the
    /// device set holding the flash set, one element per pair.
    fn xml(host: Pairs, device: Pairs, flash: Pairs) -> String {
        let rows = |pairs: Pairs, indent: &str| {
            pairs
                .iter()
                .map(|(k, v)| format!("{indent}<{k}>{v}</{k}>\n"))
                .collect::<String>()
        };
        format!(
            "<?xml version=\"1.0\" encoding=\"us-ascii\"?>\n<{ROOT}>\n\t<Host_Parameter_Set>\n{}\t</Host_Parameter_Set>\n\
             \t<Device_Parameter_Set>\n{}\t\t<Flash_Parameter_Set>\n{}\t\t</Flash_Parameter_Set>\n\
             \t</Device_Parameter_Set>\n</{ROOT}>\n",
            rows(host, "\t\t"),
            rows(device, "\t\t"),
            rows(flash, "\t\t\t")
        )
    }

    /// The values of MQSim's shipped ssdconfig.xml (7ec40e3), which preset
    /// `mqsim-default` was written from.
    const SHIPPED_HOST: Pairs = &[
        ("PCIe_Lane_Bandwidth", "1.00000"),
        ("PCIe_Lane_Count", "4"),
        ("SATA_Processing_Delay", "400000"),
        ("Enable_ResponseTime_Logging", "false"),
        ("ResponseTime_Logging_Period_Length", "1000000"),
    ];
    const SHIPPED_DEVICE: Pairs = &[
        ("Seed", "321"),
        ("Enabled_Preconditioning", "false"),
        ("Memory_Type", "FLASH"),
        ("HostInterface_Type", "NVME"),
        ("IO_Queue_Depth", "65535"),
        ("Queue_Fetch_Size", "512"),
        ("Caching_Mechanism", "ADVANCED"),
        ("Data_Cache_Sharing_Mode", "SHARED"),
        ("Data_Cache_Capacity", "268435456"),
        ("Data_Cache_DRAM_Row_Size", "8192"),
        ("Data_Cache_DRAM_Data_Rate", "100"),
        ("Data_Cache_DRAM_Data_Busrt_Size", "1"),
        ("Data_Cache_DRAM_tRCD", "13"),
        ("Data_Cache_DRAM_tCL", "13"),
        ("Data_Cache_DRAM_tRP", "13"),
        ("Address_Mapping", "PAGE_LEVEL"),
        ("Ideal_Mapping_Table", "false"),
        ("CMT_Capacity", "2097152"),
        ("CMT_Sharing_Mode", "SHARED"),
        ("Plane_Allocation_Scheme", "CWDP"),
        ("Transaction_Scheduling_Policy", "PRIORITY_OUT_OF_ORDER"),
        ("Overprovisioning_Ratio", "0.07"),
        ("GC_Exec_Threshold", "0.05000"),
        ("GC_Block_Selection_Policy", "RGA"),
        ("Use_Copyback_for_GC", "false"),
        ("Preemptible_GC_Enabled", "false"),
        ("GC_Hard_Threshold", "0.005000"),
        ("Dynamic_Wearleveling_Enabled", "true"),
        ("Static_Wearleveling_Enabled", "true"),
        ("Static_Wearleveling_Threshold", "100"),
        ("Preferred_suspend_erase_time_for_read", "700000"),
        ("Preferred_suspend_erase_time_for_write", "700000"),
        ("Preferred_suspend_write_time_for_read", "100000"),
        ("Flash_Channel_Count", "8"),
        ("Flash_Channel_Width", "1"),
        ("Channel_Transfer_Rate", "333"),
        ("Chip_No_Per_Channel", "4"),
        ("Flash_Comm_Protocol", "NVDDR2"),
    ];
    const SHIPPED_FLASH: Pairs = &[
        ("Flash_Technology", "MLC"),
        ("CMD_Suspension_Support", "ERASE"),
        ("Page_Read_Latency_LSB", "75000"),
        ("Page_Read_Latency_CSB", "75000"),
        ("Page_Read_Latency_MSB", "75000"),
        ("Page_Program_Latency_LSB", "750000"),
        ("Page_Program_Latency_CSB", "750000"),
        ("Page_Program_Latency_MSB", "750000"),
        ("Block_Erase_Latency", "3800000"),
        ("Block_PE_Cycles_Limit", "10000"),
        ("Suspend_Erase_Time", "700000"),
        ("Suspend_Program_Time", "100000"),
        ("Die_No_Per_Chip", "2"),
        ("Plane_No_Per_Die", "2"),
        ("Block_No_Per_Plane", "2048"),
        ("Page_No_Per_Block", "256"),
        ("Page_Capacity", "8192"),
        ("Page_Metadat_Capacity", "448"),
    ];

    /// The line of the first element `name` in `text` (1-based).
    fn line_of(text: &str, name: &str) -> usize {
        let tag = format!("<{name}>");
        1 + text
            .lines()
            .position(|l| l.trim_start().starts_with(&tag))
            .expect(name)
    }

    /// `base` with the values of `over` replaced (or appended when new).
    fn with<'a>(base: Pairs<'a>, over: Pairs<'a>) -> Vec<(&'a str, &'a str)> {
        let mut v: Vec<_> = base.to_vec();
        for (k, val) in over {
            match v.iter_mut().find(|(n, _)| n == k) {
                Some(p) => p.1 = val,
                None => v.push((k, val)),
            }
        }
        v
    }

    /// AutoBlox's utils/baseline_nvmemlc/0.xml (bd1cc52), which preset
    /// `intel750` was written from: the shipped shape with its values, and its
    /// two misspelt elements (which MQSim ignores).
    fn autoblox() -> String {
        let device = with(
            SHIPPED_DEVICE,
            &[
                ("Enabled_Preconditioning", "true"),
                ("IO_Queue_Depth", "4"),
                ("Queue_Fetch_Size", "4"),
                ("Data_Cache_Capacity", "838860800"),
                ("Data_Cache_DRAM_Row_Size", "4096"),
                ("Data_Cache_DRAM_Data_Rate", "2133"),
                ("Data_Cache_DRAM_Data_Busrt_Size", "8"),
                ("Data_Cache_DRAM_tRCD", "14"),
                ("Data_Cache_DRAM_tCL", "14"),
                ("Data_Cache_DRAM_tRP", "14"),
                ("CMT_Capacity", "268435456"),
                ("Overprovisioning_Ratio", "0.2"),
                ("GC_Exec_Threshold", "0.1"),
                ("GC_Block_Selection_Policy", "GREEDY"),
                ("Preemptible_GC_Enabled", "true"),
                ("GC_Hard_Threshold", "0.1"),
                ("Preferred_suspend_erase_time_for_read", "100000"),
                ("Preferred_suspend_erase_time_for_write", "100000"),
                ("Flash_Channel_Count", "12"),
                ("Chip_No_Per_Channel", "5"),
            ],
        );
        let flash: Vec<_> = with(
            SHIPPED_FLASH,
            &[
                ("CMD_Suspension_Support", "NONE"),
                ("Page_Read_Latency_LSB", "59975"),
                ("Page_Read_Latency_CSB", "0"),
                ("Page_Read_Latency_MSB", "104956"),
                ("Page_Program_Latency_LSB", "82062"),
                ("Page_Program_Latency_CSB", "0"),
                ("Page_Program_Latency_MSB", "2250000"),
                ("Block_Erase_Latency", "3000000"),
                ("Die_No_Per_Chip", "8"),
                ("Plane_No_Per_Die", "1"),
                ("Block_No_Per_Plane", "512"),
                ("Page_No_Per_Block", "512"),
                ("Page_Capacity", "4096"),
            ],
        )
        .into_iter()
        .map(|(k, v)| match k {
            "Block_PE_Cycles_Limit" => ("Block_PR_Cycles_Limit", v),
            "Suspend_Program_Time" => ("Suspend_Program_time", v),
            _ => (k, v),
        })
        .collect();
        xml(
            &with(SHIPPED_HOST, &[("PCIe_Lane_Bandwidth", "1.0")]),
            &device,
            &flash,
        )
    }

    /// The elements the warnings name, in order.
    fn warned(c: &SsdConfig) -> Vec<&str> {
        c.import_warnings
            .iter()
            .map(|w| w.split(' ').next().unwrap())
            .collect()
    }

    fn field(e: Error) -> String {
        match e {
            Error::Config { field, reason } => format!("{field}: {reason}"),
            e => panic!("expected a configuration error, got {e:?}"),
        }
    }

    #[test]
    fn shipped_config_is_preset_mqsim_default() {
        let text = xml(SHIPPED_HOST, SHIPPED_DEVICE, SHIPPED_FLASH);
        let mut c = parse(&text, "ssdconfig.xml").unwrap();
        // What wafer does not do: RGA victims and wear leveling.
        assert_eq!(
            warned(&c),
            [
                "Dynamic_Wearleveling_Enabled",
                "Static_Wearleveling_Enabled",
                "GC_Block_Selection_Policy"
            ],
            "{:#?}",
            c.import_warnings
        );
        assert!(
            c.import_warnings[2].contains("--victim d-choices:11"),
            "{}",
            c.import_warnings[2]
        );
        let at = format!("(line {})", line_of(&text, "Dynamic_Wearleveling_Enabled"));
        assert!(
            c.import_warnings[0].contains(&at),
            "{}",
            c.import_warnings[0]
        );
        let want = SsdConfig::load("mqsim-default").unwrap();
        assert!(c
            .description
            .starts_with("MQSim configuration ssdconfig.xml: 8 ch x 4 chips x 2 dies"));
        c.name = want.name.clone();
        c.description = want.description.clone();
        c.import_warnings.clear();
        assert_eq!(c, want);
    }

    #[test]
    fn autoblox_config_is_preset_intel750_but_for_its_queue() {
        let mut c = parse(&autoblox(), "0.xml").unwrap();
        assert_eq!(
            warned(&c),
            [
                "Block_PR_Cycles_Limit",
                "Suspend_Program_time",
                "Enabled_Preconditioning",
                "Dynamic_Wearleveling_Enabled",
                "Static_Wearleveling_Enabled",
                "Suspend_Program_Time",
            ],
            "{:#?}",
            c.import_warnings
        );
        let w = &c.import_warnings;
        assert!(
            w[0].contains("did you mean Block_PE_Cycles_Limit?"),
            "{}",
            w[0]
        );
        assert!(
            w[1].contains("did you mean Suspend_Program_Time?"),
            "{}",
            w[1]
        );
        assert!(
            w[5].contains("not in the file") && w[5].contains("100000"),
            "{}",
            w[5]
        );
        // 0.xml's CSB latencies are 0: unused by MLC, as in MQSim.
        assert_eq!(c.flash.read_ns, [59975, 104956]);
        let mut want = SsdConfig::load("intel750").unwrap();
        // The preset keeps MQSim's queue defaults on purpose (presets/intel750.toml: AutoBlox's
        // IO_Queue_Depth 4 leaves at most 3 requests in flight).
        assert_eq!((c.host.queue_depth, c.host.fetch_size), (4, 4));
        assert_eq!((want.host.queue_depth, want.host.fetch_size), (1024, 512));
        want.host.queue_depth = 4;
        want.host.fetch_size = 4;
        c.name = want.name.clone();
        c.description = want.description.clone();
        c.import_warnings.clear();
        assert_eq!(c, want);
    }

    #[test]
    fn an_unknown_element_is_warned_with_its_line() {
        let device = with(SHIPPED_DEVICE, &[("Flash_Chanel_Count", "4")]);
        let text = xml(SHIPPED_HOST, &device, SHIPPED_FLASH);
        let c = parse(&text, "x.xml").unwrap();
        let w = c
            .import_warnings
            .iter()
            .find(|w| w.starts_with("Flash_Chanel_Count"))
            .expect("warned");
        let at = format!("(line {})", line_of(&text, "Flash_Chanel_Count"));
        assert!(
            w.contains(&at) && w.contains("did you mean Flash_Channel_Count?"),
            "{w}"
        );
        assert_eq!(c.flash.channels, 8, "not applied");
    }

    #[test]
    fn an_omitted_element_takes_mqsims_value_and_is_warned() {
        let host: Vec<_> = SHIPPED_HOST
            .iter()
            .copied()
            .filter(|(k, _)| *k != "PCIe_Lane_Bandwidth")
            .collect();
        let c = parse(&xml(&host, SHIPPED_DEVICE, SHIPPED_FLASH), "x.xml").unwrap();
        assert_eq!(c.host.pcie_lane_gbps, 0.4);
        assert!(c.import_warnings[0].starts_with("PCIe_Lane_Bandwidth (not in the file)"));
    }

    #[test]
    fn malformed_xml_is_one_error_with_its_position() {
        let text = xml(SHIPPED_HOST, SHIPPED_DEVICE, SHIPPED_FLASH).replace("</Page_Capacity>", "");
        let e = field(parse(&text, "bad.xml").unwrap_err());
        assert!(
            e.starts_with("bad.xml: not well-formed XML") && e.contains("Page_Capacity"),
            "{e}"
        );
    }

    #[test]
    fn bad_values_name_the_element_and_line() {
        for (over, flash, want) in [
            (("Flash_Channel_Count", "0"), false, "0; must be at least 1"),
            (
                ("Block_No_Per_Plane", "many"),
                true,
                "'many' is not a whole number",
            ),
            (
                ("Page_Capacity", "3000"),
                true,
                "3000; must be a power of two",
            ),
            (
                ("Overprovisioning_Ratio", "1.5"),
                false,
                "1.5; must be a fraction",
            ),
            (
                ("GC_Exec_Threshold", "x"),
                false,
                "'x' is not a finite number",
            ),
            (
                ("Ideal_Mapping_Table", "0"),
                false,
                "'0' is not true or false",
            ),
            (
                ("Flash_Technology", "QLC"),
                true,
                "'QLC' is not one of SLC, MLC, TLC",
            ),
            (
                ("Address_Mapping", "HYBRID"),
                false,
                "HYBRID: MQSim's hybrid",
            ),
            (("Plane_Allocation_Scheme", "CWDX"), false, "'CWDX': 'X'"),
        ] {
            let device = with(
                SHIPPED_DEVICE,
                if flash {
                    &[]
                } else {
                    std::slice::from_ref(&over)
                },
            );
            let fl = with(
                SHIPPED_FLASH,
                if flash {
                    std::slice::from_ref(&over)
                } else {
                    &[]
                },
            );
            let text = xml(SHIPPED_HOST, &device, &fl);
            let e = field(parse(&text, "bad.xml").unwrap_err());
            let want = format!("bad.xml:{}: <{}>: {want}", line_of(&text, over.0), over.0);
            assert!(e.starts_with(&want), "{over:?}: {e}");
        }
    }

    #[test]
    fn missing_geometry_duplicates_and_workload_files_are_errors() {
        let flash: Vec<_> = SHIPPED_FLASH
            .iter()
            .copied()
            .filter(|(k, _)| *k != "Die_No_Per_Chip")
            .collect();
        let e = field(parse(&xml(SHIPPED_HOST, SHIPPED_DEVICE, &flash), "x.xml").unwrap_err());
        assert!(
            e.starts_with("x.xml: <Die_No_Per_Chip>: missing from <Flash_Parameter_Set>"),
            "{e}"
        );
        let mut device = SHIPPED_DEVICE.to_vec();
        device.push(("CMT_Capacity", "1"));
        let text = xml(SHIPPED_HOST, &device, SHIPPED_FLASH);
        let e = field(parse(&text, "x.xml").unwrap_err());
        let first = line_of(&text, "CMT_Capacity");
        assert!(
            e.contains(&format!(
                "<CMT_Capacity>: given twice (first on line {first})"
            )),
            "{e}"
        );
        let e = field(parse("<MQSim_IO_Scenarios/>", "w.xml").unwrap_err());
        assert!(
            e.contains("w.xml:1: <MQSim_IO_Scenarios>") && e.contains("workload file"),
            "{e}"
        );
        let e = field(parse("<Execution_Parameter_Set/>", "e.xml").unwrap_err());
        assert!(e.contains("<Device_Parameter_Set>: missing"), "{e}");
    }

    #[test]
    fn what_mqsim_would_run_differently_is_warned() {
        let device = with(
            SHIPPED_DEVICE,
            &[
                ("Channel_Transfer_Rate", "400"),
                ("Data_Cache_Capacity", "5368709120"),
            ],
        );
        let flash = with(
            SHIPPED_FLASH,
            &[("Plane_No_Per_Die", "8"), ("Block_No_Per_Plane", "64")],
        );
        let c = parse(&xml(SHIPPED_HOST, &device, &flash), "x.xml").unwrap();
        let all = c.import_warnings.join("\n");
        assert!(all.contains("MQSim would move data at 500 MT/s"), "{all}");
        assert!(all.contains("would run with 1073741824 bytes"), "{all}");
        assert!(all.contains("8 planes"), "{all}");
        assert_eq!(
            (c.flash.channel_rate_mts, c.cache.capacity_mib),
            (400.0, 5120.0)
        );
    }

    #[test]
    fn the_imported_preset_loads_back_to_the_same_config() {
        let dir = std::env::temp_dir().join(format!("wafer-mqsim-xml-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let x = dir.join("my-drive.xml");
        let xml_text = autoblox();
        std::fs::write(&x, &xml_text).unwrap();
        let c = SsdConfig::load(x.to_str().unwrap()).unwrap();
        assert_eq!(c.name, "my-drive");
        let text = to_preset_toml(&c, x.to_str().unwrap()).unwrap();
        let at = line_of(&xml_text, "Enabled_Preconditioning");
        assert!(
            text.contains(&format!("# * Enabled_Preconditioning (line {at})")),
            "{text}"
        );
        let t = dir.join("my-drive.toml");
        std::fs::write(&t, &text).unwrap();
        assert_eq!(SsdConfig::load(t.to_str().unwrap()).unwrap(), c);
        let e = field(SsdConfig::load(dir.join("absent.xml").to_str().unwrap()).unwrap_err());
        assert!(e.contains("cannot read") && e.contains("absent.xml"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn docs_hold_the_mapping_table() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/FIDELITY.md");
        let doc = std::fs::read_to_string(path).unwrap();
        let table = mapping_table();
        assert!(
            doc.contains(&table),
            "docs/FIDELITY.md lacks the current table:\n{table}"
        );
    }

    #[test]
    fn every_element_cites_mqsims_reader() {
        for e in ELEMENTS {
            let (file, line) = e.reads.split_once(':').expect(e.name);
            assert!(
                file.starts_with("exec/") && file.ends_with("_Parameter_Set.cpp"),
                "{}",
                e.name
            );
            assert!(
                line.split(' ').next().unwrap().parse::<u32>().is_ok(),
                "{}",
                e.name
            );
            assert!(!e.key.is_empty() && !e.unit.is_empty(), "{}", e.name);
        }
    }
}
