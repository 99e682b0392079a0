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

from ferrum.nn import attention, cache, conv, interpolate, loss, pool, transformer
from ferrum.nn.activation import (
    GLU,
    Gelu,
    Glu,
    HardSigmoid,
    HardSigmoidConfig,
    HardSwish,
    LeakyRelu,
    LeakyReluConfig,
    PRelu,
    PReluConfig,
    Relu,
    Sigmoid,
    Softplus,
    SoftplusConfig,
    SwiGlu,
    SwiGluConfig,
    Tanh,
)
from ferrum.nn.activation_wrapper import Activation, ActivationConfig
from ferrum.nn.conv import (
    Conv1d,
    Conv1dConfig,
    Conv2d,
    Conv2dConfig,
    Conv3d,
    Conv3dConfig,
    ConvTranspose1d,
    ConvTranspose1dConfig,
    ConvTranspose2d,
    ConvTranspose2dConfig,
    ConvTranspose3d,
    ConvTranspose3dConfig,
    DeformConv2d,
    DeformConv2dConfig,
)
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
from ferrum.nn.pool import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool1dConfig,
    AdaptiveAvgPool2d,
    AdaptiveAvgPool2dConfig,
    AvgPool1d,
    AvgPool1dConfig,
    AvgPool2d,
    AvgPool2dConfig,
    MaxPool1d,
    MaxPool1dConfig,
    MaxPool2d,
    MaxPool2dConfig,
)
from ferrum.nn.pos_encoding import PositionalEncoding, PositionalEncodingConfig, generate_sinusoids
from ferrum.nn.rnn import BiLstm, BiLstmConfig, GateController, Gru, GruConfig, Lstm, LstmConfig, LstmState
from ferrum.nn.rope_encoding import RotaryEncoding, RotaryEncodingConfig
from ferrum.nn.unfold import Unfold4d, Unfold4dConfig

__all__ = [
    "GLU",
    "Activation",
    "ActivationConfig",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool1dConfig",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool2dConfig",
    "AvgPool1d",
    "AvgPool1dConfig",
    "AvgPool2d",
    "AvgPool2dConfig",
    "BatchNorm",
    "BatchNormConfig",
    "BiLstm",
    "BiLstmConfig",
    "Conv1d",
    "Conv1dConfig",
    "Conv2d",
    "Conv2dConfig",
    "Conv3d",
    "Conv3dConfig",
    "ConvTranspose1d",
    "ConvTranspose1dConfig",
    "ConvTranspose2d",
    "ConvTranspose2dConfig",
    "ConvTranspose3d",
    "ConvTranspose3dConfig",
    "DeformConv2d",
    "DeformConv2dConfig",
    "Dropout",
    "DropoutConfig",
    "Embedding",
    "EmbeddingConfig",
    "GateController",
    "GaussianNoise",
    "GaussianNoiseConfig",
    "Gelu",
    "Glu",
    "GroupNorm",
    "GroupNormConfig",
    "Gru",
    "GruConfig",
    "HardSigmoid",
    "HardSigmoidConfig",
    "HardSwish",
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
    "LeakyRelu",
    "LeakyReluConfig",
    "Linear",
    "LinearConfig",
    "LinearLayout",
    "Lstm",
    "LstmConfig",
    "LstmState",
    "MaxPool1d",
    "MaxPool1dConfig",
    "MaxPool2d",
    "MaxPool2dConfig",
    "Normalization",
    "NormalizationConfig",
    "PRelu",
    "PReluConfig",
    "PaddingConfig1d",
    "PaddingConfig2d",
    "PaddingConfig3d",
    "PositionalEncoding",
    "PositionalEncodingConfig",
    "Relu",
    "RmsNorm",
    "RmsNormConfig",
    "RotaryEncoding",
    "RotaryEncodingConfig",
    "Sigmoid",
    "Softplus",
    "SoftplusConfig",
    "SwiGlu",
    "SwiGluConfig",
    "Tanh",
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
