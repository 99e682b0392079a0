//! Convolutions (plain, and with a fused per-channel scale, shift, residual
//! add, relu and activation) and 2-d pooling.

use super::attrs::Attrs;
use super::Op;
use crate::autodiff::Var;
use crate::error::Result;
use crate::kernels::epilogue::Activation;
use crate::ops::conv::ConvOptions;
use crate::ops::conv_fused::ConvTail;
use crate::ops::pool::PoolOptions;
use crate::tensor::Tensor;

fn pairs(a: &Attrs<'_>, name: &str) -> Result<[(usize, usize); 2]> {
    let [h0, h1, w0, w1] = a.array::<4>(name)?;
    Ok([(h0, h1), (w0, w1)])
}

fn conv_options(a: &Attrs<'_>) -> Result<ConvOptions<2>> {
    Ok(ConvOptions { stride: a.array("stride")?, padding: pairs(a, "padding")?, dilation: a.array("dilation")?, groups: a.int("groups")?.max(1) as usize })
}

pub(super) fn conv2d(a: &Attrs<'_>) -> Result<Op> {
    Ok(Op::Conv2d(conv_options(a)?))
}

pub(super) fn conv1d(a: &Attrs<'_>) -> Result<Op> {
    let [p0, p1] = a.array::<2>("padding")?;
    Ok(Op::Conv1d(ConvOptions { stride: a.array("stride")?, padding: [(p0, p1)], dilation: a.array("dilation")?, groups: a.int("groups")?.max(1) as usize }))
}

pub(super) fn conv2d_fused(a: &Attrs<'_>) -> Result<Op> {
    Ok(Op::Conv2dFused { options: conv_options(a)?, relu: a.flag("relu")?, act: activation(a)? })
}

/// The optional `act` attribute (absent: none) with its parameters: `clip` (`low`, `high`),
/// `hard_sigmoid` (`alpha`, `beta`), `hard_swish`, `sigmoid`, `silu`.
fn activation(a: &Attrs<'_>) -> Result<Activation> {
    if !a.map.contains_key("act") {
        return Ok(Activation::None);
    }
    let f = |name: &str| a.float(name).map(|v| v as f32);
    Ok(match a.string("act")? {
        "none" => Activation::None,
        "clip" => Activation::Clip { low: f("low")?, high: f("high")? },
        "hard_sigmoid" => Activation::HardSigmoid { alpha: f("alpha")?, beta: f("beta")? },
        "hard_swish" => Activation::HardSwish,
        "sigmoid" => Activation::Sigmoid,
        "silu" => Activation::Silu,
        other => {
            return Err(crate::error::Error::invalid(
                "Plan.build",
                format!("instruction \"conv2d_fused\": unknown activation {other:?} (none, clip, hard_sigmoid, hard_swish, sigmoid, silu)"),
            ))
        }
    })
}

fn pool_options(a: &Attrs<'_>) -> Result<PoolOptions<2>> {
    Ok(PoolOptions { kernel: a.array("kernel")?, stride: a.array("stride")?, padding: pairs(a, "padding")?, dilation: a.array("dilation")?, ceil_mode: a.flag("ceil")? })
}

pub(super) fn max_pool2d(a: &Attrs<'_>) -> Result<Op> {
    Ok(Op::MaxPool2d(pool_options(a)?))
}

pub(super) fn avg_pool2d(a: &Attrs<'_>) -> Result<Op> {
    Ok(Op::AvgPool2d { options: pool_options(a)?, include_pad: a.flag("include_pad")? })
}

/// The convolutions run through the untracked `Var` API, which keeps each weight's packed form
/// between calls (`kernels::sgemm::weight_cache`): a plan runs the same weights every time, and
/// packing them afresh took a third of a ResNet-18 pass.
fn var(t: &Tensor) -> Var {
    Var::constant(t.clone())
}

pub(super) fn run_conv2d(options: &ConvOptions<2>, x: &Tensor, w: &Tensor, b: Option<&Tensor>) -> Result<Tensor> {
    Ok(var(x).conv2d(&var(w), b.map(var).as_ref(), options)?.value)
}

pub(super) fn run_conv1d(options: &ConvOptions<1>, x: &Tensor, w: &Tensor, b: Option<&Tensor>) -> Result<Tensor> {
    Ok(var(x).conv1d(&var(w), b.map(var).as_ref(), options)?.value)
}

/// `act(relu(conv2d(x, w) * scale + shift + residual))`, the tail's parts as given.
pub(super) fn run_conv2d_fused(options: &ConvOptions<2>, relu: bool, act: Activation, args: &[Option<Tensor>]) -> Result<Tensor> {
    let (x, w) = (super::need(args, 0, "conv2d_fused")?, super::need(args, 1, "conv2d_fused")?);
    let part = |k: usize| args.get(k).and_then(Option::as_ref).map(var);
    let (scale, shift, residual) = (part(2), part(3), part(4));
    let tail = ConvTail { scale: scale.as_ref(), shift: shift.as_ref(), residual: residual.as_ref(), relu, act };
    Ok(var(x).conv2d_fused(&var(w), options, &tail)?.value)
}
