"""``TransformerEncoder``, as in Burn's ``burn::nn::transformer`` ("Attention Is All You Need").

Each layer is self-attention then a position-wise feed-forward network, each
with a residual connection, dropout and a ``LayerNorm`` (after the residual
sum, or before the sub-layer with ``norm_first``). Masks are those of
``MultiHeadAttention``: true where attention is not allowed.
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
    "TransformerEncoder",
    "TransformerEncoderAutoregressiveCache",
    "TransformerEncoderConfig",
    "TransformerEncoderInput",
    "TransformerEncoderLayer",
]


@config
class TransformerEncoderConfig(stack.StackConfig):
    """Configuration of ``TransformerEncoder`` (Burn's fields and defaults).

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.transformer import TransformerEncoderConfig
        >>> TransformerEncoderConfig(16, 32, 4, 2).init(NdArray.device()).num_params()
        4448
    """

    def init(self, device: Device[B]) -> TransformerEncoder[B]:
        """A new encoder on ``device``."""
        layers = [self._layer(device) for _ in range(self.n_layers)]
        return TransformerEncoder(layers=layers, **stack.settings(self))

    def _layer(self, device: Device[B]) -> TransformerEncoderLayer[B]:
        mha, pwff = self.sublayer_configs()
        return TransformerEncoderLayer(
            mha=mha.init(device),
            pwff=pwff.init(device),
            norm_1=LayerNormConfig(self.d_model).init(device),
            norm_2=LayerNormConfig(self.d_model).init(device),
            dropout=DropoutConfig(self.dropout).init(),
            norm_first=self.norm_first,
        )


class TransformerEncoderInput(Generic[B]):
    """The encoder's input ``[batch, seq, d_model]`` and its masks; ``mask_pad(m)`` (``[batch, seq]``)
    and ``mask_attn(m)`` (``[batch, seq, seq]``) return a copy holding the mask.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.transformer import TransformerEncoderInput
        >>> device = NdArray.device()
        >>> TransformerEncoderInput(Tensor.ones((1, 2, 4), device)).tensor.dims()
        (1, 2, 4)
    """

    __slots__ = ("_mask_attn", "_mask_pad", "tensor")

    def __init__(
        self,
        tensor: Tensor[B, D3],
        mask_pad: Tensor[B, D2, Bool] | None = None,
        mask_attn: Tensor[B, D3, Bool] | None = None,
    ) -> None:
        self.tensor = tensor
        self._mask_pad, self._mask_attn = mask_pad, mask_attn

    def mask_pad(self, mask_pad: Tensor[B, D2, Bool]) -> TransformerEncoderInput[B]:
        """A copy with the padding mask ``[batch, seq]`` (true at padding)."""
        return TransformerEncoderInput(self.tensor, mask_pad, self._mask_attn)

    def mask_attn(self, mask_attn: Tensor[B, D3, Bool]) -> TransformerEncoderInput[B]:
        """A copy with the attention mask ``[batch, seq, seq]``."""
        return TransformerEncoderInput(self.tensor, self._mask_pad, mask_attn)

    def _mha(self, x: Tensor[B, D3]) -> MhaInput[B]:
        return MhaInput(x, x, x, self._mask_pad, self._mask_attn)


class TransformerEncoderLayer(Module[B]):
    """One encoder layer: self-attention and feed-forward, each with residual, dropout and norm."""

    mha: MultiHeadAttention[B]
    pwff: PositionWiseFeedForward[B]
    norm_1: LayerNorm[B]
    norm_2: LayerNorm[B]
    dropout: Dropout
    norm_first: bool

    def forward(self, x: Tensor[B, D3], input: TransformerEncoderInput[B]) -> Tensor[B, D3]:
        """``[batch, seq, d_model] -> [batch, seq, d_model]``, with ``input``'s masks."""
        return self._forward(x, input, None)

    def _forward(
        self, x: Tensor[B, D3], input: TransformerEncoderInput[B], cache: _LayerCache[B] | None
    ) -> Tensor[B, D3]:
        steps = None if cache is None else cache.steps
        *norms, pwff = stack.cached(steps, (self.norm_1.forward, self.norm_2.forward, self.pwff.forward))

        def attend(residual: Tensor[B, D3]) -> Tensor[B, D3]:
            mha_input = input._mha(residual)
            if cache is None:
                return self.mha.forward(mha_input).context
            return self.mha.forward_cache(mha_input, cache.mha).context

        return stack.block(x, (attend,), norms, pwff, self.dropout, self.norm_first)


class TransformerEncoder(stack.StackModule[B, TransformerEncoderLayer[B]]):
    """A stack of ``n_layers`` encoder layers: ``[batch, seq, d_model] -> [batch, seq, d_model]``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.transformer import TransformerEncoderConfig, TransformerEncoderInput
        >>> device = NdArray.device()
        >>> encoder = TransformerEncoderConfig(8, 16, 2, 2).with_dropout(0.0).init(device)
        >>> encoder.forward(TransformerEncoderInput(Tensor.ones((3, 5, 8), device))).dims()
        (3, 5, 8)
    """

    def forward(self, input: TransformerEncoderInput[B]) -> Tensor[B, D3]:
        """The input tensor through every layer, with the input's masks."""
        x = input.tensor
        for layer in self.layers:
            x = layer.forward(x, input)
        return x

    def forward_autoregressive_inference(
        self, input: TransformerEncoderInput[B], cache: TransformerEncoderAutoregressiveCache[B]
    ) -> Tensor[B, D3]:
        """``forward`` for one more position of a growing sequence: each layer computes only the
        newest position and takes the rest from ``cache`` (which it updates)."""
        x = input.tensor
        for layer, layer_cache in zip(self.layers, cache.layers, strict=True):
            x = layer._forward(x, input, layer_cache)
        return x

    def new_autoregressive_cache(self) -> TransformerEncoderAutoregressiveCache[B]:
        """An empty cache for ``forward_autoregressive_inference``."""
        return TransformerEncoderAutoregressiveCache(len(self.layers))


class _LayerCache(Generic[B]):
    def __init__(self) -> None:
        self.mha: MhaCache[B] = MhaCache.autoregressive()
        # One per cached sub-layer: norm_1, norm_2, pwff.
        self.steps = (stack.Step(), stack.Step(), stack.Step())


class TransformerEncoderAutoregressiveCache(Generic[B]):
    """What ``forward_autoregressive_inference`` keeps between steps, one entry per layer."""

    def __init__(self, n_layers: int) -> None:
        self.layers: list[_LayerCache[B]] = [_LayerCache() for _ in range(n_layers)]
