//! `Gradients`: what `backward()` returns; read with `x.grad(grads)`.

use std::sync::Mutex;

use ferrum_core::autodiff::{Gradients, NodeId};
use ferrum_core::Tensor;
use pyo3::prelude::*;

use crate::device::PyDevice;
use crate::tensor::PyTensor;

/// The gradients `backward()` returns, by tensor: read one with
/// `x.grad(grads)`, take it out with `x.grad_remove(grads)`; `len(grads)` is
/// how many it holds. The gradients live on the inner backend. For a module's
/// parameters, `GradientsParams.from_grads(grads, model)` keeps them by
/// parameter id for an optimizer.
///
/// Example:
///     >>> from ferrum.backend import Autodiff
///     >>> x = Tensor.from_data([1.0, 2.0], Autodiff[NdArray].device()).require_grad()
///     >>> grads = (x * 3.0).sum().backward()
///     >>> len(grads), x.grad(grads).to_data().to_list()
///     (1, [3.0, 3.0])
#[pyclass(frozen, name = "Gradients", module = "ferrum")]
pub struct PyGradients {
    grads: Mutex<Gradients>,
    /// Gradients live on the inner (plain) backend.
    device: Py<PyDevice>,
}

impl PyGradients {
    pub fn new(grads: Gradients, device: Py<PyDevice>) -> Self {
        PyGradients { grads: Mutex::new(grads), device }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Gradients> {
        self.grads.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn get(&self, py: Python<'_>, id: NodeId) -> Option<PyTensor> {
        self.lock().get(id).map(|t| PyTensor::new(t.clone(), self.device.clone_ref(py)))
    }

    pub fn remove(&self, py: Python<'_>, id: NodeId) -> Option<PyTensor> {
        self.lock().remove(id).map(|t| PyTensor::new(t, self.device.clone_ref(py)))
    }

    pub fn insert(&self, id: NodeId, t: Tensor) {
        self.lock().insert(id, t);
    }
}

#[pymethods]
impl PyGradients {
    /// How many gradients the container holds.
    fn __len__(&self) -> usize {
        self.lock().len()
    }

    fn __repr__(&self) -> String {
        format!("Gradients({} tensors)", self.lock().len())
    }
}
