"""Coordinate grids: Burn's ``burn::tensor::grid`` (``meshgrid``, ``meshgrid_stack``, ``affine_grid_2d``).

``meshgrid(tensors)`` turns ``n`` tensors of lengths ``(s1, ..., sn)`` into
``n`` tensors of shape ``(s1, ..., sn)``: the ``i``-th holds ``tensors[i]``
along dim ``i``. ``GridIndexing.Cartesian`` swaps the first two dims (x
varies along columns, as NumPy's ``indexing="xy"``); ``GridSparsity.Sparse``
keeps size-1 dims instead of expanding. For integer index grids see
``Tensor.cartesian_grid``. ``affine_grid_2d`` maps an image's normalised pixel
coordinates through affine transforms, for ``Tensor.grid_sample_2d``.

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

from ferrum._ferrum import Float, KindError, ShapeError, Tensor
from ferrum.backend import Backend
from ferrum.tensor.rank import D1, D3, D4

__all__ = [
    "GridIndexing",
    "GridOptions",
    "GridSparsity",
    "IndexPos",
    "affine_grid_2d",
    "meshgrid",
    "meshgrid_stack",
]

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


def affine_grid_2d(transform: Tensor[B, D3, Float], dims: Sequence[int]) -> Tensor[B, D4, Float]:
    """The sampling grid of a batch of 2-d affine transforms: ``[batch, 2, 3] -> [batch, height, width, 2]``.

    ``dims`` is the image's ``(batch, channels, height, width)``. Entry ``[b, i, j]``
    is ``transform[b] @ (x_j, y_i, 1)``, where ``x_j`` and ``y_i`` run evenly from -1
    (the first pixel's centre) to 1 (the last one's): PyTorch's
    ``affine_grid(theta, size, align_corners=True)``, the only convention Burn has.
    The last dim holds ``(x, y)``, as ``Tensor.grid_sample_2d(grid, align_corners=True)``
    reads it. A ``transform`` with batch 1 serves every image of the batch. A height
    or width of 1 puts its one coordinate at 0, as PyTorch does.

    Raises:
        ShapeError: ``transform`` is not ``[batch, 2, 3]`` (or ``[1, 2, 3]``), or ``dims``
            is not four sizes with height and width at least 1.
        KindError: ``transform`` is not Float.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.grid import affine_grid_2d
        >>> shift_right = Tensor.from_floats([[[1.0, 0.0, 0.5], [0.0, 1.0, 0.0]]], NdArray.device())
        >>> grid = affine_grid_2d(shift_right, (1, 3, 2, 3))
        >>> grid.shape()
        (1, 2, 3, 2)
        >>> grid.to_data().to_list()[0][0]
        [[-0.5, -1.0], [0.5, -1.0], [1.5, -1.0]]
    """
    if not isinstance(transform, Tensor):
        raise TypeError(f"affine_grid_2d: expected a Tensor transform, found {type(transform).__name__}")
    if transform.kind is not Float:
        raise KindError(f"affine_grid_2d: expected a Float transform, found kind {transform.kind.__name__}")
    sizes = tuple(dims) if isinstance(dims, Sequence) else ()
    if len(sizes) != 4 or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in sizes):
        raise ShapeError(
            f"affine_grid_2d: dims must be four sizes (batch, channels, height, width), found {dims!r}"
        )
    batch, _channels, height, width = sizes
    if height < 1 or width < 1:
        raise ShapeError(f"affine_grid_2d: height and width must be at least 1, found {height} and {width}")
    shape = transform.dims()
    if len(shape) != 3 or shape[1:] != (2, 3) or shape[0] not in (batch, 1):
        raise ShapeError(
            f"affine_grid_2d: expected a transform of shape [{batch}, 2, 3] (or [1, 2, 3])"
            f" for dims {list(sizes)}, found {list(shape)}"
        )
    device, dtype = transform.device(), transform.dtype
    xs = _unit_coordinates(width, device, dtype).reshape((1, 1, width)).expand((batch, height, width))
    ys = _unit_coordinates(height, device, dtype).reshape((1, height, 1)).expand((batch, height, width))
    row_x, row_y = transform.slice([slice(None), (0, 1)]), transform.slice([slice(None), (1, 2)])
    a11, a12, tx = (row_x.slice([slice(None), slice(None), (j, j + 1)]) for j in range(3))
    a21, a22, ty = (row_y.slice([slice(None), slice(None), (j, j + 1)]) for j in range(3))
    grid_x = a11 * xs + a12 * ys + tx
    grid_y = a21 * xs + a22 * ys + ty
    return Tensor.stack([grid_x, grid_y], 3)


def _unit_coordinates(size: int, device: Any, dtype: Any) -> Tensor[Any, D1, Float]:
    """``size`` points from -1 to 1, the ends included (0 alone when ``size`` is 1)."""
    index: Tensor[Any, D1, Float] = Tensor.arange(0, size, device).float().cast(dtype)
    if size == 1:
        # Burn divides by size - 1 = 0 here (NaN); PyTorch's affine_grid gives 0.
        return index
    return index.div_scalar((size - 1) / 2.0).sub_scalar(1.0)


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
