"""``TensorCache``: what autoregressive inference keeps between steps (Burn's ``burn::nn::cache``).

A decoder that generates one token at a time recomputes nothing for the tokens
it already saw: each layer keeps its last output in a cache and computes only
the newest position (``forward_autoregressive``), or keeps a result that does
not change between steps, such as the projection of the encoder's memory
(``forward_full``). Caches are mutable objects, updated in place, as Burn's
``&mut`` caches are.

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import NdArray
    >>> from ferrum.nn.cache import TensorCache
    >>> device = NdArray.device()
    >>> cache = TensorCache()
    >>> double = lambda t: t * 2.0
    >>> cache.forward_autoregressive(Tensor.ones((1, 1, 2), device), 1, double).dims()
    (1, 1, 2)
    >>> cache.forward_autoregressive(Tensor.ones((1, 2, 2), device), 1, double).dims()
    (1, 2, 2)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ferrum._ferrum import Tensor
from ferrum.tensor.rank import D3

__all__ = ["TensorCache"]


class TensorCache:
    """One cached tensor; empty until the first call."""

    def __init__(self) -> None:
        self.value: Tensor[Any, Any, Any] | None = None

    def is_empty(self) -> bool:
        """Whether nothing is cached yet."""
        return self.value is None

    def forward_autoregressive(
        self,
        tensor: Tensor[Any, D3, Any],
        dim_cat: int,
        func: Callable[[Tensor[Any, D3, Any]], Tensor[Any, Any, Any]],
    ) -> Tensor[Any, Any, Any]:
        """``func`` of the last position of ``tensor`` (``[batch, seq, d]``) joined to the cache along
        ``dim_cat``; on the first call, ``func`` of the whole tensor."""
        if self.value is None:
            new = func(tensor)
        else:
            seq = tensor.dims()[1]
            new = Tensor.cat([self.value, func(tensor.narrow(1, seq - 1, 1))], dim_cat)
        self.value = new
        return new

    def forward_full(
        self, tensor: Tensor[Any, D3, Any], func: Callable[[Tensor[Any, D3, Any]], Tensor[Any, Any, Any]]
    ) -> Tensor[Any, Any, Any]:
        """The cached result, or ``func(tensor)`` (then cached) on the first call."""
        if self.value is None:
            self.value = func(tensor)
        return self.value
