//! LayerNorm as one fused, differentiable op (used by `ferrum.nn.LayerNorm`).

use ferrum_core::autodiff::Var;
use ferrum_core::plan::Attr;
use pyo3::prelude::*;

use crate::tensor::{narrow_to, run_widened, PyTensor, GIL_RELEASE_ELEMS};

/// `(x - mean) / sqrt(var + epsilon) * gamma + beta` over the last dim of
/// `x`, the variance biased (Burn's LayerNorm); `gamma` and `beta` hold one
/// value per element of the last dim. f16 and bf16 are read and written
/// directly and computed in f32; the backward is fused as well.
///
/// Example:
///     >>> from ferrum._ferrum import layer_norm
///     >>> x, gamma = Tensor.from_data([[1.0, 3.0]], device), Tensor.from_data([2.0, 2.0], device)
///     >>> layer_norm(x, gamma, epsilon=0.0).to_data().to_list()
///     [[-2.0, 2.0]]
#[pyfunction]
#[pyo3(signature = (x, gamma, beta = None, epsilon = 1e-5))]
pub fn layer_norm(py: Python<'_>, x: PyRef<'_, PyTensor>, gamma: PyRef<'_, PyTensor>, beta: Option<PyRef<'_, PyTensor>>, epsilon: f64) -> PyResult<PyTensor> {
    x.same_backend(py, "layer_norm", &gamma)?;
    if let Some(b) = &beta {
        x.same_backend(py, "layer_norm", b)?;
    }
    let vars = [Some(x.to_var()), Some(gamma.to_var()), beta.as_deref().map(PyTensor::to_var)];
    let run = |v: &[Option<Var>]| v[0].as_ref().expect("input").layer_norm(v[1].as_ref().expect("gamma"), v[2].as_ref(), epsilon);
    let v = run_widened(py, x.t.numel() >= GIL_RELEASE_ELEMS, &vars, run)?;
    let out = x.wrap_var(py, narrow_to(py, x.t.dtype(), v)?);
    let start = x.t.rank().saturating_sub(1) as i64;
    crate::trace::note("layer_norm", || vec![("start", Attr::Int(start)), ("epsilon", Attr::Float(epsilon))], &[Some(&x), Some(&gamma), beta.as_deref()], &[&out]);
    Ok(out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(m, layer_norm);
    Ok(())
}
