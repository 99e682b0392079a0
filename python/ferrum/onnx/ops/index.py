"""Indexing and selection: Gather, GatherElements, GatherND, Compress, OneHot, NonZero, Unique, TopK,
ReverseSequence, CumSum, CumProd, Trilu.

The data an op selects from flows through engine ops (``select``, ``gather``,
``take``), so results stay differentiable on an autodiff backend; index
arithmetic on the (never differentiable) Int index inputs is done in NumPy,
where out-of-range indices are caught before they could alias another
element of a flattened view.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ferrum._ferrum import OutOfBoundsError, Tensor
from ferrum.onnx.ops._util import AnyTensor, IntArg, ints, same_kind
from ferrum.onnx.ops._util import axis as dim_of
from ferrum.onnx.ops.registry import op

__all__ = [
    "compress",
    "cum_prod",
    "cum_sum",
    "flat_rows",
    "gather",
    "gather_elements",
    "gather_nd",
    "index_array",
    "non_zero",
    "one_hot",
    "reverse_sequence",
    "top_k",
    "trilu",
    "unique",
]


def _wrap(indices: AnyTensor, size: int) -> AnyTensor:
    """Negative indices counted from the end, as ONNX allows."""
    return indices.mask_where(indices.lower_elem(0), indices + size)


@op("Gather")
def gather(x: AnyTensor, indices: AnyTensor, axis: int = 0) -> AnyTensor:
    """NumPy's ``take``: ``x``'s dim ``axis`` replaced by the indices' dims."""
    dim = dim_of(axis, x.rank())
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
    dim = dim_of(axis, x.rank())
    return x.gather(dim, _wrap(indices, x.dims()[dim]))


def index_array(
    indices: AnyTensor, sizes: Sequence[int] | np.ndarray[Any, Any] | int, what: str
) -> np.ndarray[Any, Any]:
    """An Int index input as an int64 NumPy array, negatives counted from the end, every index checked.

    ``sizes`` broadcasts against the indices (one size for all, or one per
    position of the last axis); an index outside ``[-size, size)`` raises
    ``OutOfBoundsError`` naming it. On a flattened view an out-of-range index
    would otherwise read or write another element silently.
    """
    found = np.asarray(indices.to_numpy())
    if found.dtype.kind not in "iu":
        raise TypeError(f"{what}: indices must be integers, found {found.dtype}")
    found = found.astype(np.int64, copy=False)
    bound = np.asarray(sizes, np.int64)
    wrapped = np.where(found < 0, found + bound, found)
    bad = (wrapped < 0) | (wrapped >= bound)
    if bad.any():
        at = tuple(int(i) for i in np.argwhere(bad)[0])
        size = int(np.broadcast_to(bound, found.shape)[at])
        raise OutOfBoundsError(
            f"{what}: index {int(found[at])} at {list(at)} is out of range for a dim of size {size}"
        )
    return wrapped


def flat_rows(
    indices: np.ndarray[Any, Any], batch: Sequence[int], inner: Sequence[int]
) -> np.ndarray[Any, Any]:
    """The rows that index tuples pick in a view whose leading ``batch`` and ``inner`` dims are flattened.

    ``indices`` (wrapped and checked) has shape ``batch + M + [len(inner)]``:
    each last-axis tuple addresses the ``inner`` dims, the leading ``batch``
    dims pair index tuples with the data's own batch dims (GatherND's
    ``batch_dims``). The result has shape ``batch + M``.
    """
    k = len(inner)
    strides = np.array([math.prod(inner[j + 1 :]) for j in range(k)], np.int64)
    rows = (indices * strides).sum(axis=-1, dtype=np.int64) if k else np.zeros(indices.shape[:-1], np.int64)
    if batch:
        count = math.prod(batch)
        offsets = np.arange(count, dtype=np.int64).reshape(tuple(batch) + (1,) * (rows.ndim - len(batch)))
        rows = rows + offsets * math.prod(inner)
    return rows


@op("GatherND")
def gather_nd(x: AnyTensor, indices: AnyTensor, batch_dims: int = 0) -> AnyTensor:
    """GatherND (since opset 11; ``batch_dims`` since 12): slices of ``x`` picked by index tuples.

    ``indices`` has shape ``batch + M + [k]``: each last-axis tuple of ``k``
    indices addresses ``x``'s dims ``b .. b+k-1`` (``b = batch_dims``; negative
    indices count from the end), and the first ``b`` dims of ``indices`` pair
    with ``x``'s own first ``b`` dims (they must be equal). The result has shape
    ``batch + M + x.dims()[b+k:]`` and ``x``'s kind. ``x`` is read as a
    ``[rows, slice]`` view and the rows are taken with ``select``, so the result
    stays differentiable. An index out of range raises ``OutOfBoundsError``.

    Example:
        >>> import numpy as np
        >>> from ferrum.backend import NdArray
        >>> device = NdArray.device()
        >>> x = Tensor.from_numpy(np.arange(8.0, dtype=np.float32).reshape(2, 2, 2), device)
        >>> idx = Tensor.from_numpy(np.array([[0, 1], [1, -1]]), device)
        >>> gather_nd(x, idx).to_numpy().tolist()
        [[2.0, 3.0], [6.0, 7.0]]
    """
    dims = tuple(x.dims())
    shape = tuple(indices.dims())
    b = batch_dims
    if not shape:
        raise ValueError("GatherND: indices must have rank >= 1")
    k = shape[-1]
    if b < 0 or b >= min(len(dims), len(shape)):
        raise ValueError(
            f"GatherND: batch_dims {b} must be below the ranks of data {list(dims)} and indices {list(shape)}"
        )
    if shape[:b] != dims[:b]:
        raise ValueError(f"GatherND: the batch dims of indices {list(shape)} and data {list(dims)} differ")
    if b + k > len(dims):
        raise ValueError(
            f"GatherND: index tuples of length {k} address more dims than data {list(dims)} has "
            f"after {b} batch dims"
        )
    inner, rest = dims[b : b + k], dims[b + k :]
    rows = flat_rows(index_array(indices, np.array(inner, np.int64), "GatherND"), dims[:b], inner)
    if math.prod(shape[:-1] + rest) == 0:
        return Tensor.zeros(shape[:-1] + rest, x.device(), x.kind, dtype=x.dtype)
    table = x.reshape((math.prod(dims[: b + k]), math.prod(rest)))
    picked = table.select(0, Tensor.from_numpy(rows.reshape(-1), x.device()))
    return picked.reshape(shape[:-1] + rest)


@op("Compress")
def compress(x: AnyTensor, condition: AnyTensor, axis: int | None = None) -> AnyTensor:
    """Compress (since opset 9): the slices of ``x`` along ``axis`` whose ``condition`` is true.

    ``condition`` is 1-D Bool (any nonzero counts as true); it may be shorter
    than the dim (the slices past its end are dropped), a true past the dim's
    end raises ``ValueError``. Without ``axis``, ``x`` is flattened first. The
    result keeps ``x``'s kind (selected with ``select``: differentiable).
    """
    keep = np.asarray(condition.to_numpy()).reshape(-1).astype(bool)
    if axis is None:
        x = x.reshape((x.num_elements(),))
        dim = 0
    else:
        dim = dim_of(axis, x.rank())
    size = x.dims()[dim]
    if keep[size:].any():
        raise ValueError(
            f"Compress: condition of length {keep.size} selects past the end of a dim of size {size}"
        )
    chosen = np.flatnonzero(keep[:size]).astype(np.int64)
    return x.select(dim, Tensor.from_numpy(chosen, x.device()))


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
    dim = dim_of(axis, rank)
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


@op("Unique")
def unique(
    x: AnyTensor, axis: int | None = None, sorted: int = 1
) -> tuple[AnyTensor, AnyTensor, AnyTensor, AnyTensor]:
    """Unique (since opset 11): ``x``'s distinct elements (or slices along ``axis``), with where they are.

    Returns ``(y, indices, inverse_indices, counts)``: ``y`` the distinct
    values (ascending when ``sorted=1``, the default; in order of first
    occurrence when 0), ``indices`` the first occurrence of each in ``x``
    (flattened when ``axis`` is absent), ``inverse_indices`` for each element
    (or slice) of ``x`` its row of ``y``, ``counts`` how often each occurs: the
    last three 1-D Int. ``y`` is selected from ``x`` (differentiable); the
    search runs in NumPy.
    """
    values = np.asarray(x.to_numpy())
    if axis is None:
        source, dim, dim_arg = x.reshape((x.num_elements(),)), 0, None
        values = values.reshape(-1)
    else:
        source, dim = x, dim_of(axis, x.rank())
        dim_arg = dim
    _, first, inverse, counts = np.unique(
        values, axis=dim_arg, return_index=True, return_inverse=True, return_counts=True
    )
    inverse = inverse.reshape(-1)
    if not sorted:
        order = np.argsort(first, kind="stable")
        first, counts = first[order], counts[order]
        position = np.empty_like(order)
        position[order] = np.arange(order.size)
        inverse = position[inverse]
    device = x.device()
    first_t = Tensor.from_numpy(first.astype(np.int64), device)
    y = source.select(dim, first_t)
    return (
        y,
        first_t,
        Tensor.from_numpy(inverse.astype(np.int64), device),
        Tensor.from_numpy(counts.astype(np.int64), device),
    )


@op("TopK", static=(None, "k"))
def top_k(
    x: AnyTensor, k: int | IntArg = None, axis: int = -1, largest: int = 1, sorted: int = 1
) -> tuple[AnyTensor, AnyTensor]:
    """The ``k`` largest (or smallest) values along ``axis`` and their indices, first index first on ties."""
    del sorted
    count = _one_int(k, "TopK", 0)
    dim = dim_of(axis, x.rank())
    if largest:
        values, indices = x.sort_descending_with_indices(dim)
    else:
        values, indices = x.sort_with_indices(dim)
    return values.narrow(dim, 0, count), indices.narrow(dim, 0, count)


@op("ReverseSequence")
def reverse_sequence(
    x: AnyTensor, sequence_lens: AnyTensor, batch_axis: int = 1, time_axis: int = 0
) -> AnyTensor:
    """ReverseSequence (since opset 10): each batch entry's first ``sequence_lens[b]`` steps reversed.

    ``x`` has its batch along ``batch_axis`` and time along ``time_axis`` (0
    and 1, either way round); ``sequence_lens`` is 1-D Int, one length in
    ``[0, time]`` per batch entry. Steps past an entry's length keep their
    place. The result has ``x``'s shape and kind (a ``gather`` along time:
    differentiable).
    """
    rank = x.rank()
    b_dim, t_dim = dim_of(batch_axis, rank), dim_of(time_axis, rank)
    if b_dim == t_dim:
        raise ValueError(f"ReverseSequence: batch_axis and time_axis are both dim {b_dim}")
    dims = tuple(x.dims())
    batch, time = dims[b_dim], dims[t_dim]
    lens = np.asarray(sequence_lens.to_numpy()).reshape(-1).astype(np.int64)
    if lens.size != batch:
        raise ValueError(f"ReverseSequence: {lens.size} sequence lengths for a batch of {batch}")
    if ((lens < 0) | (lens > time)).any():
        raise ValueError(f"ReverseSequence: sequence lengths {lens.tolist()} must lie in [0, {time}]")
    steps = np.arange(time, dtype=np.int64)[None, :]
    source = np.where(steps < lens[:, None], lens[:, None] - 1 - steps, steps)  # [batch, time]
    if t_dim < b_dim:
        source = source.T
    shape = [1] * rank
    shape[b_dim], shape[t_dim] = batch, time
    index = Tensor.from_numpy(np.ascontiguousarray(source).reshape(shape), x.device()).expand(dims)
    return x.gather(t_dim, index)


def _one_int(value: int | IntArg, what: str, default: int) -> int:
    """A scalar integer input: a literal (an int or a 1-element sequence) or a rank-0 or rank-1 Int tensor.

    Constant rank-0 inputs (CumSum's axis in torch exports, Trilu's k) reach
    the op as a plain ``int``; computed ones as a tensor; absent ones as None.
    """
    if value is None:
        return default
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, np.ndarray):
        found = [int(v) for v in value.reshape(-1)]
    else:
        found = ints(value) or []
    if len(found) != 1:
        raise ValueError(f"{what}: expected one integer, found {found}")
    return found[0]


def _cumulative(x: AnyTensor, dim: int, exclusive: int, reverse: int, product: bool) -> AnyTensor:
    """The running sum or product along ``dim``, ONNX's ``exclusive`` and ``reverse`` applied."""
    y = x.flip([dim]) if reverse else x
    out = y.cumprod(dim) if product else y.cumsum(dim)
    size = y.dims()[dim]
    if exclusive and size:
        # shifted by one step, the identity first (exact, where subtracting the element back is not)
        head = y.narrow(dim, 0, 1)
        head = head.ones_like() if product else head.zeros_like()
        out = Tensor.cat([head, out.narrow(dim, 0, size - 1)], dim)
    return out.flip([dim]) if reverse else out


@op("CumSum", static=(None, "axis"))
def cum_sum(x: AnyTensor, axis: int | IntArg = None, exclusive: int = 0, reverse: int = 0) -> AnyTensor:
    """CumSum (since opset 11): the running sum of ``x`` along ``axis``.

    ``axis`` is the second input: a literal when constant (an ``int`` for ONNX's
    rank-0 axis, as torch exports it; a 1-element tuple for a rank-1 one), a
    rank-0 or rank-1 Int tensor otherwise; negative counts from the end.
    ``exclusive=1`` leaves each element out of its own sum (the first is 0),
    ``reverse=1`` sums from the end. The result has ``x``'s shape and kind; a
    Bool ``x`` raises ``KindError``.

    Example:
        >>> import numpy as np
        >>> from ferrum.backend import NdArray
        >>> x = Tensor.from_numpy(np.array([1.0, 2.0, 3.0], np.float32), NdArray.device())
        >>> cum_sum(x, 0).to_numpy().tolist(), cum_sum(x, [0], exclusive=1, reverse=1).to_numpy().tolist()
        ([1.0, 3.0, 6.0], [5.0, 3.0, 0.0])
    """
    dim = dim_of(_one_int(axis, "CumSum", 0), x.rank())
    return _cumulative(x, dim, exclusive, reverse, product=False)


@op("CumProd", static=(None, "axis"))
def cum_prod(x: AnyTensor, axis: int | IntArg = None, exclusive: int = 0, reverse: int = 0) -> AnyTensor:
    """CumProd (since opset 26): the running product of ``x`` along ``axis``.

    As ``cum_sum``, with products: ``exclusive=1`` starts from 1 and leaves each
    element out of its own product, ``reverse=1`` multiplies from the end. The
    result has ``x``'s shape and kind.
    """
    dim = dim_of(_one_int(axis, "CumProd", 0), x.rank())
    return _cumulative(x, dim, exclusive, reverse, product=True)


@op("Trilu", static=(None, "k"))
def trilu(x: AnyTensor, k: int | IntArg = None, upper: int = 1) -> AnyTensor:
    """Trilu (since opset 14): the upper (``upper=1``, the default) or lower triangle of the last two dims.

    Elements below (above) diagonal ``k`` are set to zero; ``k`` is the optional
    second input, a rank-0 Int (0 when absent, positive above the main
    diagonal). ``x`` has rank >= 2 (leading dims are a batch); the result has
    its shape and kind. A lower rank raises ``ArgumentError``.
    """
    diagonal = _one_int(k, "Trilu", 0)
    return x.triu(diagonal) if upper else x.tril(diagonal)
