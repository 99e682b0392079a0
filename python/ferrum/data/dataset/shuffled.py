"""``ShuffledDataset``: a dataset read through a seeded random permutation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import numpy as np

from ferrum.data.dataset.base import Dataset

__all__ = ["ShuffledDataset"]

ItemT = TypeVar("ItemT")


def read_through(dataset: Dataset[ItemT], indices: Sequence[int] | np.ndarray, index: int) -> ItemT | None:
    """Item ``indices[index]`` of ``dataset``; None when ``index`` is outside ``indices``."""
    if not 0 <= index < len(indices):
        return None
    return dataset.get(int(indices[index]))


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
        return read_through(self._dataset, self._indices, index)

    def len(self) -> int:
        return len(self._indices)
