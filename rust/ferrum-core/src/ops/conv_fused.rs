//! A 2-d convolution fused with the element-wise layers that follow it in
//! inference networks: `act(relu(conv2d(x, w) * scale + shift + residual))`,
//! each part optional. Per output channel, `scale` and `shift` hold an
//! inference BatchNorm folded with the convolution's bias; `residual` is a
//! residual block's skip connection, shaped as the output.
//!
//! Untracked f32 inputs run on one kernel that applies the whole tail to
//! each output tile as it completes (ResNet-50 ran its BatchNorms, residual
//! adds and relus as separate passes over every activation: a fifth of a
//! batch-1 forward). Anything else, and every input that needs a gradient,
//! runs as the same composition of ordinary ops, so the gradients are those
//! of the unfused layers.

use std::borrow::Cow;

use crate::autodiff::Var;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::kernels::conv::{conv_forward_fused, ensure_buffers_fit, KeepPacked};
use crate::kernels::epilogue::{Activation, Epilogue};
use crate::dtype::Scalar;
use crate::ops::unary::FloatUnary;
use crate::ops::binary::BinaryOp;
use crate::ops::conv::{conv_geom, keep_of, values, ConvOptions};
use crate::tensor::Tensor;

/// The tail fused after the convolution, over tensors `V` (tensors or vars).
#[derive(Clone, Copy, Debug)]
pub struct ConvTail<'a, V> {
    /// Per output channel `[channels_out]`: multiplies the convolution.
    pub scale: Option<&'a V>,
    /// Per output channel `[channels_out]`: added after the scale.
    pub shift: Option<&'a V>,
    /// Shaped as the output: added after the shift.
    pub residual: Option<&'a V>,
    /// `max(v, 0)` after the residual (NaN stays NaN).
    pub relu: bool,
    /// Applied last (hard swish, SiLU, ... see [`Activation`]).
    pub act: Activation,
}

const OP: &str = "conv2d_fused";

/// Check the tail's operands against the convolution's output `shape`.
fn check_tail(x: &Tensor, tail: &ConvTail<'_, Tensor>, shape: &[usize]) -> Result<()> {
    for (name, v) in [("scale", tail.scale), ("shift", tail.shift), ("residual", tail.residual)] {
        let Some(v) = v else { continue };
        x.expect_same_dtype(OP, v)?;
        if name == "residual" {
            if v.shape() != shape {
                return Err(Error::shapes(OP, v.shape(), shape, "the residual must have the convolution's output shape"));
            }
        } else if v.shape() != &shape[1..2] {
            return Err(Error::shapes(OP, v.shape(), &shape[1..2], format!("the {name} needs one value per output channel ({})", shape[1])));
        }
    }
    Ok(())
}

impl Tensor {
    /// `act(relu(conv2d(x, w) * scale + shift + residual))`, each part of the
    /// tail optional (see [`ConvTail`]): input `[batch, channels_in,
    /// height, width]`, weight `[channels_out, channels_in / groups,
    /// kernel_h, kernel_w]`, output `[batch, channels_out, out_h, out_w]`.
    pub fn conv2d_fused(&self, weight: &Tensor, options: &ConvOptions<2>, tail: &ConvTail<'_, Tensor>) -> Result<Tensor> {
        fused(self, weight, options, tail, None)
    }
}

/// [`Tensor::conv2d_fused`]; with `keep`, the packed weights are kept for
/// the next call.
fn fused(x: &Tensor, weight: &Tensor, options: &ConvOptions<2>, tail: &ConvTail<'_, Tensor>, keep: Option<KeepPacked<'_>>) -> Result<Tensor> {
    let (g, shape) = conv_geom(OP, x, weight, None, options)?;
    check_tail(x, tail, &shape)?;
    if x.dtype() == DType::F32 {
        ensure_buffers_fit::<f32>(OP, shape.iter().product(), &g)?;
        let (xs, ws) = (values::<f32>(OP, x)?, values::<f32>(OP, weight)?);
        let (scale, shift, residual) = (optional(tail.scale)?, optional(tail.shift)?, optional(tail.residual)?);
        let epilogue = Epilogue { scale: scale.as_deref(), shift: shift.as_deref(), residual: residual.as_deref(), relu: tail.relu, act: tail.act };
        if let Some(y) = conv_forward_fused(&xs, &ws, epilogue, &g, keep) {
            return Tensor::from_vec(y, &shape);
        }
    }
    let constant = |v: Option<&Tensor>| v.map(|v| Var::constant(v.clone()));
    let (scale, shift, residual) = (constant(tail.scale), constant(tail.shift), constant(tail.residual));
    let tail = ConvTail { scale: scale.as_ref(), shift: shift.as_ref(), residual: residual.as_ref(), relu: tail.relu, act: tail.act };
    Ok(composed(&Var::constant(x.clone()), &Var::constant(weight.clone()), options, &tail)?.value)
}

/// The values of an optional f32 operand, borrowed when contiguous.
fn optional(v: Option<&Tensor>) -> Result<Option<Cow<'_, [f32]>>> {
    v.map(|v| values::<f32>(OP, v)).transpose()
}

/// The tail's tensors, out of their vars.
fn values_of<'a>(tail: &ConvTail<'a, Var>) -> ConvTail<'a, Tensor> {
    let value = |v: Option<&'a Var>| v.map(|v| &v.value);
    ConvTail { scale: value(tail.scale), shift: value(tail.shift), residual: value(tail.residual), relu: tail.relu, act: tail.act }
}

/// The fused op as the ops it stands for, each recorded for autodiff.
fn composed(x: &Var, weight: &Var, options: &ConvOptions<2>, tail: &ConvTail<'_, Var>) -> Result<Var> {
    let per_channel = |v: &Var| v.reshape(&[1, -1, 1, 1]);
    let mut y = x.conv2d(weight, None, options)?;
    if let Some(s) = tail.scale {
        y = y.binary(BinaryOp::Mul, &per_channel(s)?)?;
    }
    if let Some(s) = tail.shift {
        y = y.binary(BinaryOp::Add, &per_channel(s)?)?;
    }
    if let Some(r) = tail.residual {
        y = y.binary(BinaryOp::Add, r)?;
    }
    if tail.relu {
        y = y.relu()?;
    }
    activate(y, tail.act)
}

/// `act(y)` as the differentiable element-wise op it stands for.
fn activate(y: Var, act: Activation) -> Result<Var> {
    match act {
        Activation::None => Ok(y),
        Activation::Clip { low, high } => y.clamp(Scalar::Float(low.into()), Scalar::Float(high.into())),
        Activation::HardSigmoid { alpha, beta } => y.hard_sigmoid(alpha.into(), beta.into()),
        Activation::HardSwish => y.hard_swish(),
        Activation::Sigmoid => y.float_unary(FloatUnary::Sigmoid),
        Activation::Silu => y.silu(),
    }
}

impl Var {
    /// [`Tensor::conv2d_fused`], differentiable: with any input tracked it
    /// runs as the composition of the differentiable ops it fuses.
    pub fn conv2d_fused(&self, weight: &Var, options: &ConvOptions<2>, tail: &ConvTail<'_, Var>) -> Result<Var> {
        let parts = [tail.scale, tail.shift, tail.residual];
        if !self.requires_grad() && !weight.requires_grad() && parts.iter().flatten().all(|v| !v.requires_grad()) {
            return Ok(Var::constant(fused(&self.value, &weight.value, options, &values_of(tail), keep_of(weight))?));
        }
        let (_, shape) = conv_geom(OP, &self.value, &weight.value, None, options)?;
        check_tail(&self.value, &values_of(tail), &shape)?;
        composed(self, weight, options, tail)
    }
}
