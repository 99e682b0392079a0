//! Views and dimension manipulation: reshape, permute, squeeze, expand,
//! narrow, chunk/split and friends. None of these copy the buffer.

use ferrum_core::plan::Attr;
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
    /// The same elements in another shape, in row-major order.
    ///
    /// `shape` is a tuple whose product equals the number of elements; one entry
    /// may be -1 (inferred) and 0 keeps the input's size at that dim. The rank of
    /// the result is `len(shape)`. A view when the strides allow it, a copy
    /// otherwise; a size mismatch is a `ShapeError`.
    ///
    /// Example:
    ///     >>> Tensor.arange(0, 6, device).reshape((2, -1)).to_data().to_list()
    ///     [[0, 1, 2], [3, 4, 5]]
    fn reshape(&self, py: Python<'_>, shape: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let s = int_list(py, "reshape", "a shape", shape)?;
        let out = self.dop(py, |v| v.reshape(&s))?;
        crate::trace::note("t_reshape", || vec![("shape", Attr::Ints(s.iter().map(|&d| d as i64).collect()))], &[Some(self)], &[&out]);
        Ok(out)
    }

    /// The last two dims swapped (`[..., n, m] -> [..., m, n]`), as Burn's
    /// `transpose`; a view, no copy. A rank-1 tensor is returned as it is.
    ///
    /// Example:
    ///     >>> Tensor.from_data([[1, 2, 3]], device).transpose().to_data().to_list()
    ///     [[1], [2], [3]]
    fn transpose(&self, py: Python<'_>) -> PyTensor {
        let out = self.wrap_var(py, self.to_var().transpose());
        let rank = self.t.rank() as i64;
        if rank < 2 {
            crate::trace::alias(self, &out);
        } else {
            crate::trace::note("t_swap_dims", || vec![("a", Attr::Int(rank - 2)), ("b", Attr::Int(rank - 1))], &[Some(self)], &[&out]);
        }
        out
    }

    /// Burn's `t()`: the last two dims swapped, a short name for `transpose`.
    ///
    /// Example:
    ///     >>> Tensor.zeros((2, 5, 3), device).t().dims()
    ///     (2, 3, 5)
    fn t(&self, py: Python<'_>) -> PyTensor {
        self.transpose(py)
    }

    /// Every dim reversed (`[a, b, c] -> [c, b, a]`), as NumPy's and PyTorch's `.T`;
    /// a view. For a matrix it is the transpose; `t()` swaps only the last two dims.
    ///
    /// Example:
    ///     >>> Tensor.zeros((2, 3, 4), device).T.dims()
    ///     (4, 3, 2)
    #[getter(T)]
    fn reversed_dims(&self, py: Python<'_>) -> PyResult<PyTensor> {
        let axes: Vec<isize> = (0..self.t.rank() as isize).rev().collect();
        self.dop(py, |v| v.permute(&axes))
    }

    /// Dims `dim1` and `dim2` swapped; a view. Negative dims count from the end.
    ///
    /// Example:
    ///     >>> Tensor.zeros((2, 3, 4), device).swap_dims(0, 2).dims()
    ///     (4, 3, 2)
    fn swap_dims(&self, py: Python<'_>, dim1: Dim, dim2: Dim) -> PyResult<PyTensor> {
        let out = self.dop(py, |v| v.swap_dims(dim1, dim2))?;
        crate::trace::note("t_swap_dims", || vec![("a", Attr::Int(dim1 as i64)), ("b", Attr::Int(dim2 as i64))], &[Some(self)], &[&out]);
        Ok(out)
    }

    /// The dims reordered: dim `i` of the result is dim `axes[i]` of `self`; a view.
    ///
    /// `axes` lists every dim once (negative values count from the end), else an
    /// `ArgumentError`.
    ///
    /// Example:
    ///     >>> Tensor.zeros((2, 3, 4), device).permute((2, 0, 1)).dims()
    ///     (4, 2, 3)
    fn permute(&self, py: Python<'_>, axes: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let a = int_list(py, "permute", "axes", axes)?;
        let out = self.dop(py, |v| v.permute(&a))?;
        crate::trace::note("t_permute", || vec![("axes", Attr::Ints(a.iter().map(|&d| d as i64).collect()))], &[Some(self)], &[&out]);
        Ok(out)
    }

    /// Dims `src` moved to positions `dst` (an int or a list each), the other dims
    /// keeping their order; a view.
    ///
    /// Example:
    ///     >>> Tensor.zeros((2, 3, 4), device).movedim(0, 2).dims()
    ///     (3, 4, 2)
    fn movedim(&self, py: Python<'_>, src: &Bound<'_, PyAny>, dst: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let (s, d) = (int_list(py, "movedim", "source dims", src)?, int_list(py, "movedim", "destination dims", dst)?);
        self.dop(py, |v| v.movedim(&s, &d))
    }

    /// The elements in reverse order along each dim of `axes` (a list); same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([[1, 2], [3, 4]], device).flip([1]).to_data().to_list()
    ///     [[2, 1], [4, 3]]
    fn flip(&self, py: Python<'_>, axes: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let a = int_list(py, "flip", "axes", axes)?;
        self.dop(py, |v| v.flip(&a))
    }

    /// Dims `start_dim` to `end_dim` (both included) merged into one; the rank
    /// drops by `end_dim - start_dim`.
    ///
    /// Example:
    ///     >>> Tensor.zeros((2, 3, 4), device).flatten(1, 2).dims()
    ///     (2, 12)
    fn flatten(&self, py: Python<'_>, start_dim: Dim, end_dim: Dim) -> PyResult<PyTensor> {
        self.dop(py, |v| v.flatten(start_dim, end_dim))
    }

    /// Every dim of size 1 removed (Burn's `squeeze` with no dims); a view.
    ///
    /// Example:
    ///     >>> Tensor.zeros((1, 3, 1), device).squeeze().dims()
    ///     (3,)
    fn squeeze(&self, py: Python<'_>) -> PyTensor {
        self.wrap_var(py, self.to_var().squeeze())
    }

    /// Dim `dim`, of size 1, removed: the rank drops by one. A dim of another size
    /// is a `ShapeError`.
    ///
    /// Example:
    ///     >>> Tensor.zeros((2, 1, 3), device).squeeze_dim(1).dims()
    ///     (2, 3)
    fn squeeze_dim(&self, py: Python<'_>, dim: Dim) -> PyResult<PyTensor> {
        self.dop(py, |v| v.squeeze_dim(dim))
    }

    /// The dims of `dims` (a list; each of size 1) removed; the rank drops by `len(dims)`.
    ///
    /// Example:
    ///     >>> Tensor.zeros((1, 2, 1, 3), device).squeeze_dims([0, 2]).dims()
    ///     (2, 3)
    fn squeeze_dims(&self, py: Python<'_>, dims: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let d = int_list(py, "squeeze_dims", "dims", dims)?;
        self.dop(py, |v| v.squeeze_dims(&d))
    }

    /// Leading dims of size 1 added up to `rank` (Burn's `unsqueeze::<D>()`).
    ///
    /// Example:
    ///     >>> Tensor.zeros((2, 3), device).unsqueeze(4).dims()
    ///     (1, 1, 2, 3)
    fn unsqueeze(&self, py: Python<'_>, rank: i64) -> PyResult<PyTensor> {
        let rank = super::count(py, "unsqueeze", "rank", rank)?;
        self.dop(py, |v| v.unsqueeze_to(rank))
    }

    /// A dim of size 1 inserted at position `dim`: the rank grows by one
    /// (`[3] -> [1, 3]` at 0, `[3, 1]` at 1).
    ///
    /// Example:
    ///     >>> Tensor.zeros((2, 3), device).unsqueeze_dim(1).dims()
    ///     (2, 1, 3)
    fn unsqueeze_dim(&self, py: Python<'_>, dim: Dim) -> PyResult<PyTensor> {
        self.dop(py, |v| v.unsqueeze_dims(&[dim]))
    }

    /// Dims of size 1 inserted at each position of `dims` (positions in the result).
    ///
    /// Example:
    ///     >>> Tensor.zeros((2, 3), device).unsqueeze_dims([0, 3]).dims()
    ///     (1, 2, 3, 1)
    fn unsqueeze_dims(&self, py: Python<'_>, dims: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let d = int_list(py, "unsqueeze_dims", "dims", dims)?;
        self.dop(py, |v| v.unsqueeze_dims(&d))
    }

    /// A view broadcast to `shape`: dims of size 1 are repeated without copying,
    /// -1 keeps a size, and extra leading dims may be added. Any other size change
    /// is a `ShapeError`.
    ///
    /// Example:
    ///     >>> Tensor.from_data([[1], [2]], device).expand((2, 3)).to_data().to_list()
    ///     [[1, 1, 1], [2, 2, 2]]
    fn expand(&self, py: Python<'_>, shape: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let s = int_list(py, "expand", "a shape", shape)?;
        self.dop(py, |v| v.expand(&s))
    }

    /// The `length` elements from `start` along `dim`; the other dims are whole.
    /// A view; the rank is kept.
    ///
    /// Example:
    ///     >>> Tensor.arange(0, 6, device).narrow(0, 2, 3).to_data().to_list()
    ///     [2, 3, 4]
    fn narrow(&self, py: Python<'_>, dim: Dim, start: &Bound<'_, PyAny>, length: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let (start, length) = (super::count_int(py, "narrow", "start", start)?, super::count_int(py, "narrow", "length", length)?);
        let out = self.dop(py, |v| v.narrow(dim, start, length))?;
        let attrs = || vec![("dim", Attr::Int(dim as i64)), ("start", Attr::Int(start as i64)), ("length", Attr::Int(length as i64))];
        crate::trace::note("t_narrow", attrs, &[Some(self)], &[&out]);
        Ok(out)
    }

    /// A list of `chunks` tensors splitting `dim` into nearly equal parts (the
    /// last may be smaller, and fewer parts come back when the dim is too short);
    /// each keeps the rank.
    ///
    /// Example:
    ///     >>> [c.to_data().to_list() for c in Tensor.arange(0, 5, device).chunk(2, 0)]
    ///     [[0, 1, 2], [3, 4]]
    fn chunk(&self, py: Python<'_>, chunks: i64, dim: Dim) -> PyResult<Vec<PyTensor>> {
        let chunks = super::count(py, "chunk", "chunks", chunks)?;
        let ts = engine(py, false, || self.to_var().chunk(chunks, dim))?;
        Ok(self.many(py, ts))
    }

    /// A list of tensors of `split_size` elements along `dim` each (the last may
    /// be smaller); each keeps the rank.
    ///
    /// Example:
    ///     >>> [c.dims() for c in Tensor.zeros((5, 2), device).split(2, 0)]
    ///     [(2, 2), (2, 2), (1, 2)]
    fn split(&self, py: Python<'_>, split_size: i64, dim: Dim) -> PyResult<Vec<PyTensor>> {
        let split_size = super::count(py, "split", "split_size", split_size)?;
        let ts = engine(py, false, || self.to_var().split(split_size, dim))?;
        Ok(self.many(py, ts))
    }

    /// A list of tensors of the sizes in `split_sizes` along `dim`, which must sum
    /// to the dim's size.
    ///
    /// Example:
    ///     >>> [c.to_data().to_list() for c in Tensor.arange(0, 5, device).split_with_sizes([1, 4], 0)]
    ///     [[0], [1, 2, 3, 4]]
    fn split_with_sizes(&self, py: Python<'_>, split_sizes: Vec<i64>, dim: Dim) -> PyResult<Vec<PyTensor>> {
        let split_sizes = super::counts(py, "split_with_sizes", "sizes", &split_sizes)?;
        let ts = engine(py, false, || self.to_var().split_with_sizes(&split_sizes, dim))?;
        Ok(self.many(py, ts))
    }

    /// A list of the slices of size 1 along `dim` (the dim is kept in each).
    ///
    /// Example:
    ///     >>> [r.to_data().to_list() for r in Tensor.from_data([[1, 2], [3, 4]], device).iter_dim(0)]
    ///     [[[1, 2]], [[3, 4]]]
    fn iter_dim(&self, py: Python<'_>, dim: Dim) -> PyResult<Vec<PyTensor>> {
        let ts = engine(py, false, || self.to_var().iter_dim(dim))?;
        Ok(self.many(py, ts))
    }

    /// Sliding windows of `size` elements every `step` along `dim`, as a new last
    /// dim: `[..., n, ...] -> [..., (n - size) // step + 1, ..., size]`.
    ///
    /// Example:
    ///     >>> Tensor.arange(0, 5, device).unfold(0, 2, 2).to_data().to_list()
    ///     [[0, 1], [2, 3]]
    fn unfold(&self, py: Python<'_>, dim: Dim, size: i64, step: i64) -> PyResult<PyTensor> {
        let (size, step) = (super::count(py, "unfold", "size", size)?, super::count(py, "unfold", "step", step)?);
        self.dop(py, |v| v.unfold(dim, size, step))
    }

    /// Whether the elements are laid out row-major without gaps (views such as
    /// `transpose` are not).
    ///
    /// Example:
    ///     >>> x = Tensor.zeros((2, 3), device)
    ///     >>> x.is_contiguous(), x.transpose().is_contiguous()
    ///     (True, False)
    fn is_contiguous(&self) -> bool {
        self.t.is_contiguous()
    }
}
