//! Layout instructions: reshape, permute, expand, slice, concat, split, take.
//!
//! The builder resolves every shape at compile time (a plan serves one input
//! signature), so each instruction carries its target dims literally.

use super::attrs::Attrs;
use super::elementwise::to_rank;
use super::Op;
use crate::error::{Error, Result};
use crate::tensor::Tensor;
use crate::SliceSpec;

pub(super) fn reshape(a: &Attrs<'_>) -> Result<Op> {
    Ok(Op::Reshape(a.dims("shape")?))
}

pub(super) fn permute(a: &Attrs<'_>) -> Result<Op> {
    Ok(Op::Permute(a.dims("axes")?))
}

pub(super) fn expand(a: &Attrs<'_>) -> Result<Op> {
    Ok(Op::Expand(a.dims("shape")?))
}

pub(super) fn slice(a: &Attrs<'_>) -> Result<Op> {
    let (starts, ends, steps) = (a.dims("starts")?, a.dims("ends")?, a.dims("steps")?);
    if starts.len() != ends.len() || starts.len() != steps.len() {
        return Err(Error::invalid("Plan.build", format!("slice: starts {starts:?}, ends {ends:?} and steps {steps:?} differ in length")));
    }
    if steps.contains(&0) {
        return Err(Error::invalid("Plan.build", "slice: a step is 0"));
    }
    let specs = starts.iter().zip(&ends).zip(&steps).map(|((&s, &e), &st)| SliceSpec { start: Some(s), end: Some(e), step: st }).collect();
    Ok(Op::Slice(specs))
}

pub(super) fn concat(a: &Attrs<'_>) -> Result<Op> {
    Ok(Op::Concat(a.int("dim")? as isize))
}

pub(super) fn split(a: &Attrs<'_>) -> Result<Op> {
    Ok(Op::Split { dim: a.int("dim")? as isize, sizes: a.sizes("sizes")? })
}

pub(super) fn take(a: &Attrs<'_>) -> Result<Op> {
    Ok(Op::Take { dim: a.int("dim")? as isize, wrap: a.flag("wrap")?, shape: a.dims("shape")? })
}

pub(super) fn run_expand(shape: &[isize], x: Tensor) -> Result<Tensor> {
    let x = to_rank(x, shape.len())?;
    if x.shape().iter().zip(shape).all(|(&d, &s)| d as isize == s) {
        return Ok(x);
    }
    x.expand(shape)
}

/// ONNX Gather: `x`'s dim replaced by the indices' dims; negative indices (with `wrap`) count from the end.
pub(super) fn run_take(dim: isize, wrap: bool, shape: &[isize], x: Tensor, indices: Tensor) -> Result<Tensor> {
    let d = x.dim("take", dim)?;
    let indices = if indices.rank() == 0 { indices.reshape(&[1])? } else { indices };
    let indices = if wrap {
        let size = x.shape()[d] as i64;
        let negative = indices.compare_scalar(crate::ops::compare::CompareOp::Lower, crate::Scalar::Int(0))?;
        indices.mask_where(&negative, &indices.binary_scalar(crate::ops::binary::BinaryOp::Add, crate::Scalar::Int(size))?)?
    } else {
        indices
    };
    x.take(dim, &indices)?.reshape(shape)
}

pub(super) fn run_split(dim: isize, sizes: &[usize], x: Tensor) -> Result<Vec<Tensor>> {
    x.split_with_sizes(sizes, dim)
}
