//! Speed of the inference kernels at the sizes the learned policies use
//! (`wafer bench` and `examples/kernel_speed.rs` report it): DOGI's
//! 6-32-32-10 MLP (1,610 parameters), a GRU and an LSTM step (16 inputs, 32
//! hidden), a 3-level TCN over a 16-step window. Random weights, seeded.

use std::hint::black_box;
use std::time::Instant;

use super::{GruCell, LstmCell, Mlp, Tcn, TcnStream, Tensors};
use crate::rng::Rng;

fn rand(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|_| (rng.next_f64() * 2.0 - 1.0) as f32 * 0.3)
        .collect()
}

fn time(iters: u32, mut f: impl FnMut(u32)) -> f64 {
    for i in 0..iters / 10 {
        f(i);
    }
    let t = Instant::now();
    for i in 0..iters {
        f(i);
    }
    t.elapsed().as_nanos() as f64 / iters as f64
}

/// (kernel, nanoseconds per call); `scale` multiplies the iteration counts
/// (1.0: about a second in all).
pub fn measure(scale: f64) -> Vec<(String, f64)> {
    let n = |base: f64| ((base * scale) as u32).max(100);
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
    let mut out = Vec::new();

    let mut mlp = Mlp::load(&t, "mlp", &sizes).expect("consistent shapes");
    out.push((
        "MLP 6-32-32-10 (1,610 parameters), classify".to_string(),
        time(n(2e6), |i| {
            let o = (i as usize % 1000) * 6;
            black_box(mlp.classify(black_box(&xs[o..o + 6])));
        }),
    ));
    let mut gru = GruCell::load(&t, "gru", 16, 32).expect("consistent shapes");
    let mut h = vec![0f32; 32];
    out.push((
        "GRU cell step, 16 inputs, 32 hidden".to_string(),
        time(n(2e5), |i| {
            let o = (i as usize % 1000) * 16;
            gru.step(black_box(&xs[o..o + 16]), &mut h);
        }),
    ));
    let mut lstm = LstmCell::load(&t, "lstm", 16, 32).expect("consistent shapes");
    let (mut hh, mut cc) = (vec![0f32; 32], vec![0f32; 32]);
    out.push((
        "LSTM cell step, 16 inputs, 32 hidden".to_string(),
        time(n(2e5), |i| {
            let o = (i as usize % 1000) * 16;
            lstm.step(black_box(&xs[o..o + 16]), &mut hh, &mut cc);
        }),
    ));
    let mut tcn = Tcn::load(&t, "tcn", cin, c, 3, k).expect("consistent shapes");
    out.push((
        "TCN 3 levels, k=3, 16 channels, 16-step window".to_string(),
        time(n(3e4), |i| {
            let o = (i as usize % 500) * 16;
            black_box(tcn.forward(black_box(&xs[o..o + 16 * cin]), 16));
        }),
    ));
    let mut stream = TcnStream::default();
    out.push((
        "TCN 3 levels, k=3, 16 channels, one incremental step".to_string(),
        time(n(2e5), |i| {
            let o = (i as usize % 1000) * cin;
            black_box(tcn.step(&mut stream, black_box(&xs[o..o + cin])));
        }),
    ));
    out
}
