"""Neural-network layers, as in Burn's ``burn::nn``.

Every layer follows one pattern: ``ThingConfig(required).with_option(v).init(device)``
builds a ``Thing`` module whose ``forward`` does the work; parameter-free
layers need no device.

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
from ferrum.nn.initializer import Initializer
from ferrum.nn.linear import Linear, LinearConfig

__all__ = [
    "Gelu",
    "HardSigmoid",
    "HardSigmoidConfig",
    "Initializer",
    "LeakyRelu",
    "LeakyReluConfig",
    "Linear",
    "LinearConfig",
    "PRelu",
    "PReluConfig",
    "Relu",
    "Sigmoid",
    "Softplus",
    "SoftplusConfig",
    "SwiGlu",
    "SwiGluConfig",
    "Tanh",
]
