//! Constructors: from Python data, NumPy arrays, shapes and distributions.

use ferrum_core::{DType, Kind, Scalar, Tensor};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use super::from_numpy::{backend_default, tensor_from_numpy};
use super::nested::{flatten_nested, from_scalars, inferred_dtype};
use super::{scalar_for, to_scalar, PyTensor};
use crate::data::PyTensorData;
use crate::device::{dtype_of_kind, PyDType, PyDevice};
use crate::distribution::PyDistribution;
use crate::error::{engine, kind_error, shape_error};

/// The dtype asked for by `kind` (a kind class) or `dtype`, if any.
fn requested(kind: Option<&Bound<'_, PyAny>>, dtype: Option<PyDType>) -> PyResult<Option<DType>> {
    match (kind, dtype) {
        (_, Some(d)) => Ok(Some(d.into())),
        (Some(k), None) if !k.is_none() => dtype_of_kind(k).map(Some),
        _ => Ok(None),
    }
}

fn shape_vec(py: Python<'_>, op: &str, shape: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    let dims: Vec<i64> = shape.extract().map_err(|_| shape_error(py, format!("{op}: expected a shape tuple of ints, found {}", shape.repr().map(|r| r.to_string()).unwrap_or_default())))?;
    dims.iter()
        .map(|&d| usize::try_from(d).map_err(|_| shape_error(py, format!("{op}: shape {dims:?} has a negative dim"))))
        .collect()
}

/// The backend's float (f32) for f64 data given without a dtype: NumPy
/// arrays and TensorData, as Burn converts data to the backend's element.
fn backend_float(data: &Bound<'_, PyAny>) -> Option<DType> {
    if let Ok(d) = data.cast::<PyTensorData>() {
        return (d.get().t.dtype() == DType::F64).then_some(DType::F32);
    }
    if is_numpy_array(data) { backend_default(data) } else { None }
}

fn is_numpy_array(obj: &Bound<'_, PyAny>) -> bool {
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
    let (shape, values) = flatten_nested(py, data, want)?;
    let dtype = want.unwrap_or_else(|| inferred_dtype(&values));
    from_scalars(py, &values, &shape, dtype)
}

#[pymethods]
impl PyTensor {
    /// A tensor from nested lists, a NumPy array or TensorData; the kind is
    /// inferred (bools -> Bool, ints -> Int, else Float) unless given.
    #[staticmethod]
    #[pyo3(signature = (data, device, kind = None, *, dtype = None))]
    fn from_data(py: Python<'_>, data: &Bound<'_, PyAny>, device: Py<PyDevice>, kind: Option<&Bound<'_, PyAny>>, dtype: Option<PyDType>) -> PyResult<PyTensor> {
        let want = requested(kind, dtype)?.or_else(|| backend_float(data));
        let t = tensor_from_any(py, data, want)?;
        Ok(PyTensor::new(t, device))
    }

    /// A Float tensor from floats (any nesting).
    #[staticmethod]
    #[pyo3(signature = (data, device, *, dtype = None))]
    fn from_floats(py: Python<'_>, data: &Bound<'_, PyAny>, device: Py<PyDevice>, dtype: Option<PyDType>) -> PyResult<PyTensor> {
        let dt: DType = dtype.map(Into::into).unwrap_or(DType::F32);
        if dt.kind() != Kind::Float {
            return Err(kind_error(py, format!("from_floats: expected a Float dtype, found {dt}")));
        }
        Ok(PyTensor::new(tensor_from_any(py, data, Some(dt))?, device))
    }

    /// An Int tensor from ints (any nesting).
    #[staticmethod]
    fn from_ints(py: Python<'_>, data: &Bound<'_, PyAny>, device: Py<PyDevice>) -> PyResult<PyTensor> {
        Ok(PyTensor::new(tensor_from_any(py, data, Some(DType::I64))?, device))
    }

    /// A Bool tensor from bools (any nesting).
    #[staticmethod]
    fn from_bool(py: Python<'_>, data: &Bound<'_, PyAny>, device: Py<PyDevice>) -> PyResult<PyTensor> {
        Ok(PyTensor::new(tensor_from_any(py, data, Some(DType::Bool))?, device))
    }

    /// A copy of any NumPy array (strided or not): float64 becomes f32 (the
    /// backend's float, as Burn; pass `dtype=DType.F64` to keep it),
    /// float32/float16, int64/int32, uint8 and bool keep their dtype, other
    /// integers become i64.
    #[staticmethod]
    #[pyo3(signature = (array, device, *, dtype = None))]
    fn from_numpy(py: Python<'_>, array: &Bound<'_, PyAny>, device: Py<PyDevice>, dtype: Option<PyDType>) -> PyResult<PyTensor> {
        if !is_numpy_array(array) {
            return Err(kind_error(py, format!("from_numpy: expected a numpy.ndarray, found {}", array.get_type().name()?)));
        }
        let want = dtype.map(Into::into).or_else(|| backend_default(array));
        Ok(PyTensor::new(tensor_from_numpy(py, array, want)?, device))
    }

    #[staticmethod]
    #[pyo3(signature = (shape, device, kind = None, *, dtype = None))]
    fn zeros(py: Python<'_>, shape: &Bound<'_, PyAny>, device: Py<PyDevice>, kind: Option<&Bound<'_, PyAny>>, dtype: Option<PyDType>) -> PyResult<PyTensor> {
        let dt = requested(kind, dtype)?.unwrap_or(DType::F32);
        let dims = shape_vec(py, "zeros", shape)?;
        let t = engine(py, false, || Tensor::try_full("zeros", &dims, Scalar::Int(0), dt))?;
        Ok(PyTensor::new(t, device))
    }

    #[staticmethod]
    #[pyo3(signature = (shape, device, kind = None, *, dtype = None))]
    fn ones(py: Python<'_>, shape: &Bound<'_, PyAny>, device: Py<PyDevice>, kind: Option<&Bound<'_, PyAny>>, dtype: Option<PyDType>) -> PyResult<PyTensor> {
        let dt = requested(kind, dtype)?.unwrap_or(DType::F32);
        let dims = shape_vec(py, "ones", shape)?;
        let t = engine(py, false, || Tensor::try_full("ones", &dims, Scalar::Int(1), dt))?;
        Ok(PyTensor::new(t, device))
    }

    /// Burn's `empty`: a tensor whose values are unspecified (here zeros).
    #[staticmethod]
    #[pyo3(signature = (shape, device, kind = None, *, dtype = None))]
    fn empty(py: Python<'_>, shape: &Bound<'_, PyAny>, device: Py<PyDevice>, kind: Option<&Bound<'_, PyAny>>, dtype: Option<PyDType>) -> PyResult<PyTensor> {
        Self::zeros(py, shape, device, kind, dtype)
    }

    /// Every element `value`, converted to the kind (Float unless given).
    #[staticmethod]
    #[pyo3(signature = (shape, value, device, kind = None, *, dtype = None))]
    fn full(py: Python<'_>, shape: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>, device: Py<PyDevice>, kind: Option<&Bound<'_, PyAny>>, dtype: Option<PyDType>) -> PyResult<PyTensor> {
        let dt = requested(kind, dtype)?.unwrap_or(DType::F32);
        let s = scalar_for(py, "full", value, dt)?;
        let dims = shape_vec(py, "full", shape)?;
        Ok(PyTensor::new(engine(py, false, || Tensor::try_full("full", &dims, s, dt))?, device))
    }

    fn zeros_like(&self, py: Python<'_>) -> PyResult<PyTensor> {
        // A fresh buffer the size of this tensor, which may be a broadcast
        // view far larger than its own: allocated fallibly.
        let (shape, dt) = (self.t.shape(), self.t.dtype());
        Ok(self.wrap(py, engine(py, false, || Tensor::try_full("zeros_like", shape, Scalar::Int(0), dt))?))
    }

    fn ones_like(&self, py: Python<'_>) -> PyResult<PyTensor> {
        let (shape, dt) = (self.t.shape(), self.t.dtype());
        Ok(self.wrap(py, engine(py, false, || Tensor::try_full("ones_like", shape, Scalar::Int(1), dt))?))
    }

    fn full_like(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let s = scalar_for(py, "full_like", value, self.t.dtype())?;
        let (shape, dt) = (self.t.shape(), self.t.dtype());
        Ok(self.wrap(py, engine(py, false, || Tensor::try_full("full_like", shape, s, dt))?))
    }

    /// Int tensor `[start, end)` (Burn's `arange(start..end)`).
    #[staticmethod]
    fn arange(py: Python<'_>, start: i64, end: i64, device: Py<PyDevice>) -> PyResult<PyTensor> {
        Ok(PyTensor::new(engine(py, false, || Tensor::arange_step(start, end, 1, DType::I64))?, device))
    }

    /// Int tensor `[start, end)` by `step` (negative steps count down).
    #[staticmethod]
    fn arange_step(py: Python<'_>, start: i64, end: i64, step: i64, device: Py<PyDevice>) -> PyResult<PyTensor> {
        Ok(PyTensor::new(engine(py, false, || Tensor::arange_step(start, end, step, DType::I64))?, device))
    }

    /// Int `[..shape, len(shape)]`: each position's own index (Burn's
    /// `Tensor::cartesian_grid`).
    #[staticmethod]
    fn cartesian_grid(py: Python<'_>, shape: Vec<i64>, device: Py<PyDevice>) -> PyResult<PyTensor> {
        let shape = super::counts(py, "cartesian_grid", "shape", &shape)?;
        Ok(PyTensor::new(engine(py, false, || Tensor::cartesian_grid(&shape))?, device))
    }

    /// The `size x size` identity matrix.
    #[staticmethod]
    #[pyo3(signature = (size, device, kind = None, *, dtype = None))]
    fn eye(py: Python<'_>, size: i64, device: Py<PyDevice>, kind: Option<&Bound<'_, PyAny>>, dtype: Option<PyDType>) -> PyResult<PyTensor> {
        let dt = requested(kind, dtype)?.unwrap_or(DType::F32);
        let n = super::count(py, "eye", "size", size)?;
        Ok(PyTensor::new(engine(py, false, || Tensor::eye(n, dt))?, device))
    }

    /// Samples of `distribution` (seeded by `B.seed(n)`).
    #[staticmethod]
    #[pyo3(signature = (shape, distribution, device, kind = None, *, dtype = None))]
    fn random(
        py: Python<'_>,
        shape: &Bound<'_, PyAny>,
        distribution: PyRef<'_, PyDistribution>,
        device: Py<PyDevice>,
        kind: Option<&Bound<'_, PyAny>>,
        dtype: Option<PyDType>,
    ) -> PyResult<PyTensor> {
        let dt = requested(kind, dtype)?.unwrap_or(DType::F32);
        let shape = shape_vec(py, "random", shape)?;
        let d = distribution.0;
        let t = engine(py, true, || Tensor::random(&shape, d, dt))?;
        Ok(PyTensor::new(t, device))
    }

    /// Samples of `distribution` with this tensor's shape and dtype.
    fn random_like(&self, py: Python<'_>, distribution: PyRef<'_, PyDistribution>) -> PyResult<PyTensor> {
        let d = distribution.0;
        let (shape, dt) = (self.t.shape().to_vec(), self.t.dtype());
        let t = engine(py, true, || Tensor::random(&shape, d, dt))?;
        Ok(self.wrap(py, t))
    }

    /// Bool mask, False on the upper triangle (`j - i >= offset`).
    #[staticmethod]
    #[pyo3(signature = (shape, offset, device))]
    fn triu_mask(py: Python<'_>, shape: &Bound<'_, PyAny>, offset: i64, device: Py<PyDevice>) -> PyResult<PyTensor> {
        let dims = shape_vec(py, "triu_mask", shape)?;
        Ok(PyTensor::new(engine(py, false, || Tensor::triu_mask(&dims, offset))?, device))
    }

    /// Bool mask, False on the lower triangle (`j - i <= offset`).
    #[staticmethod]
    #[pyo3(signature = (shape, offset, device))]
    fn tril_mask(py: Python<'_>, shape: &Bound<'_, PyAny>, offset: i64, device: Py<PyDevice>) -> PyResult<PyTensor> {
        let dims = shape_vec(py, "tril_mask", shape)?;
        Ok(PyTensor::new(engine(py, false, || Tensor::tril_mask(&dims, offset))?, device))
    }

    /// Bool mask, False on the diagonal `j - i == offset`.
    #[staticmethod]
    #[pyo3(signature = (shape, offset, device))]
    fn diag_mask(py: Python<'_>, shape: &Bound<'_, PyAny>, offset: i64, device: Py<PyDevice>) -> PyResult<PyTensor> {
        let dims = shape_vec(py, "diag_mask", shape)?;
        Ok(PyTensor::new(engine(py, false, || Tensor::diag_mask(&dims, offset))?, device))
    }
}
