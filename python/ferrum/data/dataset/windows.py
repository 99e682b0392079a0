"""``WindowsDataset``: sliding windows of consecutive items."""

from __future__ import annotations

from typing import TypeVar

from ferrum.data.dataset.base import Dataset

__all__ = ["WindowsDataset"]

ItemT = TypeVar("ItemT")


class WindowsDataset(Dataset[list[ItemT]]):
    """Windows of ``size`` consecutive items, one starting at each index: Burn's ``WindowsDataset``.

    A dataset of ``n`` items has ``max(n - size + 1, 0)`` windows.

    Example:
        >>> from ferrum.data.dataset import InMemDataset, WindowsDataset
        >>> list(WindowsDataset(InMemDataset([1, 2, 3, 4]), 3))
        [[1, 2, 3], [2, 3, 4]]
    """

    def __init__(self, dataset: Dataset[ItemT], size: int) -> None:
        if size < 1:
            raise ValueError(f"WindowsDataset size must be >= 1, found {size}")
        self._dataset = dataset
        self._size = size

    @property
    def size(self) -> int:
        """The number of items in each window."""
        return self._size

    def get(self, index: int) -> list[ItemT] | None:
        if not 0 <= index < self.len():
            return None
        window: list[ItemT] = []
        for position in range(index, index + self._size):
            item = self._dataset.get(position)
            if item is None:
                return None
            window.append(item)
        return window

    def len(self) -> int:
        return max(self._dataset.len() - self._size + 1, 0)
