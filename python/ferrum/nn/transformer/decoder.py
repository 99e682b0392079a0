"""``TransformerDecoder``, as in Burn's ``burn::nn::transformer``.

Each layer is masked self-attention over the target, cross-attention to the
encoder's memory, then a position-wise feed-forward network, each with a
residual connection, dropout and a ``LayerNorm``. For generation,
``forward_autoregressive_inference`` with ``new_autoregressive_cache()``
computes only the newest target position per call.
"""

from __future__ import annotations

from typing import Generic

from ferrum._ferrum import Bool, Device, Tensor
from ferrum.config import config
from ferrum.module import Module
from ferrum.nn.attention.mha import MhaCache, MhaInput, MultiHeadAttention
from ferrum.nn.dropout import Dropout, DropoutConfig
from ferrum.nn.norm import LayerNorm, LayerNormConfig
from ferrum.nn.transformer import stack
from ferrum.nn.transformer.pwff import PositionWiseFeedForward
from ferrum.nn.type_vars import B
from ferrum.tensor.rank import D2, D3

__all__ = [
    "TransformerDecoder",
    "TransformerDecoderAutoregressiveCache",
    "TransformerDecoderConfig",
    "TransformerDecoderInput",
    "TransformerDecoderLayer",
]


@config
class TransformerDecoderConfig(stack.StackConfig):
    """Configuration of ``TransformerDecoder`` (Burn's fields and defaults).

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.transformer import TransformerDecoderConfig
        >>> TransformerDecoderConfig(16, 32, 4, 2).init(NdArray.device()).num_params()
        6688
    """

    def init(self, device: Device[B]) -> TransformerDecoder[B]:
        """A new decoder on ``device``."""
        layers = [self._layer(device) for _ in range(self.n_layers)]
        return TransformerDecoder(layers=layers, **stack.settings(self))

    def _layer(self, device: Device[B]) -> TransformerDecoderLayer[B]:
        mha, pwff = self.sublayer_configs()

        def norm() -> LayerNorm[B]:
            return LayerNormConfig(self.d_model).init(device)

        return TransformerDecoderLayer(
            cross_attn=mha.init(device),
            self_attn=mha.init(device),
            pwff=pwff.init(device),
            norm_1=norm(),
            norm_2=norm(),
            norm_3=norm(),
            dropout=DropoutConfig(self.dropout).init(),
            norm_first=self.norm_first,
        )


class TransformerDecoderInput(Generic[B]):
    """The target ``[batch, seq_t, d_model]``, the encoder's memory ``[batch, seq_m, d_model]``
    and their masks, set with the builders (each returns a copy).

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.transformer import TransformerDecoderInput
        >>> device = NdArray.device()
        >>> target, memory = Tensor.ones((1, 2, 4), device), Tensor.ones((1, 3, 4), device)
        >>> TransformerDecoderInput(target, memory).memory.dims()
        (1, 3, 4)
    """

    __slots__ = ("_masks", "memory", "target")

    def __init__(
        self,
        target: Tensor[B, D3],
        memory: Tensor[B, D3],
        masks: tuple[
            Tensor[B, D2, Bool] | None,
            Tensor[B, D3, Bool] | None,
            Tensor[B, D2, Bool] | None,
            Tensor[B, D3, Bool] | None,
        ] = (None, None, None, None),
    ) -> None:
        self.target, self.memory = target, memory
        self._masks = masks

    def target_mask_pad(self, mask_pad: Tensor[B, D2, Bool]) -> TransformerDecoderInput[B]:
        """A copy with the target's padding mask ``[batch, seq_t]``."""
        return self._with(0, mask_pad)

    def target_mask_attn(self, mask_attn: Tensor[B, D3, Bool]) -> TransformerDecoderInput[B]:
        """A copy with the target's attention mask ``[batch, seq_t, seq_t]`` (e.g. autoregressive)."""
        return self._with(1, mask_attn)

    def memory_mask_pad(self, mask_pad: Tensor[B, D2, Bool]) -> TransformerDecoderInput[B]:
        """A copy with the memory's padding mask ``[batch, seq_m]``."""
        return self._with(2, mask_pad)

    def memory_mask_attn(self, mask_attn: Tensor[B, D3, Bool]) -> TransformerDecoderInput[B]:
        """A copy with the memory's attention mask ``[batch, seq_t, seq_m]``."""
        return self._with(3, mask_attn)

    def _with(self, i: int, mask: Tensor[B, D2, Bool] | Tensor[B, D3, Bool]) -> TransformerDecoderInput[B]:
        masks = list(self._masks)
        masks[i] = mask
        return TransformerDecoderInput(self.target, self.memory, tuple(masks))  # type: ignore[arg-type]


class TransformerDecoderLayer(Module[B]):
    """One decoder layer: self-attention, cross-attention and feed-forward."""

    cross_attn: MultiHeadAttention[B]
    self_attn: MultiHeadAttention[B]
    pwff: PositionWiseFeedForward[B]
    norm_1: LayerNorm[B]
    norm_2: LayerNorm[B]
    norm_3: LayerNorm[B]
    dropout: Dropout
    norm_first: bool

    def forward(self, x: Tensor[B, D3], input: TransformerDecoderInput[B]) -> Tensor[B, D3]:
        """The target ``x`` through the layer, attending to ``input.memory``."""
        return self._forward(x, input, None)

    def _forward(
        self, x: Tensor[B, D3], input: TransformerDecoderInput[B], cache: _LayerCache[B] | None
    ) -> Tensor[B, D3]:
        t_pad, t_attn, m_pad, m_attn = input._masks
        steps = None if cache is None else cache.steps
        *norms, pwff = stack.cached(
            steps, (self.norm_1.forward, self.norm_2.forward, self.norm_3.forward, self.pwff.forward)
        )

        def attend_self(residual: Tensor[B, D3]) -> Tensor[B, D3]:
            mha_input = MhaInput(residual, residual, residual, t_pad, t_attn)
            if cache is None:
                return self.self_attn.forward(mha_input).context
            return self.self_attn.forward_cache(mha_input, cache.self_attn).context

        def attend_memory(residual: Tensor[B, D3]) -> Tensor[B, D3]:
            mha_input = MhaInput(residual, input.memory, input.memory, m_pad, m_attn)
            if cache is None:
                return self.cross_attn.forward(mha_input).context
            return self.cross_attn.forward_cache(mha_input, cache.cross_attn).context

        return stack.block(x, (attend_self, attend_memory), norms, pwff, self.dropout, self.norm_first)


class TransformerDecoder(stack.StackModule[B, TransformerDecoderLayer[B]]):
    """A stack of ``n_layers`` decoder layers: target ``[batch, seq_t, d_model]`` in and out.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.attention import generate_autoregressive_mask
        >>> from ferrum.nn.transformer import TransformerDecoderConfig, TransformerDecoderInput
        >>> device = NdArray.device()
        >>> decoder = TransformerDecoderConfig(8, 16, 2, 1).with_dropout(0.0).init(device)
        >>> target, memory = Tensor.ones((2, 3, 8), device), Tensor.ones((2, 5, 8), device)
        >>> decoder.forward(TransformerDecoderInput(target, memory).target_mask_attn(
        ...     generate_autoregressive_mask(2, 3, device))).dims()
        (2, 3, 8)
    """

    def forward(self, input: TransformerDecoderInput[B]) -> Tensor[B, D3]:
        """The target through every layer, attending to the memory."""
        x = input.target
        for layer in self.layers:
            x = layer.forward(x, input)
        return x

    def forward_autoregressive_inference(
        self, input: TransformerDecoderInput[B], cache: TransformerDecoderAutoregressiveCache[B]
    ) -> Tensor[B, D3]:
        """``forward`` computing only the newest target position, the rest from ``cache``."""
        x = input.target
        for layer, layer_cache in zip(self.layers, cache.layers, strict=True):
            x = layer._forward(x, input, layer_cache)
        return x

    def new_autoregressive_cache(self) -> TransformerDecoderAutoregressiveCache[B]:
        """An empty cache for ``forward_autoregressive_inference``."""
        return TransformerDecoderAutoregressiveCache(len(self.layers))


class _LayerCache(Generic[B]):
    def __init__(self) -> None:
        self.cross_attn: MhaCache[B] = MhaCache.autoregressive_cross_attention()
        self.self_attn: MhaCache[B] = MhaCache.autoregressive()
        # One per cached sub-layer: norm_1, norm_2, norm_3, pwff.
        self.steps = tuple(stack.Step() for _ in range(4))


class TransformerDecoderAutoregressiveCache(Generic[B]):
    """What ``forward_autoregressive_inference`` keeps between steps, one entry per layer."""

    def __init__(self, n_layers: int) -> None:
        self.layers: list[_LayerCache[B]] = [_LayerCache() for _ in range(n_layers)]
