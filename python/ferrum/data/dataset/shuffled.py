"""``ShuffledDataset``: a dataset read through a seeded random permutation."""

from __future__ import annotations

from typing import TypeVar

import numpy as np

from ferrum.data.dataset.base import Dataset

__all__ = ["ShuffledDataset"]

ItemT = TypeVar("ItemT")


class ShuffledDataset(Dataset[ItemT]):
    """The items of ``dataset`` in an order drawn once from ``seed``: Burn's ``ShuffledDataset``.

    Only the permutation of indices is stored; items are read lazily. The same
    seed gives the same order; ``seed=None`` draws a fresh order.

    Example:
        >>> from ferrum.data.dataset import InMemDataset, ShuffledDataset
        >>> shuffled = ShuffledDataset(InMemDataset(range(5)), seed=42)
        >>> sorted(shuffled) == [0, 1, 2, 3, 4]
        True
    """

    def __init__(self, dataset: Dataset[ItemT], seed: int | None = None) -> None:
        self._dataset = dataset
        self._indices = np.random.default_rng(seed).permutation(dataset.len())

    def get(self, index: int) -> ItemT | None:
        if not 0 <= index < len(self._indices):
            return None
        return self._dataset.get(int(self._indices[index]))

    def len(self) -> int:
        return len(self._indices)
