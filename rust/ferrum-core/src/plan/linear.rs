//! Products: matmul with NumPy's batch broadcasting (a Linear layer is a
//! matmul by its pre-shaped weight, then an add of its bias).

use super::attrs::Attrs;
use super::shape::run_expand;
use super::Op;
use crate::error::{Error, Result};
use crate::ops::binary::BinaryOp;
use crate::tensor::Tensor;

pub(super) fn matmul(a: &Attrs<'_>) -> Result<Op> {
    let shape = |name: &str| -> Result<Option<Vec<isize>>> {
        Ok(a.ints_opt(name)?.map(|v| v.into_iter().map(|d| d as isize).collect()))
    };
    Ok(Op::MatMul { a_shape: shape("a_shape")?, b_shape: shape("b_shape")? })
}

pub(super) fn linear(a: &Attrs<'_>) -> Result<Op> {
    Ok(Op::Linear { shape: a.dims("shape")? })
}

/// A Linear layer: `x @ w + b` with `x` `[..., d_input]` as one `[rows, d_input]` product (a
/// batched product by a broadcast weight costs more per call), `w` `[d_input, d_output]`, `b`
/// `[d_output]`; the result reshaped to `shape`.
pub(super) fn run_linear(shape: &[isize], x: Tensor, w: Tensor, b: Option<Tensor>) -> Result<Tensor> {
    if w.rank() != 2 || x.rank() == 0 || x.shape()[x.rank() - 1] != w.shape()[0] {
        return Err(Error::shapes("linear", x.shape(), w.shape(), "expected x [..., d_input] and a weight [d_input, d_output]"));
    }
    let rows = x.reshape(&[-1, w.shape()[0] as isize])?;
    let mut out = rows.matmul(&w)?;
    if let Some(b) = b {
        out = out.binary_owned(BinaryOp::Add, b.reshape(&[1, -1])?)?;
    }
    out.reshape(shape)
}

/// `a @ b`, each operand first brought to the given (broadcast) shape.
pub(super) fn run_matmul(a_shape: Option<&[isize]>, b_shape: Option<&[isize]>, a: Tensor, b: Tensor) -> Result<Tensor> {
    let a = match a_shape { Some(s) => run_expand(s, a)?, None => a };
    let b = match b_shape { Some(s) => run_expand(s, b)?, None => b };
    a.matmul(&b)
}
