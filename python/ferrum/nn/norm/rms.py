"""``RmsNorm``: root-mean-square normalization over the last dimension, as in Burn."""

from __future__ import annotations

from ferrum._ferrum import Device, Float, Tensor
from ferrum.config import config
from ferrum.config.checks import check_epsilon, check_positive_int
from ferrum.module import Module, Param
from ferrum.nn.initializer import Initializer
from ferrum.nn.norm.checks import check_last_dim
from ferrum.nn.type_vars import B, D
from ferrum.tensor.rank import D1

__all__ = ["RmsNorm", "RmsNormConfig"]


@config
class RmsNormConfig:
    """Configuration of ``RmsNorm`` (Burn's default epsilon 1e-5).

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import RmsNormConfig
        >>> RmsNormConfig(8).init(NdArray.device()).num_params()
        8
    """

    d_model: int
    epsilon: float = 1e-5

    def __post_init__(self) -> None:
        check_positive_int("RmsNormConfig", "d_model", self.d_model)
        check_epsilon("RmsNormConfig", self.epsilon)

    def init(self, device: Device[B]) -> RmsNorm[B]:
        """A new layer on ``device``: gamma ones."""
        return RmsNorm(gamma=Initializer.Ones.init((self.d_model,), device), epsilon=self.epsilon)


class RmsNorm(Module[B]):
    """``x / sqrt(mean(x^2) + epsilon) * gamma`` over the last dimension.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import RmsNormConfig
        >>> device = NdArray.device()
        >>> RmsNormConfig(4).init(device).forward(Tensor.ones((2, 4), device)).dims()
        (2, 4)
    """

    gamma: Param[Tensor[B, D1]]
    epsilon: float

    def forward(self, x: Tensor[B, D, Float]) -> Tensor[B, D, Float]:
        """``[..., d_model]`` in, same shape out."""
        d_model = self.gamma.shape()[0]
        check_last_dim("RmsNorm", x, d_model)
        last = x.rank() - 1
        rms = (x.square().mean_dim(last) + self.epsilon).sqrt()
        return x / rms * self.gamma.val().reshape((1,) * last + (d_model,))

    def _display_settings(self) -> list[tuple[str, object]]:
        return [("d_model", self.gamma.shape()[0]), ("epsilon", self.epsilon)]
