//! Burn's module ops added with the rest of `burn::nn` (used by
//! `ferrum.functional` and the layers): 3-d convolutions, deformable
//! convolution, interpolation and `unfold4d`. All differentiable.

use ferrum_core::autodiff::Var;
use ferrum_core::ops::conv::{ConvOptions, ConvTransposeOptions};
use ferrum_core::ops::deform_conv::DeformConvOptions;
use ferrum_core::ops::interpolate::InterpolateMode;
use ferrum_core::ops::unfold4d::UnfoldOptions;
use pyo3::prelude::*;

use crate::error::argument_error;
use crate::tensor::{narrow_to, run_widened, PyTensor};

type Triple = (usize, usize, usize);

fn arr3(t: Triple) -> [usize; 3] {
    [t.0, t.1, t.2]
}

/// The tensors of one call, all on `first`'s backend, as `Var`s.
fn vars(py: Python<'_>, op: &str, first: &PyTensor, rest: &[Option<&PyTensor>]) -> PyResult<Vec<Option<Var>>> {
    for t in rest.iter().flatten() {
        first.same_backend(py, op, t)?;
    }
    Ok(std::iter::once(Some(first.to_var())).chain(rest.iter().map(|t| t.map(PyTensor::to_var))).collect())
}

/// `f` on `vars` (the first is `first`'s), widened when a kernel refuses
/// a storage dtype; the result in `first`'s dtype.
fn run(py: Python<'_>, first: &PyTensor, vars: &[Option<Var>], f: impl Fn(&[Option<Var>]) -> ferrum_core::Result<Var> + Send + Sync) -> PyResult<PyTensor> {
    let v = run_widened(py, true, vars, f)?;
    Ok(first.wrap_var(py, narrow_to(py, first.t.dtype(), v)?))
}

/// 3-d convolution of `[batch, channels_in, d, h, w]` with a weight `[channels_out, channels_in / groups, kd, kh, kw]`.
///
/// Example:
///     >>> from ferrum import functional as F
///     >>> x, w = Tensor.ones((1, 1, 2, 2, 2), device), Tensor.ones((1, 1, 2, 2, 2), device)
///     >>> F.conv3d(x, w).to_data().to_list()
///     [[[[[8.0]]]]]
#[pyfunction]
#[pyo3(signature = (x, weight, bias = None, stride = (1, 1, 1), padding = (0, 0, 0), dilation = (1, 1, 1), groups = 1))]
#[allow(clippy::too_many_arguments)]
pub fn conv3d(
    py: Python<'_>,
    x: PyRef<'_, PyTensor>,
    weight: PyRef<'_, PyTensor>,
    bias: Option<PyRef<'_, PyTensor>>,
    stride: Triple,
    padding: Triple,
    dilation: Triple,
    groups: usize,
) -> PyResult<PyTensor> {
    let v = vars(py, "conv3d", &x, &[Some(&weight), bias.as_deref()])?;
    let o = ConvOptions::new(arr3(stride), arr3(padding), arr3(dilation), groups);
    run(py, &x, &v, |v| v[0].as_ref().expect("input").conv3d(v[1].as_ref().expect("weight"), v[2].as_ref(), &o))
}

/// 3-d transposed convolution with a weight `[channels_in, channels_out / groups, kd, kh, kw]`.
///
/// Example:
///     >>> from ferrum import functional as F
///     >>> x, w = Tensor.ones((1, 1, 1, 1, 1), device), Tensor.ones((1, 2, 2, 2, 2), device)
///     >>> F.conv_transpose3d(x, w).dims()
///     (1, 2, 2, 2, 2)
#[pyfunction]
#[pyo3(signature = (x, weight, bias = None, stride = (1, 1, 1), padding = (0, 0, 0), padding_out = (0, 0, 0), dilation = (1, 1, 1), groups = 1))]
#[allow(clippy::too_many_arguments)]
pub fn conv_transpose3d(
    py: Python<'_>,
    x: PyRef<'_, PyTensor>,
    weight: PyRef<'_, PyTensor>,
    bias: Option<PyRef<'_, PyTensor>>,
    stride: Triple,
    padding: Triple,
    padding_out: Triple,
    dilation: Triple,
    groups: usize,
) -> PyResult<PyTensor> {
    let v = vars(py, "conv_transpose3d", &x, &[Some(&weight), bias.as_deref()])?;
    let o = ConvTransposeOptions { stride: arr3(stride), padding: arr3(padding), padding_out: arr3(padding_out), dilation: arr3(dilation), groups };
    run(py, &x, &v, |v| v[0].as_ref().expect("input").conv_transpose3d(v[1].as_ref().expect("weight"), v[2].as_ref(), &o))
}

/// Deformable convolution: offsets `[batch, 2 * offset_groups * kh * kw, out_h, out_w]`,
/// optional mask `[batch, offset_groups * kh * kw, out_h, out_w]`.
#[pyfunction]
#[pyo3(signature = (x, offset, weight, mask = None, bias = None, stride = (1, 1), padding = (0, 0), dilation = (1, 1), weight_groups = 1, offset_groups = 1))]
#[allow(clippy::too_many_arguments)]
pub fn deform_conv2d(
    py: Python<'_>,
    x: PyRef<'_, PyTensor>,
    offset: PyRef<'_, PyTensor>,
    weight: PyRef<'_, PyTensor>,
    mask: Option<PyRef<'_, PyTensor>>,
    bias: Option<PyRef<'_, PyTensor>>,
    stride: (usize, usize),
    padding: (usize, usize),
    dilation: (usize, usize),
    weight_groups: usize,
    offset_groups: usize,
) -> PyResult<PyTensor> {
    let v = vars(py, "deform_conv2d", &x, &[Some(&offset), Some(&weight), mask.as_deref(), bias.as_deref()])?;
    let o = DeformConvOptions { stride: [stride.0, stride.1], padding: [padding.0, padding.1], dilation: [dilation.0, dilation.1], weight_groups, offset_groups };
    run(py, &x, &v, |v| {
        let get = |i: usize| v[i].as_ref().expect("operand");
        get(0).deform_conv2d(get(1), get(2), v[3].as_ref(), v[4].as_ref(), &o)
    })
}

/// `[batch, channels, h, w]` resized to `output_size` by `mode`: "nearest", "bilinear" or "bicubic".
#[pyfunction]
pub fn interpolate(py: Python<'_>, x: PyRef<'_, PyTensor>, output_size: (usize, usize), mode: &str) -> PyResult<PyTensor> {
    let mode = match mode {
        "nearest" => InterpolateMode::Nearest,
        "bilinear" => InterpolateMode::Bilinear,
        "bicubic" => InterpolateMode::Bicubic,
        other => return Err(argument_error(py, format!("interpolate: mode must be \"nearest\", \"bilinear\" or \"bicubic\", found {other:?}"))),
    };
    run(py, &x, &[Some(x.to_var())], |v| v[0].as_ref().expect("input").interpolate([output_size.0, output_size.1], mode))
}

/// The sliding blocks of `[batch, channels, h, w]` as `[batch, channels * kh * kw, blocks]`.
///
/// Example:
///     >>> from ferrum import functional as F
///     >>> x = Tensor.arange(0, 9, device).float().reshape((1, 1, 3, 3))
///     >>> F.unfold4d(x, (2, 2)).to_data().to_list()  # 4 blocks of 2x2, one per column
///     [[[0.0, 1.0, 3.0, 4.0], [1.0, 2.0, 4.0, 5.0], [3.0, 4.0, 6.0, 7.0], [4.0, 5.0, 7.0, 8.0]]]
#[pyfunction]
#[pyo3(signature = (x, kernel_size, stride = (1, 1), padding = (0, 0), dilation = (1, 1)))]
pub fn unfold4d(
    py: Python<'_>,
    x: PyRef<'_, PyTensor>,
    kernel_size: (usize, usize),
    stride: (usize, usize),
    padding: (usize, usize),
    dilation: (usize, usize),
) -> PyResult<PyTensor> {
    let o = UnfoldOptions { stride: [stride.0, stride.1], padding: [padding.0, padding.1], dilation: [dilation.0, dilation.1] };
    run(py, &x, &[Some(x.to_var())], |v| v[0].as_ref().expect("input").unfold4d([kernel_size.0, kernel_size.1], &o))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(m, conv3d, conv_transpose3d, deform_conv2d, interpolate, unfold4d);
    Ok(())
}
