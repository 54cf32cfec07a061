//! Peer parity (issue 14): wafer under `--setup sepbit-replayer` against
//! SepBIT's Java trace replayer on the same small traces, with the
//! replayer's WAFs measured by running it (docs/FIDELITY.md says how) and
//! pinned here, so no Java is needed. The traces are wafer's own seeded
//! workloads written in the Alibaba layout the replayer reads (the lines
//! `wafer traces sample --format alibaba` writes); their FNV-1a hashes are
//! pinned too, so a change of the generator cannot silently move the input
//! away from the one the peer ran. `WAFER_PEER_TRACES=DIR cargo test
//! peers` writes them into DIR for a rerun of the peer.
//!
//! Also here: one test per semantic option that fails if the option stops
//! changing what it should.

use super::Scratch;
use wafer_core::run::multi::{MultiConfig, MultiSimulation};
use wafer_core::source::TraceConfig;
use wafer_core::victim::{CostBenefitClock, CostBenefitConfig, CostBenefitForm};
use wafer_core::{
    workload, DeviceConfig, GarbageAccounting, GcCheck, GcMode, Op, RunConfig, RunResult, Setup,
    Simulation,
};

/// One of the peer-parity inputs: a wafer workload written as a trace.
struct Input {
    /// File name (the replayer names a single-file volume by it).
    file: &'static str,
    spec: &'static str,
    logical_blocks: u64,
    requests: usize,
    seed: u64,
    /// FNV-1a of the file's bytes when the reference numbers were measured.
    fnv: u64,
}

/// Zipf 0.8 single-block writes over 128 MiB (9 drive-writes).
const ZIPF: Input = Input {
    file: "zipf.csv",
    spec: "zipf:0.8",
    logical_blocks: 1 << 15,
    requests: 300_000,
    seed: 1,
    fnv: 0x6f15_d598_0313_7873,
};

/// Variable-size requests (1-16 blocks) with 30% reads on a hot/cold
/// split, as in real block traces (about 11 drive-writes).
const VAR: Input = Input {
    file: "var.csv",
    spec: "hotcold:0.8:0.2,size=1-16,reads=0.3",
    logical_blocks: 1 << 15,
    requests: 60_000,
    seed: 2,
    fnv: 0xf01a_551a_00bc_da17,
};

/// Two tenants (devices 0 and 1) in one file, for the multi-volume run.
const MIX: Input = Input {
    file: "mix.csv",
    spec: "mix:zipf:0.9,size=1-8+hotcold:0.9:0.1,size=1-4",
    logical_blocks: 1 << 15,
    requests: 80_000,
    seed: 3,
    fnv: 0xb931_1611_04d4_5413,
};

/// MiDAS-Simulation's parity input: Zipf 0.8 single-page writes over its
/// 1 GB device (10^9 B = 244,140 pages), about 8 device writes.
const MIDAS: Input = Input {
    file: "midas.txt",
    spec: "zipf:0.8",
    logical_blocks: 244_140,
    requests: 2_000_000,
    seed: 4,
    fnv: 0x8e24_e56e_e016_38ef,
};

/// The trace text of `input` in MiDAS-Simulation's layout (time, type 1
/// write / 0 read, LBA in 4 KiB pages, size in bytes).
fn midas_text(input: &Input) -> String {
    let mut w = workload::parse(input.spec, input.logical_blocks, 4096, input.seed).unwrap();
    let mut out = String::with_capacity(input.requests * 24);
    for _ in 0..input.requests {
        let r = w.next_request();
        let ty = match r.op {
            Op::Write => 1,
            Op::Read => 0,
            Op::Trim => 3,
        };
        out.push_str(&format!(
            "{} {ty} {} {}\n",
            r.time_ns / 1000,
            r.lba,
            r.blocks as u64 * 4096
        ));
    }
    out
}

/// The second kind of parity input (issue 35): a trace in a real trace's
/// layout, as a CloudPhysics / Alibaba volume looks: byte offsets and sizes
/// (a fifth of them 512-byte aligned only, so the 4 KiB blocks round out),
/// multi-block requests of every size, a quarter reads, several requests
/// on one microsecond, and busy periods separated by long idle gaps
/// (seconds to hours). Each volume of `volumes` mixes
/// * small random writes (1-2 blocks) on hot pages: Zipf 0.9 over the
///   first quarter of its space, hot ranks scattered;
/// * medium writes (2-16 blocks) into warm extents of 64 blocks, uniform;
/// * a journal: 16-128-block writes appending through the last eighth of
///   the space, wrapping;
/// * now and then a whole-extent rewrite: 4-16 consecutive 64-block
///   writes (a file copied);
///
/// each volume writing its last block once so the replayer's property file
/// (its maximum offset) covers the space. Deterministic in `seed`.
struct Cloud {
    file: &'static str,
    volumes: u32,
    /// Logical space of each volume [blocks].
    logical_blocks: u64,
    requests: usize,
    seed: u64,
    fnv: u64,
}

/// One volume, about 10 drive-writes.
const CLOUD: Cloud = Cloud {
    file: "cloud.csv",
    volumes: 1,
    logical_blocks: 1 << 15,
    requests: 90_000,
    seed: 7,
    fnv: 0x9d59_bc6a_0354_3125,
};

/// One volume with a small footprint (32 segments of 256 blocks): the
/// open segments' garbage, which the replayer's valid count holds, is a
/// large share of its valid blocks here, as on a real volume.
const CLOUD_SMALL: Cloud = Cloud {
    file: "cloud-small.csv",
    volumes: 1,
    logical_blocks: 1 << 13,
    requests: 30_000,
    seed: 9,
    fnv: 0x7ed8_329a_99a6_1289,
};

/// Three volumes in one file (`--all-devices`), interleaved by time.
const CLOUD3: Cloud = Cloud {
    file: "cloud3.csv",
    volumes: 3,
    logical_blocks: 1 << 14,
    requests: 120_000,
    seed: 8,
    fnv: 0x184e_570b_017a_d4e7,
};

/// The trace text of `c` (Alibaba layout, timestamps in µs).
fn cloud_text(c: &Cloud) -> String {
    use wafer_core::rng::Rng;
    use wafer_core::workload::ZipfSampler;
    const EPOCH_US: u64 = 1_577_808_000_000_000;
    struct Volume {
        rng: Rng,
        clock_us: u64,
        /// Requests left in the current busy period.
        busy: u64,
        journal: u64,
        /// Blocks of an extent copy still to write, and where.
        copy: (u64, u64),
        hot: ZipfSampler,
        wrote_last: bool,
    }
    let n = c.logical_blocks;
    let hot_len = n / 4;
    let journal = (n - n / 8, n / 8);
    let mut vols: Vec<Volume> = (0..c.volumes)
        .map(|v| {
            let mut rng = Rng::derive(c.seed, v as u64);
            let start = rng.below(3_600_000_000);
            Volume {
                clock_us: start,
                busy: 0,
                journal: 0,
                copy: (0, 0),
                hot: ZipfSampler::new(hot_len, 0.9),
                wrote_last: false,
                rng,
            }
        })
        .collect();
    let mut out = String::with_capacity(c.requests * 40);
    for i in 0..c.requests {
        // the volume whose next request comes first (ties: the lowest)
        let v = (0..vols.len()).min_by_key(|&v| vols[v].clock_us).unwrap();
        let vol = &mut vols[v];
        let r = &mut vol.rng;
        let (write, lba, blocks) = if vol.copy.0 > 0 {
            let b = vol.copy.0.min(64);
            let at = vol.copy.1;
            vol.copy = (vol.copy.0 - b, at + b);
            (true, at, b)
        } else if !vol.wrote_last && i * c.volumes as usize > c.requests / 2 {
            vol.wrote_last = true;
            (true, n - 1, 1)
        } else {
            let x = r.next_f64();
            if x < 0.25 {
                (false, r.below(n - 16), 1 + r.below(16))
            } else if x < 0.70 {
                // scatter the hot ranks over the hot quarter
                let rank = vol.hot.sample(r);
                let lba = rank.wrapping_mul(0x9E37_79B9) % hot_len;
                (true, lba, 1 + r.below(2))
            } else if x < 0.92 {
                let extent = hot_len / 64 + r.below((journal.0 - hot_len) / 64);
                (true, extent * 64 + r.below(48), 2 + r.below(15))
            } else if x < 0.995 {
                let b = 16 + r.below(113);
                let at = journal.0 + vol.journal % (journal.1 - 128);
                vol.journal += b;
                (true, at, b)
            } else {
                let extents = 4 + r.below(13);
                let at = hot_len + 64 * r.below((journal.0 - hot_len) / 64 - extents);
                vol.copy = (extents * 64, at);
                continue;
            }
        };
        // a fifth of the requests start and end on 512-byte sectors only
        let (mut off, mut len) = (lba * 4096, blocks * 4096);
        if r.below(5) == 0 && lba + blocks < n {
            off += 512 * (1 + r.below(7));
            len -= 512 * r.below(8);
        }
        let op = if write { 'W' } else { 'R' };
        out.push_str(&format!(
            "{v},{op},{off},{len},{}\n",
            EPOCH_US + vol.clock_us
        ));
        // the next arrival: within a busy period, exponential gaps of 300 µs
        // (one in eight on the same microsecond); then an idle gap of 10 s
        // to 8 h, log-uniform
        if vol.busy == 0 {
            vol.busy = 1 + r.exponential(4000.0) as u64;
            let idle_s = 10.0 * (2880.0f64).powf(r.next_f64());
            vol.clock_us += (idle_s * 1e6) as u64;
        } else {
            vol.busy -= 1;
            if r.below(8) != 0 {
                vol.clock_us += r.exponential(300.0) as u64;
            }
        }
    }
    out
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The trace text of `input` (Alibaba layout: device, R/W, offset and size
/// in bytes, time in µs; trims left out, as `wafer traces sample` does).
fn trace_text(input: &Input) -> String {
    let mut w = workload::parse(input.spec, input.logical_blocks, 4096, input.seed).unwrap();
    let mut out = String::with_capacity(input.requests * 32);
    for _ in 0..input.requests {
        let r = w.next_request();
        if r.op == Op::Trim {
            continue;
        }
        let rw = if r.op == Op::Write { 'W' } else { 'R' };
        out.push_str(&format!(
            "{},{rw},{},{},{}\n",
            r.tenant,
            r.lba * 4096,
            r.blocks as u64 * 4096,
            1_577_808_000_000_000 + r.time_ns / 1000
        ));
    }
    out
}

/// Write `input` into `dir` (and into `$WAFER_PEER_TRACES` if set); its path.
fn write_input(dir: &Scratch, input: &Input) -> String {
    let text = if input.file.ends_with(".txt") {
        midas_text(input)
    } else {
        trace_text(input)
    };
    if let Some(d) = std::env::var_os("WAFER_PEER_TRACES") {
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(std::path::Path::new(&d).join(input.file), &text).unwrap();
    }
    let hash = fnv1a(text.as_bytes());
    if input.fnv != 0 {
        assert_eq!(
            hash, input.fnv,
            "{}: the generated trace changed; the peer's reference numbers are for the old one \
             (rerun the peer, docs/FIDELITY.md)",
            input.file
        );
    }
    dir.file(input.file, text)
}

/// Write `c` into `dir` (and into `$WAFER_PEER_TRACES` if set), checking
/// its hash as [`write_input`] does; its path.
fn write_cloud(dir: &Scratch, c: &Cloud) -> String {
    let text = cloud_text(c);
    if let Some(d) = std::env::var_os("WAFER_PEER_TRACES") {
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(std::path::Path::new(&d).join(c.file), &text).unwrap();
    }
    let hash = fnv1a(text.as_bytes());
    if c.fnv != 0 {
        assert_eq!(
            hash, c.fnv,
            "{}: the generated trace changed; the peer's reference numbers are for the old one \
             (rerun the peer, docs/FIDELITY.md)",
            c.file
        );
    }
    dir.file(c.file, text)
}

/// The replayer's configuration of the parity runs: 6 classes, GP 0.15, one
/// segment per GC, 1 MiB segments (256 blocks), random seed 0.
fn replayer_run(path: &str, policy: &str, victim: &str) -> RunConfig {
    RunConfig {
        policy: policy.into(),
        victim: victim.into(),
        setup: Setup::SepbitReplayer,
        device: DeviceConfig {
            segment_blocks: 256,
            ..Default::default()
        },
        trace: Some(TraceConfig {
            path: path.into(),
            format: Some("alibaba".into()),
            capacity_from_trace: true,
            address_space: true,
            ..Default::default()
        }),
        writes: u64::MAX,
        // the replayer's `--randomSeed` default (its Random and RandomGreedy
        // selectors; `multilog` draws from it too here)
        seed: 0,
        ..Default::default()
    }
}

/// MiDAS-Simulation's 1 GB device: 244,140 logical pages on 262,144
/// physical (1 GiB), 2 MiB segments (512 pages), 4 free segments reserved;
/// the same requests as [`MIDAS`]'s file.
fn midas_run(policy: &str, victim: &str) -> RunConfig {
    RunConfig {
        policy: policy.into(),
        victim: victim.into(),
        setup: Setup::MidasSim,
        device: DeviceConfig {
            logical_blocks: MIDAS.logical_blocks,
            physical_blocks: Some(262_144),
            segment_blocks: 512,
            gc_low: 4,
            gc_high: 4,
            ..Default::default()
        },
        workload: MIDAS.spec.into(),
        writes: MIDAS.requests as u64,
        seed: MIDAS.seed,
        ..Default::default()
    }
}

fn replay(cfg: RunConfig) -> RunResult {
    let mut sim = Simulation::new(cfg).expect("valid config");
    sim.run().expect("run completes");
    sim.engine().check().expect("invariants hold");
    sim.result()
}

#[test]
#[ignore = "writes the real-trace-layout inputs into $WAFER_PEER_TRACES"]
fn write_cloud_inputs() {
    let dir = Scratch::new("cloud");
    for c in [&CLOUD, &CLOUD_SMALL, &CLOUD3] {
        let path = write_cloud(&dir, c);
        let text = std::fs::read(&path).unwrap();
        println!(
            "{} fnv {:#x} lines {}",
            c.file,
            fnv1a(&text),
            text.iter().filter(|&&b| b == b'\n').count()
        );
    }
}

/// Every replayer cell of the parity tables: (wafer policy, selector).
const CELLS: &[(&str, &str)] = &[
    ("base", "greedy"),
    ("base", "cost-benefit"),
    ("two-r", "greedy"),
    ("two-r", "cost-benefit"),
    ("sepbit", "greedy"),
    ("sepbit", "cost-benefit"),
    ("warcip", "greedy"),
    ("warcip", "cost-benefit"),
    ("dac", "greedy"),
    ("dac", "cost-benefit"),
    ("eti", "greedy"),
    ("eti", "cost-benefit"),
    ("multiqueue", "greedy"),
    ("multiqueue", "cost-benefit"),
    ("sfr", "greedy"),
    ("sfr", "cost-benefit"),
    ("sfs", "greedy"),
    ("sfs", "cost-benefit"),
    ("fadac", "greedy"),
    ("fadac", "cost-benefit"),
    ("uw", "greedy"),
    ("uw", "cost-benefit"),
    ("gw", "greedy"),
    ("gw", "cost-benefit"),
    ("multilog", "multilog"),
];

/// `WAFER_CELLS=policy/victim,...` (default: [`CELLS`]) on the
/// real-layout inputs (or on `WAFER_PARITY_TRACE`, one volume), printed as
/// `input policy victim WAF`; `WAFER_SEEDS=A..B` runs each cell with seeds
/// A..=B (`multilog`'s draws; the replayer's random selectors draw from seed
/// 0 by default); `WAFER_PARAMS='{"classes": 4}'` sets policy parameters.
#[test]
#[ignore = "prints wafer's numbers on the real-layout inputs"]
fn print_cloud_numbers() {
    let dir = Scratch::new("cloud-numbers");
    let cells: Vec<(String, String)> = match std::env::var("WAFER_CELLS") {
        Ok(v) => v
            .split(',')
            .map(|c| {
                let (p, v) = c.split_once('/').expect("policy/victim");
                (p.to_string(), v.to_string())
            })
            .collect(),
        Err(_) => CELLS.iter().map(|&(p, v)| (p.into(), v.into())).collect(),
    };
    let seeds: (u64, u64) = std::env::var("WAFER_SEEDS").map_or((0, 0), |s| {
        let (a, b) = s.split_once("..").expect("WAFER_SEEDS=A..B");
        (a.parse().unwrap(), b.parse().unwrap())
    });
    let params: serde_json::Value = std::env::var("WAFER_PARAMS")
        .map_or(serde_json::Value::Null, |p| {
            serde_json::from_str(&p).expect("WAFER_PARAMS: JSON")
        });
    let inputs: Vec<(String, String, u32)> = match std::env::var("WAFER_PARITY_TRACE") {
        Ok(t) => vec![(t.clone(), t, 1)],
        Err(_) => [&CLOUD, &CLOUD_SMALL, &CLOUD3]
            .iter()
            .map(|c| (c.file.to_string(), write_cloud(&dir, c), c.volumes))
            .collect(),
    };
    for (name, path, volumes) in &inputs {
        for (p, v) in &cells {
            for seed in seeds.0..=seeds.1 {
                let waf = if *volumes > 1 {
                    let cfg = MultiConfig {
                        run: RunConfig {
                            seed,
                            params: params.clone(),
                            ..replayer_run(path, p, v)
                        },
                        volumes: Vec::new(),
                        all_devices: true,
                    };
                    let mut m = MultiSimulation::new(cfg).expect("valid config");
                    while !m.step(1 << 20).expect("run completes") {}
                    m.result().waf.unwrap()
                } else {
                    replay(RunConfig {
                        seed,
                        params: params.clone(),
                        ..replayer_run(path, p, v)
                    })
                    .waf
                    .unwrap()
                };
                println!("{name} {p} {v} {waf:.6} seed {seed}");
            }
        }
    }
}

#[test]
#[ignore = "prints wafer's numbers on the parity inputs"]
fn print_parity_numbers() {
    let dir = Scratch::new("peers");
    for input in [&ZIPF, &VAR] {
        let path = write_input(&dir, input);
        println!(
            "{} fnv {:#x}",
            input.file,
            fnv1a(std::fs::read(&path).unwrap().as_slice())
        );
        for p in [
            "base",
            "two-r",
            "sepbit",
            "warcip",
            "dac",
            "eti",
            "multiqueue",
            "sfr",
            "sfs",
            "fadac",
            "uw",
            "gw",
            "multilog",
            "fk",
        ] {
            for v in ["greedy", "cost-benefit"] {
                let r = replay(replayer_run(&path, p, v));
                println!("{} {p} {v} {:.6}", input.file, r.waf.unwrap());
            }
        }
        let mut extra = vec![("multilog", "multilog")];
        if input.file == ZIPF.file {
            for v in [
                "random",
                "random-greedy",
                "window-greedy",
                "lru",
                "cost-hotness",
            ] {
                extra.push(("sepbit", v));
            }
            // the replayer keeps cost-hotness's sums only under SFS
            extra.push(("sfs", "cost-hotness"));
        }
        for (p, v) in extra {
            let r = replay(replayer_run(&path, p, v));
            println!("{} {p} {v} {:.6}", input.file, r.waf.unwrap());
        }
    }
    let path = write_input(&dir, &MIDAS);
    println!(
        "midas fnv {:#x}",
        fnv1a(std::fs::read(&path).unwrap().as_slice())
    );
    for p in ["base", "midas"] {
        for v in ["greedy", "cost-benefit"] {
            let r = replay(midas_run(p, v));
            println!(
                "midas {p} {v} {:.6} workload {:.6}",
                r.waf.unwrap(),
                r.workload_waf.unwrap()
            );
        }
    }
    let path = write_input(&dir, &MIX);
    println!(
        "mix fnv {:#x}",
        fnv1a(std::fs::read(&path).unwrap().as_slice())
    );
    for p in ["base", "sepbit"] {
        for v in ["greedy", "cost-benefit"] {
            let r = replay_all_devices(&path, p, v);
            println!("mix {p} {v} {:.6}", r.waf.unwrap());
        }
    }
}

fn replay_all_devices(
    path: &str,
    policy: &str,
    victim: &str,
) -> wafer_core::run::multi::MultiResult {
    let cfg = MultiConfig {
        run: replayer_run(path, policy, victim),
        volumes: Vec::new(),
        all_devices: true,
    };
    let mut m = MultiSimulation::new(cfg).expect("valid config");
    while !m.step(1 << 20).expect("run completes") {}
    m.result()
}

// ---------------------------------------------------------------------
// Parity with the replayer: (input, policy, victim, wafer's WAF pinned,
// the replayer's WA). Replayer scheme names: base = NoSep, two-r = SepGC,
// sepbit = SepBIT, warcip = WARCIP, dac = DAC, eti = ETI, multiqueue =
// MultiQueue, sfr = SFR, sfs = SFS, fadac = FADaC, uw = UW, gw = GW,
// multilog = MultiLog; selectors Greedy, CostBenefit, Random, RandomGreedy,
// WindowGreedy, Lru, CostHotness, MultiLog. `mix` is the overall WA of the
// two devices of one file, each its own log.

/// Largest relative difference from the replayer accepted (the issue's 2%).
const TOLERANCE: f64 = 0.02;

/// `sepbit` / `cost-hotness` is left out: the replayer keeps cost-hotness's
/// sums only under its SFS placement, so under any other its scores are
/// infinite and its order is its hash map's (`sfs` / `cost-hotness` is in).
#[rustfmt::skip]
const PARITY: &[(&str, &str, &str, f64, f64)] = &[
    ("zipf", "base", "cost-benefit", 3.904323, 3.904323),
    ("zipf", "base", "greedy", 3.906813, 3.906813),
    ("zipf", "two-r", "cost-benefit", 3.085857, 3.085857),
    ("zipf", "two-r", "greedy", 3.389720, 3.389720),
    ("zipf", "sepbit", "cost-benefit", 2.711753, 2.711753),
    ("zipf", "sepbit", "greedy", 2.918437, 2.918437),
    ("zipf", "sepbit", "lru", 3.444823, 3.444823),
    ("zipf", "sepbit", "random", 3.198720, 3.198720),
    ("zipf", "sepbit", "random-greedy", 2.870393, 2.870393),
    ("zipf", "sepbit", "window-greedy", 2.810363, 2.810363),
    ("zipf", "warcip", "cost-benefit", 2.909430, 2.909430),
    ("zipf", "warcip", "greedy", 3.324933, 3.324933),
    ("zipf", "dac", "cost-benefit", 2.518733, 2.518733),
    ("zipf", "dac", "greedy", 2.744327, 2.744327),
    ("zipf", "eti", "cost-benefit", 2.860673, 2.860673),
    ("zipf", "eti", "greedy", 2.992717, 2.992717),
    ("zipf", "multiqueue", "cost-benefit", 3.060620, 3.060620),
    ("zipf", "multiqueue", "greedy", 3.355713, 3.355713),
    ("zipf", "sfr", "cost-benefit", 3.046370, 3.046370),
    ("zipf", "sfr", "greedy", 3.347633, 3.347633),
    ("zipf", "sfs", "cost-benefit", 2.578523, 2.580130),
    ("zipf", "sfs", "cost-hotness", 3.141043, 3.121747),
    ("zipf", "sepbit", "basic", 4.501330, 4.502940),
    ("zipf", "sfs", "greedy", 3.104093, 3.100600),
    ("zipf", "fadac", "cost-benefit", 2.498557, 2.498557),
    ("zipf", "fadac", "greedy", 2.741263, 2.741263),
    ("zipf", "uw", "cost-benefit", 2.878773, 2.878773),
    ("zipf", "uw", "greedy", 3.080440, 3.080440),
    ("zipf", "gw", "cost-benefit", 3.040763, 3.040763),
    ("zipf", "gw", "greedy", 3.309563, 3.309563),
    ("zipf", "multilog", "multilog", 3.444913, 3.435083),
    ("var", "base", "cost-benefit", 3.312716, 3.312716),
    ("var", "base", "greedy", 3.345506, 3.345506),
    ("var", "two-r", "cost-benefit", 2.952906, 2.952906),
    ("var", "two-r", "greedy", 3.280442, 3.280442),
    ("var", "sepbit", "cost-benefit", 2.795029, 2.795029),
    ("var", "sepbit", "greedy", 3.160302, 3.160302),
    ("var", "warcip", "cost-benefit", 2.894406, 2.894406),
    ("var", "warcip", "greedy", 3.253989, 3.253989),
    ("var", "dac", "cost-benefit", 2.783756, 2.783756),
    ("var", "dac", "greedy", 3.242700, 3.242700),
    ("var", "eti", "cost-benefit", 2.961489, 2.961489),
    ("var", "eti", "greedy", 3.261947, 3.261947),
    ("var", "multiqueue", "cost-benefit", 2.725172, 2.725172),
    ("var", "multiqueue", "greedy", 3.109155, 3.109155),
    ("var", "sfr", "cost-benefit", 2.817362, 2.817362),
    ("var", "sfr", "greedy", 3.153450, 3.153450),
    ("var", "sfs", "cost-benefit", 2.674696, 2.679726),
    ("var", "sfs", "greedy", 3.236116, 3.226947),
    ("var", "fadac", "cost-benefit", 3.107527, 3.107527),
    ("var", "fadac", "greedy", 3.353324, 3.353324),
    ("var", "uw", "cost-benefit", 2.968821, 2.968821),
    ("var", "uw", "greedy", 3.276828, 3.276828),
    ("var", "gw", "cost-benefit", 2.805799, 2.805799),
    ("var", "gw", "greedy", 3.177437, 3.177437),
    ("var", "multilog", "multilog", 3.362536, 3.365703),
    ("mix", "base", "cost-benefit", 3.672062, 3.672062),
    ("mix", "base", "greedy", 3.670428, 3.670428),
    ("mix", "sepbit", "cost-benefit", 2.693569, 2.693569),
    ("mix", "sepbit", "greedy", 2.998805, 2.998805),
    // the real-layout inputs (issue 35); `multilog` rows: the median of
    // the replayer's runs (10 for cost-benefit; it is not deterministic)
    ("cloud", "base", "greedy", 2.299125, 2.299125),
    ("cloud", "base", "cost-benefit", 2.280336, 2.280336),
    ("cloud", "two-r", "greedy", 2.359488, 2.359488),
    ("cloud", "two-r", "cost-benefit", 2.214076, 2.214076),
    ("cloud", "sepbit", "greedy", 2.229926, 2.229926),
    ("cloud", "sepbit", "cost-benefit", 2.073434, 2.073434),
    ("cloud", "warcip", "greedy", 2.384975, 2.379234),
    ("cloud", "warcip", "cost-benefit", 2.285437, 2.285437),
    ("cloud", "dac", "greedy", 2.526428, 2.526428),
    ("cloud", "dac", "cost-benefit", 2.092078, 2.092078),
    ("cloud", "eti", "greedy", 2.368413, 2.368413),
    ("cloud", "eti", "cost-benefit", 2.268001, 2.268001),
    ("cloud", "multiqueue", "greedy", 2.327712, 2.327712),
    ("cloud", "multiqueue", "cost-benefit", 2.204033, 2.204033),
    ("cloud", "sfr", "greedy", 2.320589, 2.320589),
    ("cloud", "sfr", "cost-benefit", 2.203035, 2.203035),
    ("cloud", "sfs", "greedy", 2.452033, 2.456282),
    ("cloud", "sfs", "cost-benefit", 2.358020, 2.362554),
    ("cloud", "fadac", "greedy", 2.438274, 2.438274),
    ("cloud", "fadac", "cost-benefit", 2.249295, 2.249295),
    ("cloud", "uw", "greedy", 2.362475, 2.362475),
    ("cloud", "uw", "cost-benefit", 2.281163, 2.281163),
    ("cloud", "gw", "greedy", 2.304507, 2.304507),
    ("cloud", "gw", "cost-benefit", 2.164410, 2.164410),
    ("cloud", "multilog", "multilog", 2.751191, 2.734842),
    ("cloud-small", "base", "greedy", 2.409774, 2.409774),
    ("cloud-small", "base", "cost-benefit", 2.409093, 2.409093),
    ("cloud-small", "two-r", "greedy", 2.400110, 2.400110),
    ("cloud-small", "two-r", "cost-benefit", 2.308948, 2.308948),
    ("cloud-small", "sepbit", "greedy", 2.261202, 2.261202),
    ("cloud-small", "sepbit", "cost-benefit", 2.095728, 2.095728),
    ("cloud-small", "warcip", "greedy", 2.392147, 2.392147),
    ("cloud-small", "warcip", "cost-benefit", 2.280055, 2.280055),
    ("cloud-small", "dac", "greedy", 2.546596, 2.546596),
    ("cloud-small", "dac", "cost-benefit", 2.191411, 2.191411),
    ("cloud-small", "eti", "greedy", 2.429985, 2.429985),
    ("cloud-small", "eti", "cost-benefit", 2.329184, 2.329184),
    ("cloud-small", "multiqueue", "greedy", 2.298634, 2.298634),
    ("cloud-small", "multiqueue", "cost-benefit", 2.199519, 2.199519),
    ("cloud-small", "sfr", "greedy", 2.380195, 2.380195),
    ("cloud-small", "sfr", "cost-benefit", 2.207567, 2.207567),
    ("cloud-small", "sfs", "greedy", 2.541040, 2.553597),
    ("cloud-small", "sfs", "cost-benefit", 2.360027, 2.343862),
    ("cloud-small", "fadac", "greedy", 2.586990, 2.586990),
    ("cloud-small", "fadac", "cost-benefit", 2.351204, 2.351204),
    ("cloud-small", "uw", "greedy", 2.450342, 2.450342),
    ("cloud-small", "uw", "cost-benefit", 2.339892, 2.339892),
    ("cloud-small", "gw", "greedy", 2.327514, 2.327514),
    ("cloud-small", "gw", "cost-benefit", 2.200594, 2.200594),
    ("cloud-small", "multilog", "multilog", 2.777812, 2.809755),
    ("cloud3", "base", "greedy", 2.330719, 2.330719),
    ("cloud3", "base", "cost-benefit", 2.277243, 2.277243),
    ("cloud3", "two-r", "greedy", 2.331448, 2.331448),
    ("cloud3", "two-r", "cost-benefit", 2.221037, 2.221037),
    ("cloud3", "sepbit", "greedy", 2.204181, 2.204181),
    ("cloud3", "sepbit", "cost-benefit", 2.064626, 2.064626),
    ("cloud3", "warcip", "greedy", 2.352508, 2.352508),
    ("cloud3", "warcip", "cost-benefit", 2.256736, 2.256736),
    ("cloud3", "dac", "greedy", 2.518247, 2.518247),
    ("cloud3", "dac", "cost-benefit", 2.116404, 2.116404),
    ("cloud3", "eti", "greedy", 2.361550, 2.361550),
    ("cloud3", "eti", "cost-benefit", 2.271440, 2.271440),
    ("cloud3", "multiqueue", "greedy", 2.300218, 2.300218),
    ("cloud3", "multiqueue", "cost-benefit", 2.186185, 2.186185),
    ("cloud3", "sfr", "greedy", 2.295346, 2.295346),
    ("cloud3", "sfr", "cost-benefit", 2.160710, 2.160710),
    ("cloud3", "sfs", "greedy", 2.488942, 2.466977),
    ("cloud3", "sfs", "cost-benefit", 2.334143, 2.341039),
    ("cloud3", "fadac", "greedy", 2.473272, 2.473272),
    ("cloud3", "fadac", "cost-benefit", 2.276229, 2.276229),
    ("cloud3", "uw", "greedy", 2.363573, 2.363573),
    ("cloud3", "uw", "cost-benefit", 2.270866, 2.270866),
    ("cloud3", "gw", "greedy", 2.282606, 2.282606),
    ("cloud3", "gw", "cost-benefit", 2.148783, 2.148783),
    ("cloud3", "multilog", "multilog", 2.708715, 2.732924),
    ("cloud", "multilog", "cost-benefit", 2.380951, 2.395607),
    ("cloud-small", "multilog", "cost-benefit", 2.439666, 2.446053),
];

fn check_parity(input: &Input, name: &str) {
    let dir = Scratch::new("parity");
    let path = write_input(&dir, input);
    check_rows(&path, name, name == "mix");
}

/// [`check_parity`] on a real-layout input.
fn check_cloud(c: &Cloud) {
    let dir = Scratch::new("parity-cloud");
    let path = write_cloud(&dir, c);
    let name = c.file.trim_end_matches(".csv");
    assert!(
        PARITY.iter().any(|r| r.0 == name),
        "no PARITY rows for {name}"
    );
    check_rows(&path, name, c.volumes > 1);
}

/// The [`PARITY`] rows of input `name` on the trace at `path`.
fn check_rows(path: &str, name: &str, all_devices: bool) {
    let path = path.to_string();
    for &(_, policy, victim, pinned, peer) in PARITY.iter().filter(|r| r.0 == name) {
        let waf = if all_devices {
            replay_all_devices(&path, policy, victim).waf.unwrap()
        } else {
            replay(replayer_run(&path, policy, victim)).waf.unwrap()
        };
        assert!(
            (waf - pinned).abs() < 1e-6,
            "{name} {policy}/{victim}: WAF {waf:.6}, pinned {pinned:.6} (update PARITY if intended)"
        );
        assert!(
            (waf / peer - 1.0).abs() <= TOLERANCE,
            "{name} {policy}/{victim}: WAF {waf:.6} vs the replayer's {peer:.6}"
        );
    }
}

#[test]
fn parity_with_the_replayer_on_zipf() {
    check_parity(&ZIPF, "zipf");
}

#[test]
fn parity_with_the_replayer_on_variable_sizes() {
    check_parity(&VAR, "var");
}

#[test]
fn parity_with_the_replayer_on_two_volumes() {
    check_parity(&MIX, "mix");
}

/// The replayer's options beyond the table on `zipf` (issue 35): its
/// SepBIT variants and class counts, (policy, victim, parameters, wafer's
/// WAF pinned, the replayer's WA).
#[rustfmt::skip]
const OPTIONS: &[(&str, &str, &str, f64, f64)] = &[
    ("bit-half", "cost-benefit", "{}", 2.733707, 2.733707),
    ("bit-double", "cost-benefit", "{}", 2.715610, 2.715610),
    ("bit-gw", "cost-benefit", "{}", 2.731060, 2.731060),
    ("sepbit", "cost-benefit", r#"{"classes": 4}"#, 2.766303, 2.766303),
    ("uw", "greedy", r#"{"classes": 4}"#, 3.083877, 3.083877),
    ("eti", "cost-benefit", r#"{"classes": 4}"#, 2.860673, 2.860673),
];

#[test]
fn parity_with_the_replayer_options() {
    let dir = Scratch::new("parity-options");
    let path = write_input(&dir, &ZIPF);
    for &(policy, victim, params, pinned, peer) in OPTIONS {
        let mut cfg = replayer_run(&path, policy, victim);
        cfg.params = serde_json::from_str(params).unwrap();
        let waf = replay(cfg).waf.unwrap();
        assert!(
            (waf - pinned).abs() < 1e-6,
            "{policy}/{victim} {params}: WAF {waf:.6}, pinned {pinned:.6}"
        );
        assert!(
            (waf / peer - 1.0).abs() <= TOLERANCE,
            "{policy}/{victim} {params}: {waf:.6} vs {peer:.6}"
        );
    }
}

#[test]
fn parity_with_the_replayer_on_a_real_layout() {
    check_cloud(&CLOUD);
}

#[test]
fn parity_with_the_replayer_on_a_small_real_volume() {
    check_cloud(&CLOUD_SMALL);
}

#[test]
fn parity_with_the_replayer_on_three_real_volumes() {
    check_cloud(&CLOUD3);
}

/// MiDAS-Simulation (stock, `./ssdsimul midas.txt VICTIM 1 2`): its TOTAL
/// WAF (prefill counted, printed to 3 decimals) and wafer's under `--setup
/// midas-sim`, which gives `midas` the simulator's start-up chain, hot
/// filter, model window and reserve (docs/FIDELITY.md). Both are pinned and
/// `midas` must stay within 2% of the peer.
const MIDAS_PARITY: &[(&str, &str, f64, f64)] = &[
    ("midas", "greedy", 7.177603, 7.203),
    ("midas", "cost-benefit", 6.535419, 6.513),
    ("midas", "fifo", 8.776849, 8.782),
    ("base", "greedy", 8.953272, f64::NAN),
];

#[test]
fn midas_sim_setup_numbers() {
    let dir = Scratch::new("midas");
    write_input(&dir, &MIDAS);
    for &(policy, victim, pinned, peer) in MIDAS_PARITY {
        let waf = replay(midas_run(policy, victim)).waf.unwrap();
        assert!(
            (waf - pinned).abs() < 1e-6,
            "midas-sim {policy}/{victim}: WAF {waf:.6}, pinned {pinned:.6}"
        );
        if !peer.is_nan() {
            let diff = waf / peer - 1.0;
            assert!(
                diff.abs() < 0.02,
                "midas-sim {policy}/{victim}: {:+.2}% from MiDAS-Simulation's {peer}",
                100.0 * diff
            );
        }
    }
}

// ---------------------------------------------------------------------
// One test per semantic option: each fails if its option stops changing
// what it should (the rest of the configuration held fixed).

/// A small log-structured run on a workload (timestamps from its arrivals).
fn lss(policy: &str, victim: &str) -> RunConfig {
    RunConfig {
        policy: policy.into(),
        victim: victim.into(),
        device: DeviceConfig {
            logical_blocks: 8192,
            segment_blocks: 64,
            gc_mode: GcMode::GarbageProportion,
            prefill: false,
            ..Default::default()
        },
        workload: "hotcold:0.8:0.2,size=1-8".into(),
        writes: 60_000,
        seed: 5,
        ..Default::default()
    }
}

fn gc_of(cfg: RunConfig) -> u64 {
    replay(cfg).gc_writes
}

#[test]
fn garbage_at_seal_changes_the_trigger() {
    // The engine's check() compares its count of the open segments' garbage
    // with the FTL's, so the at-seal bookkeeping is verified on the way.
    let immediate = replay(lss("base", "greedy"));
    let mut cfg = lss("base", "greedy");
    cfg.device.garbage_accounting = GarbageAccounting::AtSeal;
    let at_seal = replay(cfg);
    assert_ne!(immediate.gc_writes, at_seal.gc_writes);
    assert_eq!(
        at_seal.conventions.garbage_accounting,
        GarbageAccounting::AtSeal
    );
    // Without GC by garbage proportion the accounting changes nothing.
    let mut w = lss("base", "greedy");
    w.device.gc_mode = GcMode::Watermark;
    w.device.op = 0.2;
    let a = gc_of(w.clone());
    w.device.garbage_accounting = GarbageAccounting::AtSeal;
    assert_eq!(gc_of(w), a);
}

#[test]
fn gc_per_request_collects_one_victim_per_check() {
    let per_block = replay(lss("base", "greedy"));
    let mut cfg = lss("base", "greedy");
    cfg.device.gc_check = GcCheck::Request;
    let per_request = replay(cfg.clone());
    assert_ne!(per_block.gc_writes, per_request.gc_writes);
    // One victim per request at most: never more collections than requests.
    assert!(per_request.counters.victims <= per_request.counters.requests);
    assert_eq!(per_request.conventions.pick_segments, Some(1));
    // --pick-segments K lets a check collect K.
    cfg.device.pick_segments = Some(4);
    let pick4 = replay(cfg);
    assert_ne!(pick4.gc_writes, per_request.gc_writes);
    assert_eq!(pick4.conventions.pick_segments, Some(4));
}

#[test]
fn pick_segments_caps_a_per_block_check() {
    let mut cfg = lss("base", "greedy");
    cfg.device.gc_mode = GcMode::Watermark;
    cfg.device.prefill = true;
    cfg.device.op = 0.15;
    cfg.device.gc_low = 4;
    cfg.device.gc_high = 12;
    let until_clear = gc_of(cfg.clone());
    cfg.device.pick_segments = Some(1);
    assert_ne!(gc_of(cfg), until_clear);
}

#[test]
fn cost_benefit_form_and_clock_change_the_choice() {
    let run = |form, clock| {
        let mut cfg = lss("sepbit", "cost-benefit");
        cfg.cost_benefit = CostBenefitConfig { form, clock };
        gc_of(cfg)
    };
    let lfs = run(CostBenefitForm::Lfs, CostBenefitClock::UserWrites);
    let sqrt = run(CostBenefitForm::Sqrt, CostBenefitClock::UserWrites);
    let sqrt_time = run(CostBenefitForm::Sqrt, CostBenefitClock::TraceTime);
    assert_ne!(lfs, sqrt);
    assert_ne!(sqrt, sqrt_time);
    // greedy ignores both
    let mut g = lss("sepbit", "greedy");
    let greedy = gc_of(g.clone());
    g.cost_benefit.form = CostBenefitForm::Sqrt;
    assert_eq!(gc_of(g), greedy);
}

#[test]
fn sepbit_fifo_user_test_differs_from_the_exact_one() {
    let exact = gc_of(lss("sepbit", "greedy"));
    let mut cfg = lss("sepbit", "greedy");
    cfg.params = serde_json::json!({"user_test": "fifo"});
    assert_ne!(gc_of(cfg), exact);
}

#[test]
fn waf_counting_the_prefill() {
    let mut cfg = lss("base", "greedy");
    cfg.device.gc_mode = GcMode::Watermark;
    cfg.device.prefill = true;
    cfg.waf_counts_prefill = true;
    let r = replay(cfg);
    let pre_user = r.prefill_writes as f64;
    let want = (r.user_writes as f64 + r.gc_writes as f64 + pre_user + r.prefill_gc_writes as f64)
        / (r.user_writes as f64 + pre_user);
    assert!(pre_user >= 8192.0);
    assert!((r.waf.unwrap() - want).abs() < 1e-12);
    assert!(r.waf.unwrap() < r.workload_waf.unwrap());
}

#[test]
fn setups_fix_their_conventions_and_keep_the_rest() {
    let mut cfg = lss("sepbit", "cost-benefit");
    cfg.setup = Setup::SepbitReplayer;
    cfg.device.gc_mode = GcMode::Watermark;
    cfg.device.prefill = true;
    let r = replay(cfg.clone());
    let c = r.conventions;
    assert_eq!(c.gc_mode, GcMode::GarbageProportion);
    assert!(!c.prefill);
    assert_eq!(c.garbage_accounting, GarbageAccounting::AtSeal);
    assert_eq!(c.gc_check, GcCheck::Request);
    assert_eq!(c.pick_segments, Some(1));
    assert_eq!(c.cost_benefit.form, CostBenefitForm::Sqrt);
    assert_eq!(c.cost_benefit.clock, CostBenefitClock::TraceTime);
    assert!(!c.waf_counts_prefill);
    // the user's policy parameter wins over the setup's (fifo)
    cfg.params = serde_json::json!({"user_test": "exact"});
    assert_ne!(gc_of(cfg), r.gc_writes);

    let mut m = lss("base", "greedy");
    m.setup = Setup::MidasSim;
    let r = replay(m);
    let c = r.conventions;
    assert_eq!(c.gc_mode, GcMode::Watermark);
    assert!(c.prefill && c.waf_counts_prefill);
    assert_eq!(c.gc_check, GcCheck::Block);
    assert_eq!(c.cost_benefit.clock, CostBenefitClock::UserWrites);
    assert!(r.prefill_writes > 0);
}

#[test]
fn per_group_gc_statistics_and_the_threshold_over_time() {
    let mut cfg = lss("sepbit", "greedy");
    cfg.setup = Setup::SepbitReplayer;
    cfg.device.window_drive_writes = 1.0;
    let r = replay(cfg);
    let victims: u64 = r.groups.iter().map(|g| g.victims).sum();
    assert_eq!(victims, r.counters.victims);
    for g in r.groups.iter().filter(|g| g.victims > 0) {
        let gp = g.mean_victim_garbage.unwrap();
        assert!((0.0..=1.0).contains(&gp));
        assert!(g.mean_lifespan.unwrap() > 0.0);
    }
    let share: f64 = r.groups.iter().filter_map(|g| g.user_write_share).sum();
    assert!((share - 1.0).abs() < 1e-9);
    assert!(
        r.windows.iter().any(|w| w.threshold.is_some()),
        "sepbit's ℓ in the time series"
    );
}

#[test]
fn several_victims_per_check_are_distinct_under_every_selector() {
    // A per-request check chooses all its victims before collecting any; a
    // selector that scans the sealed segments must not get the same twice.
    for v in wafer_core::victim::SELECTORS {
        for p in ["base", "sepbit"] {
            let mut cfg = lss(p, v.name);
            cfg.writes = 20_000;
            cfg.device.gc_check = GcCheck::Request;
            cfg.device.pick_segments = Some(3);
            replay(cfg);
        }
    }
}

#[test]
fn seed_reaches_multilog_unless_its_parameter_is_given() {
    // a trace, so that the seed changes nothing but multilog's draws
    let dir = Scratch::new("multilog-seed");
    let path = write_cloud(&dir, &CLOUD_SMALL);
    let run = |seed: u64, params: serde_json::Value| {
        let mut cfg = replayer_run(&path, "multilog", "cost-benefit");
        cfg.seed = seed;
        cfg.params = params;
        gc_of(cfg)
    };
    let none = serde_json::Value::Null;
    assert_ne!(
        run(5, none.clone()),
        run(6, none.clone()),
        "--seed must reach multilog"
    );
    let fixed = serde_json::json!({"seed": 3});
    assert_eq!(
        run(5, fixed.clone()),
        run(6, fixed.clone()),
        "its own seed wins"
    );
    assert_eq!(run(3, none), run(5, fixed));
}

/// The replayer's conventions that `--setup sepbit-replayer` sets, each
/// changing what it should on the small real-layout volume: the log's
/// valid-block count (`valid_count`), GW's GC age and ℓ timing.
#[test]
fn replayer_valid_count_and_gw_conventions_change_the_run() {
    let dir = Scratch::new("conventions");
    let path = write_cloud(&dir, &CLOUD_SMALL);
    for (policy, ours) in [
        ("fadac", serde_json::json!({"valid_count": "written"})),
        ("uw", serde_json::json!({"valid_count": "written"})),
        ("sepbit", serde_json::json!({"valid_count": "written"})),
        (
            "gw",
            serde_json::json!({"gc_age": "since-write", "ell_update": "after-moves"}),
        ),
    ] {
        let replayer = gc_of(replayer_run(&path, policy, "cost-benefit"));
        let mut cfg = replayer_run(&path, policy, "cost-benefit");
        cfg.params = ours;
        assert_ne!(gc_of(cfg), replayer, "{policy}");
    }
}
