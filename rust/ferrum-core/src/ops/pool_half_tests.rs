//! Adaptive average pooling of bf16 and f16 tensors, forward and gradient,
//! against f64 loops over the same (rounded) values: each window summed in
//! f32 and its mean rounded once, so within one rounding of the format
//! (two where overlapping windows add their shares of a gradient).

use super::*;
use crate::autodiff::backward;
use crate::ops::binary::BinaryOp;
use crate::DType;

fn half_tensor(shape: &[usize], seed: f64, dtype: DType) -> (Tensor, Vec<f64>) {
    let n: usize = shape.iter().product();
    let t = Tensor::from_vec((0..n).map(|i| ((i as f64 + 1.0) * seed).sin()).collect::<Vec<f64>>(), shape).unwrap().cast(dtype).unwrap();
    let v = t.cast(DType::F64).unwrap().to_vec::<f64>();
    (t, v)
}

/// Window of adaptive output `o` of `out` over `n` inputs, PyTorch's rule written out.
fn window(o: usize, out: usize, n: usize) -> std::ops::Range<usize> {
    (o * n / out)..((o + 1) * n).div_ceil(out)
}

#[test]
fn half_adaptive_avg_pool2d_and_its_gradient_match_definition() {
    for dtype in [DType::BF16, DType::F16] {
        let eps = if dtype == DType::BF16 { 2f64.powi(-8) } else { 2f64.powi(-11) };
        // The guide CNN's 24 -> 8, and sizes the output does not divide (windows overlap), and upsampling.
        for (h, w, oh, ow) in [(24, 24, 8, 8), (7, 10, 3, 4), (5, 3, 7, 6)] {
            let (planes, c) = (6, 3);
            let (x, xv) = half_tensor(&[2, c, h, w], 0.37, dtype);
            let (r, rv) = half_tensor(&[2, c, oh, ow], 0.71, dtype);
            let (mut want_y, mut want_gx, mut mag_gx) = (vec![0.0; planes * oh * ow], vec![0.0; planes * h * w], vec![0.0; planes * h * w]);
            for p in 0..planes {
                for i in 0..oh {
                    for j in 0..ow {
                        let (hr, wr) = (window(i, oh, h), window(j, ow, w));
                        let count = (hr.len() * wr.len()) as f64;
                        let at = (p * oh + i) * ow + j;
                        for ih in hr {
                            for iw in wr.clone() {
                                want_y[at] += xv[(p * h + ih) * w + iw] / count;
                                want_gx[(p * h + ih) * w + iw] += rv[at] / count;
                                mag_gx[(p * h + ih) * w + iw] += (rv[at] / count).abs();
                            }
                        }
                    }
                }
            }
            let xv_ = Var::leaf(x.clone());
            let y = xv_.adaptive_avg_pool2d([oh, ow]).unwrap();
            assert_eq!(y.value.dtype(), dtype);
            let got = y.value.cast(DType::F64).unwrap().to_vec::<f64>();
            for (i, (a, b)) in got.iter().zip(&want_y).enumerate() {
                // A mean of values in [-1, 1]: its f32 sum is exact to far below eps.
                assert!((a - b).abs() <= eps * b.abs() + 1e-6, "{dtype:?} {h}x{w} -> {oh}x{ow}: y[{i}] {a} vs {b}");
            }
            let grads = backward(&y.binary(BinaryOp::Mul, &Var::constant(r)).unwrap().sum().unwrap()).unwrap();
            let gx = grads.get(xv_.id().unwrap()).unwrap();
            assert_eq!(gx.dtype(), dtype);
            for (i, ((a, b), m)) in gx.cast(DType::F64).unwrap().to_vec::<f64>().iter().zip(&want_gx).zip(&mag_gx).enumerate() {
                assert!((a - b).abs() <= 2.0 * eps * m + 1e-30, "{dtype:?} {h}x{w} -> {oh}x{ow}: gx[{i}] {a} vs {b}");
            }
        }
    }
}
