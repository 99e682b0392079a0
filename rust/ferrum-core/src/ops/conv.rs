//! Convolution and transposed convolution, 1-D and 2-D, with stride,
//! per-side zero padding, dilation and groups; forward and backward.
//!
//! Layouts follow Burn: input `[batch, channels_in, spatial...]`; conv weight
//! `[channels_out, channels_in / groups, kernel...]`; transposed-conv weight
//! `[channels_in, channels_out / groups, kernel...]`; bias `[channels_out]`.
//! Everything runs on the 2-D kernels of `crate::kernels::conv` (1-D as
//! height 1). A transposed convolution is the input gradient of the
//! convolution that maps its output back to its input, so it shares those
//! kernels with the roles of input and output swapped.

use std::borrow::Cow;

use crate::autodiff::{record, FnBackward, Saved, Var};
use crate::dtype::Kind;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::dtype::DType;
use crate::kernels::conv::{add_channel_bias, channel_sums, conv_backward_input, conv_backward_weight, conv_forward, KeepPacked};
use crate::storage::Storage;
use crate::kernels::copy::contiguous_values;
use crate::kernels::conv_half;
use crate::kernels::im2col::ConvGeom;
use crate::shape::{checked_numel, try_filled};
use crate::tensor::Tensor;
use crate::with_float;

/// Options of an `N`-d convolution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvOptions<const N: usize> {
    pub stride: [usize; N],
    /// Zero padding (before, after) of each spatial dim.
    pub padding: [(usize, usize); N],
    pub dilation: [usize; N],
    pub groups: usize,
}

impl<const N: usize> ConvOptions<N> {
    /// Burn's `ConvOptions`: the same padding on both sides of each dim.
    pub fn new(stride: [usize; N], padding: [usize; N], dilation: [usize; N], groups: usize) -> Self {
        ConvOptions { stride, padding: padding.map(|p| (p, p)), dilation, groups }
    }
}

impl<const N: usize> Default for ConvOptions<N> {
    fn default() -> Self {
        ConvOptions::new([1; N], [0; N], [1; N], 1)
    }
}

/// Options of an `N`-d transposed convolution (Burn's `ConvTransposeOptions`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvTransposeOptions<const N: usize> {
    pub stride: [usize; N],
    /// Padding removed from both sides of each dim of the output.
    pub padding: [usize; N],
    /// Extra size added at the end of each dim of the output.
    pub padding_out: [usize; N],
    pub dilation: [usize; N],
    pub groups: usize,
}

impl<const N: usize> Default for ConvTransposeOptions<N> {
    fn default() -> Self {
        ConvTransposeOptions { stride: [1; N], padding: [0; N], padding_out: [0; N], dilation: [1; N], groups: 1 }
    }
}

/// An `N`-d option as its 2-D form: 1-D runs as height 1 with `fill`.
fn lift<const N: usize, V: Copy>(a: [V; N], fill: V) -> [V; 2] {
    if N == 1 {
        [fill, a[0]]
    } else {
        [a[0], a[1]]
    }
}

/// The elements of a tensor in row-major order, borrowed when contiguous.
pub(crate) fn values<'a, T: Element>(op: &'static str, t: &'a Tensor) -> Result<Cow<'a, [T]>> {
    if let Some(s) = t.as_slice::<T>() {
        return Ok(Cow::Borrowed(s));
    }
    if t.layout().strides.iter().all(|&s| s == 0) {
        // One value seen everywhere, as the gradient of `sum()` arrives: a
        // fill is far cheaper than walking the view.
        return Ok(Cow::Owned(try_filled(op, t.numel(), t.buffer::<T>()[t.layout().offset])?));
    }
    contiguous_values(op, t)
}

/// `t` laid out contiguously, so the several gradients read from it
/// gather a strided view only once.
fn dense(op: &'static str, t: Tensor) -> Result<Tensor> {
    if t.is_contiguous() {
        return Ok(t);
    }
    with_float!(op, t.dtype(), T => Tensor::from_vec(values::<T>(op, &t)?.into_owned(), t.shape()))
}

/// Check kinds, dtypes and ranks shared by every convolution.
pub(crate) fn check_operands(op: &'static str, x: &Tensor, w: &Tensor, bias: Option<&Tensor>, n: usize) -> Result<()> {
    x.expect_kind(op, Kind::Float)?;
    x.expect_same_dtype(op, w)?;
    x.expect_rank(op, n + 2)?;
    w.expect_rank(op, n + 2)?;
    if let Some(b) = bias {
        x.expect_same_dtype(op, b)?;
        b.expect_rank(op, 1)?;
    }
    Ok(())
}

pub(crate) fn check_positive(op: &'static str, name: &str, values: &[usize]) -> Result<()> {
    if values.contains(&0) {
        return Err(Error::invalid(op, format!("{name} must be at least 1 in every dim, found {values:?}")));
    }
    Ok(())
}

pub(crate) fn check_bias(op: &'static str, bias: Option<&Tensor>, channels: usize) -> Result<()> {
    match bias {
        Some(b) if b.shape() != [channels] => Err(Error::shapes(op, b.shape(), &[channels], format!("the bias needs one value per output channel ({channels})"))),
        _ => Ok(()),
    }
}

/// The checks of `conv(x, w)` for any number of spatial dims: operands,
/// positive stride, dilation and kernel, groups, the weight's and the
/// bias's channels. Returns channels_out.
pub(crate) fn check_conv<const N: usize>(op: &'static str, x: &Tensor, w: &Tensor, bias: Option<&Tensor>, o: &ConvOptions<N>) -> Result<usize> {
    check_operands(op, x, w, bias, N)?;
    check_positive(op, "stride", &o.stride)?;
    check_positive(op, "dilation", &o.dilation)?;
    let (xs, ws) = (x.shape(), w.shape());
    check_positive(op, "kernel size", &ws[2..])?;
    let (groups, c_in, c_out) = (o.groups, xs[1], ws[0]);
    if groups == 0 || c_in % groups != 0 || c_out % groups != 0 {
        return Err(Error::invalid(op, format!("groups ({groups}) must divide channels_in ({c_in}) and channels_out ({c_out})")));
    }
    if ws[1] * groups != c_in {
        return Err(Error::shapes(op, xs, ws, format!("the weight takes {} input channels per group x {groups} groups, the input has {c_in}", ws[1])));
    }
    check_bias(op, bias, c_out)?;
    Ok(c_out)
}

/// The geometry of `conv(x, w)` and the output shape.
pub(crate) fn conv_geom<const N: usize>(op: &'static str, x: &Tensor, w: &Tensor, bias: Option<&Tensor>, o: &ConvOptions<N>) -> Result<(ConvGeom, Vec<usize>)> {
    let c_out = check_conv(op, x, w, bias, o)?;
    let (xs, ws, groups, c_in) = (x.shape(), w.shape(), o.groups, x.shape()[1]);
    let mut out = vec![xs[0], c_out];
    for d in 0..N {
        let (n, k) = (xs[2 + d], ws[2 + d]);
        let (before, after) = o.padding[d];
        let span = o.dilation[d] * (k - 1) + 1;
        if n + before + after < span {
            return Err(Error::shapes(
                op,
                xs,
                ws,
                format!("spatial dim {d} of size {n} padded by ({before}, {after}) is smaller than the kernel ({k}, dilation {}: span {span})", o.dilation[d]),
            ));
        }
        out.push((n + before + after - span) / o.stride[d] + 1);
    }
    let sp = |s: &[usize]| lift::<N, usize>(s.try_into().expect("N spatial dims"), 1);
    let ([h, wd], [kh, kw], [oh, ow]) = (sp(&xs[2..]), sp(&ws[2..]), sp(&out[2..]));
    let g = ConvGeom {
        batch: xs[0],
        c_in,
        h,
        w: wd,
        c_out,
        oh,
        ow,
        kh,
        kw,
        stride: lift(o.stride, 1),
        pad: lift(o.padding.map(|p| p.0), 0),
        dilation: lift(o.dilation, 1),
        groups,
    };
    // The kernels size their buffers from this shape: an element count
    // that overflows is refused here rather than wrapping there.
    checked_numel(op, &out, x.dtype().size_in_bytes())?;
    Ok((g, out))
}

/// The checks of a transposed convolution for any number of spatial dims
/// and its output shape `[batch, channels_out, size...]`, each size
/// `(n - 1) * stride + dilation * (k - 1) + padding_out + 1 - 2 * padding`.
pub(crate) fn transpose_shape<const N: usize>(op: &'static str, x: &Tensor, w: &Tensor, bias: Option<&Tensor>, o: &ConvTransposeOptions<N>) -> Result<Vec<usize>> {
    check_operands(op, x, w, bias, N)?;
    check_positive(op, "stride", &o.stride)?;
    check_positive(op, "dilation", &o.dilation)?;
    let (xs, ws) = (x.shape(), w.shape());
    check_positive(op, "kernel size", &ws[2..])?;
    let (groups, c_in) = (o.groups, xs[1]);
    if groups == 0 || c_in % groups != 0 {
        return Err(Error::invalid(op, format!("groups ({groups}) must divide channels_in ({c_in})")));
    }
    if ws[0] != c_in {
        return Err(Error::shapes(op, xs, ws, format!("the weight's dim 0 must match channels_in ({c_in}), found {}", ws[0])));
    }
    let c_out = ws[1] * groups;
    check_bias(op, bias, c_out)?;
    let mut out = vec![xs[0], c_out];
    for d in 0..N {
        let (n, k, s, dil, p, po) = (xs[2 + d], ws[2 + d], o.stride[d], o.dilation[d], o.padding[d], o.padding_out[d]);
        if po >= s && po >= dil {
            return Err(Error::invalid(op, format!("padding_out ({po}) must be smaller than the stride ({s}) or the dilation ({dil}) in dim {d}")));
        }
        let full = (n.max(1) - 1) * s + dil * (k - 1) + po + 1;
        if n == 0 || full <= 2 * p {
            return Err(Error::shapes(op, xs, ws, format!("spatial dim {d} of size {n} with padding {p} gives an empty output")));
        }
        out.push(full - 2 * p);
    }
    Ok(out)
}

/// The geometry of the convolution whose input gradient is
/// `conv_transpose(x, w)`: its input is the transposed conv's output, its
/// output is `x`. Returns it with the transposed conv's output shape.
fn transpose_geom<const N: usize>(op: &'static str, x: &Tensor, w: &Tensor, bias: Option<&Tensor>, o: &ConvTransposeOptions<N>) -> Result<(ConvGeom, Vec<usize>)> {
    let out = transpose_shape(op, x, w, bias, o)?;
    let (xs, ws, groups, c_in, c_out) = (x.shape(), w.shape(), o.groups, x.shape()[1], out[1]);
    let sp = |s: &[usize]| lift::<N, usize>(s.try_into().expect("N spatial dims"), 1);
    let ([h, wd], [kh, kw], [oh, ow]) = (sp(&out[2..]), sp(&ws[2..]), sp(&xs[2..]));
    let g = ConvGeom {
        batch: xs[0],
        c_in: c_out,
        h,
        w: wd,
        c_out: c_in,
        oh,
        ow,
        kh,
        kw,
        stride: lift(o.stride, 1),
        pad: lift(o.padding, 0),
        dilation: lift(o.dilation, 1),
        groups,
    };
    checked_numel(op, &out, x.dtype().size_in_bytes())?;
    Ok((g, out))
}

/// The weights' buffer when their packing may be kept between calls: f32,
/// contiguous, and no gradient will change them, nor the producer of
/// foreign memory (which may write to it between calls).
pub(crate) fn keep_of(w: &Var) -> Option<KeepPacked<'_>> {
    match w.value.storage() {
        Storage::F32(buffer) if !w.requires_grad() && w.value.is_contiguous() && !buffer.is_foreign() => {
            Some(KeepPacked { buffer, offset: w.value.layout().offset })
        }
        _ => None,
    }
}

/// `Some($body)` with `$T` the element type of a bf16 or f16 `$dtype`,
/// `None` for any other: half convolutions run on their own kernels
/// (`conv_half`), in their format, instead of widened to f32.
macro_rules! with_half {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            DType::BF16 => {
                type $T = half::bf16;
                Some($body)
            }
            DType::F16 => {
                type $T = half::f16;
                Some($body)
            }
            _ => None,
        }
    };
}

/// `conv(x, w) + bias` with geometry `g`, shaped `shape`; with `keep`, the
/// packed weights are kept for the next call.
fn forward(op: &'static str, x: &Tensor, w: &Tensor, bias: Option<&Tensor>, g: &ConvGeom, shape: &[usize], keep: Option<KeepPacked<'_>>) -> Result<Tensor> {
    if let Some(y) = with_half!(x.dtype(), T => {
        let b = bias.map(|b| values::<T>(op, b)).transpose()?;
        Tensor::from_vec(conv_half::forward::<T>(op, &values::<T>(op, x)?, &values::<T>(op, w)?, b.as_deref(), g)?, shape)
    }) {
        return y;
    }
    with_float!(op, x.dtype(), T => {
        let b = bias.map(|b| values::<T>(op, b)).transpose()?;
        Tensor::from_vec(conv_forward::<T>(op, &values::<T>(op, x)?, &values::<T>(op, w)?, b.as_deref(), g, keep)?, shape)
    })
}

/// Gradient of `conv(x, w)` with respect to `x` (shaped `shape`), from `gy`;
/// also the forward of a transposed convolution.
fn input_grad(op: &'static str, gy: &Tensor, w: &Tensor, bias: Option<&Tensor>, g: &ConvGeom, shape: &[usize]) -> Result<Tensor> {
    if let Some(gx) = with_half!(gy.dtype(), T => {
        let b = bias.map(|b| values::<T>(op, b)).transpose()?;
        Tensor::from_vec(conv_half::backward_input::<T>(op, &values::<T>(op, gy)?, &values::<T>(op, w)?, b.as_deref(), g)?, shape)
    }) {
        return gx;
    }
    with_float!(op, gy.dtype(), T => {
        let mut gx = conv_backward_input::<T>(op, &values::<T>(op, gy)?, &values::<T>(op, w)?, g)?;
        if let Some(b) = bias {
            add_channel_bias(&mut gx, &values::<T>(op, b)?, g.hw());
        }
        Tensor::from_vec(gx, shape)
    })
}

/// Gradient of `conv(x, w)` with respect to `w` (shaped `shape`), from `gy`.
fn weight_grad(op: &'static str, x: &Tensor, gy: &Tensor, g: &ConvGeom, shape: &[usize]) -> Result<Tensor> {
    if let Some(gw) = with_half!(x.dtype(), T => Tensor::from_vec(conv_half::backward_weight::<T>(op, &values::<T>(op, x)?, &values::<T>(op, gy)?, g)?, shape)) {
        return gw;
    }
    with_float!(op, x.dtype(), T => Tensor::from_vec(conv_backward_weight::<T>(op, &values::<T>(op, x)?, &values::<T>(op, gy)?, g)?, shape))
}

/// Per-channel sums of `[batch, channels, ...]`: a bias gradient.
fn bias_grad(op: &'static str, gy: &Tensor, channels: usize) -> Result<Tensor> {
    let per = gy.numel() / (gy.shape()[0] * channels).max(1);
    if let Some(gb) = with_half!(gy.dtype(), T => Tensor::from_vec(conv_half::channel_sums::<T>(&values::<T>(op, gy)?, gy.shape()[0], channels, per), &[channels])) {
        return gb;
    }
    with_float!(op, gy.dtype(), T => Tensor::from_vec(channel_sums::<T>(&values::<T>(op, gy)?, gy.shape()[0], channels, per), &[channels]))
}

impl Tensor {
    /// 1-d convolution: input `[batch, channels_in, length]`, weight
    /// `[channels_out, channels_in / groups, kernel]`.
    pub fn conv1d(&self, weight: &Tensor, bias: Option<&Tensor>, options: &ConvOptions<1>) -> Result<Tensor> {
        let (g, shape) = conv_geom("conv1d", self, weight, bias, options)?;
        forward("conv1d", self, weight, bias, &g, &shape, None)
    }

    /// 2-d convolution: input `[batch, channels_in, height, width]`, weight
    /// `[channels_out, channels_in / groups, kernel_h, kernel_w]`.
    pub fn conv2d(&self, weight: &Tensor, bias: Option<&Tensor>, options: &ConvOptions<2>) -> Result<Tensor> {
        let (g, shape) = conv_geom("conv2d", self, weight, bias, options)?;
        forward("conv2d", self, weight, bias, &g, &shape, None)
    }

    /// 1-d transposed convolution: weight `[channels_in, channels_out / groups, kernel]`.
    pub fn conv_transpose1d(&self, weight: &Tensor, bias: Option<&Tensor>, options: &ConvTransposeOptions<1>) -> Result<Tensor> {
        let (g, shape) = transpose_geom("conv_transpose1d", self, weight, bias, options)?;
        input_grad("conv_transpose1d", self, weight, bias, &g, &shape)
    }

    /// 2-d transposed convolution: weight `[channels_in, channels_out / groups, kernel_h, kernel_w]`.
    pub fn conv_transpose2d(&self, weight: &Tensor, bias: Option<&Tensor>, options: &ConvTransposeOptions<2>) -> Result<Tensor> {
        let (g, shape) = transpose_geom("conv_transpose2d", self, weight, bias, options)?;
        input_grad("conv_transpose2d", self, weight, bias, &g, &shape)
    }
}

/// The operands a convolution's backward reads, kept only for the
/// gradients that will be asked for.
struct Kept {
    x: Option<Saved>,
    w: Option<Saved>,
    x_shape: Vec<usize>,
    w_shape: Vec<usize>,
}

impl Kept {
    fn new(x: &Var, w: &Var) -> Kept {
        Kept {
            // x feeds the weight gradient, w the input gradient.
            x: w.requires_grad().then(|| x.saved()),
            w: x.requires_grad().then(|| w.saved()),
            x_shape: x.value.shape().to_vec(),
            w_shape: w.value.shape().to_vec(),
        }
    }
}

pub(crate) fn operands<'a>(x: &'a Var, w: &'a Var, bias: Option<&'a Var>) -> Vec<&'a Var> {
    let mut v = vec![x, w];
    v.extend(bias);
    v
}

/// Record a convolution with geometry `g` (gradients `col2im(w^T gy)`,
/// `gy im2col(x)^T` and the per-channel sum of `gy`), or with `transposed`
/// the transposed convolution, its adjoint: then the input gradient is
/// `conv(gy, w)` and the weight gradient the conv weight gradient with
/// `gy` as the input and `x` as the output gradient.
fn record_conv(op: &'static str, y: Tensor, x: &Var, w: &Var, bias: Option<&Var>, g: ConvGeom, transposed: bool) -> Var {
    let s = Kept::new(x, w);
    record(y, &operands(x, w, bias), move || {
        FnBackward::new(op, move |gy, needs| {
            let gy = dense(op, gy)?;
            let mut grads = vec![None, None];
            if let (true, Some(w)) = (needs[0], &s.w) {
                let w = w.get()?;
                grads[0] = Some(if transposed { forward(op, &gy, &w, None, &g, &s.x_shape, None)? } else { input_grad(op, &gy, &w, None, &g, &s.x_shape)? });
            }
            if let (true, Some(x)) = (needs[1], &s.x) {
                let x = x.get()?;
                grads[1] = Some(if transposed { weight_grad(op, &gy, &x, &g, &s.w_shape)? } else { weight_grad(op, &x, &gy, &g, &s.w_shape)? });
            }
            if needs.len() > 2 {
                let channels = if transposed { g.c_in } else { g.c_out };
                grads.push(if needs[2] { Some(bias_grad(op, &gy, channels)?) } else { None });
            }
            Ok(grads)
        })
    })
}

fn values_of(bias: Option<&Var>) -> Option<&Tensor> {
    bias.map(|b| &b.value)
}

impl Var {
    pub fn conv1d(&self, weight: &Var, bias: Option<&Var>, options: &ConvOptions<1>) -> Result<Var> {
        let op = "conv1d";
        let (g, shape) = conv_geom(op, &self.value, &weight.value, values_of(bias), options)?;
        let y = forward(op, &self.value, &weight.value, values_of(bias), &g, &shape, keep_of(weight))?;
        Ok(record_conv(op, y, self, weight, bias, g, false))
    }

    pub fn conv2d(&self, weight: &Var, bias: Option<&Var>, options: &ConvOptions<2>) -> Result<Var> {
        let op = "conv2d";
        let (g, shape) = conv_geom(op, &self.value, &weight.value, values_of(bias), options)?;
        let y = forward(op, &self.value, &weight.value, values_of(bias), &g, &shape, keep_of(weight))?;
        Ok(record_conv(op, y, self, weight, bias, g, false))
    }

    pub fn conv_transpose1d(&self, weight: &Var, bias: Option<&Var>, options: &ConvTransposeOptions<1>) -> Result<Var> {
        let op = "conv_transpose1d";
        let (g, shape) = transpose_geom(op, &self.value, &weight.value, values_of(bias), options)?;
        let y = input_grad(op, &self.value, &weight.value, values_of(bias), &g, &shape)?;
        Ok(record_conv(op, y, self, weight, bias, g, true))
    }

    pub fn conv_transpose2d(&self, weight: &Var, bias: Option<&Var>, options: &ConvTransposeOptions<2>) -> Result<Var> {
        let op = "conv_transpose2d";
        let (g, shape) = transpose_geom(op, &self.value, &weight.value, values_of(bias), options)?;
        let y = input_grad(op, &self.value, &weight.value, values_of(bias), &g, &shape)?;
        Ok(record_conv(op, y, self, weight, bias, g, true))
    }
}

#[cfg(test)]
#[path = "conv_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "conv_half_tests.rs"]
mod half_tests;
