//! Views and dimension manipulation: reshape, permute, squeeze, expand,
//! narrow, chunk/split and friends. None of these copy the buffer.

use pyo3::prelude::*;
use pyo3::types::PyAny;

use super::{Dim, PyTensor};
use crate::error::{engine, shape_error};

/// One int or a sequence of ints, as a list.
pub fn int_list(py: Python<'_>, op: &str, what: &str, obj: &Bound<'_, PyAny>) -> PyResult<Vec<isize>> {
    if let Ok(v) = obj.extract::<isize>() {
        return Ok(vec![v]);
    }
    obj.extract::<Vec<isize>>().map_err(|_| {
        shape_error(py, format!("{op}: expected {what} as an int or a sequence of ints, found {}", obj.repr().map(|r| r.to_string()).unwrap_or_default()))
    })
}

impl PyTensor {
    fn many(&self, py: Python<'_>, vs: Vec<ferrum_core::autodiff::Var>) -> Vec<PyTensor> {
        vs.into_iter().map(|v| self.wrap_var(py, v)).collect()
    }
}

#[pymethods]
impl PyTensor {
    /// A tensor of the same elements in another shape; -1 infers one dim,
    /// 0 keeps the input's size there. Copies only if the strides require it.
    fn reshape(&self, py: Python<'_>, shape: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let s = int_list(py, "reshape", "a shape", shape)?;
        self.dop(py, |v| v.reshape(&s))
    }

    /// Swap the last two dims.
    fn transpose(&self, py: Python<'_>) -> PyTensor {
        self.wrap_var(py, self.to_var().transpose())
    }

    /// Swap the last two dims: Burn's `t()`, a short name for `transpose`.
    fn t(&self, py: Python<'_>) -> PyTensor {
        self.transpose(py)
    }

    /// Every dim reversed, as NumPy's and PyTorch's `.T` (the transpose of a matrix).
    #[getter(T)]
    fn reversed_dims(&self, py: Python<'_>) -> PyResult<PyTensor> {
        let axes: Vec<isize> = (0..self.t.rank() as isize).rev().collect();
        self.dop(py, |v| v.permute(&axes))
    }

    fn swap_dims(&self, py: Python<'_>, dim1: Dim, dim2: Dim) -> PyResult<PyTensor> {
        self.dop(py, |v| v.swap_dims(dim1, dim2))
    }

    fn permute(&self, py: Python<'_>, axes: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let a = int_list(py, "permute", "axes", axes)?;
        self.dop(py, |v| v.permute(&a))
    }

    fn movedim(&self, py: Python<'_>, src: &Bound<'_, PyAny>, dst: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let (s, d) = (int_list(py, "movedim", "source dims", src)?, int_list(py, "movedim", "destination dims", dst)?);
        self.dop(py, |v| v.movedim(&s, &d))
    }

    fn flip(&self, py: Python<'_>, axes: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let a = int_list(py, "flip", "axes", axes)?;
        self.dop(py, |v| v.flip(&a))
    }

    /// Merge dims `start..=end` into one.
    fn flatten(&self, py: Python<'_>, start_dim: Dim, end_dim: Dim) -> PyResult<PyTensor> {
        self.dop(py, |v| v.flatten(start_dim, end_dim))
    }

    /// Remove every dim of size 1.
    fn squeeze(&self, py: Python<'_>) -> PyTensor {
        self.wrap_var(py, self.to_var().squeeze())
    }

    fn squeeze_dim(&self, py: Python<'_>, dim: Dim) -> PyResult<PyTensor> {
        self.dop(py, |v| v.squeeze_dim(dim))
    }

    fn squeeze_dims(&self, py: Python<'_>, dims: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let d = int_list(py, "squeeze_dims", "dims", dims)?;
        self.dop(py, |v| v.squeeze_dims(&d))
    }

    /// Add leading dims of size 1 up to `rank` (Burn's `unsqueeze::<D>()`).
    fn unsqueeze(&self, py: Python<'_>, rank: i64) -> PyResult<PyTensor> {
        let rank = super::count(py, "unsqueeze", "rank", rank)?;
        self.dop(py, |v| v.unsqueeze_to(rank))
    }

    fn unsqueeze_dim(&self, py: Python<'_>, dim: Dim) -> PyResult<PyTensor> {
        self.dop(py, |v| v.unsqueeze_dims(&[dim]))
    }

    fn unsqueeze_dims(&self, py: Python<'_>, dims: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let d = int_list(py, "unsqueeze_dims", "dims", dims)?;
        self.dop(py, |v| v.unsqueeze_dims(&d))
    }

    /// Broadcast to `shape` (size-1 dims stretch; -1 keeps a size; extra
    /// leading dims are added).
    fn expand(&self, py: Python<'_>, shape: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let s = int_list(py, "expand", "a shape", shape)?;
        self.dop(py, |v| v.expand(&s))
    }

    /// Elements `start..start + length` along `dim`.
    fn narrow(&self, py: Python<'_>, dim: Dim, start: &Bound<'_, PyAny>, length: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let (start, length) = (super::count_int(py, "narrow", "start", start)?, super::count_int(py, "narrow", "length", length)?);
        self.dop(py, |v| v.narrow(dim, start, length))
    }

    fn chunk(&self, py: Python<'_>, chunks: i64, dim: Dim) -> PyResult<Vec<PyTensor>> {
        let chunks = super::count(py, "chunk", "chunks", chunks)?;
        let ts = engine(py, false, || self.to_var().chunk(chunks, dim))?;
        Ok(self.many(py, ts))
    }

    fn split(&self, py: Python<'_>, split_size: i64, dim: Dim) -> PyResult<Vec<PyTensor>> {
        let split_size = super::count(py, "split", "split_size", split_size)?;
        let ts = engine(py, false, || self.to_var().split(split_size, dim))?;
        Ok(self.many(py, ts))
    }

    fn split_with_sizes(&self, py: Python<'_>, split_sizes: Vec<i64>, dim: Dim) -> PyResult<Vec<PyTensor>> {
        let split_sizes = super::counts(py, "split_with_sizes", "sizes", &split_sizes)?;
        let ts = engine(py, false, || self.to_var().split_with_sizes(&split_sizes, dim))?;
        Ok(self.many(py, ts))
    }

    /// Slices of size 1 along `dim` (the dim is kept).
    fn iter_dim(&self, py: Python<'_>, dim: Dim) -> PyResult<Vec<PyTensor>> {
        let ts = engine(py, false, || self.to_var().iter_dim(dim))?;
        Ok(self.many(py, ts))
    }

    /// Sliding windows of `size` every `step` along `dim`, as a new last dim.
    fn unfold(&self, py: Python<'_>, dim: Dim, size: i64, step: i64) -> PyResult<PyTensor> {
        let (size, step) = (super::count(py, "unfold", "size", size)?, super::count(py, "unfold", "step", step)?);
        self.dop(py, |v| v.unfold(dim, size, step))
    }

    /// Whether the elements are laid out row-major without gaps.
    fn is_contiguous(&self) -> bool {
        self.t.is_contiguous()
    }
}
