//! The fused sequences against a plain step-by-step reference in f64, and
//! their gradients against central finite differences.

use super::*;

fn sig(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn values(n: usize, seed: u64) -> Vec<f64> {
    (0..n).map(|i| (((i as u64 * 2654435761 + seed * 97) % 1000) as f64 / 1000.0 - 0.5) * 1.6).collect()
}

struct Case {
    b: usize,
    t: usize,
    h: usize,
    g: usize,
}

/// The LSTM, one element at a time: `[2, b, t, h]` (hidden states, then cell states).
fn lstm_reference(xp: &[f64], w: &[f64], h0: &[f64], c0: &[f64], c: &Case, o: &LstmOptions) -> Vec<f64> {
    let (b_n, t_n, n, gw) = (c.b, c.t, c.h, c.g * c.h);
    let mut out = vec![0.0; 2 * b_n * t_n * n];
    for b in 0..b_n {
        let (mut h, mut cell) = (h0[b * n..(b + 1) * n].to_vec(), c0[b * n..(b + 1) * n].to_vec());
        let order: Vec<usize> = if o.reverse { (0..t_n).rev().collect() } else { (0..t_n).collect() };
        for t in order {
            let pre: Vec<f64> = (0..gw).map(|k| xp[(b * t_n + t) * gw + k] + (0..n).map(|j| h[j] * w[j * gw + k]).sum::<f64>()).collect();
            for j in 0..n {
                let i = sig(pre[j]);
                let (f, g, og) = if o.input_forget {
                    (1.0 - i, pre[n + j].tanh(), sig(pre[2 * n + j]))
                } else {
                    (sig(pre[n + j]), pre[2 * n + j].tanh(), sig(pre[3 * n + j]))
                };
                let mut cn = f * cell[j] + i * g;
                if let Some(m) = o.clip {
                    cn = cn.clamp(-m, m);
                }
                cell[j] = cn;
                h[j] = og * cn.tanh();
            }
            for j in 0..n {
                out[(b * t_n + t) * n + j] = h[j];
                out[b_n * t_n * n + (b * t_n + t) * n + j] = cell[j];
            }
        }
    }
    out
}

fn gru_reference(xp: &[f64], w: &[f64], bh: &[f64], h0: &[f64], c: &Case) -> Vec<f64> {
    let (b_n, t_n, n) = (c.b, c.t, c.h);
    let gw = 3 * n;
    let mut out = vec![0.0; b_n * t_n * n];
    for b in 0..b_n {
        let mut h = h0[b * n..(b + 1) * n].to_vec();
        for t in 0..t_n {
            let hp: Vec<f64> = (0..gw).map(|k| bh[k] + (0..n).map(|j| h[j] * w[j * gw + k]).sum::<f64>()).collect();
            let x = &xp[(b * t_n + t) * gw..][..gw];
            for j in 0..n {
                let z = sig(x[j] + hp[j]);
                let r = sig(x[n + j] + hp[n + j]);
                let g = (x[2 * n + j] + r * hp[2 * n + j]).tanh();
                h[j] = (1.0 - z) * g + z * h[j];
            }
            out[(b * t_n + t) * n..][..n].copy_from_slice(&h);
        }
    }
    out
}

fn tensor(v: Vec<f64>, shape: &[usize]) -> Tensor {
    Tensor::from_vec(v, shape).unwrap()
}

fn assert_close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol * (1.0 + w.abs()), "{what}[{k}]: {g} vs {w}");
    }
}

fn lstm_inputs(c: &Case) -> [Vec<f64>; 4] {
    let gw = c.g * c.h;
    [values(c.b * c.t * gw, 1), values(c.h * gw, 2), values(c.b * c.h, 3), values(c.b * c.h, 4)]
}

fn lstm_options() -> Vec<LstmOptions> {
    vec![
        LstmOptions::default(),
        LstmOptions { reverse: true, ..Default::default() },
        LstmOptions { clip: Some(0.3), ..Default::default() },
        LstmOptions { input_forget: true, reverse: true, ..Default::default() },
    ]
}

fn run_lstm(inputs: &[Vec<f64>; 4], c: &Case, o: &LstmOptions, track: bool) -> (Var, Vec<Var>) {
    let gw = c.g * c.h;
    let shapes: [Vec<usize>; 4] = [vec![c.b, c.t, gw], vec![c.h, gw], vec![c.b, c.h], vec![c.b, c.h]];
    let vars: Vec<Var> = inputs
        .iter()
        .zip(&shapes)
        .map(|(v, s)| {
            let t = tensor(v.clone(), s);
            if track { Var::leaf(t) } else { Var::constant(t) }
        })
        .collect();
    let y = Var::lstm_sequence(&vars[0], &vars[1], &vars[2], &vars[3], o).unwrap();
    (y, vars)
}

#[test]
fn lstm_forward_matches_the_reference() {
    for o in lstm_options() {
        let c = Case { b: 2, t: 5, h: 3, g: if o.input_forget { 3 } else { 4 } };
        let inputs = lstm_inputs(&c);
        let (y, _) = run_lstm(&inputs, &c, &o, false);
        let want = lstm_reference(&inputs[0], &inputs[1], &inputs[2], &inputs[3], &c, &o);
        assert_eq!(y.value.shape(), &[2, 2, 5, 3]);
        assert_close(&y.value.to_vec::<f64>(), &want, 1e-12, &format!("{o:?}"));
    }
}

/// Weights for the loss `sum(y * weights)`.
fn loss_weights(n: usize) -> Vec<f64> {
    values(n, 9).iter().map(|v| v * 1.3 + 0.1).collect()
}

fn weighted(y: &[f64], wts: &[f64]) -> f64 {
    y.iter().zip(wts).map(|(a, b)| a * b).sum()
}

/// d loss / d input k by central differences, element by element.
fn numeric(inputs: &[Vec<f64>], k: usize, loss: &dyn Fn(&[Vec<f64>]) -> f64) -> Vec<f64> {
    let eps = 1e-6;
    let mut work = inputs.to_vec();
    (0..inputs[k].len())
        .map(|e| {
            let x0 = work[k][e];
            work[k][e] = x0 + eps;
            let up = loss(&work);
            work[k][e] = x0 - eps;
            let down = loss(&work);
            work[k][e] = x0;
            (up - down) / (2.0 * eps)
        })
        .collect()
}

/// The gradients of `sum(y * wts)` (`wts` shaped `wshape`) with respect to
/// each of `vars`, against central differences of `loss` over `inputs`.
fn assert_gradients(y: &Var, wts: &[f64], wshape: &[usize], vars: &[Var], inputs: &[Vec<f64>], loss: &dyn Fn(&[Vec<f64>]) -> f64, what: &str) {
    let wt = Var::constant(tensor(wts.to_vec(), wshape));
    let total = y.binary(crate::ops::binary::BinaryOp::Mul, &wt).unwrap().sum().unwrap();
    let grads = crate::autodiff::backward(&total).unwrap();
    for (k, v) in vars.iter().enumerate() {
        let got = grads.get(v.id().unwrap()).unwrap().to_vec::<f64>();
        assert_close(&got, &numeric(inputs, k, loss), 1e-6, &format!("{what} input {k}"));
    }
}

#[test]
fn lstm_gradients_match_finite_differences() {
    for o in lstm_options() {
        let c = Case { b: 2, t: 4, h: 3, g: if o.input_forget { 3 } else { 4 } };
        let inputs = lstm_inputs(&c);
        let wts = loss_weights(2 * c.b * c.t * c.h);
        let (y, vars) = run_lstm(&inputs, &c, &o, true);
        let f = |xs: &[Vec<f64>]| weighted(&lstm_reference(&xs[0], &xs[1], &xs[2], &xs[3], &c, &o), &wts);
        assert_gradients(&y, &wts, &[2, c.b, c.t, c.h], &vars, &inputs, &f, &format!("{o:?}"));
    }
}

#[test]
fn gru_forward_and_gradients() {
    let c = Case { b: 2, t: 4, h: 3, g: 3 };
    let inputs = vec![values(c.b * c.t * 9, 1), values(27, 2), values(9, 5), values(6, 3)];
    let wts = loss_weights(c.b * c.t * c.h);
    let vars: Vec<Var> = inputs
        .iter()
        .zip([vec![2, 4, 9], vec![3, 9], vec![9], vec![2, 3]])
        .map(|(v, s)| Var::leaf(tensor(v.clone(), &s)))
        .collect();
    let y = Var::gru_sequence(&vars[0], &vars[1], Some(&vars[2]), &vars[3]).unwrap();
    let want = gru_reference(&inputs[0], &inputs[1], &inputs[2], &inputs[3], &c);
    assert_close(&y.value.to_vec::<f64>(), &want, 1e-12, "gru forward");
    let f = |xs: &[Vec<f64>]| weighted(&gru_reference(&xs[0], &xs[1], &xs[2], &xs[3], &c), &wts);
    assert_gradients(&y, &wts, &[2, 4, 3], &vars, &inputs, &f, "gru");
}

#[test]
fn f32_agrees_with_f64() {
    let c = Case { b: 3, t: 6, h: 5, g: 4 };
    let inputs = lstm_inputs(&c);
    let o = LstmOptions::default();
    let (y64, _) = run_lstm(&inputs, &c, &o, false);
    let f32s: Vec<Var> = inputs
        .iter()
        .zip([vec![3, 6, 20], vec![5, 20], vec![3, 5], vec![3, 5]])
        .map(|(v, s)| Var::constant(Tensor::from_vec(v.iter().map(|&x| x as f32).collect::<Vec<_>>(), &s).unwrap()))
        .collect();
    let y32 = Var::lstm_sequence(&f32s[0], &f32s[1], &f32s[2], &f32s[3], &o).unwrap();
    let got: Vec<f64> = y32.value.to_vec::<f32>().iter().map(|&v| v as f64).collect();
    assert_close(&got, &y64.value.to_vec::<f64>(), 1e-6, "f32");
}

#[test]
fn bad_shapes_are_reported() {
    let x = Var::constant(Tensor::zeros(&[2, 3, 8], crate::DType::F32));
    let w = Var::constant(Tensor::zeros(&[2, 8], crate::DType::F32));
    let h = Var::constant(Tensor::zeros(&[2, 2], crate::DType::F32));
    let bad = Var::constant(Tensor::zeros(&[3, 2], crate::DType::F32));
    assert!(Var::lstm_sequence(&x, &w, &h, &h, &LstmOptions::default()).is_ok());
    let e = Var::lstm_sequence(&x, &w, &bad, &h, &LstmOptions::default()).unwrap_err().to_string();
    assert!(e.contains("hidden state must be [batch, hidden]"), "{e}");
    let e = Var::lstm_sequence(&x, &w, &h, &h, &LstmOptions { clip: Some(0.0), ..Default::default() }).unwrap_err().to_string();
    assert!(e.contains("clip must be positive"), "{e}");
    let e = Var::gru_sequence(&x, &w, None, &h).unwrap_err().to_string();
    assert!(e.contains("[hidden, 3 * hidden]"), "{e}");
    let empty = Var::constant(Tensor::zeros(&[2, 0, 8], crate::DType::F32));
    assert_eq!(Var::lstm_sequence(&empty, &w, &h, &h, &LstmOptions::default()).unwrap().value.shape(), &[2, 2, 0, 2]);
}

#[test]
fn f32_gradients_agree_with_f64() {
    // f32 runs on the prepacked recurrent weight (where the CPU has ferrum's kernel).
    let c = Case { b: 5, t: 7, h: 40, g: 4 };
    let inputs = lstm_inputs(&c);
    let shapes = [vec![5, 7, 160], vec![40, 160], vec![5, 40], vec![5, 40]];
    let grads_of = |f32s: bool| -> Vec<Vec<f64>> {
        let vars: Vec<Var> = inputs
            .iter()
            .zip(&shapes)
            .map(|(v, s)| {
                let t = Tensor::from_vec(v.clone(), s).unwrap();
                Var::leaf(if f32s { t.cast(crate::DType::F32).unwrap() } else { t })
            })
            .collect();
        let y = Var::lstm_sequence(&vars[0], &vars[1], &vars[2], &vars[3], &LstmOptions::default()).unwrap();
        let g = crate::autodiff::backward(&y.sum().unwrap()).unwrap();
        vars.iter().map(|v| g.get(v.id().unwrap()).unwrap().cast(crate::DType::F64).unwrap().to_vec::<f64>()).collect()
    };
    let (a, b) = (grads_of(true), grads_of(false));
    for (k, (x, y)) in a.iter().zip(&b).enumerate() {
        assert_close(x, y, 2e-4, &format!("input {k}"));
    }
}
