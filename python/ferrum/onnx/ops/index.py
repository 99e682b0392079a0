"""Indexing and selection: Gather, GatherElements, OneHot, NonZero, TopK, CumSum, Trilu."""

from __future__ import annotations

from typing import Any

import numpy as np

from ferrum._ferrum import Tensor
from ferrum.onnx.ops._util import AnyTensor, IntArg, ints, same_kind
from ferrum.onnx.ops.registry import op

__all__ = ["cum_sum", "gather", "gather_elements", "non_zero", "one_hot", "top_k", "trilu"]


def _wrap(indices: AnyTensor, size: int) -> AnyTensor:
    """Negative indices counted from the end, as ONNX allows."""
    return indices.mask_where(indices.lower_elem(0), indices + size)


@op("Gather")
def gather(x: AnyTensor, indices: AnyTensor, axis: int = 0) -> AnyTensor:
    """NumPy's ``take``: ``x``'s dim ``axis`` replaced by the indices' dims."""
    dim = axis + x.rank() if axis < 0 else axis
    indices = _wrap(same_kind(indices, Tensor.from_numpy(np.zeros(1, np.int64), x.device())), x.dims()[dim])
    if indices.rank() == 0:
        return x.take(dim, indices.reshape((1,))).squeeze_dims([dim])
    return x.take(dim, indices)


@op("GatherElements")
def gather_elements(x: AnyTensor, indices: AnyTensor, axis: int = 0) -> AnyTensor:
    """GatherElements (since opset 11): ``x``'s elements picked along ``axis`` by ``indices``.

    For ``axis`` 0, ``out[i][j][k] = x[indices[i][j][k]][j][k]``, and so on.
    ``indices`` is an Int tensor of ``x``'s rank; the result has ``indices``'
    shape and ``x``'s kind, as ``torch.gather``. Negative indices count from the end of dim ``axis``; an
    index still outside ``[0, dims[axis])`` raises ``OutOfBoundsError``.
    """
    dim = axis + x.rank() if axis < 0 else axis
    return x.gather(dim, _wrap(indices, x.dims()[dim]))


@op("OneHot", static=(None, "depth", "values"))
def one_hot(
    indices: AnyTensor, depth: float | AnyTensor | None = None, values: Any = None, axis: int = -1
) -> AnyTensor:
    """``values[1]`` at each index along a new ``axis`` of length ``depth``, ``values[0]`` elsewhere."""
    size = int(_scalar(depth))
    pair = values.to_numpy().reshape(-1) if isinstance(values, Tensor) else np.asarray(values).reshape(-1)
    off, on = pair[0], pair[1]
    idx = same_kind(indices, Tensor.from_numpy(np.zeros(1, np.int64), indices.device()))
    idx = _wrap(idx, size)
    rank = idx.rank() + 1
    dim = axis + rank if axis < 0 else axis
    positions_shape = [1] * rank
    positions_shape[dim] = size
    positions = Tensor.arange(0, size, idx.device()).reshape(tuple(positions_shape))
    expanded = idx.unsqueeze_dims([dim])
    shape = list(idx.dims())
    shape.insert(dim, size)
    hot = expanded.expand(tuple(shape)).equal(positions.expand(tuple(shape)))
    like = Tensor.from_numpy(np.asarray(pair[:1]), idx.device())
    off_t = Tensor.from_numpy(np.full(shape, off, dtype=like.to_numpy().dtype), idx.device())
    on_t = Tensor.from_numpy(np.full(shape, on, dtype=like.to_numpy().dtype), idx.device())
    return off_t.mask_where(hot, on_t)


def _scalar(value: object) -> float:
    if isinstance(value, Tensor):
        return float(value.to_numpy().reshape(-1)[0])
    if isinstance(value, (tuple, list, np.ndarray)):
        return float(np.asarray(value).reshape(-1)[0])
    return float(value)  # type: ignore[arg-type]


@op("NonZero")
def non_zero(x: AnyTensor) -> AnyTensor:
    """The indices of the non-zero elements, one row per dim: ``[rank, count]``."""
    found = np.stack(np.nonzero(np.asarray(x.to_numpy()))).astype(np.int64).reshape(x.rank(), -1)
    return Tensor.from_numpy(found, x.device())


@op("TopK", static=(None, "k"))
def top_k(
    x: AnyTensor, k: IntArg = None, axis: int = -1, largest: int = 1, sorted: int = 1
) -> tuple[AnyTensor, AnyTensor]:
    """The ``k`` largest (or smallest) values along ``axis`` and their indices, first index first on ties."""
    del sorted
    count = (ints(k) or [0])[0]
    dim = axis + x.rank() if axis < 0 else axis
    if largest:
        values, indices = x.sort_descending_with_indices(dim)
    else:
        values, indices = x.sort_with_indices(dim)
    return values.narrow(dim, 0, count), indices.narrow(dim, 0, count)


@op("CumSum", static=(None, "axis"))
def cum_sum(x: AnyTensor, axis: IntArg = None, exclusive: int = 0, reverse: int = 0) -> AnyTensor:
    """CumSum (since opset 11): the running sum of ``x`` along ``axis``.

    ``axis`` is the second input (a literal when constant, a rank-0 or rank-1
    Int tensor otherwise; negative counts from the end). ``exclusive=1`` leaves
    each element out of its own sum (the first is 0), ``reverse=1`` sums from
    the end. The result has ``x``'s shape and kind; a Bool ``x`` raises
    ``KindError``.

    Example:
        >>> import numpy as np
        >>> from ferrum.backend import NdArray
        >>> x = Tensor.from_numpy(np.array([1.0, 2.0, 3.0], np.float32), NdArray.device())
        >>> cum_sum(x, [0]).to_numpy().tolist(), cum_sum(x, [0], exclusive=1, reverse=1).to_numpy().tolist()
        ([1.0, 3.0, 6.0], [5.0, 3.0, 0.0])
    """
    dim = (ints(axis) or [0])[0]
    dim = dim + x.rank() if dim < 0 else dim
    y = x.flip([dim]) if reverse else x
    out = y.cumsum(dim)
    if exclusive:
        out = out - y
    return out.flip([dim]) if reverse else out


@op("Trilu", static=(None, "k"))
def trilu(x: AnyTensor, k: IntArg = None, upper: int = 1) -> AnyTensor:
    """Trilu (since opset 14): the upper (``upper=1``, the default) or lower triangle of the last two dims.

    Elements below (above) diagonal ``k`` are set to zero; ``k`` is the optional
    second input (0 when absent, positive above the main diagonal). ``x`` has
    rank >= 2 (leading dims are a batch); the result has its shape and kind. A
    lower rank raises ``ArgumentError``.
    """
    diagonal = (ints(k) or [0])[0]
    return x.triu(diagonal) if upper else x.tril(diagonal)
