//! Attention weights as one fused op (used by `ferrum.nn.attention` and
//! `ferrum.functional.attention`).

use ferrum_core::plan::Attr;
use pyo3::prelude::*;

use crate::tensor::PyTensor;

/// `softmax(where(mask, fill, scale * scores))` along the last dim; the Bool
/// `mask` (true where attention is not allowed) broadcasts onto the scores.
#[pyfunction]
#[pyo3(signature = (scores, mask = None, scale = 1.0, fill = -1.0e4))]
pub fn masked_softmax(py: Python<'_>, scores: PyRef<'_, PyTensor>, mask: Option<PyRef<'_, PyTensor>>, scale: f64, fill: f64) -> PyResult<PyTensor> {
    if let Some(m) = &mask {
        scores.same_backend(py, "masked_softmax", m)?;
    }
    let m = mask.as_deref().map(|m| m.t.clone());
    let out = scores.dop(py, |v| v.masked_softmax(m.as_ref(), scale, fill))?;
    let attrs = || vec![("scale", Attr::Float(scale)), ("fill", Attr::Float(fill))];
    crate::trace::note("t_masked_softmax", attrs, &[Some(&scores), mask.as_deref()], &[&out]);
    Ok(out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(m, masked_softmax);
    Ok(())
}
