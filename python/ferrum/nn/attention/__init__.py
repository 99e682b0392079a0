"""Attention, as in Burn's ``burn::nn::attention``: ``MultiHeadAttention``, ``CrossAttention``
and the masks (true where attention is *not* allowed).

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import NdArray
    >>> from ferrum.nn.attention import MhaInput, MultiHeadAttentionConfig
    >>> device = NdArray.device()
    >>> mha = MultiHeadAttentionConfig(4, 1).with_dropout(0.0).init(device)
    >>> mha.forward(MhaInput.self_attn(Tensor.ones((1, 2, 4), device))).context.dims()
    (1, 2, 4)
"""

from ferrum.nn.attention.cross_attention import CrossAttention, CrossAttentionCache, CrossAttentionConfig
from ferrum.nn.attention.mask import (
    GeneratePaddingMask,
    SeqLengthOption,
    generate_autoregressive_mask,
    generate_padding_mask,
)
from ferrum.nn.attention.mha import MhaCache, MhaInput, MhaOutput, MultiHeadAttention, MultiHeadAttentionConfig

__all__ = [
    "CrossAttention",
    "CrossAttentionCache",
    "CrossAttentionConfig",
    "GeneratePaddingMask",
    "MhaCache",
    "MhaInput",
    "MhaOutput",
    "MultiHeadAttention",
    "MultiHeadAttentionConfig",
    "SeqLengthOption",
    "generate_autoregressive_mask",
    "generate_padding_mask",
]
