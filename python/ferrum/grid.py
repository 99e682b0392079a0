"""Coordinate grids from 1-d tensors: Burn's ``burn::tensor::grid`` (``meshgrid``, ``meshgrid_stack``).

``meshgrid(tensors)`` turns ``n`` tensors of lengths ``(s1, ..., sn)`` into
``n`` tensors of shape ``(s1, ..., sn)``: the ``i``-th holds ``tensors[i]``
along dim ``i``. ``GridIndexing.Cartesian`` swaps the first two dims (x
varies along columns, as NumPy's ``indexing="xy"``); ``GridSparsity.Sparse``
keeps size-1 dims instead of expanding. For integer index grids see
``Tensor.cartesian_grid``.

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import NdArray
    >>> from ferrum.grid import meshgrid
    >>> device = NdArray.device()
    >>> xs, ys = meshgrid([Tensor.from_ints([1, 2, 3], device), Tensor.from_ints([5, 6], device)])
    >>> xs.to_data().to_list()
    [[1, 1], [2, 2], [3, 3]]
    >>> ys.to_data().to_list()
    [[5, 6], [5, 6], [5, 6]]
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Sequence
from typing import Any, TypeVar

from ferrum._ferrum import Tensor
from ferrum.backend import Backend
from ferrum.rank import D1

__all__ = ["GridIndexing", "GridOptions", "GridSparsity", "IndexPos", "meshgrid", "meshgrid_stack"]

B = TypeVar("B", bound=Backend)


class GridIndexing(enum.Enum):
    """``Matrix`` (dim i follows input i, NumPy's ``"ij"``) or ``Cartesian`` (first two dims swapped)."""

    Matrix = "Matrix"
    Cartesian = "Cartesian"


class GridSparsity(enum.Enum):
    """``Dense`` (every output has the full grid shape) or ``Sparse`` (size-1 dims that broadcast)."""

    Dense = "Dense"
    Sparse = "Sparse"


class IndexPos(enum.Enum):
    """Where ``meshgrid_stack`` puts the dim that indexes the inputs: ``First`` or ``Last``."""

    First = "First"
    Last = "Last"


@dataclasses.dataclass(frozen=True)
class GridOptions:
    """Burn's ``GridOptions``: an indexing and a sparsity (``Matrix`` and ``Dense`` by default).

    Example:
        >>> from ferrum.grid import GridIndexing, GridOptions
        >>> GridOptions(GridIndexing.Cartesian).sparsity
        <GridSparsity.Dense: 'Dense'>
    """

    indexing: GridIndexing = GridIndexing.Matrix
    sparsity: GridSparsity = GridSparsity.Dense


def meshgrid(
    tensors: Sequence[Tensor[B, D1, Any]],
    options: GridOptions | GridIndexing | GridSparsity | None = None,
) -> list[Tensor[B, Any, Any]]:
    """One tensor per input, each of the grid's rank (``len(tensors)``).

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.grid import GridIndexing, meshgrid
        >>> device = NdArray.device()
        >>> x, y = Tensor.from_ints([1, 2, 3], device), Tensor.from_ints([5, 6], device)
        >>> [t.shape() for t in meshgrid([x, y], GridIndexing.Cartesian)]
        [(2, 3), (2, 3)]
    """
    opts = _options(options)
    if not tensors:
        raise ValueError("meshgrid: expected at least one tensor, found none")
    for i, tensor in enumerate(tensors):
        if not isinstance(tensor, Tensor) or tensor.rank() != 1:
            found = f"shape {list(tensor.shape())}" if isinstance(tensor, Tensor) else type(tensor).__name__
            raise ValueError(f"meshgrid: tensors[{i}] must be a rank-1 tensor, found {found}")
    grid = tuple(t.shape()[0] for t in tensors)
    swap = opts.indexing == GridIndexing.Cartesian and len(tensors) > 1
    out: list[Tensor[B, Any, Any]] = []
    for i, tensor in enumerate(tensors):
        shape = [1] * len(grid)
        shape[i] = grid[i]
        t: Tensor[B, Any, Any] = tensor.reshape(shape)
        if opts.sparsity == GridSparsity.Dense:
            t = t.expand(grid)
        if swap:
            t = t.swap_dims(0, 1)
        out.append(t)
    return out


def meshgrid_stack(
    tensors: Sequence[Tensor[B, D1, Any]], index_pos: IndexPos = IndexPos.First
) -> Tensor[B, Any, Any]:
    """The dense ``Matrix`` meshgrid stacked along a new first (or last) dim.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.grid import IndexPos, meshgrid_stack
        >>> device = NdArray.device()
        >>> ts = [Tensor.from_ints([0, 1], device), Tensor.from_ints([7, 8, 9], device)]
        >>> meshgrid_stack(ts, IndexPos.Last).shape()
        (2, 3, 2)
    """
    grids = meshgrid(tensors)
    dim = 0 if index_pos == IndexPos.First else len(grids)
    return Tensor.stack(grids, dim)


def _options(options: GridOptions | GridIndexing | GridSparsity | None) -> GridOptions:
    if options is None:
        return GridOptions()
    if isinstance(options, GridOptions):
        return options
    if isinstance(options, GridIndexing):
        return GridOptions(indexing=options)
    if isinstance(options, GridSparsity):
        return GridOptions(sparsity=options)
    raise TypeError(
        f"meshgrid: expected GridOptions, GridIndexing or GridSparsity, found {type(options).__name__}"
    )
