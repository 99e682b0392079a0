"""A dataset that breaks its own contract: ``get`` returns None for an index inside its length."""

from __future__ import annotations

from ferrum.data.dataset import Dataset


class Holey(Dataset[int]):
    """Items ``0..length-1`` (each item its index), except that ``get(hole)`` returns None."""

    def __init__(self, hole: int, length: int) -> None:
        self.hole = hole
        self.length = length

    def get(self, index: int) -> int | None:
        return None if index == self.hole else index

    def len(self) -> int:
        return self.length
