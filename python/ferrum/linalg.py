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

from ferrum._ferrum import Float, Int, KindError, ShapeError, Tensor
from ferrum.backend import Backend
from ferrum.rank import D1, Rank

__all__ = [
    "DEFAULT_EPSILON",
    "Norm",
    "cosine_similarity",
    "diag",
    "matvec",
    "outer",
    "trace",
    "vector_norm",
    "vector_normalize",
]

B = TypeVar("B", bound=Backend)
D = TypeVar("D", bound=Rank)
K = TypeVar("K", Float, Int)

DEFAULT_EPSILON = 1e-8
"""Burn's floor on each norm in ``cosine_similarity``."""


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
        return x.zeros_like().mask_fill(x.not_equal_elem(0.0), 1.0).sum_dim(dim)
    if n.kind == "L1":
        return x.abs().sum_dim(dim)
    if n.kind == "L2":
        return x.abs().square().sum_dim(dim).sqrt()
    if n.kind == "LInf":
        return x.max_abs_dim(dim)
    if n.kind == "LNegInf":
        return x.abs().min_dim(dim)
    return x.abs().powf_scalar(n.p).sum_dim(dim).powf_scalar(1.0 / n.p)


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
