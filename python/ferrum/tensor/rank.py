"""Rank markers for typing tensors: ``Tensor[B, D2]`` is a rank-2 tensor.

They exist only for the type checker (and run-time subscripting); a tensor's
actual rank is ``t.rank()``.

Example:
    >>> from ferrum import D2, Tensor
    >>> from ferrum.backend import NdArray
    >>> x: Tensor[NdArray, D2] = Tensor.zeros((2, 3), NdArray.device())
    >>> x.rank()
    2
"""

from __future__ import annotations

from typing import ClassVar

__all__ = ["D1", "D2", "D3", "D4", "D5", "D6", "Rank"]


class Rank:
    """Base class of the rank markers."""

    rank: ClassVar[int]


class D1(Rank):
    """Rank 1: ``Tensor[B, D1]`` has 1 dim, such as ``[n]``."""

    rank = 1


class D2(Rank):
    """Rank 2: ``Tensor[B, D2]`` has 2 dims, such as ``[rows, cols]``."""

    rank = 2


class D3(Rank):
    """Rank 3: ``Tensor[B, D3]`` has 3 dims, such as ``[batch, rows, cols]``."""

    rank = 3


class D4(Rank):
    """Rank 4: ``Tensor[B, D4]`` has 4 dims, such as ``[batch, channels, height, width]``."""

    rank = 4


class D5(Rank):
    """Rank 5: ``Tensor[B, D5]`` has 5 dims, such as ``[batch, channels, depth, height, width]``."""

    rank = 5


class D6(Rank):
    """Rank 6: ``Tensor[B, D6]`` has 6 dims."""

    rank = 6
