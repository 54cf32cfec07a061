//! Host-side stream identification (issue 17): the multi-stream device
//! model, FIOS / OFIOS / vStream / AutoStream / LSTM+KM(last) end to end,
//! their errors, and the workloads that tell them apart.

use serde_json::{json, Value};

use super::{device, run, Scratch};
use wafer_core::ftl::Ftl;
use wafer_core::policy::{self, Ctx, GcBlock};
use wafer_core::{preset, DeviceConfig, RunConfig, Simulation};

const STREAM_POLICIES: &[&str] = &[
    "fios",
    "ofios",
    "vstream",
    "autostream",
    "autostream-pub",
    "equal-partition",
    "lstm-km",
];

fn cfg(policy: &str, workload: &str, params: Value, writes: u64) -> RunConfig {
    RunConfig {
        device: device(16_384, 0.12, 32),
        policy: policy.into(),
        params,
        workload: workload.into(),
        writes,
        seed: 7,
        ..Default::default()
    }
}

fn error_of(c: RunConfig) -> String {
    match Simulation::new(c) {
        Err(e) => e.to_string(),
        Ok(mut s) => match s.run() {
            Err(e) => e.to_string(),
            Ok(()) => panic!("expected an error"),
        },
    }
}

#[test]
fn relocation_keeps_the_stream() {
    let geo = device(16_384, 0.12, 32).geometry().unwrap();
    let ftl = Ftl::new(geo, 1);
    for name in STREAM_POLICIES {
        let mut p = policy::build(name, &Value::Null, &geo).unwrap();
        for g in [0u16, 3, 5] {
            let b = GcBlock {
                lba: 17,
                victim: 0,
                from_group: g,
            };
            assert_eq!(p.place_gc(&Ctx::new(&ftl), &b), g, "{name}");
        }
    }
}

#[test]
fn stream_policies_run_and_beat_legacy_on_tenants_of_different_heat() {
    // Four scrambled tenants: hot zipf, warm zipf, cold uniform, sequential.
    let mix = "mix:zipf:1.2,region=0.15,iops=6000+zipf:0.8,region=0.25,iops=2000\
               +uniform,region=0.5,iops=1000+seq,size=8,region=0.1,iops=500";
    let writes = 6 * 16_384;
    let base = run(cfg("base", mix, Value::Null, writes))
        .steady_waf
        .unwrap();
    for (name, params) in [
        ("fios", json!({})),
        ("fios", json!({"train": "prefix:0.3", "matrix": "binary"})),
        ("ofios", json!({"window_dw": 1.0})),
        ("vstream", json!({"remap_dw": 0.5, "source": "region"})),
        (
            "lstm-km",
            json!({"predictor": "last", "chunks": 512, "period_dw": 0.2}),
        ),
        ("autostream-pub", json!({})),
    ] {
        let r = run(cfg(name, mix, params.clone(), writes));
        let waf = r.steady_waf.unwrap();
        assert!(
            waf < base,
            "{name} {params}: steady WAF {waf:.3} not below legacy {base:.3}"
        );
        assert!(
            r.policy_state.is_some() || name == "autostream-pub",
            "{name}"
        );
    }
}

#[test]
fn fios_reads_its_training_trace_and_reports_the_dictionary() {
    let r = run(cfg(
        "fios",
        "zipf:1.0,arrivals=mmpp",
        json!({"features": "auto", "train": "full", "acf": "gaps"}),
        4 * 16_384,
    ));
    let s = r.policy_state.unwrap();
    // Bursty arrivals, trained on the whole run (a 2.8% prefix lies inside
    // one burst state): the gaps' ACF is high (the rate's too, less so at
    // this short span) and random small writes select C.
    let acf = s["attributes"]["acf"].as_f64().unwrap();
    assert!(acf > 0.8, "ACF {acf} {s}");
    let rate = s["attributes"]["acf_rate"].as_f64().unwrap();
    assert!(rate > 0.2, "rate ACF {rate}");
    assert!(s["features"].as_str().unwrap().contains('C'), "{s}");
    assert_eq!(s["theta"].as_str().unwrap().chars().nth(1), Some('1'));
    // 16,384 blocks in chunks of 8: 2,048 chunks; BD is 4 bits per chunk.
    assert_eq!(s["chunks"], 2048);
    assert_eq!(s["bd_bytes"], 1024);
    assert_eq!(
        s["sid_bytes"].as_u64().unwrap(),
        9 * s["sid_runs"].as_u64().unwrap()
    );
    assert!(r.training.unwrap().trainings == 1);
    // Poisson arrivals: ACF near zero, neither A nor C.
    let r = run(cfg("fios", "zipf:1.0", json!({}), 4 * 16_384));
    let s = r.policy_state.unwrap();
    assert!(s["attributes"]["acf"].as_f64().unwrap().abs() < 0.1, "{s}");
    let f = s["features"].as_str().unwrap();
    assert!(!f.contains('A') && !f.contains('C'), "{f}");
}

#[test]
fn fios_features_on_a_hand_made_trace() {
    // An MSR trace: chunk 0 (sectors 0..63) written 5 times at the start,
    // chunk 1 three times, chunk 2 once at the end, in 4 KiB writes; 1 s apart.
    let dir = Scratch::new("fios");
    let t0 = 128_166_372_000_000_000u64;
    let mut lines = String::new();
    let writes = [0u64, 0, 32768, 0, 32768, 0, 32768, 0, 65536];
    for (i, off) in writes.iter().enumerate() {
        lines += &format!("{},hm,0,Write,{off},4096,100\n", t0 + i as u64 * 10_000_000);
    }
    let p = dir.file("t.csv", lines);
    let c = RunConfig {
        device: DeviceConfig {
            logical_blocks: 4096,
            segment_blocks: 16,
            op: 0.2,
            ..Default::default()
        },
        policy: "fios".into(),
        params: json!({"features": "F", "matrix": "binary", "streams": 4, "train": "full",
                       "acf": "gaps"}),
        trace: Some(wafer_core::run::TraceConfig {
            path: p,
            ..Default::default()
        }),
        writes: 1 << 40,
        ..Default::default()
    };
    let r = run(c);
    let s = r.policy_state.unwrap();
    // F = 5, 3, 1: median 3, so only chunk 0 is frequent: two distinct rows.
    assert_eq!(s["features"], "F");
    assert_eq!(s["distinct_rows"], 2);
    assert_eq!(s["clusters"], 2);
    assert_eq!(s["training_requests"], 9);
    // Writes are 1 s apart, sequential never: RW = 1, ACF constant gaps = 1.
    assert_eq!(s["attributes"]["random_write_ratio"], 1.0);
    assert_eq!(s["attributes"]["write_kib"], 4.0);
    // θ = [ACF RW R S λ]: ACF 1 and RW 1 -> C would be chosen automatically.
    assert_eq!(s["theta"], "[1 1 0 0 0]");
}

#[test]
fn ofios_rebuilds_every_window_and_logs_its_choices() {
    // Two tenants taking turns every 2 s; windows of 1 s.
    let mix =
        "mix:zipf:1.1,schedule=2:10,iops=4000+uniform,schedule=2:01,iops=4000,arrivals=mmpp:10:0.2";
    let r = run(cfg("ofios", mix, json!({"run_s": 1.0}), 4 * 16_384));
    let s = r.policy_state.unwrap();
    let windows = s["windows"].as_array().unwrap();
    assert!(windows.len() >= 10, "{}", windows.len());
    for w in windows {
        assert!(!w["psi"].as_str().unwrap().is_empty());
        assert_eq!(w["theta"].as_str().unwrap().len(), 11, "{w}");
    }
    assert_eq!(s["builds"].as_u64().unwrap() as usize, windows.len());
    assert!(r.training.unwrap().trainings >= 10);
    // A smaller training fraction still builds every window.
    let r = run(cfg(
        "ofios",
        mix,
        json!({"run_s": 1.0, "train_frac": 0.4, "features": "FC"}),
        4 * 16_384,
    ));
    let s = r.policy_state.unwrap();
    assert!(s["windows"]
        .as_array()
        .unwrap()
        .iter()
        .all(|w| w["psi"] == "FC"));
}

#[test]
fn open_stream_limit_folds_streams() {
    let mut c = cfg("fios", "zipf:1.0", json!({"streams": 16}), 3 * 16_384);
    c.device.open_streams = Some(3);
    let r = run(c);
    assert!(r.groups.len() <= 3, "{} groups", r.groups.len());
    let mut c = cfg("fios", "zipf:1.0", Value::Null, 1000);
    c.device.open_streams = Some(0);
    assert!(error_of(c).contains("open_streams"));
}

#[test]
fn the_fios_preset_is_a_disksim_device() {
    let dev = preset::apply(
        "fios-disksim",
        &DeviceConfig {
            logical_blocks: 16_384,
            ..Default::default()
        },
    )
    .unwrap();
    let mut c = cfg("fios", "zipf:1.0", json!({}), 2 * 16_384);
    c.device = dev;
    let r = run(c);
    assert_eq!(
        (r.geometry.block_size, r.geometry.segment_blocks),
        (8192, 64)
    );
    // 64 sectors of 512 B in 8 KiB blocks: chunks of 4 blocks.
    assert_eq!(r.policy_state.unwrap()["chunk_blocks"], 4);
}

#[test]
fn bad_stream_parameters_are_clear_errors() {
    let w = 20_000;
    for (name, params, needle) in [
        ("fios", json!({"streams": 0}), "streams = 0"),
        ("ofios", json!({"streams": 0}), "streams = 0"),
        ("vstream", json!({"streams": 0}), "streams = 0"),
        ("lstm-km", json!({"streams": 0}), "streams = 0"),
        ("fios", json!({"chunk_sectors": 0}), "chunk_sectors = 0"),
        ("fios", json!({"chunk_sectors": 4}), "multiple of 8"),
        (
            "fios",
            json!({"features": "FX"}),
            "unknown feature letter 'X'",
        ),
        (
            "ofios",
            json!({"features": "Q"}),
            "unknown feature letter 'Q'",
        ),
        ("fios", json!({"matrix": "octal"}), "bad parameter value"),
        ("fios", json!({"train": "half"}), "train = 'half'"),
        // Windows longer than the ~2 s these runs last, under the earlier
        // rule (by default they are scaled: `short_runs_scale_windows`).
        (
            "fios",
            json!({"train": "prefix:100s"}),
            "longer than the trace",
        ),
        (
            "ofios",
            json!({"short_run": "refuse"}),
            "longer than the run",
        ),
        (
            "ofios",
            json!({"window_dw": 5.0, "short_run": "refuse"}),
            "longer than the run",
        ),
        (
            "vstream",
            json!({"short_run": "refuse"}),
            "longer than the run",
        ),
        (
            "lstm-km",
            json!({"predictor": "last", "short_run": "refuse"}),
            "longer than the run",
        ),
        (
            "lstm-km",
            json!({"period_s": 0.5, "short_run": "refuse"}),
            "needs at least 7",
        ),
        (
            "ofios",
            json!({"short_run": "never"}),
            "bad parameter value",
        ),
        ("ofios", json!({"train_frac": 0.0}), "train_frac"),
        (
            "lstm-km",
            json!({"features": "iops"}),
            "unknown feature 'iops'",
        ),
    ] {
        let e = error_of(cfg(name, "zipf:1.0", params.clone(), w));
        assert!(e.contains(needle), "{name} {params}: {e}");
    }
}

#[test]
fn lstm_km_last_value_predictor_reports_periods() {
    let r = run(cfg(
        "lstm-km",
        "phase:0.9:0.05:0.25,move=slide",
        json!({"predictor": "last", "chunks": 256, "period_dw": 0.05}),
        3 * 16_384,
    ));
    let s = r.policy_state.unwrap();
    assert!(s["periods"].as_u64().unwrap() >= 50, "{s}");
    assert!(s["streams_used"].as_u64().unwrap() >= 2, "{s}");
    assert_eq!(s["trained"], false);
}

#[test]
fn same_seed_same_streams() {
    let mix = "mix:zipf:1.0,region=0.3+uniform,region=0.7,arrivals=mmpp";
    for (name, params) in [
        ("fios", json!({})),
        ("ofios", json!({"run_s": 0.5})),
        ("vstream", json!({"remap_s": 0.5})),
    ] {
        let a = run(cfg(name, mix, params.clone(), 2 * 16_384));
        let b = run(cfg(name, mix, params, 2 * 16_384));
        assert_eq!(a.gc_writes, b.gc_writes, "{name}");
    }
}

#[test]
fn lstm_km_without_a_trainer_is_a_clear_error() {
    // wafer-core's tests link no trainer (wafer-learn installs candle's).
    let e = error_of(cfg(
        "lstm-km",
        "zipf:1.0",
        json!({"chunks": 64, "period_dw": 0.1}),
        3 * 16_384,
    ));
    assert!(e.contains("no trainer"), "{e}");
}

#[test]
fn short_runs_scale_windows_with_a_warning() {
    // ~2 s of requests: 100 s windows (5 s periods) become a tenth of the
    // run (k + 2 periods in LSTM+KM's training prefix: 35), said in the
    // result's warnings.
    let w = 20_000;
    for (name, params, windows) in [
        ("ofios", json!({}), 10),
        ("vstream", json!({"source": "region"}), 10),
        ("lstm-km", json!({"predictor": "last", "chunks": 64}), 10),
    ] {
        let r = run(cfg(name, "zipf:1.0", params.clone(), w));
        let codes: Vec<&str> = r.warnings.iter().map(|x| x.code).collect();
        assert!(codes.contains(&"window-scaled"), "{name}: {codes:?}");
        let s = r.policy_state.unwrap();
        let n = match name {
            "ofios" => s["windows_seen"].as_u64().unwrap(),
            "vstream" => s["remaps"].as_u64().unwrap() + 1,
            _ => s["periods"].as_u64().unwrap(),
        };
        assert!(n + 1 >= windows, "{name}: {n} windows");
    }
    // A window the run holds is kept, and nothing is said.
    let r = run(cfg("ofios", "zipf:1.0", json!({"run_s": 0.5}), w));
    assert!(r.warnings.iter().all(|x| x.code != "window-scaled"));
    assert_eq!(r.policy_state.unwrap()["window"]["run_s"], 0.5);
}

#[test]
fn vstream_on_one_tenant_warns_it_is_base() {
    let w = 3 * 16_384;
    let r = run(cfg("vstream", "zipf:1.0", json!({"remap_s": 0.2}), w));
    let base = run(cfg("base", "zipf:1.0", Value::Null, w));
    assert!(r.warnings.iter().any(|x| x.code == "single-virtual-stream"));
    assert_eq!(r.gc_writes, base.gc_writes, "one virtual stream is base");
    let mix = "mix:zipf:1.2,region=0.3+uniform,region=0.7";
    let r = run(cfg("vstream", mix, json!({"remap_s": 0.2}), w));
    assert!(r.warnings.iter().all(|x| x.code != "single-virtual-stream"));
}

/// An MSR trace of `n` 4 KiB writes 1 ms apart: the first `same` write to
/// chunks 0..8 in turn, the rest to chunks `from..from + spread` in turn.
fn two_phase_trace(dir: &Scratch, name: &str, n: u64, same: u64, spread: u64) -> String {
    let t0 = 128_166_372_000_000_000u64;
    let mut lines = String::new();
    for i in 0..n {
        let chunk = if i < same { i % 8 } else { 100 + i % spread };
        lines += &format!(
            "{},hm,0,Write,{},4096,100\n",
            t0 + i * 10_000,
            chunk * 32_768
        );
    }
    dir.file(name, lines)
}

#[test]
fn fios_never_reads_past_its_training_prefix() {
    // Two traces that agree on their first 400 of 4,000 writes and then
    // spread over 64 or 7 chunks: the default (a causal prefix, 2.8% of the
    // writes = 112) builds the same dictionary from both, from exactly the
    // prefix's requests; train=full (future knowledge) does not.
    let dir = Scratch::new("fios-causal");
    let a = two_phase_trace(&dir, "a.csv", 4000, 400, 64);
    let b = two_phase_trace(&dir, "b.csv", 4000, 400, 7);
    let run_on = |path: &str, params: Value| {
        run(RunConfig {
            device: DeviceConfig {
                logical_blocks: 4096,
                segment_blocks: 16,
                op: 0.2,
                ..Default::default()
            },
            policy: "fios".into(),
            params,
            trace: Some(wafer_core::run::TraceConfig {
                path: path.into(),
                ..Default::default()
            }),
            writes: 1 << 40,
            ..Default::default()
        })
    };
    let dictionary = |r: &wafer_core::RunResult| {
        let s = r.policy_state.clone().unwrap();
        (
            s["training_requests"].clone(),
            s["features"].clone(),
            s["centers"].clone(),
            s["sid_runs"].clone(),
            s["streams_used"].clone(),
        )
    };
    let (ra, rb) = (run_on(&a, Value::Null), run_on(&b, Value::Null));
    assert_eq!(dictionary(&ra).0, 112, "the prefix's requests only");
    assert_eq!(dictionary(&ra), dictionary(&rb));
    assert_eq!(ra.policy_state.as_ref().unwrap()["future_knowledge"], false);
    assert!(ra.warnings.iter().all(|w| w.code != "future-knowledge"));
    let full = json!({"train": "full"});
    let (fa, fb) = (run_on(&a, full.clone()), run_on(&b, full));
    assert_eq!(dictionary(&fa).0, 4000);
    assert_ne!(
        dictionary(&fa),
        dictionary(&fb),
        "the control: the rest differs"
    );
    assert!(fa.warnings.iter().any(|w| w.code == "future-knowledge"));
}

/// `n` small random writes (4-16 KiB, 4 KiB aligned, over 256 MiB) in the
/// rhythm of a real volume: an hour busy, two hours quiet, repeated over
/// `hours`, arrivals random within each 10-minute stretch; one line each
/// by `line(time_ns, offset_bytes, size_bytes)`.
fn bursty_trace(n: u64, hours: u64, line: impl Fn(u64, u64, u64) -> String) -> String {
    let stretch = 600_000_000_000u64; // 10 min [ns]
    let stretches = hours * 6;
    // Busy stretches get four times the writes of quiet ones.
    let weight = |k: u64| if (k / 6).is_multiple_of(3) { 4 } else { 1 };
    let total: u64 = (0..stretches).map(weight).sum();
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut out = String::new();
    for k in 0..stretches {
        let m = n * weight(k) / total;
        let mut times: Vec<u64> = (0..m).map(|_| k * stretch + next() % stretch).collect();
        times.sort_unstable();
        for t in times {
            let off = (next() % 65_532) * 4096;
            let size = 4096 * (1 + next() % 4);
            out += &line(t, off, size);
        }
    }
    out
}

#[test]
fn automatic_selection_on_real_trace_layouts() {
    // Three layouts of the same kind of volume (bursty over hours, random
    // small writes): the write rate's ACF is high (the paper's Table 3 has
    // 0.92-0.99 for MSR), the consecutive gaps' is not, so FIOS selects
    // coherency (ACF and RW High, §3.6) and says why; the gaps' ACF (the
    // earlier rule) leaves no row of B and falls back to F.
    let dir = Scratch::new("fios-layouts");
    let msr = bursty_trace(60_000, 9, |t, off, size| {
        format!(
            "{},hm,0,Write,{off},{size},100\n",
            128_166_372_000_000_000 + t / 100
        )
    });
    let alibaba = bursty_trace(60_000, 9, |t, off, size| {
        format!("7,W,{off},{size},{}\n", 1_577_808_000_000_000 + t / 1000)
    });
    let tencent = bursty_trace(60_000, 9, |t, off, size| {
        format!(
            "{},{},{},1,1283\n",
            1_538_323_200 + t / 1_000_000_000,
            off / 512,
            size / 512
        )
    });
    for (name, text) in [
        ("msr.csv", msr),
        ("ali.csv", alibaba),
        ("tencent.csv", tencent),
    ] {
        let path = dir.file(name, text);
        let run_with = |acf: &str| {
            run(RunConfig {
                device: DeviceConfig {
                    logical_blocks: 1 << 16,
                    segment_blocks: 64,
                    op: 0.2,
                    ..Default::default()
                },
                policy: "fios".into(),
                params: json!({"train": "full", "acf": acf}),
                trace: Some(wafer_core::run::TraceConfig {
                    path: path.clone(),
                    ..Default::default()
                }),
                writes: 1 << 40,
                ..Default::default()
            })
            .policy_state
            .unwrap()
        };
        let s = run_with("rate");
        let sel = &s["selection"];
        assert_eq!(sel["fell_back"], false, "{name}: {sel}");
        assert!(
            s["features"].as_str().unwrap().contains('C'),
            "{name}: {sel}"
        );
        assert!(
            s["attributes"]["acf_rate"].as_f64().unwrap() > 0.5,
            "{name}: {s}"
        );
        assert!(
            s["attributes"]["acf_gaps"].as_f64().unwrap() < 0.5,
            "{name}: {s}"
        );
        let reason = sel["reason"].as_str().unwrap();
        assert!(
            reason.starts_with(s["features"].as_str().unwrap()),
            "{reason}"
        );
        assert!(
            reason.contains("ACF") && reason.contains(">= 0.5"),
            "{reason}"
        );
        // Row 5 (F) needs R, which this volume does not have.
        assert_eq!(sel["rows"][4]["low"], json!(["R"]), "{name}: {sel}");
        let g = run_with("gaps");
        assert_eq!(
            g["selection"]["fell_back"], true,
            "{name}: {}",
            g["selection"]
        );
        assert_eq!(g["features"], "F");
    }
}
