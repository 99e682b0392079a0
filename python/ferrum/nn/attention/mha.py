"""``MultiHeadAttention``, as in Burn's ``burn::nn::attention`` ("Attention Is All You Need").

``forward(MhaInput)`` returns ``MhaOutput(weights, context)``: the attention
weights ``[batch, n_heads, seq_q, seq_k]`` and the context ``[batch, seq_q,
d_model]``. Masks are Bool and true where attention is *not* allowed:
``mask_pad`` ``[batch, seq_k]`` (padding keys) and ``mask_attn`` ``[batch,
seq_q, seq_k]`` (e.g. ``generate_autoregressive_mask``); masked scores become
``min_float`` before the softmax. Scaling, masking and the softmax run as one
engine op, forward and backward.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any, Generic

import ferrum._ferrum as _ferrum
from ferrum._ferrum import Bool, Device, KindError, ShapeError, Tensor
from ferrum.activation import quiet_softmax
from ferrum.config import config
from ferrum.config.checks import check_positive_ints
from ferrum.module import Module
from ferrum.nn.activation import Gelu
from ferrum.nn.cache import TensorCache
from ferrum.nn.dropout import Dropout, DropoutConfig
from ferrum.nn.initializer import Initializer
from ferrum.nn.linear import Linear, LinearConfig
from ferrum.nn.type_vars import B
from ferrum.tensor.rank import D2, D3, D4

__all__ = ["MhaCache", "MhaInput", "MhaOutput", "MultiHeadAttention", "MultiHeadAttentionConfig"]


KAIMING = Initializer.KaimingUniform(gain=1.0 / math.sqrt(3.0), fan_out_only=False)


def check_heads(owner: str, d_model: int, n_heads: int) -> None:
    check_positive_ints(owner, d_model=d_model, n_heads=n_heads)
    if d_model % n_heads:
        raise ValueError(f"{owner}: d_model ({d_model}) must be divisible by n_heads ({n_heads})")


@config
class MultiHeadAttentionConfig:
    """Configuration of ``MultiHeadAttention`` (Burn's fields and defaults).

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.attention import MultiHeadAttentionConfig
        >>> MultiHeadAttentionConfig(16, 4).init(NdArray.device()).num_params()
        1088
    """

    d_model: int
    n_heads: int
    dropout: float = 0.1
    min_float: float = -1.0e4
    quiet_softmax: bool = False
    initializer: Initializer = KAIMING

    def __post_init__(self) -> None:
        check_heads("MultiHeadAttentionConfig", self.d_model, self.n_heads)

    def init(self, device: Device[B]) -> MultiHeadAttention[B]:
        """A new layer on ``device``: four ``[d_model, d_model]`` Linears."""

        def linear() -> Linear[B]:
            return LinearConfig(self.d_model, self.d_model, initializer=self.initializer).init(device)

        return MultiHeadAttention(
            query=linear(),
            key=linear(),
            value=linear(),
            output=linear(),
            dropout=DropoutConfig(self.dropout).init(),
            activation=Gelu(),
            d_model=self.d_model,
            n_heads=self.n_heads,
            d_k=self.d_model // self.n_heads,
            min_float=self.min_float,
            quiet_softmax=self.quiet_softmax,
        )


class MhaInput(Generic[B]):
    """The query ``[batch, seq_q, d_model]``, key and value ``[batch, seq_k, d_model]``, and masks.

    ``MhaInput(query, key, value)`` or ``MhaInput.self_attn(x)``; ``mask_pad(m)`` and
    ``mask_attn(m)`` return a copy holding the mask (Burn's builders).

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.attention import MhaInput
        >>> device = NdArray.device()
        >>> x = Tensor.ones((2, 3, 4), device)
        >>> no_padding = Tensor.from_bool([[False] * 3] * 2, device)
        >>> MhaInput.self_attn(x).mask_pad(no_padding).padding_mask is not None
        True
    """

    __slots__ = ("_mask_attn", "_mask_pad", "key", "query", "value")

    def __init__(
        self,
        query: Tensor[B, D3],
        key: Tensor[B, D3],
        value: Tensor[B, D3],
        mask_pad: Tensor[B, D2, Bool] | None = None,
        mask_attn: Tensor[B, D3, Bool] | None = None,
    ) -> None:
        self.query, self.key, self.value = query, key, value
        self._mask_pad, self._mask_attn = mask_pad, mask_attn

    @staticmethod
    def self_attn(tensor: Tensor[B, D3]) -> MhaInput[B]:
        """Query, key and value all ``tensor``."""
        return MhaInput(tensor, tensor, tensor)

    def mask_pad(self, mask_pad: Tensor[B, D2, Bool]) -> MhaInput[B]:
        """A copy with the padding mask ``[batch, seq_k]`` (true at padding keys)."""
        return MhaInput(self.query, self.key, self.value, mask_pad, self._mask_attn)

    def mask_attn(self, mask_attn: Tensor[B, D3, Bool]) -> MhaInput[B]:
        """A copy with the attention mask ``[batch, seq_q, seq_k]`` (true where not allowed)."""
        return MhaInput(self.query, self.key, self.value, self._mask_pad, mask_attn)

    @property
    def padding_mask(self) -> Tensor[B, D2, Bool] | None:
        """The padding mask, if set."""
        return self._mask_pad

    @property
    def attention_mask(self) -> Tensor[B, D3, Bool] | None:
        """The attention mask, if set."""
        return self._mask_attn


@dataclasses.dataclass(frozen=True)
class MhaOutput(Generic[B]):
    """The attention weights ``[batch, n_heads, seq_q, seq_k]`` and the context
    ``[batch, seq_q, d_model]``."""

    weights: Tensor[B, D4]
    context: Tensor[B, D3]


class MultiHeadAttention(Module[B]):
    """Multi-head scaled dot-product attention with query, key, value and output projections.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.attention import MhaInput, MultiHeadAttentionConfig, generate_autoregressive_mask
        >>> device = NdArray.device()
        >>> mha = MultiHeadAttentionConfig(4, 2).with_dropout(0.0).init(device)
        >>> x = Tensor.ones((1, 3, 4), device)
        >>> causal = generate_autoregressive_mask(1, 3, device)
        >>> weights = mha.forward(MhaInput.self_attn(x).mask_attn(causal)).weights
        >>> [round(w, 3) for w in weights.to_data().to_list()[0][0][0]]
        [1.0, 0.0, 0.0]
    """

    query: Linear[B]
    key: Linear[B]
    value: Linear[B]
    output: Linear[B]
    dropout: Dropout
    activation: Gelu
    d_model: int
    n_heads: int
    d_k: int
    min_float: float
    quiet_softmax: bool

    def forward(self, input: MhaInput[B]) -> MhaOutput[B]:
        """Attend from ``input.query`` to ``input.key``/``input.value``; see ``MhaInput`` for shapes."""
        batch, seq_q = self._check(input)
        query = self._heads(input.query, self.query)
        key = self._heads(input.key, self.key)
        value = self._heads(input.value, self.value)
        weights = self._weights(query, key, input)
        context = self.output.forward(self._merge(weights @ value, batch, seq_q))
        return MhaOutput(weights, context)

    def forward_cache(self, input: MhaInput[B], cache: MhaCache[B]) -> MhaOutput[B]:
        """``forward`` for autoregressive inference: only the newest position of the query (and of the
        key and value, or none of them for a ``autoregressive_cross_attention`` cache) is projected;
        the rest comes from ``cache``, which is updated."""
        batch, seq_q = self._check(input)
        query: Tensor[B, D4] = cache.query.forward(input.query, lambda t: self._heads(t, self.query))
        key: Tensor[B, D4] = cache.key.forward(input.key, lambda t: self._heads(t, self.key))
        value: Tensor[B, D4] = cache.value.forward(input.value, lambda t: self._heads(t, self.value))
        weights = self._weights(query, key, input)
        merged = self._merge(weights @ value, batch, seq_q)
        context: Tensor[B, D3] = cache.output.forward(merged, self.output.forward)
        return MhaOutput(weights, context)

    def _check(self, input: MhaInput[B]) -> tuple[int, int]:
        if not isinstance(input, MhaInput):
            raise TypeError(f"MultiHeadAttention.forward takes an MhaInput, found {type(input).__name__}")
        for name in ("query", "key", "value"):
            dims = getattr(input, name).dims()
            if len(dims) != 3 or dims[2] != self.d_model:
                raise ShapeError(
                    f"MultiHeadAttention: {name} must be [batch, seq, d_model={self.d_model}],"
                    f" found {list(dims)}"
                )
        batch, seq_q, _ = input.query.dims()
        seq_k = input.key.dims()[1]
        if input.key.dims() != input.value.dims() or input.key.dims()[0] != batch:
            raise ShapeError(
                f"MultiHeadAttention: key {list(input.key.dims())} and value {list(input.value.dims())}"
                f" must have the same shape, and the query's batch ({batch})"
            )
        _check_mask("mask_pad", input.padding_mask, (batch, seq_k))
        _check_mask("mask_attn", input.attention_mask, (batch, seq_q, seq_k))
        return batch, seq_q

    def _heads(self, x: Tensor[B, D3], linear: Linear[B]) -> Tensor[B, D4]:
        """``[batch, seq, d_model] -> [batch, n_heads, seq, d_k]``."""
        batch, seq, _ = x.dims()
        return linear.forward(x).reshape((batch, seq, self.n_heads, self.d_k)).swap_dims(1, 2)

    def _merge(self, context: Tensor[B, D4], batch: int, seq: int) -> Tensor[B, D3]:
        return context.swap_dims(1, 2).reshape((batch, seq, self.d_model))

    def _weights(self, query: Tensor[B, D4], key: Tensor[B, D4], input: MhaInput[B]) -> Tensor[B, D4]:
        scores = query @ key.transpose()
        weights = attention_weights(
            scores, input.padding_mask, input.attention_mask, self.d_k, self.min_float, self.quiet_softmax
        )
        # Dropout on the weights, as in the paper and PyTorch (Burn drops scores before the softmax).
        return self.dropout.forward(weights)

    def _display_settings(self) -> list[tuple[str, object]]:
        return [
            ("d_model", self.d_model),
            ("n_heads", self.n_heads),
            ("d_k", self.d_k),
            ("dropout", self.dropout.prob),
            ("min_float", self.min_float),
            ("quiet_softmax", self.quiet_softmax),
        ]


def _check_mask(
    name: str, mask: Tensor[B, D2, Bool] | Tensor[B, D3, Bool] | None, shape: tuple[int, ...]
) -> None:
    if mask is None:
        return
    if not isinstance(mask, Tensor):
        raise TypeError(f"MultiHeadAttention: {name} must be a Bool tensor, found {type(mask).__name__}")
    if mask.kind is not Bool:
        raise KindError(f"MultiHeadAttention: {name} must be a Bool tensor, found kind {mask.kind.__name__}")
    if mask.dims() != shape:
        raise ShapeError(f"MultiHeadAttention: {name} must be {list(shape)}, found {list(mask.dims())}")


def attention_weights(
    scores: Tensor[B, D4],
    mask_pad: Tensor[B, D2, Bool] | None,
    mask_attn: Tensor[B, D3, Bool] | None,
    d_k: int,
    min_float: float,
    quiet: bool,
) -> Tensor[B, D4]:
    """``softmax(mask_fill(scores / sqrt(d_k), masks, min_float))`` over ``[batch, heads, seq_q, seq_k]``."""
    batch, _, seq_q, seq_k = scores.dims()
    mask: Tensor[B, D4, Bool] | None = None
    if mask_pad is not None:
        mask = mask_pad.reshape((batch, 1, 1, seq_k))
    if mask_attn is not None:
        attn: Tensor[B, D4, Bool] = mask_attn.reshape((batch, 1, seq_q, seq_k))
        mask = attn if mask is None else mask.bool_or(attn)
    scale = 1.0 / math.sqrt(d_k)
    if not quiet:
        return _ferrum.masked_softmax(scores, mask, scale, min_float)
    scaled = scores * scale
    if mask is not None:
        scaled = scaled.mask_fill(mask, min_float)
    return quiet_softmax(scaled, 3)


class MhaCache(Generic[B]):
    """What ``MultiHeadAttention.forward_cache`` keeps between decoding steps.

    Example:
        >>> from ferrum.nn.attention import MhaCache
        >>> MhaCache.autoregressive().key.full
        False
    """

    def __init__(
        self, query: _LinearCache, key: _LinearCache, value: _LinearCache, output: _LinearCache
    ) -> None:
        self.query, self.key, self.value, self.output = query, key, value, output

    @staticmethod
    def autoregressive() -> MhaCache[B]:
        """For self-attention: every projection grows by one position per step."""
        return MhaCache(_LinearCache(2), _LinearCache(2), _LinearCache(2), _LinearCache(1))

    @staticmethod
    def autoregressive_cross_attention() -> MhaCache[B]:
        """For cross-attention: the key and value (of the encoder's memory) are computed once."""
        return MhaCache(
            _LinearCache(2), _LinearCache(2, full=True), _LinearCache(2, full=True), _LinearCache(1)
        )


class _LinearCache:
    """A projection's cache: grows along ``dim`` (autoregressive) or stays as first computed (full)."""

    def __init__(self, dim: int, full: bool = False) -> None:
        self.cache = TensorCache()
        self.dim = dim
        self.full = full

    def forward(
        self, tensor: Tensor[B, D3], func: Callable[[Tensor[B, D3]], Tensor[B, Any]]
    ) -> Tensor[B, Any]:
        """``func`` (a projection of ``[batch, seq, d_model]``) through the cache."""
        if self.full:
            return self.cache.forward_full(tensor, func)
        return self.cache.forward_autoregressive(tensor, self.dim, func)
