"""The key/value cache of autoregressive decoding, and the attention that reads it.

Each layer's keys and values live in one buffer ``[batch, kv_heads, max_len, head_dim]``
allocated once; a step writes its new positions with ``slice_assign`` and attends over
the filled prefix (``narrow``, a view). Nothing grows by concatenation, so a step costs
the same whatever the position.
"""

from __future__ import annotations

import math
from typing import Any, Generic, TypeVar

import numpy as np
from ferrum import D3, D4, Bool, Device, ShapeError, Tensor
from ferrum import _ferrum as engine
from ferrum.backend import Backend

B = TypeVar("B", bound=Backend)


class KvCache(Generic[B]):
    """Keys and values of ``n_layers`` attention layers for up to ``max_len`` positions.

    ``length`` is how many positions are filled; every layer writes the same new positions
    in a step (``write``), and the model calls ``advance`` once the step's layers are done.

    Example:
        >>> from ferrum.backend import NdArray
        >>> cache = KvCache(2, 1, 2, 8, 4, NdArray.device())
        >>> k = Tensor.ones((1, 2, 3, 4), NdArray.device())
        >>> cache.write(0, k, k)[0].dims()
        (1, 2, 3, 4)
    """

    def __init__(
        self, n_layers: int, batch: int, kv_heads: int, max_len: int, head_dim: int, device: Device[B]
    ) -> None:
        shape = (batch, kv_heads, max_len, head_dim)
        self.shape = shape
        self.max_len = max_len
        self.length = 0
        self.keys: list[Tensor[B, D4]] = [Tensor.zeros(shape, device) for _ in range(n_layers)]
        self.values: list[Tensor[B, D4]] = [Tensor.zeros(shape, device) for _ in range(n_layers)]

    def check_room(self, new: int) -> None:
        """Raise ``ValueError`` unless ``new`` more positions fit."""
        if self.length + new > self.max_len:
            raise ValueError(
                f"KvCache: {self.length} positions are filled and {new} more do not fit in max_len"
                f" {self.max_len}"
            )

    def write(
        self, layer: int, key: Tensor[B, D4], value: Tensor[B, D4]
    ) -> tuple[Tensor[B, D4], Tensor[B, D4]]:
        """Store ``key`` and ``value`` (``[batch, kv_heads, new, head_dim]``) of ``layer`` at the
        positions after the filled ones; return all keys and values so far,
        ``[batch, kv_heads, length + new, head_dim]``."""
        batch, heads, _, head_dim = self.shape
        dims = key.dims()
        if dims != value.dims() or (dims[0], dims[1], dims[3]) != (batch, heads, head_dim):
            raise ShapeError(
                f"KvCache.write: expected key and value [{batch}, {heads}, new, {head_dim}],"
                f" found {list(dims)} and {list(value.dims())}"
            )
        new = dims[2]
        self.check_room(new)
        end = self.length + new
        ranges = [slice(None), slice(None), slice(self.length, end)]
        self.keys[layer] = self.keys[layer].slice_assign(ranges, key)
        self.values[layer] = self.values[layer].slice_assign(ranges, value)
        return self.keys[layer].narrow(2, 0, end), self.values[layer].narrow(2, 0, end)

    def advance(self, new: int) -> None:
        """Count ``new`` positions as filled (after every layer has written them)."""
        self.check_room(new)
        self.length += new


def step_start(model: str, cache: KvCache[B] | None, seq: int, max_positions: int) -> int:
    """The position of the first of ``seq`` new tokens: 0 without a cache, else the cache's ``length``.

    Raises ``ValueError`` (naming ``model``) when the tokens would run past the model's
    ``max_positions``, or past the cache's ``max_len``.

    Example:
        >>> from ferrum.backend import NdArray
        >>> cache = KvCache(1, 1, 1, 8, 4, NdArray.device())
        >>> cache.advance(3)
        >>> step_start("GPT-2", cache, 2, 16)
        3
    """
    start = 0 if cache is None else cache.length
    if start + seq > max_positions:
        raise ValueError(f"{model}: positions {start}..{start + seq} exceed the model's {max_positions}")
    if cache is not None:
        cache.check_room(seq)
    return start


def step_end(x: Tensor[B, D3], cache: KvCache[B] | None, seq: int, last_only: bool) -> Tensor[B, D3]:
    """Close a step of ``seq`` tokens once every layer has run: the cache counts them as filled,
    and with ``last_only`` only the last position of ``x`` ``[batch, seq, width]`` is kept.

    Example:
        >>> from ferrum.backend import NdArray
        >>> step_end(Tensor.zeros((1, 5, 4), NdArray.device()), None, 5, True).dims()
        (1, 1, 4)
    """
    if cache is not None:
        cache.advance(seq)
    return x.narrow(1, seq - 1, 1) if last_only else x


def causal_attention(query: Tensor[B, D4], key: Tensor[B, D4], value: Tensor[B, D4]) -> Tensor[B, D4]:
    """Causal attention of the last ``seq`` positions over all ``total`` positions, grouped-query.

    ``query`` is ``[batch, heads, seq, head_dim]``, ``key`` and ``value``
    ``[batch, kv_heads, total, head_dim]`` with ``heads`` a multiple of ``kv_heads``: query head
    ``h`` reads key/value head ``h // (heads / kv_heads)``, as Hugging Face's ``repeat_kv``. The
    queries are positions ``total - seq .. total``; each sees the keys up to its own position.
    Returns ``[batch, heads, seq, head_dim]``.
    """
    batch, heads, seq, head_dim = query.dims()
    kv_heads, total = key.dims()[1], key.dims()[2]
    groups = heads // kv_heads
    # The heads sharing a key/value head become extra query rows of that head: no copy of the cache.
    q = query.reshape((batch, kv_heads, groups * seq, head_dim))
    mask = None if seq == 1 else _causal_mask(groups, seq, total, query.device())
    weights = engine.masked_softmax(q @ key.transpose(), mask, 1.0 / math.sqrt(head_dim), -math.inf)
    out: Tensor[B, D4] = (weights @ value).reshape((batch, heads, seq, head_dim))
    return out


def _causal_mask(groups: int, seq: int, total: int, device: Device[B]) -> Tensor[B, D4, Bool]:
    """True where row ``g * seq + i`` (query position ``total - seq + i``) must not see key ``j``."""
    position = np.tile(np.arange(total - seq, total), groups)[:, None]
    mask: Any = np.arange(total)[None, :] > position
    return Tensor.from_numpy(mask.reshape(1, 1, groups * seq, total), device)
