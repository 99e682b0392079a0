"""``PartialDataset``: a contiguous range of another dataset, and ways to split one."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TypeVar

from ferrum.data.dataset.base import Dataset

__all__ = ["PartialDataset"]

ItemT = TypeVar("ItemT")


class PartialDataset(Dataset[ItemT]):
    """Items ``start`` (inclusive) to ``end`` (exclusive) of ``dataset``: Burn's ``PartialDataset``.

    Example:
        >>> from ferrum.data.dataset import InMemDataset, PartialDataset
        >>> list(PartialDataset(InMemDataset("abcde"), 1, 3))
        ['b', 'c']
        >>> [len(p) for p in PartialDataset.split(InMemDataset(range(10)), 3)]
        [3, 3, 4]
    """

    def __init__(self, dataset: Dataset[ItemT], start: int, end: int) -> None:
        size = dataset.len()
        if not 0 <= start <= end <= size:
            raise ValueError(
                f"PartialDataset range [{start}, {end}) is invalid for a dataset of length {size}: "
                "expected 0 <= start <= end <= length"
            )
        self._dataset = dataset
        self._start = start
        self._end = end

    @property
    def start(self) -> int:
        """First index of the range in the wrapped dataset."""
        return self._start

    @property
    def end(self) -> int:
        """One past the last index of the range in the wrapped dataset."""
        return self._end

    def get(self, index: int) -> ItemT | None:
        if not 0 <= index < self._end - self._start:
            return None
        return self._dataset.get(self._start + index)

    def len(self) -> int:
        return self._end - self._start

    @staticmethod
    def split(dataset: Dataset[ItemT], num: int) -> list[PartialDataset[ItemT]]:
        """``num`` consecutive parts of ``len // num`` items; the last also takes the remainder (as Burn)."""
        if num < 1:
            raise ValueError(f"PartialDataset.split num must be >= 1, found {num}")
        size = dataset.len()
        step = size // num
        bounds = [i * step for i in range(num)] + [size]
        return [PartialDataset(dataset, bounds[i], bounds[i + 1]) for i in range(num)]

    @staticmethod
    def split_at(dataset: Dataset[ItemT], index: int) -> tuple[PartialDataset[ItemT], PartialDataset[ItemT]]:
        """Items before ``index`` and items from ``index`` on.

        Example:
            >>> from ferrum.data.dataset import InMemDataset, PartialDataset
            >>> train, test = PartialDataset.split_at(InMemDataset(range(10)), 8)
            >>> len(train), len(test)
            (8, 2)
        """
        size = dataset.len()
        if not 0 <= index <= size:
            raise ValueError(f"PartialDataset.split_at index must be in [0, {size}], found {index}")
        return PartialDataset(dataset, 0, index), PartialDataset(dataset, index, size)

    @staticmethod
    def split_fractions(dataset: Dataset[ItemT], fractions: Sequence[float]) -> list[PartialDataset[ItemT]]:
        """Consecutive parts sized by ``fractions`` (summing to 1).

        Part ``k`` ends at ``round(len * (fractions[0] + ... + fractions[k]))``, so sizes add up exactly.

        Example:
            >>> from ferrum.data.dataset import InMemDataset, PartialDataset
            >>> [len(p) for p in PartialDataset.split_fractions(InMemDataset(range(10)), [0.7, 0.2, 0.1])]
            [7, 2, 1]
        """
        if not fractions or any(not 0.0 <= f <= 1.0 for f in fractions):
            raise ValueError(
                f"PartialDataset.split_fractions fractions must each be in [0, 1], found {list(fractions)}"
            )
        if not math.isclose(math.fsum(fractions), 1.0, abs_tol=1e-9):
            raise ValueError(
                f"PartialDataset.split_fractions fractions must sum to 1, found {math.fsum(fractions)}"
            )
        size = dataset.len()
        bounds = [0] + [
            min(round(math.fsum(fractions[: k + 1]) * size), size) for k in range(len(fractions) - 1)
        ]
        bounds.append(size)
        return [PartialDataset(dataset, bounds[i], bounds[i + 1]) for i in range(len(fractions))]
