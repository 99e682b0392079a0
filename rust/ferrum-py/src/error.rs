//! One exhaustive conversion from the engine's error enum to the Python
//! exception tree rooted at `ferrum.FerrumError`. Subclasses also derive from
//! the matching builtin (ValueError, TypeError, IndexError) so generic
//! `except ValueError` handlers keep working.

use ferrum_core::error::catch_panics;
use ferrum_core::Error;
use pyo3::exceptions::{PyException, PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

pub struct Exceptions {
    pub base: Py<PyType>,
    pub shape: Py<PyType>,
    pub kind: Py<PyType>,
    pub backend: Py<PyType>,
    pub out_of_bounds: Py<PyType>,
    pub argument: Py<PyType>,
}

static EXCEPTIONS: PyOnceLock<Exceptions> = PyOnceLock::new();

// The exceptions' docstrings (their examples run in tests/test_docstrings.py).
const FERRUM_ERROR_DOC: &str = concat!(
    "Base class of every error ferrum raises; each also derives from the matching builtin\n",
    "(`ValueError`, `TypeError`, `IndexError`) so generic handlers keep working.\n",
    "\n",
    "Example:\n",
    "    >>> issubclass(ShapeError, FerrumError), issubclass(ShapeError, ValueError)\n",
    "    (True, True)",
);

const SHAPE_ERROR_DOC: &str = concat!(
    "Shapes or ranks that do not fit the operation (a `ValueError`); the message names the\n",
    "operation and the shapes.\n",
    "\n",
    "Example:\n",
    "    >>> try:\n",
    "    ...     Tensor.zeros((2, 2), device) + Tensor.zeros((3, 2), device)\n",
    "    ... except ShapeError as e:\n",
    "    ...     print(e)\n",
    "    add: incompatible shapes [2, 2] and [3, 2]: dim 0 has sizes 2 and 3, neither is 1",
);

const KIND_ERROR_DOC: &str = concat!(
    "A tensor of the wrong kind (Float, Int, Bool) or dtype (a `TypeError`).\n",
    "\n",
    "Example:\n",
    "    >>> try:\n",
    "    ...     Tensor.from_data([1, 2], device).sqrt()\n",
    "    ... except KindError as e:\n",
    "    ...     print(e)\n",
    "    sqrt: expected a Float tensor, found Int",
);

const BACKEND_ERROR_DOC: &str = concat!(
    "Tensors of different backends, or an op the backend lacks (a `TypeError`), such as\n",
    "`backward()` off an autodiff backend.\n",
    "\n",
    "Example:\n",
    "    >>> from ferrum.backend import Autodiff\n",
    "    >>> try:\n",
    "    ...     Tensor.zeros((1,), device) + Tensor.zeros((1,), Autodiff[NdArray].device())\n",
    "    ... except BackendError:\n",
    "    ...     print(\"move one with to_device or inner()\")\n",
    "    move one with to_device or inner()",
);

const OUT_OF_BOUNDS_ERROR_DOC: &str = concat!(
    "An index or dim outside its range (an `IndexError`).\n",
    "\n",
    "Example:\n",
    "    >>> try:\n",
    "    ...     Tensor.zeros((2,), device).sum_dim(3)\n",
    "    ... except OutOfBoundsError as e:\n",
    "    ...     print(e)\n",
    "    sum_dim: dim 3 is out of range for a tensor of rank 1",
);

const ARGUMENT_ERROR_DOC: &str = concat!(
    "An argument with a value the operation cannot take (a `ValueError`).\n",
    "\n",
    "Example:\n",
    "    >>> try:\n",
    "    ...     Tensor.arange_step(0, 5, 0, device)\n",
    "    ... except ArgumentError as e:\n",
    "    ...     print(e)\n",
    "    arange_step: step must not be 0",
);

fn make(py: Python<'_>, name: &str, bases: &[Bound<'_, PyAny>], doc: &str) -> PyResult<Py<PyType>> {
    let dict = PyDict::new(py);
    dict.set_item("__doc__", doc)?;
    dict.set_item("__module__", "ferrum")?;
    let ty = py.get_type::<PyType>().call1((name, PyTuple::new(py, bases)?, dict))?;
    Ok(ty.cast_into::<PyType>()?.unbind())
}

pub fn exceptions(py: Python<'_>) -> PyResult<&Exceptions> {
    EXCEPTIONS.get_or_try_init(py, || {
        let base = make(py, "FerrumError", &[py.get_type::<PyException>().into_any()], FERRUM_ERROR_DOC)?;
        let b = base.bind(py).clone().into_any();
        let value = py.get_type::<PyValueError>().into_any();
        let typ = py.get_type::<PyTypeError>().into_any();
        Ok(Exceptions {
            shape: make(py, "ShapeError", &[b.clone(), value.clone()], SHAPE_ERROR_DOC)?,
            kind: make(py, "KindError", &[b.clone(), typ.clone()], KIND_ERROR_DOC)?,
            backend: make(py, "BackendError", &[b.clone(), typ], BACKEND_ERROR_DOC)?,
            out_of_bounds: make(py, "OutOfBoundsError", &[b.clone(), py.get_type::<PyIndexError>().into_any()], OUT_OF_BOUNDS_ERROR_DOC)?,
            argument: make(py, "ArgumentError", &[b, value], ARGUMENT_ERROR_DOC)?,
            base,
        })
    })
}

fn raise(py: Python<'_>, ty: &Py<PyType>, msg: String) -> PyErr {
    PyErr::from_type(ty.bind(py).clone(), msg)
}

/// The exception `pick` chooses among ferrum's, carrying `msg` (or the
/// error of creating the exception types).
fn raise_one(py: Python<'_>, pick: impl FnOnce(&Exceptions) -> &Py<PyType>, msg: String) -> PyErr {
    match exceptions(py) {
        Ok(ex) => raise(py, pick(ex), msg),
        Err(e) => e,
    }
}

/// The Python exception for an engine error.
pub fn to_py(py: Python<'_>, err: Error) -> PyErr {
    let ex = match exceptions(py) {
        Ok(ex) => ex,
        Err(e) => return e,
    };
    let msg = err.to_string();
    let ty = match err {
        Error::ShapeMismatch { .. } | Error::RankMismatch { .. } | Error::Reshape { .. } => &ex.shape,
        Error::KindMismatch { .. } | Error::DTypeMismatch { .. } | Error::StorageDType { .. } => &ex.kind,
        Error::DimOutOfRange { .. } | Error::IndexOutOfBounds { .. } => &ex.out_of_bounds,
        Error::InvalidArgument { .. } => &ex.argument,
        Error::Internal { .. } => &ex.base,
        Error::Interrupted => return crate::interrupt::raised(),
        // Python's own OSError(errno, strerror, filename): `except OSError` and `.errno` work.
        Error::File { op, path, errno, message } => {
            return pyo3::exceptions::PyOSError::new_err((errno, format!("{op}: {message}"), path));
        }
    };
    raise(py, ty, msg)
}

/// Raise one of ferrum's exceptions from binding code.
pub fn kind_error(py: Python<'_>, msg: impl Into<String>) -> PyErr {
    raise_one(py, |ex| &ex.kind, msg.into())
}

pub fn backend_error(py: Python<'_>, msg: impl Into<String>) -> PyErr {
    raise_one(py, |ex| &ex.backend, msg.into())
}

pub fn shape_error(py: Python<'_>, msg: impl Into<String>) -> PyErr {
    raise_one(py, |ex| &ex.shape, msg.into())
}

pub fn argument_error(py: Python<'_>, msg: impl Into<String>) -> PyErr {
    raise_one(py, |ex| &ex.argument, msg.into())
}

/// An `ArgumentError` saying `context: <cause's message>`, chained to
/// `cause` (Python's `raise ... from cause`).
pub fn argument_error_from(py: Python<'_>, context: &str, cause: PyErr) -> PyErr {
    let err = argument_error(py, format!("{context}: {}", cause.value(py)));
    err.set_cause(py, Some(cause));
    err
}

/// Run engine code from a Python call: a panic (a bug, since every failure
/// the engine expects is an `Error`) comes back as a `FerrumError` instead
/// of unwinding into PyO3, which would raise a `PanicException` that
/// `except Exception` does not catch. With the
/// GIL released when `release` (work long enough for other Python threads
/// to use the wait, and long enough to be worth interrupting: on the main
/// thread, Ctrl-C stops it between blocks), and its error converted.
pub fn engine<R: Send>(py: Python<'_>, release: bool, f: impl FnOnce() -> ferrum_core::Result<R> + Send) -> PyResult<R> {
    if !release {
        return catch_panics(f).py(py);
    }
    let watch = crate::interrupt::on_main_thread();
    py.detach(|| catch_panics(|| if watch { ferrum_core::interrupt::watched(f) } else { f() })).py(py)
}

/// `?`-friendly conversion of engine results.
pub trait IntoPyResult<T> {
    fn py(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for ferrum_core::Result<T> {
    fn py(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_py(py, e))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let ex = exceptions(py)?;
    m.add("FerrumError", ex.base.bind(py))?;
    m.add("ShapeError", ex.shape.bind(py))?;
    m.add("KindError", ex.kind.bind(py))?;
    m.add("BackendError", ex.backend.bind(py))?;
    m.add("OutOfBoundsError", ex.out_of_bounds.bind(py))?;
    m.add("ArgumentError", ex.argument.bind(py))?;
    Ok(())
}
