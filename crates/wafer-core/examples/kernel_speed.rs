//! Hot-path inference cost probe: `cargo run --release --example
//! kernel_speed` prints nanoseconds per call of each kernel at the sizes the
//! learned policies use (DOGI's 6-32-32-10 MLP of 1,610 parameters, a GRU
//! step, an LSTM step, a 3-level TCN over 16 steps).

use std::hint::black_box;
use std::time::Instant;

use wafer_core::model::{GruCell, LstmCell, Mlp, Tcn, Tensors};
use wafer_core::rng::Rng;

fn rand(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|_| (rng.next_f64() * 2.0 - 1.0) as f32 * 0.3)
        .collect()
}

fn time(name: &str, iters: u32, mut f: impl FnMut(u32)) {
    for i in 0..iters / 10 {
        f(i);
    }
    let t = Instant::now();
    for i in 0..iters {
        f(i);
    }
    println!(
        "{name:<40} {:8.1} ns/call",
        t.elapsed().as_nanos() as f64 / iters as f64
    );
}

fn main() {
    let mut rng = Rng::new(1);
    let mut t = Tensors::default();
    let sizes = [6, 32, 32, 10];
    for (i, w) in sizes.windows(2).enumerate() {
        t.insert(
            &format!("mlp.{i}.weight"),
            &[w[1], w[0]],
            rand(&mut rng, w[0] * w[1]),
        );
        t.insert(&format!("mlp.{i}.bias"), &[w[1]], rand(&mut rng, w[1]));
    }
    for (p, g, i, h) in [("gru", 3, 16, 32), ("lstm", 4, 16, 32)] {
        t.insert(
            &format!("{p}.weight_ih"),
            &[g * h, i],
            rand(&mut rng, g * h * i),
        );
        t.insert(
            &format!("{p}.weight_hh"),
            &[g * h, h],
            rand(&mut rng, g * h * h),
        );
        t.insert(&format!("{p}.bias_ih"), &[g * h], rand(&mut rng, g * h));
        t.insert(&format!("{p}.bias_hh"), &[g * h], rand(&mut rng, g * h));
    }
    let (cin, c, k) = (8, 16, 3);
    for l in 0..3 {
        let i = if l == 0 { cin } else { c };
        t.insert(
            &format!("tcn.{l}.weight"),
            &[c, i, k],
            rand(&mut rng, c * i * k),
        );
        t.insert(&format!("tcn.{l}.bias"), &[c], rand(&mut rng, c));
    }
    t.insert(
        "tcn.0.downsample.weight",
        &[c, cin, 1],
        rand(&mut rng, c * cin),
    );
    t.insert("tcn.0.downsample.bias", &[c], rand(&mut rng, c));

    let xs = rand(&mut rng, 1024 * 16);
    let mut mlp = Mlp::load(&t, "mlp", &sizes).expect("mlp");
    time("MLP 6-32-32-10 (1,610 params) classify", 2_000_000, |i| {
        let o = (i as usize % 1000) * 6;
        black_box(mlp.classify(black_box(&xs[o..o + 6])));
    });
    let mut gru = GruCell::load(&t, "gru", 16, 32).expect("gru");
    let mut h = vec![0f32; 32];
    time("GRU cell step, 16 in, 32 hidden", 500_000, |i| {
        let o = (i as usize % 1000) * 16;
        gru.step(black_box(&xs[o..o + 16]), &mut h);
    });
    let mut lstm = LstmCell::load(&t, "lstm", 16, 32).expect("lstm");
    let (mut hh, mut cc) = (vec![0f32; 32], vec![0f32; 32]);
    time("LSTM cell step, 16 in, 32 hidden", 500_000, |i| {
        let o = (i as usize % 1000) * 16;
        lstm.step(black_box(&xs[o..o + 16]), &mut hh, &mut cc);
    });
    let mut tcn = Tcn::load(&t, "tcn", cin, c, 3, k).expect("tcn");
    time("TCN 3 levels, k=3, 16 ch, 16-step window", 100_000, |i| {
        let o = (i as usize % 500) * 16;
        black_box(tcn.forward(black_box(&xs[o..o + 16 * cin]), 16));
    });
}
