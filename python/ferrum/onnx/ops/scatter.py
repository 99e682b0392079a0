"""The scatter family: ScatterND, ScatterElements, Scatter (its deprecated name), TensorScatter.

Each op views its data as a ``[rows, slice]`` table (ScatterND: the indexed
leading dims flattened into rows; ScatterElements: one element per row;
TensorScatter: one sequence step of one batch entry per row), works out in
NumPy which row each update lands on, and does the writing with engine ops
(``cat`` + ``select`` for replacement, ``select_assign`` for ``add``,
elementwise ``*``/``max_pair``/``min_pair`` for the other reductions), so the
result stays differentiable in both the data and the updates.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ferrum._ferrum import Bool, Tensor
from ferrum.onnx.ops._util import AnyTensor, same_kind
from ferrum.onnx.ops._util import axis as dim_of
from ferrum.onnx.ops.index import flat_rows, index_array
from ferrum.onnx.ops.registry import op

__all__ = ["REDUCTIONS", "scatter", "scatter_elements", "scatter_nd", "scatter_rows", "tensor_scatter"]

REDUCTIONS = ("none", "add", "mul", "max", "min")
"""ONNX's ``reduction`` attribute values: how an update combines with the element it lands on."""

_COMBINE: dict[str, Callable[[AnyTensor, AnyTensor], AnyTensor]] = {
    "mul": lambda a, b: a * b,
    "max": lambda a, b: a.max_pair(b),
    "min": lambda a, b: a.min_pair(b),
}


def _ints(array: np.ndarray[Any, Any], like: AnyTensor) -> AnyTensor:
    return Tensor.from_numpy(np.ascontiguousarray(array, dtype=np.int64), like.device())


def scatter_rows(
    table: AnyTensor, rows: np.ndarray[Any, Any], updates: AnyTensor, reduction: str, what: str
) -> AnyTensor:
    """``table`` (``[P, Q]``) with ``updates`` (``[N, Q]``) written on rows ``rows`` (``N`` ints, in range).

    ``reduction`` says how: ``none`` replaces the row (when a row is hit twice
    the last update wins, as ONNX's reference does), ``add``, ``mul``, ``max``
    and ``min`` combine the row with every update landing on it. The result
    has ``table``'s kind; a Bool table reduces as Int (``add`` and ``max`` are
    logical or, ``mul`` and ``min`` logical and).
    """
    if reduction not in REDUCTIONS:
        raise ValueError(f"{what}: reduction {reduction!r} is not one of {', '.join(REDUCTIONS)}")
    if table.kind is Bool:
        return scatter_rows(table.int(), rows, updates.int(), reduction, what).bool()
    updates = same_kind(updates, table)
    count = table.dims()[0]
    if rows.size == 0:
        return table
    if reduction == "add":
        return table.select_assign(0, _ints(rows, table), updates)
    if reduction == "none":
        last = np.full(count, -1, np.int64)
        np.maximum.at(last, rows, np.arange(rows.size, dtype=np.int64))
        source = np.arange(count, dtype=np.int64)
        hit = last >= 0
        source[hit] = count + last[hit]
        return Tensor.cat([table, updates], 0).select(0, _ints(source, table))
    combine = _COMBINE[reduction]
    values, targets = _reduce_by_row(updates, rows, combine)
    merged = combine(table.select(0, _ints(targets, table)), values)
    source = np.arange(count, dtype=np.int64)
    source[targets] = count + np.arange(targets.size, dtype=np.int64)
    return Tensor.cat([table, merged], 0).select(0, _ints(source, table))


def _reduce_by_row(
    updates: AnyTensor, rows: np.ndarray[Any, Any], combine: Callable[[AnyTensor, AnyTensor], AnyTensor]
) -> tuple[AnyTensor, np.ndarray[Any, Any]]:
    """The updates landing on each row combined into one: ``(values [T, Q], rows [T])``, rows ascending.

    A pairwise tree: the updates sorted by row (stable), each level combines
    neighbours ``(0, 1), (2, 3), ...`` within a row, so a row hit ``m`` times
    takes ``ceil(log2 m)`` levels of whole-tensor ops and no padding.
    """
    order = np.argsort(rows, kind="stable")
    targets = rows[order]
    values = (
        updates if np.array_equal(order, np.arange(order.size)) else updates.select(0, _ints(order, updates))
    )
    while True:
        size = targets.size
        starts = np.flatnonzero(np.r_[True, targets[1:] != targets[:-1]])
        if starts.size == size:
            return values, targets
        segment = np.cumsum(np.r_[False, targets[1:] != targets[:-1]])
        position = np.arange(size) - starts[segment]
        kept = np.flatnonzero(position % 2 == 0)
        partner = kept + 1
        paired = partner < size
        paired[paired] = targets[partner[paired]] == targets[kept[paired]]
        left, right = kept[paired], partner[paired]
        combined = combine(values.select(0, _ints(left, values)), values.select(0, _ints(right, values)))
        # the kept entries in order: the pair's result where a partner exists, the entry itself otherwise
        source = np.where(paired, 0, left.size + kept)
        source[paired] = np.arange(left.size)
        values = Tensor.cat([combined, values], 0).select(0, _ints(source, values))
        targets = targets[kept]


@op("ScatterND")
def scatter_nd(data: AnyTensor, indices: AnyTensor, updates: AnyTensor, reduction: str = "none") -> AnyTensor:
    """ScatterND (since opset 11; reductions since 16 and 18): ``updates``' slices written by index tuples.

    ``indices`` has shape ``M + [k]``: each last-axis tuple addresses ``data``'s
    first ``k`` dims (negative indices count from the end) and the slice there,
    ``data.dims()[k:]``, takes the matching slice of ``updates`` (shape
    ``M + data.dims()[k:]``). ``reduction`` is ``none`` (replace), ``add``,
    ``mul``, ``max`` or ``min``. The result has ``data``'s shape and kind,
    differentiable in ``data`` and ``updates``. An index out of range raises
    ``OutOfBoundsError``, mismatched shapes ``ValueError``.

    Example:
        >>> import numpy as np
        >>> from ferrum.backend import NdArray
        >>> device = NdArray.device()
        >>> data = Tensor.from_numpy(np.zeros((2, 3), np.float32), device)
        >>> idx = Tensor.from_numpy(np.array([[1], [0]]), device)
        >>> upd = Tensor.from_numpy(np.arange(6.0, dtype=np.float32).reshape(2, 3), device)
        >>> scatter_nd(data, idx, upd).to_numpy().tolist()
        [[3.0, 4.0, 5.0], [0.0, 1.0, 2.0]]
    """
    dims = tuple(data.dims())
    shape = tuple(indices.dims())
    if not shape:
        raise ValueError("ScatterND: indices must have rank >= 1")
    k = shape[-1]
    if k > len(dims):
        raise ValueError(f"ScatterND: index tuples of length {k} for data of rank {len(dims)}")
    expected = shape[:-1] + dims[k:]
    if tuple(updates.dims()) != expected:
        raise ValueError(
            f"ScatterND: updates have shape {list(updates.dims())}, expected {list(expected)} "
            f"(indices {list(shape)}, data {list(dims)})"
        )
    inner = dims[:k]
    rows = flat_rows(index_array(indices, np.array(inner, np.int64), "ScatterND"), (), inner).reshape(-1)
    if math.prod(expected) == 0:
        return data  # nothing to write (and no empty tensor to reshape)
    width = math.prod(dims[k:])
    table = data.reshape((math.prod(inner), width))
    out = scatter_rows(table, rows, updates.reshape((rows.size, width)), reduction, "ScatterND")
    return out.reshape(dims)


@op("ScatterElements")
def scatter_elements(
    data: AnyTensor, indices: AnyTensor, updates: AnyTensor, axis: int = 0, reduction: str = "none"
) -> AnyTensor:
    """ScatterElements (since opset 11; ``reduction`` since 16): ``updates`` written element by element.

    For ``axis`` 0, ``out[indices[i][j]][j] = updates[i][j]``, and so on (the
    inverse of GatherElements). ``indices`` and ``updates`` have one shape, of
    ``data``'s rank and no larger than ``data`` off ``axis``; negative indices
    count from the end. ``reduction`` is ``none`` (replace; the last of
    duplicate indices wins), ``add``, ``mul``, ``max`` or ``min``. The result has
    ``data``'s shape and kind, differentiable in ``data`` and ``updates``.
    """
    dims = tuple(data.dims())
    rank = len(dims)
    dim = dim_of(axis, rank)
    shape = tuple(indices.dims())
    if len(shape) != rank or tuple(updates.dims()) != shape:
        raise ValueError(
            f"ScatterElements: indices {list(shape)} and updates {list(updates.dims())} must have one shape "
            f"of data's rank {rank}"
        )
    if any(shape[d] > dims[d] for d in range(rank) if d != dim):
        raise ValueError(
            f"ScatterElements: indices {list(shape)} are larger than data {list(dims)} off axis {dim}"
        )
    strides = [math.prod(dims[d + 1 :]) for d in range(rank)]
    flat = index_array(indices, dims[dim], "ScatterElements") * strides[dim]
    for d in range(rank):
        if d != dim:
            along = [1] * rank
            along[d] = shape[d]
            flat = flat + np.arange(shape[d], dtype=np.int64).reshape(along) * strides[d]
    count = math.prod(shape)
    if count == 0:
        return data
    table = data.reshape((math.prod(dims), 1))
    out = scatter_rows(table, flat.reshape(-1), updates.reshape((count, 1)), reduction, "ScatterElements")
    return out.reshape(dims)


@op("Scatter")
def scatter(data: AnyTensor, indices: AnyTensor, updates: AnyTensor, axis: int = 0) -> AnyTensor:
    """Scatter (opset 9-10, deprecated since 11): ScatterElements without a reduction."""
    return scatter_elements(data, indices, updates, axis=axis)


@op("TensorScatter")
def tensor_scatter(
    past_cache: AnyTensor,
    update: AnyTensor,
    write_indices: AnyTensor | None = None,
    axis: int = -2,
    mode: str = "linear",
) -> AnyTensor:
    """TensorScatter (since opset 24): a KV cache with ``update``'s steps written at each entry's index.

    ``past_cache`` is ``[batch, ..., max_seq, ...]`` with the sequence along
    ``axis`` (not 0, the batch); ``update`` has its shape but for ``seq <=
    max_seq`` steps along ``axis``. Batch entry ``b``'s steps go to positions
    ``write_indices[b] + i`` (``write_indices``, 1-D Int, defaults to 0s); mode
    ``linear`` requires them inside the cache, ``circular`` wraps them modulo
    ``max_seq``. The result has the cache's shape and kind, differentiable in
    both tensors.
    """
    dims = tuple(past_cache.dims())
    rank = len(dims)
    dim = dim_of(axis, rank)
    if dim == 0:
        raise ValueError("TensorScatter: axis cannot be the batch dim 0")
    given = tuple(update.dims())
    if len(given) != rank or any(given[d] != dims[d] for d in range(rank) if d != dim):
        raise ValueError(
            f"TensorScatter: update {list(given)} does not fit cache {list(dims)} off axis {dim}"
        )
    batch, span, steps = dims[0], dims[dim], given[dim]
    if steps > span:
        raise ValueError(f"TensorScatter: {steps} update steps for a cache of {span}")
    if write_indices is None:
        starts = np.zeros(batch, np.int64)
    else:
        starts = np.asarray(write_indices.to_numpy()).reshape(-1).astype(np.int64)
        if starts.size != batch:
            raise ValueError(f"TensorScatter: {starts.size} write indices for a batch of {batch}")
    positions = starts[:, None] + np.arange(steps, dtype=np.int64)[None, :]  # [batch, steps]
    if mode == "circular":
        positions %= span
    elif mode == "linear":
        if steps and ((starts < 0) | (starts + steps > span)).any():
            raise ValueError(
                f"TensorScatter: write indices {starts.tolist()} with {steps} steps run outside "
                f"a cache of {span}"
            )
    else:
        raise ValueError(f"TensorScatter: mode {mode!r} is not 'linear' or 'circular'")
    if math.prod(given) == 0:
        return past_cache
    inner = math.prod(dims[1:dim])
    width = math.prod(dims[dim + 1 :])
    lead = np.arange(batch * inner, dtype=np.int64).reshape(batch, inner, 1)
    rows = lead * span + positions[:, None, :]  # [batch, inner, steps]
    table = past_cache.reshape((batch * inner * span, width))
    out = scatter_rows(table, rows.reshape(-1), update.reshape((rows.size, width)), "none", "TensorScatter")
    return out.reshape(dims)
