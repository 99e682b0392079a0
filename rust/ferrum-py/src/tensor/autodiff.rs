//! Gradient tracking: require_grad, detach, inner/from_inner, backward and
//! reading gradients. On a plain backend, require_grad is a no-op (as in
//! Burn) and backward is an error.

use ferrum_core::autodiff::backward;
use ferrum_core::Kind;
use pyo3::prelude::*;

use super::PyTensor;
use crate::device::PyDevice;
use crate::error::{backend_error, engine};
use crate::gradients::PyGradients;

impl PyTensor {
    fn expect_autodiff(&self, py: Python<'_>, op: &str) -> PyResult<()> {
        if !self.dev().autodiff {
            return Err(backend_error(
                py,
                format!(
                    "{op}: the tensor lives on the plain backend {}; gradients need an autodiff backend such as Autodiff[NdArray]",
                    crate::device::backend_name(py, &self.dev().backend)?
                ),
            ));
        }
        Ok(())
    }

    /// The device of the backend the autodiff backend decorates.
    pub fn inner_device(&self, py: Python<'_>) -> Py<PyDevice> {
        match &self.dev().inner {
            Some(d) => d.clone_ref(py),
            None => self.device.clone_ref(py),
        }
    }
}

#[pymethods]
impl PyTensor {
    /// The tensor marked as a leaf whose gradient `backward()` computes, on an
    /// autodiff backend (`Autodiff[NdArray]`); on a plain backend it is returned
    /// unchanged. Float tensors.
    ///
    /// Example:
    ///     >>> from ferrum.backend import Autodiff
    ///     >>> x = Tensor.from_data([2.0], Autodiff[NdArray].device()).require_grad()
    ///     >>> x.is_require_grad()
    ///     True
    fn require_grad(&self, py: Python<'_>) -> PyResult<PyTensor> {
        self.set_require_grad(py, true)
    }

    /// The tensor marked (`True`) or unmarked (`False`) as a leaf whose gradient
    /// `backward()` computes; `require_grad()` is `set_require_grad(True)`.
    ///
    /// Example:
    ///     >>> from ferrum.backend import Autodiff
    ///     >>> x = Tensor.from_data([2.0], Autodiff[NdArray].device()).require_grad()
    ///     >>> x.set_require_grad(False).is_require_grad()
    ///     False
    fn set_require_grad(&self, py: Python<'_>, require_grad: bool) -> PyResult<PyTensor> {
        self.expect_kind(py, "require_grad", Kind::Float)?;
        if !self.dev().autodiff {
            return Ok(self.wrap_var(py, self.to_var()));
        }
        Ok(self.wrap_var(py, self.to_var().set_require_grad_with(require_grad, self.dev().checkpointing())))
    }

    /// Whether gradients flow to this tensor: a marked leaf, or the result of an
    /// operation on one. Always False on a plain backend.
    ///
    /// Example:
    ///     >>> Tensor.zeros((1,), device).is_require_grad()
    ///     False
    fn is_require_grad(&self) -> bool {
        self.node.is_some()
    }

    /// The same values cut from the gradient graph (still on the autodiff
    /// backend): nothing flows back through the result.
    ///
    /// Example:
    ///     >>> from ferrum.backend import Autodiff
    ///     >>> x = Tensor.from_data([2.0], Autodiff[NdArray].device()).require_grad()
    ///     >>> (x * 3.0).detach().is_require_grad()
    ///     False
    fn detach(&self, py: Python<'_>) -> PyTensor {
        let out = self.wrap(py, self.t.clone());
        crate::trace::alias(self, &out);
        out
    }

    /// The same values on the decorated (inner) backend, outside the graph and
    /// without a copy: `Tensor[Autodiff[NdArray], D, K] -> Tensor[NdArray, D, K]`.
    /// A `BackendError` on a plain backend.
    ///
    /// Example:
    ///     >>> from ferrum.backend import Autodiff
    ///     >>> Tensor.from_data([2.0], Autodiff[NdArray].device()).inner().device() == device
    ///     True
    fn inner(&self, py: Python<'_>) -> PyResult<PyTensor> {
        self.expect_autodiff(py, "inner")?;
        let out = PyTensor::new(self.t.clone(), self.inner_device(py));
        crate::trace::alias(self, &out);
        Ok(out)
    }

    /// A tensor of the inner backend lifted onto its autodiff backend
    /// (untracked): `Tensor[NdArray, D, K] -> Tensor[Autodiff[NdArray], D, K]`.
    ///
    /// Example:
    ///     >>> Tensor.from_inner(Tensor.from_data([2.0], device)).device().is_autodiff
    ///     True
    #[staticmethod]
    fn from_inner(py: Python<'_>, tensor: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        if tensor.dev().autodiff {
            return Err(backend_error(py, "from_inner: the tensor already lives on an autodiff backend"));
        }
        let backend = tensor.dev().backend.clone_ref(py);
        let device = py.import("ferrum.backend")?.getattr("Autodiff")?.get_item(backend)?.call_method0("device")?;
        let out = PyTensor::new(tensor.t.clone(), device.extract()?);
        crate::trace::alias(&tensor, &out);
        Ok(out)
    }

    /// The gradients of this tensor with respect to every tensor marked with
    /// `require_grad()` that it depends on, in a `Gradients` container (read one
    /// with `x.grad(grads)`). The seed is ones, so a tensor of several elements
    /// gives the gradients of its sum. The graph is freed as it runs. Autodiff
    /// backend only (a `BackendError` elsewhere).
    ///
    /// Example:
    ///     >>> from ferrum.backend import Autodiff
    ///     >>> x = Tensor.from_data([1.0, 2.0], Autodiff[NdArray].device()).require_grad()
    ///     >>> grads = (x * x).sum().backward()
    ///     >>> x.grad(grads).to_data().to_list()
    ///     [2.0, 4.0]
    fn backward(&self, py: Python<'_>) -> PyResult<PyGradients> {
        self.expect_autodiff(py, "backward")?;
        self.expect_kind(py, "backward", Kind::Float)?;
        let root = self.to_var();
        let grads = engine(py, true, || backward(&root))?;
        Ok(PyGradients::new(grads, self.inner_device(py)))
    }

    /// This tensor's gradient in `grads`, of this tensor's shape, on the inner
    /// backend; None when the tensor took no part in what `backward()` was
    /// called on.
    ///
    /// Example:
    ///     >>> from ferrum.backend import Autodiff
    ///     >>> x = Tensor.from_data([3.0], Autodiff[NdArray].device()).require_grad()
    ///     >>> x.grad((x * 2.0).sum().backward()).to_data().to_list()
    ///     [2.0]
    fn grad(&self, py: Python<'_>, grads: PyRef<'_, PyGradients>) -> PyResult<Option<PyTensor>> {
        self.expect_autodiff(py, "grad")?;
        Ok(self.node.as_ref().and_then(|n| grads.get(py, n.id)))
    }

    /// This tensor's gradient taken out of `grads` (None if absent); `grads` no
    /// longer holds it.
    ///
    /// Example:
    ///     >>> from ferrum.backend import Autodiff
    ///     >>> x = Tensor.from_data([3.0], Autodiff[NdArray].device()).require_grad()
    ///     >>> grads = (x * 2.0).sum().backward()
    ///     >>> x.grad_remove(grads).to_data().to_list(), x.grad(grads)
    ///     ([2.0], None)
    fn grad_remove(&self, py: Python<'_>, grads: PyRef<'_, PyGradients>) -> PyResult<Option<PyTensor>> {
        self.expect_autodiff(py, "grad_remove")?;
        Ok(self.node.as_ref().and_then(|n| grads.remove(py, n.id)))
    }

    /// This tensor's gradient in `grads` replaced by `grad` (an inner-backend
    /// tensor of this tensor's shape and dtype, else a `ShapeError` or
    /// `KindError`); `grads` is changed in place.
    ///
    /// Example:
    ///     >>> from ferrum.backend import Autodiff
    ///     >>> x = Tensor.from_data([3.0], Autodiff[NdArray].device()).require_grad()
    ///     >>> grads = (x * 2.0).sum().backward()
    ///     >>> x.grad_replace(grads, Tensor.from_data([0.5], device))
    ///     >>> x.grad(grads).to_data().to_list()
    ///     [0.5]
    fn grad_replace(&self, py: Python<'_>, grads: PyRef<'_, PyGradients>, grad: PyRef<'_, PyTensor>) -> PyResult<()> {
        self.expect_autodiff(py, "grad_replace")?;
        if grad.dev().autodiff {
            return Err(backend_error(py, "grad_replace: gradients live on the inner backend; pass grad.inner()"));
        }
        if grad.t.dtype() != self.t.dtype() {
            return Err(crate::error::kind_error(
                py,
                format!("grad_replace: expected a gradient of dtype {}, found {}", self.t.dtype(), grad.t.dtype()),
            ));
        }
        if grad.t.shape() != self.t.shape() {
            return Err(crate::error::shape_error(
                py,
                format!("grad_replace: expected a gradient of shape {:?}, found {:?}", self.t.shape(), grad.t.shape()),
            ));
        }
        if let Some(n) = &self.node {
            grads.insert(n.id, grad.t.clone());
        }
        Ok(())
    }
}
