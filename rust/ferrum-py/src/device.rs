//! Devices and the kind/dtype markers. A device knows its backend (plain or
//! autodiff), which is how `Tensor.zeros(shape, device)` picks the backend.

use ferrum_core::{DType, Kind};
use pyo3::prelude::*;
use pyo3::types::PyType;

/// Make a class subscriptable at run time (`Device[NdArray]`), as typing needs.
pub fn generic_alias<'py>(cls: &Bound<'py, PyType>, item: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = cls.py();
    py.import("types")?.getattr("GenericAlias")?.call1((cls, item))
}

/// A device of backend `B` (`Device[B]`), made by `B.device()`.
///
/// A device knows its backend, so constructors taking a device
/// (`Tensor.zeros(shape, device)`, `LinearConfig(...).init(device)`) put
/// their result on that backend. Devices compare equal when they are the same
/// backend's.
///
/// Example:
///     >>> from ferrum.backend import Autodiff
///     >>> train = Autodiff[NdArray].device()
///     >>> train.is_autodiff, train.inner == NdArray.device()
///     (True, True)
#[pyclass(frozen, name = "Device", module = "ferrum")]
pub struct PyDevice {
    /// The Python backend class (`NdArray`, `Autodiff[NdArray]`).
    pub backend: Py<PyAny>,
    pub autodiff: bool,
    /// For an autodiff device, the device of the backend it decorates.
    pub inner: Option<Py<PyDevice>>,
    /// Whether its graphs recompute memory-bound values in backward
    /// (`Autodiff[NdArray, BalancedCheckpointing]`).
    pub checkpointing: bool,
}

impl PyDevice {
    /// How the graphs of tensors marked on this device checkpoint.
    pub fn checkpointing(&self) -> ferrum_core::autodiff::Checkpointing {
        if self.checkpointing {
            ferrum_core::autodiff::Checkpointing::Balanced
        } else {
            ferrum_core::autodiff::Checkpointing::None
        }
    }
}

#[pymethods]
impl PyDevice {
    /// Devices are made by backends: `NdArray.device()`.
    #[staticmethod]
    #[pyo3(name = "_new", signature = (backend, autodiff, inner = None, checkpointing = false))]
    fn new(backend: Py<PyAny>, autodiff: bool, inner: Option<Py<PyDevice>>, checkpointing: bool) -> Self {
        PyDevice { backend, autodiff, inner, checkpointing }
    }

    /// The device of the decorated backend for an autodiff device
    /// (`Autodiff[NdArray].device().inner` is `NdArray.device()`), else the
    /// device itself.
    ///
    /// Example:
    ///     >>> device.inner == device
    ///     True
    #[getter]
    fn inner(slf: &Bound<'_, Self>) -> Py<PyDevice> {
        match &slf.get().inner {
            Some(d) => d.clone_ref(slf.py()),
            None => slf.clone().unbind(),
        }
    }

    /// The backend class this device belongs to (`NdArray`, `Autodiff[NdArray]`).
    ///
    /// Example:
    ///     >>> device.backend is NdArray
    ///     True
    #[getter]
    fn backend(&self, py: Python<'_>) -> Py<PyAny> {
        self.backend.clone_ref(py)
    }

    /// Whether the device's backend records gradients (`Autodiff[...]`).
    ///
    /// Example:
    ///     >>> device.is_autodiff
    ///     False
    #[getter]
    fn is_autodiff(&self) -> bool {
        self.autodiff
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("Device(Cpu, backend={})", backend_name(py, &self.backend)?))
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<PyDevice>().map(|o| (o.get().autodiff, o.get().checkpointing) == (self.autodiff, self.checkpointing)).unwrap_or(false)
    }

    fn __hash__(&self) -> u64 {
        self.autodiff as u64 | (self.checkpointing as u64) << 1
    }

    #[classmethod]
    fn __class_getitem__<'py>(cls: &Bound<'py, PyType>, item: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        generic_alias(cls, item)
    }
}

pub fn backend_name(py: Python<'_>, backend: &Py<PyAny>) -> PyResult<String> {
    backend.bind(py).str().map(|s| s.to_string().replace("ferrum.backend.", "").replace("<class '", "").replace("'>", ""))
}

/// The element type of a tensor: `DType.F32` (the default), `F64`, `F16`
/// and `BF16` (Float); `DType.I64` (the default), `I32` and `U8` (Int); and
/// `DType.Bool`.
///
/// F16, BF16, I32 and U8 are storage dtypes: an op whose kernel does not
/// read them computes in f32 or i64 and rounds (floats) or checks (ints)
/// the result back to the input's dtype.
///
/// Example:
///     >>> DType.F64.kind is Float, Tensor.zeros((1,), device).dtype == DType.F32
///     (True, True)
#[pyclass(frozen, eq, eq_int, hash, from_py_object, name = "DType", module = "ferrum")]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum PyDType {
    F32,
    F64,
    F16,
    BF16,
    I64,
    I32,
    U8,
    Bool,
}

impl From<PyDType> for DType {
    fn from(d: PyDType) -> DType {
        match d {
            PyDType::F32 => DType::F32,
            PyDType::F64 => DType::F64,
            PyDType::I64 => DType::I64,
            PyDType::F16 => DType::F16,
            PyDType::BF16 => DType::BF16,
            PyDType::I32 => DType::I32,
            PyDType::U8 => DType::U8,
            PyDType::Bool => DType::Bool,
        }
    }
}

impl From<DType> for PyDType {
    fn from(d: DType) -> PyDType {
        match d {
            DType::F32 => PyDType::F32,
            DType::F64 => PyDType::F64,
            DType::I64 => PyDType::I64,
            DType::F16 => PyDType::F16,
            DType::BF16 => PyDType::BF16,
            DType::I32 => PyDType::I32,
            DType::U8 => PyDType::U8,
            DType::Bool => PyDType::Bool,
        }
    }
}

#[pymethods]
impl PyDType {
    fn __str__(&self) -> &'static str {
        DType::from(*self).name()
    }

    /// The kind class (`Float`, `Int` or `Bool`) of this dtype.
    ///
    /// Example:
    ///     >>> DType.I64.kind is Int
    ///     True
    #[getter]
    fn kind<'py>(&self, py: Python<'py>) -> Bound<'py, PyType> {
        kind_class(py, DType::from(*self).kind())
    }
}

/// Base class of the kind markers, for typing: `K = TypeVar("K", bound=Kind)`.
///
/// Example:
///     >>> issubclass(Int, Kind), Tensor.zeros((1,), device).kind is Float
///     (True, True)
#[pyclass(subclass, frozen, name = "Kind", module = "ferrum")]
pub struct PyKind;

macro_rules! kind_marker {
    ($rust:ident, $name:literal, $doc:literal) => {
        #[doc = $doc]
        #[pyclass(extends = PyKind, frozen, name = $name, module = "ferrum")]
        pub struct $rust;
    };
}

kind_marker!(KindFloat, "Float", "The Float kind: f32 by default, or f64, f16, bf16 (`DType`); the default kind of\n`Tensor[B, D]`.\n\nExample:\n    >>> Tensor.from_data([1.5], device).kind is Float\n    True");
kind_marker!(KindInt, "Int", "The Int kind: i64 by default, or i32, u8 (`DType`), as in `Tensor[B, D1, Int]`.\n\nExample:\n    >>> Tensor.zeros((2,), device, Int).dtype == DType.I64\n    True");
kind_marker!(KindBool, "Bool", "The Bool kind, of masks and comparisons: `Tensor[B, D, Bool]`.\n\nExample:\n    >>> Tensor.from_data([1, 2], device).greater_elem(1).kind is Bool\n    True");

pub fn kind_class(py: Python<'_>, kind: Kind) -> Bound<'_, PyType> {
    match kind {
        Kind::Float => py.get_type::<KindFloat>(),
        Kind::Int => py.get_type::<KindInt>(),
        Kind::Bool => py.get_type::<KindBool>(),
    }
}

/// The default dtype of a kind class passed by the user.
pub fn dtype_of_kind(kind: &Bound<'_, PyAny>) -> PyResult<DType> {
    let py = kind.py();
    if kind.is(py.get_type::<KindFloat>()) {
        Ok(DType::F32)
    } else if kind.is(py.get_type::<KindInt>()) {
        Ok(DType::I64)
    } else if kind.is(py.get_type::<KindBool>()) {
        Ok(DType::Bool)
    } else if let Ok(d) = kind.extract::<PyDType>() {
        Ok(d.into())
    } else {
        Err(crate::error::kind_error(py, format!("expected a kind (Float, Int or Bool) or a DType, found {}", kind.repr()?)))
    }
}
