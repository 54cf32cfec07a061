//! Trace extension (`trace::extend`): the continuation keeps the trace's
//! lifetimes, sizes, mix and locality, and it ends the tie at WAF 1.000
//! that `repeat` gives the separating policies on a short trace.

use super::Scratch;
use wafer_core::request::Op;
use wafer_core::run::TraceConfig;
use wafer_core::trace::{self, blocks_of, extend, Record, Selection};
use wafer_core::workload;
use wafer_core::{DeviceConfig, RunConfig, RunResult, Simulation};

/// A short MSR Cambridge CSV, as a day of a real volume looks: `n`
/// requests, skewed writes of 1-8 blocks (Zipf 0.8) to 30% of `blocks` 4
/// KiB blocks, reads of 8 blocks anywhere in the rest, 100 us apart.
fn short_msr(blocks: u64, n: usize, seed: u64) -> String {
    let spec = "mix:zipf:0.8,size=1-8,region=0.3+uniform,reads=1.0,size=8,region=0.7";
    let mut w = workload::parse(spec, blocks, 4096, seed).unwrap();
    (0..n)
        .map(|i| {
            let r = w.next_request();
            let op = if r.op == Op::Write { "Write" } else { "Read" };
            format!(
                "{},hm,0,{op},{},{},100\n",
                128166372003061629u64 + i as u64 * 1000,
                r.lba * 4096,
                r.blocks as u64 * 4096
            )
        })
        .collect()
}

fn all(path: &str) -> Vec<Record> {
    let (mut s, _) = trace::open_selected(path, None, &Selection::default()).unwrap();
    let mut out = Vec::new();
    while let Some(r) = s.next_record().unwrap() {
        out.push(r);
    }
    out
}

/// Update intervals [user blocks] of blocks written twice inside one of the
/// windows `[k L, (k+1) L)` of the stream's clock, for the `k` given.
fn windowed_intervals(records: &[Record], len: u64, windows: std::ops::Range<u64>) -> Vec<u64> {
    let mut last = std::collections::HashMap::new();
    let mut clock = 0u64;
    let mut out = Vec::new();
    for r in records.iter().filter(|r| r.op == Op::Write) {
        let (first, n) = blocks_of(r, 4096);
        for b in first..first + n {
            if let Some(p) = last.insert(b, clock) {
                if p / len == clock / len && windows.contains(&(clock / len)) {
                    out.push(clock - p);
                }
            }
            clock += 1;
        }
    }
    out
}

/// The Kolmogorov-Smirnov distance of two samples.
fn ks(mut a: Vec<u64>, mut b: Vec<u64>) -> f64 {
    a.sort_unstable();
    b.sort_unstable();
    let (mut i, mut j, mut d) = (0, 0, 0f64);
    while i < a.len() && j < b.len() {
        let x = a[i].min(b[j]);
        while i < a.len() && a[i] <= x {
            i += 1;
        }
        while j < b.len() && b[j] <= x {
            j += 1;
        }
        d = d.max((i as f64 / a.len() as f64 - j as f64 / b.len() as f64).abs());
    }
    d
}

/// Write blocks of write requests.
fn write_sizes(records: &[Record]) -> Vec<u64> {
    records
        .iter()
        .filter(|r| r.op == Op::Write)
        .map(|r| r.size)
        .collect()
}

#[test]
fn the_continuation_keeps_lifetimes_sizes_and_mix() {
    let dir = Scratch::new("extend");
    let src = dir.file("hm_short.csv", short_msr(1 << 16, 3000, 3));
    let out = dir.join("hm_long.arrow");
    let w = extend::write_extended(&src, None, &Selection::default(), 4096, 8.0, 1, &out).unwrap();
    assert_eq!(w.format, "msr");
    assert!(w.trace_drive_writes < 1.0, "a short trace: {w:?}");
    assert!((w.drive_writes - 8.0).abs() < 0.01, "{w:?}");
    let t = all(&src);
    let x = all(&out);
    assert_eq!(x[..t.len()], t[..], "the trace comes first, as it is");
    let cont = &x[t.len()..];
    let len = w.continuation.trace_write_blocks;
    // Lifetimes: the intervals seen inside windows as long as the trace
    // (the same censoring as the trace's own window) follow the trace's.
    let original = windowed_intervals(&t, len, 0..1);
    let extended = windowed_intervals(&x, len, 2..8);
    let d = ks(original.clone(), extended.clone());
    eprintln!(
        "KS {d:.4} over {} / {} intervals",
        original.len(),
        extended.len()
    );
    assert!(d < 0.1, "KS distance {d:.3}");
    // Sizes and the read/write mix.
    // (a unit is a run's requests clipped to the blocks it still holds at
    // the trace's end: a little smaller than the trace's requests)
    let d = ks(write_sizes(&t), write_sizes(cont));
    assert!(d < 0.15, "write sizes: KS {d:.3}");
    let reads =
        |v: &[Record]| v.iter().filter(|r| r.op == Op::Read).count() as f64 / v.len() as f64;
    assert!(
        (reads(&t) - reads(cont)).abs() < 0.02,
        "{} vs {}",
        reads(&t),
        reads(cont)
    );
    // Locality: only the blocks the trace touches, so the footprint stays.
    let touched = |v: &[Record]| {
        let mut s = std::collections::HashSet::new();
        for r in v {
            let (f, n) = blocks_of(r, 4096);
            s.extend(f..f + n);
        }
        s
    };
    assert!(touched(cont).is_subset(&touched(&t)));
    // Times go on after the trace.
    assert!(cont.windows(2).all(|p| p[0].time_ns <= p[1].time_ns));
    assert!(cont[0].time_ns > t.last().unwrap().time_ns);
    // Seeded: the same seed, the same file; another seed, another draw.
    let again = dir.join("again.arrow");
    extend::write_extended(&src, None, &Selection::default(), 4096, 8.0, 1, &again).unwrap();
    assert_eq!(all(&again), x);
    extend::write_extended(&src, None, &Selection::default(), 4096, 8.0, 2, &again).unwrap();
    assert_ne!(all(&again), x);
}

fn replay(path: &str, policy: &str, repeat: u32, extend: Option<f64>) -> RunResult {
    let mut sim = Simulation::new(RunConfig {
        device: DeviceConfig {
            op: 0.25,
            segment_blocks: 32,
            fit_segments: true,
            ..Default::default()
        },
        trace: Some(TraceConfig {
            path: path.into(),
            capacity_from_trace: true,
            repeat,
            extend,
            ..Default::default()
        }),
        writes: u64::MAX,
        policy: policy.into(),
        ..Default::default()
    })
    .unwrap();
    sim.run().unwrap();
    sim.engine().check().unwrap();
    sim.result()
}

#[test]
fn an_extended_trace_ends_the_tie_that_repeat_gives() {
    let dir = Scratch::new("extend");
    let src = dir.file("hm_short.csv", short_msr(1 << 16, 3000, 3));
    let policies = ["two-r", "sepbit", "nodap"];
    let repeated: Vec<f64> = policies
        .iter()
        .map(|p| replay(&src, p, 12, None).steady_waf.unwrap())
        .collect();
    let extended: Vec<RunResult> = policies
        .iter()
        .map(|p| replay(&src, p, 1, Some(6.0)))
        .collect();
    let steady: Vec<f64> = extended.iter().map(|r| r.steady_waf.unwrap()).collect();
    eprintln!("repeat {repeated:?} extend {steady:?}");
    // --repeat: each pass rewrites the same blocks in the same order, so
    // every block lives one pass and all three reach WAF 1.000.
    assert!(repeated.iter().all(|w| *w < 1.001), "{repeated:?}");
    // --extend: lifetimes drawn from the trace's own laws; the oracle stays
    // below the others.
    let [two_r, sepbit, nodap] = [steady[0], steady[1], steady[2]];
    assert!(two_r > 1.02 && sepbit > 1.02, "{steady:?}");
    assert!(nodap < two_r.min(sepbit) - 0.02, "{steady:?}");
    let ext = extended[0].trace.as_ref().unwrap().extension.unwrap();
    assert!(ext.requests > 0 && ext.write_blocks >= ext.planned_write_blocks);
    let codes: Vec<&str> = extended[0].warnings.iter().map(|w| w.code).collect();
    assert!(!codes.contains(&"periodic-repeat"), "{codes:?}");
    let codes: Vec<&str> = replay(&src, "base", 3, None)
        .warnings
        .iter()
        .map(|w| w.code)
        .collect();
    assert!(codes.contains(&"periodic-repeat"), "{codes:?}");
}

#[test]
fn extension_errors_name_the_field() {
    let dir = Scratch::new("extend");
    let src = dir.file("hm_short.csv", short_msr(1 << 14, 200, 1));
    for (repeat, extend, want) in [
        (2, Some(4.0), "repeat or extend"),
        (1, Some(-1.0), "extend"),
    ] {
        let e = Simulation::new(RunConfig {
            trace: Some(TraceConfig {
                path: src.clone(),
                capacity_from_trace: true,
                repeat,
                extend,
                ..Default::default()
            }),
            writes: u64::MAX,
            ..Default::default()
        })
        .err()
        .unwrap()
        .to_string();
        assert!(e.contains(want), "{e}");
    }
    let reads = dir.file("reads.csv", "128166372003061629,hm,0,Read,0,4096,1\n");
    let e = extend::write_extended(
        &reads,
        None,
        &Selection::default(),
        4096,
        2.0,
        1,
        &dir.join("x"),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("nothing to extend"), "{e}");
}
