//! The `Tensor` class: an engine tensor plus the device (hence backend) it
//! lives on. Methods are spread over files by family, one `#[pymethods]`
//! block each; this file holds what they share.

mod arith;
mod autodiff;
pub mod convert;
pub mod creation;
pub mod data;
mod dlpack;
pub mod format;
mod from_numpy;
mod nested;
mod index;
mod reduce;
mod shape;
mod share_numpy;

use std::sync::Arc;

use ferrum_core::autodiff::{Node, Var};
use ferrum_core::{DType, Error, Kind, Scalar, Tensor};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyComplex, PyFloat, PyInt};

use crate::device::PyDevice;
use crate::error::{backend_error, engine, kind_error};

/// Elements above which a kernel runs with the GIL released: below it the
/// release/reacquire costs more than the kernel.
pub(crate) const GIL_RELEASE_ELEMS: usize = 1 << 15;

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
    /// Tells tensors apart while `ferrum.jit.trace` records (`crate::trace`).
    pub serial: u64,
}

impl PyTensor {
    /// A tensor made from data (not by an op of other tensors): a constant to a trace.
    pub fn new(t: Tensor, device: Py<PyDevice>) -> Self {
        PyTensor { t, node: None, device, serial: crate::trace_state::next_serial() }
    }

    /// `new` for the result of an op that a trace does not record: reading it fails the trace.
    pub fn made(t: Tensor, device: Py<PyDevice>) -> Self {
        let serial = crate::trace_state::next_serial();
        crate::trace_state::made(serial);
        PyTensor { t, node: None, device, serial }
    }

    /// A new untracked tensor on the same device as `self`.
    pub fn wrap(&self, py: Python<'_>, t: Tensor) -> PyTensor {
        PyTensor::made(t, self.device.clone_ref(py))
    }

    /// A tensor (possibly tracked) on the same device as `self`.
    pub fn wrap_var(&self, py: Python<'_>, v: Var) -> PyTensor {
        let serial = crate::trace_state::next_serial();
        crate::trace_state::made(serial);
        PyTensor { t: v.value, node: v.node, device: self.device.clone_ref(py), serial }
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
    /// for other Python threads to make progress meanwhile. A kernel that
    /// does not read a storage dtype (f16, bf16, i32, u8) fails before any
    /// work, and the call runs again on the values in their compute dtype.
    pub fn run<R: Send>(&self, py: Python<'_>, f: impl Fn(&Tensor) -> ferrum_core::Result<R> + Send + Sync) -> PyResult<R> {
        let t = &self.t;
        engine(py, t.numel() >= GIL_RELEASE_ELEMS, || match f(t) {
            Err(Error::StorageDType { .. }) if t.dtype().is_storage_only() => f(&t.cast(t.dtype().compute())?),
            r => r,
        })
    }

    /// `run` for an op on `Var`s: the retry converts with a differentiable
    /// cast, so gradients reach the input in its own dtype.
    fn run_var<R: Send>(&self, py: Python<'_>, f: impl Fn(&Var) -> ferrum_core::Result<R> + Send + Sync) -> PyResult<R> {
        let x = self.to_var();
        engine(py, self.t.numel() >= GIL_RELEASE_ELEMS, || match f(&x) {
            Err(Error::StorageDType { .. }) if x.value.dtype().is_storage_only() => f(&x.cast(x.value.dtype().compute())?),
            r => r,
        })
    }

    /// A differentiable op: it runs on `Var`s, so on an autodiff backend
    /// it records its backward when an input is tracked.
    pub fn dop(&self, py: Python<'_>, f: impl Fn(&Var) -> ferrum_core::Result<Var> + Send + Sync) -> PyResult<PyTensor> {
        let v = self.run_var(py, f)?;
        let v = narrow_var(py, None, self.t.dtype(), v)?;
        Ok(self.wrap_var(py, v))
    }

    /// `dop` for an op returning two tensors; `indices` when the second
    /// holds indices, which stay i64.
    pub fn dop_two(&self, py: Python<'_>, indices: bool, f: impl Fn(&Var) -> ferrum_core::Result<(Var, Var)> + Send + Sync) -> PyResult<(PyTensor, PyTensor)> {
        let (a, b) = self.run_var(py, f)?;
        let a = narrow_var(py, None, self.t.dtype(), a)?;
        let b = if indices { b } else { narrow_var(py, None, self.t.dtype(), b)? };
        Ok((self.wrap_var(py, a), self.wrap_var(py, b)))
    }

    /// A differentiable op of two tensors of the same backend.
    pub fn dop2(
        &self,
        py: Python<'_>,
        name: &str,
        other: &PyTensor,
        f: impl Fn(&Var, &Var) -> ferrum_core::Result<Var> + Send + Sync,
    ) -> PyResult<PyTensor> {
        self.same_backend(py, name, other)?;
        let (a, b) = (self.to_var(), other.to_var());
        let widen = |v: &Var| v.cast(v.value.dtype().compute());
        let v = engine(py, self.t.numel() >= GIL_RELEASE_ELEMS, || match f(&a, &b) {
            Err(Error::StorageDType { .. }) => f(&widen(&a)?, &widen(&b)?),
            r => r,
        })?;
        let v = narrow_var(py, Some(name), self.t.dtype(), v)?;
        Ok(self.wrap_var(py, v))
    }

    /// An op with no gradient: its output is Int or Bool, or it has no
    /// backward yet, in which case a tracked input is an error rather than
    /// a silently wrong gradient.
    pub fn op(&self, py: Python<'_>, name: &str, f: impl Fn(&Tensor) -> ferrum_core::Result<Tensor> + Send + Sync) -> PyResult<PyTensor> {
        let t = self.run(py, f)?;
        let t = narrow(py, Some(name), self.t.dtype(), t)?;
        self.untracked_result(py, name, &[self], t)
    }

    /// `op` for an op of two tensors of the same backend.
    pub fn op2(
        &self,
        py: Python<'_>,
        name: &str,
        other: &PyTensor,
        f: impl Fn(&Tensor, &Tensor) -> ferrum_core::Result<Tensor> + Send + Sync,
    ) -> PyResult<PyTensor> {
        self.same_backend(py, name, other)?;
        let (a, b) = (&self.t, &other.t);
        let widen = |t: &Tensor| t.cast(t.dtype().compute());
        let t = engine(py, a.numel() >= GIL_RELEASE_ELEMS, || match f(a, b) {
            Err(Error::StorageDType { .. }) => f(&widen(a)?, &widen(b)?),
            r => r,
        })?;
        let t = narrow(py, Some(name), self.t.dtype(), t)?;
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

/// `v` in its compute dtype when it is stored as another (f16 and bf16 as
/// f32, i32 and u8 as i64), by a differentiable cast: the gradient of the
/// widened value reaches `v` in its own dtype.
pub fn widen_var(v: &Var) -> ferrum_core::Result<Var> {
    let dtype = v.value.dtype();
    if dtype.is_storage_only() {
        v.cast(dtype.compute())
    } else {
        Ok(v.clone())
    }
}

/// Run an engine op of several tensors (`None` for an absent optional
/// operand), releasing the GIL when `release`. A kernel that does not read
/// a storage dtype fails before any work, and the op runs again with every
/// stored-only operand widened by [`widen_var`]; the caller rounds the
/// results back with [`narrow_to`].
pub fn run_widened<R: Send>(
    py: Python<'_>,
    release: bool,
    vars: &[Option<Var>],
    f: impl Fn(&[Option<Var>]) -> ferrum_core::Result<R> + Send + Sync,
) -> PyResult<R> {
    engine(py, release, || match f(vars) {
        Err(Error::StorageDType { .. }) if vars.iter().flatten().any(|v| v.value.dtype().is_storage_only()) => {
            let wide = vars.iter().map(|v| v.as_ref().map(widen_var).transpose()).collect::<ferrum_core::Result<Vec<_>>>()?;
            f(&wide)
        }
        r => r,
    })
}

/// A result computed in `src`'s compute dtype, back in the storage dtype
/// `src` (an index or a result of another dtype passes as it is).
pub fn narrow_to(py: Python<'_>, src: DType, v: Var) -> PyResult<Var> {
    narrow_var(py, None, src, v)
}

/// Ops whose Int result holds indices, not values: for an i32 or u8 input
/// they stay i64 (Burn's int element) instead of taking the input's dtype.
const INDEX_OPS: [&str; 5] = ["argmax", "argmin", "argsort", "argwhere", "one_hot"];

/// An op's result back in the storage dtype `src` of its input, when the op
/// ran in `src`'s compute dtype and keeps its input's dtype (elementwise
/// arithmetic, reductions of values) as Burn's ops do. A value that does
/// not fit back (an i64 sum of u8 beyond 255) is an error naming it.
fn narrow(py: Python<'_>, name: Option<&str>, src: DType, t: Tensor) -> PyResult<Tensor> {
    if !src.is_storage_only() || t.dtype() != src.compute() || name.is_some_and(|n| INDEX_OPS.contains(&n)) {
        return Ok(t);
    }
    engine(py, false, || t.cast(src)).map_err(|e| narrow_error(py, name, src, e))
}

fn narrow_var(py: Python<'_>, name: Option<&str>, src: DType, v: Var) -> PyResult<Var> {
    if !src.is_storage_only() || v.value.dtype() != src.compute() {
        return Ok(v);
    }
    engine(py, false, || v.cast(src)).map_err(|e| narrow_error(py, name, src, e))
}

fn narrow_error(py: Python<'_>, name: Option<&str>, src: DType, e: PyErr) -> PyErr {
    let reason = e.value(py).to_string();
    let reason = reason.strip_prefix("cast: ").unwrap_or(&reason);
    crate::error::argument_error(
        py,
        format!("{}: computed in {}, the result does not fit back in {src}: {reason}", name.unwrap_or("result"), src.compute()),
    )
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
    if let (Scalar::Int(v), Some((lo, hi))) = (s, dtype.int_range()) {
        if v < lo || v > hi {
            return Err(kind_error(py, format!("{op}: {v} does not fit in a {dtype} tensor (which holds {lo}..={hi}); cast the tensor to a wider dtype first")));
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
    to_scalar_checked(value).ok().flatten()
}

/// [`to_scalar`], except that a `KeyboardInterrupt` (or `SystemExit`)
/// raised while the value's own Python code runs (`__float__`, `__index__`,
/// a `dtype` property) comes back as the error it is: dropped with "cannot
/// convert", it would take the user's Ctrl-C with it.
pub fn to_scalar_checked(value: &Bound<'_, PyAny>) -> PyResult<Option<Scalar>> {
    let py = value.py();
    // Ok(None) for "not this kind of number"; Err only for an interrupt.
    let soft = |r: PyResult<Scalar>| match r {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyException>(py) => Ok(None),
        Err(e) => Err(e),
    };
    let integer = |v: &Bound<'_, PyAny>| -> PyResult<Option<Scalar>> {
        match soft(v.extract::<i64>().map(Scalar::Int))? {
            Some(s) => Ok(Some(s)),
            None => soft(v.extract::<f64>().map(Scalar::Float)),
        }
    };
    if value.is_instance_of::<PyBool>() {
        return soft(value.extract::<bool>().map(Scalar::Bool));
    }
    if value.is_instance_of::<PyInt>() {
        return integer(value);
    }
    if value.is_instance_of::<PyFloat>() {
        return soft(value.extract::<f64>().map(Scalar::Float));
    }
    if value.is_instance_of::<PyComplex>() {
        return Ok(None);
    }
    // NumPy scalars and other number-likes.
    let kind = match value.getattr("dtype").and_then(|d| d.getattr("kind")).and_then(|k| k.extract::<String>()) {
        Ok(k) => k,
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyException>(py) => String::new(),
        Err(e) => return Err(e),
    };
    match kind.as_str() {
        "b" => soft(value.extract::<bool>().map(Scalar::Bool)),
        "i" | "u" => integer(value),
        "c" => Ok(None),
        _ => soft(value.extract::<f64>().map(Scalar::Float)),
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
