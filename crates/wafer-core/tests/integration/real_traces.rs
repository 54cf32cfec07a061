//! Real traces with default flags: the device sized from the footprint,
//! segments fitted to a small one, `repeat`, the warnings every result
//! carries, and the memory check that refuses instead of aborting.

use super::Scratch;
use wafer_core::run::{Sizing, TraceConfig};
use wafer_core::{DeviceConfig, Error, RunConfig, RunResult, Simulation};

/// An MSR Cambridge CSV of `n` 4 KiB writes cycling over `blocks`
/// scattered blocks (byte offsets far apart), 1 ms apart.
fn msr(blocks: u64, n: u64) -> String {
    (0..n)
        .map(|i| {
            let b = (i * 7919) % blocks;
            let t = 128166372003061629u64 + i * 10_000;
            format!("{t},hm,0,Write,{},4096,100\n", b * 1_000_003 * 4096)
        })
        .collect()
}

fn trace(path: &str) -> TraceConfig {
    TraceConfig {
        path: path.into(),
        capacity_from_trace: true,
        ..Default::default()
    }
}

fn cfg(t: TraceConfig, device: DeviceConfig) -> RunConfig {
    RunConfig {
        device,
        trace: Some(t),
        writes: u64::MAX,
        policy: "sepbit".into(),
        ..Default::default()
    }
}

fn replay(c: RunConfig) -> RunResult {
    let mut sim = Simulation::new(c).unwrap();
    sim.run().unwrap();
    sim.engine().check().unwrap();
    sim.result()
}

fn codes(r: &RunResult) -> Vec<&str> {
    r.warnings.iter().map(|w| w.code).collect()
}

#[test]
fn the_device_is_the_footprint_by_default_and_segments_fit_it() {
    let dir = Scratch::new("real");
    let p = dir.file("hm_0.csv", msr(3000, 30_000));
    let fitted = DeviceConfig {
        fit_segments: true,
        ..Default::default()
    };
    let r = replay(cfg(trace(&p), fitted));
    let t = r.trace.as_ref().unwrap();
    assert_eq!(t.sizing, Sizing::Footprint);
    assert_eq!(
        (t.footprint_blocks, r.geometry.logical_blocks),
        (3000, 3000)
    );
    assert!(t.address_space_blocks > 2_000_000_000, "{t:?}");
    // 300 spare blocks: 256-block segments shrink to 16-block ones (the
    // floor), said in the warnings; GC runs, WAF > 1.
    assert_eq!(r.geometry.segment_blocks, 16);
    assert_eq!(r.geometry.requested_segment_blocks, 256);
    assert!(codes(&r).contains(&"segments-fitted"), "{:?}", r.warnings);
    assert!(r.counters.victims > 0 && r.waf.unwrap() > 1.0);
    assert!(!codes(&r).contains(&"gc-never-ran"));
    // Without fitting, the same device cannot hold it: the error names the
    // flags that would.
    let e = Simulation::new(cfg(trace(&p), DeviceConfig::default()))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("--segment-blocks") && e.contains("--op"), "{e}");
}

#[test]
fn address_space_sizing_and_a_given_capacity() {
    let dir = Scratch::new("real");
    let text: String = (0..400u64)
        .map(|i| format!("{},hm,0,Write,{},4096,1\n", 1000 + i, (i % 50) * 4096 * 3))
        .collect();
    let p = dir.file("sparse.csv", text);
    let small = DeviceConfig {
        segment_blocks: 4,
        op: 0.5,
        ..Default::default()
    };
    let mut t = trace(&p);
    t.address_space = true;
    let r = replay(cfg(t, small.clone()));
    let s = r.trace.as_ref().unwrap();
    assert_eq!(s.sizing, Sizing::AddressSpace);
    assert_eq!((s.footprint_blocks, s.address_space_blocks), (50, 148));
    assert_eq!(r.geometry.logical_blocks, 148);
    // A capacity too small for the addresses but not for the footprint:
    // the trace is placed inside it, remapped densely, and says so.
    let mut t = trace(&p);
    t.capacity_from_trace = false;
    let given = DeviceConfig {
        logical_blocks: 100,
        ..small.clone()
    };
    let r = replay(cfg(t.clone(), given));
    let s = r.trace.as_ref().unwrap();
    assert!(s.remapped && s.sizing == Sizing::Given);
    // Smaller than the footprint: an error naming the numbers.
    let tiny_dev = DeviceConfig {
        logical_blocks: 40,
        ..small.clone()
    };
    let e = Simulation::new(cfg(t.clone(), tiny_dev))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("50") && e.contains("40"), "{e}");
    // ... which --remap fixes; a capacity far above the footprint warns.
    t.remap = true;
    let big = DeviceConfig {
        logical_blocks: 1000,
        ..small
    };
    let r = replay(cfg(t, big));
    assert_eq!(r.trace.as_ref().unwrap().sizing, Sizing::Given);
    assert!(
        codes(&r).contains(&"device-larger-than-footprint"),
        "{:?}",
        r.warnings
    );
}

#[test]
fn repeat_replays_the_trace_with_shifted_times() {
    let dir = Scratch::new("real");
    let p = dir.file("hm_0.csv", msr(200, 500));
    let dev = DeviceConfig {
        segment_blocks: 8,
        op: 1.0,
        warmup_drive_writes: 1.0,
        ..Default::default()
    };
    let once = replay(cfg(trace(&p), dev.clone()));
    let mut t = trace(&p);
    t.repeat = 8;
    let eight = replay(cfg(t, dev));
    assert_eq!(eight.user_writes, 8 * once.user_writes);
    let s = eight.trace.as_ref().unwrap();
    assert_eq!((s.passes, s.read.requests), (8, 8 * 500));
    assert_eq!(s.read.backwards_timestamps, 0);
    // Once: 2.5 drive-writes, warm-up of 1 -> short; eight times: fine.
    assert!(
        codes(&once).contains(&"short-steady-state"),
        "{:?}",
        once.warnings
    );
    assert_eq!(codes(&eight), ["periodic-repeat"], "{:?}", eight.warnings);
    // Each block is overwritten every 200 writes, in the same order: GC
    // runs and finds its victims empty.
    assert!(eight.counters.victims > 0 && eight.steady_waf.unwrap() >= 1.0);
    // Zero passes is a configuration error.
    let mut t = trace(&p);
    t.repeat = 0;
    match Simulation::new(cfg(t, DeviceConfig::default())) {
        Err(Error::Config { field, .. }) => assert_eq!(field, "repeat"),
        other => panic!("expected a config error, got {:?}", other.err()),
    }
}

#[test]
fn warnings_say_when_numbers_mean_little() {
    let dir = Scratch::new("real");
    // A short trace on a device much larger than it: GC never runs.
    let p = dir.file("short.csv", msr(100, 50));
    let mut t = trace(&p);
    t.capacity_from_trace = false;
    t.remap = true;
    let r = replay(cfg(
        t,
        DeviceConfig {
            logical_blocks: 10_000,
            segment_blocks: 16,
            ..Default::default()
        },
    ));
    let c = codes(&r);
    for code in [
        "gc-never-ran",
        "warm-up-not-reached",
        "device-larger-than-footprint",
    ] {
        assert!(c.contains(&code), "{code}: {:?}", r.warnings);
    }
    assert!(
        r.warnings[0].message.contains("--extend"),
        "{:?}",
        r.warnings
    );
    // Timestamps: one backwards, and one bogus line 40 years out.
    let mut text = msr(100, 300);
    text.push_str("128166372000000000,hm,0,Write,0,4096,1\n");
    text.push_str("140766372000000000,hm,0,Write,4096,4096,1\n");
    let p = dir.file("bogus.csv", text);
    let r = replay(cfg(
        trace(&p),
        DeviceConfig {
            segment_blocks: 4,
            op: 1.0,
            ..Default::default()
        },
    ));
    let c = codes(&r);
    assert!(c.contains(&"timestamps-out-of-order"), "{:?}", r.warnings);
    assert!(c.contains(&"implausible-duration"), "{:?}", r.warnings);
}

#[test]
fn a_run_that_does_not_fit_in_memory_is_refused_with_the_flags_that_help() {
    let dir = Scratch::new("real");
    let p = dir.file("hm_0.csv", msr(3000, 3000));
    let mut t = trace(&p);
    t.address_space = true;
    let mut c = cfg(t, DeviceConfig::default());
    c.memory_limit = Some(1 << 30);
    match Simulation::new(c) {
        Err(Error::Resources(m)) => {
            assert!(
                m.contains("needs about") && m.contains("--address-space"),
                "{m}"
            );
            assert!(m.contains("1.0 GiB"), "{m}");
        }
        other => panic!("expected a resource error, got {:?}", other.err()),
    }
    // The estimate is reported with every result and is in the right range.
    let r = replay(cfg(
        trace(&p),
        DeviceConfig {
            fit_segments: true,
            ..Default::default()
        },
    ));
    let e = r.memory_estimate;
    assert!(e.engine >= 8 * 3000 && e.engine < 64 * 3000, "{e:?}");
    assert!(
        e.total() >= r.engine_memory_bytes / 2,
        "{e:?} vs {}",
        r.engine_memory_bytes
    );
}

#[test]
fn drive_writes_count_in_the_footprint() {
    let dir = Scratch::new("real");
    let p = dir.file("hm_0.csv", msr(200, 500));
    let mut t = trace(&p);
    t.repeat = 100;
    let mut c = cfg(
        t,
        DeviceConfig {
            segment_blocks: 8,
            op: 1.0,
            ..Default::default()
        },
    );
    c.drive_writes = Some(10.0);
    let r = replay(c);
    assert_eq!(r.user_writes, 2000);
    assert_eq!(r.trace.as_ref().unwrap().passes, 4);
}
