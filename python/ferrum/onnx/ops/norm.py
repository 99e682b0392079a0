"""Normalization: BatchNormalization, InstanceNormalization, LayerNormalization, GroupNormalization, LRN,
RMSNormalization, LpNormalization, MeanVarianceNormalization.

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
from ferrum.onnx.ops._util import axis as dim_of
from ferrum.onnx.ops.registry import LayerPlan, NodeInfo, op

__all__ = [
    "batch_normalization",
    "group_normalization",
    "instance_normalization",
    "layer_normalization",
    "lp_normalization",
    "lrn",
    "mean_variance_normalization",
    "rms_normalization",
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
    start = dim_of(axis, x.rank())
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


@op("RMSNormalization")
def rms_normalization(
    x: AnyTensor, scale: AnyTensor, axis: int = -1, epsilon: float = 1e-5, stash_type: int = 1
) -> AnyTensor:
    """RMSNormalization (since opset 23): ``x / sqrt(mean(x ** 2) + epsilon) * scale``.

    The mean runs over the dims from ``axis`` (-1 by default, negative counts
    from the end) to the last; ``scale`` broadcasts to ``x`` from the right
    (ONNX's unidirectional broadcasting), ``epsilon`` is 1e-5 by default. The
    result has ``x``'s shape and dtype. ``x`` is a Float tensor: ferrum computes
    f16 and bf16 in f32, which is what ``stash_type`` 1 (the default) asks for;
    an f64 ``x`` is computed in f64. An ``axis`` outside ``[-rank, rank)``
    raises ``ValueError``.

    Example:
        >>> import numpy as np
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> x = Tensor.from_numpy(np.array([[3.0, 4.0], [1.0, 1.0]], np.float32), NdArray.device())
        >>> one = Tensor.from_numpy(np.ones(2, np.float32), NdArray.device())
        >>> rms_normalization(x, one, epsilon=0.0).to_numpy().astype(float).round(4).tolist()
        [[0.8485, 1.1314], [1.0, 1.0]]
    """
    del stash_type
    start = dim_of(axis, x.rank())
    dims = list(range(start, x.rank()))
    inv_rms = (x.square().mean_dims(dims) + epsilon).sqrt().recip()
    y, s = broadcast(x * inv_rms, scale)
    return y * s


@op("LpNormalization")
def lp_normalization(x: AnyTensor, axis: int = -1, p: int = 2) -> AnyTensor:
    """LpNormalization: ``x`` divided by its L1 (``p=1``) or L2 (``p=2``, the default) norm along ``axis``.

    ``axis`` is -1 by default (negative counts from the end). Where a norm is 0
    the result is 0 (ONNX's 0/0 = 0), and the gradient there is finite (that of
    ``x / 1``), not NaN.
    ``x`` is a Float tensor of any rank >= 1; the result has its shape. A ``p``
    other than 1 or 2 (the two ONNX defines) raises ``ValueError``, so does an
    ``axis`` outside ``[-rank, rank)``.

    Example:
        >>> import numpy as np
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> x = Tensor.from_numpy(np.array([[3.0, 4.0], [0.0, 0.0]], np.float32), NdArray.device())
        >>> lp_normalization(x).to_numpy().tolist()
        [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]]
    """
    if p not in (1, 2):
        raise ValueError(f"LpNormalization: p must be 1 or 2, found {p}")
    dim = dim_of(axis, x.rank())
    total = x.abs().sum_dims([dim]) if p == 1 else x.square().sum_dims([dim])
    # A zero norm becomes 1 before the root: the zero vector then divides to 0, and neither the
    # root nor the division sees 0 (whose gradients are inf and NaN).
    total = total.mask_fill(total.equal_elem(0.0), 1.0)
    return x / (total if p == 1 else total.sqrt())


@op("MeanVarianceNormalization")
def mean_variance_normalization(x: AnyTensor, axes: tuple[int, ...] = (0, 2, 3)) -> AnyTensor:
    """MeanVarianceNormalization (since opset 9): ``(x - mean) / (std + 1e-9)`` over ``axes``.

    ``axes`` is ``[0, 2, 3]`` by default (per channel of an NCHW batch);
    negative axes count from the end. The standard deviation is the biased one
    (ONNX's function takes ``sqrt(mean(x ** 2) - mean(x) ** 2)``; ferrum takes
    the equal ``sqrt(mean((x - mean) ** 2))``, which cannot go negative through
    rounding). ``x`` is a Float tensor; the result has its shape. An axis outside
    ``[-rank, rank)`` raises ``ValueError``.
    """
    dims = sorted({dim_of(a, x.rank()) for a in axes})
    if not dims:
        return x - x
    centered = x - x.mean_dims(dims)
    std = centered.square().mean_dims(dims).sqrt()
    return centered / (std + 1e-9)
