"""``Transaction``: read several tensors' values in one go, as Burn's ``Transaction``.

Register tensors, then ``execute()`` returns their ``TensorData`` in
registration order. On ferrum's CPU backend every tensor is already
computed, so a transaction reads them one after the other; code written for
Burn's batched reads runs unchanged.

Example:
    >>> from ferrum import Tensor, Transaction
    >>> from ferrum.backend import NdArray
    >>> device = NdArray.device()
    >>> a, b = Tensor.from_floats([1.0, 2.0], device), Tensor.from_ints([3], device)
    >>> [data.to_list() for data in Transaction().register(a).register(b).execute()]
    [[1.0, 2.0], [3]]
"""

from __future__ import annotations

from typing import Any

from ferrum._ferrum import Tensor, TensorData

__all__ = ["Transaction"]


class Transaction:
    """Tensors whose values ``execute()`` reads together.

    Example:
        >>> from ferrum import Tensor, Transaction
        >>> from ferrum.backend import NdArray
        >>> t = Transaction().register(Tensor.zeros((2,), NdArray.device()))
        >>> len(t), t.execute()[0].shape
        (1, (2,))
    """

    def __init__(self) -> None:
        self._tensors: list[Tensor[Any, Any, Any]] = []

    def register(self, tensor: Tensor[Any, Any, Any]) -> Transaction:
        """Add ``tensor`` (of any backend, rank and kind); returns this transaction, for chaining."""
        if not isinstance(tensor, Tensor):
            raise TypeError(f"Transaction.register: expected a Tensor, found {type(tensor).__name__}")
        self._tensors.append(tensor)
        return self

    def execute(self) -> list[TensorData]:
        """The values of every registered tensor, in registration order."""
        return [tensor.to_data() for tensor in self._tensors]

    def __len__(self) -> int:
        return len(self._tensors)
