"""``SelectionDataset``: a view of chosen (and possibly shuffled) indices of another dataset."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeAlias, TypeVar

import numpy as np

from ferrum.data.dataset.base import Dataset

__all__ = ["RngSource", "SelectionDataset", "iota", "shuffled_indices"]

ItemT = TypeVar("ItemT")

RngSource: TypeAlias = int | np.random.Generator | None
"""Where shuffling draws its randomness: a seed, a NumPy ``Generator`` (advanced by the draw) or
``None`` (fresh entropy from the system), as Burn's ``RngSource``."""


def _generator(rng: RngSource) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or (isinstance(rng, int | np.integer) and not isinstance(rng, bool)):
        return np.random.default_rng(None if rng is None else int(rng))
    raise TypeError(f"rng must be a seed (int), a numpy.random.Generator or None, found {type(rng).__name__}")


def iota(size: int) -> list[int]:
    """The indices ``0 .. size - 1``: Burn's ``iota``.

    Example:
        >>> from ferrum.data.dataset.selection import iota
        >>> iota(4)
        [0, 1, 2, 3]
    """
    if size < 0:
        raise ValueError(f"iota size must be >= 0, found {size}")
    return list(range(size))


def shuffled_indices(size: int, rng: RngSource = None) -> list[int]:
    """The indices ``0 .. size - 1`` in an order drawn from ``rng``: Burn's ``shuffled_indices``.

    The order is ``rng.permutation(size)`` of a NumPy ``Generator``, so the
    same seed always gives the same order (not the order Burn's ``StdRng``
    gives for that seed).

    Example:
        >>> from ferrum.data.dataset.selection import shuffled_indices
        >>> sorted(shuffled_indices(5, rng=7)) == [0, 1, 2, 3, 4]
        True
        >>> shuffled_indices(5, rng=7) == shuffled_indices(5, rng=7)
        True
    """
    if size < 0:
        raise ValueError(f"shuffled_indices size must be >= 0, found {size}")
    return [int(i) for i in _generator(rng).permutation(size)]


class SelectionDataset(Dataset[ItemT]):
    """The items of ``wrapped`` at ``indices``, in that order: Burn's ``SelectionDataset``.

    An index may appear several times. Only the indices are stored; items are
    read from ``wrapped`` on demand, and slices and splits share it.
    ``shuffle`` reorders the indices in place.

    Example:
        >>> from ferrum.data.dataset import InMemDataset, SelectionDataset
        >>> letters = InMemDataset("abcde")
        >>> list(SelectionDataset.from_indices_checked(letters, [4, 0, 0]))
        ['e', 'a', 'a']
        >>> shuffled = SelectionDataset.new_shuffled(letters, 42)
        >>> sorted(shuffled) == list("abcde")
        True
        >>> [list(part) for part in SelectionDataset.new_select_all(letters).split(2)]
        [['a', 'b'], ['c', 'd', 'e']]
    """

    def __init__(self, wrapped: Dataset[ItemT], indices: Iterable[int]) -> None:
        """Internal: the constructors below check or build the indices."""
        self.wrapped = wrapped
        """The dataset the indices point into."""
        self.indices: list[int] = [int(i) for i in indices]
        """The selected indices of ``wrapped``, in item order."""

    @staticmethod
    def from_indices_checked(dataset: Dataset[ItemT], indices: Iterable[int]) -> SelectionDataset[ItemT]:
        """The items of ``dataset`` at ``indices``; ``IndexError`` names the first index outside it."""
        selected = [int(i) for i in indices]
        size = dataset.len()
        for index in selected:
            if not 0 <= index < size:
                raise IndexError(f"Index out of bounds for wrapped dataset size: {index} >= {size}")
        return SelectionDataset(dataset, selected)

    @staticmethod
    def from_indices_unchecked(dataset: Dataset[ItemT], indices: Iterable[int]) -> SelectionDataset[ItemT]:
        """The items of ``dataset`` at ``indices``, not checked: an index outside reads as ``None``."""
        return SelectionDataset(dataset, indices)

    @staticmethod
    def new_select_all(dataset: Dataset[ItemT]) -> SelectionDataset[ItemT]:
        """Every item of ``dataset`` in its order (useful before ``shuffle``)."""
        return SelectionDataset(dataset, iota(dataset.len()))

    @staticmethod
    def new_shuffled(dataset: Dataset[ItemT], rng: RngSource = None) -> SelectionDataset[ItemT]:
        """Every item of ``dataset``, in the order ``shuffled_indices(len, rng)``."""
        selection = SelectionDataset.new_select_all(dataset)
        selection.shuffle(rng)
        return selection

    def shuffle(self, rng: RngSource = None) -> None:
        """Reorder the indices in place, by a permutation drawn from ``rng``.

        Slices and splits taken before keep their order.
        """
        order = _generator(rng).permutation(len(self.indices))
        self.indices = [self.indices[int(i)] for i in order]

    def slice(self, start: int, end: int) -> SelectionDataset[ItemT]:
        """The selection's items ``start`` (inclusive) to ``end`` (exclusive), as a new selection.

        It copies the indices (a later ``shuffle`` of either leaves the other
        alone) and shares ``wrapped``.
        """
        size = len(self.indices)
        if not 0 <= start <= end <= size:
            raise ValueError(
                f"SelectionDataset.slice range [{start}, {end}) is invalid for a selection of length {size}: "
                "expected 0 <= start <= end <= length"
            )
        return SelectionDataset(self.wrapped, self.indices[start:end])

    def split(self, num: int) -> list[SelectionDataset[ItemT]]:
        """``num`` consecutive slices of ``len // num`` items; the last also takes the remainder (as Burn)."""
        if num < 1:
            raise ValueError(f"SelectionDataset.split num must be >= 1, found {num}")
        size = len(self.indices)
        step = size // num
        bounds = [i * step for i in range(num)] + [size]
        return [self.slice(bounds[i], bounds[i + 1]) for i in range(num)]

    def get(self, index: int) -> ItemT | None:
        if not 0 <= index < len(self.indices):
            return None
        return self.wrapped.get(self.indices[index])

    def len(self) -> int:
        return len(self.indices)
