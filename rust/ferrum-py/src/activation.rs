//! Activation functions (Burn's `burn::tensor::activation`), exposed as
//! module functions; `ferrum.activation` re-exports them with types.

use pyo3::prelude::*;

use crate::tensor::{Dim, PyTensor};

macro_rules! elementwise {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[pyfunction]
        pub fn $name(py: Python<'_>, tensor: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
            tensor.dop(py, |v| v.$name())
        }
    )*};
}

macro_rules! along_dim {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[pyfunction]
        pub fn $name(py: Python<'_>, tensor: PyRef<'_, PyTensor>, dim: Dim) -> PyResult<PyTensor> {
            tensor.dop(py, |v| v.$name(dim))
        }
    )*};
}

elementwise! {
    /// max(x, 0).
    relu;
    /// x * Φ(x), with the exact normal CDF.
    gelu;
    /// -softplus(-x).
    log_sigmoid;
    /// x * sigmoid(x).
    silu;
    /// x * relu6(x + 3) / 6.
    hard_swish;
    /// x * tanh(softplus(x)).
    mish;
}

along_dim! {
    /// exp(x) / sum(exp(x)) along `dim`, computed stably.
    softmax;
    /// log(softmax(x)) along `dim`, computed stably.
    log_softmax;
    /// softmax(-x) along `dim`.
    softmin;
    /// exp(x) / (1 + sum(exp(x))) along `dim`: lets a row attend to nothing.
    quiet_softmax;
    /// a * sigmoid(b), where a and b are the halves of `dim`.
    glu;
}

/// 1 / (1 + exp(-x)).
#[pyfunction]
pub fn sigmoid(py: Python<'_>, tensor: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
    tensor.dop(py, |v| v.float_unary(ferrum_core::ops::unary::FloatUnary::Sigmoid))
}

#[pyfunction]
pub fn tanh(py: Python<'_>, tensor: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
    tensor.dop(py, |v| v.float_unary(ferrum_core::ops::unary::FloatUnary::Tanh))
}

/// x if x >= 0, else negative_slope * x.
#[pyfunction]
#[pyo3(signature = (tensor, negative_slope = 0.01))]
pub fn leaky_relu(py: Python<'_>, tensor: PyRef<'_, PyTensor>, negative_slope: f64) -> PyResult<PyTensor> {
    tensor.dop(py, |v| v.leaky_relu(negative_slope))
}

/// x if x >= 0, else alpha * x with one alpha per channel (dim 1).
#[pyfunction]
pub fn prelu(py: Python<'_>, tensor: PyRef<'_, PyTensor>, alpha: PyRef<'_, PyTensor>) -> PyResult<PyTensor> {
    tensor.dop2(py, "prelu", &alpha, |t, a| t.prelu(a))
}

/// clamp(alpha * x + beta, 0, 1).
#[pyfunction]
#[pyo3(signature = (tensor, alpha = 0.2, beta = 0.5))]
pub fn hard_sigmoid(py: Python<'_>, tensor: PyRef<'_, PyTensor>, alpha: f64, beta: f64) -> PyResult<PyTensor> {
    tensor.dop(py, |v| v.hard_sigmoid(alpha, beta))
}

/// log(1 + exp(beta * x)) / beta.
#[pyfunction]
#[pyo3(signature = (tensor, beta = 1.0))]
pub fn softplus(py: Python<'_>, tensor: PyRef<'_, PyTensor>, beta: f64) -> PyResult<PyTensor> {
    tensor.dop(py, |v| v.softplus(beta))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    macro_rules! add {
        ($($f:ident),*) => {$( m.add_function(wrap_pyfunction!($f, m)?)?; )*};
    }
    add!(relu, gelu, log_sigmoid, silu, hard_swish, mish, softmax, log_softmax, softmin, quiet_softmax, glu, sigmoid, tanh, leaky_relu, prelu, hard_sigmoid, softplus);
    Ok(())
}
