//! Activation functions (Burn's `burn::tensor::activation`), exposed as
//! module functions; `ferrum.activation` re-exports them with types.

use pyo3::prelude::*;

use crate::tensor::{Dim, PyTensor};

macro_rules! elementwise {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[pyfunction]
        pub fn $name(py: Python<'_>, tensor: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
            let out = tensor.dop(py, |v| v.$name())?;
            crate::trace::note_named(stringify!($name), None, &tensor, &out);
            Ok(out)
        }
    )*};
}

macro_rules! along_dim {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[pyfunction]
        pub fn $name(py: Python<'_>, tensor: PyRef<'_, PyTensor>, dim: Dim) -> PyResult<PyTensor> {
            let out = tensor.dop(py, |v| v.$name(dim))?;
            crate::trace::note_named(stringify!($name), Some(dim), &tensor, &out);
            Ok(out)
        }
    )*};
}

elementwise! {
    /// `max(x, 0)` element-wise; any shape, kept (Float).
    ///
    /// Example:
    ///     >>> activation.relu(Tensor.from_data([-1.0, 2.0], device)).to_data().to_list()
    ///     [0.0, 2.0]
    relu;
    /// The Gaussian error linear unit `x * Phi(x)` element-wise, with the exact
    /// normal CDF (not the tanh approximation); any shape, kept.
    ///
    /// Example:
    ///     >>> activation.gelu(Tensor.from_data([0.0, 1.0], device)).to_data().to_list()
    ///     [0.0, 0.84134...]
    gelu;
    /// `log(sigmoid(x)) = -softplus(-x)` element-wise, computed without
    /// overflow; any shape, kept.
    ///
    /// Example:
    ///     >>> activation.log_sigmoid(Tensor.from_data([0.0], device)).to_data().to_list()
    ///     [-0.69314...]
    log_sigmoid;
    /// The sigmoid linear unit `x * sigmoid(x)` element-wise; any shape, kept.
    ///
    /// Example:
    ///     >>> activation.silu(Tensor.from_data([0.0, 1.0], device)).to_data().to_list()
    ///     [0.0, 0.73105...]
    silu;
    /// `x * relu6(x + 3) / 6` element-wise; any shape, kept.
    ///
    /// Example:
    ///     >>> activation.hard_swish(Tensor.from_data([-3.0, 0.0, 3.0], device)).to_data().to_list()
    ///     [-0.0, 0.0, 3.0]
    hard_swish;
    /// `x * tanh(softplus(x))` element-wise; any shape, kept.
    ///
    /// Example:
    ///     >>> activation.mish(Tensor.from_data([0.0, 1.0], device)).to_data().to_list()
    ///     [0.0, 0.86509...]
    mish;
}

along_dim! {
    /// `exp(x) / sum(exp(x))` along `dim`, computed stably (the maximum is
    /// subtracted first); shape kept, each slice along `dim` sums to 1.
    ///
    /// Example:
    ///     >>> activation.softmax(Tensor.from_data([[0.0, 0.0], [1.0, 1.0]], device), 1).to_data().to_list()
    ///     [[0.5, 0.5], [0.5, 0.5]]
    softmax;
    /// `log(softmax(x))` along `dim`, computed stably; shape kept.
    ///
    /// Example:
    ///     >>> activation.log_softmax(Tensor.from_data([[0.0, 0.0]], device), 1).to_data().to_list()
    ///     [[-0.69314..., -0.69314...]]
    log_softmax;
    /// `softmax(-x)` along `dim`: the smallest value gets the largest weight;
    /// shape kept.
    ///
    /// Example:
    ///     >>> activation.softmin(Tensor.from_data([[1.0, 1.0]], device), 1).to_data().to_list()
    ///     [[0.5, 0.5]]
    softmin;
    /// `exp(x) / (1 + sum(exp(x)))` along `dim`, computed stably: a slice may
    /// sum to less than 1, so an attention row can attend to nothing; shape kept.
    ///
    /// Example:
    ///     >>> activation.quiet_softmax(Tensor.from_data([[0.0]], device), 1).to_data().to_list()
    ///     [[0.5]]
    quiet_softmax;
    /// The gated linear unit `a * sigmoid(b)`, where `a` and `b` are the first
    /// and second halves of `dim` (of even size): `[..., 2n, ...] -> [..., n, ...]`.
    ///
    /// Example:
    ///     >>> activation.glu(Tensor.from_data([[2.0, 0.0]], device), 1).to_data().to_list()
    ///     [[1.0]]
    glu;
}

/// `1 / (1 + exp(-x))` element-wise, in (0, 1); any shape, kept (Float).
///
/// Example:
///     >>> activation.sigmoid(Tensor.from_data([0.0], device)).to_data().to_list()
///     [0.5]
#[pyfunction]
pub fn sigmoid(py: Python<'_>, tensor: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
    let out = tensor.dop(py, |v| v.float_unary(ferrum_core::ops::unary::FloatUnary::Sigmoid))?;
    crate::trace::note("t_float_unary", || vec![("op", ferrum_core::plan::Attr::Str("sigmoid".into()))], &[Some(&tensor)], &[&out]);
    Ok(out)
}

/// The hyperbolic tangent element-wise, in (-1, 1); any shape, kept (Float).
///
/// Example:
///     >>> activation.tanh(Tensor.from_data([0.0, 1.0], device)).to_data().to_list()
///     [0.0, 0.76159...]
#[pyfunction]
pub fn tanh(py: Python<'_>, tensor: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
    let out = tensor.dop(py, |v| v.float_unary(ferrum_core::ops::unary::FloatUnary::Tanh))?;
    crate::trace::note("t_float_unary", || vec![("op", ferrum_core::plan::Attr::Str("tanh".into()))], &[Some(&tensor)], &[&out]);
    Ok(out)
}

/// `x` where `x >= 0`, else `negative_slope * x`; any shape, kept.
///
/// Example:
///     >>> activation.leaky_relu(Tensor.from_data([-2.0, 2.0], device), 0.5).to_data().to_list()
///     [-1.0, 2.0]
#[pyfunction]
#[pyo3(signature = (tensor, negative_slope = 0.01))]
pub fn leaky_relu(py: Python<'_>, tensor: PyRef<'_, PyTensor>, negative_slope: f64) -> PyResult<PyTensor> {
    tensor.dop(py, |v| v.leaky_relu(negative_slope))
}

/// `x` where `x >= 0`, else `alpha * x`: `alpha` is rank 1, either one
/// slope for every element or one per channel (dim 1 of `x`).
///
/// Example:
///     >>> activation.prelu(Tensor.from_data([[-2.0, -2.0]], device), Tensor.from_data([0.5, 0.25], device)).to_data().to_list()
///     [[-1.0, -0.5]]
#[pyfunction]
pub fn prelu(py: Python<'_>, tensor: PyRef<'_, PyTensor>, alpha: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
    tensor.dop2(py, "prelu", &alpha, |t, a| t.prelu(a))
}

/// `clamp(alpha * x + beta, 0, 1)` element-wise; any shape, kept.
///
/// Example:
///     >>> activation.hard_sigmoid(Tensor.from_data([-5.0, 0.0, 5.0], device)).to_data().to_list()
///     [0.0, 0.5, 1.0]
#[pyfunction]
#[pyo3(signature = (tensor, alpha = 0.2, beta = 0.5))]
pub fn hard_sigmoid(py: Python<'_>, tensor: PyRef<'_, PyTensor>, alpha: f64, beta: f64) -> PyResult<PyTensor> {
    tensor.dop(py, |v| v.hard_sigmoid(alpha, beta))
}

/// `log(1 + exp(beta * x)) / beta` element-wise, computed without overflow;
/// any shape, kept.
///
/// Example:
///     >>> activation.softplus(Tensor.from_data([0.0], device), 2.0).to_data().to_list()
///     [0.34657...]
#[pyfunction]
#[pyo3(signature = (tensor, beta = 1.0))]
pub fn softplus(py: Python<'_>, tensor: PyRef<'_, PyTensor>, beta: f64) -> PyResult<PyTensor> {
    tensor.dop(py, |v| v.softplus(beta))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(
        m,
        relu, gelu, log_sigmoid, silu, hard_swish, mish, softmax, log_softmax, softmin, quiet_softmax, glu, sigmoid,
        tanh, leaky_relu, prelu, hard_sigmoid, softplus,
    );
    Ok(())
}
