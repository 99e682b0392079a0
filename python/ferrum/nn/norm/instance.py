"""``InstanceNorm``: each channel of each sample normalized on its own (GroupNorm, a channel per group)."""

from __future__ import annotations

from ferrum._ferrum import Device, Float, Tensor
from ferrum.config import config
from ferrum.config.checks import check_epsilon, check_positive_int
from ferrum.module import Module, Param
from ferrum.nn.norm.checks import check_channels
from ferrum.nn.norm.group import affine_params, group_norm
from ferrum.nn.type_vars import B, D
from ferrum.tensor.rank import D1

__all__ = ["InstanceNorm", "InstanceNormConfig"]


@config
class InstanceNormConfig:
    """Configuration of ``InstanceNorm`` (Burn's defaults: epsilon 1e-5, affine).

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import InstanceNormConfig
        >>> InstanceNormConfig(4).with_affine(False).init(NdArray.device()).num_params()
        0
    """

    num_channels: int
    epsilon: float = 1e-5
    affine: bool = True

    def __post_init__(self) -> None:
        check_positive_int("InstanceNormConfig", "num_channels", self.num_channels)
        check_epsilon("InstanceNormConfig", self.epsilon)

    def init(self, device: Device[B]) -> InstanceNorm[B]:
        """A new layer on ``device``: gamma ones and beta zeros when affine."""
        gamma, beta = affine_params(self.num_channels, self.affine, device)
        return InstanceNorm(gamma=gamma, beta=beta, num_channels=self.num_channels, epsilon=self.epsilon)


class InstanceNorm(Module[B]):
    """Normalizes each channel of each sample of ``[batch, channels, ...]`` over its positions.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import InstanceNormConfig
        >>> device = NdArray.device()
        >>> x = Tensor.from_floats([[[1.0, 3.0]]], device)
        >>> [round(v, 3) for v in InstanceNormConfig(1).init(device).forward(x).to_data().to_list()[0][0]]
        [-1.0, 1.0]
    """

    gamma: Param[Tensor[B, D1]] | None
    beta: Param[Tensor[B, D1]] | None
    num_channels: int
    epsilon: float

    def forward(self, x: Tensor[B, D, Float]) -> Tensor[B, D, Float]:
        """``[batch, channels, ...]`` in, same shape out."""
        check_channels("InstanceNorm", x, self.num_channels)
        return group_norm(x, self.gamma, self.beta, self.num_channels, self.epsilon)

    def _display_settings(self) -> list[tuple[str, object]]:
        affine = self.gamma is not None
        return [("num_channels", self.num_channels), ("epsilon", self.epsilon), ("affine", affine)]
