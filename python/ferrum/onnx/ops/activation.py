"""Activations and the softmax family: Relu, Sigmoid, Gelu, Swish, SwiGLU, Shrink, PRelu, Clip, Softmax..."""

from __future__ import annotations

import math
from collections.abc import Callable

from ferrum import activation
from ferrum._ferrum import Bool, DType, Float, KindError, Tensor
from ferrum.onnx.ops._util import AnyTensor, axis, broadcast, same_kind
from ferrum.onnx.ops.registry import define, op

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
    "shrink",
    "sigmoid",
    "softmax",
    "softplus",
    "softsign",
    "swiglu",
    "swish",
    "tanh",
    "thresholded_relu",
]


def _float_op(
    onnx_name: str, name: str, fn: Callable[[AnyTensor], AnyTensor], what: str, since: int | None = None
) -> Callable[[AnyTensor], AnyTensor]:
    """The element-wise op ``fn`` on Float tensors (one activation kernel); its docstring says ``what``
    it computes and from which opset (``since``, for the docstring only)."""
    header = f"{onnx_name} (since opset {since})" if since else onnx_name
    doc = f"""{header}: {what}, element-wise.

``x`` is a Float tensor of any shape; the result has its shape and dtype.
Another kind raises ``KindError``.
"""
    return define(onnx_name, name, fn, doc, __name__)


@op("Relu")
def relu(x: AnyTensor) -> AnyTensor:
    """Relu: ``max(x, 0)`` element-wise.

    ``x`` is a Float or Int tensor (ONNX adds the integer types at opset 14)
    of any shape; the result has its shape and kind. A Bool ``x`` raises
    ``KindError``.

    Example:
        >>> import numpy as np
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> x = Tensor.from_numpy(np.array([-1.5, 0.0, 2.0], np.float32), NdArray.device())
        >>> relu(x).to_numpy().tolist()
        [0.0, 0.0, 2.0]
    """
    return activation.relu(x) if x.kind is Float else x.clamp_min(0)


sigmoid = _float_op("Sigmoid", "sigmoid", lambda x: activation.sigmoid(x), "``1 / (1 + exp(-x))``")
tanh = _float_op("Tanh", "tanh", lambda x: activation.tanh(x), "the hyperbolic tangent")


@op("LeakyRelu")
def leaky_relu(x: AnyTensor, alpha: float = 0.01) -> AnyTensor:
    """LeakyRelu: ``x`` where ``x >= 0``, ``alpha * x`` elsewhere (attribute ``alpha``, 0.01 by default).

    ``x`` is a Float tensor of any shape; the result has its shape and dtype.
    Another kind raises ``KindError``.
    """
    return activation.leaky_relu(x, alpha)


@op("PRelu")
def prelu(x: AnyTensor, slope: AnyTensor) -> AnyTensor:
    """``x`` where positive, ``slope * x`` elsewhere (``slope`` broadcasts to ``x``)."""
    x_b, slope_b = broadcast(x, slope)
    return x_b.mask_where(x_b.lower_elem(0.0), x_b * slope_b)


@op("Elu")
def elu(x: AnyTensor, alpha: float = 1.0) -> AnyTensor:
    """Elu: ``x`` where ``x >= 0``, ``alpha * (exp(x) - 1)`` elsewhere (attribute ``alpha``, 1.0 by default).

    ``x`` is a Float tensor of any shape; the result has its shape and dtype.
    Another kind raises ``KindError``.
    """
    return x.mask_where(x.lower_elem(0.0), (x.exp() - 1.0) * alpha)


@op("Selu")
def selu(
    x: AnyTensor, alpha: float = 1.67326319217681884765625, gamma: float = 1.05070102214813232421875
) -> AnyTensor:
    """Selu: ``gamma * x`` where ``x > 0``, ``gamma * alpha * (exp(x) - 1)`` elsewhere.

    The attributes ``alpha`` and ``gamma`` default to ONNX's constants
    (1.6732632... and 1.0507010...). ``x`` is a Float tensor of any shape; the
    result has its shape and dtype. Another kind raises ``KindError``.
    """
    return x.mask_where(x.lower_equal_elem(0.0), (x.exp() - 1.0) * alpha) * gamma


@op("Celu")
def celu(x: AnyTensor, alpha: float = 1.0) -> AnyTensor:
    """Celu (since opset 12): ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` element-wise.

    Attribute ``alpha`` (1.0 by default). ``x`` is a Float tensor of any shape;
    the result has its shape and dtype. Another kind raises ``KindError``.
    """
    return x.clamp_min(0.0) + ((x / alpha).exp() - 1.0).clamp_max(0.0) * alpha


@op("ThresholdedRelu")
def thresholded_relu(x: AnyTensor, alpha: float = 1.0) -> AnyTensor:
    """ThresholdedRelu (since opset 10): ``x`` where ``x > alpha``, 0 elsewhere (attribute ``alpha``, 1.0).

    ``x`` of any shape and numeric kind; the result has its shape and kind. A
    Bool ``x`` raises ``KindError``.
    """
    return x.mask_fill(x.lower_equal_elem(alpha), 0.0)


softplus = _float_op("Softplus", "softplus", lambda x: activation.softplus(x), "``log(1 + exp(x))``")


@op("Softsign")
def softsign(x: AnyTensor) -> AnyTensor:
    """Softsign: ``x / (1 + |x|)`` element-wise.

    ``x`` of any shape; the result has its shape and kind (ONNX defines it for
    floats; an Int ``x`` divides as integers). A Bool ``x`` raises ``KindError``.
    """
    return x / (x.abs() + 1.0)


@op("HardSigmoid")
def hard_sigmoid(x: AnyTensor, alpha: float = 0.2, beta: float = 0.5) -> AnyTensor:
    """HardSigmoid: ``max(0, min(1, alpha * x + beta))`` element-wise.

    Attributes ``alpha`` (0.2) and ``beta`` (0.5). ``x`` is a Float tensor of
    any shape; the result has its shape and dtype. Another kind raises
    ``KindError``.
    """
    return activation.hard_sigmoid(x, alpha, beta)


hard_swish = _float_op(
    "HardSwish", "hard_swish", lambda x: activation.hard_swish(x), "``x * max(0, min(1, x / 6 + 1 / 2))``", 14
)
mish = _float_op("Mish", "mish", lambda x: activation.mish(x), "``x * tanh(softplus(x))``", 18)


@op("Swish")
def swish(x: AnyTensor, alpha: float = 1.0) -> AnyTensor:
    """Swish (since opset 24): ``x * sigmoid(alpha * x)`` element-wise (attribute ``alpha``, 1.0 by default).

    With ``alpha`` 1 it is SiLU. ``x`` is a Float tensor of any shape; the
    result has its shape and dtype. Another kind raises ``KindError``.

    Example:
        >>> import numpy as np
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> x = Tensor.from_numpy(np.array([-1.0, 0.0, 2.0], np.float32), NdArray.device())
        >>> swish(x).to_numpy().astype(float).round(4).tolist()
        [-0.2689, 0.0, 1.7616]
    """
    return activation.silu(x) if alpha == 1.0 else x * activation.sigmoid(x * alpha)


@op("SwiGLU")
def swiglu(a: AnyTensor, b: AnyTensor | None = None, alpha: float = 1.0) -> AnyTensor:
    """SwiGLU (since opset 28): ``Swish_alpha(a) * b``, the gate ``a`` times the value ``b``.

    ``a`` and ``b`` are Float tensors of one shape (ONNX applies no
    broadcasting: exporters split a packed projection upstream with Split,
    Slice or Gather); the result has that shape. ``alpha`` (1.0 by default)
    scales the sigmoid's argument, as Swish's does. Different shapes raise
    ``ValueError``, and so does a node without ``B`` (ONNX's SwiGLU has no
    one-input, split-in-halves form); another kind raises ``KindError``.
    """
    if b is None:
        raise ValueError("SwiGLU takes two inputs, the gate A and the value B (split a packed projection)")
    if tuple(a.dims()) != tuple(b.dims()):
        raise ValueError(
            f"SwiGLU: the gate A {list(a.dims())} and the value B {list(b.dims())} must have one shape "
            "(ONNX applies no broadcasting)"
        )
    return swish(a, alpha) * b


@op("Shrink")
def shrink(x: AnyTensor, bias: float = 0.0, lambd: float = 0.5) -> AnyTensor:
    """Shrink (since opset 9): ``x + bias`` where ``x < -lambd``, ``x - bias`` where ``x > lambd``, 0 between.

    ``lambd`` is 0.5 and ``bias`` 0.0 by default (soft shrinkage sets
    ``bias = lambd``, hard shrinkage leaves it 0). ``x`` is a Float or Int
    tensor of any shape; the result has its shape and kind (an Int ``x`` is
    compared and shifted in f64 and truncated back, as ONNX's reference
    does). A Bool ``x`` raises ``KindError``.
    """
    if x.kind is Bool:
        raise KindError("Shrink: a Bool tensor cannot be shrunk (Float or Int)")
    if x.kind is not Float:
        return shrink(x.cast(DType.F64), bias, lambd).int()
    low, high = x.lower_elem(-lambd), x.greater_elem(lambd)
    out = x.zeros_like().mask_where(low, x + bias)
    return out.mask_where(high, x - bias)


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
    """Softmax: ``exp(x) / sum(exp(x))`` along ``axis``.

    From opset 13 the sum runs along the single dim ``axis`` (-1 by default).
    Before opset 13 ``x`` is read as a matrix ``[prod(dims[:axis]),
    prod(dims[axis:])]`` (``axis`` 1 by default) and normalized per row; the
    runner passes the node's ``opset``. ``x`` is a Float tensor of any rank >= 1;
    the result has its shape. An ``axis`` outside ``[-rank, rank)`` raises
    ``ValueError``, another kind ``KindError``.

    Example:
        >>> import numpy as np
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> x = Tensor.from_numpy(np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]], np.float32), NdArray.device())
        >>> softmax(x).to_numpy().astype(float).round(3).tolist()
        [[0.09, 0.245, 0.665], [0.333, 0.333, 0.333]]
    """
    return _coerced(x, axis if axis is not None else (-1 if opset >= 13 else 1), opset, "softmax")


@op("LogSoftmax")
def log_softmax(x: AnyTensor, axis: int | None = None, opset: int = 13) -> AnyTensor:
    """LogSoftmax: ``x - log(sum(exp(x)))`` along ``axis``, computed stably.

    The axis rules are Softmax's: one dim from opset 13 (``axis`` -1 by
    default), the flattened dims from ``axis`` on before it (``axis`` 1 by
    default; the runner passes ``opset``). ``x`` is a Float tensor of any rank >=
    1; the result has its shape. An ``axis`` outside ``[-rank, rank)`` raises
    ``ValueError``, another kind ``KindError``.
    """
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
