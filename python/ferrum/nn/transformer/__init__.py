"""Transformers, as in Burn's ``burn::nn::transformer``: encoder, decoder, position-wise feed-forward.

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import NdArray
    >>> from ferrum.nn.transformer import TransformerEncoderConfig, TransformerEncoderInput
    >>> device = NdArray.device()
    >>> encoder = TransformerEncoderConfig(4, 8, 2, 1).init(device)
    >>> encoder.forward(TransformerEncoderInput(Tensor.ones((1, 3, 4), device))).dims()
    (1, 3, 4)
"""

from ferrum.nn.transformer.decoder import (
    TransformerDecoder,
    TransformerDecoderAutoregressiveCache,
    TransformerDecoderConfig,
    TransformerDecoderInput,
    TransformerDecoderLayer,
)
from ferrum.nn.transformer.encoder import (
    TransformerEncoder,
    TransformerEncoderAutoregressiveCache,
    TransformerEncoderConfig,
    TransformerEncoderInput,
    TransformerEncoderLayer,
)
from ferrum.nn.transformer.pwff import PositionWiseFeedForward, PositionWiseFeedForwardConfig

__all__ = [
    "PositionWiseFeedForward",
    "PositionWiseFeedForwardConfig",
    "TransformerDecoder",
    "TransformerDecoderAutoregressiveCache",
    "TransformerDecoderConfig",
    "TransformerDecoderInput",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderAutoregressiveCache",
    "TransformerEncoderConfig",
    "TransformerEncoderInput",
    "TransformerEncoderLayer",
]
