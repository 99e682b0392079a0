"""Activation functions, as in Burn's ``burn::tensor::activation``.

Each runs as one fused engine kernel and keeps the tensor's backend and rank.

Example:
    >>> from ferrum import Tensor, activation
    >>> from ferrum.backend import NdArray
    >>> x = Tensor.from_floats([-1.0, 0.0, 2.0], NdArray.device())
    >>> activation.relu(x).to_data().to_list()
    [0.0, 0.0, 2.0]
"""

from ferrum._ferrum import (
    gelu,
    glu,
    hard_sigmoid,
    hard_swish,
    leaky_relu,
    log_sigmoid,
    log_softmax,
    mish,
    prelu,
    quiet_softmax,
    relu,
    sigmoid,
    silu,
    softmax,
    softmin,
    softplus,
    tanh,
)

__all__ = [
    "gelu",
    "glu",
    "hard_sigmoid",
    "hard_swish",
    "leaky_relu",
    "log_sigmoid",
    "log_softmax",
    "mish",
    "prelu",
    "quiet_softmax",
    "relu",
    "sigmoid",
    "silu",
    "softmax",
    "softmin",
    "softplus",
    "tanh",
]
