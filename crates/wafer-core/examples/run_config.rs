//! Run one replay from a JSON run configuration and print its result as
//! JSON, without Python: `cargo run --release --example run_config -p
//! wafer-core -- CONFIG.json` (`-` reads stdin). `--summary` prints one line
//! instead (WAF, user and GC writes, speed). The configuration is
//! `RunConfig`'s serde form, e.g.
//! `{"policy": "sepbit", "victim": "cost-benefit", "setup": "sepbit-replayer",
//!   "trace": {"path": "0.csv", "format": "alibaba"}, "writes": 10000000}`.

use std::io::Read;

use wafer_core::{RunConfig, Simulation};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let summary = args.iter().any(|a| a == "--summary");
    let path = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .expect("usage: run_config CONFIG.json|- [--summary]");
    let mut text = String::new();
    if path == "-" {
        std::io::stdin().read_to_string(&mut text).expect("stdin");
    } else {
        text = std::fs::read_to_string(path).expect("readable config");
    }
    let cfg: RunConfig = serde_json::from_str(&text).expect("a RunConfig as JSON");
    let mut sim = match Simulation::new(cfg) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("run_config: {e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = sim.run() {
        eprintln!("run_config: run stopped: {e}");
    }
    let r = sim.result();
    if summary {
        println!(
            "{} / {}: WAF {:.6} (user {} GC {}), {:.2} M user writes/s",
            r.policy,
            r.victim,
            r.waf.unwrap_or(f64::NAN),
            r.user_writes,
            r.gc_writes,
            r.user_writes_per_second / 1e6
        );
    } else {
        println!("{}", serde_json::to_string(&r).expect("results serialise"));
    }
}
