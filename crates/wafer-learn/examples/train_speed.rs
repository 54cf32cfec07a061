//! Training-speed probe: `cargo run --release --example train_speed --
//! [EXAMPLES] [EPOCHS]`: DOGI's 6-32-32-10 MLP on random data (seconds per
//! training; docs/PERFORMANCE.md reports `wafer bench`'s figures).

use std::time::Instant;

use wafer_core::rng::Rng;
use wafer_learn::{train_mlp, TrainConfig};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(18_000);
    let epochs: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(10);
    let mut rng = Rng::new(7);
    let x: Vec<f32> = (0..n * 6).map(|_| rng.next_f64() as f32).collect();
    let y: Vec<u32> = (0..n)
        .map(|i| ((x[i * 6] * 7.0 + x[i * 6 + 1] * 3.0) as u32).min(9))
        .collect();
    let cfg = TrainConfig {
        epochs,
        batch: std::env::var("BATCH")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(128),
        lr: 1e-2,
        seed: 1,
        ..Default::default()
    };
    for _ in 0..3 {
        let t = Instant::now();
        let (_, loss) = train_mlp("mlp", &[6, 32, 32, 10], &x, &y, &cfg).expect("trains");
        println!(
            "{n} examples x {epochs} epochs: {:.3} s, loss {loss:.4}",
            t.elapsed().as_secs_f64()
        );
    }
}
