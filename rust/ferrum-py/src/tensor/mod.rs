//! The `Tensor` class: an engine tensor plus the device (hence backend) it
//! lives on. Methods are spread over files by family, one `#[pymethods]`
//! block each; this file holds what they share.

mod arith;
mod autodiff;
pub mod convert;
pub mod creation;
pub mod format;
mod from_numpy;
mod nested;
mod index;
mod reduce;
mod shape;

use std::sync::Arc;

use ferrum_core::autodiff::{Node, Var};
use ferrum_core::{DType, Kind, Scalar, Tensor};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyComplex, PyFloat, PyInt};

use crate::device::PyDevice;
use crate::error::{backend_error, engine, kind_error};

/// Elements above which a kernel runs with the GIL released: below it the
/// release/reacquire costs more than the kernel.
const GIL_RELEASE_ELEMS: usize = 1 << 15;

/// A tensor: Burn's `Tensor<B, D, K>` as `Tensor[B, D, K]`.
///
/// `B` is the backend (`NdArray`, or `Autodiff[NdArray]` to record gradients),
/// `D` the rank (`D1` to `D6`) and `K` the kind (`Float`, the default; `Int`
/// or `Bool`). mypy checks all three; the runtime raises the same errors
/// (`ShapeError`, `KindError`, `BackendError`) naming the operation and the
/// shapes, dims or kinds involved.
///
/// Tensors are immutable values: every operation returns a new tensor, views
/// (`transpose`, `slice`, `reshape` of contiguous data, `expand`, ...) copy
/// nothing and `clone()` is free. Binary operations broadcast between tensors
/// of the same rank, over dims of size 1; reductions over a dim keep it with
/// size 1. Python's operators (`+ - * / % ** @`, comparisons are methods,
/// `& | ^ ~` on Bool and Int tensors) and indexing (`t[0:2, :, ::2]`, which
/// keeps the rank) call the named methods.
///
/// The examples of the methods assume
/// `from ferrum import Tensor; from ferrum.backend import NdArray;
/// device = NdArray.device()`.
///
/// Example:
///     >>> a = Tensor.from_data([[1.0, 2.0], [3.0, 4.0]], device)
///     >>> (a @ a + 1.0).sum_dim(1).to_data().to_list()
///     [[19.0], [39.0]]
#[pyclass(frozen, name = "Tensor", module = "ferrum")]
pub struct PyTensor {
    pub t: Tensor,
    /// The autodiff graph node, on an autodiff backend when gradients flow
    /// through this tensor; always `None` on a plain backend.
    pub node: Option<Arc<Node>>,
    pub device: Py<PyDevice>,
}

impl PyTensor {
    pub fn new(t: Tensor, device: Py<PyDevice>) -> Self {
        PyTensor { t, node: None, device }
    }

    /// A new untracked tensor on the same device as `self`.
    pub fn wrap(&self, py: Python<'_>, t: Tensor) -> PyTensor {
        PyTensor { t, node: None, device: self.device.clone_ref(py) }
    }

    /// A tensor (possibly tracked) on the same device as `self`.
    pub fn wrap_var(&self, py: Python<'_>, v: Var) -> PyTensor {
        PyTensor { t: v.value, node: v.node, device: self.device.clone_ref(py) }
    }

    pub fn to_var(&self) -> Var {
        Var { value: self.t.clone(), node: self.node.clone() }
    }

    pub fn dev(&self) -> &PyDevice {
        self.device.get()
    }

    /// Fail unless `other` lives on the same backend.
    pub fn same_backend(&self, py: Python<'_>, op: &str, other: &PyTensor) -> PyResult<()> {
        if self.dev().autodiff != other.dev().autodiff {
            return Err(backend_error(
                py,
                format!(
                    "{op}: tensors live on different backends ({} and {}); move one with to_device or inner()",
                    crate::device::backend_name(py, &self.dev().backend)?,
                    crate::device::backend_name(py, &other.dev().backend)?
                ),
            ));
        }
        Ok(())
    }

    /// Run an engine call, releasing the GIL when the work is large enough
    /// for other Python threads to make progress meanwhile.
    pub fn run<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&Tensor) -> ferrum_core::Result<R> + Send) -> PyResult<R> {
        let t = &self.t;
        engine(py, t.numel() >= GIL_RELEASE_ELEMS, || f(t))
    }

    /// A differentiable op: it runs on `Var`s, so on an autodiff backend
    /// it records its backward when an input is tracked.
    pub fn dop(&self, py: Python<'_>, f: impl FnOnce(&Var) -> ferrum_core::Result<Var> + Send) -> PyResult<PyTensor> {
        let x = self.to_var();
        let v = engine(py, self.t.numel() >= GIL_RELEASE_ELEMS, || f(&x))?;
        Ok(self.wrap_var(py, v))
    }

    /// A differentiable op of two tensors of the same backend.
    pub fn dop2(
        &self,
        py: Python<'_>,
        name: &str,
        other: &PyTensor,
        f: impl FnOnce(&Var, &Var) -> ferrum_core::Result<Var> + Send,
    ) -> PyResult<PyTensor> {
        self.same_backend(py, name, other)?;
        let (a, b) = (self.to_var(), other.to_var());
        let v = engine(py, self.t.numel() >= GIL_RELEASE_ELEMS, || f(&a, &b))?;
        Ok(self.wrap_var(py, v))
    }

    /// An op with no gradient: its output is Int or Bool, or it has no
    /// backward yet, in which case a tracked input is an error rather than
    /// a silently wrong gradient.
    pub fn op(&self, py: Python<'_>, name: &str, f: impl FnOnce(&Tensor) -> ferrum_core::Result<Tensor> + Send) -> PyResult<PyTensor> {
        let t = self.run(py, f)?;
        self.untracked_result(py, name, &[self], t)
    }

    /// `op` for an op of two tensors of the same backend.
    pub fn op2(
        &self,
        py: Python<'_>,
        name: &str,
        other: &PyTensor,
        f: impl FnOnce(&Tensor, &Tensor) -> ferrum_core::Result<Tensor> + Send,
    ) -> PyResult<PyTensor> {
        self.same_backend(py, name, other)?;
        let o = &other.t;
        let t = self.run(py, |t| f(t, o))?;
        self.untracked_result(py, name, &[self, other], t)
    }

    pub fn untracked_result(&self, py: Python<'_>, name: &str, inputs: &[&PyTensor], t: Tensor) -> PyResult<PyTensor> {
        if t.kind() == Kind::Float && inputs.iter().any(|i| i.node.is_some()) {
            return Err(backend_error(
                py,
                format!("{name}: this operation has no backward on the autodiff backend; detach() its input to use it without gradients"),
            ));
        }
        Ok(self.wrap(py, t))
    }

    /// Fail unless this tensor is of `kind`.
    pub fn expect_kind(&self, py: Python<'_>, op: &str, kind: Kind) -> PyResult<()> {
        if self.t.kind() != kind {
            return Err(kind_error(py, format!("{op}: expected a {kind} tensor, found {}", self.t.kind())));
        }
        Ok(())
    }
}

/// A Python number as an engine scalar for an op on a tensor of `dtype`.
/// A fractional float cannot meet an Int tensor: Burn would truncate it
/// silently, which hides bugs, so it is a kind error instead; nor can a
/// number beyond i64's range, which a cast would saturate.
pub fn scalar_for(py: Python<'_>, op: &str, value: &Bound<'_, PyAny>, dtype: DType) -> PyResult<Scalar> {
    let s = to_scalar(value).ok_or_else(|| {
        kind_error(py, format!("{op}: expected a number, found {}", value.get_type().name().map(|n| n.to_string()).unwrap_or_default()))
    })?;
    if let (Scalar::Float(v), Kind::Int) = (s, dtype.kind()) {
        if v.fract() != 0.0 || !v.is_finite() {
            return Err(kind_error(py, format!("{op}: the Float scalar {v} cannot combine with an Int tensor; convert the tensor with .float()")));
        }
        if nested::exact_i64(v).is_none() {
            let shown = value.repr().map(|r| r.to_string()).unwrap_or_else(|_| v.to_string());
            return Err(kind_error(py, format!("{op}: {shown} does not fit in an Int tensor (i64)")));
        }
    }
    Ok(s)
}

/// A Python bool, int or float (or NumPy scalar) as an engine scalar. An
/// integer beyond i64's range comes back as the float nearest to it (as
/// Python's `float()` gives), so that only callers needing an Int refuse
/// it; complex numbers are not scalars here (their imaginary part would be
/// lost).
pub fn to_scalar(value: &Bound<'_, PyAny>) -> Option<Scalar> {
    let integer = |v: &Bound<'_, PyAny>| v.extract::<i64>().ok().map(Scalar::Int).or_else(|| v.extract::<f64>().ok().map(Scalar::Float));
    if value.is_instance_of::<PyBool>() {
        return value.extract::<bool>().ok().map(Scalar::Bool);
    }
    if value.is_instance_of::<PyInt>() {
        return integer(value);
    }
    if value.is_instance_of::<PyFloat>() {
        return value.extract::<f64>().ok().map(Scalar::Float);
    }
    if value.is_instance_of::<PyComplex>() {
        return None;
    }
    // NumPy scalars and other number-likes.
    let kind: String = value.getattr("dtype").and_then(|d| d.getattr("kind")).and_then(|k| k.extract()).unwrap_or_default();
    match kind.as_str() {
        "b" => value.extract::<bool>().ok().map(Scalar::Bool),
        "i" | "u" => integer(value),
        "c" => None,
        _ => value.extract::<f64>().ok().map(Scalar::Float),
    }
}

/// Python dims are ints; the engine normalises negatives.
pub type Dim = isize;

/// A count or size argument: Python ints may be negative, which would
/// otherwise surface as a bare OverflowError naming no op.
pub fn count(py: Python<'_>, op: &str, what: &str, value: i64) -> PyResult<usize> {
    usize::try_from(value).map_err(|_| crate::error::argument_error(py, format!("{op}: {what} must be >= 0, found {value}")))
}

/// `count` for a Python int of any size: one beyond the engine's sizes is a
/// ferrum error naming the op, not a bare OverflowError from conversion.
pub fn count_int(py: Python<'_>, op: &str, what: &str, value: &Bound<'_, PyAny>) -> PyResult<usize> {
    if let Ok(v) = value.extract::<usize>() {
        return Ok(v);
    }
    // Not a size: a TypeError for a non-integer (as any int argument), else
    // out of range on one side or the other.
    let value = py.import("operator")?.getattr("index")?.call1((value,))?;
    let bound = if value.lt(0)? { ">= 0".to_string() } else { format!("at most {}", usize::MAX) };
    Err(crate::error::argument_error(py, format!("{op}: {what} must be {bound}, found {value}")))
}

/// `count` for each element of a list.
pub fn counts(py: Python<'_>, op: &str, what: &str, values: &[i64]) -> PyResult<Vec<usize>> {
    values.iter().map(|&v| count(py, op, what, v)).collect()
}
