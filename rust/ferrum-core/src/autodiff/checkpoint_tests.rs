//! Balanced checkpointing against the plain graph: Burn's checkpoint test
//! graphs (burn-backend-tests, autodiff/checkpoint.rs) give the same
//! gradients bit for bit, and memory-bound outputs are no longer kept.

use super::{Checkpointing, Saved, MAX_RECOMPUTE_DEPTH};
use crate::autodiff::{backward, Var};
use crate::dtype::Scalar;
use crate::ops::binary::BinaryOp;
use crate::tensor::Tensor;
use crate::DType;

type Graph = fn(&[Var]) -> Var;

fn t(v: [f32; 4]) -> Tensor {
    Tensor::from_vec(v.to_vec(), &[2, 2]).unwrap()
}

fn never() -> Tensor {
    Tensor::zeros(&[2, 2], DType::Bool)
}

// Burn's four kinds of op: memory-bound ops that read no input in backward
// (add) or do (mul), compute-bound ops that keep their own state
// (mask_where) or read their inputs (matmul).
fn mem_eager(a: &Var, b: &Var) -> Var {
    a.binary(BinaryOp::Add, b).unwrap()
}
fn mem_eager_scalar(a: &Var, s: f64) -> Var {
    a.binary_scalar(BinaryOp::Add, Scalar::Float(s)).unwrap()
}
fn compute_eager(a: &Var, b: &Var) -> Var {
    a.mask_where(&never(), b).unwrap()
}
fn compute_eager_scalar(a: &Var, s: f64) -> Var {
    a.mask_fill(&never(), Scalar::Float(s)).unwrap()
}
fn mem_lazy(a: &Var, b: &Var) -> Var {
    a.binary(BinaryOp::Mul, b).unwrap()
}
fn compute_lazy(a: &Var, b: &Var) -> Var {
    a.matmul(b).unwrap()
}

fn complicated(x: &[Var]) -> Var {
    let t5 = compute_eager(&x[0], &x[1]);
    let t6 = compute_lazy(&x[2], &x[3]);
    let t7 = mem_eager(&x[3], &x[4]);
    let t8 = compute_lazy(&t6, &t7);
    let t9 = mem_eager_scalar(&t7, 11.0);
    let t10 = mem_lazy(&t5, &t8);
    let t11 = mem_lazy(&t8, &t9);
    compute_lazy(&t10, &t11)
}

fn missing_requirement(x: &[Var]) -> Var {
    let t2 = mem_eager(&x[0], &x[1]);
    let t3 = mem_eager_scalar(&t2, 11.0);
    let t4 = mem_eager_scalar(&t2, 11.0);
    let t5 = compute_lazy(&t3, &t4);
    let t6 = compute_eager_scalar(&t5, 11.0);
    let t7 = mem_eager(&t5, &t2);
    mem_eager(&t6, &t7)
}

fn many_duplicates(x: &[Var]) -> Var {
    let t0 = &x[0];
    let t1 = mem_eager(t0, t0);
    let t2 = compute_eager(t0, t0);
    let t3 = mem_lazy(t0, t0);
    let t4 = compute_lazy(t0, t0);
    let t5 = mem_eager(&t1, t0);
    let t6 = mem_eager(t0, &t5);
    let t7 = compute_lazy(&t3, &t5);
    let t8 = compute_eager(&t4, &t2);
    let t9 = mem_lazy(&t6, &t7);
    let t10 = mem_eager(t0, &t9);
    let t11 = mem_eager_scalar(&t10, 9.0);
    compute_lazy(&t8, &t11)
}

fn long_chain(x: &[Var]) -> Var {
    let t5 = mem_eager(&x[0], &x[1]);
    let t6 = mem_eager(&t5, &x[2]);
    let t7 = mem_eager(&t6, &x[3]);
    let t8 = mem_eager(&t7, &x[4]);
    mem_lazy(&t8, &x[1])
}

fn half_not_tracked(x: &[Var]) -> Var {
    let t6 = mem_lazy(&x[0], &x[1]);
    let t7 = compute_eager(&t6, &x[2]);
    let t8 = mem_eager(&x[3], &x[4]);
    let t9 = compute_lazy(&t8, &x[5]);
    compute_lazy(&t7, &t9)
}

fn very_complex(x: &[Var]) -> Var {
    let t5 = mem_eager_scalar(&x[0], 8.0);
    let t6 = mem_lazy(&t5, &x[1]);
    let t7 = compute_lazy(&t6, &t6);
    let t8 = mem_lazy(&x[1], &t5);
    let t9 = mem_eager_scalar(&t7, 7.0);
    let t10 = compute_eager(&t5, &t8);
    let t11 = mem_eager(&x[2], &t9);
    let t12 = mem_lazy(&x[2], &x[2]);
    let t13 = compute_eager(&t10, &t11);
    let t14 = compute_eager_scalar(&x[3], 8.0);
    let t15 = compute_lazy(&x[4], &t12);
    let t16 = mem_lazy(&t10, &t7);
    let t17 = compute_lazy(&t13, &x[1]);
    let t18 = mem_eager(&t15, &t16);
    let t19 = compute_eager(&t14, &t17);
    let t20 = mem_lazy(&t18, &t19);
    mem_eager_scalar(&t20, 8.0)
}

/// Inputs `[[0.i, 7], [7, 7]]`, tracked where `tracked` says, then the
/// gradients of the graph's sum, by input.
fn gradients(graph: Graph, tracked: &[bool], mode: Checkpointing) -> Vec<Option<Vec<f32>>> {
    let inputs: Vec<Var> = tracked
        .iter()
        .enumerate()
        .map(|(i, &on)| {
            let v = t([i as f32 / 10.0, 7.0, 7.0, 7.0]);
            if on { Var::leaf_with(v, mode) } else { Var::constant(v) }
        })
        .collect();
    let grads = backward(&graph(&inputs).sum().unwrap()).unwrap();
    inputs.iter().map(|v| v.id().and_then(|id| grads.get(id)).map(|g| g.to_vec::<f32>())).collect()
}

#[test]
fn burns_checkpoint_graphs_give_the_plain_gradients_bit_for_bit() {
    let cases: [(&str, Graph, &[bool]); 6] = [
        ("complicated", complicated, &[true; 5]),
        ("missing requirement", missing_requirement, &[true, false]),
        ("many duplicates", many_duplicates, &[true]),
        ("long chain of eager memory-bound", long_chain, &[true, false, true, true, true]),
        ("half sub-graph not tracked", half_not_tracked, &[false, false, false, true, true, true]),
        ("very complex", very_complex, &[true, false, true, true, true]),
    ];
    for (name, graph, tracked) in cases {
        let plain = gradients(graph, tracked, Checkpointing::None);
        let balanced = gradients(graph, tracked, Checkpointing::Balanced);
        assert!(plain.iter().zip(tracked).all(|(g, &on)| g.is_some() == on), "{name}: a tracked input without gradient");
        let bits = |g: &Vec<Option<Vec<f32>>>| g.iter().map(|v| v.as_ref().map(|v| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>())).collect::<Vec<_>>();
        assert_eq!(bits(&plain), bits(&balanced), "{name}");
    }
}

#[test]
fn memory_bound_outputs_are_not_kept_by_the_graph() {
    for mode in [Checkpointing::None, Checkpointing::Balanced] {
        let x = Var::leaf_with(t([0.5, 1.0, 1.5, 2.0]), mode);
        let w = Var::leaf_with(t([1.0, -1.0, 0.5, 2.0]), mode);
        // sin reads its input: the plain graph keeps `h` for it, the
        // balanced one recomputes `h` from x and w.
        let h = x.binary(BinaryOp::Mul, &w).unwrap();
        let mine = h.value.clone();
        let y = h.float_unary(crate::ops::unary::FloatUnary::Sin).unwrap().matmul(&w).unwrap().sum().unwrap();
        drop(h);
        assert_eq!(mine.storage().is_unique(), mode == Checkpointing::Balanced, "{mode:?}");
        let grads = backward(&y).unwrap();
        assert!(grads.get(x.id().unwrap()).is_some());
    }
}

#[test]
fn a_long_chain_keeps_one_value_in_every_max_depth_plus_one() {
    let x = Var::leaf_with(t([1.0, 2.0, 3.0, 4.0]), Checkpointing::Balanced);
    let mut chain = vec![x];
    for _ in 0..3 * (MAX_RECOMPUTE_DEPTH + 1) {
        let next = chain.last().unwrap().binary_scalar(BinaryOp::Add, Scalar::Float(1.0)).unwrap();
        chain.push(next);
    }
    let kept: Vec<u32> = (1..chain.len()).filter(|&i| matches!(chain[i].saved(), Saved::Kept(_))).map(|i| i as u32).collect();
    let n = MAX_RECOMPUTE_DEPTH + 1;
    assert_eq!(kept, vec![n, 2 * n, 3 * n]);
}

#[test]
fn a_long_chain_of_recomputed_ops_does_not_overflow_the_stack() {
    let x = Var::leaf_with(Tensor::from_vec(vec![1.0f32; 4], &[4]).unwrap(), Checkpointing::Balanced);
    let mut v = x.clone();
    for _ in 0..100_000 {
        v = v.binary_scalar(BinaryOp::Mul, Scalar::Float(1.0)).unwrap();
    }
    // sin reads the end of the chain: its recomputation walks all of it.
    let y = v.float_unary(crate::ops::unary::FloatUnary::Sin).unwrap().sum().unwrap();
    drop(v);
    let g = backward(&y).unwrap();
    let expected = 1.0f32.cos();
    assert_eq!(g.get(x.id().unwrap()).unwrap().to_vec::<f32>(), vec![expected; 4]);
}

#[test]
fn ops_on_a_balanced_leaf_inherit_balanced_checkpointing() {
    let a = Var::leaf_with(t([1.0, 2.0, 3.0, 4.0]), Checkpointing::Balanced);
    let b = Var::leaf(t([1.0, 2.0, 3.0, 4.0]));
    assert_eq!(a.binary(BinaryOp::Add, &b).unwrap().checkpointing(), Checkpointing::Balanced);
    assert_eq!(b.binary(BinaryOp::Add, &b).unwrap().checkpointing(), Checkpointing::None);
    assert_eq!(b.set_require_grad_with(true, Checkpointing::Balanced).checkpointing(), Checkpointing::Balanced);
}
