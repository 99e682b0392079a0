"""``ComposedDataset``: several datasets read one after the other."""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from typing import TypeVar

from ferrum.data.dataset.base import Dataset

__all__ = ["ComposedDataset"]

ItemT = TypeVar("ItemT")


class ComposedDataset(Dataset[ItemT]):
    """The concatenation of ``datasets``: Burn's ``ComposedDataset``.

    Example:
        >>> from ferrum.data.dataset import ComposedDataset, InMemDataset
        >>> list(ComposedDataset([InMemDataset([1, 2]), InMemDataset([3])]))
        [1, 2, 3]
    """

    def __init__(self, datasets: Sequence[Dataset[ItemT]]) -> None:
        self._datasets = list(datasets)
        # Cumulative ends let get() find the owning dataset by bisection.
        self._ends = list(itertools.accumulate(d.len() for d in self._datasets))

    def get(self, index: int) -> ItemT | None:
        if not 0 <= index < self.len():
            return None
        which = bisect.bisect_right(self._ends, index)
        start = self._ends[which - 1] if which else 0
        return self._datasets[which].get(index - start)

    def len(self) -> int:
        return self._ends[-1] if self._ends else 0
