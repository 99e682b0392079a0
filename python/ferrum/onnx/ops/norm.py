"""Normalization: BatchNormalization, InstanceNormalization, LayerNormalization, GroupNormalization, LRN.

BatchNormalization with constant statistics and affine parameters becomes a
``BatchNorm`` layer (ONNX's momentum weighs the running value, Burn's the
batch value: ``1 - momentum`` converts).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ferrum._ferrum import Device, Tensor
from ferrum.module import Param, RunningState
from ferrum.nn.norm import BatchNorm
from ferrum.onnx.ops._util import AnyTensor, broadcast
from ferrum.onnx.ops.registry import LayerPlan, NodeInfo, op

__all__ = [
    "batch_normalization",
    "group_normalization",
    "instance_normalization",
    "layer_normalization",
    "lrn",
]


def _channel(v: AnyTensor, rank: int) -> AnyTensor:
    return v.reshape((1, -1) + (1,) * (rank - 2))


def _batch_norm_layer(info: NodeInfo, device: Device[Any]) -> LayerPlan | None:
    arrays = info.constants[1:5]
    if any(a is None or a.dtype.kind != "f" or a.ndim != 1 for a in arrays) or info.kwargs.get(
        "training_mode"
    ):
        return None
    if info.ranks[0] is not None and info.ranks[0] < 2:
        return None
    scale, bias, mean, var = (Tensor.from_numpy(a, device) for a in arrays)  # type: ignore[arg-type]
    layer = BatchNorm(
        gamma=Param(scale),
        beta=Param(bias),
        running_mean=RunningState(mean),
        running_var=RunningState(var),
        momentum=float(str(np.float32(1.0 - float(info.kwargs.get("momentum", 0.9))))),
        epsilon=float(info.kwargs.get("epsilon", 1e-5)),
    )
    return LayerPlan(layer, (0,))


@op("BatchNormalization", layer=_batch_norm_layer)
def batch_normalization(
    x: AnyTensor,
    scale: AnyTensor,
    bias: AnyTensor,
    mean: AnyTensor,
    var: AnyTensor,
    epsilon: float = 1e-5,
    momentum: float = 0.9,
    training_mode: int = 0,
    spatial: int = 1,
    is_test: int = 1,
    consumed_inputs: tuple[int, ...] = (),
) -> tuple[AnyTensor, ...]:
    """Batch normalization with the given statistics; in training mode with the batch's, also returning
    the updated running mean and variance (``running * momentum + batch * (1 - momentum)``)."""
    del is_test, consumed_inputs
    if not spatial:
        raise ValueError("BatchNormalization spatial=0 is not supported")
    r = x.rank()
    if training_mode:
        dims = [0, *range(2, r)]
        batch_mean = x.mean_dims(dims)
        batch_var = (x - batch_mean).square().mean_dims(dims)
        y = (x - batch_mean) / (batch_var + epsilon).sqrt() * _channel(scale, r) + _channel(bias, r)
        flat_mean, flat_var = batch_mean.reshape((-1,)), batch_var.reshape((-1,))
        return y, mean * momentum + flat_mean * (1.0 - momentum), var * momentum + flat_var * (1.0 - momentum)
    # One scale and shift per channel, folded before touching x: two passes over x instead of four.
    folded = scale * (var + epsilon).sqrt().recip()
    return (x * _channel(folded, r) + _channel(bias - mean * folded, r),)


@op("InstanceNormalization")
def instance_normalization(
    x: AnyTensor, scale: AnyTensor, bias: AnyTensor, epsilon: float = 1e-5
) -> AnyTensor:
    """InstanceNormalization: each (sample, channel) plane normalized over its spatial dims.

    ``y = scale * (x - mean) / sqrt(var + epsilon) + bias``, with the mean and
    the biased variance taken over dims 2 and up of ``x`` ``[batch, channels,
    *spatial]``; ``scale`` and ``bias`` are ``[channels]`` and ``epsilon`` is
    1e-5 by default. The result has ``x``'s shape. ``x`` is a Float tensor.
    """
    dims = list(range(2, x.rank()))
    mean = x.mean_dims(dims)
    var = (x - mean).square().mean_dims(dims)
    r = x.rank()
    return (x - mean) / (var + epsilon).sqrt() * _channel(scale, r) + _channel(bias, r)


@op("LayerNormalization")
def layer_normalization(
    x: AnyTensor,
    scale: AnyTensor,
    bias: AnyTensor | None = None,
    axis: int = -1,
    epsilon: float = 1e-5,
    stash_type: int = 1,
) -> tuple[AnyTensor, AnyTensor, AnyTensor]:
    """Normalize over the dims from ``axis`` on; also the mean and inverse std (reduced dims kept)."""
    del stash_type
    start = axis + x.rank() if axis < 0 else axis
    dims = list(range(start, x.rank()))
    mean = x.mean_dims(dims)
    centered = x - mean
    inv_std = (centered.square().mean_dims(dims) + epsilon).sqrt().recip()
    y, s = broadcast(centered * inv_std, scale)
    out = y * s
    if bias is not None:
        out, b = broadcast(out, bias)
        out = out + b
    return out, mean, inv_std


@op("GroupNormalization")
def group_normalization(
    x: AnyTensor,
    scale: AnyTensor,
    bias: AnyTensor,
    epsilon: float = 1e-5,
    num_groups: int = 1,
    stash_type: int = 1,
    opset: int = 21,
) -> AnyTensor:
    """Normalize over groups of channels; ``scale``/``bias`` per channel (per group before opset 21)."""
    del stash_type
    dims = tuple(x.dims())
    b, c = dims[:2]
    grouped = x.reshape((b, num_groups, -1))
    mean = grouped.mean_dims([2])
    var = (grouped - mean).square().mean_dims([2])
    normed = ((grouped - mean) / (var + epsilon).sqrt()).reshape(dims)
    r = x.rank()
    if scale.dims()[0] != c:
        repeat = c // num_groups
        scale = scale.reshape((num_groups, 1)).expand((num_groups, repeat)).reshape((c,))
        bias = bias.reshape((num_groups, 1)).expand((num_groups, repeat)).reshape((c,))
    del opset
    return normed * _channel(scale, r) + _channel(bias, r)


@op("LRN")
def lrn(x: AnyTensor, size: int = 1, alpha: float = 1e-4, beta: float = 0.75, bias: float = 1.0) -> AnyTensor:
    """Local response normalization across channels."""
    c = x.dims()[1]
    square = x.square()
    before, after = (size - 1) // 2, math.ceil((size - 1) / 2)
    flat: list[int] = [0, 0] * (x.rank() - 2) + [before, after]
    padded = square.pad(flat, 0.0)
    total = padded.narrow(1, 0, c)
    for i in range(1, size):
        total = total + padded.narrow(1, i, c)
    return x / (total * (alpha / size) + bias).powf_scalar(beta)
