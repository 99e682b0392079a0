"""``MapperDataset``: a dataset whose items are transformed as they are read."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Generic, TypeVar

from ferrum.data.dataset.base import Dataset

__all__ = ["Mapper", "MapperDataset"]

ItemT = TypeVar("ItemT")
OutT = TypeVar("OutT")
I_contra = TypeVar("I_contra", contravariant=True)
O_co = TypeVar("O_co", covariant=True)


class Mapper(ABC, Generic[I_contra, O_co]):
    """A transformation of one item: Burn's ``Mapper<I, O>``.

    Any callable ``I -> O`` works as well wherever a mapper is expected.

    Example:
        >>> from ferrum.data.dataset import Mapper
        >>> class Double(Mapper[int, int]):
        ...     def map(self, item: int) -> int:
        ...         return 2 * item
        >>> Double().map(4)
        8
    """

    @abstractmethod
    def map(self, item: I_contra) -> O_co:
        """The transformed item."""


class MapperDataset(Dataset[OutT]):
    """The items of ``dataset`` passed through ``mapper`` on each read: Burn's ``MapperDataset``.

    Example:
        >>> from ferrum.data.dataset import InMemDataset, MapperDataset
        >>> list(MapperDataset(InMemDataset([1, 2, 3]), lambda x: x * 10))
        [10, 20, 30]
    """

    def __init__(
        self, dataset: Dataset[ItemT], mapper: Mapper[ItemT, OutT] | Callable[[ItemT], OutT]
    ) -> None:
        self._dataset = dataset
        self._map: Callable[[ItemT], OutT] = mapper.map if isinstance(mapper, Mapper) else mapper

    def get(self, index: int) -> OutT | None:
        item = self._dataset.get(index)
        return None if item is None else self._map(item)

    def len(self) -> int:
        return self._dataset.len()
