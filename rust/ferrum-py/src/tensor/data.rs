//! `TensorData`: values taken out of a tensor (or made to go into one), with
//! their shape and dtype, as Burn's TensorData.

use ferrum_core::{DType, Kind, Tensor};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use pyo3::IntoPyObjectExt;

use crate::device::PyDType;
use crate::error::{engine, IntoPyResult};
use crate::tensor::creation::tensor_from_any;
use crate::tensor::format::format_values;

/// `with_dtype!` over the dtypes whose elements convert to Python objects
/// (every dtype but f16 and bf16, which `python_readable` widens first).
macro_rules! with_python_dtype {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            DType::F32 => { type $T = f32; $body }
            DType::F64 => { type $T = f64; $body }
            DType::I64 => { type $T = i64; $body }
            DType::I32 => { type $T = i32; $body }
            DType::U8 => { type $T = u8; $body }
            DType::Bool => { type $T = bool; $body }
            DType::F16 | DType::BF16 => unreachable!("half floats are widened to f32 first"),
        }
    };
}

/// Values out of (or into) a tensor: a shape, a dtype and the values in
/// row-major order (Burn's `TensorData`).
///
/// Built from nested lists, or from flat `values` with a `shape`; `dtype`
/// overrides the inferred one. Two `TensorData` are equal when shapes, kinds
/// and values are (Float compared in f64).
///
/// Example:
///     >>> data = TensorData([1, 2, 3, 4], (2, 2))
///     >>> data.shape, data.to_list()
///     ((2, 2), [[1, 2], [3, 4]])
///     >>> Tensor.from_data(data, device).to_data() == data
///     True
#[pyclass(frozen, name = "TensorData", module = "ferrum")]
pub struct PyTensorData {
    /// Always contiguous.
    pub t: Tensor,
}

/// The tensor in a dtype whose elements Python can hold: f16 and bf16 as
/// f32 (exact), the others as they are.
fn python_readable(py: Python<'_>, t: &Tensor) -> PyResult<Tensor> {
    match t.dtype() {
        DType::F16 | DType::BF16 => engine(py, false, || t.cast(DType::F32)),
        _ => Ok(t.clone()),
    }
}

fn nested_list<'py>(py: Python<'py>, t: &Tensor) -> PyResult<Bound<'py, PyAny>> {
    let t = &python_readable(py, t)?;
    with_python_dtype!(t.dtype(), T => {
        let flat = engine(py, false, || t.try_to_vec::<T>("to_list"))?;
        build(py, &flat, t.shape())
    })
}

fn build<'py, T: Copy + for<'a> IntoPyObject<'py>>(py: Python<'py>, flat: &[T], shape: &[usize]) -> PyResult<Bound<'py, PyAny>> {
    if shape.is_empty() {
        return flat[0].into_bound_py_any(py);
    }
    if shape.len() == 1 {
        return Ok(PyList::new(py, flat.iter().copied())?.into_any());
    }
    let step: usize = shape[1..].iter().product();
    let items = (0..shape[0]).map(|i| build(py, &flat[i * step..(i + 1) * step], &shape[1..])).collect::<PyResult<Vec<_>>>()?;
    Ok(PyList::new(py, items)?.into_any())
}

/// Equal shapes, kinds and values (Float compared in f64, so f32 and f64
/// data holding the same numbers are equal).
fn same_values(a: &Tensor, b: &Tensor) -> ferrum_core::Result<bool> {
    const OP: &str = "TensorData.__eq__";
    if a.shape() != b.shape() || a.kind() != b.kind() {
        return Ok(false);
    }
    Ok(match a.kind() {
        Kind::Float => a.cast(DType::F64)?.try_to_vec::<f64>(OP)? == b.cast(DType::F64)?.try_to_vec::<f64>(OP)?,
        _ => ferrum_core::with_dtype!(a.dtype(), T => a.try_to_vec::<T>(OP)? == b.try_to_vec::<T>(OP)?),
    })
}

#[pymethods]
impl PyTensorData {
    /// From nested lists, or flat `values` with a `shape`.
    #[new]
    #[pyo3(signature = (values, shape = None, *, dtype = None))]
    fn new(py: Python<'_>, values: &Bound<'_, PyAny>, shape: Option<Vec<usize>>, dtype: Option<PyDType>) -> PyResult<Self> {
        let t = tensor_from_any(py, values, dtype.map(Into::into))?;
        let t = match shape {
            Some(s) => {
                // Checked: a product that wraps around could equal the count.
                if ferrum_core::shape::count(&s) != Some(t.numel()) {
                    return Err(crate::error::shape_error(py, format!("TensorData: {} values do not fill shape {s:?}", t.numel())));
                }
                engine(py, false, || t.reshape(&s.iter().map(|&d| d as isize).collect::<Vec<_>>()))?
            }
            None => t,
        };
        Ok(PyTensorData { t: engine(py, false, || t.try_contiguous("TensorData"))? })
    }

    /// The shape as a tuple of ints.
    ///
    /// Example:
    ///     >>> TensorData([[1, 2, 3]]).shape
    ///     (1, 3)
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.t.shape())
    }

    /// The element type (`DType.F32`, `F64`, `I64` or `Bool`).
    ///
    /// Example:
    ///     >>> TensorData([1.0]).dtype == DType.F32
    ///     True
    #[getter]
    fn dtype(&self) -> PyDType {
        self.t.dtype().into()
    }

    /// The number of values (the product of the shape).
    ///
    /// Example:
    ///     >>> TensorData([[1, 2], [3, 4]]).num_elements()
    ///     4
    fn num_elements(&self) -> usize {
        self.t.numel()
    }

    /// The values as nested Python lists of the data's shape.
    ///
    /// Example:
    ///     >>> TensorData([1, 2, 3, 4], (2, 2)).to_list()
    ///     [[1, 2], [3, 4]]
    fn to_list<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        nested_list(py, &self.t)
    }

    /// The values as one flat Python list, in row-major order (Burn's `to_vec`).
    ///
    /// Example:
    ///     >>> TensorData([[1, 2], [3, 4]]).to_vec()
    ///     [1, 2, 3, 4]
    fn to_vec<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let t = &python_readable(py, &self.t)?;
        with_python_dtype!(t.dtype(), T => Ok(PyList::new(py, engine(py, false, || t.try_to_vec::<T>("to_vec"))?)?.into_any()))
    }

    /// A read-only NumPy view of the values, of the data's shape and dtype.
    ///
    /// Example:
    ///     >>> TensorData([[1.5, 2.5]]).to_numpy().shape
    ///     (1, 2)
    fn to_numpy<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        crate::tensor::convert::numpy_view(slf.py(), &slf.get().t, slf.clone().into_any())
    }

    /// The values converted to `dtype` (Float to Int truncates toward zero).
    ///
    /// Example:
    ///     >>> TensorData([1.7, -1.7]).convert(DType.I64).to_list()
    ///     [1, -1]
    fn convert(&self, py: Python<'_>, dtype: PyDType) -> PyResult<PyTensorData> {
        Ok(PyTensorData { t: engine(py, false, || self.t.cast(DType::from(dtype)))? })
    }

    /// Raises `AssertionError`, naming the first difference, unless shapes,
    /// dtypes and values are equal.
    ///
    /// Example:
    ///     >>> TensorData([1, 2]).assert_eq(TensorData([1, 2]))
    fn assert_eq(&self, py: Python<'_>, other: PyRef<'_, PyTensorData>) -> PyResult<()> {
        if self.t.shape() != other.t.shape() || self.t.dtype() != other.t.dtype() || !same_values(&self.t, &other.t).py(py)? {
            return Err(pyo3::exceptions::PyAssertionError::new_err(format!(
                "TensorData differ:\n  left  ({:?}, {}): {}\n  right ({:?}, {}): {}",
                self.t.shape(),
                self.t.dtype(),
                format_values(&self.t),
                other.t.shape(),
                other.t.dtype(),
                format_values(&other.t)
            )));
        }
        Ok(())
    }

    /// Raises `AssertionError`, naming the first difference, unless the shapes
    /// match and every value agrees within `tolerance` (absolute and relative).
    ///
    /// Example:
    ///     >>> TensorData([1.0, 2.0]).assert_approx_eq(TensorData([1.00001, 2.0]), 1e-3)
    #[pyo3(signature = (other, tolerance = 1e-4))]
    fn assert_approx_eq(&self, py: Python<'_>, other: PyRef<'_, PyTensorData>, tolerance: f64) -> PyResult<()> {
        let fail = |why: String| Err(pyo3::exceptions::PyAssertionError::new_err(why));
        if self.t.shape() != other.t.shape() {
            return fail(format!("TensorData shapes differ: {:?} and {:?}", self.t.shape(), other.t.shape()));
        }
        let values = |t: &Tensor| t.cast(DType::F64)?.try_to_vec::<f64>("assert_approx_eq");
        let (a, b) = (values(&self.t).py(py)?, values(&other.t).py(py)?);
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            let ok = (x.is_nan() && y.is_nan()) || x == y || (x - y).abs() <= tolerance * (1.0 + y.abs());
            if !ok {
                return fail(format!("TensorData differ at flat index {i}: {x} and {y} (tolerance {tolerance})"));
            }
        }
        Ok(())
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        match other.cast::<PyTensorData>() {
            Ok(o) => same_values(&self.t, &o.get().t).py(py),
            Err(_) => Ok(false),
        }
    }

    fn __repr__(&self) -> String {
        format!("TensorData({}, shape={:?}, dtype={})", format_values(&self.t), self.t.shape(), self.t.dtype())
    }

    fn __len__(&self) -> usize {
        self.t.shape().first().copied().unwrap_or(0)
    }
}
