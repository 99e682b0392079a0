"""``GroupNorm``: normalization over groups of channels, as in Burn."""

from __future__ import annotations

from ferrum._ferrum import Device, Float, Tensor
from ferrum.config import config
from ferrum.config.checks import check_epsilon, check_positive_int
from ferrum.module import Module, Param
from ferrum.nn.initializer import Initializer
from ferrum.nn.norm.checks import check_channels, feature_shape
from ferrum.nn.type_vars import B, D
from ferrum.tensor.rank import D1

__all__ = ["GroupNorm", "GroupNormConfig", "affine_params", "group_norm"]


@config
class GroupNormConfig:
    """Configuration of ``GroupNorm``: ``num_channels`` in ``num_groups`` (Burn's defaults: 1e-5, affine).

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import GroupNormConfig
        >>> GroupNormConfig(2, 6).init(NdArray.device()).num_params()
        12
    """

    num_groups: int
    num_channels: int
    epsilon: float = 1e-5
    affine: bool = True

    def __post_init__(self) -> None:
        check_positive_int("GroupNormConfig", "num_groups", self.num_groups)
        check_positive_int("GroupNormConfig", "num_channels", self.num_channels)
        check_epsilon("GroupNormConfig", self.epsilon)
        if self.num_channels % self.num_groups != 0:
            raise ValueError(
                f"GroupNormConfig: num_channels ({self.num_channels}) must be divisible by"
                f" num_groups ({self.num_groups})"
            )

    def init(self, device: Device[B]) -> GroupNorm[B]:
        """A new layer on ``device``: gamma ones and beta zeros when affine."""
        gamma, beta = affine_params(self.num_channels, self.affine, device)
        return GroupNorm(
            gamma=gamma,
            beta=beta,
            num_groups=self.num_groups,
            num_channels=self.num_channels,
            epsilon=self.epsilon,
        )


def affine_params(
    num_channels: int, affine: bool, device: Device[B]
) -> tuple[Param[Tensor[B, D1]] | None, Param[Tensor[B, D1]] | None]:
    """``(gamma, beta)`` of ``[num_channels]`` (ones and zeros) for an affine group or instance norm,
    ``(None, None)`` otherwise."""
    if not affine:
        return None, None
    shape = (num_channels,)
    return Initializer.Ones.init(shape, device), Initializer.Zeros.init(shape, device)


def group_norm(
    x: Tensor[B, D, Float],
    gamma: Param[Tensor[B, D1]] | None,
    beta: Param[Tensor[B, D1]] | None,
    num_groups: int,
    epsilon: float,
) -> Tensor[B, D, Float]:
    """Normalize ``[batch, channels, ...]`` per group of channels over all positions (biased variance)."""
    dims = x.dims()
    grouped = x.reshape((dims[0], num_groups, -1))
    var, mean = grouped.var_mean_bias(2)
    out: Tensor[B, D, Float] = ((grouped - mean) / (var + epsilon).sqrt()).reshape(dims)
    shape = feature_shape(len(dims), dims[1])
    if gamma is not None:
        out = out * gamma.val().reshape(shape)
    if beta is not None:
        out = out + beta.val().reshape(shape)
    return out


class GroupNorm(Module[B]):
    """Normalizes each group of ``num_channels / num_groups`` channels of ``[batch, channels, ...]`` inputs.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import GroupNormConfig
        >>> device = NdArray.device()
        >>> x = Tensor.from_floats([[[1.0], [3.0]]], device)
        >>> [round(v[0], 3) for v in GroupNormConfig(1, 2).init(device).forward(x).to_data().to_list()[0]]
        [-1.0, 1.0]
    """

    gamma: Param[Tensor[B, D1]] | None
    beta: Param[Tensor[B, D1]] | None
    num_groups: int
    num_channels: int
    epsilon: float

    def forward(self, x: Tensor[B, D, Float]) -> Tensor[B, D, Float]:
        """``[batch, channels, ...]`` in, same shape out."""
        check_channels("GroupNorm", x, self.num_channels)
        return group_norm(x, self.gamma, self.beta, self.num_groups, self.epsilon)

    def _display_settings(self) -> list[tuple[str, object]]:
        return [
            ("num_groups", self.num_groups),
            ("num_channels", self.num_channels),
            ("epsilon", self.epsilon),
            ("affine", self.gamma is not None),
        ]
