"""Neural-network layers, as in Burn's ``burn::nn``.

Every layer follows one pattern: ``ThingConfig(required).with_option(v).init(device)``
builds a ``Thing`` module whose ``forward`` does the work; parameter-free
layers need no device. Convolutions and pools live in ``ferrum.nn.conv`` and
``ferrum.nn.pool``, losses in ``ferrum.nn.loss``.

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import NdArray
    >>> from ferrum.nn import LinearConfig, Relu
    >>> device = NdArray.device()
    >>> layer = LinearConfig(4, 2).init(device)
    >>> Relu().forward(layer.forward(Tensor.ones((3, 4), device))).dims()
    (3, 2)
"""

from ferrum.nn.activation import (
    Gelu,
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
    ConvTranspose1d,
    ConvTranspose1dConfig,
    ConvTranspose2d,
    ConvTranspose2dConfig,
)
from ferrum.nn.dropout import Dropout, DropoutConfig
from ferrum.nn.embedding import Embedding, EmbeddingConfig
from ferrum.nn.initializer import Initializer
from ferrum.nn.linear import Linear, LinearConfig
from ferrum.nn.norm import (
    BatchNorm,
    BatchNormConfig,
    GroupNorm,
    GroupNormConfig,
    InstanceNorm,
    InstanceNormConfig,
    LayerNorm,
    LayerNormConfig,
    RmsNorm,
    RmsNormConfig,
)
from ferrum.nn.padding import PaddingConfig1d, PaddingConfig2d
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

from ferrum.nn import attention, cache, transformer  # noqa: E402  (Burn's `pub mod`s)

__all__ = [
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
    "ConvTranspose1d",
    "ConvTranspose1dConfig",
    "ConvTranspose2d",
    "ConvTranspose2dConfig",
    "Dropout",
    "DropoutConfig",
    "Embedding",
    "EmbeddingConfig",
    "GateController",
    "Gelu",
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
    "LayerNorm",
    "LayerNormConfig",
    "LeakyRelu",
    "LeakyReluConfig",
    "Linear",
    "LinearConfig",
    "Lstm",
    "LstmConfig",
    "LstmState",
    "MaxPool1d",
    "MaxPool1dConfig",
    "MaxPool2d",
    "MaxPool2dConfig",
    "PRelu",
    "PReluConfig",
    "PaddingConfig1d",
    "PaddingConfig2d",
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
    "attention",
    "cache",
    "generate_sinusoids",
    "transformer",
]
