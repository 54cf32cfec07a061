// scratch: run RunConfig JSONs (one per line on stdin), print summary
use wafer_core::{RunConfig, Simulation};
fn main() {
    wafer_learn::install();
    let mut line = String::new();
    while std::io::stdin().read_line(&mut line).unwrap() > 0 {
        let cfg: RunConfig = serde_json::from_str(line.trim()).expect("json");
        let label = format!("{} {} {}", cfg.policy, cfg.params, cfg.workload);
        match Simulation::new(cfg) {
            Err(e) => println!("{label}: ERROR {e}"),
            Ok(mut sim) => {
                let e = sim.run();
                let r = sim.result();
                let st = r
                    .policy_state
                    .as_ref()
                    .map(|s| {
                        let mut s = s.clone();
                        if let Some(o) = s.as_object_mut() {
                            o.remove("windows");
                            o.remove("centers");
                            o.remove("attributes");
                        }
                        s.to_string()
                    })
                    .unwrap_or_default();
                println!(
                    "{label}: steady {:.4} waf {:.4} {:.2}Mw/s {:.2}s train {:?} err {:?} | {}",
                    r.steady_waf.unwrap_or(f64::NAN),
                    r.waf.unwrap_or(f64::NAN),
                    r.user_writes_per_second / 1e6,
                    r.elapsed_seconds,
                    r.training.map(|t| (t.trainings, t.seconds)),
                    e.err().map(|e| e.to_string()),
                    &st[..st.len().min(600)]
                );
            }
        }
        line.clear();
    }
}
