"""Reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare, ArgMax, ArgMin.

The reduced axes come from the ``axes`` attribute (older opsets) or the
``axes`` input (ReduceSum from opset 13, the others from 18): both arrive
here as the ``axes`` keyword.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ferrum._ferrum import Bool, Int, Tensor
from ferrum.onnx.ops._util import AnyTensor, IntArg, axis, ints
from ferrum.onnx.ops.registry import op

__all__ = ["arg_max", "arg_min"]


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


def _make(name: str, kind: str, pre: str | None = None, post: str | None = None) -> None:
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
        if any(x.dims()[d] == 0 for d in dims) and kind in ("max", "min"):
            return _finish(_identity(x, dims, kind), dims, keepdims)
        return _finish(_post(_reduce(_pre(x, pre), dims, kind), post), dims, keepdims)

    fn.__name__ = fn.__qualname__ = _snake(name)
    fn.__doc__ = f"ONNX {name} over ``axes`` (all when absent), keeping them when ``keepdims``."
    op(name, static=(None, "axes"))(fn)
    globals()[fn.__name__] = fn
    __all__.append(fn.__name__)


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


_make("ReduceSum", "sum")
_make("ReduceMean", "mean")
_make("ReduceMax", "max")
_make("ReduceMin", "min")
_make("ReduceProd", "prod")
_make("ReduceL1", "sum", pre="abs")
_make("ReduceL2", "sum", pre="square", post="sqrt")
_make("ReduceSumSquare", "sum", pre="square")
_make("ReduceLogSum", "sum", post="log")
_make("ReduceLogSumExp", "sum", pre="exp", post="log")


def _arg(x: AnyTensor, axis_: int, keepdims: int, select_last_index: int, method: str) -> AnyTensor:
    dim = axis(axis_, x.rank())
    if select_last_index:
        size = x.dims()[dim]
        index: AnyTensor = getattr(x.flip([dim]), method)(dim)
        index = (index * -1) + (size - 1)
    else:
        index = getattr(x, method)(dim)
    return index if keepdims else index.squeeze_dims([dim])


@op("ArgMax")
def arg_max(x: AnyTensor, axis: int = 0, keepdims: int = 1, select_last_index: int = 0) -> AnyTensor:
    """ArgMax: the index of the largest element along ``axis``, as an Int (i64) tensor.

    ``axis`` defaults to 0 (negative counts from the end). With ``keepdims=1``
    (the default) the reduced dim stays with size 1, else it is removed.
    ``select_last_index=1`` (from opset 12) picks the last maximum on ties instead of
    the first. An ``axis`` outside ``[-rank, rank)`` raises ``ValueError``.

    Example:
        >>> import numpy as np
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> x = Tensor.from_numpy(np.array([[1.0, 5.0, 5.0], [7.0, 0.0, 7.0]], np.float32), NdArray.device())
        >>> arg_max(x, axis=1).to_numpy().tolist()
        [[1], [0]]
        >>> arg_max(x, axis=1, keepdims=0, select_last_index=1).to_numpy().tolist()
        [2, 2]
    """
    return _arg(x, axis, keepdims, select_last_index, "argmax")


@op("ArgMin")
def arg_min(x: AnyTensor, axis: int = 0, keepdims: int = 1, select_last_index: int = 0) -> AnyTensor:
    """ArgMin: the index of the smallest element along ``axis``, as an Int (i64) tensor.

    ``axis`` defaults to 0 (negative counts from the end). With ``keepdims=1``
    (the default) the reduced dim stays with size 1, else it is removed.
    ``select_last_index=1`` (from opset 12) picks the last minimum on ties instead of
    the first. An ``axis`` outside ``[-rank, rank)`` raises ``ValueError``.
    """
    return _arg(x, axis, keepdims, select_last_index, "argmin")
