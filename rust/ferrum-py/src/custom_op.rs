//! Custom operations defined in Python (Burn's backend-extension idea): the
//! forward runs as ordinary ferrum ops on untracked tensors, and the graph
//! records one node whose backward calls back into Python.

use std::collections::BTreeSet;
use std::sync::Mutex;

use ferrum_core::autodiff::{record, Backward, Var};
use ferrum_core::{Error, Tensor};
use pyo3::prelude::*;

use crate::error::backend_error;
use crate::tensor::PyTensor;

/// Calls a Python function `backward(grad) -> sequence of grads or None`.
struct PyBackward {
    name: &'static str,
    callback: Py<PyAny>,
    /// The inner (plain) device gradients are handed over on.
    device: Py<crate::device::PyDevice>,
    shapes: Vec<Vec<usize>>,
}

impl Backward for PyBackward {
    fn name(&self) -> &'static str {
        self.name
    }

    fn backward(&self, grad: Tensor, needs: &[bool]) -> ferrum_core::Result<Vec<Option<Tensor>>> {
        // backward() runs with the GIL released; a Python callback takes it back.
        Python::attach(|py| {
            let fail = |e: PyErr| Error::invalid(self.name, format!("the custom backward raised {e}"));
            let g = Bound::new(py, PyTensor::new(grad, self.device.clone_ref(py))).map_err(fail)?;
            let out = self.callback.bind(py).call1((g,)).map_err(fail)?;
            let items: Vec<Bound<'_, PyAny>> = out.try_iter().map_err(fail)?.collect::<PyResult<_>>().map_err(fail)?;
            if items.len() != needs.len() {
                return Err(Error::invalid(
                    self.name,
                    format!("the custom backward returned {} gradients for {} inputs", items.len(), needs.len()),
                ));
            }
            items
                .iter()
                .zip(&self.shapes)
                .zip(needs)
                .map(|((item, shape), &need)| {
                    if item.is_none() || !need {
                        return Ok(None);
                    }
                    let t = item.cast::<PyTensor>().map_err(|e| fail(e.into()))?.get().t.clone();
                    if t.shape() != shape.as_slice() {
                        return Err(Error::shapes(self.name, t.shape(), shape, "a custom gradient must have its input's shape"));
                    }
                    Ok(Some(t))
                })
                .collect()
        })
    }
}

/// A `'static` name for the Backward trait: custom ops are few, so each
/// distinct name is leaked once and reused by every call.
fn intern(name: String) -> &'static str {
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut names = NAMES.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(&n) = names.get(name.as_str()) {
        return n;
    }
    let n: &'static str = Box::leak(name.into_boxed_str());
    names.insert(n);
    n
}

/// Record `output` (computed from `inputs` without tracking) as one op whose
/// gradient `backward(grad)` returns, one entry per input (None for none).
#[pyfunction]
pub fn custom_op(
    py: Python<'_>,
    name: String,
    inputs: Vec<PyRef<'_, PyTensor>>,
    output: PyRef<'_, PyTensor>,
    backward: Py<PyAny>,
) -> PyResult<PyTensor> {
    for i in &inputs {
        output.same_backend(py, "custom_op", i)?;
    }
    if output.node.is_some() {
        return Err(backend_error(py, format!("{name}: the forward output must be computed from detached inputs")));
    }
    let vars: Vec<Var> = inputs.iter().map(|i| i.to_var()).collect();
    let refs: Vec<&Var> = vars.iter().collect();
    let name = intern(name);
    let device = output.inner_device(py);
    let shapes = inputs.iter().map(|i| i.t.shape().to_vec()).collect();
    let v = record(output.t.clone(), &refs, move || PyBackward { name, callback: backward, device, shapes });
    Ok(output.wrap_var(py, v))
}
