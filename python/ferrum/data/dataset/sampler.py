"""``SamplerDataset``: a dataset of a chosen size drawn at random from another."""

from __future__ import annotations

from typing import TypeVar

import numpy as np

from ferrum.data.dataset.base import Dataset
from ferrum.data.dataset.shuffled import read_through

__all__ = ["SamplerDataset"]

ItemT = TypeVar("ItemT")


class SamplerDataset(Dataset[ItemT]):
    """``size`` items drawn from ``dataset``: Burn's ``SamplerDataset``.

    With replacement every item is drawn uniformly and independently. Without
    replacement the draws walk through random permutations of the whole
    dataset, one after the other, so no item repeats before every item has
    been drawn. The draw is fixed at construction from ``seed`` (``None``:
    a fresh draw), so ``get(i)`` always returns the same item; items are
    read lazily.

    Example:
        >>> from ferrum.data.dataset import InMemDataset, SamplerDataset
        >>> sampled = SamplerDataset.without_replacement(InMemDataset(range(3)), 6, seed=0)
        >>> len(sampled), sorted(sampled)
        (6, [0, 0, 1, 1, 2, 2])
    """

    def __init__(
        self, dataset: Dataset[ItemT], size: int, *, replacement: bool = True, seed: int | None = None
    ) -> None:
        if size < 0:
            raise ValueError(f"SamplerDataset size must be >= 0, found {size}")
        source_len = dataset.len()
        if source_len == 0 and size > 0:
            raise ValueError(f"SamplerDataset cannot draw {size} items from an empty dataset")
        rng = np.random.default_rng(seed)
        if replacement:
            indices = rng.integers(0, max(source_len, 1), size=size)
        else:
            passes = -(-size // source_len) if size else 0
            indices = np.concatenate(
                [rng.permutation(source_len) for _ in range(passes)] or [np.empty(0, int)]
            )
        self._dataset = dataset
        self._indices = indices[:size]

    @staticmethod
    def with_replacement(
        dataset: Dataset[ItemT], size: int, *, seed: int | None = None
    ) -> SamplerDataset[ItemT]:
        """``size`` independent uniform draws from ``dataset``."""
        return SamplerDataset(dataset, size, replacement=True, seed=seed)

    @staticmethod
    def without_replacement(
        dataset: Dataset[ItemT], size: int, *, seed: int | None = None
    ) -> SamplerDataset[ItemT]:
        """``size`` draws that exhaust ``dataset`` before any item repeats."""
        return SamplerDataset(dataset, size, replacement=False, seed=seed)

    def get(self, index: int) -> ItemT | None:
        return read_through(self._dataset, self._indices, index)

    def len(self) -> int:
        return len(self._indices)
