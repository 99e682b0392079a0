//! Products: matmul with NumPy's batch broadcasting (a Linear layer is a
//! matmul by its pre-shaped weight, then an add of its bias).

use super::attrs::Attrs;
use super::shape::run_expand;
use super::Op;
use crate::error::Result;
use crate::tensor::Tensor;

pub(super) fn matmul(a: &Attrs<'_>) -> Result<Op> {
    let shape = |name: &str| -> Result<Option<Vec<isize>>> {
        Ok(a.ints_opt(name)?.map(|v| v.into_iter().map(|d| d as isize).collect()))
    };
    Ok(Op::MatMul { a_shape: shape("a_shape")?, b_shape: shape("b_shape")? })
}

/// `a @ b`, each operand first brought to the given (broadcast) shape.
pub(super) fn run_matmul(a_shape: Option<&[isize]>, b_shape: Option<&[isize]>, a: Tensor, b: Tensor) -> Result<Tensor> {
    let a = match a_shape { Some(s) => run_expand(s, a)?, None => a };
    let b = match b_shape { Some(s) => run_expand(s, b)?, None => b };
    a.matmul(&b)
}
