//! LayerNorm against a scalar f64 reference written here, and its gradients
//! against central finite differences of that reference.

use crate::autodiff::{backward, Var};
use crate::{DType, Tensor};

/// Deterministic values in [-2, 2) spread unevenly (no two rows alike).
fn values(n: usize, seed: usize) -> Vec<f64> {
    (0..n).map(|i| (((i * 7919 + seed * 104_729) % 1013) as f64) / 253.25 - 2.0).collect()
}

/// The reference: `(x - mean) / sqrt(var + eps) * gamma + beta` per row, in f64.
fn reference(x: &[f64], d: usize, gamma: &[f64], beta: Option<&[f64]>, eps: f64) -> Vec<f64> {
    let mut out = Vec::with_capacity(x.len());
    for row in x.chunks(d) {
        let mean = row.iter().sum::<f64>() / d as f64;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / d as f64;
        for (j, v) in row.iter().enumerate() {
            out.push((v - mean) / (var + eps).sqrt() * gamma[j] + beta.map_or(0.0, |b| b[j]));
        }
    }
    out
}

/// `d loss / d p` for `loss = sum(reference(...) * r)`, by central differences
/// in each element of `p` (0: x, 1: gamma, 2: beta).
fn numeric_grad(x: &[f64], d: usize, gamma: &[f64], beta: &[f64], eps: f64, r: &[f64], which: usize) -> Vec<f64> {
    let loss = |x: &[f64], gamma: &[f64], beta: &[f64]| reference(x, d, gamma, Some(beta), eps).iter().zip(r).map(|(y, r)| y * r).sum::<f64>();
    let mut params = [x.to_vec(), gamma.to_vec(), beta.to_vec()];
    let h = 1e-6;
    (0..params[which].len())
        .map(|i| {
            let orig = params[which][i];
            params[which][i] = orig + h;
            let up = loss(&params[0], &params[1], &params[2]);
            params[which][i] = orig - h;
            let down = loss(&params[0], &params[1], &params[2]);
            params[which][i] = orig;
            (up - down) / (2.0 * h)
        })
        .collect()
}

fn as_f64(t: &Tensor) -> Vec<f64> {
    t.cast(DType::F64).unwrap().to_vec::<f64>()
}

fn assert_close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol * (1.0 + w.abs()), "{what}[{i}]: {g} vs {w}");
    }
}

/// Shapes of rank 2 to 4, a last dim of 1, odd sizes, and one large enough
/// to run threaded in several parts.
const SHAPES: [&[usize]; 6] = [&[3, 5], &[2, 3, 7], &[2, 1, 3, 1], &[4, 33], &[2, 2, 2, 17], &[40, 1000]];

/// Tolerances: f64 near exact; f32 and half rounding of inputs and output.
fn tol(dtype: DType) -> f64 {
    match dtype {
        DType::F64 => 1e-9,
        DType::F32 => 2e-5,
        DType::BF16 => 3e-2,
        _ => 4e-3,
    }
}

#[test]
fn forward_matches_the_reference_in_every_float_dtype() {
    for dtype in [DType::F64, DType::F32, DType::BF16, DType::F16] {
        for &shape in &SHAPES {
            let d = shape[shape.len() - 1];
            let numel: usize = shape.iter().product();
            // Rounded to the dtype first, so the reference sees the same inputs.
            let round = |v: Vec<f64>, s: &[usize]| Tensor::from_vec(v, s).unwrap().cast(dtype).unwrap();
            let (x, gamma, beta) = (round(values(numel, 1), shape), round(values(d, 2), &[d]), round(values(d, 3), &[d]));
            for with_beta in [false, true] {
                let b = with_beta.then_some(&beta);
                let y = x.layer_norm(&gamma, b, 1e-5).unwrap();
                assert_eq!((y.shape(), y.dtype()), (shape, dtype));
                let want = reference(&as_f64(&x), d, &as_f64(&gamma), b.map(as_f64).as_deref(), 1e-5);
                assert_close(&as_f64(&y), &want, tol(dtype), &format!("{dtype:?} {shape:?} beta={with_beta}"));
            }
        }
    }
}

#[test]
fn gradients_match_finite_differences() {
    for dtype in [DType::F64, DType::F32, DType::BF16, DType::F16] {
        for &shape in &SHAPES[..5] {
            let d = shape[shape.len() - 1];
            let numel: usize = shape.iter().product();
            let round = |v: Vec<f64>, s: &[usize]| Tensor::from_vec(v, s).unwrap().cast(dtype).unwrap();
            let (x, gamma, beta, r) = (round(values(numel, 4), shape), round(values(d, 5), &[d]), round(values(d, 6), &[d]), round(values(numel, 7), shape));
            let (xv, gv, bv) = (Var::leaf(x.clone()), Var::leaf(gamma.clone()), Var::leaf(beta.clone()));
            let y = xv.layer_norm(&gv, Some(&bv), 1e-3).unwrap();
            let loss = y.binary(crate::ops::binary::BinaryOp::Mul, &Var::constant(r.clone())).unwrap().sum().unwrap();
            let grads = backward(&loss).unwrap();
            let (xs, gs, bs, rs) = (as_f64(&x), as_f64(&gamma), as_f64(&beta), as_f64(&r));
            for (which, var) in [&xv, &gv, &bv].into_iter().enumerate() {
                let got = grads.get(var.id().unwrap()).unwrap();
                assert_eq!(got.dtype(), dtype);
                let want = numeric_grad(&xs, d, &gs, &bs, 1e-3, &rs, which);
                // Half gradients: each is a sum over a row or over rows of rounded terms.
                let t = if dtype == DType::F64 { 1e-6 } else { tol(dtype) * 4.0 };
                assert_close(&as_f64(got), &want, t, &format!("{dtype:?} {shape:?} grad {which}"));
            }
        }
    }
}

#[test]
fn threaded_gradients_match_the_single_part_sums() {
    // 40 rows of 1000: several parts of rows run on threads; gamma's and
    // beta's gradients must equal the plain sums over rows.
    let (rows, d) = (40, 1000);
    let (x, g, w) = (values(rows * d, 8), values(rows * d, 9), values(d, 10));
    let t = |v: &[f64], s: &[usize]| Tensor::from_vec(v.to_vec(), s).unwrap();
    let (_, dgamma, dbeta) = t(&x, &[rows, d]).layer_norm_backward(&t(&g, &[rows, d]), &t(&w, &[d]), 1e-5).unwrap();
    let mut want_g = vec![0.0; d];
    let mut want_b = vec![0.0; d];
    for (xr, gr) in x.chunks(d).zip(g.chunks(d)) {
        let mean = xr.iter().sum::<f64>() / d as f64;
        let var = xr.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / d as f64;
        for j in 0..d {
            want_g[j] += gr[j] * (xr[j] - mean) / (var + 1e-5).sqrt();
            want_b[j] += gr[j];
        }
    }
    assert_close(&dgamma.to_vec::<f64>(), &want_g, 1e-10, "dgamma");
    assert_close(&dbeta.to_vec::<f64>(), &want_b, 1e-10, "dbeta");
}

#[test]
fn a_transposed_input_is_normalized_as_laid_out_logically() {
    let x = Tensor::from_vec(values(12, 11), &[4, 3]).unwrap().transpose();
    let w = Tensor::from_vec(vec![1.0f64; 4], &[4]).unwrap();
    let want = reference(&x.to_vec::<f64>(), 4, &[1.0; 4], None, 1e-5);
    assert_close(&x.layer_norm(&w, None, 1e-5).unwrap().to_vec::<f64>(), &want, 1e-12, "transposed");
}

#[test]
fn empty_inputs_give_empty_outputs_and_zero_parameter_gradients() {
    let x = Tensor::zeros(&[0, 4], DType::F32);
    let w = Tensor::ones(&[4], DType::F32);
    assert_eq!(x.layer_norm(&w, None, 1e-5).unwrap().shape(), &[0, 4]);
    let (dx, dw, db) = x.layer_norm_backward(&x, &w, 1e-5).unwrap();
    assert_eq!((dx.shape(), dw.to_vec::<f32>(), db.to_vec::<f32>()), (&[0usize, 4][..], vec![0.0; 4], vec![0.0; 4]));
    let zero_width = Tensor::zeros(&[3, 0], DType::F32);
    assert_eq!(zero_width.layer_norm(&Tensor::zeros(&[0], DType::F32), None, 1e-5).unwrap().shape(), &[3, 0]);
}

#[test]
fn bad_operands_are_errors_that_name_the_problem() {
    let x = Tensor::from_vec(vec![1.0f32; 6], &[2, 3]).unwrap();
    let err = |r: crate::Result<Tensor>| r.unwrap_err().to_string();
    let short = Tensor::from_vec(vec![1.0f32; 2], &[2]).unwrap();
    assert!(err(x.layer_norm(&short, None, 1e-5)).contains("gamma must have shape [3]"));
    let w = Tensor::from_vec(vec![1.0f32; 3], &[3]).unwrap();
    let matrix = Tensor::from_vec(vec![1.0f32; 3], &[1, 3]).unwrap();
    assert!(err(x.layer_norm(&w, Some(&matrix), 1e-5)).contains("beta must have shape [3]"));
    let e = err(x.layer_norm(&w.cast(DType::BF16).unwrap(), None, 1e-5));
    assert!(e.contains("layer_norm") && e.contains("bf16"), "{e}");
    assert!(err(x.layer_norm(&w, None, -1.0)).contains("epsilon"));
    assert!(err(x.layer_norm(&w, None, f64::NAN)).contains("epsilon"));
    let ints = Tensor::from_vec(vec![1i64; 3], &[3]).unwrap();
    assert!(err(ints.layer_norm(&ints, None, 1e-5)).contains("layer_norm"));
    let scalar = Tensor::from_vec(vec![1.0f32], &[]).unwrap();
    assert!(err(scalar.layer_norm(&w, None, 1e-5)).contains("at least one dim"));
    let g = Tensor::from_vec(vec![1.0f32; 3], &[3]).unwrap();
    assert!(x.layer_norm_backward(&g, &w, 1e-5).unwrap_err().to_string().contains("output gradient"));
}
