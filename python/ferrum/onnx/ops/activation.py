"""Activations and the softmax family: Relu, Sigmoid, Gelu, LeakyRelu, PRelu, Clip, Softmax, ..."""

from __future__ import annotations

import math

from ferrum import activation
from ferrum._ferrum import Float, Tensor
from ferrum.onnx.ops._util import AnyTensor, axis, broadcast, same_kind
from ferrum.onnx.ops.registry import op

__all__ = [
    "celu",
    "clip",
    "elu",
    "gelu",
    "hard_sigmoid",
    "hard_swish",
    "hardmax",
    "leaky_relu",
    "log_softmax",
    "mish",
    "prelu",
    "relu",
    "selu",
    "sigmoid",
    "softmax",
    "softplus",
    "softsign",
    "tanh",
    "thresholded_relu",
]


@op("Relu")
def relu(x: AnyTensor) -> AnyTensor:
    return activation.relu(x) if x.kind is Float else x.clamp_min(0)


@op("Sigmoid")
def sigmoid(x: AnyTensor) -> AnyTensor:
    return activation.sigmoid(x)


@op("Tanh")
def tanh(x: AnyTensor) -> AnyTensor:
    return activation.tanh(x)


@op("LeakyRelu")
def leaky_relu(x: AnyTensor, alpha: float = 0.01) -> AnyTensor:
    return activation.leaky_relu(x, alpha)


@op("PRelu")
def prelu(x: AnyTensor, slope: AnyTensor) -> AnyTensor:
    """``x`` where positive, ``slope * x`` elsewhere (``slope`` broadcasts to ``x``)."""
    x_b, slope_b = broadcast(x, slope)
    return x_b.mask_where(x_b.lower_elem(0.0), x_b * slope_b)


@op("Elu")
def elu(x: AnyTensor, alpha: float = 1.0) -> AnyTensor:
    return x.mask_where(x.lower_elem(0.0), (x.exp() - 1.0) * alpha)


@op("Selu")
def selu(
    x: AnyTensor, alpha: float = 1.67326319217681884765625, gamma: float = 1.05070102214813232421875
) -> AnyTensor:
    return x.mask_where(x.lower_equal_elem(0.0), (x.exp() - 1.0) * alpha) * gamma


@op("Celu")
def celu(x: AnyTensor, alpha: float = 1.0) -> AnyTensor:
    return x.clamp_min(0.0) + ((x / alpha).exp() - 1.0).clamp_max(0.0) * alpha


@op("ThresholdedRelu")
def thresholded_relu(x: AnyTensor, alpha: float = 1.0) -> AnyTensor:
    return x.mask_fill(x.lower_equal_elem(alpha), 0.0)


@op("Softplus")
def softplus(x: AnyTensor) -> AnyTensor:
    return activation.softplus(x)


@op("Softsign")
def softsign(x: AnyTensor) -> AnyTensor:
    return x / (x.abs() + 1.0)


@op("HardSigmoid")
def hard_sigmoid(x: AnyTensor, alpha: float = 0.2, beta: float = 0.5) -> AnyTensor:
    return activation.hard_sigmoid(x, alpha, beta)


@op("HardSwish")
def hard_swish(x: AnyTensor) -> AnyTensor:
    return activation.hard_swish(x)


@op("Mish")
def mish(x: AnyTensor) -> AnyTensor:
    return activation.mish(x)


@op("Gelu")
def gelu(x: AnyTensor, approximate: str = "none") -> AnyTensor:
    """Exact (``erf``) or ``tanh``-approximated GELU."""
    if approximate == "none":
        return activation.gelu(x)
    if approximate == "tanh":
        inner = (x + x.powf_scalar(3.0) * 0.044715) * math.sqrt(2.0 / math.pi)
        return x * (activation.tanh(inner) + 1.0) * 0.5
    raise ValueError(f"Gelu approximate must be 'none' or 'tanh', found {approximate!r}")


@op("Clip", static=(None, "min", "max"))
def clip(
    x: AnyTensor, min: float | AnyTensor | None = None, max: float | AnyTensor | None = None
) -> AnyTensor:
    """``x`` limited to ``[min, max]`` (either bound may be absent)."""
    for bound, method in ((min, "max_pair"), (max, "min_pair")):
        if bound is None:
            continue
        if isinstance(bound, (int, float)):
            x = x.clamp_min(bound) if method == "max_pair" else x.clamp_max(bound)
        else:
            x, b = broadcast(x, same_kind(bound, x))
            x = getattr(x, method)(b)
    return x


def _coerced(x: AnyTensor, axis_: int, opset: int, fn: str) -> AnyTensor:
    """Softmax-family op over ``axis``; before opset 13 over the flattened dims from ``axis`` on."""
    rank = x.rank()
    dim = axis(axis_, rank)
    run = getattr(activation, fn)
    if opset >= 13 or dim == rank - 1:
        return run(x, dim)  # type: ignore[no-any-return]
    dims = tuple(x.dims())
    outer = math.prod(dims[:dim])
    return run(x.reshape((outer, -1)), 1).reshape(dims)  # type: ignore[no-any-return]


@op("Softmax")
def softmax(x: AnyTensor, axis: int | None = None, opset: int = 13) -> AnyTensor:
    return _coerced(x, axis if axis is not None else (-1 if opset >= 13 else 1), opset, "softmax")


@op("LogSoftmax")
def log_softmax(x: AnyTensor, axis: int | None = None, opset: int = 13) -> AnyTensor:
    return _coerced(x, axis if axis is not None else (-1 if opset >= 13 else 1), opset, "log_softmax")


@op("Hardmax")
def hardmax(x: AnyTensor, axis: int | None = None, opset: int = 13) -> AnyTensor:
    """One at the first maximum along ``axis``, zero elsewhere."""
    rank = x.rank()
    dim = _axis_or_default(axis, opset, rank)
    dims = tuple(x.dims())
    flat = x if opset >= 13 else x.reshape((math.prod(dims[:dim]), -1))
    d = dim if opset >= 13 else 1
    index = flat.argmax(d)
    size = flat.dims()[d]
    positions = _positions(flat, d, size)
    out = positions.equal(index.expand(flat.dims())).float()
    return same_kind(out, x).reshape(dims)


def _axis_or_default(value: int | None, opset: int, rank: int) -> int:
    return axis(value if value is not None else (-1 if opset >= 13 else 1), rank)


def _positions(x: AnyTensor, dim: int, size: int) -> AnyTensor:
    shape = [1] * x.rank()
    shape[dim] = size
    return Tensor.arange(0, size, x.device()).reshape(shape).expand(x.dims())
