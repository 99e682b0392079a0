"""Linear algebra, as in Burn's ``burn::tensor::linalg``.

Every function composes differentiable tensor ops, so gradients flow on an
autodiff backend. Reductions keep the reduced dim (size 1), as Burn's do.

Example:
    >>> from ferrum import Tensor, linalg
    >>> from ferrum.backend import NdArray
    >>> x = Tensor.from_floats([[3.0, 4.0], [1.0, 0.0]], NdArray.device())
    >>> linalg.vector_norm(x, 2, 1).to_data().to_list()
    [[5.0], [1.0]]
    >>> linalg.trace(x).to_data().to_list()
    [3.0]
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar, TypeVar

from ferrum._ferrum import ArgumentError, Float, Int, KindError, ShapeError, Tensor
from ferrum.backend import Backend
from ferrum.tensor.rank import D1, D2, Rank

__all__ = [
    "DEFAULT_EPSILON",
    "LU_PIVOT_TOLERANCE",
    "Norm",
    "cosine_similarity",
    "diag",
    "l0_norm",
    "l1_norm",
    "l2_norm",
    "lp_norm",
    "lu_decomposition",
    "matvec",
    "max_abs_norm",
    "min_abs_norm",
    "outer",
    "outer_dim",
    "trace",
    "vector_norm",
    "vector_normalize",
]

B = TypeVar("B", bound=Backend)
D = TypeVar("D", bound=Rank)
K = TypeVar("K", Float, Int)

DEFAULT_EPSILON = 1e-8
"""Burn's floor on each norm in ``cosine_similarity``."""

LU_PIVOT_TOLERANCE = 1e-6
"""``lu_decomposition`` refuses a pivot whose magnitude is at most this (Burn's check)."""


@dataclasses.dataclass(frozen=True)
class Norm:
    """Which vector norm: ``Norm.L0`` (non-zeros), ``L1``, ``L2``, ``LInf`` (max abs), ``LNegInf``
    (min abs) or ``Norm.Lp(p)``; functions also take the number ``p`` (0, 1, 2, ``inf``, ...).

    Example:
        >>> from ferrum.linalg import Norm
        >>> Norm.of(2.0) == Norm.L2, Norm.of(3)
        (True, Norm.Lp(3.0))
    """

    kind: str
    p: float = 0.0

    L0: ClassVar[Norm]
    L1: ClassVar[Norm]
    L2: ClassVar[Norm]
    LInf: ClassVar[Norm]
    LNegInf: ClassVar[Norm]

    @staticmethod
    def Lp(p: float) -> Norm:
        """The ``p``-norm ``(sum |x|^p)^(1/p)``."""
        return Norm("Lp", float(p))

    @staticmethod
    def of(value: Norm | float) -> Norm:
        """``value`` as a ``Norm`` (Burn's ``From<f64>``: 0, 1, 2 and the infinities by name)."""
        if isinstance(value, Norm):
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
            raise TypeError(f"a norm is a Norm or a number p, found {value!r}")
        named = {0.0: Norm.L0, 1.0: Norm.L1, 2.0: Norm.L2, math.inf: Norm.LInf, -math.inf: Norm.LNegInf}
        return named.get(float(value), Norm.Lp(value))

    def __repr__(self) -> str:
        return f"Norm.Lp({self.p})" if self.kind == "Lp" else f"Norm.{self.kind}"


Norm.L0, Norm.L1, Norm.L2 = Norm("L0"), Norm("L1"), Norm("L2")
Norm.LInf, Norm.LNegInf = Norm("LInf"), Norm("LNegInf")


def vector_norm(x: Tensor[B, D, Float], norm: Norm | float, dim: int) -> Tensor[B, D, Float]:
    """The ``norm`` of ``x`` along ``dim`` (kept with size 1).

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.linalg import Norm, vector_norm
        >>> x = Tensor.from_floats([1.0, -2.0, 0.0], NdArray.device())
        >>> [vector_norm(x, n, 0).into_scalar() for n in (0, 1, Norm.LInf, Norm.LNegInf)]
        [2.0, 3.0, 2.0, 0.0]
    """
    n = Norm.of(norm)
    if n.kind == "L0":
        return l0_norm(x, dim)
    if n.kind == "L1":
        return l1_norm(x, dim)
    if n.kind == "L2":
        return l2_norm(x, dim)
    if n.kind == "LInf":
        return max_abs_norm(x, dim)
    if n.kind == "LNegInf":
        return min_abs_norm(x, dim)
    return lp_norm(x, n.p, dim)


def l0_norm(x: Tensor[B, D, K], dim: int) -> Tensor[B, D, K]:
    """The number of non-zero entries along ``dim`` (kept with size 1), in ``x``'s kind.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.linalg import l0_norm
        >>> l0_norm(Tensor.from_ints([[3, 0, -1], [0, 0, 0]], NdArray.device()), 1).to_data().to_list()
        [[2], [0]]
    """
    return x.zeros_like().mask_fill(x.not_equal_elem(0), 1).sum_dim(dim)


def l1_norm(x: Tensor[B, D, K], dim: int) -> Tensor[B, D, K]:
    """The sum of absolute values along ``dim`` (kept with size 1), in ``x``'s kind.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.linalg import l1_norm
        >>> l1_norm(Tensor.from_ints([[3, 0, -1]], NdArray.device()), 1).to_data().to_list()
        [[4]]
    """
    return x.abs().sum_dim(dim)


def l2_norm(x: Tensor[B, D, Float], dim: int) -> Tensor[B, D, Float]:
    """The Euclidean norm along ``dim`` (kept with size 1).

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.linalg import l2_norm
        >>> l2_norm(Tensor.from_floats([[3.0, -4.0]], NdArray.device()), 1).to_data().to_list()
        [[5.0]]
    """
    return x.abs().square().sum_dim(dim).sqrt()


def lp_norm(x: Tensor[B, D, Float], p: float, dim: int) -> Tensor[B, D, Float]:
    """``(sum |x|^p)^(1/p)`` along ``dim`` (kept with size 1).

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.linalg import lp_norm
        >>> lp_norm(Tensor.from_floats([[1.0, 1.0, 1.0, 1.0]], NdArray.device()), 0.5, 1).to_data().to_list()
        [[16.0]]
    """
    return x.abs().powf_scalar(p).sum_dim(dim).powf_scalar(1.0 / p)


def max_abs_norm(x: Tensor[B, D, K], dim: int) -> Tensor[B, D, K]:
    """The largest absolute value along ``dim`` (kept with size 1): the L-infinity norm.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.linalg import max_abs_norm
        >>> max_abs_norm(Tensor.from_ints([[3, 0, -7]], NdArray.device()), 1).to_data().to_list()
        [[7]]
    """
    return x.max_abs_dim(dim)


def min_abs_norm(x: Tensor[B, D, K], dim: int) -> Tensor[B, D, K]:
    """The smallest absolute value along ``dim`` (kept with size 1): the L-negative-infinity norm.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.linalg import min_abs_norm
        >>> min_abs_norm(Tensor.from_ints([[3, -2, -7]], NdArray.device()), 1).to_data().to_list()
        [[2]]
    """
    return x.abs().min_dim(dim)


def vector_normalize(x: Tensor[B, D, Float], norm: Norm | float, dim: int, eps: float) -> Tensor[B, D, Float]:
    """``x / max(norm(x), eps)`` along ``dim``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.linalg import vector_normalize
        >>> x = Tensor.from_floats([3.0, 4.0], NdArray.device())
        >>> [round(v, 6) for v in vector_normalize(x, 2, 0, 1e-12).to_data().to_list()]
        [0.6, 0.8]
    """
    return x / vector_norm(x, norm, dim).clamp_min(eps)


def cosine_similarity(
    x1: Tensor[B, D, Float], x2: Tensor[B, D, Float], dim: int, eps: float | None = None
) -> Tensor[B, D, Float]:
    """``x1 . x2 / (max(|x1|, eps) * max(|x2|, eps))`` along ``dim`` (kept with size 1); ``eps``
    defaults to 1e-8.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.linalg import cosine_similarity
        >>> device = NdArray.device()
        >>> a, b = Tensor.from_floats([[1.0, 0.0]], device), Tensor.from_floats([[1.0, 1.0]], device)
        >>> round(cosine_similarity(a, b, 1).into_scalar(), 4)
        0.7071
    """
    floor = DEFAULT_EPSILON if eps is None else eps
    dot = (x1 * x2).sum_dim(dim)
    return dot / (
        vector_norm(x1, Norm.L2, dim).clamp_min(floor) * vector_norm(x2, Norm.L2, dim).clamp_min(floor)
    )


def diag(tensor: Tensor[B, Any, K]) -> Tensor[B, Any, K]:
    """The main diagonal of the last two dims: ``[..., rows, cols] -> [..., min(rows, cols)]``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.linalg import diag
        >>> diag(Tensor.from_data([[1, 2, 3], [4, 5, 6]], NdArray.device())).to_data().to_list()
        [1, 5]
    """
    dims = tensor.dims()
    if len(dims) < 2:
        raise ShapeError(
            f"diag: expected a tensor of rank >= 2 ([..., rows, cols]), found shape {list(dims)}"
        )
    if tensor.kind not in (Float, Int):
        raise KindError(f"diag: expected a Float or Int tensor, found kind {tensor.kind.__name__}")
    *lead, rows, cols = dims
    n = min(rows, cols)
    flat = tensor.reshape((*lead, rows * cols))
    index: Tensor[B, D1, Int] = (
        Tensor.arange_step(0, n * (cols + 1), cols + 1, tensor.device())
        if n
        else Tensor.zeros((0,), tensor.device(), Int)
    )
    return flat.select(len(lead), index)


def trace(tensor: Tensor[B, Any, Float]) -> Tensor[B, Any, Float]:
    """The sum of the main diagonal of the last two dims: ``[..., rows, cols] -> [..., 1]``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.linalg import trace
        >>> trace(Tensor.from_floats([[[1.0, 2.0], [3.0, 4.0]]], NdArray.device())).to_data().to_list()
        [[5.0]]
    """
    return diag(tensor).sum_dim(-1)


def outer(x: Tensor[B, Any, K], y: Tensor[B, Any, K]) -> Tensor[B, Any, K]:
    """The outer product over the last dim: ``[..., n], [..., m] -> [..., n, m]`` (batch dims broadcast).

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.linalg import outer
        >>> device = NdArray.device()
        >>> x, y = Tensor.from_floats([1.0, 2.0], device), Tensor.from_floats([3.0, 4.0, 5.0], device)
        >>> outer(x, y).to_data().to_list()
        [[3.0, 4.0, 5.0], [6.0, 8.0, 10.0]]
    """
    rank = len(x.dims())
    if rank != len(y.dims()) or rank == 0:
        raise ShapeError(
            f"outer: expected two tensors of the same rank >= 1, found {list(x.dims())} and {list(y.dims())}"
        )
    return x.unsqueeze_dim(rank) * y.unsqueeze_dim(rank - 1)


def outer_dim(x: Tensor[B, Any, K], y: Tensor[B, Any, K], dim: int) -> Tensor[B, Any, K]:
    """The outer product along ``dim`` (negative counts from the end), broadcasting the other dims:
    ``x [..., n, ...]`` and ``y [..., m, ...]`` give ``[..., n, m, ...]``, with
    ``out[..., i, j, ...] = x[..., i, ...] * y[..., j, ...]``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.linalg import outer_dim
        >>> device = NdArray.device()
        >>> x = Tensor.from_floats([[1.0, 10.0], [2.0, 20.0]], device)  # the product runs down dim 0
        >>> y = Tensor.from_floats([[1.0, 1.0], [0.0, 1.0], [3.0, 1.0]], device)
        >>> outer_dim(x, y, 0).shape()
        (2, 3, 2)
        >>> outer_dim(x, y, 0).to_data().to_list()[1]
        [[2.0, 20.0], [0.0, 20.0], [6.0, 20.0]]
    """
    rank = len(x.dims())
    if rank != len(y.dims()) or rank == 0:
        raise ShapeError(
            "outer_dim: expected two tensors of the same rank >= 1,"
            f" found {list(x.dims())} and {list(y.dims())}"
        )
    if isinstance(dim, bool) or not isinstance(dim, int) or not -rank <= dim < rank:
        raise ShapeError(
            f"outer_dim: dim must be in [{-rank}, {rank}) for rank-{rank} tensors, found {dim!r}"
        )
    d = dim % rank
    return x.unsqueeze_dim(d + 1) * y.unsqueeze_dim(d)


def matvec(matrix: Tensor[B, Any, K], vector: Tensor[B, Any, K]) -> Tensor[B, Any, K]:
    """``matrix @ vector``: ``[..., rows, cols], [..., cols] -> [..., rows]`` (batch dims broadcast).

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.linalg import matvec
        >>> device = NdArray.device()
        >>> m = Tensor.from_floats([[1.0, 2.0], [3.0, 4.0]], device)
        >>> matvec(m, Tensor.from_floats([1.0, 1.0], device)).to_data().to_list()
        [3.0, 7.0]
    """
    m, v = matrix.dims(), vector.dims()
    if len(m) < 2 or len(v) != len(m) - 1:
        raise ShapeError(
            "matvec: expected a matrix [..., rows, cols] and a vector [..., cols] one rank lower,"
            f" found {list(m)} and {list(v)}"
        )
    if m[-1] != v[-1]:
        raise ShapeError(
            f"matvec: the matrix has {m[-1]} columns but the vector {v[-1]} entries"
            f" (shapes {list(m)} and {list(v)})"
        )
    out = matrix @ vector.unsqueeze_dim(len(v))
    return out.squeeze_dim(len(m) - 1)


def lu_decomposition(tensor: Tensor[B, D2, Float]) -> tuple[Tensor[B, D2, Float], Tensor[B, D1, Int]]:
    """LU decomposition with partial pivoting of a square matrix: ``(lu, perm)`` with ``A[perm] = L @ U``.

    ``lu`` ``[n, n]`` packs ``U`` (upper triangle with the diagonal) and the multipliers
    of the unit lower-triangular ``L`` (strictly below the diagonal; ``L``'s ones are
    not stored). ``perm`` ``[n]`` (Int) lists, for each row of ``L @ U``, the row of
    ``A`` it came from. Each step swaps in the row with the largest magnitude in the
    current column, as Burn does; the result is differentiable in ``A`` for a fixed
    pivot order (the pivots are chosen on values read back, one read per column).

    Raises:
        ShapeError: ``tensor`` is not a square rank-2 matrix.
        KindError: ``tensor`` is not Float.
        ArgumentError: a pivot's magnitude is at most ``LU_PIVOT_TOLERANCE`` (1e-6) or not
            a number: the matrix is singular or nearly so.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.linalg import lu_decomposition
        >>> lu, perm = lu_decomposition(Tensor.from_floats([[1.0, 2.0], [4.0, 4.0]], NdArray.device()))
        >>> lu.to_data().to_list(), perm.to_data().to_list()
        ([[4.0, 4.0], [0.25, 1.0]], [1, 0])
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"lu_decomposition: expected a Tensor, found {type(tensor).__name__}")
    if tensor.kind is not Float:
        raise KindError(f"lu_decomposition: expected a Float tensor, found kind {tensor.kind.__name__}")
    dims = tensor.dims()
    if len(dims) != 2 or dims[0] != dims[1]:
        raise ShapeError(f"lu_decomposition: expected a square matrix [n, n], found shape {list(dims)}")
    n = dims[0]
    device = tensor.device()
    lu = tensor
    rows = list(range(n))
    for k in range(n):
        # One read per column: pivot choice is data-dependent, as in Burn (argmax, first of ties).
        column = [float(v) for v in lu.slice([slice(k, n), (k, k + 1)]).abs().to_data().to_vec()]
        offset = max(range(len(column)), key=lambda i: (column[i], -i))
        p, pivot = k + offset, column[offset]
        if not pivot > LU_PIVOT_TOLERANCE:
            raise ArgumentError(
                f"lu_decomposition: the matrix is singular or nearly so: pivot {pivot:g} in column {k}"
                f" (after {k} elimination steps) has magnitude <= {LU_PIVOT_TOLERANCE:g}"
            )
        if p != k:
            row_k, row_p = lu.slice([(k, k + 1)]), lu.slice([(p, p + 1)])
            lu = lu.slice_assign([(k, k + 1)], row_p).slice_assign([(p, p + 1)], row_k)
            rows[k], rows[p] = rows[p], rows[k]
        if k == n - 1:
            break
        multipliers = lu.slice([slice(k + 1, n), (k, k + 1)]) / lu.slice([(k, k + 1), (k, k + 1)])
        lu = lu.slice_assign([slice(k + 1, n), (k, k + 1)], multipliers)
        # Burn updates the trailing rows one by one; the rank-1 update below computes the
        # same a_ij - l_ik * u_kj for every element, in one op.
        trailing = lu.slice([slice(k + 1, n), slice(k + 1, n)])
        update = multipliers * lu.slice([(k, k + 1), slice(k + 1, n)])
        lu = lu.slice_assign([slice(k + 1, n), slice(k + 1, n)], trailing - update)
    perm: Tensor[B, D1, Int] = Tensor.arange(0, n, device)
    if rows != list(range(n)):
        perm = Tensor.from_ints(rows, device)
    return lu, perm
