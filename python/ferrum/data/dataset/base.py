"""The ``Dataset`` interface: indexed, sized access to items of one type."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import Generic, TypeVar

__all__ = ["Dataset"]

ItemT_co = TypeVar("ItemT_co", covariant=True)


class Dataset(ABC, Generic[ItemT_co]):
    """Items of type ``I``, read by index: Burn's ``Dataset<I>``.

    Subclasses implement ``get`` (``None`` past the end, as Burn's
    ``Option``) and ``len``; iteration, ``len()`` and ``dataset[i]`` follow.
    ``Dataset[I]`` is subscriptable at run time.

    Example:
        >>> from ferrum.data.dataset import Dataset
        >>> class Squares(Dataset[int]):
        ...     def get(self, index: int) -> int | None:
        ...         return index * index if 0 <= index < 4 else None
        ...     def len(self) -> int:
        ...         return 4
        >>> list(Squares()), Squares()[-1], Squares().get(4)
        ([0, 1, 4, 9], 9, None)
    """

    @abstractmethod
    def get(self, index: int) -> ItemT_co | None:
        """The item at ``index``, or ``None`` when ``index`` is outside ``[0, len)``."""

    @abstractmethod
    def len(self) -> int:
        """The number of items."""

    def is_empty(self) -> bool:
        """Whether the dataset holds no item."""
        return self.len() == 0

    def iter(self) -> Iterator[ItemT_co]:
        """The items in index order."""
        for index in range(self.len()):
            item = self.get(index)
            if item is None:
                raise IndexError(
                    f"{type(self).__name__}.get({index}) returned None although len() is {self.len()}"
                )
            yield item

    def __iter__(self) -> Iterator[ItemT_co]:
        return self.iter()

    def __len__(self) -> int:
        return self.len()

    def __getitem__(self, index: int) -> ItemT_co:
        """``dataset[i]``: negative indices count from the end; out of range raises ``IndexError``."""
        if not isinstance(index, int):
            raise TypeError(f"{type(self).__name__} indices must be integers, found {type(index).__name__}")
        size = self.len()
        position = index + size if index < 0 else index
        item = self.get(position) if 0 <= position < size else None
        if item is None:
            raise IndexError(f"index {index} is out of range for {type(self).__name__} of length {size}")
        return item

    def __repr__(self) -> str:
        return f"{type(self).__name__}(len={self.len()})"
