//! Constructors the unit tests of the ops share: a tensor of the given
//! values and shape, one function per element type so that float literals
//! keep the type the test means (a generic one would make `1.0` an f64).

use crate::Tensor;

/// An f32 tensor of `v` in `shape`; panics on a size mismatch (a test bug).
pub(crate) fn f32s(v: &[f32], shape: &[usize]) -> Tensor {
    Tensor::from_vec(v.to_vec(), shape).unwrap()
}

/// An f64 tensor of `v` in `shape`.
pub(crate) fn f64s(v: &[f64], shape: &[usize]) -> Tensor {
    Tensor::from_vec(v.to_vec(), shape).unwrap()
}

/// An i64 tensor of `v` in `shape`.
pub(crate) fn i64s(v: &[i64], shape: &[usize]) -> Tensor {
    Tensor::from_vec(v.to_vec(), shape).unwrap()
}

/// A bool tensor of `v` in `shape`.
pub(crate) fn bools(v: &[bool], shape: &[usize]) -> Tensor {
    Tensor::from_vec(v.to_vec(), shape).unwrap()
}

/// A rank-1 f64 tensor of `v` (the optimizers' parameters and gradients).
pub(crate) fn f64_row(v: &[f64]) -> Tensor {
    f64s(v, &[v.len()])
}
