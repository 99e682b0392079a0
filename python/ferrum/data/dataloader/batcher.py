"""``Batcher``: how a list of dataset items becomes one batch."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Generic, TypeVar

__all__ = ["Batcher"]

ItemT_contra = TypeVar("ItemT_contra", contravariant=True)
BatchT_co = TypeVar("BatchT_co", covariant=True)


class Batcher(ABC, Generic[ItemT_contra, BatchT_co]):
    """Turns the items of one batch into a batch value (usually tensors): Burn's ``Batcher<I, O>``.

    With ``num_workers > 0`` the data loader calls ``batch`` from several
    threads at once, so it must not mutate shared state. ``Batcher[I, O]`` is
    subscriptable at run time.

    Example:
        >>> from ferrum import D1, Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.data.dataloader import Batcher
        >>> class Stack(Batcher[float, Tensor[NdArray, D1]]):
        ...     def batch(self, items: list[float]) -> Tensor[NdArray, D1]:
        ...         return Tensor.from_floats(items, NdArray.device())
        >>> Stack().batch([1.0, 2.0]).dims()
        (2,)
    """

    @abstractmethod
    def batch(self, items: list[ItemT_contra]) -> BatchT_co:
        """The batch made of ``items`` (in the loader's order, never empty)."""
