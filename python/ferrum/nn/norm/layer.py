"""``LayerNorm``: normalization over the last dimension, as in Burn."""

from __future__ import annotations

from ferrum._ferrum import Device, Float, Tensor, layer_norm
from ferrum.config import config
from ferrum.config.checks import check_epsilon, check_positive_int
from ferrum.module import Module, Param
from ferrum.nn.initializer import Initializer
from ferrum.nn.norm.checks import check_last_dim
from ferrum.nn.type_vars import B, D
from ferrum.tensor.rank import D1

__all__ = ["LayerNorm", "LayerNormConfig"]


@config
class LayerNormConfig:
    """Configuration of ``LayerNorm`` (Burn's defaults: epsilon 1e-5, with bias).

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import LayerNormConfig
        >>> LayerNormConfig(8).with_bias(False).init(NdArray.device()).num_params()
        8
    """

    d_model: int
    epsilon: float = 1e-5
    bias: bool = True

    def __post_init__(self) -> None:
        check_positive_int("LayerNormConfig", "d_model", self.d_model)
        check_epsilon("LayerNormConfig", self.epsilon)

    def init(self, device: Device[B]) -> LayerNorm[B]:
        """A new layer on ``device``: gamma ones, beta zeros."""
        shape = (self.d_model,)
        beta = Initializer.Zeros.init(shape, device) if self.bias else None
        return LayerNorm(gamma=Initializer.Ones.init(shape, device), beta=beta, epsilon=self.epsilon)


class LayerNorm(Module[B]):
    """``(x - mean) / sqrt(var + epsilon) * gamma + beta`` over the last dimension (biased variance).

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import LayerNormConfig
        >>> device = NdArray.device()
        >>> LayerNormConfig(4).init(device).forward(Tensor.ones((2, 3, 4), device)).dims()
        (2, 3, 4)
    """

    gamma: Param[Tensor[B, D1]]
    beta: Param[Tensor[B, D1]] | None
    epsilon: float

    def forward(self, x: Tensor[B, D, Float]) -> Tensor[B, D, Float]:
        """``[..., d_model]`` in, same shape out."""
        d_model = self.gamma.shape()[0]
        check_last_dim("LayerNorm", x, d_model)
        # One fused op, forward and backward: composed of element-wise ops the
        # backward paid for six broadcasting nodes and their sums over rows.
        beta = self.beta.val() if self.beta is not None else None
        return layer_norm(x, self.gamma.val(), beta, self.epsilon)

    def _display_settings(self) -> list[tuple[str, object]]:
        d_model = self.gamma.shape()[0]
        return [("d_model", d_model), ("epsilon", self.epsilon), ("bias", self.beta is not None)]
