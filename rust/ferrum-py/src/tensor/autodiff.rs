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
    /// Mark the tensor as a leaf whose gradient `backward()` reports
    /// (a no-op on a plain backend).
    fn require_grad(&self, py: Python<'_>) -> PyResult<PyTensor> {
        self.set_require_grad(py, true)
    }

    fn set_require_grad(&self, py: Python<'_>, require_grad: bool) -> PyResult<PyTensor> {
        self.expect_kind(py, "require_grad", Kind::Float)?;
        if !self.dev().autodiff {
            return Ok(self.wrap_var(py, self.to_var()));
        }
        Ok(self.wrap_var(py, self.to_var().set_require_grad(require_grad)))
    }

    fn is_require_grad(&self) -> bool {
        self.node.is_some()
    }

    /// The same values, cut from the gradient graph.
    fn detach(&self, py: Python<'_>) -> PyTensor {
        self.wrap(py, self.t.clone())
    }

    /// The same values on the decorated (inner) backend, without a copy.
    fn inner(&self, py: Python<'_>) -> PyResult<PyTensor> {
        self.expect_autodiff(py, "inner")?;
        Ok(PyTensor::new(self.t.clone(), self.inner_device(py)))
    }

    /// A tensor of the inner backend, moved onto its autodiff backend.
    #[staticmethod]
    fn from_inner(py: Python<'_>, tensor: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
        if tensor.dev().autodiff {
            return Err(backend_error(py, "from_inner: the tensor already lives on an autodiff backend"));
        }
        let backend = tensor.dev().backend.clone_ref(py);
        let device = py.import("ferrum.backend")?.getattr("Autodiff")?.get_item(backend)?.call_method0("device")?;
        Ok(PyTensor::new(tensor.t.clone(), device.extract()?))
    }

    /// Gradients of this tensor (seeded with ones) with respect to every
    /// tensor marked with `require_grad()` that it depends on.
    fn backward(&self, py: Python<'_>) -> PyResult<PyGradients> {
        self.expect_autodiff(py, "backward")?;
        self.expect_kind(py, "backward", Kind::Float)?;
        let root = self.to_var();
        let grads = engine(py, true, || backward(&root))?;
        Ok(PyGradients::new(grads, self.inner_device(py)))
    }

    /// This tensor's gradient in `grads`, on the inner backend, or None.
    fn grad(&self, py: Python<'_>, grads: PyRef<'_, PyGradients>) -> PyResult<Option<PyTensor>> {
        self.expect_autodiff(py, "grad")?;
        Ok(self.node.as_ref().and_then(|n| grads.get(py, n.id)))
    }

    /// Take this tensor's gradient out of `grads`.
    fn grad_remove(&self, py: Python<'_>, grads: PyRef<'_, PyGradients>) -> PyResult<Option<PyTensor>> {
        self.expect_autodiff(py, "grad_remove")?;
        Ok(self.node.as_ref().and_then(|n| grads.remove(py, n.id)))
    }

    /// Replace this tensor's gradient in `grads` with `grad`.
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
