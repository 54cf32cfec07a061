//! Checkpoints (issue 15): a run stopped at any point and resumed from its
//! checkpoint ends with exactly the uninterrupted run's result, for every
//! registered policy and victim selector; bad checkpoints are clear errors.

use super::{device, Scratch};
use wafer_core::run::TraceConfig;
use wafer_core::{policy, victim, Error, RunConfig, RunResult, Simulation};

fn strip(r: RunResult) -> serde_json::Value {
    wafer_core::run::checkpoint::comparable(&r)
}

/// Assert the uninterrupted and the resumed result are the same.
fn same(a: &serde_json::Value, b: &serde_json::Value, what: &str) {
    let mut d = wafer_core::run::checkpoint::differences(a, b);
    d.truncate(8);
    assert!(d.is_empty(), "{what}: resumed run differs: {d:#?}");
}

fn cfg(policy: &str, victim: &str) -> RunConfig {
    RunConfig {
        device: device(20_000, 0.1, 64),
        policy: policy.into(),
        victim: victim.into(),
        params: match policy {
            "nodap" => serde_json::json!({"search": false}),
            "oracle-sort" => serde_json::json!({"groups": 6}),
            "ofios" => serde_json::json!({"run_s": 0.5}),
            "vstream" => serde_json::json!({"remap_s": 0.5}),
            _ => serde_json::Value::Null,
        },
        // Requests of several sizes, reads, a phase change.
        workload: "mix:zipf:0.9,size=1-8+hotcold:0.9:0.1,reads=0.2+phase".into(),
        writes: 120_000,
        seed: 7,
        ..Default::default()
    }
}

/// Run `c` uninterrupted; then again, stopped after each of `stops` user
/// blocks, checkpointed, dropped and resumed from the file; both results.
fn both(c: RunConfig, stops: &[u64]) -> (serde_json::Value, serde_json::Value) {
    let dir = Scratch::new("ckpt");
    let path = dir.path().join("run.ckpt");
    let mut whole = Simulation::new(c.clone()).unwrap();
    whole.run().unwrap();
    let mut sim = Simulation::new(c).unwrap();
    for &at in stops {
        while sim.written() < at {
            sim.step(at - sim.written()).unwrap();
            // A learned policy's training in flight: go on a little.
            if sim.written() >= at && !sim.checkpoint_ready() {
                sim.step(64).unwrap();
            }
        }
        sim.save_checkpoint(&path).unwrap();
        drop(sim);
        sim = Simulation::resume(&path).unwrap();
    }
    sim.run().unwrap();
    sim.engine().check().unwrap();
    (strip(whole.result()), strip(sim.result()))
}

#[test]
fn every_policy_resumes_to_the_uninterrupted_result() {
    for p in policy::REGISTRY
        .iter()
        .filter(|p| p.family != policy::Family::Learned)
    {
        for v in ["greedy", "cost-benefit"] {
            let (a, b) = both(cfg(p.name, v), &[777, 61_003]);
            same(&a, &b, &format!("{}/{v}", p.name));
        }
    }
}

#[test]
fn every_victim_selector_resumes_to_the_uninterrupted_result() {
    for v in victim::SELECTORS {
        let policy = match v.name {
            "multilog" => "multilog",
            "adjusted-greedy" => "sepbit",
            _ => "two-r",
        };
        let (a, b) = both(cfg(policy, v.name), &[50_001]);
        same(&a, &b, &format!("{policy}/{}", v.name));
    }
}

#[test]
fn oracle_assists_and_peer_setups_resume() {
    // An annotated future (its cursor is state), a wrapper policy, and the
    // replayer's conventions (garbage at seal, per-request GC).
    let cache = Scratch::new("ckpt-cache");
    for (policy, setup) in [
        ("sepbit+nu", "wafer"),
        ("oracle-hotcold", "wafer"),
        ("sepbit", "sepbit-replayer"),
        ("midas", "midas-sim"),
    ] {
        let mut c = cfg(policy, "cost-benefit");
        c.setup = serde_json::from_value(serde_json::json!(setup)).unwrap();
        c.accuracy = true;
        c.cache_dir = Some(cache.dir());
        let (a, b) = both(c, &[30_000, 90_000]);
        same(&a, &b, &format!("{policy} under {setup}"));
    }
}

#[test]
fn a_trace_replay_resumes_at_its_position() {
    let dir = Scratch::new("ckpt-trace");
    let mut text = String::new();
    let mut x: u64 = 1;
    for i in 0..40_000u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let lba = (x >> 33) % 3000 * 4096;
        let op = if i % 7 == 0 { "Read" } else { "Write" };
        text += &format!(
            "{},hm,0,{op},{lba},{},0\n",
            128166372000000000u64 + i * 1000,
            4096 * (1 + i % 3)
        );
    }
    let p = dir.file("hm_0.csv", &text);
    let c = RunConfig {
        device: wafer_core::DeviceConfig {
            segment_blocks: 16,
            ..Default::default()
        },
        trace: Some(TraceConfig {
            path: p.clone(),
            capacity_from_trace: true,
            ..Default::default()
        }),
        policy: "sepbit".into(),
        victim: "cost-benefit".into(),
        writes: u64::MAX,
        ..Default::default()
    };
    let (a, b) = both(c.clone(), &[10_001, 50_000]);
    same(&a, &b, "sepbit on an MSR trace");

    // A trace that changed since is refused, naming the checkpoint.
    let mut sim = Simulation::new(c).unwrap();
    sim.step(5000).unwrap();
    let ck = dir.path().join("t.ckpt");
    sim.save_checkpoint(&ck).unwrap();
    std::fs::write(&p, &text[..text.len() / 2]).unwrap();
    let e = Simulation::resume(&ck)
        .err()
        .expect("a changed trace is refused");
    assert!(
        matches!(&e, Error::Checkpoint { file, reason } if file.ends_with("t.ckpt") && reason.contains("changed")),
        "{e}"
    );
}

#[test]
fn bad_checkpoints_are_clear_errors() {
    let dir = Scratch::new("ckpt-bad");
    let not = dir.file("not.ckpt", "hello, this is not a checkpoint");
    let e = Simulation::resume(not.as_ref()).err().unwrap();
    assert!(e.to_string().contains("not a wafer checkpoint"), "{e}");

    let path = dir.path().join("run.ckpt");
    let mut sim = Simulation::new(cfg("sepbit", "greedy")).unwrap();
    sim.step(10_000).unwrap();
    sim.save_checkpoint(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let cut = dir.file("cut.ckpt", &bytes[..bytes.len() * 2 / 3]);
    let e = Simulation::resume(cut.as_ref()).err().unwrap();
    assert!(
        matches!(&e, Error::Checkpoint { file, reason } if file.ends_with("cut.ckpt") && reason.contains("corrupt")),
        "{e}"
    );
    let missing = dir.path().join("missing.ckpt");
    let e = Simulation::resume(&missing).err().unwrap();
    assert!(e.to_string().contains("cannot read"), "{e}");
}

#[test]
fn a_timed_replay_says_it_cannot_be_checkpointed() {
    let dir = Scratch::new("ckpt-timed");
    let mut c = cfg("base", "greedy");
    c.timing = Some(wafer_core::timing::TimingRun {
        ssd: super::timing::tiny(),
        fit_device: true,
        ..Default::default()
    });
    c.device = device(8000, 0.2, 64);
    c.writes = 2000;
    let mut sim = Simulation::new(c).unwrap();
    sim.step(1000).unwrap();
    let e = sim
        .save_checkpoint(&dir.path().join("t.ckpt"))
        .err()
        .unwrap();
    assert!(e.to_string().contains("timed replay"), "{e}");
}
