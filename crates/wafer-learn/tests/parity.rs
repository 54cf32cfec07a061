//! Parity: the same weights and inputs through candle and through the
//! engine's hot-path kernels agree to 1e-5 (f32), for the MLP, the GRU and
//! LSTM cells (several steps) and the causal TCN. And a trained classifier
//! runs unchanged in the kernel.

use std::collections::HashMap;

use candle_core::{DType, Device, Module, Tensor, D};
use candle_nn::rnn::{GRUConfig, GRUState, LSTMConfig, LSTMState, RNN};
use candle_nn::{Conv1dConfig, VarBuilder};
use wafer_core::model::{GruCell, LstmCell, Mlp, Tcn, Tensors};
use wafer_core::rng::Rng;
use wafer_learn::{from_candle, to_candle, train_mlp, TrainConfig};

const TOL: f32 = 1e-5;

fn rand_vec(rng: &mut Rng, n: usize, scale: f64) -> Vec<f32> {
    (0..n)
        .map(|_| ((rng.next_f64() * 2.0 - 1.0) * scale) as f32)
        .collect()
}

fn vb(t: &Tensors) -> VarBuilder<'static> {
    VarBuilder::from_tensors(to_candle(t).unwrap(), DType::F32, &Device::Cpu)
}

fn close(a: &[f32], b: &[f32], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}");
    let d = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0f32, f32::max);
    assert!(d <= TOL, "{what}: max abs difference {d}");
}

fn row(x: &Tensor) -> Vec<f32> {
    x.flatten_all().unwrap().to_vec1::<f32>().unwrap()
}

#[test]
fn mlp_matches_candle() {
    let mut rng = Rng::new(1);
    let sizes = [6, 32, 32, 10];
    let mut t = Tensors::default();
    for (i, w) in sizes.windows(2).enumerate() {
        t.insert(
            &format!("mlp.{i}.weight"),
            &[w[1], w[0]],
            rand_vec(&mut rng, w[0] * w[1], 0.5),
        );
        t.insert(
            &format!("mlp.{i}.bias"),
            &[w[1]],
            rand_vec(&mut rng, w[1], 0.1),
        );
    }
    let vb = vb(&t);
    let layers: Vec<candle_nn::Linear> = sizes
        .windows(2)
        .enumerate()
        .map(|(i, w)| candle_nn::linear(w[0], w[1], vb.pp(format!("mlp.{i}"))).unwrap())
        .collect();
    let mut kernel = Mlp::load(&t, "mlp", &sizes).unwrap();
    for _ in 0..20 {
        let x = rand_vec(&mut rng, 6, 3.0);
        let mut h = Tensor::from_vec(x.clone(), (1, 6), &Device::Cpu).unwrap();
        for (i, l) in layers.iter().enumerate() {
            h = l.forward(&h).unwrap();
            if i + 1 < layers.len() {
                h = h.relu().unwrap();
            }
        }
        close(kernel.forward(&x), &row(&h), "mlp");
    }
}

fn cell_tensors(rng: &mut Rng, gates: usize, i: usize, h: usize) -> Tensors {
    let mut t = Tensors::default();
    t.insert(
        "rnn.weight_ih_l0",
        &[gates * h, i],
        rand_vec(rng, gates * h * i, 0.4),
    );
    t.insert(
        "rnn.weight_hh_l0",
        &[gates * h, h],
        rand_vec(rng, gates * h * h, 0.4),
    );
    t.insert(
        "rnn.bias_ih_l0",
        &[gates * h],
        rand_vec(rng, gates * h, 0.2),
    );
    t.insert(
        "rnn.bias_hh_l0",
        &[gates * h],
        rand_vec(rng, gates * h, 0.2),
    );
    t
}

#[test]
fn gru_matches_candle_over_steps() {
    let (i, h) = (16, 32);
    let mut rng = Rng::new(2);
    let t = cell_tensors(&mut rng, 3, i, h);
    let gru = candle_nn::rnn::gru(i, h, GRUConfig::default(), vb(&t).pp("rnn")).unwrap();
    let mut kernel = GruCell::load(&t, "rnn", i, h).unwrap();
    let mut state = gru.zero_state(1).unwrap();
    let mut hk = vec![0f32; h];
    for step in 0..12 {
        let x = rand_vec(&mut rng, i, 2.0);
        state = gru
            .step(
                &Tensor::from_vec(x.clone(), (1, i), &Device::Cpu).unwrap(),
                &state,
            )
            .unwrap();
        kernel.step(&x, &mut hk);
        close(&hk, &row(&state.h), &format!("gru step {step}"));
    }
    let _: &GRUState = &state;
}

#[test]
fn lstm_matches_candle_over_steps() {
    let (i, h) = (8, 24);
    let mut rng = Rng::new(3);
    let t = cell_tensors(&mut rng, 4, i, h);
    let lstm = candle_nn::rnn::lstm(i, h, LSTMConfig::default(), vb(&t).pp("rnn")).unwrap();
    let mut kernel = LstmCell::load(&t, "rnn", i, h).unwrap();
    let mut state: LSTMState = lstm.zero_state(1).unwrap();
    let (mut hk, mut ck) = (vec![0f32; h], vec![0f32; h]);
    for step in 0..12 {
        let x = rand_vec(&mut rng, i, 2.0);
        state = lstm
            .step(
                &Tensor::from_vec(x.clone(), (1, i), &Device::Cpu).unwrap(),
                &state,
            )
            .unwrap();
        kernel.step(&x, &mut hk, &mut ck);
        close(&hk, &row(&state.h), &format!("lstm h step {step}"));
        close(&ck, &row(&state.c), &format!("lstm c step {step}"));
    }
}

#[test]
fn tcn_matches_candle() {
    let (cin, c, levels, k, steps) = (5, 12, 3, 3, 20);
    let mut rng = Rng::new(4);
    let mut t = Tensors::default();
    for l in 0..levels {
        let i = if l == 0 { cin } else { c };
        t.insert(
            &format!("tcn.{l}.weight"),
            &[c, i, k],
            rand_vec(&mut rng, c * i * k, 0.3),
        );
        t.insert(&format!("tcn.{l}.bias"), &[c], rand_vec(&mut rng, c, 0.1));
    }
    t.insert(
        "tcn.0.downsample.weight",
        &[c, cin, 1],
        rand_vec(&mut rng, c * cin, 0.3),
    );
    t.insert("tcn.0.downsample.bias", &[c], rand_vec(&mut rng, c, 0.1));
    let x = rand_vec(&mut rng, steps * cin, 1.0);
    let mut kernel = Tcn::load(&t, "tcn", cin, c, levels, k).unwrap();
    let ours = kernel.forward(&x, steps).to_vec();

    // candle: [1, C, T] layout; causal = pad (K-1)·d on both sides, keep the first T.
    let vb = vb(&t);
    let mut h = Tensor::from_vec(x, (steps, cin), &Device::Cpu)
        .unwrap()
        .t()
        .unwrap()
        .unsqueeze(0)
        .unwrap();
    for l in 0..levels {
        let i = if l == 0 { cin } else { c };
        let d = 1 << l;
        let cfg = Conv1dConfig {
            padding: (k - 1) * d,
            dilation: d,
            ..Default::default()
        };
        let conv = candle_nn::conv1d(i, c, k, cfg, vb.pp(format!("tcn.{l}"))).unwrap();
        let y = conv
            .forward(&h)
            .unwrap()
            .narrow(D::Minus1, 0, steps)
            .unwrap()
            .relu()
            .unwrap();
        let res = if i != c {
            let down = candle_nn::conv1d(
                i,
                c,
                1,
                Conv1dConfig::default(),
                vb.pp(format!("tcn.{l}.downsample")),
            )
            .unwrap();
            down.forward(&h).unwrap()
        } else {
            h.clone()
        };
        h = (y + res).unwrap().relu().unwrap();
    }
    let last = h.narrow(D::Minus1, steps - 1, 1).unwrap();
    close(&ours, &row(&last), "tcn");
}

#[test]
fn a_trained_classifier_runs_unchanged_in_the_kernel() {
    // Two blobs in 4 features, 3 classes by which feature is largest.
    let mut rng = Rng::new(5);
    let (n, d) = (600, 4);
    let x = rand_vec(&mut rng, n * d, 1.0);
    let y: Vec<u32> = x
        .chunks(d)
        .map(|r| wafer_core::model::argmax(&r[..3]) as u32)
        .collect();
    let sizes = [4, 16, 3];
    let cfg = TrainConfig {
        epochs: 40,
        batch: 64,
        lr: 1e-2,
        seed: 9,
        ..Default::default()
    };
    let (t, loss) = train_mlp("mlp", &sizes, &x, &y, &cfg).unwrap();
    assert!(loss < 0.3, "training loss {loss}");
    // Same seed, same weights.
    let (t2, _) = train_mlp("mlp", &sizes, &x, &y, &cfg).unwrap();
    assert_eq!(t.tensors, t2.tensors);
    // Saved and loaded through safetensors, the kernel classifies the
    // training set as candle does, and mostly right.
    let back = Tensors::from_bytes(&t.to_bytes(), "trained").unwrap();
    let mut k = Mlp::load(&back, "mlp", &sizes).unwrap();
    let right = x
        .chunks(d)
        .zip(&y)
        .filter(|(r, &l)| k.classify(r) == l as usize)
        .count();
    assert!(right as f64 / n as f64 > 0.9, "{right}/{n}");
    let m: HashMap<String, Tensor> = to_candle(&back).unwrap();
    assert_eq!(from_candle(&m).unwrap().tensors, back.tensors);
}

#[test]
fn diverging_training_is_an_error() {
    let x = vec![1e30f32; 8];
    let y = vec![0u32, 1];
    let cfg = TrainConfig {
        epochs: 3,
        batch: 2,
        lr: 1e6,
        seed: 1,
        ..Default::default()
    };
    let e = train_mlp("mlp", &[4, 4, 2], &x, &y, &cfg)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("diverged") || e.contains("NaN") || e.contains("inf"),
        "{e}"
    );
}

/// Sequences of 6 steps of 3 values; the class is the sign of the first
/// step's first value, so the model must carry it through the sequence.
fn memory_task(n: usize) -> (Vec<f32>, Vec<u32>) {
    let mut rng = Rng::new(11);
    let x = rand_vec(&mut rng, n * 6 * 3, 1.0);
    let y = x.chunks(18).map(|s| (s[0] > 0.0) as u32).collect();
    (x, y)
}

#[test]
fn trained_sequence_classifiers_run_in_the_kernels() {
    use wafer_core::model::train::TrainSpec;
    let (x, y) = memory_task(800);
    let spec = TrainSpec {
        epochs: 30,
        batch: 64,
        lr: 1e-2,
        seed: 4,
        ..Default::default()
    };
    let right = |pred: &dyn Fn(&[f32]) -> usize| {
        x.chunks(18)
            .zip(&y)
            .filter(|(s, &l)| pred(s) == l as usize)
            .count() as f64
            / y.len() as f64
    };
    // GRU: step the cell over the sequence, the head on the last state.
    let (t, _) = wafer_learn::train_gru("m", 3, 8, 2, 6, &x, &y, &spec).unwrap();
    let (t2, _) = wafer_learn::train_gru("m", 3, 8, 2, 6, &x, &y, &spec).unwrap();
    assert_eq!(t.tensors, t2.tensors, "seeded");
    let cell = std::cell::RefCell::new(GruCell::load(&t, "m.cell", 3, 8).unwrap());
    let head = std::cell::RefCell::new(Mlp::load(&t, "m.head", &[8, 2]).unwrap());
    let acc = right(&|s| {
        let mut h = vec![0f32; 8];
        for step in s.chunks(3) {
            cell.borrow_mut().step(step, &mut h);
        }
        head.borrow_mut().classify(&h)
    });
    assert!(acc > 0.9, "GRU accuracy {acc}");
    // TCN: the window, the head on the last step.
    let (t, _) = wafer_learn::train_tcn("m", 3, 8, 3, 2, 2, 6, &x, &y, &spec).unwrap();
    let tcn = std::cell::RefCell::new(Tcn::load(&t, "m.tcn", 3, 8, 3, 2).unwrap());
    let head = std::cell::RefCell::new(Mlp::load(&t, "m.head", &[8, 2]).unwrap());
    let acc = right(&|s| {
        let out = tcn.borrow_mut().forward(s, 6).to_vec();
        head.borrow_mut().classify(&out)
    });
    assert!(acc > 0.9, "TCN accuracy {acc}");
}

/// The LSTM regressor of `lstm-km`: trained with candle, the same weights
/// give the same predictions in the engine's kernel (LSTM cell + dense head),
/// training is seeded, and it learns a temporal task.
#[test]
fn trained_lstm_regressor_runs_in_the_kernel() {
    use wafer_core::model::train::{LstmShape, TrainSpec};
    use wafer_core::model::Dense;
    let (n, steps, inputs, outputs) = (400, 5, 3, 2);
    let mut rng = Rng::new(21);
    let x = rand_vec(&mut rng, n * steps * inputs, 1.0);
    // Targets: the mean of channel 0 over the steps, channel 1 of the last step.
    let y: Vec<f32> = x
        .chunks(steps * inputs)
        .flat_map(|s| {
            let mean = s.chunks(inputs).map(|st| st[0]).sum::<f32>() / steps as f32;
            [mean, s[(steps - 1) * inputs + 1]]
        })
        .collect();
    let shape = LstmShape {
        inputs,
        steps,
        hidden: 16,
        outputs,
    };
    let spec = TrainSpec {
        epochs: 40,
        batch: 32,
        lr: 1e-2,
        seed: 3,
        ..Default::default()
    };
    let (t, loss) = wafer_learn::train_lstm("m", shape, &x, &y, &spec).unwrap();
    let (t2, _) = wafer_learn::train_lstm("m", shape, &x, &y, &spec).unwrap();
    assert_eq!(t.tensors, t2.tensors, "seeded");
    let var = y.iter().map(|v| v * v).sum::<f32>() / y.len() as f32;
    assert!(loss < 0.2 * var, "loss {loss} vs target variance {var}");
    // Kernel vs candle on the trained weights.
    let mut cell = LstmCell::load(&t, "m.cell", inputs, 16).unwrap();
    let head = Dense::load(&t, "m.head.0", 16, outputs).unwrap();
    let vb = vb(&t);
    let lstm = candle_nn::rnn::lstm(inputs, 16, LSTMConfig::default(), vb.pp("m.cell")).unwrap();
    let lin = candle_nn::linear(16, outputs, vb.pp("m.head.0")).unwrap();
    for s in x.chunks(steps * inputs).take(20) {
        let (mut h, mut c) = (vec![0f32; 16], vec![0f32; 16]);
        for st in s.chunks(inputs) {
            cell.step(st, &mut h, &mut c);
        }
        let mut ours = vec![0f32; outputs];
        head.forward(&h, &mut ours);
        let mut state = lstm.zero_state(1).unwrap();
        for st in s.chunks(inputs) {
            state = lstm
                .step(
                    &Tensor::from_vec(st.to_vec(), (1, inputs), &Device::Cpu).unwrap(),
                    &state,
                )
                .unwrap();
        }
        let theirs = row(&lin.forward(&state.h).unwrap());
        close(&ours, &theirs, "lstm regressor");
    }
}

#[test]
fn native_mlp_training_matches_candle() {
    // The native step is candle's training written out: same batches, same
    // loss, same AdamW; after 3 epochs the weights agree to float rounding.
    let mut rng = Rng::new(21);
    let (n, d) = (500, 6);
    let x = rand_vec(&mut rng, n * d, 1.0);
    let y: Vec<u32> = x
        .chunks(d)
        .map(|r| ((r[0] + r[1] + 2.0) * 2.4).clamp(0.0, 9.0) as u32)
        .collect();
    let sizes = [6, 32, 32, 10];
    let cfg = TrainConfig {
        epochs: 3,
        batch: 128,
        lr: 1e-2,
        seed: 4,
        ..Default::default()
    };
    let (a, la) = train_mlp("mlp", &sizes, &x, &y, &cfg).unwrap();
    let (b, lb) = wafer_learn::train_mlp_candle("mlp", &sizes, &x, &y, &cfg).unwrap();
    assert!((la - lb).abs() < 1e-4, "loss {la} vs {lb}");
    for (name, (shape, va)) in &a.tensors {
        let (shape_b, vb) = &b.tensors[name];
        assert_eq!(shape, shape_b, "{name}");
        let worst = va
            .iter()
            .zip(vb)
            .map(|(p, q)| (p - q).abs())
            .fold(0f32, f32::max);
        assert!(worst < 1e-4, "{name}: {worst}");
    }
}
