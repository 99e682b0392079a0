//! `TensorData`: values taken out of a tensor (or made to go into one), with
//! their shape and dtype, as Burn's TensorData; and the two conversions
//! between Python data and engine tensors that it and `Tensor` share:
//! nested sequences, NumPy arrays, TensorData or tensors in
//! ([`tensor_from_any`]), a read-only NumPy view out ([`numpy_view`]).

use ferrum_core::{half, DType, Kind, Tensor};
use numpy::npyffi::{self, PY_ARRAY_API};
use numpy::{Element as _, PyArrayDescrMethods};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use pyo3::IntoPyObjectExt;

use super::format::format_values;
use super::from_numpy::tensor_from_numpy;
use super::nested::tensor_from_nested;
use super::{to_scalar, PyTensor};
use crate::device::PyDType;
use crate::error::{engine, shape_error, IntoPyResult};

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
        numpy_view(slf.py(), &slf.get().t, slf.clone().into_any())
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

pub(super) fn is_numpy_array(obj: &Bound<'_, PyAny>) -> bool {
    obj.hasattr("__array_interface__").unwrap_or(false) && obj.hasattr("dtype").unwrap_or(false)
}

/// Engine tensor from any supported data: nested sequences, NumPy arrays,
/// TensorData, or a tensor.
pub fn tensor_from_any(py: Python<'_>, data: &Bound<'_, PyAny>, want: Option<DType>) -> PyResult<Tensor> {
    if let Ok(d) = data.cast::<PyTensorData>() {
        let t = d.get().t.clone();
        return match want { Some(dt) => engine(py, false, || t.cast(dt)), None => Ok(t) };
    }
    if let Ok(t) = data.cast::<PyTensor>() {
        let t = t.get().t.clone();
        return match want { Some(dt) => engine(py, false, || t.cast(dt)), None => Ok(t) };
    }
    if is_numpy_array(data) {
        return tensor_from_numpy(py, data, want);
    }
    if to_scalar(data).is_some() && !data.is_instance_of::<PyTuple>() {
        return Err(shape_error(py, "from_data: expected nested sequences (rank >= 1), found a scalar; wrap it in a list"));
    }
    tensor_from_nested(py, data, want)
}

/// A read-only NumPy array over the tensor's own buffer (no copy), kept alive
/// by `owner`. Tensors are immutable, so the array must not be writeable.
///
/// NumPy has no bfloat16, so a bf16 tensor comes out as a float32 copy
/// (exact: every bf16 is an f32).
pub fn numpy_view<'py>(py: Python<'py>, t: &Tensor, owner: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if t.dtype() == DType::BF16 {
        let wide = engine(py, false, || t.cast(DType::F32))?;
        let owner = Bound::new(py, PyTensorData { t: wide.clone() })?.into_any();
        return numpy_view(py, &wide, owner);
    }
    let (descr, ptr, itemsize) = match t.storage() {
        ferrum_core::Storage::F32(b) => (f32::get_dtype(py), b.as_ptr() as *mut u8, 4),
        ferrum_core::Storage::F64(b) => (f64::get_dtype(py), b.as_ptr() as *mut u8, 8),
        ferrum_core::Storage::I64(b) => (i64::get_dtype(py), b.as_ptr() as *mut u8, 8),
        ferrum_core::Storage::Bool(b) => (bool::get_dtype(py), b.as_ptr() as *mut u8, 1),
        ferrum_core::Storage::F16(b) => (half::f16::get_dtype(py), b.as_ptr() as *mut u8, 2),
        ferrum_core::Storage::I32(b) => (i32::get_dtype(py), b.as_ptr() as *mut u8, 4),
        ferrum_core::Storage::U8(b) => (u8::get_dtype(py), b.as_ptr() as *mut u8, 1),
        ferrum_core::Storage::BF16(_) => unreachable!("bf16 is widened above"),
    };
    let l = t.layout();
    // The engine checks every layout when a tensor is made; NumPy will read
    // the buffer through this one with no bounds of its own, so it is
    // checked again here rather than trusted.
    l.check_within("to_numpy", t.storage().len()).py(py)?;
    let mut dims: Vec<npyffi::npy_intp> = l.shape().iter().map(|&d| d as npyffi::npy_intp).collect();
    let mut strides: Vec<npyffi::npy_intp> = l.strides().iter().map(|&s| (s * itemsize as isize) as npyffi::npy_intp).collect();
    // SAFETY: `check_within` proved that every element the shape, strides
    // and offset reach lies inside the buffer, and that the byte strides
    // fit. The buffer is an Arc held by `owner`, which becomes the array's
    // base, so it outlives the array. Flags 0 leave the array read-only.
    unsafe {
        let data = ptr.add(l.offset() * itemsize);
        let subtype = npyffi::get_type_object(py, npyffi::NpyTypes::PyArray_Type);
        let arr = PY_ARRAY_API.PyArray_NewFromDescr(
            py,
            subtype,
            descr.into_dtype_ptr(),
            dims.len() as i32,
            dims.as_mut_ptr(),
            strides.as_mut_ptr(),
            data as *mut std::ffi::c_void,
            0,
            std::ptr::null_mut(),
        );
        if arr.is_null() {
            return Err(PyErr::fetch(py));
        }
        let arr = Bound::from_owned_ptr(py, arr);
        if PY_ARRAY_API.PyArray_SetBaseObject(py, arr.as_ptr() as *mut npyffi::PyArrayObject, owner.into_ptr()) < 0 {
            return Err(PyErr::fetch(py));
        }
        Ok(arr)
    }
}
