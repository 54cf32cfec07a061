use wafer_core::{RunConfig, Simulation};
fn main() {
    wafer_learn::install();
    let args: Vec<String> = std::env::args().collect();
    let cfg: RunConfig = serde_json::from_str(&args[1]).expect("config json");
    let mut sim = Simulation::new(cfg).expect("config");
    if let Err(e) = sim.run() {
        eprintln!("run failed: {e}");
    }
    let r = sim.result();
    let acc = r.accuracy.as_ref().and_then(|a| a.user.as_ref()).map(|u| {
        (
            u.accuracy,
            u.binary.as_ref().map(|b| (b.precision, b.recall, b.f1)),
        )
    });
    println!("{} waf {:.4} steady {:?} extra {:?} speed {:.3}M/s elapsed {:.1}s acc {:?} victims {} bg {} gc {:?}",
        r.policy, r.waf.unwrap_or(f64::NAN), r.steady_waf, r.extra_writes_per_user_write, r.user_writes_per_second/1e6, r.elapsed_seconds, acc, r.counters.victims, r.counters.background_victims, r.gc);
    if let Some(t) = r.training {
        println!("training {}", serde_json::to_string(&t).unwrap());
    }
    if std::env::var_os("X_STATE").is_some() {
        if let Some(s) = r.policy_state {
            let mut s = s;
            if std::env::var_os("X_HIST").is_none() {
                s["history"] = serde_json::Value::Null;
            }
            println!("state {}", s);
        }
    }
    if std::env::var_os("X_GROUPS").is_some() {
        for g in &r.groups {
            println!(
                "group {} user {} gc {} segs {} life {:?}",
                g.group,
                g.user_writes,
                g.gc_writes,
                g.segments,
                g.lifetime.map(|l| (l.p10, l.median, l.p90))
            );
        }
    }
    for w in &r.warnings {
        println!("warning {}: {}", w.code, w.message);
    }
}
