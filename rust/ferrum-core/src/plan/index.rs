//! Indexing instructions: GatherND, GatherElements and ScatterND.
//!
//! GatherND and ScatterND read their data as a `[rows, slice]` table: each
//! index tuple names one row (negative indices count from the end, every
//! index is checked), and the rows are copied with the engine's `select` or
//! written in one pass.

use super::attrs::Attrs;
use super::Op;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::binary::BinaryOp;
use crate::ops::compare::CompareOp;
use crate::tensor::Tensor;
use crate::{with_dtype, Scalar};

pub(super) fn gather_nd(a: &Attrs<'_>) -> Result<Op> {
    let batch = usize::try_from(a.int_or("batch_dims", 0)?).map_err(|_| Error::invalid("Plan.build", "gather_nd: batch_dims must be non-negative"))?;
    Ok(Op::GatherNd { batch, shape: a.dims("shape")? })
}

pub(super) fn gather_elements(a: &Attrs<'_>) -> Result<Op> {
    Ok(Op::GatherElements { dim: a.int("dim")? as isize })
}

pub(super) fn scatter_nd(a: &Attrs<'_>) -> Result<Op> {
    match a.string("reduction")? {
        "none" => Ok(Op::ScatterNd),
        other => Err(Error::invalid("Plan.build", format!("scatter_nd: reduction {other:?} has no plan form (only \"none\")"))),
    }
}

/// Indices as i64 values (an Int tensor of any integer dtype).
fn index_values(op: &'static str, indices: &Tensor) -> Result<Vec<i64>> {
    indices.expect_kind(op, crate::Kind::Int)?;
    if indices.dtype() == DType::I64 { indices.try_to_vec::<i64>(op) } else { indices.cast(DType::I64)?.try_to_vec::<i64>(op) }
}

/// The table rows that `indices` (shape `batch + M + [k]`) pick in data of shape `dims` viewed as
/// `[prod(dims[..b + k]), prod(dims[b + k..])]`, `b = batch`; and the width of a row.
fn nd_rows(op: &'static str, dims: &[usize], indices: &Tensor, batch: usize) -> Result<(Vec<i64>, usize)> {
    let shape = indices.shape();
    let Some(&k) = shape.last() else {
        return Err(Error::invalid(op, "indices must have rank >= 1"));
    };
    if batch >= dims.len().min(shape.len()) {
        return Err(Error::invalid(op, format!("batch_dims {batch} must be below the ranks of data {dims:?} and indices {shape:?}")));
    }
    if shape[..batch] != dims[..batch] {
        return Err(Error::shapes(op, dims, shape, format!("the first {batch} (batch) dims of data and indices differ")));
    }
    if batch + k > dims.len() {
        return Err(Error::shapes(op, dims, shape, format!("index tuples of length {k} address more dims than data has after {batch} batch dims")));
    }
    let inner = &dims[batch..batch + k];
    let width: usize = dims[batch + k..].iter().product();
    let per_batch: usize = inner.iter().product();
    let tuples_per_batch: usize = shape[batch..shape.len() - 1].iter().product();
    let values = index_values(op, indices)?;
    let mut rows = Vec::with_capacity(values.len() / k.max(1));
    let count = values.len().checked_div(k).unwrap_or_else(|| shape[..shape.len() - 1].iter().product());
    for t in 0..count {
        let tuple = &values[t * k..(t + 1) * k];
        let mut row = 0i64;
        for (j, (&i, &size)) in tuple.iter().zip(inner).enumerate() {
            let wrapped = if i < 0 { i + size as i64 } else { i };
            if wrapped < 0 || wrapped >= size as i64 {
                return Err(Error::IndexOutOfBounds { op, index: i, dim: batch + j, size });
            }
            row = row * size as i64 + wrapped;
        }
        let b = t.checked_div(tuples_per_batch).unwrap_or(0);
        rows.push(row + (b * per_batch) as i64);
    }
    Ok((rows, width))
}

/// ONNX GatherND: the slices of `x` that index tuples name, in the shape `shape` (`batch + M + rest`).
pub(super) fn run_gather_nd(batch: usize, shape: &[isize], x: Tensor, indices: Tensor) -> Result<Tensor> {
    let op = "gather_nd";
    let (rows, width) = nd_rows(op, x.shape(), &indices, batch)?;
    let out: Vec<usize> = shape.iter().map(|&d| d.max(0) as usize).collect();
    if rows.is_empty() || width == 0 {
        return Ok(Tensor::zeros(&out, x.dtype()));
    }
    let count = rows.len();
    let table = x.reshape(&[-1, width as isize])?;
    table.select(0, &Tensor::from_vec(rows, &[count])?)?.reshape(shape)
}

/// Negative indices counted from the end of a dim of `size`.
fn wrap(indices: Tensor, size: usize) -> Result<Tensor> {
    let negative = indices.compare_scalar(CompareOp::Lower, Scalar::Int(0))?;
    indices.mask_where(&negative, &indices.binary_scalar(BinaryOp::Add, Scalar::Int(size as i64))?)
}

/// ONNX GatherElements: `out[i][j] = x[indices[i][j]][j]` for `dim` 0, and so on.
pub(super) fn run_gather_elements(dim: isize, x: Tensor, indices: Tensor) -> Result<Tensor> {
    let d = x.dim("gather_elements", dim)?;
    let indices = wrap(indices, x.shape()[d])?;
    x.gather(dim, &indices)
}

/// ONNX ScatterND without reduction: a copy of `data` with the slices that index tuples name replaced
/// by `updates`' (of shape `indices.shape[..-1] + data.shape[k..]`); a later tuple naming the same slice wins.
pub(super) fn run_scatter_nd(data: Tensor, indices: Tensor, updates: Tensor) -> Result<Tensor> {
    let op = "scatter_nd";
    data.expect_same_dtype(op, &updates)?;
    let (rows, width) = nd_rows(op, data.shape(), &indices, 0)?;
    let k = indices.shape()[indices.rank() - 1];
    let mut expected = indices.shape()[..indices.rank() - 1].to_vec();
    expected.extend_from_slice(&data.shape()[k..]);
    if updates.shape() != expected.as_slice() {
        return Err(Error::shapes(op, updates.shape(), &expected, "updates must have shape indices.shape[:-1] + data.shape[k:]"));
    }
    with_dtype!(data.dtype(), T => {
        let mut out = data.try_to_vec::<T>(op)?;
        let new = updates.try_to_vec::<T>(op)?;
        for (i, &r) in rows.iter().enumerate() {
            let at = r as usize * width;
            out[at..at + width].copy_from_slice(&new[i * width..(i + 1) * width]);
        }
        Tensor::from_vec(out, data.shape())
    })
}
