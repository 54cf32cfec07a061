//! Shiro end to end with the trainer: online training at each window's end
//! (Algorithm 1's threshold, the bootstrap then one epoch per window),
//! accuracy of the short class per window, the Q-learning agent and the
//! metadata cache at work, the ablations, models saved and reloaded, and
//! bad models and parameters as errors naming what is wrong.

use serde_json::{json, Value};
use wafer_core::{DeviceConfig, RunConfig, RunResult, Simulation};

/// A small device of 16 KiB pages in the paper's shape (the preset keeps
/// 171 superblocks), an empty drive, a skewed workload with reads.
fn cfg(policy: &str, params: Value) -> RunConfig {
    let mut device = DeviceConfig::preset("shiro", 256 << 20).unwrap(); // 16,384 pages
    device.warmup_drive_writes = 1.0;
    device.window_drive_writes = 0.5;
    RunConfig {
        device,
        policy: policy.into(),
        victim: "cost-benefit".into(),
        workload: "zipf:1.0,size=1-4,reads=0.2".into(),
        writes: 6 << 14,
        seed: 3,
        params,
        accuracy: true,
        ..Default::default()
    }
}

fn quick() -> Value {
    json!({"window": 0.1, "train_fraction": 0.5, "bootstrap_epochs": 8, "batch": 64, "lr": 3e-3})
}

fn run(c: RunConfig) -> RunResult {
    wafer_learn::install();
    let mut sim = Simulation::new(c).expect("valid config");
    sim.run().expect("run completes");
    sim.engine().check().expect("invariants hold");
    sim.result()
}

fn extra(r: &RunResult) -> f64 {
    r.extra_writes_per_user_write.unwrap()
}

#[test]
fn shiro_trains_online_predicts_the_short_class_and_learns_gc_placement() {
    let r = run(cfg("shiro", quick()));
    let s = r.policy_state.as_ref().unwrap();
    // Windows of 0.1 C over 6 C: about 59 ends, each training after the first.
    let t = r.training.unwrap();
    assert!(t.trainings >= 40, "{t:?}");
    assert_eq!(s["model_on"], true);
    assert!(s["threshold"].as_u64().unwrap() > 0, "{s}");
    let h = s["history"].as_array().unwrap();
    assert_eq!(h[0]["pick"]["how"], "inflection");
    assert!(h[0]["epochs"].as_u64().unwrap() >= 1);
    assert!(
        h[3]["pick"]["candidates"].as_array().unwrap().len() == 3,
        "{}",
        h[3]
    );
    assert_eq!(h[3]["epochs"], 1, "one epoch after the first window");
    // Accuracy of the short class, overall and per window (Table V, Fig. 8).
    let acc = r.accuracy.as_ref().unwrap().user.as_ref().unwrap();
    assert_eq!(acc.classes, 2);
    let b = acc.binary.as_ref().unwrap();
    assert!(
        acc.accuracy > 0.6 && b.f1.unwrap() > 0.5,
        "{} {:?}",
        acc.accuracy,
        b.f1
    );
    let last = r.windows.last().unwrap();
    assert!(last.cumulative_user_f1.is_some() && last.user_precision.is_some());
    // The agent decided, explored at about 1%, and got its delayed rewards.
    let q = &s["q_learning"]["stats"];
    let decisions = q["decisions"].as_u64().unwrap();
    assert!(decisions > 1000, "{q}");
    let explored = q["explored"].as_u64().unwrap() as f64 / decisions as f64;
    assert!(explored > 0.002 && explored < 0.03, "{explored}");
    assert!(q["rewarded_gcs"].as_u64().unwrap() > 0, "{q}");
    assert_eq!(s["q_learning"]["states"], 90_000);
    // Metadata: lookups, a hit rate, RAM per page.
    let m = &s["metadata"];
    assert!(
        m["lookups"].as_u64().unwrap() > 0 && m["hit_rate"].as_f64().is_some(),
        "{m}"
    );
    // Same seed, same run.
    assert_eq!(run(cfg("shiro", quick())).gc_writes, r.gc_writes);
    // Separation helps: below Base (one group, cost-benefit).
    let base = run(cfg("base", Value::Null));
    assert!(
        extra(&r) < extra(&base),
        "shiro {} vs base {}",
        extra(&r),
        extra(&base)
    );
}

#[test]
fn ablations_and_phftl_run_with_their_groups() {
    let ng = run(cfg("shiro-ng", quick()));
    assert_eq!(ng.groups.len(), 4, "SHORT, LONG, UNSEEN, one GC group");
    assert!(ng
        .policy_state
        .as_ref()
        .unwrap()
        .get("q_learning")
        .is_none());
    let mut p = quick();
    p["seq_len"] = json!(1);
    let one = run(cfg("shiro", p));
    assert!(one.accuracy.as_ref().unwrap().user.is_some());
    let ph = run(cfg("phftl", quick()));
    assert_eq!(ph.groups.len(), 7);
    assert_eq!(
        ph.accuracy.as_ref().unwrap().user.as_ref().unwrap().classes,
        2
    );
    // Shiro with the configured selector: adjusted-greedy gets its hint.
    let mut p = quick();
    p["own_victims"] = json!(false);
    let mut c = cfg("shiro", p);
    c.victim = "adjusted-greedy".into();
    let sel = run(c);
    let own = run(cfg("shiro", quick()));
    assert_eq!(sel.gc_writes, own.gc_writes, "same Eq. 1 either way");
}

#[test]
fn models_reload_frozen_and_bad_input_is_a_clear_error() {
    wafer_learn::install();
    let dir = std::env::temp_dir().join(format!("wafer-shiro-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut sim = Simulation::new(cfg("shiro", quick())).unwrap();
    sim.run().unwrap();
    let model = sim.engine().policy_model().expect("a trained model");
    assert_eq!(model.metadata["policy"], "shiro");
    assert!(model.metadata.contains_key("threshold"));
    let path = dir.join("shiro.safetensors");
    model.save(&path).unwrap();
    let p = json!({"model": path.to_str().unwrap(), "online": false});
    let r = run(cfg("shiro", p));
    assert_eq!(r.training.unwrap().trainings, 0);
    let s = r.policy_state.unwrap();
    assert_eq!(s["threshold"].as_str(), None);
    assert!(
        s["threshold"].as_u64().unwrap() > 0,
        "T from the model file"
    );
    // Another policy's model, a model of another shape.
    let mut other = model.clone();
    other.metadata.insert("policy".into(), "dogi".into());
    let f = dir.join("other.safetensors");
    other.save(&f).unwrap();
    let e = Simulation::new(cfg("shiro", json!({"model": f.to_str().unwrap()})))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("a model for policy 'dogi'"), "{e}");
    let e = Simulation::new(cfg(
        "shiro",
        json!({"model": path.to_str().unwrap(), "hidden": 16}),
    ))
    .err()
    .unwrap()
    .to_string();
    assert!(
        e.contains("gru.cell.weight_ih") && e.contains("[48, 24]"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
    // Parameters out of range name the parameter and the accepted range.
    for (params, want) in [
        (
            json!({"window": 0}),
            "window = 0 is out of range; accepted: (0, 1]",
        ),
        (
            json!({"epsilon": 1.5}),
            "epsilon = 1.5 is out of range; accepted: [0, 1]",
        ),
        (
            json!({"gc_levels": 0}),
            "gc_levels = 0 is out of range; accepted: 1 to 8",
        ),
        (json!({"seq_len": 0}), "seq_len = 0 is out of range"),
        (
            json!({"state": "f16"}),
            "state = 'f16' is out of range; accepted: 'int8' or 'f32'",
        ),
        (json!({"online": false}), "needs a trained model"),
    ] {
        let e = Simulation::new(cfg("shiro", params.clone()))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains(want), "{params}: {e}");
    }
    let e = Simulation::new(cfg("phftl", json!({"window": 0})))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("window = 0"), "{e}");
}

#[test]
fn gc_credit_training_floor_and_unseen_labels_are_parameters() {
    // Decision credit (the default) and the paper's shared credit: both
    // learn, reported, and they place GC pages differently.
    let dec = run(cfg("shiro", quick()));
    let mut p = quick();
    p["q_credit"] = json!("gc");
    let gc = run(cfg("shiro", p));
    let q = |r: &RunResult| r.policy_state.as_ref().unwrap()["q_learning"].clone();
    assert_eq!(q(&dec)["credit"], "decision");
    assert_eq!(q(&gc)["credit"], "gc");
    assert!(q(&dec)["stats"]["updates"].as_u64().unwrap() > 0);
    assert_ne!(q(&dec)["q_mean"], q(&gc)["q_mean"], "different rewards");
    // A floor on the Adam steps: later windows run more than one epoch.
    let mut p = quick();
    p["min_steps"] = json!(12);
    // (The training options need no GC: half the writes.)
    let short = |policy: &str, p: Value| RunConfig {
        writes: 3 << 14,
        ..cfg(policy, p)
    };
    let floor = run(short("shiro", p));
    let h = floor.policy_state.as_ref().unwrap()["history"].clone();
    let later: Vec<u64> = h.as_array().unwrap()[3..]
        .iter()
        .filter(|w| w["trained_on"].as_u64().unwrap() > 0)
        .map(|w| w["epochs"].as_u64().unwrap())
        .collect();
    assert!(
        !later.is_empty() && later.iter().all(|&e| e > 1),
        "{later:?}"
    );
    // Writes not rewritten within the window, at least T old, join LONG.
    let mut p = quick();
    p["label_unseen"] = json!("long");
    let long = run(short("shiro", p));
    let sum = |r: &RunResult, key: &str| -> u64 {
        r.policy_state.as_ref().unwrap()["history"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w[key].as_u64().unwrap())
            .sum()
    };
    assert!(sum(&long, "unseen_long") > 0);
    assert_eq!(sum(&dec, "unseen_long"), 0);
    for (params, want) in [
        (json!({"q_credit": "page"}), "bad parameter value"),
        (json!({"label_unseen": "short"}), "bad parameter value"),
        (json!({"min_steps": 1_000_000}), "min_steps = 1000000"),
    ] {
        let e = Simulation::new(cfg("shiro", params.clone()))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains(want), "{params}: {e}");
    }
    // PHFTL takes the same classifier parameters.
    let mut p = quick();
    p["label_unseen"] = json!("long");
    p["min_steps"] = json!(8);
    assert!(run(short("phftl", p)).training.unwrap().trainings > 0);
}
