"""``Batcher``: how a list of dataset items becomes one batch."""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from typing import Any, Generic, TypeVar

__all__ = ["Batcher", "takes_device"]

ItemT_contra = TypeVar("ItemT_contra", contravariant=True)
BatchT_co = TypeVar("BatchT_co", covariant=True)


class Batcher(ABC, Generic[ItemT_contra, BatchT_co]):
    """Turns the items of one batch into a batch value (usually tensors): Burn's ``Batcher``.

    Two forms: ferrum's ``batch(self, items)``, for a batcher that holds its
    device, and Burn 0.20's ``batch(self, items, device)``, which receives the
    data loader's device (``DataLoaderBuilder.set_device``,
    ``DataLoader.to_device``; the Learner moves its loaders to the model's
    device). With ``num_workers > 0`` the data loader calls ``batch`` from
    several threads at once, so it must not mutate shared state.
    ``Batcher[I, O]`` is subscriptable at run time.

    Example:
        >>> from ferrum import D1, Device, Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.data.dataloader import Batcher
        >>> class Stack(Batcher[float, Tensor[NdArray, D1]]):
        ...     def batch(self, items: list[float], device: Device[NdArray]) -> Tensor[NdArray, D1]:
        ...         return Tensor.from_floats(items, device)
        >>> Stack().batch([1.0, 2.0], NdArray.device()).dims()
        (2,)
    """

    @abstractmethod
    def batch(self, items: list[ItemT_contra], *args: Any, **kwargs: Any) -> BatchT_co:
        """The batch made of ``items`` (in the loader's order, never empty), on ``device`` in Burn's form."""


def takes_device(batcher: Batcher[Any, Any]) -> bool:
    """Whether ``batcher.batch`` has Burn 0.20's form ``batch(items, device)``.

    Example:
        >>> from ferrum.data.dataloader import Batcher
        >>> class Total(Batcher[int, int]):
        ...     def batch(self, items: list[int]) -> int:
        ...         return sum(items)
        >>> takes_device(Total())
        False
    """
    try:
        parameters = list(inspect.signature(batcher.batch).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [
        p
        for p in parameters
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    return len(positional) >= 2 or any(p.name == "device" for p in parameters)
