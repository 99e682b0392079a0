//! Fused optimizer updates (`ferrum-core::optim`), called by `ferrum.optim`
//! once per parameter. The new parameter lives on the parameter's device,
//! marked `require_grad` when the old one was tracked; optimizer state and
//! clipped gradients live on the gradient's (inner) device.

use ferrum_core::optim::{self, AdaGradOptions, AdamOptions, Momentum, RmsPropOptions, RmsPropState, SgdOptions};
use ferrum_core::Tensor;
use pyo3::prelude::*;

use crate::tensor::PyTensor;

/// Elements above which the update runs with the GIL released: below it
/// the release costs more than the kernel.
const GIL_RELEASE_ELEMS: usize = 1 << 15;

/// Run an engine update, releasing the GIL when the tensor is large.
fn run<R: Send>(py: Python<'_>, numel: usize, f: impl FnOnce() -> ferrum_core::Result<R> + Send) -> PyResult<R> {
    crate::error::engine(py, numel >= GIL_RELEASE_ELEMS, f)
}

/// The updated parameter, on the old one's device and as tracked as it was.
fn new_param(py: Python<'_>, old: &PyTensor, t: Tensor) -> PyTensor {
    let var = ferrum_core::autodiff::Var::constant(t).set_require_grad(old.node.is_some());
    old.wrap_var(py, var)
}

fn engine(t: &Option<PyRef<'_, PyTensor>>) -> Option<Tensor> {
    t.as_ref().map(|t| t.t.clone())
}

/// One SGD step (Burn's `Sgd`): weight decay, then momentum when
/// `momentum` is not None. Returns the new parameter and velocity.
#[pyfunction]
#[pyo3(signature = (param, grad, velocity, lr, weight_decay, momentum, dampening, nesterov))]
#[allow(clippy::too_many_arguments)]
pub fn sgd_step(
    py: Python<'_>,
    param: PyRef<'_, PyTensor>,
    grad: PyRef<'_, PyTensor>,
    velocity: Option<PyRef<'_, PyTensor>>,
    lr: f64,
    weight_decay: Option<f64>,
    momentum: Option<f64>,
    dampening: f64,
    nesterov: bool,
) -> PyResult<(PyTensor, Option<PyTensor>)> {
    let o = SgdOptions { lr, weight_decay, momentum: momentum.map(|momentum| Momentum { momentum, dampening, nesterov }) };
    let (p, g, v) = (param.t.clone(), grad.t.clone(), engine(&velocity));
    let (p, v) = run(py, g.numel(), move || optim::sgd_step(p, &g, v, &o))?;
    Ok((new_param(py, &param, p), v.map(|v| grad.wrap(py, v))))
}

/// One Adam step, or AdamW with `decoupled` (and `cautious` weight decay).
/// `time` counts steps from 1. Returns the new parameter and both moments.
#[pyfunction]
#[pyo3(signature = (param, grad, moment_1, moment_2, time, lr, beta_1, beta_2, epsilon, weight_decay, decoupled, cautious = false))]
#[allow(clippy::too_many_arguments)]
pub fn adam_step(
    py: Python<'_>,
    param: PyRef<'_, PyTensor>,
    grad: PyRef<'_, PyTensor>,
    moment_1: Option<PyRef<'_, PyTensor>>,
    moment_2: Option<PyRef<'_, PyTensor>>,
    time: u64,
    lr: f64,
    beta_1: f64,
    beta_2: f64,
    epsilon: f64,
    weight_decay: Option<f64>,
    decoupled: bool,
    cautious: bool,
) -> PyResult<(PyTensor, PyTensor, PyTensor)> {
    let o = AdamOptions { lr, beta_1, beta_2, epsilon, weight_decay, decoupled, cautious };
    let (p, g, m1, m2) = (param.t.clone(), grad.t.clone(), engine(&moment_1), engine(&moment_2));
    let (p, m1, m2) = run(py, g.numel(), move || optim::adam_step(p, &g, m1, m2, time, &o))?;
    Ok((new_param(py, &param, p), grad.wrap(py, m1), grad.wrap(py, m2)))
}

/// One AdaGrad step. `time` counts steps from 1. Returns the new parameter
/// and the running sum of squared gradients.
#[pyfunction]
#[pyo3(signature = (param, grad, sum, time, lr, lr_decay, epsilon, weight_decay))]
#[allow(clippy::too_many_arguments)]
pub fn adagrad_step(
    py: Python<'_>,
    param: PyRef<'_, PyTensor>,
    grad: PyRef<'_, PyTensor>,
    sum: Option<PyRef<'_, PyTensor>>,
    time: u64,
    lr: f64,
    lr_decay: f64,
    epsilon: f64,
    weight_decay: Option<f64>,
) -> PyResult<(PyTensor, PyTensor)> {
    let o = AdaGradOptions { lr, lr_decay, epsilon, weight_decay };
    let (p, g, s) = (param.t.clone(), grad.t.clone(), engine(&sum));
    let (p, s) = run(py, g.numel(), move || optim::adagrad_step(p, &g, s, time, &o))?;
    Ok((new_param(py, &param, p), grad.wrap(py, s)))
}

/// One RMSProp step. Returns the new parameter, the square average, the
/// gradient average (None unless centered) and the momentum buffer (None
/// unless momentum > 0).
#[pyfunction]
#[pyo3(signature = (param, grad, square_avg, grad_avg, momentum_buffer, lr, alpha, momentum, epsilon, centered, weight_decay))]
#[allow(clippy::too_many_arguments)]
#[allow(clippy::type_complexity)]
pub fn rmsprop_step(
    py: Python<'_>,
    param: PyRef<'_, PyTensor>,
    grad: PyRef<'_, PyTensor>,
    square_avg: Option<PyRef<'_, PyTensor>>,
    grad_avg: Option<PyRef<'_, PyTensor>>,
    momentum_buffer: Option<PyRef<'_, PyTensor>>,
    lr: f64,
    alpha: f64,
    momentum: f64,
    epsilon: f64,
    centered: bool,
    weight_decay: Option<f64>,
) -> PyResult<(PyTensor, PyTensor, Option<PyTensor>, Option<PyTensor>)> {
    let o = RmsPropOptions { lr, alpha, momentum, epsilon, centered, weight_decay };
    let state = RmsPropState { square_avg: engine(&square_avg), grad_avg: engine(&grad_avg), momentum: engine(&momentum_buffer) };
    let (p, g) = (param.t.clone(), grad.t.clone());
    let (p, s) = run(py, g.numel(), move || optim::rmsprop_step(p, &g, state, &o))?;
    let square_avg = s.square_avg.expect("rmsprop_step always returns square_avg");
    Ok((new_param(py, &param, p), grad.wrap(py, square_avg), s.grad_avg.map(|t| grad.wrap(py, t)), s.momentum.map(|t| grad.wrap(py, t))))
}

/// The gradient with each element clamped into [-threshold, threshold].
#[pyfunction]
pub fn clip_by_value(py: Python<'_>, grad: PyRef<'_, PyTensor>, threshold: f64) -> PyResult<PyTensor> {
    let g = grad.t.clone();
    let out = run(py, g.numel(), move || optim::clip_by_value(g, threshold))?;
    Ok(grad.wrap(py, out))
}

/// The gradients scaled together so their joint L2 norm is at most
/// `max_norm` (one tensor: Burn's per-parameter norm clipping).
#[pyfunction]
pub fn clip_by_norm(py: Python<'_>, grads: Vec<PyRef<'_, PyTensor>>, max_norm: f64) -> PyResult<Vec<PyTensor>> {
    let ts: Vec<Tensor> = grads.iter().map(|g| g.t.clone()).collect();
    let numel = ts.iter().map(Tensor::numel).sum();
    let out = run(py, numel, move || optim::clip_by_norm(ts, max_norm))?;
    Ok(grads.iter().zip(out).map(|(g, t)| g.wrap(py, t)).collect())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sgd_step, m)?)?;
    m.add_function(wrap_pyfunction!(adam_step, m)?)?;
    m.add_function(wrap_pyfunction!(adagrad_step, m)?)?;
    m.add_function(wrap_pyfunction!(rmsprop_step, m)?)?;
    m.add_function(wrap_pyfunction!(clip_by_value, m)?)?;
    m.add_function(wrap_pyfunction!(clip_by_norm, m)?)?;
    Ok(())
}
