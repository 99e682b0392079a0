"""Reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare, ArgMax, ArgMin, and the
Lp norms over windows: GlobalLpPool, LpPool.

The reduced axes come from the ``axes`` attribute (older opsets) or the
``axes`` input (ReduceSum from opset 13, the others from 18): both arrive
here as the ``axes`` keyword.
"""

from __future__ import annotations

import itertools
import re
from typing import Any, Protocol

import numpy as np

from ferrum._ferrum import Bool, Int, Tensor
from ferrum.onnx.ops._util import AnyTensor, IntArg, axis, ints, pool_pads
from ferrum.onnx.ops.registry import define, op

__all__ = [
    "arg_max",
    "arg_min",
    "global_lp_pool",
    "lp_pool",
    "reduce_l1",
    "reduce_l2",
    "reduce_log_sum",
    "reduce_log_sum_exp",
    "reduce_max",
    "reduce_mean",
    "reduce_min",
    "reduce_prod",
    "reduce_sum",
    "reduce_sum_square",
]


def _axes(x: AnyTensor, axes: IntArg, noop_with_empty_axes: int) -> list[int] | None:
    found = ints(axes)
    if not found:
        return None if noop_with_empty_axes else list(range(x.rank()))
    return sorted({axis(a, x.rank()) for a in found})


def _finish(reduced: AnyTensor, dims: list[int], keepdims: int) -> AnyTensor:
    return reduced if keepdims or not dims else reduced.squeeze_dims(dims)


def _reduce(x: AnyTensor, dims: list[int], kind: str) -> AnyTensor:
    if x.rank() == 0 or not dims:
        return x
    if kind == "sum":
        return x.sum_dims(dims)
    if kind == "mean":
        return x.mean_dims(dims)
    if kind == "prod":
        return x.prod_dims(dims)
    if kind == "max":
        return x.max_dims(dims)
    if kind == "min":
        return x.min_dims(dims)
    if kind == "logsumexp":
        # log(sum(exp(x))) overflows to inf past x = 88 in f32: sum exp(x - max) and add the max back
        # (an all -inf or inf window keeps its infinite max, shifted by 0).
        top = x.max_dims(dims)
        shift = top.mask_fill(top.is_inf(), 0.0)
        return (x - shift).exp().sum_dims(dims).log() + shift
    raise AssertionError(kind)


def _identity(x: AnyTensor, dims: list[int], kind: str) -> AnyTensor:
    """Max (min) over an empty axis: the lowest (highest) value of the type, as ONNX defines it."""
    shape = tuple(1 if d in dims else n for d, n in enumerate(x.dims()))
    dtype = np.asarray(x.to_numpy()).dtype
    info: Any = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    value = (
        (-np.inf if kind == "max" else np.inf)
        if dtype.kind == "f"
        else (info.min if kind == "max" else info.max)
    )
    return Tensor.from_numpy(np.full(shape, value, dtype=dtype), x.device())


class _Reduce(Protocol):
    """The signature every ReduceXxx op shares."""

    def __call__(
        self, x: AnyTensor, axes: IntArg = None, keepdims: int = 1, noop_with_empty_axes: int = 0
    ) -> AnyTensor: ...


def _make(name: str, kind: str, pre: str | None = None, post: str | None = None) -> _Reduce:
    def fn(x: AnyTensor, axes: IntArg = None, keepdims: int = 1, noop_with_empty_axes: int = 0) -> AnyTensor:
        dims = _axes(x, axes, noop_with_empty_axes)
        if dims is None:
            return _post(_pre(x, pre), post)
        if x.kind is Bool and kind in ("max", "min"):
            if any(x.dims()[d] == 0 for d in dims):
                shape = tuple(1 if d in dims else n for d, n in enumerate(x.dims()))
                empty = Tensor.from_numpy(np.full(shape, kind == "min"), x.device())
                return _finish(empty, dims, keepdims)
            return fn(x.int(), dims, keepdims).bool()
        if any(x.dims()[d] == 0 for d in dims) and kind in ("max", "min", "logsumexp"):
            # log(sum of nothing) = log(0) = -inf: the max's identity, as the max's own.
            return _finish(_identity(x, dims, "max" if kind == "logsumexp" else kind), dims, keepdims)
        return _finish(_post(_reduce(_pre(x, pre), dims, kind), post), dims, keepdims)

    doc = f"ONNX {name} over ``axes`` (all when absent), keeping them when ``keepdims``."
    return define(name, _snake(name), fn, doc, __name__, static=(None, "axes"))


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def _pre(x: AnyTensor, pre: str | None) -> AnyTensor:
    if pre == "abs":
        return x.abs()
    if pre == "square":
        return x * x
    if pre == "exp":
        return x.exp()
    return x


def _post(x: AnyTensor, post: str | None) -> AnyTensor:
    if post == "sqrt":
        return x.float().sqrt().int() if x.kind is Int else x.sqrt()
    if post == "log":
        return x.log()
    return x


# Assigned by name (not through globals()) so that mypy sees them: generated code calls them.
reduce_sum = _make("ReduceSum", "sum")
reduce_mean = _make("ReduceMean", "mean")
reduce_max = _make("ReduceMax", "max")
reduce_min = _make("ReduceMin", "min")
reduce_prod = _make("ReduceProd", "prod")
reduce_l1 = _make("ReduceL1", "sum", pre="abs")
reduce_l2 = _make("ReduceL2", "sum", pre="square", post="sqrt")
reduce_sum_square = _make("ReduceSumSquare", "sum", pre="square")
reduce_log_sum = _make("ReduceLogSum", "sum", post="log")
reduce_log_sum_exp = _make("ReduceLogSumExp", "logsumexp")


def _arg(x: AnyTensor, axis_: int, keepdims: int, select_last_index: int, method: str) -> AnyTensor:
    dim = axis(axis_, x.rank())
    if select_last_index:
        size = x.dims()[dim]
        index: AnyTensor = getattr(x.flip([dim]), method)(dim)
        index = (index * -1) + (size - 1)
    else:
        index = getattr(x, method)(dim)
    return index if keepdims else index.squeeze_dims([dim])


class _ArgOp(Protocol):
    """The signature ArgMax and ArgMin share."""

    def __call__(
        self, x: AnyTensor, axis: int = 0, keepdims: int = 1, select_last_index: int = 0
    ) -> AnyTensor: ...


def _arg_op(onnx_name: str, name: str, method: str, which: str, example: str = "") -> _ArgOp:
    """ArgMax or ArgMin: the index of the ``which`` (largest, smallest) element, by the tensor ``method``."""

    def fn(x: AnyTensor, axis: int = 0, keepdims: int = 1, select_last_index: int = 0) -> AnyTensor:
        return _arg(x, axis, keepdims, select_last_index, method)

    extreme = "maximum" if which == "largest" else "minimum"
    doc = f"""{onnx_name}: the index of the {which} element along ``axis``, as an Int (i64) tensor.

``axis`` defaults to 0 (negative counts from the end). With ``keepdims=1``
(the default) the reduced dim stays with size 1, else it is removed.
``select_last_index=1`` (from opset 12) picks the last {extreme} on ties instead of
the first. An ``axis`` outside ``[-rank, rank)`` raises ``ValueError``.
{example}"""
    return define(onnx_name, name, fn, doc, __name__)


arg_max = _arg_op(
    "ArgMax",
    "arg_max",
    "argmax",
    "largest",
    """
Example:
    >>> import numpy as np
    >>> from ferrum import Tensor
    >>> from ferrum.backend import NdArray
    >>> x = Tensor.from_numpy(np.array([[1.0, 5.0, 5.0], [7.0, 0.0, 7.0]], np.float32), NdArray.device())
    >>> arg_max(x, axis=1).to_numpy().tolist()
    [[1], [0]]
    >>> arg_max(x, axis=1, keepdims=0, select_last_index=1).to_numpy().tolist()
    [2, 2]
""",
)
arg_min = _arg_op("ArgMin", "arg_min", "argmin", "smallest")


def _powered(x: AnyTensor, p: float) -> AnyTensor:
    """``|x| ** p``, element-wise."""
    if p == 2:
        return x.square()
    return x.abs() if p == 1 else x.abs().powf_scalar(float(p))


def _root(total: AnyTensor, p: float) -> AnyTensor:
    if p == 2:
        return total.sqrt()
    return total if p == 1 else total.powf_scalar(1.0 / p)


def _check_p(p: float, op_name: str) -> None:
    if not p > 0:
        raise ValueError(f"{op_name}: p must be positive, found {p}")


@op("GlobalLpPool")
def global_lp_pool(x: AnyTensor, p: int = 2) -> AnyTensor:
    """GlobalLpPool: the Lp norm of each channel over all its spatial dims, ``sum(|x| ** p) ** (1 / p)``.

    ``x`` is ``[batch, channels, *spatial]``; the result is ``[batch, channels,
    1, ..., 1]``, of ``x``'s rank. ``p`` is 2 by default. ``x`` is a Float
    tensor; a ``p`` that is not positive raises ``ValueError``.

    Example:
        >>> import numpy as np
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> x = Tensor.from_numpy(np.array([[[3.0, 4.0]]], np.float32), NdArray.device())
        >>> global_lp_pool(x).to_numpy().tolist(), global_lp_pool(x, p=1).to_numpy().tolist()
        ([[[5.0]]], [[[7.0]]])
    """
    _check_p(p, "GlobalLpPool")
    dims = list(range(2, x.rank()))
    if not dims:
        return _root(_powered(x, p), p)
    return _root(_powered(x, p).sum_dims(dims), p)


@op("LpPool")
def lp_pool(
    x: AnyTensor,
    auto_pad: str = "NOTSET",
    ceil_mode: int = 0,
    dilations: tuple[int, ...] | None = None,
    kernel_shape: tuple[int, ...] = (),
    p: int = 2,
    pads: tuple[int, ...] | None = None,
    strides: tuple[int, ...] | None = None,
) -> AnyTensor:
    """LpPool: the Lp norm ``sum(|x| ** p) ** (1 / p)`` of each window, over any number of spatial dims.

    ``x`` is ``[batch, channels, *spatial]``; ``kernel_shape`` gives the
    window, ``strides`` and ``dilations`` (1 by default) its step and spread,
    ``pads`` (``[begin..., end...]``) or ``auto_pad`` (``SAME_UPPER``,
    ``SAME_LOWER``, ``VALID``) the zero padding, ``ceil_mode`` (opset 18)
    rounds the output size up. ``p`` is 2 by default. Padding adds zeros to
    the sums, as ONNX's reference (``kernel_size * AveragePool(|x| ** p)``
    with the padding counted) does. The window is summed by one strided slice
    per kernel position, so it is differentiable. ``x`` is a Float tensor; a
    window larger than the padded input or a ``p`` that is not positive raises
    ``ValueError``.
    """
    _check_p(p, "LpPool")
    kernel = list(kernel_shape)
    n = len(kernel)
    if n == 0 or n != x.rank() - 2:
        raise ValueError(f"LpPool: kernel_shape {kernel} does not fit a rank-{x.rank()} input")
    size = list(x.dims()[2:])
    s = list(strides or [1] * n)
    d = list(dilations or [1] * n)
    padding = pool_pads(size, kernel, s, d, pads, auto_pad)
    outs, ends = [], []
    for i in range(n):
        span = (kernel[i] - 1) * d[i] + 1
        room = size[i] + padding[i][0] + padding[i][1] - span
        if room < 0:
            raise ValueError(f"LpPool: window {span} is larger than the padded input {room + span}")
        out = (-(-room // s[i]) if ceil_mode else room // s[i]) + 1
        if ceil_mode and (out - 1) * s[i] >= size[i] + padding[i][0]:
            out -= 1  # the last window would start in the end padding
        outs.append(out)
        ends.append(max(padding[i][1], (out - 1) * s[i] + span - size[i] - padding[i][0]))
    powered = _powered(x, p)
    flat: list[int] = []
    for i in reversed(range(n)):
        flat += [padding[i][0], ends[i]]
    if any(flat):
        powered = powered.pad(flat, 0.0)
    total: AnyTensor | None = None
    for offset in itertools.product(*(range(k) for k in kernel)):
        ranges: list[Any] = [None, None]
        ranges += [slice(j * d[i], j * d[i] + (outs[i] - 1) * s[i] + 1, s[i]) for i, j in enumerate(offset)]
        window = powered.slice(ranges)
        total = window if total is None else total + window
    assert total is not None
    return _root(total, p)
