//! Gradients of the element-wise functions on bf16 and f16 tensors, against
//! their derivatives in f64 at the same (rounded) inputs: computed in f32
//! from the exact input and rounded once, so within two roundings of the
//! format.

use super::*;
use crate::autodiff::backward;
use crate::ops::binary::BinaryOp;

fn half_tensor(values: &[f64], dtype: DType) -> (Tensor, Vec<f64>) {
    let t = Tensor::from_vec(values.to_vec(), &[values.len()]).unwrap().cast(dtype).unwrap();
    let v = t.cast(DType::F64).unwrap().to_vec::<f64>();
    (t, v)
}

fn sig(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// Each function with its derivative in f64, and the inputs it is defined on.
type Case = (FloatUnary, fn(f64) -> f64, (f64, f64));

const CASES: [Case; 10] = [
    (FloatUnary::Exp, |x| x.exp(), (-3.0, 3.0)),
    (FloatUnary::Sqrt, |x| 0.5 / x.sqrt(), (0.1, 9.0)),
    (FloatUnary::Sigmoid, |x| sig(x) * (1.0 - sig(x)), (-6.0, 6.0)),
    (FloatUnary::Tanh, |x| 1.0 - x.tanh() * x.tanh(), (-3.0, 3.0)),
    (FloatUnary::Recip, |x| -1.0 / (x * x), (0.5, 4.0)),
    (FloatUnary::Tan, |x| 1.0 + x.tan() * x.tan(), (-1.2, 1.2)),
    (FloatUnary::Log, |x| 1.0 / x, (0.1, 9.0)),
    (FloatUnary::Sin, |x| x.cos(), (-3.0, 3.0)),
    (FloatUnary::Erf, |x| std::f64::consts::FRAC_2_SQRT_PI * (-x * x).exp(), (-2.0, 2.0)),
    (FloatUnary::Floor, |_| 0.0, (-3.0, 3.0)),
];

fn check(dtype: DType, what: &str, xv: &[f64], rv: &[f64], got: &Tensor, dfdx: impl Fn(f64) -> f64) {
    let eps = if dtype == DType::BF16 { 2f64.powi(-8) } else { 2f64.powi(-11) };
    assert_eq!(got.dtype(), dtype, "{what}");
    for (i, a) in got.cast(DType::F64).unwrap().to_vec::<f64>().iter().enumerate() {
        let want = rv[i] * dfdx(xv[i]);
        assert!((a - want).abs() <= 2.0 * eps * want.abs() + 1e-30, "{dtype:?} {what} at x = {}: {a} vs {want}", xv[i]);
    }
}

#[test]
fn half_unary_gradients_match_the_derivatives() {
    for dtype in [DType::BF16, DType::F16] {
        for (op, dfdx, (lo, hi)) in CASES {
            let n = 257;
            let (x, xv) = half_tensor(&(0..n).map(|i| lo + (hi - lo) * i as f64 / (n - 1) as f64).collect::<Vec<_>>(), dtype);
            let (r, rv) = half_tensor(&(0..n).map(|i| ((i as f64 + 1.0) * 0.7).sin()).collect::<Vec<_>>(), dtype);
            let xv_ = Var::leaf(x);
            let y = xv_.float_unary(op).unwrap();
            assert_eq!(y.value.dtype(), dtype);
            let grads = backward(&y.binary(BinaryOp::Mul, &Var::constant(r)).unwrap().sum().unwrap()).unwrap();
            check(dtype, op.name(), &xv, &rv, grads.get(xv_.id().unwrap()).unwrap(), dfdx);
        }
    }
}
