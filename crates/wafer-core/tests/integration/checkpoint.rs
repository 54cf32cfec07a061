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

/// A small run checkpointed halfway: its config, the file's bytes, and the
/// uninterrupted result.
fn small_checkpoint(dir: &Scratch) -> (std::path::PathBuf, Vec<u8>, serde_json::Value) {
    let c = RunConfig {
        device: device(2_000, 0.15, 16),
        policy: "two-r".into(),
        workload: "hotcold:0.8:0.2".into(),
        writes: 6_000,
        seed: 3,
        ..Default::default()
    };
    let mut whole = Simulation::new(c.clone()).unwrap();
    whole.run().unwrap();
    let path = dir.path().join("small.ckpt");
    let mut sim = Simulation::new(c).unwrap();
    sim.step(3_000).unwrap();
    sim.save_checkpoint(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    (path, bytes, strip(whole.result()))
}

#[test]
#[cfg(unix)]
fn every_flipped_byte_is_refused_or_resumes_to_the_same_result() {
    // Issue 42: a corrupt checkpoint is an error naming the file, never a
    // panic or a different result. Every byte of a small checkpoint is
    // flipped in turn (all eight bits), then one random bit of each. The
    // byte is flipped in place and back (rewriting the whole file each
    // time costs more than the resume on a disk-backed temp dir).
    use std::os::unix::fs::FileExt;
    let dir = Scratch::new("ckpt-flip");
    let (_, bytes, want) = small_checkpoint(&dir);
    let bad = dir.path().join("flipped.ckpt");
    let bad_name = bad.display().to_string();
    std::fs::write(&bad, &bytes).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&bad).unwrap();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let (mut refused, mut resumed) = (0, 0);
    for pass in 0..2 {
        for (i, &byte) in bytes.iter().enumerate() {
            let mask = if pass == 0 {
                0xff
            } else {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                1 << (x >> 61)
            };
            file.write_at(&[byte ^ mask], i as u64).unwrap();
            let out = std::panic::catch_unwind(|| match Simulation::resume(&bad) {
                Ok(mut s) => {
                    s.run().unwrap();
                    Ok(strip(s.result()))
                }
                Err(e) => Err(e),
            });
            file.write_at(&[byte], i as u64).unwrap();
            match out {
                Err(_) => panic!("byte {i} (pass {pass}) flipped: resume panicked"),
                Ok(Err(Error::Checkpoint { file, .. })) => {
                    assert_eq!(file, bad_name, "byte {i}: the error names the file");
                    refused += 1;
                }
                Ok(Err(e)) => panic!("byte {i} flipped: not a checkpoint error: {e}"),
                Ok(Ok(got)) => {
                    same(&want, &got, &format!("byte {i} flipped"));
                    resumed += 1;
                }
            }
        }
    }
    assert_eq!(refused + resumed, 2 * bytes.len());
    assert_eq!(resumed, 0, "the checksum covers every byte of the state");
    // Unflipped, it resumes to the uninterrupted result.
    let mut s = Simulation::resume(&bad).unwrap();
    s.run().unwrap();
    same(&want, &strip(s.result()), "unflipped");
}

/// The checkpoint `bytes` with its stored configuration edited by `edit`
/// and its checksum made right again (as a crafted or spliced file would
/// be): the body is bincode of (version, config JSON, position, state),
/// strings as a u64 length and their bytes.
fn with_config(bytes: &[u8], edit: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
    use wafer_core::run::checkpoint::HEADER_BYTES;
    let body = &bytes[HEADER_BYTES..];
    let len = |at: usize| u64::from_le_bytes(body[at..at + 8].try_into().unwrap()) as usize;
    let v = len(0);
    let c0 = 8 + v;
    let c = len(c0);
    let mut cfg: serde_json::Value = serde_json::from_slice(&body[c0 + 8..c0 + 8 + c]).unwrap();
    edit(&mut cfg);
    let text = cfg.to_string();
    let mut nb = body[..c0].to_vec();
    nb.extend_from_slice(&(text.len() as u64).to_le_bytes());
    nb.extend_from_slice(text.as_bytes());
    nb.extend_from_slice(&body[c0 + 8 + c..]);
    let mut out = bytes[..12].to_vec();
    out.extend_from_slice(&(nb.len() as u64).to_le_bytes());
    out.extend_from_slice(&xxhash_rust::xxh3::xxh3_64(&nb).to_le_bytes());
    out.extend_from_slice(&nb);
    out
}

#[test]
fn a_state_is_resumed_only_under_its_own_configuration() {
    let dir = Scratch::new("ckpt-bound");
    let (path, bytes, want) = small_checkpoint(&dir);
    // The file as written resumes (the splice helper changes nothing by itself).
    std::fs::write(&path, with_config(&bytes, |_| {})).unwrap();
    let mut s = Simulation::resume(&path).unwrap();
    s.run().unwrap();
    same(&want, &strip(s.result()), "unedited");
    type Edit = fn(&mut serde_json::Value);
    let edits: [(&str, Edit); 6] = [
        ("policy", |c| c["policy"] = "base".into()),
        ("victim", |c| c["victim"] = "cost-benefit".into()),
        ("seed", |c| c["seed"] = 4.into()),
        ("device", |c| c["device"]["op"] = 0.2.into()),
        ("setup", |c| c["setup"] = "midas-sim".into()),
        ("writes", |c| c["writes"] = 7_000.into()),
    ];
    for (what, edit) in edits {
        let p = dir.path().join(format!("{what}.ckpt"));
        std::fs::write(&p, with_config(&bytes, edit)).unwrap();
        let e = Simulation::resume(&p).err().unwrap_or_else(|| {
            panic!("a checkpoint whose configuration has another {what} is refused")
        });
        let msg = e.to_string();
        assert!(
            matches!(&e, Error::Checkpoint { file, reason }
                if file.ends_with(&format!("{what}.ckpt")) && reason.contains("settings")),
            "{what}: {msg}"
        );
    }
}

#[test]
fn header_is_checked_before_the_body_is_read() {
    use wafer_core::run::checkpoint::{stored_config, HEADER_BYTES};
    let dir = Scratch::new("ckpt-head");
    let (path, bytes, _) = small_checkpoint(&dir);
    assert_eq!(stored_config(&path).unwrap().policy, "two-r");
    // A format-1 file (no length or checksum) is named by its format.
    let mut old = bytes.clone();
    old[8..12].copy_from_slice(&1u32.to_le_bytes());
    let p = dir.file("old.ckpt", &old);
    let e = Simulation::resume(p.as_ref()).err().unwrap().to_string();
    assert!(e.contains("format 1") && e.contains("old.ckpt"), "{e}");
    // A header claiming an enormous body is refused from the file's size
    // (nothing of that size is allocated or read).
    let mut huge = bytes.clone();
    huge[12..20].copy_from_slice(&(u64::MAX / 2).to_le_bytes());
    let p = dir.file("huge.ckpt", &huge);
    let e = stored_config(p.as_ref()).err().unwrap().to_string();
    assert!(e.contains("corrupt") && e.contains("huge.ckpt"), "{e}");
    // A file ending inside the header.
    let p = dir.file("head.ckpt", &bytes[..HEADER_BYTES - 3]);
    let e = Simulation::resume(p.as_ref()).err().unwrap().to_string();
    assert!(e.contains("corrupt") && e.contains("head.ckpt"), "{e}");
    // stored_config verifies the checksum too.
    let mut flipped = bytes.clone();
    *flipped.last_mut().unwrap() ^= 1;
    let p = dir.file("flip.ckpt", &flipped);
    let e = stored_config(p.as_ref()).err().unwrap().to_string();
    assert!(e.contains("checksum"), "{e}");
}

#[test]
fn a_trace_edited_in_place_is_refused_on_resume() {
    // Issue 42: the size alone let a same-size edit through.
    let dir = Scratch::new("ckpt-edit");
    let mut text = String::new();
    for i in 0..6_000u64 {
        let lba = (i * 7919) % 1500 * 4096;
        text += &format!(
            "{},hm,0,Write,{lba},4096,0\n",
            128166372000000000u64 + i * 1000
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
        writes: u64::MAX,
        ..Default::default()
    };
    let ck = dir.path().join("t.ckpt");
    let mut sim = Simulation::new(c).unwrap();
    sim.step(3_000).unwrap();
    sim.save_checkpoint(&ck).unwrap();
    // The same trace resumes.
    Simulation::resume(&ck).unwrap();
    // One digit of an early request's timestamp changed, the size kept.
    let at = text.find("\n128166372000").unwrap() + 14;
    let mut edited = text.into_bytes();
    edited[at] = if edited[at] == b'5' { b'6' } else { b'5' };
    std::fs::write(&p, &edited).unwrap();
    let e = Simulation::resume(&ck)
        .err()
        .expect("a same-size edit is refused");
    assert!(
        matches!(&e, Error::Checkpoint { file, reason }
            if file.ends_with("t.ckpt") && reason.contains(p.as_str()) && reason.contains("changed")),
        "{e}"
    );
}
