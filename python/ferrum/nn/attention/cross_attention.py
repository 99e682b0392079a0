"""``CrossAttention``: a query sequence attends to a context of another width, with grouped
(``n_heads_kv < n_heads``) or multi-query (``n_heads_kv = 1``) key/value heads, as in Burn.
"""

from __future__ import annotations

import math
from typing import Generic

from ferrum._ferrum import Bool, Device, ShapeError, Tensor
from ferrum.config import config
from ferrum.config.checks import check_positive_ints
from ferrum.module import Module
from ferrum.nn.attention.mha import _check_mask, attention_weights
from ferrum.nn.cache import TensorCache
from ferrum.nn.dropout import Dropout, DropoutConfig
from ferrum.nn.initializer import Initializer
from ferrum.nn.linear import Linear, LinearConfig
from ferrum.nn.type_vars import B
from ferrum.tensor.rank import D2, D3, D4

__all__ = ["CrossAttention", "CrossAttentionCache", "CrossAttentionConfig"]


@config
class CrossAttentionConfig:
    """Configuration of ``CrossAttention`` (Burn's fields and defaults).

    ``d_model``: the query's width; ``d_context``: the context's; ``n_heads`` query
    heads and ``n_heads_kv`` key/value heads (dividing ``n_heads``) of ``d_head`` each.

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.attention import CrossAttentionConfig
        >>> CrossAttentionConfig(8, 8, 2, 1, 4).init(NdArray.device()).num_params()
        216
    """

    d_model: int
    d_context: int
    n_heads: int
    n_heads_kv: int
    d_head: int
    dropout: float = 0.1
    min_float: float = -1.0e4
    quiet_softmax: bool = False

    def __post_init__(self) -> None:
        owner = "CrossAttentionConfig"
        check_positive_ints(owner, d_model=self.d_model, d_context=self.d_context, d_head=self.d_head)
        check_positive_ints(owner, n_heads=self.n_heads, n_heads_kv=self.n_heads_kv)
        if self.n_heads % self.n_heads_kv:
            raise ValueError(
                f"CrossAttentionConfig: n_heads ({self.n_heads}) must be divisible by"
                f" n_heads_kv ({self.n_heads_kv})"
            )

    def init(self, device: Device[B]) -> CrossAttention[B]:
        """A new layer on ``device`` (Kaiming uniform with gain ``1 / sqrt(d_head)``, as Burn)."""
        init = Initializer.KaimingUniform(gain=1.0 / math.sqrt(self.d_head), fan_out_only=False)

        def linear(d_in: int, d_out: int) -> Linear[B]:
            return LinearConfig(d_in, d_out, initializer=init).init(device)

        q_width, kv_width = self.n_heads * self.d_head, self.n_heads_kv * self.d_head
        return CrossAttention(
            query=linear(self.d_model, q_width),
            key=linear(self.d_context, kv_width),
            value=linear(self.d_context, kv_width),
            output=linear(q_width, self.d_model),
            dropout=DropoutConfig(self.dropout).init(),
            n_heads=self.n_heads,
            n_heads_kv=self.n_heads_kv,
            d_head=self.d_head,
            scale=1.0 / math.sqrt(self.d_head),
            min_float=self.min_float,
            quiet_softmax=self.quiet_softmax,
        )


class CrossAttentionCache(Generic[B]):
    """The key and value of a context that stays the same across decoding steps.

    Example:
        >>> from ferrum.nn.attention import CrossAttentionCache
        >>> CrossAttentionCache().k.is_empty()
        True
    """

    def __init__(self) -> None:
        self.k = TensorCache()
        self.v = TensorCache()


class CrossAttention(Module[B]):
    """Attention from a query ``[batch, seq_q, d_model]`` to a context ``[batch, seq_k, d_context]``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.attention import CrossAttentionConfig
        >>> device = NdArray.device()
        >>> layer = CrossAttentionConfig(4, 4, 2, 2, 2).with_dropout(0.0).init(device)
        >>> mask = Tensor.from_bool([[False, True]], device)
        >>> layer.forward(Tensor.ones((1, 3, 4), device), Tensor.ones((1, 2, 4), device), mask).dims()
        (1, 3, 4)
    """

    query: Linear[B]
    key: Linear[B]
    value: Linear[B]
    output: Linear[B]
    dropout: Dropout
    n_heads: int
    n_heads_kv: int
    d_head: int
    scale: float
    min_float: float
    quiet_softmax: bool

    def forward(
        self, query: Tensor[B, D3], context: Tensor[B, D3], mask: Tensor[B, D2, Bool] | None = None
    ) -> Tensor[B, D3]:
        """``[batch, seq_q, d_model]`` attending to ``[batch, seq_k, d_context]``; ``mask`` ``[batch, seq_k]``
        is true at context positions not to attend to."""
        self._check(query, context)
        return self._attend(query, self._kv(context, self.key), self._kv(context, self.value), mask)

    def forward_cache(
        self,
        query: Tensor[B, D3],
        context: Tensor[B, D3],
        mask: Tensor[B, D2, Bool] | None,
        cache: CrossAttentionCache[B],
    ) -> Tensor[B, D3]:
        """``forward`` reusing the context's key and value from ``cache`` (computed on the first call)."""
        self._check(query, context)
        k: Tensor[B, D4] = cache.k.forward_full(context, lambda c: self._kv(c, self.key))
        v: Tensor[B, D4] = cache.v.forward_full(context, lambda c: self._kv(c, self.value))
        return self._attend(query, k, v, mask)

    def _check(self, query: Tensor[B, D3], context: Tensor[B, D3]) -> None:
        d_model = self.query.weight.shape()[0]
        d_context = self.key.weight.shape()[0]
        if len(query.dims()) != 3 or query.dims()[2] != d_model:
            raise ShapeError(
                f"CrossAttention: query must be [batch, seq, d_model={d_model}], found {list(query.dims())}"
            )
        if len(context.dims()) != 3 or context.dims()[2] != d_context or context.dims()[0] != query.dims()[0]:
            raise ShapeError(
                f"CrossAttention: context must be [batch={query.dims()[0]}, seq, d_context={d_context}],"
                f" found {list(context.dims())}"
            )

    def _kv(self, context: Tensor[B, D3], linear: Linear[B]) -> Tensor[B, D4]:
        batch, seq, _ = context.dims()
        return linear.forward(context).reshape((batch, seq, self.n_heads_kv, self.d_head)).swap_dims(1, 2)

    def _attend(
        self, query: Tensor[B, D3], k: Tensor[B, D4], v: Tensor[B, D4], mask: Tensor[B, D2, Bool] | None
    ) -> Tensor[B, D3]:
        batch, seq_q, _ = query.dims()
        seq_k = k.dims()[2]
        _check_mask("mask", mask, (batch, seq_k))
        q = self.query.forward(query).reshape((batch, seq_q, self.n_heads, self.d_head)).swap_dims(1, 2)
        if self.n_heads != self.n_heads_kv:
            k, v = self._repeat(k), self._repeat(v)
        weights = attention_weights(
            q @ k.transpose(), mask, None, self.d_head, self.min_float, self.quiet_softmax
        )
        out = (
            (self.dropout.forward(weights) @ v)
            .swap_dims(1, 2)
            .reshape((batch, seq_q, self.n_heads * self.d_head))
        )
        return self.output.forward(out)

    def _repeat(self, x: Tensor[B, D4]) -> Tensor[B, D4]:
        """Each key/value head shared by ``n_heads / n_heads_kv`` query heads."""
        b, h, seq, d = x.dims()
        rep = self.n_heads // h
        return x.reshape((b, h, 1, seq, d)).expand((b, h, rep, seq, d)).reshape((b, h * rep, seq, d))
