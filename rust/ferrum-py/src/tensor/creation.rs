//! Constructors: from Python data, NumPy arrays, shapes and distributions.

use ferrum_core::{DType, Kind, Scalar, Tensor};
use pyo3::prelude::*;

use super::data::{is_numpy_array, tensor_from_any, PyTensorData};
use super::from_numpy::{backend_default, tensor_from_numpy};
use super::{scalar_for, PyTensor};
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

/// A new tensor of the Python `shape` with every element `value`, in
/// `dtype`, on `device`; its buffer allocated fallibly.
fn filled(py: Python<'_>, op: &'static str, shape: &Bound<'_, PyAny>, device: Py<PyDevice>, dtype: DType, value: Scalar) -> PyResult<PyTensor> {
    let dims = shape_vec(py, op, shape)?;
    let t = engine(py, false, || Tensor::try_full(op, &dims, value, dtype))?;
    Ok(PyTensor::new(t, device))
}

/// The backend's float (f32) for f64 data given without a dtype: NumPy
/// arrays and TensorData, as Burn converts data to the backend's element.
fn backend_float(data: &Bound<'_, PyAny>) -> Option<DType> {
    if let Ok(d) = data.cast::<PyTensorData>() {
        return (d.get().t.dtype() == DType::F64).then_some(DType::F32);
    }
    if is_numpy_array(data) { backend_default(data) } else { None }
}

#[pymethods]
impl PyTensor {
    /// A tensor from nested lists, a NumPy array or a `TensorData`, on `device`.
    ///
    /// The rank is the nesting depth and the shape must be rectangular (a ragged
    /// list is a `ShapeError`). The kind is inferred (all bools: Bool; all ints:
    /// Int; else Float) unless `kind` is given; `dtype` picks the precision
    /// (`DType.F64` for f64 Float).
    ///
    /// Example:
    ///     >>> Tensor.from_data([[1, 2], [3, 4]], device).dims()
    ///     (2, 2)
    ///     >>> Tensor.from_data([1, 2], device, Float).to_data().to_list()
    ///     [1.0, 2.0]
    #[staticmethod]
    #[pyo3(signature = (data, device, kind = None, *, dtype = None))]
    fn from_data(py: Python<'_>, data: &Bound<'_, PyAny>, device: Py<PyDevice>, kind: Option<&Bound<'_, PyAny>>, dtype: Option<PyDType>) -> PyResult<PyTensor> {
        let want = requested(kind, dtype)?.or_else(|| backend_float(data));
        let t = tensor_from_any(py, data, want)?;
        Ok(PyTensor::new(t, device))
    }

    /// A Float tensor from floats (or ints) in nested lists, a NumPy array or a
    /// `TensorData`; f32 unless `dtype` says otherwise.
    ///
    /// Example:
    ///     >>> Tensor.from_floats([1, 2.5], device).to_data().to_list()
    ///     [1.0, 2.5]
    #[staticmethod]
    #[pyo3(signature = (data, device, *, dtype = None))]
    fn from_floats(py: Python<'_>, data: &Bound<'_, PyAny>, device: Py<PyDevice>, dtype: Option<PyDType>) -> PyResult<PyTensor> {
        let dt: DType = dtype.map(Into::into).unwrap_or(DType::F32);
        if dt.kind() != Kind::Float {
            return Err(kind_error(py, format!("from_floats: expected a Float dtype, found {dt}")));
        }
        Ok(PyTensor::new(tensor_from_any(py, data, Some(dt))?, device))
    }

    /// An Int tensor from ints in nested lists, a NumPy array or a `TensorData`.
    ///
    /// Example:
    ///     >>> Tensor.from_ints([[1, 2]], device).to_data().to_list()
    ///     [[1, 2]]
    #[staticmethod]
    fn from_ints(py: Python<'_>, data: &Bound<'_, PyAny>, device: Py<PyDevice>) -> PyResult<PyTensor> {
        Ok(PyTensor::new(tensor_from_any(py, data, Some(DType::I64))?, device))
    }

    /// A Bool tensor from bools in nested lists, a NumPy array or a `TensorData`.
    ///
    /// Example:
    ///     >>> Tensor.from_bool([True, False], device).kind is Bool
    ///     True
    #[staticmethod]
    fn from_bool(py: Python<'_>, data: &Bound<'_, PyAny>, device: Py<PyDevice>) -> PyResult<PyTensor> {
        Ok(PyTensor::new(tensor_from_any(py, data, Some(DType::Bool))?, device))
    }

    /// A copy of any NumPy array (strided or not) on `device`: float64
    /// becomes f32 (the backend's float, as Burn; pass `dtype=DType.F64` to
    /// keep it), float32/float16, int64/int32, uint8 and bool keep their
    /// dtype, other integers become i64. The rank is the array's; a value
    /// the dtype cannot hold raises.
    ///
    /// Example:
    ///     >>> import numpy as np
    ///     >>> Tensor.from_numpy(np.arange(6).reshape(2, 3), device).dims()
    ///     (2, 3)
    ///     >>> Tensor.from_numpy(np.zeros(2), device).dtype, Tensor.from_numpy(np.zeros(2, np.uint8), device).dtype
    ///     (DType.F32, DType.U8)
    #[staticmethod]
    #[pyo3(signature = (array, device, *, dtype = None))]
    fn from_numpy(py: Python<'_>, array: &Bound<'_, PyAny>, device: Py<PyDevice>, dtype: Option<PyDType>) -> PyResult<PyTensor> {
        if !is_numpy_array(array) {
            return Err(kind_error(py, format!("from_numpy: expected a numpy.ndarray, found {}", array.get_type().name()?)));
        }
        let want = dtype.map(Into::into).or_else(|| backend_default(array));
        Ok(PyTensor::new(tensor_from_numpy(py, array, want)?, device))
    }

    /// A tensor of `shape` (a tuple, whose length is the rank) filled with zeros;
    /// Float unless `kind` is given (`Int`, `Bool`: False).
    ///
    /// Example:
    ///     >>> Tensor.zeros((2, 2), device, Int).to_data().to_list()
    ///     [[0, 0], [0, 0]]
    #[staticmethod]
    #[pyo3(signature = (shape, device, kind = None, *, dtype = None))]
    fn zeros(py: Python<'_>, shape: &Bound<'_, PyAny>, device: Py<PyDevice>, kind: Option<&Bound<'_, PyAny>>, dtype: Option<PyDType>) -> PyResult<PyTensor> {
        filled(py, "zeros", shape, device, requested(kind, dtype)?.unwrap_or(DType::F32), Scalar::Int(0))
    }

    /// A tensor of `shape` filled with ones; Float unless `kind` is given (`Int`,
    /// `Bool`: True).
    ///
    /// Example:
    ///     >>> Tensor.ones((3,), device).to_data().to_list()
    ///     [1.0, 1.0, 1.0]
    #[staticmethod]
    #[pyo3(signature = (shape, device, kind = None, *, dtype = None))]
    fn ones(py: Python<'_>, shape: &Bound<'_, PyAny>, device: Py<PyDevice>, kind: Option<&Bound<'_, PyAny>>, dtype: Option<PyDType>) -> PyResult<PyTensor> {
        filled(py, "ones", shape, device, requested(kind, dtype)?.unwrap_or(DType::F32), Scalar::Int(1))
    }

    /// Burn's `empty`: a tensor of `shape` whose values are unspecified (ferrum
    /// gives zeros); Float unless `kind` is given.
    ///
    /// Example:
    ///     >>> Tensor.empty((2, 3), device).dims()
    ///     (2, 3)
    #[staticmethod]
    #[pyo3(signature = (shape, device, kind = None, *, dtype = None))]
    fn empty(py: Python<'_>, shape: &Bound<'_, PyAny>, device: Py<PyDevice>, kind: Option<&Bound<'_, PyAny>>, dtype: Option<PyDType>) -> PyResult<PyTensor> {
        Self::zeros(py, shape, device, kind, dtype)
    }

    /// A tensor of `shape` with every element `value`; Float unless `kind` is
    /// given (a fractional value for an Int tensor is a `KindError`).
    ///
    /// Example:
    ///     >>> Tensor.full((2,), 7, device, Int).to_data().to_list()
    ///     [7, 7]
    #[staticmethod]
    #[pyo3(signature = (shape, value, device, kind = None, *, dtype = None))]
    fn full(py: Python<'_>, shape: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>, device: Py<PyDevice>, kind: Option<&Bound<'_, PyAny>>, dtype: Option<PyDType>) -> PyResult<PyTensor> {
        let dt = requested(kind, dtype)?.unwrap_or(DType::F32);
        let s = scalar_for(py, "full", value, dt)?;
        filled(py, "full", shape, device, dt, s)
    }

    /// Zeros of this tensor's shape, dtype and device.
    ///
    /// Example:
    ///     >>> Tensor.from_data([[1, 2]], device).zeros_like().to_data().to_list()
    ///     [[0, 0]]
    fn zeros_like(&self, py: Python<'_>) -> PyResult<PyTensor> {
        // A fresh buffer the size of this tensor, which may be a broadcast
        // view far larger than its own: allocated fallibly.
        let (shape, dt) = (self.t.shape(), self.t.dtype());
        Ok(self.wrap(py, engine(py, false, || Tensor::try_full("zeros_like", shape, Scalar::Int(0), dt))?))
    }

    /// Ones of this tensor's shape, dtype and device.
    ///
    /// Example:
    ///     >>> Tensor.from_data([1.5, 2.5], device).ones_like().to_data().to_list()
    ///     [1.0, 1.0]
    fn ones_like(&self, py: Python<'_>) -> PyResult<PyTensor> {
        let (shape, dt) = (self.t.shape(), self.t.dtype());
        Ok(self.wrap(py, engine(py, false, || Tensor::try_full("ones_like", shape, Scalar::Int(1), dt))?))
    }

    /// A tensor of this tensor's shape, dtype and device with every element `value`.
    ///
    /// Example:
    ///     >>> Tensor.from_data([1, 2], device).full_like(9).to_data().to_list()
    ///     [9, 9]
    fn full_like(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let s = scalar_for(py, "full_like", value, self.t.dtype())?;
        let (shape, dt) = (self.t.shape(), self.t.dtype());
        Ok(self.wrap(py, engine(py, false, || Tensor::try_full("full_like", shape, s, dt))?))
    }

    /// The Int tensor `[start, start + 1, ..., end - 1]` (Burn's `arange(start..end)`),
    /// of shape `[end - start]`.
    ///
    /// Example:
    ///     >>> Tensor.arange(2, 5, device).to_data().to_list()
    ///     [2, 3, 4]
    #[staticmethod]
    fn arange(py: Python<'_>, start: i64, end: i64, device: Py<PyDevice>) -> PyResult<PyTensor> {
        Ok(PyTensor::new(engine(py, false, || Tensor::arange_step(start, end, 1, DType::I64))?, device))
    }

    /// The Int tensor from `start` up to `end` (excluded) by `step`; a negative
    /// step counts down. A zero step is an `ArgumentError`.
    ///
    /// Example:
    ///     >>> Tensor.arange_step(0, 7, 3, device).to_data().to_list()
    ///     [0, 3, 6]
    #[staticmethod]
    fn arange_step(py: Python<'_>, start: i64, end: i64, step: i64, device: Py<PyDevice>) -> PyResult<PyTensor> {
        Ok(PyTensor::new(engine(py, false, || Tensor::arange_step(start, end, step, DType::I64))?, device))
    }

    /// Each position's own index: an Int tensor of shape `[*shape, len(shape)]`
    /// (Burn's `Tensor::cartesian_grid`).
    ///
    /// Example:
    ///     >>> Tensor.cartesian_grid([2, 2], device).to_data().to_list()
    ///     [[[0, 0], [0, 1]], [[1, 0], [1, 1]]]
    #[staticmethod]
    fn cartesian_grid(py: Python<'_>, shape: Vec<i64>, device: Py<PyDevice>) -> PyResult<PyTensor> {
        let shape = super::counts(py, "cartesian_grid", "shape", &shape)?;
        Ok(PyTensor::new(engine(py, false, || Tensor::cartesian_grid(&shape))?, device))
    }

    /// The `size x size` identity matrix; Float unless `kind` is given.
    ///
    /// Example:
    ///     >>> Tensor.eye(2, device, Int).to_data().to_list()
    ///     [[1, 0], [0, 1]]
    #[staticmethod]
    #[pyo3(signature = (size, device, kind = None, *, dtype = None))]
    fn eye(py: Python<'_>, size: i64, device: Py<PyDevice>, kind: Option<&Bound<'_, PyAny>>, dtype: Option<PyDType>) -> PyResult<PyTensor> {
        let dt = requested(kind, dtype)?.unwrap_or(DType::F32);
        let n = super::count(py, "eye", "size", size)?;
        Ok(PyTensor::new(engine(py, false, || Tensor::eye(n, dt))?, device))
    }

    /// A tensor of `shape` sampled from `distribution` (`Distribution.Normal(mean,
    /// std)`, `Uniform(low, high)`, `Bernoulli(p)`, `Default`: uniform in
    /// `[0, 1)`). The generator is seeded with `B.seed(n)`, so a run is
    /// reproducible. Float unless `kind` is given.
    ///
    /// Example:
    ///     >>> NdArray.seed(0)
    ///     >>> x = Tensor.random((2, 3), Distribution.Uniform(0.0, 1.0), device)
    ///     >>> x.dims(), x.greater_equal_elem(0.0).all().into_scalar()
    ///     ((2, 3), True)
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

    /// Samples of `distribution` with this tensor's shape, dtype and device.
    ///
    /// Example:
    ///     >>> Tensor.zeros((4,), device).random_like(Distribution.Bernoulli(1.0)).to_data().to_list()
    ///     [1.0, 1.0, 1.0, 1.0]
    fn random_like(&self, py: Python<'_>, distribution: PyRef<'_, PyDistribution>) -> PyResult<PyTensor> {
        let d = distribution.0;
        let (shape, dt) = (self.t.shape().to_vec(), self.t.dtype());
        let t = engine(py, true, || Tensor::random(&shape, d, dt))?;
        Ok(self.wrap(py, t))
    }

    /// A Bool mask of `shape` (rank 2 or more; the last two dims are the matrix),
    /// False on the upper triangle (`col - row >= offset`) and True elsewhere:
    /// what `mask_fill` hides below the diagonal.
    ///
    /// Example:
    ///     >>> Tensor.triu_mask((2, 2), 0, device).to_data().to_list()
    ///     [[False, False], [True, False]]
    #[staticmethod]
    #[pyo3(signature = (shape, offset, device))]
    fn triu_mask(py: Python<'_>, shape: &Bound<'_, PyAny>, offset: i64, device: Py<PyDevice>) -> PyResult<PyTensor> {
        let dims = shape_vec(py, "triu_mask", shape)?;
        Ok(PyTensor::new(engine(py, false, || Tensor::triu_mask(&dims, offset))?, device))
    }

    /// A Bool mask of `shape`, False on the lower triangle (`col - row <= offset`)
    /// and True elsewhere: the causal mask of attention with `offset=0`.
    ///
    /// Example:
    ///     >>> Tensor.tril_mask((2, 2), 0, device).to_data().to_list()
    ///     [[False, True], [False, False]]
    #[staticmethod]
    #[pyo3(signature = (shape, offset, device))]
    fn tril_mask(py: Python<'_>, shape: &Bound<'_, PyAny>, offset: i64, device: Py<PyDevice>) -> PyResult<PyTensor> {
        let dims = shape_vec(py, "tril_mask", shape)?;
        Ok(PyTensor::new(engine(py, false, || Tensor::tril_mask(&dims, offset))?, device))
    }

    /// A Bool mask of `shape`, False on the diagonal `col - row == offset` and
    /// True elsewhere.
    ///
    /// Example:
    ///     >>> Tensor.diag_mask((2, 2), 0, device).to_data().to_list()
    ///     [[False, True], [True, False]]
    #[staticmethod]
    #[pyo3(signature = (shape, offset, device))]
    fn diag_mask(py: Python<'_>, shape: &Bound<'_, PyAny>, offset: i64, device: Py<PyDevice>) -> PyResult<PyTensor> {
        let dims = shape_vec(py, "diag_mask", shape)?;
        Ok(PyTensor::new(engine(py, false, || Tensor::diag_mask(&dims, offset))?, device))
    }
}
