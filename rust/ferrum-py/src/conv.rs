//! Convolution and pooling (Burn's `burn::tensor::module` functions), as
//! module functions the layers in `ferrum.nn.conv` and `ferrum.nn.pool`
//! call. All of them are differentiable on an autodiff backend.

use ferrum_core::autodiff::Var;
use ferrum_core::ops::conv::{ConvOptions, ConvTransposeOptions};
use ferrum_core::ops::conv_fused::ConvTail;
use ferrum_core::ops::pool::PoolOptions;
use pyo3::prelude::*;

use crate::tensor::{narrow_to, run_widened, PyTensor};

/// Input elements above which the kernel runs with the GIL released.
const GIL_RELEASE_ELEMS: usize = 1 << 15;

/// Padding of one spatial dim: the same on both sides, or (before, after).
#[derive(FromPyObject, Clone, Copy, Debug)]
pub enum Pad {
    Both(usize),
    Sides((usize, usize)),
}

impl Pad {
    pub(crate) fn sides(self) -> (usize, usize) {
        match self {
            Pad::Both(p) => (p, p),
            Pad::Sides(s) => s,
        }
    }
}

pub(crate) const NO_PAD: Pad = Pad::Both(0);

/// The options of a 2-d convolution from its Python arguments (each a
/// (height, width) pair).
pub(crate) fn conv_options2(stride: (usize, usize), padding: (Pad, Pad), dilation: (usize, usize), groups: usize) -> ConvOptions<2> {
    ConvOptions { stride: [stride.0, stride.1], padding: [padding.0.sides(), padding.1.sides()], dilation: [dilation.0, dilation.1], groups }
}

/// Run a differentiable op of an input, a weight and an optional bias.
fn call3(
    py: Python<'_>,
    name: &str,
    x: &PyTensor,
    weight: &PyTensor,
    bias: Option<&PyTensor>,
    f: impl Fn(&Var, &Var, Option<&Var>) -> ferrum_core::Result<Var> + Send + Sync,
) -> PyResult<PyTensor> {
    x.same_backend(py, name, weight)?;
    if let Some(b) = bias {
        x.same_backend(py, name, b)?;
    }
    let vars = [Some(x.to_var()), Some(weight.to_var()), bias.map(PyTensor::to_var)];
    let run = |v: &[Option<Var>]| f(v[0].as_ref().expect("input"), v[1].as_ref().expect("weight"), v[2].as_ref());
    let v = run_widened(py, x.t.numel() >= GIL_RELEASE_ELEMS, &vars, run)?;
    Ok(x.wrap_var(py, narrow_to(py, x.t.dtype(), v)?))
}

/// 1-d convolution of `[batch, channels_in, length]` with a weight
/// `[channels_out, channels_in / groups, kernel]`.
///
/// Example:
///     >>> from ferrum import functional as F
///     >>> x, w = Tensor.ones((1, 1, 4), device), Tensor.ones((1, 1, 2), device)
///     >>> F.conv1d(x, w).to_data().to_list()
///     [[[2.0, 2.0, 2.0]]]
#[pyfunction]
#[pyo3(signature = (x, weight, bias = None, stride = 1, padding = NO_PAD, dilation = 1, groups = 1))]
#[allow(clippy::too_many_arguments)]
pub fn conv1d(
    py: Python<'_>,
    x: PyRef<'_, PyTensor>,
    weight: PyRef<'_, PyTensor>,
    bias: Option<PyRef<'_, PyTensor>>,
    stride: usize,
    padding: Pad,
    dilation: usize,
    groups: usize,
) -> PyResult<PyTensor> {
    let o = ConvOptions { stride: [stride], padding: [padding.sides()], dilation: [dilation], groups };
    call3(py, "conv1d", &x, &weight, bias.as_deref(), |x, w, b| x.conv1d(w, b, &o))
}

/// 2-d convolution of `[batch, channels_in, height, width]` with a weight
/// `[channels_out, channels_in / groups, kernel_h, kernel_w]`.
///
/// Example:
///     >>> from ferrum import functional as F
///     >>> x, w = Tensor.ones((1, 1, 3, 3), device), Tensor.ones((1, 1, 2, 2), device)
///     >>> F.conv2d(x, w).to_data().to_list()
///     [[[[4.0, 4.0], [4.0, 4.0]]]]
#[pyfunction]
#[pyo3(signature = (x, weight, bias = None, stride = (1, 1), padding = (NO_PAD, NO_PAD), dilation = (1, 1), groups = 1))]
#[allow(clippy::too_many_arguments)]
pub fn conv2d(
    py: Python<'_>,
    x: PyRef<'_, PyTensor>,
    weight: PyRef<'_, PyTensor>,
    bias: Option<PyRef<'_, PyTensor>>,
    stride: (usize, usize),
    padding: (Pad, Pad),
    dilation: (usize, usize),
    groups: usize,
) -> PyResult<PyTensor> {
    let o = conv_options2(stride, padding, dilation, groups);
    let out = call3(py, "conv2d", &x, &weight, bias.as_deref(), |x, w, b| x.conv2d(w, b, &o))?;
    let ints = |v: &[usize]| ferrum_core::plan::Attr::Ints(v.iter().map(|&d| d as i64).collect());
    let pads = [o.padding[0].0, o.padding[0].1, o.padding[1].0, o.padding[1].1];
    let attrs = || vec![("stride", ints(&o.stride)), ("padding", ints(&pads)), ("dilation", ints(&o.dilation)), ("groups", ferrum_core::plan::Attr::Int(o.groups as i64))];
    crate::trace::note("conv2d", attrs, &[Some(&x), Some(&weight), bias.as_deref()], &[&out]);
    Ok(out)
}

/// `relu(conv2d(x, weight) * scale + shift + residual)` in one pass over the
/// output, each part of the tail optional: `scale` and `shift` hold one
/// value per output channel (an inference BatchNorm folded with the
/// convolution's bias), `residual` has the output's shape (a residual
/// block's skip connection), and `relu` ends it with `max(v, 0)`. On
/// tensors that need no gradient the tail is applied to each output tile as
/// it is computed; with gradients it runs as the separate differentiable
/// ops, with the same result.
///
/// Example:
///     >>> from ferrum import functional as F
///     >>> x, w = Tensor.ones((1, 1, 3, 3), device), Tensor.ones((1, 1, 2, 2), device)
///     >>> scale, shift = Tensor.from_floats([0.5], device), Tensor.from_floats([-3.0], device)
///     >>> F.conv2d_fused(x, w, scale=scale, shift=shift, relu=True).to_data().to_list()
///     [[[[0.0, 0.0], [0.0, 0.0]]]]
///     >>> F.conv2d_fused(x, w, shift=shift, residual=Tensor.ones((1, 1, 2, 2), device)).to_data().to_list()
///     [[[[2.0, 2.0], [2.0, 2.0]]]]
#[pyfunction]
#[pyo3(signature = (x, weight, stride = (1, 1), padding = (NO_PAD, NO_PAD), dilation = (1, 1), groups = 1, *, scale = None, shift = None, residual = None, relu = false))]
#[allow(clippy::too_many_arguments)]
pub fn conv2d_fused(
    py: Python<'_>,
    x: PyRef<'_, PyTensor>,
    weight: PyRef<'_, PyTensor>,
    stride: (usize, usize),
    padding: (Pad, Pad),
    dilation: (usize, usize),
    groups: usize,
    scale: Option<PyRef<'_, PyTensor>>,
    shift: Option<PyRef<'_, PyTensor>>,
    residual: Option<PyRef<'_, PyTensor>>,
    relu: bool,
) -> PyResult<PyTensor> {
    let name = "conv2d_fused";
    let tail = [&scale, &shift, &residual];
    for t in std::iter::once(&weight).chain(tail.into_iter().flatten()) {
        x.same_backend(py, name, t)?;
    }
    let o = conv_options2(stride, padding, dilation, groups);
    let var = |t: &Option<PyRef<'_, PyTensor>>| t.as_deref().map(PyTensor::to_var);
    let vars = [Some(x.to_var()), Some(weight.to_var()), var(&scale), var(&shift), var(&residual)];
    let run = |v: &[Option<Var>]| {
        let tail = ConvTail { scale: v[2].as_ref(), shift: v[3].as_ref(), residual: v[4].as_ref(), relu, act: Default::default() };
        v[0].as_ref().expect("input").conv2d_fused(v[1].as_ref().expect("weight"), &o, &tail)
    };
    let v = run_widened(py, x.t.numel() >= GIL_RELEASE_ELEMS, &vars, run)?;
    Ok(x.wrap_var(py, narrow_to(py, x.t.dtype(), v)?))
}

/// 1-d transposed convolution with a weight `[channels_in, channels_out / groups, kernel]`.
///
/// Example:
///     >>> from ferrum import functional as F
///     >>> x, w = Tensor.ones((1, 1, 2), device), Tensor.ones((1, 1, 2), device)
///     >>> F.conv_transpose1d(x, w).to_data().to_list()
///     [[[1.0, 2.0, 1.0]]]
#[pyfunction]
#[pyo3(signature = (x, weight, bias = None, stride = 1, padding = 0, padding_out = 0, dilation = 1, groups = 1))]
#[allow(clippy::too_many_arguments)]
pub fn conv_transpose1d(
    py: Python<'_>,
    x: PyRef<'_, PyTensor>,
    weight: PyRef<'_, PyTensor>,
    bias: Option<PyRef<'_, PyTensor>>,
    stride: usize,
    padding: usize,
    padding_out: usize,
    dilation: usize,
    groups: usize,
) -> PyResult<PyTensor> {
    let o = ConvTransposeOptions { stride: [stride], padding: [padding], padding_out: [padding_out], dilation: [dilation], groups };
    call3(py, "conv_transpose1d", &x, &weight, bias.as_deref(), |x, w, b| x.conv_transpose1d(w, b, &o))
}

/// 2-d transposed convolution with a weight `[channels_in, channels_out / groups, kernel_h, kernel_w]`.
///
/// Example:
///     >>> from ferrum import functional as F
///     >>> x, w = Tensor.ones((1, 1, 2, 2), device), Tensor.ones((1, 1, 2, 2), device)
///     >>> F.conv_transpose2d(x, w).to_data().to_list()
///     [[[[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]]]
#[pyfunction]
#[pyo3(signature = (x, weight, bias = None, stride = (1, 1), padding = (0, 0), padding_out = (0, 0), dilation = (1, 1), groups = 1))]
#[allow(clippy::too_many_arguments)]
pub fn conv_transpose2d(
    py: Python<'_>,
    x: PyRef<'_, PyTensor>,
    weight: PyRef<'_, PyTensor>,
    bias: Option<PyRef<'_, PyTensor>>,
    stride: (usize, usize),
    padding: (usize, usize),
    padding_out: (usize, usize),
    dilation: (usize, usize),
    groups: usize,
) -> PyResult<PyTensor> {
    let o = ConvTransposeOptions {
        stride: [stride.0, stride.1],
        padding: [padding.0, padding.1],
        padding_out: [padding_out.0, padding_out.1],
        dilation: [dilation.0, dilation.1],
        groups,
    };
    call3(py, "conv_transpose2d", &x, &weight, bias.as_deref(), |x, w, b| x.conv_transpose2d(w, b, &o))
}

fn pool1d(kernel: usize, stride: Option<usize>, padding: Pad, dilation: usize, ceil_mode: bool) -> PoolOptions<1> {
    PoolOptions { kernel: [kernel], stride: [stride.unwrap_or(kernel)], padding: [padding.sides()], dilation: [dilation], ceil_mode }
}

fn pool2d(kernel: (usize, usize), stride: Option<(usize, usize)>, padding: (Pad, Pad), dilation: (usize, usize), ceil_mode: bool) -> PoolOptions<2> {
    let s = stride.unwrap_or(kernel);
    PoolOptions { kernel: [kernel.0, kernel.1], stride: [s.0, s.1], padding: [padding.0.sides(), padding.1.sides()], dilation: [dilation.0, dilation.1], ceil_mode }
}

/// A differentiable op that also returns an untracked Int tensor.
fn with_indices(
    py: Python<'_>,
    x: &PyTensor,
    f: impl Fn(&Var) -> ferrum_core::Result<(Var, ferrum_core::Tensor)> + Send + Sync,
) -> PyResult<(PyTensor, PyTensor)> {
    let run = |v: &[Option<Var>]| f(v[0].as_ref().expect("input"));
    let (v, idx) = run_widened(py, x.t.numel() >= GIL_RELEASE_ELEMS, &[Some(x.to_var())], run)?;
    Ok((x.wrap_var(py, narrow_to(py, x.t.dtype(), v)?), x.wrap(py, idx)))
}

/// Max over windows of `[batch, channels, length]`; the stride defaults to the kernel size.
///
/// Example:
///     >>> from ferrum import functional as F
///     >>> x = Tensor.from_data([[[1.0, 3.0, 2.0, 4.0]]], device)
///     >>> F.max_pool1d(x, 2).to_data().to_list()
///     [[[3.0, 4.0]]]
#[pyfunction]
#[pyo3(signature = (x, kernel_size, stride = None, padding = NO_PAD, dilation = 1, ceil_mode = false))]
pub fn max_pool1d(py: Python<'_>, x: PyRef<'_, PyTensor>, kernel_size: usize, stride: Option<usize>, padding: Pad, dilation: usize, ceil_mode: bool) -> PyResult<PyTensor> {
    let o = pool1d(kernel_size, stride, padding, dilation, ceil_mode);
    x.dop(py, |v| v.max_pool1d(&o))
}

/// `max_pool1d` and the Int position of each maximum within its row.
///
/// Example:
///     >>> from ferrum import functional as F
///     >>> x = Tensor.from_data([[[1.0, 3.0, 2.0, 4.0]]], device)
///     >>> values, indices = F.max_pool1d_with_indices(x, 2)
///     >>> indices.to_data().to_list()
///     [[[1, 3]]]
#[pyfunction]
#[pyo3(signature = (x, kernel_size, stride = None, padding = NO_PAD, dilation = 1, ceil_mode = false))]
pub fn max_pool1d_with_indices(
    py: Python<'_>,
    x: PyRef<'_, PyTensor>,
    kernel_size: usize,
    stride: Option<usize>,
    padding: Pad,
    dilation: usize,
    ceil_mode: bool,
) -> PyResult<(PyTensor, PyTensor)> {
    let o = pool1d(kernel_size, stride, padding, dilation, ceil_mode);
    with_indices(py, &x, |v| v.max_pool1d_with_indices(&o))
}

/// Max over windows of `[batch, channels, height, width]`; the stride defaults to the kernel size.
///
/// Example:
///     >>> from ferrum import functional as F
///     >>> x = Tensor.arange(0, 16, device).float().reshape((1, 1, 4, 4))
///     >>> F.max_pool2d(x, (2, 2)).to_data().to_list()
///     [[[[5.0, 7.0], [13.0, 15.0]]]]
#[pyfunction]
#[pyo3(signature = (x, kernel_size, stride = None, padding = (NO_PAD, NO_PAD), dilation = (1, 1), ceil_mode = false))]
pub fn max_pool2d(
    py: Python<'_>,
    x: PyRef<'_, PyTensor>,
    kernel_size: (usize, usize),
    stride: Option<(usize, usize)>,
    padding: (Pad, Pad),
    dilation: (usize, usize),
    ceil_mode: bool,
) -> PyResult<PyTensor> {
    let o = pool2d(kernel_size, stride, padding, dilation, ceil_mode);
    x.dop(py, |v| v.max_pool2d(&o))
}

/// `max_pool2d` and the Int position (`h * width + w`) of each maximum within its plane.
///
/// Example:
///     >>> from ferrum import functional as F
///     >>> x = Tensor.arange(0, 16, device).float().reshape((1, 1, 4, 4))
///     >>> values, indices = F.max_pool2d_with_indices(x, (2, 2))
///     >>> indices.to_data().to_list()
///     [[[[5, 7], [13, 15]]]]
#[pyfunction]
#[pyo3(signature = (x, kernel_size, stride = None, padding = (NO_PAD, NO_PAD), dilation = (1, 1), ceil_mode = false))]
pub fn max_pool2d_with_indices(
    py: Python<'_>,
    x: PyRef<'_, PyTensor>,
    kernel_size: (usize, usize),
    stride: Option<(usize, usize)>,
    padding: (Pad, Pad),
    dilation: (usize, usize),
    ceil_mode: bool,
) -> PyResult<(PyTensor, PyTensor)> {
    let o = pool2d(kernel_size, stride, padding, dilation, ceil_mode);
    with_indices(py, &x, |v| v.max_pool2d_with_indices(&o))
}

/// Mean over windows of `[batch, channels, length]`.
///
/// Example:
///     >>> from ferrum import functional as F
///     >>> x = Tensor.from_data([[[1.0, 3.0, 2.0, 4.0]]], device)
///     >>> F.avg_pool1d(x, 2).to_data().to_list()
///     [[[2.0, 3.0]]]
#[pyfunction]
#[pyo3(signature = (x, kernel_size, stride = None, padding = NO_PAD, count_include_pad = true, ceil_mode = false))]
pub fn avg_pool1d(
    py: Python<'_>,
    x: PyRef<'_, PyTensor>,
    kernel_size: usize,
    stride: Option<usize>,
    padding: Pad,
    count_include_pad: bool,
    ceil_mode: bool,
) -> PyResult<PyTensor> {
    let o = pool1d(kernel_size, stride, padding, 1, ceil_mode);
    x.dop(py, |v| v.avg_pool1d(&o, count_include_pad))
}

/// Mean over windows of `[batch, channels, height, width]`.
///
/// Example:
///     >>> from ferrum import functional as F
///     >>> x = Tensor.arange(0, 16, device).float().reshape((1, 1, 4, 4))
///     >>> F.avg_pool2d(x, (2, 2)).to_data().to_list()
///     [[[[2.5, 4.5], [10.5, 12.5]]]]
#[pyfunction]
#[pyo3(signature = (x, kernel_size, stride = None, padding = (NO_PAD, NO_PAD), count_include_pad = true, ceil_mode = false))]
pub fn avg_pool2d(
    py: Python<'_>,
    x: PyRef<'_, PyTensor>,
    kernel_size: (usize, usize),
    stride: Option<(usize, usize)>,
    padding: (Pad, Pad),
    count_include_pad: bool,
    ceil_mode: bool,
) -> PyResult<PyTensor> {
    let o = pool2d(kernel_size, stride, padding, (1, 1), ceil_mode);
    x.dop(py, |v| v.avg_pool2d(&o, count_include_pad))
}

/// Mean over `output_size` near-equal windows covering the length.
///
/// Example:
///     >>> from ferrum import functional as F
///     >>> x = Tensor.from_data([[[1.0, 3.0, 2.0, 4.0]]], device)
///     >>> F.adaptive_avg_pool1d(x, 2).to_data().to_list()
///     [[[2.0, 3.0]]]
#[pyfunction]
pub fn adaptive_avg_pool1d(py: Python<'_>, x: PyRef<'_, PyTensor>, output_size: usize) -> PyResult<PyTensor> {
    x.dop(py, |v| v.adaptive_avg_pool1d(output_size))
}

/// Mean over an `output_size` grid of near-equal windows covering the plane.
///
/// Example:
///     >>> from ferrum import functional as F
///     >>> x = Tensor.arange(0, 16, device).float().reshape((1, 1, 4, 4))
///     >>> F.adaptive_avg_pool2d(x, (1, 1)).to_data().to_list()
///     [[[[7.5]]]]
#[pyfunction]
pub fn adaptive_avg_pool2d(py: Python<'_>, x: PyRef<'_, PyTensor>, output_size: (usize, usize)) -> PyResult<PyTensor> {
    x.dop(py, |v| v.adaptive_avg_pool2d([output_size.0, output_size.1]))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(
        m,
        conv1d, conv2d, conv2d_fused, conv_transpose1d, conv_transpose2d, max_pool1d, max_pool1d_with_indices,
        max_pool2d, max_pool2d_with_indices, avg_pool1d, avg_pool2d, adaptive_avg_pool1d, adaptive_avg_pool2d,
    );
    Ok(())
}
