"""Neural-network layers, as in Burn's ``burn::nn``.

Every layer follows one pattern: ``ThingConfig(required).with_option(v).init(device)``
builds a ``Thing`` module whose ``forward`` does the work; parameter-free
layers need no device. As in Burn, the submodules ``conv``, ``pool``,
``attention``, ``transformer``, ``interpolate``, ``cache`` and ``loss`` hold
their families (``from ferrum.nn.attention import MhaInput``); the common
layers, the convolutions and the pools are also here at the top level.

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import NdArray
    >>> from ferrum.nn import LinearConfig, Relu
    >>> device = NdArray.device()
    >>> layer = LinearConfig(4, 2).init(device)
    >>> Relu().forward(layer.forward(Tensor.ones((3, 4), device))).dims()
    (3, 2)
"""

from ferrum.nn import activation, attention, cache, conv, interpolate, loss, pool, transformer
from ferrum.nn.activation import *  # noqa: F403 (the names of its __all__, exported below)
from ferrum.nn.activation_wrapper import Activation, ActivationConfig
from ferrum.nn.conv import *  # noqa: F403 (the names of its __all__, exported below)
from ferrum.nn.dropout import Dropout, DropoutConfig
from ferrum.nn.embedding import Embedding, EmbeddingConfig
from ferrum.nn.initializer import Initializer
from ferrum.nn.interpolate import (
    Interpolate1d,
    Interpolate1dConfig,
    Interpolate2d,
    Interpolate2dConfig,
    InterpolateMode,
)
from ferrum.nn.linear import Linear, LinearConfig, LinearLayout
from ferrum.nn.noise import GaussianNoise, GaussianNoiseConfig
from ferrum.nn.norm import (
    BatchNorm,
    BatchNormConfig,
    GroupNorm,
    GroupNormConfig,
    InstanceNorm,
    InstanceNormConfig,
    LayerNorm,
    LayerNormConfig,
    Normalization,
    NormalizationConfig,
    RmsNorm,
    RmsNormConfig,
)
from ferrum.nn.padding import PaddingConfig1d, PaddingConfig2d, PaddingConfig3d
from ferrum.nn.pool import *  # noqa: F403 (the names of its __all__, exported below)
from ferrum.nn.pos_encoding import PositionalEncoding, PositionalEncodingConfig, generate_sinusoids
from ferrum.nn.rnn import BiLstm, BiLstmConfig, GateController, Gru, GruConfig, Lstm, LstmConfig, LstmState
from ferrum.nn.rope_encoding import RotaryEncoding, RotaryEncodingConfig
from ferrum.nn.unfold import Unfold4d, Unfold4dConfig

__all__ = [
    "Activation",
    "ActivationConfig",
    "BatchNorm",
    "BatchNormConfig",
    "BiLstm",
    "BiLstmConfig",
    "Dropout",
    "DropoutConfig",
    "Embedding",
    "EmbeddingConfig",
    "GateController",
    "GaussianNoise",
    "GaussianNoiseConfig",
    "GroupNorm",
    "GroupNormConfig",
    "Gru",
    "GruConfig",
    "Initializer",
    "InstanceNorm",
    "InstanceNormConfig",
    "Interpolate1d",
    "Interpolate1dConfig",
    "Interpolate2d",
    "Interpolate2dConfig",
    "InterpolateMode",
    "LayerNorm",
    "LayerNormConfig",
    "Linear",
    "LinearConfig",
    "LinearLayout",
    "Lstm",
    "LstmConfig",
    "LstmState",
    "Normalization",
    "NormalizationConfig",
    "PaddingConfig1d",
    "PaddingConfig2d",
    "PaddingConfig3d",
    "PositionalEncoding",
    "PositionalEncodingConfig",
    "RmsNorm",
    "RmsNormConfig",
    "RotaryEncoding",
    "RotaryEncodingConfig",
    "Unfold4d",
    "Unfold4dConfig",
    "attention",
    "cache",
    "conv",
    "generate_sinusoids",
    "interpolate",
    "loss",
    "pool",
    "transformer",
]
# The layers of these modules are exported as they are listed there.
__all__ += activation.__all__
__all__ += conv.__all__
__all__ += pool.__all__
