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

    /// A view of the given ranges: `(start, end)` pairs, slices, ints or None.
    fn slice(&self, py: Python<'_>, ranges: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let s = specs(py, "slice", ranges, self.t.shape(), false)?;
        self.dop(py, |v| v.slice(&s))
    }

    /// A view of `range` (a slice, an int, `(start, end)` or `(start, end,
    /// step)`) along `dim`, the other dims whole (Burn's `slice_dim`).
    fn slice_dim(&self, py: Python<'_>, dim: Dim, range: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let d = crate::error::engine(py, false, || self.t.dim("slice_dim", dim))?;
        let mut s = vec![SliceSpec::full(); d + 1];
        s[d] = one_spec(py, "slice_dim", range, d, isize::try_from(self.t.shape()[d]).unwrap_or(isize::MAX))?;
        self.dop(py, |v| v.slice(&s))
    }

    /// A new tensor with the region `ranges` replaced by `values`.
    fn slice_assign(&self, py: Python<'_>, ranges: &Bound<'_, PyAny>, values: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        let s = specs(py, "slice_assign", ranges, self.t.shape(), false)?;
        self.dop2(py, "slice_assign", &values, |t, v| t.slice_assign(&s, v))
    }

    /// A new tensor with the region `ranges` set to `value`.
    fn slice_fill(&self, py: Python<'_>, ranges: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let s = specs(py, "slice_fill", ranges, self.t.shape(), false)?;
        let v = scalar_for(py, "slice_fill", value, self.t.dtype())?;
        self.dop(py, |t| t.slice_fill(&s, v))
    }

    /// Entries `indices` (Int, rank 1) along `dim`.
    fn select(&self, py: Python<'_>, dim: Dim, indices: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        self.indexed(py, "select", &indices, |t, i| t.select(dim, i))
    }

    /// Adds `values` into the entries `indices` along `dim`.
    fn select_assign(&self, py: Python<'_>, dim: Dim, indices: PyRef<'_, PyTensor>, values: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        self.same_backend(py, "select_assign", &indices)?;
        let i = &indices.t;
        self.dop2(py, "select_assign", &values, |t, v| t.select_assign(dim, i, v))
    }

    /// `out[..i..] = self[..indices[..i..]..]` along `dim` (torch.gather).
    fn gather(&self, py: Python<'_>, dim: Dim, indices: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        self.indexed(py, "gather", &indices, |t, i| t.gather(dim, i))
    }

    /// Adds `values` at `indices` along `dim` (scatter-add).
    fn scatter(&self, py: Python<'_>, dim: Dim, indices: PyRef<'_, PyTensor>, values: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        self.same_backend(py, "scatter", &indices)?;
        let i = &indices.t;
        self.dop2(py, "scatter", &values, |t, v| t.scatter(dim, i, v))
    }

    /// Entries at `indices` (any rank) along `dim`, which is replaced by the
    /// indices' dims.
    fn take(&self, py: Python<'_>, dim: Dim, indices: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        self.indexed(py, "take", &indices, |t, i| t.take(dim, i))
    }

    /// `value` where `mask` is True, else `self`.
    fn mask_where(&self, py: Python<'_>, mask: PyRef<'_, PyTensor>, value: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        self.same_backend(py, "mask_where", &mask)?;
        let m = &mask.t;
        self.dop2(py, "mask_where", &value, |t, v| t.mask_where(m, v))
    }

    /// `value` where `mask` is True, else `self`.
    fn mask_fill(&self, py: Python<'_>, mask: PyRef<'_, PyTensor>, value: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let v = scalar_for(py, "mask_fill", value, self.t.dtype())?;
        self.indexed(py, "mask_fill", &mask, |t, m| t.mask_fill(m, v))
    }

    /// Pad with `value` (a number, or a `PadMode`: `Constant(v)`, `Reflect`,
    /// `Edge`): `(left, right)` pads the last dim, `(left, right, top,
    /// bottom)` also the one before (Burn's order), and so on.
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

    /// Tile the tensor `sizes[d]` times along each dim d.
    fn repeat(&self, py: Python<'_>, sizes: Vec<i64>) -> PyResult<PyTensor> {
        let sizes = super::counts(py, "repeat", "sizes", &sizes)?;
        self.dop(py, |t| t.repeat(&sizes))
    }

    fn repeat_dim(&self, py: Python<'_>, dim: Dim, times: i64) -> PyResult<PyTensor> {
        let times = super::count(py, "repeat_dim", "times", times)?;
        self.dop(py, |t| t.repeat_dim(dim, times))
    }

    /// Rotate elements by `shifts` along `dims` (torch.roll).
    fn roll(&self, py: Python<'_>, shifts: Vec<i64>, dims: Vec<isize>) -> PyResult<PyTensor> {
        self.dop(py, |t| t.roll(&shifts, &dims))
    }

    fn roll_dim(&self, py: Python<'_>, shift: i64, dim: Dim) -> PyResult<PyTensor> {
        self.dop(py, |t| t.roll(&[shift], &[dim]))
    }

    /// One-hot encoding of class indices in a new last dim.
    fn one_hot(&self, py: Python<'_>, num_classes: i64) -> PyResult<PyTensor> {
        let num_classes = super::count(py, "one_hot", "num_classes", num_classes)?;
        self.op(py, "one_hot", |t| t.one_hot(num_classes))
    }

    #[pyo3(signature = (num_classes, on_value, off_value, axis = -1))]
    fn one_hot_fill(&self, py: Python<'_>, num_classes: i64, on_value: f64, off_value: f64, axis: Dim) -> PyResult<PyTensor> {
        let num_classes = super::count(py, "one_hot_fill", "num_classes", num_classes)?;
        self.op(py, "one_hot_fill", |t| t.one_hot_fill(num_classes, on_value, off_value, axis))
    }

    /// Upper triangle of the last two dims (`j - i >= diagonal`), zeros elsewhere.
    #[pyo3(signature = (diagonal = 0))]
    fn triu(&self, py: Python<'_>, diagonal: i64) -> PyResult<PyTensor> {
        self.dop(py, |t| t.triu(diagonal))
    }

    #[pyo3(signature = (diagonal = 0))]
    fn tril(&self, py: Python<'_>, diagonal: i64) -> PyResult<PyTensor> {
        self.dop(py, |t| t.tril(diagonal))
    }

    /// Coordinates of the non-zero (True) elements, one Int tensor per dim.
    fn nonzero(&self, py: Python<'_>) -> PyResult<Vec<PyTensor>> {
        let ts = engine(py, false, || self.t.nonzero())?;
        Ok(ts.into_iter().map(|t| self.wrap(py, t)).collect())
    }

    /// Coordinates of the non-zero (True) elements as an Int `[n, rank]` tensor.
    fn argwhere(&self, py: Python<'_>) -> PyResult<PyTensor> {
        self.op(py, "argwhere", |t| t.argwhere())
    }

    /// Bilinear samples of `[n, c, h, w]` at the `[n, h_out, w_out, 2]`
    /// grid's `(x, y)` locations in `[-1, 1]`: `[n, c, h_out, w_out]`.
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

    /// Concatenate along `dim`.
    #[staticmethod]
    fn cat(py: Python<'_>, tensors: Vec<PyRef<'_, PyTensor>>, dim: Dim) -> PyResult<PyTensor> {
        let vs = vars_of(py, "cat", &tensors)?;
        let v = engine(py, true, || Var::cat(&vs, dim))?;
        Ok(tensors[0].wrap_var(py, v))
    }

    /// Stack along a new dim `dim`.
    #[staticmethod]
    fn stack(py: Python<'_>, tensors: Vec<PyRef<'_, PyTensor>>, dim: Dim) -> PyResult<PyTensor> {
        let vs = vars_of(py, "stack", &tensors)?;
        let v = engine(py, true, || Var::stack(&vs, dim))?;
        Ok(tensors[0].wrap_var(py, v))
    }
}
