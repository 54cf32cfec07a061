//! Timing mode: closed forms, bounds, invariants, determinism, and the
//! latency cost of GC.

use wafer_core::timing::config::{CacheMode, SsdConfig, Suspend, Technology};
use wafer_core::timing::{Arrival, TimingResult, TimingRun};
use wafer_core::{DeviceConfig, RunConfig, Simulation};

use super::Scratch;

/// A small SLC drive: 2 channels x 2 chips x 2 dies, one plane, 64 blocks
/// of 64 4-KiB pages per plane; no cache, the whole mapping table in DRAM.
pub(super) fn tiny() -> SsdConfig {
    let mut s = SsdConfig {
        name: "tiny".into(),
        ..Default::default()
    };
    let f = &mut s.flash;
    f.technology = Technology::Slc;
    f.channels = 2;
    f.chips_per_channel = 2;
    f.dies_per_chip = 2;
    f.planes_per_die = 1;
    f.blocks_per_plane = 64;
    f.pages_per_block = 64;
    f.page_bytes = 4096;
    f.read_ns = vec![50_000];
    f.program_ns = vec![500_000];
    f.erase_ns = 2_000_000;
    f.suspend = Suspend::None;
    s.cache.mode = CacheMode::Off;
    s.mapping.ideal = true;
    s.gc.preemptible = true;
    s
}

fn run_with(
    ssd: SsdConfig,
    arrival: Arrival,
    qd: u32,
    device: DeviceConfig,
    workload: &str,
    writes: u64,
) -> RunConfig {
    RunConfig {
        device,
        workload: workload.into(),
        writes,
        timing: Some(TimingRun {
            ssd,
            arrival,
            queue_depth: qd,
            // The device these tests give (the whole-drive default has
            // tests of its own below).
            fit_device: true,
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn timed(cfg: RunConfig) -> TimingResult {
    let mut sim = Simulation::new(cfg).expect("valid config");
    sim.run().expect("run completes");
    sim.engine().check().expect("FTL invariants hold");
    let t = sim.result().timing.expect("a timing result");
    assert_eq!(t.invariant_violations, 0, "invariant violations");
    assert_eq!(t.arrived, t.requests, "every request completes");
    t
}

/// An MSR trace of (time [ns], op, offset, size) records.
fn msr(d: &Scratch, rows: &[(u64, &str, u64, u64)]) -> String {
    let text: String = rows
        .iter()
        .map(|(t, op, off, size)| {
            format!(
                "{},hm,0,{op},{off},{size},1\n",
                128166372003061629 + t / 100
            )
        })
        .collect();
    d.file("trace.csv", text)
}

fn trace_run(ssd: SsdConfig, path: &str, logical: u64) -> RunConfig {
    let mut cfg = run_with(
        ssd,
        Arrival::Trace,
        1,
        DeviceConfig {
            logical_blocks: logical,
            op: 0.25,
            ..Default::default()
        },
        "",
        u64::MAX / 2,
    );
    cfg.trace = Some(wafer_core::run::TraceConfig {
        path: path.into(),
        format: Some("msr".into()),
        ..Default::default()
    });
    // Filled in order, no overwrites: a sequential layout.
    cfg.timing.as_mut().unwrap().precondition_drive_writes = Some(1.0);
    cfg
}

/// `cfg` on the preset's whole drive: no size of its own (the engine
/// refuses one the whole drive would overwrite).
fn on_whole_drive(cfg: &mut RunConfig) {
    cfg.timing.as_mut().unwrap().fit_device = false;
    cfg.device.logical_blocks = DeviceConfig::default().logical_blocks;
    cfg.device.physical_blocks = None;
}

/// PCIe time of a payload on x4 at 1 GB/s: TLPs of 128 B + 28 B overhead.
fn pcie(payload: u64) -> u64 {
    let wire = payload / 128 * 156
        + if !payload.is_multiple_of(128) {
            payload % 128 + 28
        } else {
            0
        };
    wire.div_ceil(4)
}

#[test]
fn a_single_read_on_an_idle_device_is_pcie_command_tr_and_transfer() {
    let d = Scratch::new("timing-read");
    let path = msr(&d, &[(0, "Read", 0, 4096)]);
    let t = timed(trace_run(tiny(), &path, 16384));
    assert_eq!(t.reads, 1);
    // doorbell (4 B) + SQE fetch request (32 B / 4 lanes) + SQE (64 B)
    let submit = pcie(4) + 8 + pcie(64);
    // read command (290 ns) + tR (50 us) + R/B (20 ns) + 4 KiB at 333 MT/s x 1 B
    let flash = 290 + 50_000 + 20 + (4096.0f64 * 1000.0 / 333.0).round() as u64;
    // data to the host + CQE
    let back = pcie(4096) + pcie(16);
    let want = (submit + flash + back) as f64 / 1e3;
    let got = t.read_latency.device;
    assert_eq!(got.count, 1);
    assert!(
        (got.min - want).abs() < 1e-9 && (got.max - want).abs() < 1e-9,
        "{got:?} vs {want} us"
    );
    assert_eq!(t.read_latency.end_to_end.max, got.max);
    assert_eq!(pcie(4096), 1248);
}

#[test]
fn sequential_reads_are_bounded_by_channels_width_and_rate() {
    let d = Scratch::new("timing-seq");
    let mut ssd = tiny();
    ssd.flash.read_ns = vec![5_000];
    let rows: Vec<_> = (0..3000u64)
        .map(|i| (i, "Read", (i * 32768) % (16384 * 4096), 32768))
        .collect();
    let path = msr(&d, &rows);
    let mut cfg = trace_run(ssd, &path, 16384);
    let t0 = cfg.timing.as_mut().unwrap();
    t0.arrival = Arrival::Closed;
    t0.queue_depth = 64;
    let t = timed(cfg);
    let bound = 2.0 * 1.0 * 333e6; // channels x width [B] x rate [T/s]
    let bw = t.throughput.read_bandwidth_bytes_per_s;
    assert!(bw <= bound, "{bw} > {bound}");
    assert!(
        bw >= 0.9 * bound,
        "{bw} well below the channel bound {bound}"
    );
    assert!(t.utilisation.channel_mean > 0.9 && t.utilisation.channel_max <= 1.0 + 1e-9);
}

/// Random writes at QD 256 on `tiny` with fast reads and a fast channel:
/// programs are the bottleneck.
fn program_bound() -> RunConfig {
    let mut ssd = tiny();
    ssd.flash.read_ns = vec![1_000];
    ssd.flash.channel_rate_mts = 1000.0;
    ssd.flash.channel_width_bytes = 8;
    let dev = DeviceConfig {
        logical_blocks: 16384,
        op: 0.25,
        ..Default::default()
    };
    run_with(ssd, Arrival::Closed, 256, dev, "uniform", 3 * 16384)
}

#[test]
fn random_write_iops_are_bounded_by_dies_over_tprog() {
    let t = timed(program_bound());
    let bound = 8.0 / 500e-6; // dies / tPROG
    let programs = t.flash.user_programs + t.flash.gc_programs;
    let rate = programs as f64 / t.simulated_seconds;
    assert!(
        t.throughput.write_iops <= bound,
        "{} > {bound}",
        t.throughput.write_iops
    );
    assert!(rate <= bound * 1.0001, "{rate} programs/s > {bound}");
    assert!(
        rate >= 0.85 * bound,
        "{rate} programs/s: dies not kept busy ({bound})"
    );
    assert!(t.utilisation.die_max <= 1.0 + 1e-9 && t.utilisation.die_mean > 0.9);
    assert!(t.flash.gc_programs > 0 && t.flash.erases > 0);
}

/// `--setup mqsim`: a chip takes a command only when it is idle, so its two
/// dies program one at a time: flash programs are bounded by chips / tPROG
/// (half the die bound above) and still keep every chip busy.
#[test]
fn under_mqsim_a_chip_programs_one_die_at_a_time() {
    let mut cfg = program_bound();
    cfg.setup = wafer_core::Setup::Mqsim;
    let t = timed(cfg.clone());
    let bound = 4.0 / 500e-6; // chips / tPROG
    let rate = (t.flash.user_programs + t.flash.gc_programs) as f64 / t.simulated_seconds;
    assert!(rate <= bound * 1.0001, "{rate} programs/s > {bound}");
    assert!(
        rate >= 0.85 * bound,
        "{rate} programs/s: chips not kept busy ({bound})"
    );
    assert!(t.utilisation.die_mean < 0.55, "{}", t.utilisation.die_mean);
    // Without a timing device the setup is refused, naming it.
    cfg.timing = None;
    let e = Simulation::new(cfg).err().expect("refused");
    assert!(e.to_string().contains("setup"), "{e}");
}

/// `--setup mqsim`: a page's first write in each second goes to flash at
/// once (MQSim's cold-write window); a rewrite in the same second stays in
/// the cache; after the window it is cold again.
#[test]
fn under_mqsim_a_first_write_in_each_second_goes_to_flash() {
    let d = Scratch::new("timing-cold");
    // 100 pages at t < 1 s, the same again at t < 1 s, then at t > 2 s.
    let mut rows: Vec<_> = (0..100u64)
        .map(|i| (i * 1000, "Write", i * 4096, 4096))
        .collect();
    rows.extend((0..100u64).map(|i| (200_000 + i * 1000, "Write", i * 4096, 4096)));
    rows.extend((0..100u64).map(|i| (2_000_000_000 + i * 1000, "Write", i * 4096, 4096)));
    let mut cfg = trace_run(cached(1024), &msr(&d, &rows), 16384);
    cfg.timing.as_mut().unwrap().precondition_drive_writes = Some(1.0);
    cfg.timing.as_mut().unwrap().flush = false;
    cfg.setup = wafer_core::Setup::Mqsim;
    let t = timed(cfg.clone());
    // The first 100 and the last 100 (a new window) reached flash; the
    // rewrites in the first second stayed in DRAM.
    assert_eq!(t.flash.user_programs, 200, "{:?}", t.flash);
    assert_eq!(t.cache.dirty_pages_at_end, 0);
    // wafer's own rule: mapped pages stay in the cache.
    cfg.setup = wafer_core::Setup::Wafer;
    let t = timed(cfg);
    assert_eq!(t.flash.user_programs, 0);
    assert_eq!(t.cache.dirty_pages_at_end, 100);
}

#[test]
fn an_idle_device_draws_idle_power() {
    let d = Scratch::new("timing-idle");
    let path = msr(
        &d,
        &[(0, "Read", 0, 4096), (1_000_000_000, "Read", 4096, 4096)],
    );
    let mut ssd = tiny();
    let e = &mut ssd.energy;
    (
        e.read_nj_per_bit,
        e.program_nj_per_bit,
        e.erase_nj_per_bit,
        e.dram_mw,
        e.controller_mw,
    ) = (0.0, 0.0, 0.0, 0.0, 0.0);
    let t = timed(trace_run(ssd, &path, 16384));
    let chips = 4.0;
    let want = chips * 12.7e-3 * t.simulated_seconds;
    let got = t.energy.total_j;
    assert!(t.simulated_seconds > 1.0);
    assert!((got - want).abs() / want < 1e-3, "{got} J vs {want} J");
    assert!((t.energy.average_power_w - chips * 12.7e-3).abs() < 1e-4);
    assert_eq!(
        t.idle_periods, 1,
        "the 1 s gap is an idle period the policy hears of"
    );
}

#[test]
fn energy_adds_up_by_component() {
    let dev = DeviceConfig {
        logical_blocks: 16384,
        op: 0.25,
        ..Default::default()
    };
    let t = timed(run_with(
        tiny(),
        Arrival::Closed,
        8,
        dev,
        "uniform,reads=0.3",
        2 * 16384,
    ));
    let e = t.energy;
    let sum = e.flash_read_j
        + e.flash_program_j
        + e.flash_erase_j
        + e.flash_idle_j
        + e.channel_j
        + e.dram_j
        + e.controller_j;
    assert!((sum - e.total_j).abs() < 1e-9 * e.total_j);
    let programs = (t.flash.user_programs + t.flash.gc_programs) as f64;
    assert!(
        (e.flash_program_j - programs * 4096.0 * 8.0 * 3.31e-9).abs() < 1e-6 * e.flash_program_j
    );
    assert!((e.controller_j - 2.0 * t.simulated_seconds).abs() < 1e-9);
}

/// Everything on: 2 planes (multi-plane), suspension, a read-write cache,
/// a small mapping table (misses, write backs, translation-log cleaning),
/// partial pages, GC.
fn busy() -> SsdConfig {
    let mut s = tiny();
    s.flash.technology = Technology::Mlc;
    s.flash.read_ns = vec![40_000, 80_000];
    s.flash.program_ns = vec![200_000, 1_200_000];
    s.flash.planes_per_die = 2;
    s.flash.blocks_per_plane = 32;
    s.flash.suspend = Suspend::ProgramErase;
    s.flash.suspend_program_for_read_ns = 50_000;
    s.flash.suspend_erase_for_read_ns = 50_000;
    s.flash.suspend_erase_for_write_ns = 50_000;
    s.cache.mode = CacheMode::ReadWrite;
    s.cache.capacity_mib = 1.0;
    s.mapping.ideal = false;
    s.mapping.cmt_mib = 0.01;
    s
}

#[test]
fn invariants_hold_with_everything_on() {
    let dev = DeviceConfig {
        logical_blocks: 16384,
        op: 0.25,
        ..Default::default()
    };
    let t = timed(run_with(
        busy(),
        Arrival::Trace,
        1,
        dev,
        "uniform,reads=0.4,size=1-8,iops=4000",
        3 * 16384,
    ));
    let f = &t.flash;
    assert!(f.multiplane_batches > 0, "{f:?}");
    assert!(f.suspended_programs + f.suspended_erases > 0, "{f:?}");
    assert!(f.mapping_programs > 0 && f.mapping_reads > 0, "{f:?}");
    assert!(t.hits.cmt_misses > 0 && t.hits.cache_read_hits > 0);
    assert!(f.gc_programs > 0 && f.erases > 0);
    let w = t.waf_with_mapping.unwrap();
    assert!(w > 1.0);
    assert!(t.utilisation.die_max <= 1.0 + 1e-9 && t.utilisation.channel_max <= 1.0 + 1e-9);
    assert!(t.read_latency.device.p99 >= t.read_latency.device.p50);
    assert!(t.read_latency.end_to_end.mean >= t.read_latency.device.mean - 1e-9);
    assert!(!t.windows.is_empty());
}

#[test]
fn partial_pages_are_read_modified_written() {
    let d = Scratch::new("timing-rmw");
    let rows: Vec<_> = (0..200u64)
        .map(|i| (i * 1_000_000, "Write", i * 4096 * 3 + 1024, 2048))
        .collect();
    let path = msr(&d, &rows);
    let t = timed(trace_run(tiny(), &path, 16384));
    assert_eq!(t.flash.rmw_reads, 200);
    // each write waits for the old page's read before its program
    assert!(t.write_latency.device.min > (50_000 + 500_000) as f64 / 1e3);
}

#[test]
fn timed_runs_are_deterministic() {
    let dev = DeviceConfig {
        logical_blocks: 16384,
        op: 0.25,
        ..Default::default()
    };
    let cfg = run_with(
        busy(),
        Arrival::Closed,
        16,
        dev,
        "zipf:1.0,reads=0.3,size=1-4",
        2 * 16384,
    );
    let strip = |t: TimingResult| {
        let mut v = serde_json::to_value(t).unwrap();
        for k in [
            "precondition_seconds",
            "requests_per_wall_second",
            "flash_ops_per_wall_second",
            "wall_seconds",
        ] {
            v.as_object_mut().unwrap().remove(k);
        }
        v
    };
    assert_eq!(strip(timed(cfg.clone())), strip(timed(cfg)));
}

#[test]
fn gc_raises_the_write_tail() {
    // Same device and load; sequential overwrites never copy (WAF 1),
    // uniform random writes do: their p99 write latency is higher.
    let dev = DeviceConfig {
        logical_blocks: 16384,
        op: 0.15,
        ..Default::default()
    };
    let seq = timed(run_with(
        tiny(),
        Arrival::Closed,
        16,
        dev.clone(),
        "seq",
        4 * 16384,
    ));
    let rnd = timed(run_with(
        tiny(),
        Arrival::Closed,
        16,
        dev,
        "uniform",
        4 * 16384,
    ));
    let waf = |t: &TimingResult| t.waf_with_mapping.unwrap();
    assert!(
        waf(&seq) < 1.05 && waf(&rnd) > 1.5,
        "{} {}",
        waf(&seq),
        waf(&rnd)
    );
    assert!(
        rnd.write_latency.device.p99 > 1.5 * seq.write_latency.device.p99,
        "p99 {} vs {}",
        rnd.write_latency.device.p99,
        seq.write_latency.device.p99
    );
}

#[test]
fn waf_mode_results_do_not_change_with_timing_code_present() {
    // The engine records nothing without a timing model: no flash log.
    let mut sim = Simulation::new(RunConfig {
        device: DeviceConfig {
            logical_blocks: 4096,
            segment_blocks: 64,
            ..Default::default()
        },
        writes: 4 * 4096,
        ..Default::default()
    })
    .unwrap();
    sim.run().unwrap();
    assert!(sim.result().timing.is_none());
}

#[test]
fn presets_run_on_a_small_device() {
    for name in ["intel750", "mqsim-default", "femu", "850pro", "zssd"] {
        let ssd = SsdConfig::load(name).unwrap();
        let op = ssd.flash.overprovisioning / (1.0 - ssd.flash.overprovisioning);
        let logical = 1u64 << 17;
        let dev = DeviceConfig {
            logical_blocks: logical,
            op,
            ..Default::default()
        };
        let t = timed(run_with(
            ssd,
            Arrival::Closed,
            32,
            dev,
            "uniform,reads=0.5",
            logical + logical / 4,
        ));
        assert!(
            t.requests > 0 && t.throughput.iops > 0.0,
            "{name}: {} requests, precondition {}",
            t.requests,
            t.precondition_writes
        );
    }
}

/// With little spare space the FTL refills a segment whose erase still waits
/// for the reads that moved its data out; the programs parked behind that
/// erase must not hold it back (they did: the run stalled for ever).
#[test]
fn a_nearly_full_device_does_not_stall_behind_its_own_erases() {
    let name = "femu";
    let ssd = SsdConfig::load(name).unwrap();
    let op = ssd.flash.overprovisioning / (1.0 - ssd.flash.overprovisioning);
    let logical = 1u64 << 14;
    let dev = DeviceConfig {
        logical_blocks: logical,
        op,
        segment_blocks: 256,
        ..Default::default()
    };
    let mut sim = Simulation::new(run_with(
        ssd,
        Arrival::Closed,
        8,
        dev,
        "uniform",
        2 * logical,
    ))
    .unwrap();
    // Stepped in chunks, as the Python binding does.
    let mut steps = 0;
    while !sim.step(1 << 12).expect("no stall") {
        steps += 1;
        assert!(
            steps < 1000,
            "{name}: no progress at {} writes",
            sim.written()
        );
    }
    sim.engine().check().unwrap();
    let t = sim.result().timing.unwrap();
    assert_eq!(t.requests, t.arrived, "{name}");
    assert_eq!(t.invariant_violations, 0, "{name}");
    assert!(t.flash.erases > 0, "{name}: GC ran");
}

/// A drive whose mapping table misses: `tiny` with a cached mapping table of
/// `entries` 8-byte entries and 4 KiB translation pages of 512 entries.
fn dftl(entries: u32) -> SsdConfig {
    let mut s = tiny();
    s.mapping.ideal = false;
    s.mapping.entry_bytes = 8;
    s.mapping.translation_entry_bytes = 8;
    s.mapping.cmt_mib = entries as f64 * 8.0 / 1048576.0;
    s
}

/// `--setup mqsim`'s CMT accounting: on a fresh drive a miss reads its
/// translation page (they all exist from the start; wafer's do not yet),
/// write-backs are never programmed, and misses on a page written back read
/// nothing (so far fewer mapping reads than wafer's DFTL).
#[test]
fn under_mqsim_the_cmt_counts_as_mqsim_does() {
    let dev = DeviceConfig {
        logical_blocks: 16384,
        op: 0.25,
        prefill: false,
        ..Default::default()
    };
    let run = |workload: &str, writes: u64, mqsim: bool| {
        let mut cfg = run_with(dftl(256), Arrival::Closed, 4, dev.clone(), workload, writes);
        cfg.timing.as_mut().unwrap().precondition_drive_writes = Some(0.0);
        if mqsim {
            cfg.setup = wafer_core::Setup::Mqsim;
        }
        timed(cfg)
    };
    // The first writes of a fresh drive (fewer than the table holds):
    // wafer has no translation page to read yet, MQSim reads one per miss.
    let (ours, theirs) = (run("uniform", 200, false), run("uniform", 200, true));
    assert_eq!(ours.flash.mapping_reads, 0);
    assert!(theirs.flash.mapping_reads > 20, "{:?}", theirs.flash);
    // Random writes: write-backs happen, none is programmed, and the
    // departing pages' misses are free.
    let (ours, theirs) = (run("uniform", 16384, false), run("uniform", 16384, true));
    let f = &theirs.flash;
    assert!(f.mapping_write_backs > 0, "{f:?}");
    assert_eq!(f.mapping_programs, 0, "write-backs are never programmed");
    assert!(ours.flash.mapping_programs > 0);
    assert!(
        f.mapping_reads < ours.flash.mapping_reads,
        "{} vs {}",
        f.mapping_reads,
        ours.flash.mapping_reads
    );
}

#[test]
fn a_write_back_carries_every_dirty_entry_of_its_translation_page() {
    // Sequential writes dirty whole translation pages in the cached table
    // before their first entry is evicted: one program per page carries
    // all of its entries (DFTL's batching), not one per evicted entry.
    let dev = DeviceConfig {
        logical_blocks: 16384,
        op: 0.25,
        prefill: false,
        ..Default::default()
    };
    let mut cfg = run_with(dftl(2048), Arrival::Closed, 4, dev, "seq", 4 * 16384);
    cfg.timing.as_mut().unwrap().precondition_drive_writes = Some(0.0);
    let t = timed(cfg);
    let f = &t.flash;
    let per_page = 4096 / 8;
    assert!(f.mapping_write_backs > 0, "{f:?}");
    assert_eq!(
        f.mapping_programs,
        f.mapping_write_backs + f.mapping_cleaning_moves
    );
    // Every translation program (write-backs and the translation blocks'
    // own cleaning) within 10% of one per translation page of dirty
    // entries evicted (issue 43 item 7).
    let bound = f.mapping_entries_written_back as f64 / per_page as f64 * 1.1;
    assert!(
        (f.mapping_programs as f64) <= bound,
        "{} translation programs ({} write-backs, {} cleaning moves) for {} entries ({per_page} per page)",
        f.mapping_programs,
        f.mapping_write_backs,
        f.mapping_cleaning_moves,
        f.mapping_entries_written_back
    );
}

#[test]
fn concurrent_misses_to_one_translation_page_share_its_read() {
    // Random reads (1% writes, to end the run) at queue depth 32 over 2
    // translation pages' worth of blocks, with a table of 64 entries:
    // misses to the same page overlap and wait for one read together.
    let dev = DeviceConfig {
        logical_blocks: 16384,
        op: 0.25,
        ..Default::default()
    };
    let mut cfg = run_with(
        dftl(64),
        Arrival::Closed,
        32,
        dev,
        "uniform,reads=0.99,region=0.0625",
        50,
    );
    cfg.timing.as_mut().unwrap().precondition_drive_writes = Some(1.0);
    let t = timed(cfg);
    assert!(t.hits.cmt_merged_misses > 0, "{:?}", t.hits);
    // Every miss reads its page or joins a read in flight; the other
    // translation reads merge a write-back or move a page in cleaning.
    let f = &t.flash;
    let own_reads = t.hits.cmt_misses - t.hits.cmt_merged_misses;
    assert!(f.mapping_reads >= own_reads, "{f:?} {:?}", t.hits);
    assert!(
        f.mapping_reads <= own_reads + f.mapping_write_backs + f.mapping_cleaning_moves,
        "{f:?} {:?}",
        t.hits
    );
}

#[test]
fn the_translation_area_is_cleaned_without_stalling_writes() {
    // A small translation area (1.5 x the translation pages) that random
    // writes rewrite many times over: cleaning moves pages all along, yet
    // no write waits behind a whole row's clean.
    let dev = DeviceConfig {
        logical_blocks: 65536,
        op: 1.0,
        ..Default::default()
    };
    let mut ssd = dftl(1024);
    ssd.flash.blocks_per_plane = 256;
    ssd.mapping.translation_area_factor = 1.5;
    let mut cfg = run_with(ssd, Arrival::Closed, 8, dev, "uniform", 3 * 65536);
    cfg.timing.as_mut().unwrap().precondition_drive_writes = Some(1.0);
    let t = timed(cfg);
    let f = &t.flash;
    assert!(f.mapping_cleaning_moves > 0, "{f:?}");
    // A row cleaned at once queues tens of translation reads and programs
    // ahead of a write (measured: max 25.6 ms, p99.9 10.9 ms); incremental
    // cleaning keeps the worst write within a few program times (4.9 ms,
    // 3.6 ms). Twice the space keeps data GC's own stalls out of the way.
    let w = &t.write_latency.device;
    assert!(
        w.max < 12_000.0 && w.p999 < 6_000.0,
        "write latency {w:?} us"
    );
}

/// `tiny` as a whole drive: 20% over-provisioning (its 64 superblocks
/// need room for GC's reserve and the open ones).
fn tiny_whole() -> SsdConfig {
    let mut s = tiny();
    s.flash.overprovisioning = 0.2;
    s
}

/// `tiny_whole` as MLC (LSB 0.5 ms, MSB 1.5 ms programs).
fn tiny_mlc() -> SsdConfig {
    let mut s = tiny_whole();
    s.flash.technology = Technology::Mlc;
    s.flash.read_ns = vec![50_000, 80_000];
    s.flash.program_ns = vec![500_000, 1_500_000];
    s
}

/// A run of `workload` on `ssd` with every default of a timed run (the
/// preset's whole drive, its preconditioning).
fn whole(ssd: SsdConfig, workload: &str, writes: u64) -> RunConfig {
    RunConfig {
        workload: workload.into(),
        writes,
        timing: Some(TimingRun {
            ssd,
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn lsb_share(t: &TimingResult) -> f64 {
    let p = &t.flash.programs_by_page_type;
    p[0] as f64 / p.iter().sum::<u64>() as f64
}

#[test]
fn a_timed_run_uses_the_preset_whole_drive_by_default() {
    let ssd = tiny_mlc();
    let raw = ssd.raw_pages();
    let mut sim = Simulation::new(whole(ssd.clone(), "uniform", 20_000)).expect("valid");
    sim.run().expect("runs");
    let r = sim.result();
    let geo = &r.geometry;
    assert_eq!(geo.physical_blocks, raw);
    assert_eq!(
        geo.logical_blocks as u64,
        (raw as f64 * (1.0 - ssd.flash.overprovisioning)).floor() as u64
    );
    assert_eq!(geo.segment_blocks, ssd.planes() * ssd.flash.pages_per_block);
    let t = r.timing.expect("timed");
    assert!(!t.fit_device);
    assert_eq!(t.slice_pages, ssd.flash.pages_per_block);
    // Whole blocks written row by row: half the programs are LSB (closed
    // form: MLC alternates LSB / MSB rows).
    assert!(
        (lsb_share(&t) - 0.5).abs() < 0.01,
        "{:?}",
        t.flash.programs_by_page_type
    );
    // The preset's preconditioning: the fill and one drive-write.
    assert_eq!(t.precondition_writes, 2 * geo.logical_blocks as u64);
    assert_eq!(t.precondition_workload, "uniform");

    // The same run fitted to 2048 logical pages uses the first rows of
    // each block only: mostly fast LSB pages.
    let mut fitted = whole(ssd, "uniform", 20_000);
    fitted.device.logical_blocks = 2048;
    fitted.timing.as_mut().unwrap().fit_device = true;
    let f = timed(fitted);
    assert!(f.fit_device && f.slice_pages < 64, "{}", f.slice_pages);
    assert!(lsb_share(&f) > 0.5, "{:?}", f.flash.programs_by_page_type);
}

#[test]
fn a_trace_is_placed_inside_the_drive_and_never_preconditions_it() {
    let d = Scratch::new("timing-place");
    let logical = (tiny_whole().raw_pages() as f64 * 0.8) as u64;
    // Writes within the drive's addresses: kept where they are.
    let near: Vec<_> = (0..200u64)
        .map(|i| (i * 1000, "Write", i * 4096 * 7, 4096))
        .collect();
    let mut cfg = trace_run(tiny_whole(), &msr(&d, &near), 0);
    on_whole_drive(&mut cfg);
    let t0 = cfg.timing.as_mut().unwrap();
    t0.precondition_drive_writes = Some(2.0);
    let mut sim = Simulation::new(cfg.clone()).expect("valid");
    sim.run().expect("runs");
    let r = sim.result();
    let tr = r.trace.as_ref().expect("a trace");
    assert!(!tr.remapped);
    assert_eq!(r.geometry.logical_blocks as u64, logical);
    let t = r.timing.expect("timed");
    assert_eq!(t.requests, 200, "every trace request is timed");
    assert_eq!(t.precondition_writes, 2 * logical);
    assert!(t.flash.user_programs >= 200);
    // Addresses beyond the drive, a footprint that fits: remapped.
    let far: Vec<_> = (0..200u64)
        .map(|i| (i * 1000, "Write", (1u64 << 40) + i * 4096, 4096))
        .collect();
    let d2 = Scratch::new("timing-place-far");
    cfg.trace.as_mut().unwrap().path = msr(&d2, &far);
    let mut sim = Simulation::new(cfg).expect("valid");
    sim.run().expect("runs");
    let r = sim.result();
    assert!(r.trace.as_ref().unwrap().remapped);
    assert_eq!(r.timing.unwrap().requests, 200);
}

/// `tiny` with a write cache of `pages` 4 KiB pages.
fn cached(pages: u32) -> SsdConfig {
    let mut s = tiny_whole();
    s.cache.mode = CacheMode::Write;
    s.cache.capacity_mib = pages as f64 * 4096.0 / 1048576.0;
    s
}

#[test]
fn the_end_flush_writes_the_dirty_cache_and_times_it() {
    let d = Scratch::new("timing-flush");
    // 100 distinct pages written, a 256-page cache: nothing is evicted.
    let rows: Vec<_> = (0..100u64)
        .map(|i| (i * 1000, "Write", i * 4096, 4096))
        .collect();
    let path = msr(&d, &rows);
    let mut cfg = trace_run(cached(256), &path, 16384);
    on_whole_drive(&mut cfg);
    let mut sim = Simulation::new(cfg.clone()).expect("valid");
    sim.run().expect("runs");
    let r = sim.result();
    let t = r.timing.as_ref().expect("timed");
    let f = t.flush.expect("flushed");
    assert_eq!(f.pages, 100);
    assert_eq!(f.user_programs, 100);
    assert!(f.seconds > 0.0);
    assert_eq!(t.cache.dirty_pages_at_end, 0);
    assert!(r
        .warnings
        .iter()
        .any(|w| w.code == "writes-stayed-in-cache"));

    cfg.timing.as_mut().unwrap().flush = false;
    let mut sim = Simulation::new(cfg).expect("valid");
    sim.run().expect("runs");
    let r = sim.result();
    let t = r.timing.as_ref().expect("timed");
    assert!(t.flush.is_none());
    assert_eq!(t.cache.dirty_pages_at_end, 100);
    assert_eq!(t.flash.user_programs, 0);
    assert!(r
        .warnings
        .iter()
        .any(|w| w.code == "writes-stayed-in-cache"));
}

/// The preconditioning leaves the cache warm but clean (what it wrote is on
/// flash), so the end's flush and the run's programs are the trace's own;
/// stepping the preconditioning in small steps changes nothing.
#[test]
fn a_preconditioned_cache_is_clean_and_the_flush_holds_only_the_trace() {
    let d = Scratch::new("timing-clean");
    // 100 distinct pages, then 50 of them again: 150 page writes.
    let rows: Vec<_> = (0..150u64)
        .map(|i| (i * 1000, "Write", (i % 100) * 4096 * 3, 4096))
        .collect();
    let mut cfg = trace_run(cached(256), &msr(&d, &rows), 0);
    on_whole_drive(&mut cfg);
    let t0 = cfg.timing.as_mut().unwrap();
    t0.precondition_drive_writes = Some(3.0);
    let mut sim = Simulation::new(cfg.clone()).expect("valid");
    let (done, total) = sim.preconditioning().expect("preconditioning pending");
    assert_eq!(done, 0);
    let logical = sim.engine().ftl.geo.logical_blocks as u64;
    assert_eq!(total, 2 * logical);
    let mut steps = 0;
    while sim.preconditioning().is_some() {
        // The step that ends it goes on with the timed requests.
        sim.step(1000).expect("steps");
        steps += 1;
    }
    assert!(steps >= (2 * logical / 1000) as usize, "{steps} steps");
    sim.run().expect("runs");
    let r = sim.result();
    let t = r.timing.as_ref().expect("timed");
    assert_eq!(t.precondition_writes, 3 * logical);
    let f = t.flush.expect("flushed");
    assert!(f.pages <= 100, "flush of {} pages for 100 written", f.pages);
    assert!(
        t.flash.user_programs <= 150,
        "{} user programs for 150 page writes",
        t.flash.user_programs
    );
    // In one step: the same run.
    let mut whole = Simulation::new(cfg).expect("valid");
    whole.run().expect("runs");
    // Apart from speeds per wall second.
    let same = |r: &wafer_core::RunResult| {
        let mut v = wafer_core::run::checkpoint::comparable(r);
        let t = v["timing"].as_object_mut().expect("timing");
        t.retain(|k, _| !k.ends_with("per_wall_second"));
        v
    };
    assert_eq!(same(&whole.result()), same(&r));
}

/// A preconditioned drive is saved once and loaded by the next run of the
/// same drive and preconditioning, with the same result; a corrupt entry is
/// rebuilt and said; another seed is another entry; an unwritable folder
/// runs without the cache, said.
#[test]
fn a_saved_preconditioning_is_loaded_with_the_same_result() {
    use wafer_core::timing::PreconditionCache;
    let d = Scratch::new("timing-pcache");
    let rows: Vec<_> = (0..300u64)
        .map(|i| {
            (
                i * 1000,
                if i % 3 == 0 { "Read" } else { "Write" },
                (i * 37 % 5000) * 4096,
                4096,
            )
        })
        .collect();
    let mut cfg = trace_run(cached(256), &msr(&d, &rows), 0);
    let dir = format!("{}/pre", d.0.display());
    on_whole_drive(&mut cfg);
    let t0 = cfg.timing.as_mut().unwrap();
    t0.precondition_drive_writes = Some(3.0);
    t0.precondition_cache = PreconditionCache::Dir(dir.clone());
    let run = |cfg: &RunConfig| {
        let mut sim = Simulation::new(cfg.clone()).expect("valid");
        sim.run().expect("runs");
        sim.result()
    };
    let same = |r: &wafer_core::RunResult| {
        let mut v = wafer_core::run::checkpoint::comparable(r);
        let t = v["timing"].as_object_mut().expect("timing");
        t.retain(|k, _| !k.ends_with("per_wall_second") && k != "precondition_cache");
        let w = v["warnings"].as_array_mut().expect("warnings");
        w.retain(|w| w["code"] != "precondition-cache");
        v
    };
    let cache_of = |r: &wafer_core::RunResult| {
        r.timing
            .as_ref()
            .and_then(|t| t.precondition_cache.clone())
            .expect("cached")
    };
    let first = run(&cfg);
    let c1 = cache_of(&first);
    assert!(c1.saved && !c1.loaded && c1.bytes > 0, "{c1:?}");
    let second = run(&cfg);
    let c2 = cache_of(&second);
    assert!(c2.loaded && !c2.saved, "{c2:?}");
    assert_eq!(same(&first), same(&second));
    assert_eq!(
        second.timing.as_ref().unwrap().precondition_writes,
        3 * second.geometry.logical_blocks as u64
    );

    // A flipped byte: refused, rebuilt, said; the same result.
    let path = std::path::PathBuf::from(&c1.path);
    let mut bytes = std::fs::read(&path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();
    let third = run(&cfg);
    let c3 = cache_of(&third);
    assert!(c3.saved && !c3.loaded, "{c3:?}");
    assert!(
        third
            .warnings
            .iter()
            .any(|w| w.code == "precondition-cache" && w.message.contains("rebuilt")),
        "{:?}",
        third.warnings
    );
    assert_eq!(same(&first), same(&third));

    // Another seed: another entry.
    let mut other = cfg.clone();
    other.seed = 2;
    let r = run(&other);
    let c4 = cache_of(&r);
    assert!(c4.saved && c4.path != c1.path, "{c4:?}");

    // A folder that cannot be made: no cache, said; the run completes.
    let file = format!("{}/a-file", d.0.display());
    std::fs::write(&file, b"x").unwrap();
    cfg.timing.as_mut().unwrap().precondition_cache = PreconditionCache::Dir(format!("{file}/pre"));
    let r = run(&cfg);
    assert!(r.warnings.iter().any(|w| w.code == "precondition-cache"));
    assert_eq!(same(&first), same(&r));
}

/// A trace of a real layout (byte offsets, requests of 1-16 pages, reads,
/// idle gaps) replayed with every default of a timed run (the whole drive,
/// its preconditioning, the write cache): its writes reach flash while it
/// runs, not only at the end's flush.
#[test]
fn a_real_layout_trace_on_a_preconditioned_drive_reaches_flash() {
    let d = Scratch::new("timing-real");
    let mut rng = wafer_core::rng::Rng::new(3);
    let mut t = 0u64;
    let rows: Vec<_> = (0..4000u64)
        .map(|i| {
            t += if i % 500 == 0 {
                2_000_000_000
            } else {
                rng.below(200_000)
            };
            let op = if rng.below(10) < 3 { "Read" } else { "Write" };
            let off = rng.below(20_000) * 4096 + if i % 7 == 0 { 512 } else { 0 };
            (t, op, off, (1 + rng.below(16)) * 4096)
        })
        .collect();
    let mut cfg = trace_run(cached(256), &msr(&d, &rows), 0);
    on_whole_drive(&mut cfg);
    let t0 = cfg.timing.as_mut().unwrap();
    t0.precondition_drive_writes = None;
    let r = {
        let mut sim = Simulation::new(cfg).expect("valid");
        sim.run().expect("runs");
        sim.engine().check().expect("FTL invariants hold");
        sim.result()
    };
    let t = r.timing.as_ref().expect("timed");
    assert_eq!(t.invariant_violations, 0);
    assert!(t.precondition_writes >= r.geometry.logical_blocks as u64);
    let during = t.flash.user_programs - t.flush.expect("flushed").user_programs;
    assert!(
        during > 1000,
        "{during} user programs while the requests ran"
    );
    assert!(
        t.flash.rmw_reads > 0,
        "unaligned writes are read-modify-written"
    );
    assert!(!r
        .warnings
        .iter()
        .any(|w| w.code == "writes-stayed-in-cache"));
}

#[test]
fn reads_of_unwritten_pages_are_counted_and_warned() {
    let d = Scratch::new("timing-unmapped");
    let rows: Vec<_> = (0..50u64)
        .map(|i| (i * 1000, "Read", i * 4096, 4096))
        .collect();
    let mut cfg = trace_run(tiny_whole(), &msr(&d, &rows), 16384);
    on_whole_drive(&mut cfg);
    let t0 = cfg.timing.as_mut().unwrap();
    t0.precondition_drive_writes = Some(0.0);
    let mut sim = Simulation::new(cfg.clone()).expect("valid");
    sim.run().expect("runs");
    let r = sim.result();
    assert_eq!(r.timing.as_ref().unwrap().flash.unmapped_reads, 50);
    assert!(r
        .warnings
        .iter()
        .any(|w| w.code == "reads-of-unwritten-pages"));
    // Preconditioned: every page holds data.
    cfg.timing.as_mut().unwrap().precondition_drive_writes = Some(1.0);
    let mut sim = Simulation::new(cfg).expect("valid");
    sim.run().expect("runs");
    let r = sim.result();
    assert_eq!(r.timing.as_ref().unwrap().flash.unmapped_reads, 0);
    assert!(!r
        .warnings
        .iter()
        .any(|w| w.code == "reads-of-unwritten-pages"));
}

#[test]
fn a_fitted_device_smaller_than_its_cache_is_warned() {
    let mut cfg = run_with(
        cached(4096),
        Arrival::Closed,
        4,
        DeviceConfig {
            logical_blocks: 2048,
            op: 0.25,
            ..Default::default()
        },
        "uniform",
        4096,
    );
    cfg.timing.as_mut().unwrap().precondition_drive_writes = Some(1.0);
    let mut sim = Simulation::new(cfg).expect("valid");
    sim.run().expect("runs");
    let r = sim.result();
    assert!(
        r.warnings
            .iter()
            .any(|w| w.code == "device-smaller-than-cache"),
        "{:?}",
        r.warnings
    );
}

#[test]
fn every_preset_runs_as_a_whole_drive() {
    for name in wafer_core::timing::config::PRESETS.iter().map(|p| p.0) {
        let ssd = SsdConfig::load(name).expect("a preset");
        let mut dev = DeviceConfig::default();
        let fit = wafer_core::timing::whole_device(&mut dev, &ssd)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(fit.slice, ssd.flash.pages_per_block, "{name}");
        assert_eq!(dev.physical_blocks, Some(ssd.raw_pages()), "{name}");
    }
}

/// AutoBlox's think time: at queue depth 1 every completion waits
/// `b / window_rate - b / peak_rate` before the next request (4 KiB at 4
/// and 16 bytes/ns: 1024 - 256 = 768 ns), so the run lasts that much
/// longer per request; a window at the peak rate adds nothing.
#[test]
fn the_think_time_follows_the_trace_rate() {
    let dev = DeviceConfig {
        logical_blocks: 4096,
        op: 0.25,
        ..Default::default()
    };
    let run = |think: Option<wafer_core::timing::Think>| {
        let mut cfg = run_with(
            tiny(),
            Arrival::Closed,
            1,
            dev.clone(),
            "uniform,reads=0.5",
            400,
        );
        cfg.timing.as_mut().unwrap().think = think;
        cfg.timing.as_mut().unwrap().precondition_drive_writes = Some(1.0);
        timed(cfg)
    };
    let slow = wafer_core::timing::Think {
        peak_bytes_per_ns: 16.0,
        windows: vec![(0, 4.0)],
    };
    let (plain, thought) = (run(None), run(Some(slow)));
    assert_eq!(plain.requests, thought.requests);
    let added = (thought.simulated_seconds - plain.simulated_seconds) * 1e9;
    let want = (plain.requests - 1) as f64 * 768.0;
    assert!(
        (added - want).abs() < 1e-6 * want + 1.0,
        "added {added} ns, want {want}"
    );
    let at_peak = run(Some(wafer_core::timing::Think {
        peak_bytes_per_ns: 16.0,
        windows: vec![(0, 16.0)],
    }));
    assert_eq!(at_peak.simulated_seconds, plain.simulated_seconds);
}

#[test]
fn a_think_time_is_checked() {
    let t = |peak: f64, windows: Vec<(u64, f64)>| wafer_core::timing::TimingRun {
        ssd: tiny(),
        think: Some(wafer_core::timing::Think {
            peak_bytes_per_ns: peak,
            windows,
        }),
        ..Default::default()
    };
    assert!(t(1.0, vec![(0, 1.0)]).validate().is_ok());
    for bad in [
        t(0.0, vec![(0, 1.0)]),
        t(f64::NAN, vec![(0, 1.0)]),
        t(1.0, vec![]),
        t(1.0, vec![(5, 1.0), (5, 2.0)]),
        t(1.0, vec![(0, -1.0)]),
    ] {
        let e = bad.validate().unwrap_err().to_string();
        assert!(e.contains("timing.think"), "{e}");
    }
    let mut open = t(1.0, vec![(0, 1.0)]);
    open.arrival = Arrival::Trace;
    assert!(open
        .validate()
        .unwrap_err()
        .to_string()
        .contains("closed loop"));
}
