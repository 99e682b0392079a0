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
    rank = 1


class D2(Rank):
    rank = 2


class D3(Rank):
    rank = 3


class D4(Rank):
    rank = 4


class D5(Rank):
    rank = 5


class D6(Rank):
    rank = 6
