//! Slicing, indexing, assignment, masks, padding, concatenation.

use ferrum_core::autodiff::Var;
use ferrum_core::{SliceSpec, Tensor};
use pyo3::prelude::*;
use pyo3::types::{PyEllipsis, PySlice, PyTuple};

use super::{scalar_for, Dim, PyTensor};
use crate::pad_mode::Mode;
use ferrum_core::ops::pad_modes::PadMode;
use crate::error::{argument_error, engine, shape_error};

/// Turn a Python index (int, slice, `(start, end)`, `(start, end, step)`,
/// None, Ellipsis, or a tuple/list of them) into one spec per dim. Ints and
/// ranges keep their dim, as in Burn; ranges follow Burn's `s![start..end;
/// step]`: negative bounds count from the end, bounds past the dim are
/// clamped, an empty range gives an empty dim, and a negative step walks
/// the range backwards.
fn specs(py: Python<'_>, op: &str, key: &Bound<'_, PyAny>, shape: &[usize], is_getitem: bool) -> PyResult<Vec<SliceSpec>> {
    let items: Vec<Bound<'_, PyAny>> = if key.is_instance_of::<PyTuple>() && is_getitem {
        key.cast::<PyTuple>()?.iter().collect()
    } else if !is_getitem && !key.is_instance_of::<PySlice>() {
        key.try_iter()
            .map_err(|_| argument_error(py, format!("{op}: expected a sequence of ranges, found {}", key.repr().map(|r| r.to_string()).unwrap_or_default())))?
            .collect::<PyResult<_>>()?
    } else {
        vec![key.clone()]
    };
    let n_ellipsis = items.iter().filter(|i| i.is_instance_of::<PyEllipsis>()).count();
    if n_ellipsis > 1 {
        return Err(argument_error(py, format!("{op}: at most one Ellipsis may appear in an index")));
    }
    let explicit = items.len() - n_ellipsis;
    if explicit > shape.len() {
        return Err(shape_error(py, format!("{op}: {explicit} indices given for a tensor of rank {} (shape {shape:?})", shape.len())));
    }
    let mut out = Vec::with_capacity(shape.len());
    for item in &items {
        if item.is_instance_of::<PyEllipsis>() {
            out.extend(std::iter::repeat_n(SliceSpec::full(), shape.len() - explicit));
            continue;
        }
        let d = out.len();
        let n = shape[d] as isize;
        if item.is_none() {
            out.push(SliceSpec::full());
        } else {
            out.push(one_spec(py, op, item, d, n)?);
        }
    }
    Ok(out)
}

/// One dim's spec from a slice, an int (a range of one, in bounds) or a
/// `(start, end)` / `(start, end, step)` range (Burn's rules, see `specs`).
fn one_spec(py: Python<'_>, op: &str, item: &Bound<'_, PyAny>, d: usize, n: isize) -> PyResult<SliceSpec> {
    if let Ok(s) = item.cast::<PySlice>() {
        let get = |name: &str| -> PyResult<Option<isize>> {
            let v = s.getattr(name)?;
            if v.is_none() { Ok(None) } else { v.extract().map(Some) }
        };
        let step = get("step")?.unwrap_or(1);
        if step == 0 {
            return Err(argument_error(py, format!("{op}: slice step must not be 0")));
        }
        return Ok(SliceSpec { start: get("start")?, end: get("stop")?, step });
    }
    if let Ok(i) = item.extract::<isize>() {
        let j = if i < 0 { i + n } else { i };
        if j < 0 || j >= n {
            return Err(crate::error::to_py(py, ferrum_core::Error::IndexOutOfBounds { op: "index", index: i as i64, dim: d, size: n as usize }));
        }
        return Ok(SliceSpec::range(j, j + 1));
    }
    let (a, b, step) = if let Ok((a, b)) = item.extract::<(isize, isize)>() {
        (a, b, 1)
    } else if let Ok(t) = item.extract::<(isize, isize, isize)>() {
        t
    } else {
        return Err(argument_error(py, format!("{op}: cannot index with {}", item.repr()?)));
    };
    if step == 0 {
        return Err(argument_error(py, format!("{op}: range step must not be 0, found ({a}, {b}, 0)")));
    }
    let bound = |v: isize| if v < 0 { v.saturating_add(n).max(0) } else { v.min(n) };
    let (s, e) = (bound(a), bound(b));
    Ok(if e <= s {
        SliceSpec::range(0, 0)
    } else if step > 0 {
        SliceSpec { start: Some(s), end: Some(e), step }
    } else {
        // Backwards from the range's last element down to its first.
        SliceSpec { start: Some(e - 1), end: if s == 0 { None } else { Some(s - 1) }, step }
    })
}

fn vars_of<'a>(py: Python<'_>, op: &str, list: &'a [PyRef<'a, PyTensor>]) -> PyResult<Vec<Var>> {
    let first = list.first().ok_or_else(|| argument_error(py, format!("{op}: expected at least one tensor, found none")))?;
    for t in &list[1..] {
        first.same_backend(py, op, t)?;
    }
    Ok(list.iter().map(|t| t.to_var()).collect())
}

impl PyTensor {
    /// A differentiable op of `self` indexed by an Int or Bool tensor, which
    /// itself takes no gradient.
    fn indexed(
        &self,
        py: Python<'_>,
        name: &str,
        index: &PyTensor,
        f: impl Fn(&Var, &Tensor) -> ferrum_core::Result<Var> + Send + Sync,
    ) -> PyResult<PyTensor> {
        self.same_backend(py, name, index)?;
        let i = &index.t;
        self.dop(py, |v| f(v, i))
    }
}

#[pymethods]
impl PyTensor {
    /// `t[1:3, :, ::2]`: a view; ints keep their dim (Burn's slice).
    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let s = specs(py, "index", key, self.t.shape(), true)?;
        self.dop(py, |v| v.slice(&s))
    }

    /// A view of the region `ranges`, one entry per leading dim: a `(start, end)`
    /// pair, a `slice`, an int (the dim is kept, of size 1) or None (the whole
    /// dim). Dims without an entry are whole; the rank is kept. Negative bounds
    /// count from the end and ranges are clipped to the dim, as Python's slices
    /// are; an int index out of range is an `OutOfBoundsError`.
    /// `t[0:2, 1:3]` is the same with Python's syntax.
    ///
    /// Example:
    ///     >>> x = Tensor.arange(0, 6, device).reshape((2, 3))
    ///     >>> x.slice([(0, 1), (1, 3)]).to_data().to_list()
    ///     [[1, 2]]
    fn slice(&self, py: Python<'_>, ranges: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let s = specs(py, "slice", ranges, self.t.shape(), false)?;
        self.dop(py, |v| v.slice(&s))
    }

    /// A view of `range` (a slice, an int, `(start, end)` or `(start, end, step)`)
    /// along `dim`, the other dims whole (Burn's `slice_dim`); the rank is kept.
    ///
    /// Example:
    ///     >>> Tensor.arange(0, 6, device).reshape((2, 3)).slice_dim(1, (0, 3, 2)).to_data().to_list()
    ///     [[0, 2], [3, 5]]
    fn slice_dim(&self, py: Python<'_>, dim: Dim, range: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let d = crate::error::engine(py, false, || self.t.dim("slice_dim", dim))?;
        let mut s = vec![SliceSpec::full(); d + 1];
        s[d] = one_spec(py, "slice_dim", range, d, isize::try_from(self.t.shape()[d]).unwrap_or(isize::MAX))?;
        self.dop(py, |v| v.slice(&s))
    }

    /// A new tensor equal to `self` with the region `ranges` (as in `slice`)
    /// replaced by `values`, which has the region's shape. `self` is unchanged.
    ///
    /// Example:
    ///     >>> x = Tensor.zeros((2, 3), device)
    ///     >>> x.slice_assign([(0, 1), (1, 3)], Tensor.ones((1, 2), device)).to_data().to_list()
    ///     [[0.0, 1.0, 1.0], [0.0, 0.0, 0.0]]
    fn slice_assign(&self, py: Python<'_>, ranges: &Bound<'_, PyAny>, values: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        let s = specs(py, "slice_assign", ranges, self.t.shape(), false)?;
        self.dop2(py, "slice_assign", &values, |t, v| t.slice_assign(&s, v))
    }

    /// A new tensor equal to `self` with the region `ranges` (as in `slice`) set
    /// to the number `value`.
    ///
    /// Example:
    ///     >>> Tensor.zeros((2, 2), device, Int).slice_fill([(1, 2)], 7).to_data().to_list()
    ///     [[0, 0], [7, 7]]
    fn slice_fill(&self, py: Python<'_>, ranges: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let s = specs(py, "slice_fill", ranges, self.t.shape(), false)?;
        let v = scalar_for(py, "slice_fill", value, self.t.dtype())?;
        self.dop(py, |t| t.slice_fill(&s, v))
    }

    /// The entries at `indices` (a rank-1 Int tensor) along `dim`, in that order;
    /// `dim` takes the length of `indices`, the rank is kept. An index out of
    /// range is an `OutOfBoundsError`.
    ///
    /// Example:
    ///     >>> x = Tensor.from_data([[1, 2], [3, 4], [5, 6]], device)
    ///     >>> x.select(0, Tensor.from_data([2, 0], device)).to_data().to_list()
    ///     [[5, 6], [1, 2]]
    fn select(&self, py: Python<'_>, dim: Dim, indices: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        let out = self.indexed(py, "select", &indices, |t, i| t.select(dim, i))?;
        crate::trace::note("t_select", || vec![("dim", ferrum_core::plan::Attr::Int(dim as i64))], &[Some(self), Some(&indices)], &[&out]);
        Ok(out)
    }

    /// A new tensor with `values` added into the entries `indices` (a rank-1 Int
    /// tensor) along `dim`, as Burn's `select_assign`; repeated indices add up.
    /// `values` has `self`'s shape with `dim` of the length of `indices`.
    ///
    /// Example:
    ///     >>> x = Tensor.zeros((3,), device)
    ///     >>> x.select_assign(0, Tensor.from_data([0, 0, 2], device), Tensor.ones((3,), device)).to_data().to_list()
    ///     [2.0, 0.0, 1.0]
    fn select_assign(&self, py: Python<'_>, dim: Dim, indices: PyRef<'_, PyTensor>, values: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        self.same_backend(py, "select_assign", &indices)?;
        let i = &indices.t;
        self.dop2(py, "select_assign", &values, |t, v| t.select_assign(dim, i, v))
    }

    /// `out[i][j] = self[indices[i][j]][j]` along `dim` (PyTorch's `gather`):
    /// `indices` is an Int tensor of `self`'s rank, and the result has its shape.
    ///
    /// Example:
    ///     >>> x = Tensor.from_data([[1, 2], [3, 4]], device)
    ///     >>> x.gather(1, Tensor.from_data([[1], [0]], device)).to_data().to_list()
    ///     [[2], [3]]
    fn gather(&self, py: Python<'_>, dim: Dim, indices: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        self.indexed(py, "gather", &indices, |t, i| t.gather(dim, i))
    }

    /// A new tensor with `values` added at `indices` along `dim` (scatter-add):
    /// `out[indices[i][j]][j] += values[i][j]` for `dim=0`. `indices` (Int) and
    /// `values` have the same shape and `self`'s rank.
    ///
    /// Example:
    ///     >>> x = Tensor.zeros((1, 3), device)
    ///     >>> x.scatter(1, Tensor.from_data([[2, 2]], device), Tensor.ones((1, 2), device)).to_data().to_list()
    ///     [[0.0, 0.0, 2.0]]
    fn scatter(&self, py: Python<'_>, dim: Dim, indices: PyRef<'_, PyTensor>, values: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        self.same_backend(py, "scatter", &indices)?;
        let i = &indices.t;
        self.dop2(py, "scatter", &values, |t, v| t.scatter(dim, i, v))
    }

    /// The entries at `indices` (an Int tensor of any rank) along `dim`, which is
    /// replaced by the indices' dims: `[a, n, b]` with indices `[i, j]` at dim 1
    /// gives `[a, i, j, b]`.
    ///
    /// Example:
    ///     >>> x = Tensor.from_data([10, 20, 30], device)
    ///     >>> x.take(0, Tensor.from_data([[2, 0], [1, 1]], device)).to_data().to_list()
    ///     [[30, 10], [20, 20]]
    fn take(&self, py: Python<'_>, dim: Dim, indices: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        self.indexed(py, "take", &indices, |t, i| t.take(dim, i))
    }

    /// `value` where the Bool `mask` is True, `self` elsewhere (the element-wise
    /// choice of Burn's `mask_where`). The three tensors have the same rank; dims
    /// of size 1 broadcast.
    ///
    /// Example:
    ///     >>> x = Tensor.from_data([1.0, 2.0, 3.0], device)
    ///     >>> mask = Tensor.from_data([True, False, True], device)
    ///     >>> x.mask_where(mask, Tensor.zeros((3,), device)).to_data().to_list()
    ///     [0.0, 2.0, 0.0]
    fn mask_where(&self, py: Python<'_>, mask: PyRef<'_, PyTensor>, value: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        self.same_backend(py, "mask_where", &mask)?;
        let m = &mask.t;
        self.dop2(py, "mask_where", &value, |t, v| t.mask_where(m, v))
    }

    /// The number `value` where the Bool `mask` is True, `self` elsewhere. The
    /// mask has `self`'s rank; its dims of size 1 broadcast.
    ///
    /// Example:
    ///     >>> x = Tensor.from_data([[1.0, 2.0], [3.0, 4.0]], device)
    ///     >>> x.mask_fill(x.greater_elem(2.0), 0.0).to_data().to_list()
    ///     [[1.0, 2.0], [0.0, 0.0]]
    fn mask_fill(&self, py: Python<'_>, mask: PyRef<'_, PyTensor>, value: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let v = scalar_for(py, "mask_fill", value, self.t.dtype())?;
        let out = self.indexed(py, "mask_fill", &mask, |t, m| t.mask_fill(m, v))?;
        if crate::trace_state::active() {
            match crate::trace::scalar_attrs(v) {
                Some(attrs) => crate::trace::note("t_mask_fill", || attrs, &[Some(self), Some(&mask)], &[&out]),
                None => crate::trace::refuse("mask_fill", "a Bool fill value has no plan instruction"),
            }
        }
        Ok(out)
    }

    /// The tensor padded: `padding` is `(left, right)` for the last dim, `(left,
    /// right, top, bottom)` for the last two (Burn's order), and so on. `value`
    /// is a number (0 by default) or a `PadMode`: `Constant(v)`, `Reflect`
    /// (mirror without the edge) or `Edge` (repeat the edge).
    ///
    /// Example:
    ///     >>> Tensor.from_data([[1, 2]], device).pad((1, 2), 0).to_data().to_list()
    ///     [[0, 1, 2, 0, 0]]
    #[pyo3(signature = (padding, value = None))]
    fn pad(&self, py: Python<'_>, padding: Vec<i64>, value: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
        let padding = super::counts(py, "pad", "padding", &padding)?;
        if !padding.len().is_multiple_of(2) {
            return Err(argument_error(py, format!("pad: expected (before, after) pairs, found {} numbers", padding.len())));
        }
        let pairs: Vec<(usize, usize)> = padding.chunks(2).map(|c| (c[0], c[1])).collect();
        let mode = value.and_then(|v| v.extract::<PyRef<'_, crate::pad_mode::PyPadMode>>().ok()).map(|m| m.0);
        let v = match (mode, value) {
            (Some(Mode::Reflect), _) => return self.dop(py, |t| t.pad_mode(&pairs, PadMode::Reflect)),
            (Some(Mode::Edge), _) => return self.dop(py, |t| t.pad_mode(&pairs, PadMode::Edge)),
            (Some(Mode::Constant(c)), _) => {
                // An integral constant pads an Int tensor too.
                let obj = if c.fract() == 0.0 && c.abs() < 9.0e15 { (c as i64).into_pyobject(py)?.into_any() } else { c.into_pyobject(py)?.into_any() };
                scalar_for(py, "pad", &obj, self.t.dtype())?
            }
            (None, Some(v)) => scalar_for(py, "pad", v, self.t.dtype())?,
            (None, None) => ferrum_core::Scalar::Int(0),
        };
        self.dop(py, |t| t.pad(&pairs, v))
    }

    /// The tensor tiled `sizes[d]` times along each dim `d` (`len(sizes)` is the
    /// rank): `[2, 3]` repeated `(2, 1)` is `[4, 3]`.
    ///
    /// Example:
    ///     >>> Tensor.from_data([[1, 2]], device).repeat([2, 2]).to_data().to_list()
    ///     [[1, 2, 1, 2], [1, 2, 1, 2]]
    fn repeat(&self, py: Python<'_>, sizes: Vec<i64>) -> PyResult<PyTensor> {
        let sizes = super::counts(py, "repeat", "sizes", &sizes)?;
        self.dop(py, |t| t.repeat(&sizes))
    }

    /// The tensor tiled `times` times along `dim`; the dim's size is multiplied.
    ///
    /// Example:
    ///     >>> Tensor.from_data([[1, 2]], device).repeat_dim(0, 3).to_data().to_list()
    ///     [[1, 2], [1, 2], [1, 2]]
    fn repeat_dim(&self, py: Python<'_>, dim: Dim, times: i64) -> PyResult<PyTensor> {
        let times = super::count(py, "repeat_dim", "times", times)?;
        self.dop(py, |t| t.repeat_dim(dim, times))
    }

    /// The elements rotated by `shifts[i]` positions along `dims[i]` (PyTorch's
    /// `roll`): what leaves one end comes back at the other. Same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([[1, 2, 3], [4, 5, 6]], device).roll([1, 1], [0, 1]).to_data().to_list()
    ///     [[6, 4, 5], [3, 1, 2]]
    fn roll(&self, py: Python<'_>, shifts: Vec<i64>, dims: Vec<isize>) -> PyResult<PyTensor> {
        self.dop(py, |t| t.roll(&shifts, &dims))
    }

    /// The elements rotated by `shift` positions along `dim` (negative shifts go
    /// the other way). Same shape.
    ///
    /// Example:
    ///     >>> Tensor.from_data([1, 2, 3, 4], device).roll_dim(1, 0).to_data().to_list()
    ///     [4, 1, 2, 3]
    fn roll_dim(&self, py: Python<'_>, shift: i64, dim: Dim) -> PyResult<PyTensor> {
        self.dop(py, |t| t.roll(&[shift], &[dim]))
    }

    /// The one-hot encoding of class indices, in a new last dim of size
    /// `num_classes`: an Int `[n]` of indices gives `[n, num_classes]` (an index
    /// out of range is an `OutOfBoundsError`). The kind is `self`'s.
    ///
    /// Example:
    ///     >>> Tensor.from_data([0, 2], device).one_hot(3).to_data().to_list()
    ///     [[1, 0, 0], [0, 0, 1]]
    fn one_hot(&self, py: Python<'_>, num_classes: i64) -> PyResult<PyTensor> {
        let num_classes = super::count(py, "one_hot", "num_classes", num_classes)?;
        self.op(py, "one_hot", |t| t.one_hot(num_classes))
    }

    /// The one-hot encoding of class indices with `on_value` at the index and
    /// `off_value` elsewhere, in a new dim of size `num_classes` at `axis` (the
    /// last by default), in the kind of `self`. Negative indices count from
    /// the end.
    ///
    /// Example:
    ///     >>> Tensor.from_data([1, -1], device).one_hot_fill(3, 5.0, -1.0).to_data().to_list()
    ///     [[-1, 5, -1], [-1, -1, 5]]
    #[pyo3(signature = (num_classes, on_value, off_value, axis = -1))]
    fn one_hot_fill(&self, py: Python<'_>, num_classes: i64, on_value: f64, off_value: f64, axis: Dim) -> PyResult<PyTensor> {
        let num_classes = super::count(py, "one_hot_fill", "num_classes", num_classes)?;
        self.op(py, "one_hot_fill", |t| t.one_hot_fill(num_classes, on_value, off_value, axis))
    }

    /// The upper triangle of the last two dims (where `col - row >= diagonal`),
    /// zeros elsewhere; same shape. `diagonal=1` also zeroes the main diagonal.
    ///
    /// Example:
    ///     >>> Tensor.ones((3, 3), device, Int).triu().to_data().to_list()
    ///     [[1, 1, 1], [0, 1, 1], [0, 0, 1]]
    #[pyo3(signature = (diagonal = 0))]
    fn triu(&self, py: Python<'_>, diagonal: i64) -> PyResult<PyTensor> {
        self.dop(py, |t| t.triu(diagonal))
    }

    /// The lower triangle of the last two dims (where `col - row <= diagonal`),
    /// zeros elsewhere; same shape. `diagonal=-1` also zeroes the main diagonal.
    ///
    /// Example:
    ///     >>> Tensor.ones((3, 3), device, Int).tril(-1).to_data().to_list()
    ///     [[0, 0, 0], [1, 0, 0], [1, 1, 0]]
    #[pyo3(signature = (diagonal = 0))]
    fn tril(&self, py: Python<'_>, diagonal: i64) -> PyResult<PyTensor> {
        self.dop(py, |t| t.tril(diagonal))
    }

    /// The coordinates of the non-zero (True) elements: a list of one rank-1 Int
    /// tensor per dim, each of length n (the number of such elements).
    ///
    /// Example:
    ///     >>> rows, cols = Tensor.from_data([[0, 3], [5, 0]], device).nonzero()
    ///     >>> rows.to_data().to_list(), cols.to_data().to_list()
    ///     ([0, 1], [1, 0])
    fn nonzero(&self, py: Python<'_>) -> PyResult<Vec<PyTensor>> {
        let ts = engine(py, false, || self.t.nonzero())?;
        Ok(ts.into_iter().map(|t| self.wrap(py, t)).collect())
    }

    /// The coordinates of the non-zero (True) elements as an Int tensor of shape
    /// `[n, rank]`, in row-major order.
    ///
    /// Example:
    ///     >>> Tensor.from_data([[0, 3], [5, 0]], device).argwhere().to_data().to_list()
    ///     [[0, 1], [1, 0]]
    fn argwhere(&self, py: Python<'_>) -> PyResult<PyTensor> {
        self.op(py, "argwhere", |t| t.argwhere())
    }

    /// Samples of a `[n, c, h, w]` Float tensor at the locations of `grid`, a
    /// `[n, h_out, w_out, 2]` tensor of `(x, y)` in `[-1, 1]` (-1 the first pixel,
    /// 1 the last): `[n, c, h_out, w_out]`. `mode` is `"bilinear"`; `padding_mode`
    /// (`"zeros"`, `"border"`, `"reflection"`) says what lies outside, and
    /// `align_corners` whether -1 and 1 are pixel centres.
    ///
    /// Example:
    ///     >>> image = Tensor.from_data([[[[0.0, 1.0], [2.0, 3.0]]]], device)
    ///     >>> centre = Tensor.zeros((1, 1, 1, 2), device)
    ///     >>> image.grid_sample_2d(centre).to_data().to_list()
    ///     [[[[1.5]]]]
    #[pyo3(signature = (grid, mode = "bilinear", padding_mode = "zeros", align_corners = false))]
    fn grid_sample_2d(&self, py: Python<'_>, grid: PyRef<'_, PyTensor>, mode: &str, padding_mode: &str, align_corners: bool) -> PyResult<PyTensor> {
        use ferrum_core::ops::grid_sample::{GridSampleOptions, GridSamplePadding};
        if mode != "bilinear" {
            return Err(argument_error(py, format!("grid_sample_2d: mode must be 'bilinear' (the only one Burn's CPU backend has), found {mode:?}")));
        }
        let padding = match padding_mode {
            "zeros" => GridSamplePadding::Zeros,
            "border" => GridSamplePadding::Border,
            "reflection" => GridSamplePadding::Reflection,
            other => return Err(argument_error(py, format!("grid_sample_2d: padding_mode must be 'zeros', 'border' or 'reflection', found {other:?}"))),
        };
        let options = GridSampleOptions { padding, align_corners };
        self.dop2(py, "grid_sample_2d", &grid, |x, g| x.grid_sample_2d(g, options))
    }

    /// The tensors joined along the existing dim `dim`. They share kind, rank,
    /// backend and every other dim; the result's `dim` is the sum of theirs.
    ///
    /// Example:
    ///     >>> a, b = Tensor.zeros((2, 3), device), Tensor.ones((1, 3), device)
    ///     >>> Tensor.cat([a, b], 0).dims()
    ///     (3, 3)
    #[staticmethod]
    fn cat(py: Python<'_>, tensors: Vec<PyRef<'_, PyTensor>>, dim: Dim) -> PyResult<PyTensor> {
        let vs = vars_of(py, "cat", &tensors)?;
        let v = engine(py, true, || Var::cat(&vs, dim))?;
        let out = tensors[0].wrap_var(py, v);
        if crate::trace_state::active() {
            let ins: Vec<Option<&PyTensor>> = tensors.iter().map(|t| Some(&**t)).collect();
            crate::trace::note("t_cat", || vec![("dim", ferrum_core::plan::Attr::Int(dim as i64))], &ins, &[&out]);
        }
        Ok(out)
    }

    /// The tensors (of one shape) stacked along a new dim `dim`: `k` tensors of
    /// shape `[a, b]` stacked at 0 give `[k, a, b]`.
    ///
    /// Example:
    ///     >>> Tensor.stack([Tensor.zeros((2,), device), Tensor.ones((2,), device)], 0).to_data().to_list()
    ///     [[0.0, 0.0], [1.0, 1.0]]
    #[staticmethod]
    fn stack(py: Python<'_>, tensors: Vec<PyRef<'_, PyTensor>>, dim: Dim) -> PyResult<PyTensor> {
        let vs = vars_of(py, "stack", &tensors)?;
        let v = engine(py, true, || Var::stack(&vs, dim))?;
        Ok(tensors[0].wrap_var(py, v))
    }
}
