//! The hand-written GRU training (Shiro's page classifier) against candle's
//! autograd: same loss and gradients on variable-length sequences; and
//! training learns a task that needs the sequence, continues from given
//! weights, and stops when the loss converges.

use candle_core::{DType, Device, Tensor};
use candle_nn::rnn::RNN;
use candle_nn::{Module, VarBuilder, VarMap};
use wafer_core::model::train::{Convergence, GruFit, SeqShape, Sequences, TrainSpec};
use wafer_core::model::{GruCell, Mlp, Tensors};
use wafer_core::rng::Rng;
use wafer_learn::gru_seq::{loss_and_grads, train};

fn rand_vec(rng: &mut Rng, n: usize, scale: f64) -> Vec<f32> {
    (0..n)
        .map(|_| ((rng.next_f64() * 2.0 - 1.0) * scale) as f32)
        .collect()
}

#[test]
fn gradients_match_candle_autograd() {
    let (i, h, c) = (5, 6, 2);
    let mut rng = Rng::new(4);
    let mut t = Tensors::default();
    for (name, shape) in [
        ("p.cell.weight_ih_l0", vec![3 * h, i]),
        ("p.cell.weight_hh_l0", vec![3 * h, h]),
        ("p.cell.bias_ih_l0", vec![3 * h]),
        ("p.cell.bias_hh_l0", vec![3 * h]),
        ("p.head.0.weight", vec![c, h]),
        ("p.head.0.bias", vec![c]),
    ] {
        let n = shape.iter().product();
        t.insert(name, &shape, rand_vec(&mut rng, n, 0.6));
    }
    // Three sequences of 1, 4 and 2 steps; some zero inputs (skipped).
    let starts = [0u32, 1, 5, 7];
    let mut x = rand_vec(&mut rng, 7 * i, 1.0);
    x[3] = 0.0;
    x[12] = 0.0;
    let y = [1u32, 0, 1];
    let shape = SeqShape {
        inputs: i,
        steps: 0,
        width: h,
        classes: c,
    };
    let data = Sequences {
        x: &x,
        starts: &starts,
        y: &y,
    };
    let (loss, grads) = loss_and_grads(&t, "p", shape, &data).unwrap();

    let vm = VarMap::new();
    {
        let mut d = vm.data().lock().unwrap();
        for (name, (s, v)) in &t.tensors {
            let x = Tensor::from_vec(v.clone(), s.as_slice(), &Device::Cpu).unwrap();
            d.insert(name.clone(), candle_core::Var::from_tensor(&x).unwrap());
        }
    }
    let vb = VarBuilder::from_varmap(&vm, DType::F32, &Device::Cpu);
    let gru = candle_nn::rnn::gru(i, h, Default::default(), vb.pp("p.cell")).unwrap();
    let head = candle_nn::linear(h, c, vb.pp("p.head.0")).unwrap();
    let mut logits = Vec::new();
    for k in 0..3 {
        let mut st = gru.zero_state(1).unwrap();
        for s in starts[k]..starts[k + 1] {
            let s = s as usize;
            let xs =
                Tensor::from_vec(x[s * i..(s + 1) * i].to_vec(), (1, i), &Device::Cpu).unwrap();
            st = gru.step(&xs, &st).unwrap();
        }
        logits.push(head.forward(&st.h).unwrap());
    }
    let logits = Tensor::cat(&logits, 0).unwrap();
    let ys = Tensor::from_vec(y.to_vec(), 3, &Device::Cpu).unwrap();
    let cl = candle_nn::loss::cross_entropy(&logits, &ys).unwrap();
    let want = cl.to_scalar::<f32>().unwrap();
    assert!((loss - want).abs() < 1e-5, "loss {loss} vs candle {want}");
    let g = cl.backward().unwrap();
    let data = vm.data().lock().unwrap();
    for (ours, theirs) in [
        ("p.cell.weight_ih", "p.cell.weight_ih_l0"),
        ("p.cell.weight_hh", "p.cell.weight_hh_l0"),
        ("p.cell.bias_ih", "p.cell.bias_ih_l0"),
        ("p.cell.bias_hh", "p.cell.bias_hh_l0"),
        ("p.head.0.weight", "p.head.0.weight"),
        ("p.head.0.bias", "p.head.0.bias"),
    ] {
        let var = &data[theirs];
        let want: Vec<f32> = g
            .get(var.as_tensor())
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1()
            .unwrap();
        let got = &grads.tensors[ours].1;
        let d = got
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(d < 1e-5, "{ours}: max gradient difference {d}");
    }
}

/// Label = whether the first step of the sequence was "on": only the
/// recurrence can carry it to the end; lengths 1..6.
fn memory_task(n: usize, seed: u64) -> (Vec<f32>, Vec<u32>, Vec<u32>) {
    let mut rng = Rng::new(seed);
    let (mut x, mut starts, mut y) = (Vec::new(), vec![0u32], Vec::new());
    for _ in 0..n {
        let len = 1 + rng.below(6) as usize;
        let on = rng.below(2) as u32;
        for s in 0..len {
            let first = if s == 0 { on as f32 } else { 0.0 };
            x.extend_from_slice(&[first, rng.next_f64() as f32 * 0.2, 1.0]);
        }
        starts.push(starts.last().unwrap() + len as u32);
        y.push(on);
    }
    (x, starts, y)
}

#[test]
fn training_learns_continues_and_converges() {
    let (x, starts, y) = memory_task(600, 1);
    let data = Sequences {
        x: &x,
        starts: &starts,
        y: &y,
    };
    let shape = SeqShape {
        inputs: 3,
        steps: 0,
        width: 8,
        classes: 2,
    };
    let spec = TrainSpec {
        epochs: 200,
        batch: 32,
        lr: 1e-2,
        seed: 3,
        ..Default::default()
    };
    let conv = GruFit {
        init: None,
        converge: Some(Convergence {
            min_delta: 1e-3,
            patience: 3,
            min_epochs: 0,
        }),
    };
    let out = train("m", shape, &data, &spec, &conv).unwrap();
    assert!(out.epochs < 200, "stopped at convergence: {}", out.epochs);
    // A floor on the epochs holds convergence back.
    let floor = GruFit {
        init: None,
        converge: Some(Convergence {
            min_delta: 1e-3,
            patience: 3,
            min_epochs: out.epochs + 5,
        }),
    };
    let longer = train("m", shape, &data, &spec, &floor).unwrap();
    assert!(
        longer.epochs >= out.epochs + 5,
        "{} epochs, floor {}",
        longer.epochs,
        out.epochs + 5
    );
    assert!(out.loss < 0.1, "loss {}", out.loss);
    // The kernels run the trained weights: every sequence classified right.
    let mut cell = GruCell::load(&out.tensors, "m.cell", 3, 8).unwrap();
    let mut head = Mlp::load(&out.tensors, "m.head", &[8, 2]).unwrap();
    let mut right = 0;
    for k in 0..y.len() {
        let mut h = vec![0f32; 8];
        for s in starts[k]..starts[k + 1] {
            let s = s as usize;
            cell.step(&x[s * 3..s * 3 + 3], &mut h);
        }
        right += (head.classify(&h) as u32 == y[k]) as usize;
    }
    assert!(
        right as f64 > 0.97 * y.len() as f64,
        "{right} of {}",
        y.len()
    );
    // One more epoch from the trained weights starts near where it ended;
    // from seeded weights it does not. Same inputs, same result.
    let one = TrainSpec { epochs: 1, ..spec };
    let go_on = GruFit {
        init: Some(&out.tensors),
        converge: None,
    };
    let cont = train("m", shape, &data, &one, &go_on).unwrap();
    let fresh = train("m", shape, &data, &one, &GruFit::default()).unwrap();
    assert!(
        cont.loss < 0.2 && fresh.loss > 0.4,
        "{} {}",
        cont.loss,
        fresh.loss
    );
    let again = train("m", shape, &data, &one, &go_on).unwrap();
    assert_eq!(again.loss, cont.loss);
    // Bad input is an error naming what is wrong.
    let bad = Sequences {
        x: &x,
        starts: &starts[..10],
        y: &y,
    };
    let e = train("m", shape, &bad, &one, &GruFit::default()).unwrap_err();
    assert!(e.to_string().contains("sequence offsets"), "{e}");
}
