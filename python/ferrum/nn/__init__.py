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
from ferrum.nn.dropout import Dropout, DropoutConfig
from ferrum.nn.embedding import Embedding, EmbeddingConfig
from ferrum.nn.initializer import Initializer
from ferrum.nn.linear import Linear, LinearConfig, LinearLayout
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

__all__ = [
    "BatchNorm",
    "BatchNormConfig",
    "Dropout",
    "DropoutConfig",
    "Embedding",
    "EmbeddingConfig",
    "Gelu",
    "GroupNorm",
    "GroupNormConfig",
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
    "LinearLayout",
    "PRelu",
    "PReluConfig",
    "PaddingConfig1d",
    "PaddingConfig2d",
    "Relu",
    "RmsNorm",
    "RmsNormConfig",
    "Sigmoid",
    "Softplus",
    "SoftplusConfig",
    "SwiGlu",
    "SwiGluConfig",
    "Tanh",
]
