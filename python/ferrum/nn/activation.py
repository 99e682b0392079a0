"""Activation layers: modules wrapping ``ferrum.activation``, as in Burn's ``nn`` module.

Stateless ones (``Relu()``, ``Gelu()``, ``Sigmoid()``, ``Tanh()``) are built
directly; those with settings or parameters come from a config.
"""

from __future__ import annotations

import math
from typing import Any

from ferrum import activation
from ferrum._ferrum import Device, Float, Tensor
from ferrum.config import config
from ferrum.config.checks import check_positive_int
from ferrum.module import Module, Param
from ferrum.nn.initializer import Initializer
from ferrum.nn.linear import Linear, LinearConfig, LinearLayout
from ferrum.nn.stateless import Stateless
from ferrum.nn.type_vars import B, D
from ferrum.tensor.rank import D1

__all__ = [
    "GLU",
    "Gelu",
    "Glu",
    "HardSigmoid",
    "HardSigmoidConfig",
    "HardSwish",
    "LeakyRelu",
    "LeakyReluConfig",
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


class Relu(Stateless):
    """``max(x, 0)``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import Relu
        >>> Relu().forward(Tensor.from_floats([-1.0, 1.0], NdArray.device())).to_data().to_list()
        [0.0, 1.0]
    """

    def forward(self, x: Tensor[B, D, Float]) -> Tensor[B, D, Float]:
        """``max(x, 0)`` element-wise; any shape, kept."""
        return activation.relu(x)


class Gelu(Stateless):
    """Gaussian error linear unit (exact, with erf).

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import Gelu
        >>> Gelu().forward(Tensor.from_floats([0.0], NdArray.device())).to_data().to_list()
        [0.0]
    """

    def forward(self, x: Tensor[B, D, Float]) -> Tensor[B, D, Float]:
        """The Gaussian error linear unit ``x * Phi(x)`` (exact, with erf) element-wise; any shape, kept."""
        return activation.gelu(x)


class Sigmoid(Stateless):
    """``1 / (1 + exp(-x))``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import Sigmoid
        >>> Sigmoid().forward(Tensor.from_floats([0.0], NdArray.device())).to_data().to_list()
        [0.5]
    """

    def forward(self, x: Tensor[B, D, Float]) -> Tensor[B, D, Float]:
        """``1 / (1 + exp(-x))`` element-wise; any shape, kept."""
        return activation.sigmoid(x)


class Tanh(Stateless):
    """Hyperbolic tangent.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import Tanh
        >>> Tanh().forward(Tensor.from_floats([0.0], NdArray.device())).to_data().to_list()
        [0.0]
    """

    def forward(self, x: Tensor[B, D, Float]) -> Tensor[B, D, Float]:
        """The hyperbolic tangent element-wise; any shape, kept."""
        return activation.tanh(x)


class HardSwish(Stateless):
    """``x * relu6(x + 3) / 6``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import HardSwish
        >>> HardSwish().forward(Tensor.from_floats([-4.0, 0.0, 4.0], NdArray.device())).to_data().to_list()
        [-0.0, 0.0, 4.0]
    """

    def forward(self, x: Tensor[B, D, Float]) -> Tensor[B, D, Float]:
        """``x * relu6(x + 3) / 6`` element-wise; any shape, kept."""
        return activation.hard_swish(x)


@config
class LeakyReluConfig:
    """Configuration of ``LeakyRelu`` (Burn's default slope 0.01).

    Example:
        >>> from ferrum.nn import LeakyReluConfig
        >>> LeakyReluConfig().init().negative_slope
        0.01
    """

    negative_slope: float = 0.01

    def init(self) -> LeakyRelu:
        """The layer (it has no parameters, so no device)."""
        return LeakyRelu(self.negative_slope)


class LeakyRelu(Stateless):
    """``x`` where positive, ``negative_slope * x`` elsewhere.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import LeakyRelu
        >>> LeakyRelu(0.1).forward(Tensor.from_floats([-10.0], NdArray.device())).to_data().to_list()
        [-1.0]
    """

    negative_slope: float

    def forward(self, x: Tensor[B, D, Float]) -> Tensor[B, D, Float]:
        """``x`` where ``x >= 0``, else ``negative_slope * x``; any shape, kept."""
        return activation.leaky_relu(x, self.negative_slope)


@config
class PReluConfig:
    """Configuration of ``PRelu``: ``num_parameters`` slopes (1, or one per channel), starting at ``alpha``.

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import PReluConfig
        >>> PReluConfig(num_parameters=3).init(NdArray.device()).num_params()
        3
    """

    num_parameters: int = 1
    alpha: float = 0.25

    def __post_init__(self) -> None:
        check_positive_int("PReluConfig", "num_parameters", self.num_parameters)

    def init(self, device: Device[B]) -> PRelu[B]:
        """A new layer on ``device``."""
        alpha = Initializer.Constant(self.alpha).init((self.num_parameters,), device)
        return PRelu(alpha=alpha, alpha_value=float(self.alpha))


class PRelu(Module[B]):
    """Leaky ReLU with learned slopes; several slopes apply along dimension 1 (channels).

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import PReluConfig
        >>> device = NdArray.device()
        >>> PReluConfig().init(device).forward(Tensor.from_floats([-4.0, 4.0], device)).to_data().to_list()
        [-1.0, 4.0]
    """

    alpha: Param[Tensor[B, D1]]
    alpha_value: float = 0.25
    """The initial slope (Burn's ``alpha_value``, a constant of the record)."""

    def forward(self, x: Tensor[B, D, Float]) -> Tensor[B, D, Float]:
        """``x`` where ``x >= 0``, else ``alpha * x``; shape kept.

        ``alpha`` is learned: one slope per channel (dim 1 of ``x``), or one for every element.
        """
        return activation.prelu(x, self.alpha.val())

    def _display_settings(self) -> list[tuple[str, object]]:
        return [("num_parameters", self.alpha.shape()[0]), ("alpha_value", self.alpha_value)]


@config
class HardSigmoidConfig:
    """Configuration of ``HardSigmoid``: ``clamp(alpha * x + beta, 0, 1)``.

    Example:
        >>> from ferrum.nn import HardSigmoidConfig
        >>> HardSigmoidConfig().init().alpha
        0.2
    """

    alpha: float = 0.2
    beta: float = 0.5

    def init(self) -> HardSigmoid:
        """The layer."""
        return HardSigmoid(self.alpha, self.beta)


class HardSigmoid(Stateless):
    """``clamp(alpha * x + beta, 0, 1)``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import HardSigmoid
        >>> x = Tensor.from_floats([0.0, 5.0], NdArray.device())
        >>> HardSigmoid(0.2, 0.5).forward(x).to_data().to_list()
        [0.5, 1.0]
    """

    alpha: float
    beta: float

    def forward(self, x: Tensor[B, D, Float]) -> Tensor[B, D, Float]:
        """``clamp(alpha * x + beta, 0, 1)`` element-wise; any shape, kept."""
        return activation.hard_sigmoid(x, self.alpha, self.beta)


@config
class SoftplusConfig:
    """Configuration of ``Softplus``: ``log(1 + exp(beta * x)) / beta``.

    Example:
        >>> from ferrum.nn import SoftplusConfig
        >>> SoftplusConfig().init().beta
        1.0
    """

    beta: float = 1.0

    def __post_init__(self) -> None:
        if not self.beta > 0:
            raise ValueError(f"SoftplusConfig.beta must be positive, found {self.beta!r}")

    def init(self) -> Softplus:
        """The layer."""
        return Softplus(self.beta)


class Softplus(Stateless):
    """``log(1 + exp(beta * x)) / beta``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import Softplus
        >>> round(Softplus(1.0).forward(Tensor.from_floats([0.0], NdArray.device())).into_scalar(), 4)
        0.6931
    """

    beta: float

    def forward(self, x: Tensor[B, D, Float]) -> Tensor[B, D, Float]:
        """``log(1 + exp(beta * x)) / beta`` element-wise, computed without overflow; any shape, kept."""
        return activation.softplus(x, self.beta)


@config
class SwiGluConfig:
    """Configuration of ``SwiGlu`` (Burn's defaults: no bias, Kaiming uniform, gain 1/sqrt(3), Row layout).

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import SwiGluConfig
        >>> SwiGluConfig(4, 8).init(NdArray.device()).num_params()
        64
    """

    d_input: int
    d_output: int
    bias: bool = False
    initializer: Initializer = Initializer.KaimingUniform(gain=1.0 / math.sqrt(3.0), fan_out_only=False)
    layout: LinearLayout = LinearLayout.Row

    def init(self, device: Device[B]) -> SwiGlu[B]:
        """A new layer on ``device``."""
        linear = LinearConfig(self.d_input, self.d_output, self.bias, self.initializer, self.layout)
        return SwiGlu(linear_inner=linear.init(device), linear_outer=linear.init(device))


class SwiGlu(Module[B]):
    """``silu(linear_inner(x)) * linear_outer(x)``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import SwiGluConfig
        >>> device = NdArray.device()
        >>> SwiGluConfig(4, 3).init(device).forward(Tensor.ones((2, 4), device)).dims()
        (2, 3)
    """

    linear_inner: Linear[B]
    linear_outer: Linear[B]

    def forward(self, x: Tensor[B, D, Float]) -> Tensor[B, D, Float]:
        """``silu(linear_inner(x)) * linear_outer(x)``: ``[..., d_input] -> [..., d_output]``."""
        return activation.silu(self.linear_inner.forward(x)) * self.linear_outer.forward(x)

    def _display_settings(self) -> list[tuple[str, object]]:
        d_input, d_output = self.linear_inner.weight.shape()
        return [("d_input", d_input), ("d_output", d_output), ("bias", self.linear_inner.bias is not None)]


class Glu(Module[Any]):
    """The gated linear unit along ``dim``: ``a * sigmoid(b)`` for the halves ``a``, ``b`` of that dim
    (Burn's ``GLU``, also importable under that name).

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import Glu
        >>> Glu(1).forward(Tensor.from_floats([[2.0, 0.0]], NdArray.device())).to_data().to_list()
        [[1.0]]
    """

    _constant_record = True

    dim: int

    def forward(self, x: Tensor[B, D, Float]) -> Tensor[B, D, Float]:
        """``[..., 2n, ...] -> [..., n, ...]`` along ``dim`` (which must have an even size)."""
        return activation.glu(x, self.dim)


GLU = Glu
"""Burn's name of ``Glu``."""
