//! Getting data out (TensorData, scalars, NumPy), kinds and dtypes, device
//! moves, and the autodiff no-ops of a plain backend.

use ferrum_core::{DType, Kind, Scalar};
use pyo3::prelude::*;
use pyo3::types::{PyTuple, PyType};

use super::data::{numpy_view, PyTensorData};
use super::PyTensor;
use crate::device::{kind_class, PyDType, PyDevice};
use crate::error::{engine, kind_error};

pub fn scalar_to_py(py: Python<'_>, s: Scalar) -> PyResult<Py<PyAny>> {
    Ok(match s {
        Scalar::Float(v) => v.into_pyobject(py)?.into_any().unbind(),
        Scalar::Int(v) => v.into_pyobject(py)?.into_any().unbind(),
        Scalar::Bool(v) => pyo3::types::PyBool::new(py, v).to_owned().into_any().unbind(),
    })
}


#[pymethods]
impl PyTensor {
    /// The shape as a tuple of ints (Burn's `dims()`).
    ///
    /// Example:
    ///     >>> Tensor.zeros((2, 3), device).dims()
    ///     (2, 3)
    fn dims<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.t.shape())
    }

    /// The shape as a tuple of ints (the same as `dims()`).
    ///
    /// Example:
    ///     >>> Tensor.zeros((4,), device).shape()
    ///     (4,)
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.t.shape())
    }

    /// The number of dims.
    ///
    /// Example:
    ///     >>> Tensor.zeros((2, 3, 4), device).rank()
    ///     3
    fn rank(&self) -> usize {
        self.t.rank()
    }

    /// The number of elements (the product of the dims).
    ///
    /// Example:
    ///     >>> Tensor.zeros((2, 3), device).num_elements()
    ///     6
    fn num_elements(&self) -> usize {
        self.t.numel()
    }

    /// The element type: `DType.F32` or `DType.F64` (Float), `DType.I64` (Int),
    /// `DType.Bool`.
    ///
    /// Example:
    ///     >>> Tensor.from_data([1, 2], device).dtype == DType.I64
    ///     True
    #[getter]
    fn dtype(&self) -> PyDType {
        self.t.dtype().into()
    }

    /// The kind class: `Float`, `Int` or `Bool`.
    ///
    /// Example:
    ///     >>> Tensor.from_data([True], device).kind is Bool
    ///     True
    #[getter]
    fn kind<'py>(&self, py: Python<'py>) -> Bound<'py, PyType> {
        kind_class(py, self.t.kind())
    }

    /// The device the tensor lives on; it knows its backend (`device().backend`).
    ///
    /// Example:
    ///     >>> Tensor.zeros((1,), device).device() == device
    ///     True
    fn device(&self, py: Python<'_>) -> Py<PyDevice> {
        self.device.clone_ref(py)
    }

    /// The same values on `device` (no copy on the CPU). Moving to another
    /// backend leaves the autodiff graph: gradients do not flow back through it.
    ///
    /// Example:
    ///     >>> from ferrum.backend import Autodiff
    ///     >>> Tensor.zeros((1,), device).to_device(Autodiff[NdArray].device()).device().is_autodiff
    ///     True
    fn to_device(&self, device: Py<PyDevice>) -> PyTensor {
        let out = PyTensor::new(self.t.clone(), device);
        crate::trace::alias(self, &out);
        out
    }

    /// A new handle to the same values: tensors are immutable, so nothing is
    /// copied and the clone stays in the same autodiff graph.
    ///
    /// Example:
    ///     >>> x = Tensor.from_data([1, 2], device)
    ///     >>> x.clone().to_data() == x.to_data()
    ///     True
    fn clone(&self, py: Python<'_>) -> PyTensor {
        let out = self.wrap_var(py, self.to_var());
        crate::trace::alias(self, &out);
        out
    }

    /// The values copied into a `TensorData` (shape, dtype and the values in
    /// row-major order).
    ///
    /// Example:
    ///     >>> Tensor.from_data([[1, 2]], device).to_data().shape
    ///     (1, 2)
    fn to_data(&self, py: Python<'_>) -> PyResult<PyTensorData> {
        Ok(PyTensorData { t: engine(py, false, || self.t.try_contiguous("to_data"))? })
    }

    /// The values as a `TensorData`, as `to_data` (Burn's consuming name; in
    /// Python the tensor stays usable).
    ///
    /// Example:
    ///     >>> Tensor.from_data([1.5], device).into_data().to_list()
    ///     [1.5]
    // Burn's names: Python has no moves, so `into_*` borrows.
    #[allow(clippy::wrong_self_convention)]
    fn into_data(&self, py: Python<'_>) -> PyResult<PyTensorData> {
        self.to_data(py)
    }

    /// The value of a one-element tensor (of any rank) as a Python float, int or
    /// bool; another number of elements is an `ArgumentError`.
    ///
    /// Example:
    ///     >>> Tensor.from_data([[1.0, 2.0]], device).sum().into_scalar()
    ///     3.0
    #[allow(clippy::wrong_self_convention)]
    fn into_scalar(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let s = engine(py, false, || self.t.into_scalar())?;
        scalar_to_py(py, s)
    }

    /// PyTorch's and NumPy's name for `into_scalar`: the value of a one-element
    /// tensor as a Python number.
    ///
    /// Example:
    ///     >>> Tensor.from_data([7], device).item()
    ///     7
    fn item(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        if self.t.numel() != 1 {
            let shape = self.t.shape();
            return Err(crate::error::argument_error(py, format!("item: expected a tensor with exactly one element, found shape {shape:?}")));
        }
        self.into_scalar(py)
    }

    /// The values as a NumPy array of the tensor's shape and dtype. Without
    /// `copy`, a read-only view of the tensor's memory (no copy, kept alive by the
    /// array); with `copy=True`, a writable copy.
    ///
    /// Example:
    ///     >>> Tensor.from_data([[1, 2]], device).to_numpy()
    ///     array([[1, 2]])
    #[pyo3(signature = (*, copy = false))]
    fn to_numpy<'py>(slf: &Bound<'py, Self>, copy: bool) -> PyResult<Bound<'py, PyAny>> {
        let arr = numpy_view(slf.py(), &slf.get().t, slf.clone().into_any())?;
        if copy { arr.call_method0("copy") } else { Ok(arr) }
    }

    #[pyo3(signature = (dtype = None, copy = None))]
    fn __array__<'py>(slf: &Bound<'py, Self>, dtype: Option<&Bound<'py, PyAny>>, copy: Option<bool>) -> PyResult<Bound<'py, PyAny>> {
        let arr = Self::to_numpy(slf, copy.unwrap_or(false))?;
        match dtype {
            Some(d) if !d.is_none() => arr.call_method1("astype", (d,)),
            _ => Ok(arr),
        }
    }

    /// The values converted to `dtype` (`DType.F32`, `F64`, `I64` or `Bool`),
    /// which may change the kind: Float to Int truncates toward zero, non-zero is
    /// True. Differentiable between Float dtypes.
    ///
    /// Example:
    ///     >>> Tensor.from_data([1.5, -2.5], device).cast(DType.F64).dtype == DType.F64
    ///     True
    fn cast(&self, py: Python<'_>, dtype: PyDType) -> PyResult<PyTensor> {
        let dt: DType = dtype.into();
        // Not `dop`: its narrowing back to a storage dtype would undo a cast to f32.
        let v = self.run_var(py, |v| v.cast(dt))?;
        Ok(self.wrap_var(py, v))
    }

    /// An Int tensor (i64) of the same shape: Float values truncate toward zero,
    /// Bool gives 0 and 1. Already Int is a `KindError`.
    ///
    /// Example:
    ///     >>> Tensor.from_data([1.7, -1.7], device).int().to_data().to_list()
    ///     [1, -1]
    fn int(&self, py: Python<'_>) -> PyResult<PyTensor> {
        if self.t.kind() == Kind::Int {
            return Err(kind_error(py, "int: the tensor is already Int"));
        }
        self.op(py, "int", |t| t.cast(DType::I64))
    }

    /// A Float tensor (f32) of the same shape from an Int or Bool tensor (True is
    /// 1.0). Already Float is a `KindError`.
    ///
    /// Example:
    ///     >>> Tensor.from_data([1, 0], device).float().to_data().to_list()
    ///     [1.0, 0.0]
    fn float(&self, py: Python<'_>) -> PyResult<PyTensor> {
        if self.t.kind() == Kind::Float {
            return Err(kind_error(py, "float: the tensor is already Float"));
        }
        self.op(py, "float", |t| t.cast(DType::F32))
    }

    /// A Bool tensor of the same shape: True where the element is non-zero.
    /// Already Bool is a `KindError`.
    ///
    /// Example:
    ///     >>> Tensor.from_data([0, 2], device).bool().to_data().to_list()
    ///     [False, True]
    fn bool(&self, py: Python<'_>) -> PyResult<PyTensor> {
        if self.t.kind() == Kind::Bool {
            return Err(kind_error(py, "bool: the tensor is already Bool"));
        }
        self.op(py, "bool", |t| t.cast(DType::Bool))
    }

    /// The size of the first dim, as NumPy and PyTorch; a rank-0 tensor has
    /// no length (TypeError, as theirs).
    fn __len__(&self) -> PyResult<usize> {
        self.t.shape().first().copied().ok_or_else(|| pyo3::exceptions::PyTypeError::new_err("len() of a rank-0 tensor"))
    }

    fn __bool__(&self, py: Python<'_>) -> PyResult<bool> {
        if self.t.numel() != 1 {
            return Err(crate::error::argument_error(
                py,
                format!("the truth value of a tensor with shape {:?} is ambiguous; use .any() or .all()", self.t.shape()),
            ));
        }
        Ok(engine(py, false, || self.t.into_scalar())?.to_bool())
    }

    fn __float__(&self, py: Python<'_>) -> PyResult<f64> {
        Ok(engine(py, false, || self.t.into_scalar())?.to_f64())
    }

    fn __int__(&self, py: Python<'_>) -> PyResult<i64> {
        Ok(engine(py, false, || self.t.into_scalar())?.to_i64())
    }

    #[classmethod]
    fn __class_getitem__<'py>(cls: &Bound<'py, PyType>, item: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        crate::device::generic_alias(cls, item)
    }
}
