//! Plans against hand-computed values, and the build's checks.

use std::collections::HashMap;

use super::{Attr, InputSpec, Plan, RawInstr};
use crate::dtype::DType;
use crate::error::Error;
use crate::tensor::Tensor;

fn instr(op: &str, attrs: &[(&str, Attr)], inputs: &[Option<usize>], outputs: &[usize], free: &[usize]) -> RawInstr {
    RawInstr {
        op: op.into(),
        attrs: attrs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect::<HashMap<_, _>>(),
        inputs: inputs.to_vec(),
        outputs: outputs.to_vec(),
        free: free.to_vec(),
        label: format!("{op}_node"),
    }
}

fn f32s(t: &Tensor) -> Vec<f32> {
    t.to_vec::<f32>()
}

fn input(slot: usize, shape: &[usize]) -> InputSpec {
    InputSpec { slot, shape: shape.to_vec(), dtype: DType::F32 }
}

fn s(v: &str) -> Attr {
    Attr::Str(v.into())
}

#[test]
fn broadcast_add_then_relu_and_matmul() {
    // y = relu(x + b) @ w with x [2, 2], b [2] (NumPy broadcasting), w [2, 1]
    let b = Tensor::from_vec(vec![1.0f32, -10.0], &[2]).unwrap();
    let w = Tensor::from_vec(vec![2.0f32, 3.0], &[2, 1]).unwrap();
    let plan = Plan::build(
        6,
        vec![
            instr("binary", &[("op", s("add")), ("rank", Attr::Int(2))], &[Some(0), Some(1)], &[3], &[0, 1]),
            instr("unary", &[("op", s("relu"))], &[Some(3)], &[4], &[3]),
            instr("matmul", &[], &[Some(4), Some(2)], &[5], &[4, 2]),
        ],
        vec![(1, b), (2, w)],
        vec![input(0, &[2, 2])],
        vec![5],
    )
    .unwrap();
    let x = Tensor::from_vec(vec![1.0f32, 20.0, -3.0, 5.0], &[2, 2]).unwrap();
    let out = plan.run(vec![x]).unwrap();
    // rows: relu([2, 10]) = [2, 10] -> 4 + 30 = 34; relu([-2, -5]) = [0, 0] -> 0
    assert_eq!(out[0].shape(), &[2, 1]);
    assert_eq!(f32s(&out[0]), vec![34.0, 0.0]);
    // a plan runs again with fresh registers: the constants are intact
    let again = plan.run(vec![Tensor::from_vec(vec![0.0f32; 4], &[2, 2]).unwrap()]).unwrap();
    assert_eq!(f32s(&again[0]), vec![2.0, 2.0]);
}

#[test]
fn shape_instructions() {
    // x [2, 3] = 0..6: permute -> [3, 2]; slice rows 1.. -> [2, 2]; reshape [4]; split [1, 3]; concat
    let plan = Plan::build(
        7,
        vec![
            instr("permute", &[("axes", Attr::Ints(vec![1, 0]))], &[Some(0)], &[1], &[0]),
            instr("slice", &[("starts", Attr::Ints(vec![1, 0])), ("ends", Attr::Ints(vec![3, 2])), ("steps", Attr::Ints(vec![1, 1]))], &[Some(1)], &[2], &[1]),
            instr("reshape", &[("shape", Attr::Ints(vec![4]))], &[Some(2)], &[3], &[2]),
            instr("split", &[("dim", Attr::Int(0)), ("sizes", Attr::Ints(vec![1, 3]))], &[Some(3)], &[4, 5], &[3]),
            instr("concat", &[("dim", Attr::Int(0))], &[Some(5), Some(4)], &[6], &[4, 5]),
        ],
        vec![],
        vec![input(0, &[2, 3])],
        vec![6],
    )
    .unwrap();
    let x = Tensor::from_vec((0..6).map(|v| v as f32).collect(), &[2, 3]).unwrap();
    // permuted [[0, 3], [1, 4], [2, 5]]; rows 1..3 -> [1, 4, 2, 5]; split [1], [4, 2, 5]; concat -> [4, 2, 5, 1]
    assert_eq!(f32s(&plan.run(vec![x]).unwrap()[0]), vec![4.0, 2.0, 5.0, 1.0]);
}

#[test]
fn take_wraps_negative_indices_and_where_selects() {
    let idx = Tensor::from_vec(vec![-1i64, 0], &[2]).unwrap();
    let plan = Plan::build(
        5,
        vec![
            instr("take", &[("dim", Attr::Int(0)), ("wrap", Attr::Int(1)), ("shape", Attr::Ints(vec![2]))], &[Some(0), Some(1)], &[2], &[1]),
            instr("compare", &[("op", s("gt")), ("rank", Attr::Int(1))], &[Some(2), Some(0)], &[3], &[]),
            instr("where", &[("rank", Attr::Int(1))], &[Some(3), Some(2), Some(0)], &[4], &[0, 2, 3]),
        ],
        vec![(1, idx)],
        vec![input(0, &[2])],
        vec![4],
    )
    .unwrap();
    // x = [5, 7]: take [-1, 0] -> [7, 5]; [7 > 5, 5 > 7] -> where picks [7, 7]
    let x = Tensor::from_vec(vec![5.0f32, 7.0], &[2]).unwrap();
    assert_eq!(f32s(&plan.run(vec![x]).unwrap()[0]), vec![7.0, 7.0]);
}

#[test]
fn layer_norm_softmax_and_mean() {
    let plan = Plan::build(
        5,
        vec![
            instr("layer_norm", &[("start", Attr::Int(1)), ("epsilon", Attr::Float(0.0))], &[Some(0), Some(1), None], &[2], &[1]),
            instr("softmax", &[("dim", Attr::Int(1))], &[Some(0)], &[3], &[0]),
            instr("mean_dims", &[("dims", Attr::Ints(vec![1])), ("shape", Attr::Ints(vec![1]))], &[Some(3)], &[4], &[3]),
        ],
        vec![(1, Tensor::from_vec(vec![2.0f32, 2.0], &[2]).unwrap())],
        vec![input(0, &[1, 2])],
        vec![2, 4],
    )
    .unwrap();
    let out = plan.run(vec![Tensor::from_vec(vec![1.0f32, 3.0], &[1, 2]).unwrap()]).unwrap();
    // mean 2, variance 1: normalized [-1, 1], scaled by 2
    assert_eq!(f32s(&out[0]), vec![-2.0, 2.0]);
    // a softmax row's mean is 1/2
    assert!((f32s(&out[1])[0] - 0.5).abs() < 1e-7);
}

#[test]
fn conv_and_pools() {
    // a 1x1x3x3 input 1..9 with a 2x2 kernel of ones, bias 1: each window's sum + 1
    let w = Tensor::from_vec(vec![1.0f32; 4], &[1, 1, 2, 2]).unwrap();
    let b = Tensor::from_vec(vec![1.0f32], &[1]).unwrap();
    let conv = [("stride", Attr::Ints(vec![1, 1])), ("padding", Attr::Ints(vec![0, 0, 0, 0])), ("dilation", Attr::Ints(vec![1, 1])), ("groups", Attr::Int(1))];
    let pool = [("kernel", Attr::Ints(vec![2, 2])), ("stride", Attr::Ints(vec![1, 1])), ("padding", Attr::Ints(vec![0, 0, 0, 0])), ("dilation", Attr::Ints(vec![1, 1]))];
    let plan = Plan::build(
        6,
        vec![
            instr("conv2d", &conv, &[Some(0), Some(1), Some(2)], &[3], &[1, 2]),
            instr("max_pool2d", &pool, &[Some(0)], &[4], &[]),
            instr("avg_pool2d", &pool, &[Some(0)], &[5], &[0]),
        ],
        vec![(1, w), (2, b)],
        vec![input(0, &[1, 1, 3, 3])],
        vec![3, 4, 5],
    )
    .unwrap();
    let x = Tensor::from_vec((1..=9).map(|v| v as f32).collect(), &[1, 1, 3, 3]).unwrap();
    let out = plan.run(vec![x]).unwrap();
    assert_eq!(f32s(&out[0]), vec![13.0, 17.0, 25.0, 29.0]);
    assert_eq!(f32s(&out[1]), vec![5.0, 6.0, 8.0, 9.0]);
    assert_eq!(f32s(&out[2]), vec![3.0, 4.0, 6.0, 7.0]);
}

#[test]
fn run_checks_the_signature() {
    let plan = Plan::build(2, vec![instr("unary", &[("op", s("neg"))], &[Some(0)], &[1], &[0])], vec![], vec![input(0, &[2])], vec![1]).unwrap();
    let err = plan.run(vec![Tensor::from_vec(vec![1.0f32; 3], &[3]).unwrap()]).unwrap_err();
    assert!(err.to_string().contains("expected shape [2] of f32, found shape [3] of f32"), "{err}");
    let err = plan.run(vec![]).unwrap_err();
    assert!(err.to_string().contains("expected 1 inputs, found 0"), "{err}");
    let err = plan.run(vec![Tensor::from_vec(vec![1i64, 2], &[2]).unwrap()]).unwrap_err();
    assert!(err.to_string().contains("of i64"), "{err}");
}

#[test]
fn a_failing_instruction_is_named() {
    // the reshape target does not hold the input's 2 elements: the error names the instruction
    let plan = Plan::build(2, vec![instr("reshape", &[("shape", Attr::Ints(vec![3]))], &[Some(0)], &[1], &[0])], vec![], vec![input(0, &[2])], vec![1]).unwrap();
    let err = plan.run(vec![Tensor::from_vec(vec![1.0f32; 2], &[2]).unwrap()]).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { .. }) && err.to_string().contains("instruction 0 (reshape_node)"), "{err}");
}

#[test]
fn build_refuses_bad_programs() {
    let neg = |inputs: &[Option<usize>], outputs: &[usize], free: &[usize]| instr("unary", &[("op", s("neg"))], inputs, outputs, free);
    let cases: Vec<(Vec<RawInstr>, Vec<usize>, &str)> = vec![
        (vec![neg(&[Some(1)], &[2], &[])], vec![2], "before it is written"),
        (vec![neg(&[Some(0)], &[1], &[0]), neg(&[Some(0)], &[2], &[])], vec![2], "after it is freed"),
        (vec![neg(&[Some(0)], &[0], &[])], vec![0], "written twice"),
        (vec![neg(&[Some(9)], &[1], &[])], vec![1], "out of range"),
        (vec![neg(&[Some(0), Some(0)], &[1], &[])], vec![1], "expected 1 to 1 inputs"),
        (vec![instr("unary", &[("op", s("nope"))], &[Some(0)], &[1], &[])], vec![1], "unknown op"),
        (vec![instr("reshape", &[], &[Some(0)], &[1], &[])], vec![1], "attribute \"shape\" must be a list of ints"),
        (vec![instr("frobnicate", &[], &[Some(0)], &[1], &[])], vec![1], "unknown instruction"),
        (vec![neg(&[Some(0)], &[1], &[1])], vec![1], "holds nothing"),
        (vec![neg(&[Some(0)], &[1], &[])], vec![2], "output slot 2 holds nothing"),
    ];
    for (instrs, outputs, expected) in cases {
        let err = Plan::build(3, instrs, vec![], vec![input(0, &[2])], outputs).unwrap_err();
        assert!(err.to_string().contains(expected), "{err} (expected {expected:?})");
    }
}

#[test]
fn an_owned_last_read_is_reused_in_place() {
    let plan = Plan::build(3, vec![instr("unary", &[("op", s("sqrt"))], &[Some(0)], &[1], &[0]), instr("unary", &[("op", s("exp"))], &[Some(1)], &[2], &[1])], vec![], vec![input(0, &[4])], vec![2]).unwrap();
    let out = plan.run(vec![Tensor::from_vec(vec![0.0f32, 1.0, 4.0, 9.0], &[4]).unwrap()]).unwrap();
    let want: Vec<f32> = [0.0f32, 1.0, 2.0, 3.0].iter().map(|v| v.exp()).collect();
    assert_eq!(f32s(&out[0]), want);
}

#[test]
fn linear_pow_scalar_and_both_layer_norm_paths() {
    // x [2, 1, 2] @ w [2, 3] + b, then cubed; layer norm with a full-row scale (fused) and a
    // broadcast one (the op-by-op kernels) give the same values
    let w = Tensor::from_vec(vec![1.0f32, 0.0, 2.0, 0.0, 1.0, -1.0], &[2, 3]).unwrap();
    let b = Tensor::from_vec(vec![0.5f32, 0.0, 1.0], &[3]).unwrap();
    let full = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3]).unwrap();
    let one = Tensor::from_vec(vec![2.0f32], &[1]).unwrap();
    let plan = Plan::build(
        9,
        vec![
            instr("linear", &[("shape", Attr::Ints(vec![2, 1, 3]))], &[Some(0), Some(1), Some(2)], &[3], &[1, 2]),
            instr("pow_scalar", &[("exponent", Attr::Float(3.0))], &[Some(3)], &[4], &[]),
            instr("layer_norm", &[("start", Attr::Int(2)), ("epsilon", Attr::Float(0.0))], &[Some(3), Some(5), None], &[6], &[5]),
            instr("layer_norm", &[("start", Attr::Int(2)), ("epsilon", Attr::Float(0.0))], &[Some(3), Some(7), None], &[8], &[3, 7]),
        ],
        vec![(1, w), (2, b), (5, full), (7, one)],
        vec![input(0, &[2, 1, 2])],
        vec![4, 6, 8],
    )
    .unwrap();
    let x = Tensor::from_vec(vec![1.0f32, 2.0, 0.0, -1.0], &[2, 1, 2]).unwrap();
    let out = plan.run(vec![x]).unwrap();
    // rows: [1, 2] -> [1.5, 2, 1]; [0, -1] -> [0.5, -1, 2]
    assert_eq!(out[0].shape(), &[2, 1, 3]);
    assert_eq!(f32s(&out[0]), vec![3.375, 8.0, 1.0, 0.125, -1.0, 8.0]);
    let norm = |row: [f64; 3], g: [f64; 3]| -> Vec<f32> {
        let mean = row.iter().sum::<f64>() / 3.0;
        let var = row.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 3.0;
        row.iter().zip(g).map(|(v, g)| ((v - mean) / var.sqrt() * g) as f32).collect()
    };
    let want_full = [norm([1.5, 2.0, 1.0], [1.0, 2.0, 3.0]), norm([0.5, -1.0, 2.0], [1.0, 2.0, 3.0])].concat();
    let want_one = [norm([1.5, 2.0, 1.0], [2.0; 3]), norm([0.5, -1.0, 2.0], [2.0; 3])].concat();
    for (got, want) in [(f32s(&out[1]), want_full), (f32s(&out[2]), want_one)] {
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() <= 1e-5, "{got:?} vs {want:?}");
        }
    }
}

fn one_op(op: &str, attrs: &[(&str, Attr)], constants: Vec<(usize, Tensor)>, x: Tensor) -> crate::error::Result<Tensor> {
    let n = constants.len();
    let inputs: Vec<Option<usize>> = (0..=n).map(Some).collect();
    let plan = Plan::build(n + 2, vec![instr(op, attrs, &inputs, &[n + 1], &[])], constants.into_iter().map(|(k, t)| (k + 1, t)).collect(), vec![InputSpec { slot: 0, shape: x.shape().to_vec(), dtype: x.dtype() }], vec![n + 1])?;
    Ok(plan.run(vec![x])?.remove(0))
}

#[test]
fn gather_nd_picks_rows_by_index_tuples_with_batch_dims() {
    // x [2, 2, 2] = 0..8; tuples [0, 1] and [1, -1] pick rows [2, 3] and [6, 7]
    let x = Tensor::from_vec((0..8).map(|v| v as f32).collect(), &[2, 2, 2]).unwrap();
    let idx = Tensor::from_vec(vec![0i64, 1, 1, -1], &[2, 2]).unwrap();
    let out = one_op("gather_nd", &[("batch_dims", Attr::Int(0)), ("shape", Attr::Ints(vec![2, 2]))], vec![(0, idx)], x.clone()).unwrap();
    assert_eq!(f32s(&out), vec![2.0, 3.0, 6.0, 7.0]);
    // batch_dims 1: batch 0 takes its row 1 ([2, 3]), batch 1 its row 0 ([4, 5])
    let idx = Tensor::from_vec(vec![1i64, 0], &[2, 1]).unwrap();
    let out = one_op("gather_nd", &[("batch_dims", Attr::Int(1)), ("shape", Attr::Ints(vec![2, 2]))], vec![(0, idx)], x.clone()).unwrap();
    assert_eq!(f32s(&out), vec![2.0, 3.0, 4.0, 5.0]);
    let bad = Tensor::from_vec(vec![0i64, 2], &[1, 2]).unwrap();
    let err = one_op("gather_nd", &[("shape", Attr::Ints(vec![1, 2]))], vec![(0, bad)], x).unwrap_err().to_string();
    assert!(err.contains("gather_nd") && err.contains('2'), "{err}");
}

#[test]
fn gather_elements_and_scatter_nd() {
    // torch.gather along dim 1 of [[1, 2], [3, 4]] by [[0, 0], [-1, 0]] -> [[1, 1], [4, 3]]
    let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    let idx = Tensor::from_vec(vec![0i64, 0, -1, 0], &[2, 2]).unwrap();
    let out = one_op("gather_elements", &[("dim", Attr::Int(1))], vec![(0, idx)], x.clone()).unwrap();
    assert_eq!(f32s(&out), vec![1.0, 1.0, 4.0, 3.0]);
    // ScatterND: rows 1 and 0 of x replaced by [9, 8] and [7, 6]
    let idx = Tensor::from_vec(vec![1i64, 0], &[2, 1]).unwrap();
    let upd = Tensor::from_vec(vec![9.0f32, 8.0, 7.0, 6.0], &[2, 2]).unwrap();
    let out = one_op("scatter_nd", &[("reduction", s("none"))], vec![(0, idx), (1, upd)], x.clone()).unwrap();
    assert_eq!(f32s(&out), vec![7.0, 6.0, 9.0, 8.0]);
    let err = Plan::build(4, vec![instr("scatter_nd", &[("reduction", s("add"))], &[Some(0), Some(1), Some(2)], &[3], &[])], vec![], vec![], vec![]).unwrap_err();
    assert!(err.to_string().contains("reduction"), "{err}");
}

#[test]
fn cumsum_exclusive_reverse_and_pad() {
    let x = Tensor::from_vec(vec![1i64, 2, 3], &[3]).unwrap();
    let run = |ex: i64, rev: i64| {
        let out = one_op("cumsum", &[("dim", Attr::Int(0)), ("exclusive", Attr::Int(ex)), ("reverse", Attr::Int(rev))], vec![], x.clone()).unwrap();
        out.to_vec::<i64>()
    };
    assert_eq!(run(0, 0), vec![1, 3, 6]);
    assert_eq!(run(1, 0), vec![0, 1, 3]);
    assert_eq!(run(0, 1), vec![6, 5, 3]);
    assert_eq!(run(1, 1), vec![5, 3, 0]);
    // pads (before, after), last dim first: (1, 0) on dim 1 and (1, 0) on dim 0
    let y = Tensor::from_vec(vec![1.0f32, 2.0], &[1, 2]).unwrap();
    let out = one_op("pad", &[("pads", Attr::Ints(vec![1, 0, 1, 0])), ("value", Attr::Float(-1.0))], vec![], y).unwrap();
    assert_eq!(out.shape(), &[2, 3]);
    assert_eq!(f32s(&out), vec![-1.0, -1.0, -1.0, -1.0, 1.0, 2.0]);
}

#[test]
fn cast_int_gives_the_indefinite_value_outside_the_range() {
    let x = Tensor::from_vec(vec![2.7f32, -2.7, f32::NEG_INFINITY, f32::NAN, 3e9, -2147483648.0], &[6]).unwrap();
    let int64 = one_op("cast_int", &[("low", Attr::Float(-(2f64.powi(63)))), ("high", Attr::Float(2f64.powi(63))), ("fill", Attr::Int(i64::MIN))], vec![], x.clone()).unwrap();
    assert_eq!(int64.to_vec::<i64>(), vec![2, -2, i64::MIN, i64::MIN, 3_000_000_000, -2147483648]);
    let int32 = one_op("cast_int", &[("low", Attr::Float(-(2f64.powi(31)))), ("high", Attr::Float(2f64.powi(31))), ("fill", Attr::Int(-(1 << 31)))], vec![], x).unwrap();
    assert_eq!(int32.to_vec::<i64>(), vec![2, -2, -(1 << 31), -(1 << 31), -(1 << 31), -2147483648]);
}

#[test]
fn conv1d_with_asymmetric_padding() {
    // x [1, 1, 3] = [1, 2, 3], w [1, 1, 2] = [1, 10], padding (1, 0): [0, 1, 2, 3] -> [10, 21, 32]
    let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[1, 1, 3]).unwrap();
    let w = Tensor::from_vec(vec![1.0f32, 10.0], &[1, 1, 2]).unwrap();
    let attrs = [("stride", Attr::Ints(vec![1])), ("padding", Attr::Ints(vec![1, 0])), ("dilation", Attr::Ints(vec![1])), ("groups", Attr::Int(1))];
    let out = one_op("conv1d", &attrs, vec![(0, w)], x).unwrap();
    assert_eq!(f32s(&out), vec![10.0, 21.0, 32.0]);
}

#[test]
fn attention_scales_masks_guards_and_multiplies() {
    // q [1, 1, 2] = [1, 0], k [1, 2, 2] = identity: scores [1, 0]; scale 2 -> [2, 0]; bias [0, -inf]
    // -> weights [1, 0]; v rows [5, 6], [7, 8] -> [5, 6]
    let q = Tensor::from_vec(vec![1.0f64, 0.0], &[1, 1, 2]).unwrap();
    let k = Tensor::from_vec(vec![1.0f64, 0.0, 0.0, 1.0], &[1, 2, 2]).unwrap();
    let v = Tensor::from_vec(vec![5.0f64, 6.0, 7.0, 8.0], &[1, 2, 2]).unwrap();
    let bias = Tensor::from_vec(vec![0.0f64, f64::NEG_INFINITY], &[2]).unwrap();
    let attrs = [("scale", Attr::Float(2.0)), ("nan_to_zero", Attr::Int(1))];
    let out = one_op("attention", &attrs, vec![(0, k.clone()), (1, v.clone()), (2, bias)], q.clone()).unwrap();
    assert_eq!(out.to_vec::<f64>(), vec![5.0, 6.0]);
    // no bias: weights softmax([2, 0]) = [e^2, 1] / (e^2 + 1)
    let plain = one_op("attention", &[("scale", Attr::Float(2.0))], vec![(0, k.clone()), (1, v.clone())], q.clone()).unwrap().to_vec::<f64>();
    let a = 2f64.exp() / (2f64.exp() + 1.0);
    assert!((plain[0] - (5.0 * a + 7.0 * (1.0 - a))).abs() < 1e-12 && (plain[1] - (6.0 * a + 8.0 * (1.0 - a))).abs() < 1e-12);
    // a fully masked row: NaN weights, zeroed by the guard
    let all = Tensor::from_vec(vec![f64::NEG_INFINITY; 2], &[2]).unwrap();
    let out = one_op("attention", &attrs, vec![(0, k.clone()), (1, v.clone()), (2, all.clone())], q.clone()).unwrap();
    assert_eq!(out.to_vec::<f64>(), vec![0.0, 0.0]);
    let unguarded = one_op("attention", &[("scale", Attr::Float(1.0))], vec![(0, k), (1, v), (2, all)], q).unwrap();
    assert!(unguarded.to_vec::<f64>().iter().all(|v| v.is_nan()));
}

#[test]
fn rms_norm_fused_and_with_a_broadcast_scale() {
    // rows [3, 4]: mean square 12.5, epsilon 0 -> divided by sqrt(12.5)
    let x = Tensor::from_vec(vec![3.0f64, 4.0], &[1, 2]).unwrap();
    let w = Tensor::from_vec(vec![2.0f64, -1.0], &[2]).unwrap();
    let attrs = [("start", Attr::Int(1)), ("epsilon", Attr::Float(0.0))];
    let r = 12.5f64.sqrt();
    let out = one_op("rms_norm", &attrs, vec![(0, w)], x.clone()).unwrap().to_vec::<f64>();
    assert!((out[0] - 6.0 / r).abs() < 1e-12 && (out[1] + 4.0 / r).abs() < 1e-12);
    // a scale [1, 1] broadcasting (not one value per element): normalized, then multiplied
    let w1 = Tensor::from_vec(vec![3.0f64], &[1, 1]).unwrap();
    let out = one_op("rms_norm", &attrs, vec![(0, w1)], x).unwrap().to_vec::<f64>();
    assert!((out[0] - 9.0 / r).abs() < 1e-12 && (out[1] - 12.0 / r).abs() < 1e-12);
}
