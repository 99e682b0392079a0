//! Fused optimizer updates (`ferrum-core::optim`), called by `ferrum.optim`
//! once per parameter. The new parameter lives on the parameter's device,
//! marked `require_grad` when the old one was tracked; optimizer state and
//! clipped gradients live on the gradient's (inner) device.

use std::sync::{Mutex, MutexGuard, TryLockError};

use ferrum_core::optim::{self, AdaGradOptions, AdamOptions, Momentum, RmsPropOptions, RmsPropState, SgdOptions};
use ferrum_core::Tensor;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::device::PyDevice;
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
    let checkpointing = old.node.as_ref().map(|n| n.checkpointing).unwrap_or_default();
    let var = ferrum_core::autodiff::Var::constant(t).set_require_grad_with(old.node.is_some(), checkpointing);
    old.wrap_var(py, var)
}

/// One SGD step (Burn's `Sgd`): weight decay, then momentum when
/// `momentum` is not None. Returns the new parameter and the velocity: the
/// given state, rewritten, a new one on the first step with momentum, or
/// None without momentum.
#[pyfunction]
#[pyo3(signature = (param, grad, velocity, lr, weight_decay, momentum, dampening, nesterov))]
#[allow(clippy::too_many_arguments)]
pub fn sgd_step(
    py: Python<'_>,
    param: PyRef<'_, PyTensor>,
    grad: PyRef<'_, PyTensor>,
    velocity: Option<Py<PyStateTensor>>,
    lr: f64,
    weight_decay: Option<f64>,
    momentum: Option<f64>,
    dampening: f64,
    nesterov: bool,
) -> PyResult<(PyTensor, Option<Py<PyStateTensor>>)> {
    let o = SgdOptions { lr, weight_decay, momentum: momentum.map(|momentum| Momentum { momentum, dampening, nesterov }) };
    let (p, g) = (param.t.clone(), grad.t.clone());
    let (p, [v]) = update_states(py, "sgd_step", [velocity], &grad, move |[v]| optim::sgd_update(p, &g, v, &o))?;
    Ok((new_param(py, &param, p), v))
}

/// A tensor of optimizer state that the fused updates rewrite in place.
///
/// A `Tensor` is a value: an update can only read it and write a new one,
/// and for Adam's two moments that made the update 1.3-1.8x slower (fresh
/// buffers are written through the cache, each store reading its line
/// first). A state
/// tensor is held by the optimizer alone, so the update rewrites its buffer;
/// `tensor()` hands out a `Tensor` sharing that buffer, and while one is
/// alive the next update leaves the buffer to it and writes a new one
/// (copy-on-write), so a value once handed out never changes.
#[pyclass(frozen, name = "StateTensor", module = "ferrum")]
pub struct PyStateTensor {
    /// Locked for the length of an update: another update of the same state,
    /// or a read of it, waits for the first to finish.
    t: Mutex<Option<Tensor>>,
    device: Py<PyDevice>,
}

#[pymethods]
impl PyStateTensor {
    /// State starting at `tensor`'s values (shared until the first update).
    #[new]
    fn py_new(py: Python<'_>, tensor: PyRef<'_, PyTensor>) -> Self {
        PyStateTensor { t: Mutex::new(Some(tensor.t.clone())), device: tensor.device.clone_ref(py) }
    }

    /// The values now, as a tensor on the state's device.
    fn tensor(&self, py: Python<'_>) -> PyResult<PyTensor> {
        let t = self.lock(py).clone().ok_or_else(|| PyRuntimeError::new_err("StateTensor holds no tensor"))?;
        Ok(PyTensor::new(t, self.device.clone_ref(py)))
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        match &*self.lock(py) {
            Some(t) => format!("StateTensor(shape={:?}, dtype={})", t.shape(), t.dtype()),
            None => "StateTensor(empty)".to_string(),
        }
    }
}

impl PyStateTensor {
    /// The state, once no other update holds it. Waiting releases Python's
    /// lock: the update that holds the state needs it to return.
    fn lock(&self, py: Python<'_>) -> MutexGuard<'_, Option<Tensor>> {
        loop {
            match self.t.try_lock() {
                Ok(guard) => return guard,
                // A panic is caught inside the update, so the state it held is whole.
                Err(TryLockError::Poisoned(e)) => return e.into_inner(),
                Err(TryLockError::WouldBlock) => py.detach(|| drop(self.t.lock())),
            }
        }
    }

    fn new_state(py: Python<'_>, t: Option<Tensor>, like: &PyTensor) -> PyResult<Py<PyStateTensor>> {
        Py::new(py, PyStateTensor { t: Mutex::new(t), device: like.device.clone_ref(py) })
    }
}

/// Optimizer states of one update: each given or None (the first step, or
/// a state the configuration does not keep).
type States<const S: usize> = [Option<Py<PyStateTensor>>; S];

/// Run `update` on the tensors of `states`, each locked for the length of
/// the update, with the GIL released when `like` (the gradient) is large.
/// Returns the new parameter and the states: the given ones, rewritten, and
/// a new one for each that was None and the update filled. The update never
/// stops part-way (it polls no interrupt), and on an error it leaves every
/// state as it was.
fn update_states<const S: usize>(
    py: Python<'_>,
    op: &str,
    states: States<S>,
    like: &PyTensor,
    update: impl FnOnce([&mut Option<Tensor>; S]) -> ferrum_core::Result<Tensor> + Send,
) -> PyResult<(Tensor, States<S>)> {
    for (i, a) in states.iter().enumerate() {
        if let Some(a) = a {
            if states[i + 1..].iter().flatten().any(|b| a.is(b)) {
                return Err(PyValueError::new_err(format!("{op}: the same state is given twice")));
            }
        }
    }
    let mut guards = states.each_ref().map(|s| s.as_ref().map(|s| s.get().lock(py)));
    // The tensors move out of their states for the update and back after it:
    // a move leaves the buffer as unshared as it was, so it is rewritten in place.
    let mut tensors: [Option<Tensor>; S] = std::array::from_fn(|k| guards[k].as_mut().and_then(|g| g.take()));
    let refs = tensors.each_mut();
    let p = run(py, like.t.numel(), move || update(refs));
    for (guard, t) in guards.iter_mut().zip(&mut tensors) {
        if let Some(guard) = guard {
            **guard = t.take();
        }
    }
    drop(guards);
    let p = p?;
    let mut out: States<S> = std::array::from_fn(|_| None);
    for ((slot, given), t) in out.iter_mut().zip(states).zip(tensors) {
        *slot = match (given, t) {
            (Some(given), _) => Some(given),
            (None, Some(t)) => Some(PyStateTensor::new_state(py, Some(t), like)?),
            (None, None) => None,
        };
    }
    Ok((p, out))
}

/// A state the update always fills (Adam's moments, AdaGrad's sum).
fn filled(op: &str, state: Option<Py<PyStateTensor>>) -> PyResult<Py<PyStateTensor>> {
    state.ok_or_else(|| PyRuntimeError::new_err(format!("{op}: the update left a state empty")))
}

/// One Adam step, or AdamW with `decoupled` (and `cautious` weight decay).
/// `time` counts steps from 1. Returns the new parameter and both moments:
/// the given states, rewritten, or new ones on the first step (None given).
#[pyfunction]
#[pyo3(signature = (param, grad, moment_1, moment_2, time, lr, beta_1, beta_2, epsilon, weight_decay, decoupled, cautious = false))]
#[allow(clippy::too_many_arguments)]
#[allow(clippy::type_complexity)]
pub fn adam_step(
    py: Python<'_>,
    param: PyRef<'_, PyTensor>,
    grad: PyRef<'_, PyTensor>,
    moment_1: Option<Py<PyStateTensor>>,
    moment_2: Option<Py<PyStateTensor>>,
    time: u64,
    lr: f64,
    beta_1: f64,
    beta_2: f64,
    epsilon: f64,
    weight_decay: Option<f64>,
    decoupled: bool,
    cautious: bool,
) -> PyResult<(PyTensor, Py<PyStateTensor>, Py<PyStateTensor>)> {
    let o = AdamOptions { lr, beta_1, beta_2, epsilon, weight_decay, decoupled, cautious };
    let (p, g) = (param.t.clone(), grad.t.clone());
    let (p, [m1, m2]) = update_states(py, "adam_step", [moment_1, moment_2], &grad, move |[a, b]| optim::adam_update(p, &g, a, b, time, &o))?;
    Ok((new_param(py, &param, p), filled("adam_step", m1)?, filled("adam_step", m2)?))
}

/// One AdaGrad step. `time` counts steps from 1. Returns the new parameter
/// and the running sum of squared gradients: the given state, rewritten, or
/// a new one on the first step.
#[pyfunction]
#[pyo3(signature = (param, grad, sum, time, lr, lr_decay, epsilon, weight_decay))]
#[allow(clippy::too_many_arguments)]
pub fn adagrad_step(
    py: Python<'_>,
    param: PyRef<'_, PyTensor>,
    grad: PyRef<'_, PyTensor>,
    sum: Option<Py<PyStateTensor>>,
    time: u64,
    lr: f64,
    lr_decay: f64,
    epsilon: f64,
    weight_decay: Option<f64>,
) -> PyResult<(PyTensor, Py<PyStateTensor>)> {
    let o = AdaGradOptions { lr, lr_decay, epsilon, weight_decay };
    let (p, g) = (param.t.clone(), grad.t.clone());
    let (p, [s]) = update_states(py, "adagrad_step", [sum], &grad, move |[s]| optim::adagrad_update(p, &g, s, time, &o))?;
    Ok((new_param(py, &param, p), filled("adagrad_step", s)?))
}

/// One RMSProp step. Returns the new parameter, the square average, the
/// gradient average (None unless centered) and the momentum buffer (None
/// unless momentum > 0): the given states, rewritten, or new ones on the
/// first step.
#[pyfunction]
#[pyo3(signature = (param, grad, square_avg, grad_avg, momentum_buffer, lr, alpha, momentum, epsilon, centered, weight_decay))]
#[allow(clippy::too_many_arguments)]
#[allow(clippy::type_complexity)]
pub fn rmsprop_step(
    py: Python<'_>,
    param: PyRef<'_, PyTensor>,
    grad: PyRef<'_, PyTensor>,
    square_avg: Option<Py<PyStateTensor>>,
    grad_avg: Option<Py<PyStateTensor>>,
    momentum_buffer: Option<Py<PyStateTensor>>,
    lr: f64,
    alpha: f64,
    momentum: f64,
    epsilon: f64,
    centered: bool,
    weight_decay: Option<f64>,
) -> PyResult<(PyTensor, Py<PyStateTensor>, Option<Py<PyStateTensor>>, Option<Py<PyStateTensor>>)> {
    let o = RmsPropOptions { lr, alpha, momentum, epsilon, centered, weight_decay };
    let (p, g) = (param.t.clone(), grad.t.clone());
    let given = [square_avg, grad_avg, momentum_buffer];
    let (p, [sq, ga, buf]) = update_states(py, "rmsprop_step", given, &grad, move |[sq, ga, buf]| {
        // The state moves into the engine's struct and back, unshared all the way.
        let mut state = RmsPropState { square_avg: sq.take(), grad_avg: ga.take(), momentum: buf.take() };
        let p = optim::rmsprop_update(p, &g, &mut state, &o);
        (*sq, *ga, *buf) = (state.square_avg, state.grad_avg, state.momentum);
        p
    })?;
    Ok((new_param(py, &param, p), filled("rmsprop_step", sq)?, ga, buf))
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
    m.add_class::<PyStateTensor>()?;
    add_functions!(m, sgd_step, adam_step, adagrad_step, rmsprop_step, clip_by_value, clip_by_norm);
    Ok(())
}
