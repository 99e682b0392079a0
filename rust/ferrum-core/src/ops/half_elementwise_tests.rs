//! Element-wise ops on f16 and bf16 read and write the half dtype directly
//! (converting in registers): each result must be the f64 result of the
//! same operands rounded once to the half dtype, as the widened path
//! (cast to f32, compute, cast back) gives.

use half::{bf16, f16};

use crate::autodiff::{backward, Var};
use crate::ops::binary::BinaryOp;
use crate::ops::unary::FloatUnary;
use crate::{DType, Scalar, Tensor};

/// The f64 reference of a binary and of a unary op.
type Binary = fn(f64, f64) -> f64;
type Unary = fn(f64) -> f64;

/// Values spread over several binades, both signs, exact in both half dtypes.
fn operands() -> (Vec<f32>, Vec<f32>) {
    let a: Vec<f32> = (0..257).map(|i| ((i as f32) * 0.731).sin() * 2f32.powi((i % 7) - 3)).collect();
    let b: Vec<f32> = (0..257).map(|i| 0.25 + ((i as f32) * 0.377).cos().abs() * 3.0).collect();
    let round = |v: Vec<f32>| v.into_iter().map(|x| bf16::from_f32(x).to_f32()).collect::<Vec<_>>();
    (round(a), round(b))
}

fn tensor(v: &[f32], dtype: DType) -> Tensor {
    Tensor::from_vec(v.to_vec(), &[v.len()]).unwrap().cast(dtype).unwrap()
}

fn values(t: &Tensor) -> Vec<f64> {
    t.cast(DType::F64).unwrap().to_vec::<f64>()
}

/// The values' bits, so that NaN equals NaN.
fn bits(t: &Tensor) -> Vec<u64> {
    values(t).into_iter().map(f64::to_bits).collect()
}

/// `v` (an f64 result) rounded to `dtype`, through f32 as the kernels round.
fn rounded(v: f64, dtype: DType) -> f64 {
    let v = v as f32;
    match dtype {
        DType::BF16 => bf16::from_f32(v).to_f64(),
        _ => f16::from_f32(v).to_f64(),
    }
}

/// Every element equals the reference rounded to `dtype`, or its neighbour
/// when the f64 value sits within f32's error of a rounding midpoint.
fn check(name: &str, got: &Tensor, dtype: DType, want: impl Fn(usize) -> f64) {
    assert_eq!(got.dtype(), dtype, "{name}");
    let spacing = if dtype == DType::BF16 { 2f64.powi(-8) } else { 2f64.powi(-11) };
    for (i, g) in values(got).into_iter().enumerate() {
        let w = want(i);
        let r = rounded(w, dtype);
        let ok = g == r || (g.is_nan() && w.is_nan()) || (g - w).abs() <= spacing * w.abs() * 0.5 * (1.0 + 1e-5);
        assert!(ok, "{name} {dtype} element {i}: {g} vs {w} (rounded {r})");
    }
}

#[test]
fn binary_ops_round_the_exact_result_once() {
    let (a, b) = operands();
    let ops: [(BinaryOp, Binary); 7] = [
        (BinaryOp::Add, |x, y| x + y),
        (BinaryOp::Sub, |x, y| x - y),
        (BinaryOp::Mul, |x, y| x * y),
        (BinaryOp::Div, |x, y| x / y),
        (BinaryOp::Max, f64::max),
        (BinaryOp::Min, f64::min),
        (BinaryOp::Atan2, f64::atan2),
    ];
    for dtype in [DType::BF16, DType::F16] {
        let (ta, tb) = (tensor(&a, dtype), tensor(&b, dtype));
        let (xa, xb) = (values(&ta), values(&tb));
        for (op, f) in ops {
            check(op.name(), &ta.binary(op, &tb).unwrap(), dtype, |i| f(xa[i], xb[i]));
            check(op.name(), &ta.binary_scalar(op, Scalar::Float(0.3)).unwrap(), dtype, |i| f(xa[i], 0.3f32 as f64));
        }
        // Broadcasting a row over a matrix, and an owned operand rewritten in place.
        let m = Tensor::from_vec(a.clone(), &[1, 257]).unwrap().cast(dtype).unwrap().expand(&[3, 257]).unwrap();
        let row = tb.reshape(&[1, 257]).unwrap();
        let sum = m.binary(BinaryOp::Add, &row).unwrap();
        assert_eq!(sum.shape(), &[3, 257]);
        check("add broadcast", &sum, dtype, |i| xa[i % 257] + xb[i % 257]);
        let owned = tensor(&a, dtype).binary_owned(BinaryOp::Mul, tensor(&b, dtype)).unwrap();
        check("mul owned", &owned, dtype, |i| xa[i] * xb[i]);
    }
}

#[test]
fn unary_ops_round_the_exact_result_once() {
    let (a, b) = operands();
    let ops: [(FloatUnary, &[f32], Unary); 6] = [
        (FloatUnary::Exp, &a, f64::exp),
        (FloatUnary::Log, &b, f64::ln),
        (FloatUnary::Sqrt, &b, f64::sqrt),
        (FloatUnary::Tanh, &a, f64::tanh),
        (FloatUnary::Sigmoid, &a, |x| 1.0 / (1.0 + (-x).exp())),
        (FloatUnary::Square, &a, |x| x * x),
    ];
    for dtype in [DType::BF16, DType::F16] {
        for (op, input, f) in ops {
            let t = tensor(input, dtype);
            let x = values(&t);
            check(op.name(), &t.float_unary(op).unwrap(), dtype, |i| f(x[i]));
            check(op.name(), &t.clone().float_unary_owned(op).unwrap(), dtype, |i| f(x[i]));
        }
    }
}

#[test]
fn direct_half_results_equal_the_widened_path() {
    let (a, b) = operands();
    for dtype in [DType::BF16, DType::F16] {
        let (ta, tb) = (tensor(&a, dtype), tensor(&b, dtype));
        let (wa, wb) = (ta.cast(DType::F32).unwrap(), tb.cast(DType::F32).unwrap());
        for op in [BinaryOp::Add, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Powf, BinaryOp::Remainder] {
            let widened = wa.binary(op, &wb).unwrap().cast(dtype).unwrap();
            assert_eq!(bits(&ta.binary(op, &tb).unwrap()), bits(&widened), "{} {dtype}", op.name());
        }
        for op in [FloatUnary::Exp, FloatUnary::Erf, FloatUnary::Sin, FloatUnary::Round] {
            let widened = wa.float_unary(op).unwrap().cast(dtype).unwrap();
            assert_eq!(bits(&ta.float_unary(op).unwrap()), bits(&widened), "{} {dtype}", op.name());
        }
    }
}

#[test]
fn tracked_half_inputs_get_gradients_in_their_dtype() {
    // d/da sum(a * b + exp(a)) = b + exp(a): each term is computed in f32 and reaches `a`
    // rounded to bf16 (the backward of the widening cast), and the two add in f32.
    let (a, b) = operands();
    let (va, vb) = (Var::leaf(tensor(&a, DType::BF16)), Var::leaf(tensor(&b, DType::BF16)));
    let y = va.binary(BinaryOp::Mul, &vb).unwrap().binary(BinaryOp::Add, &va.float_unary(FloatUnary::Exp).unwrap()).unwrap();
    assert_eq!(y.value.dtype(), DType::BF16);
    let grads = backward(&y.sum().unwrap()).unwrap();
    let ga = grads.get(va.id().unwrap()).unwrap();
    let (xa, xb) = (values(&va.value), values(&vb.value));
    check("d/da", ga, DType::BF16, |i| xb[i] + rounded(xa[i].exp(), DType::BF16));
    let gb = grads.get(vb.id().unwrap()).unwrap();
    check("d/db", gb, DType::BF16, |i| xa[i]);
}

#[test]
fn half_differences_send_the_negated_gradient_to_the_right_operand() {
    // d/db sum(a - b) = -1 per element; a `b` broadcast from one element gets
    // the sum, -257, summed in f32 and rounded once (-256 in bf16).
    let (a, b) = operands();
    for dtype in [DType::BF16, DType::F16] {
        let (va, vb) = (Var::leaf(tensor(&a, dtype)), Var::leaf(tensor(&b, dtype)));
        let grads = backward(&va.binary(BinaryOp::Sub, &vb).unwrap().sum().unwrap()).unwrap();
        check("d/da", grads.get(va.id().unwrap()).unwrap(), dtype, |_| 1.0);
        check("d/db", grads.get(vb.id().unwrap()).unwrap(), dtype, |_| -1.0);
        let vs = Var::leaf(tensor(&b[..1], dtype));
        let grads = backward(&va.binary(BinaryOp::Sub, &vs).unwrap().sum().unwrap()).unwrap();
        check("d/d scalar-shaped b", grads.get(vs.id().unwrap()).unwrap(), dtype, |_| -(a.len() as f64));
    }
}
