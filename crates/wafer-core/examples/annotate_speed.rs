//! Lifetime-annotation cost probe: `cargo run --release --example
//! annotate_speed -- BLOCK_WRITES LOGICAL_BLOCKS [WORKLOAD] [DIR]` annotates
//! a synthetic stream of BLOCK_WRITES user block writes and prints the time
//! of the forward (spill) and backward passes, the peak resident memory and
//! the file sizes. The numbers in docs/PERFORMANCE.md come from here.

use std::time::Instant;

use wafer_core::future::{Annotator, DeathReader};
use wafer_core::request::Op;
use wafer_core::workload;

fn peak_rss_mib() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let writes: u64 = args
        .get(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000_000);
    let logical: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1 << 24);
    let spec = args.get(3).cloned().unwrap_or_else(|| "zipf:1.0".into());
    let dir = args
        .get(4)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let out = dir.join(format!("wafer-annotate-speed-{}.wlife", std::process::id()));
    let mut w = workload::parse(&spec, logical, 4096, 1).expect("workload");
    let t = Instant::now();
    let mut a = Annotator::new(logical, &out).expect("annotator");
    while a.writes() < writes {
        let r = w.next_request();
        if r.op == Op::Write {
            let n = (r.blocks as u64).min(writes - a.writes()) as u32;
            a.write(r.lba, n).expect("write");
        }
    }
    let forward = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let mut ann = a.finish(&out, "{}").expect("backward pass");
    let backward = t.elapsed().as_secs_f64();
    let bytes = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
    ann.set_scratch(true);
    let t = Instant::now();
    let mut r = DeathReader::new(std::sync::Arc::new(ann));
    let mut finite = 0u64;
    while let Some(d) = r.next_death().expect("read") {
        finite += (d != u64::MAX) as u64;
    }
    let read = t.elapsed().as_secs_f64();
    println!(
        "{writes} block writes over {logical} LBAs ({spec}): forward (generate + spill) {forward:.1} s, \
         backward {backward:.1} s ({:.1} M writes/s), streamed read {read:.1} s; \
         annotation {:.0} MiB, {:.1}% of writes die in the stream; peak RSS {:.0} MiB",
        writes as f64 / backward / 1e6,
        bytes as f64 / (1 << 20) as f64,
        finite as f64 * 100.0 / writes as f64,
        peak_rss_mib()
    );
}
