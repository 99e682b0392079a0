"""``GaussianNoise``: adds ``N(0, std^2)`` noise while training, as Burn's ``burn::nn::GaussianNoise``.

Active only on an autodiff backend; after ``model.valid()`` (or on a plain
backend) it returns its input.
"""

from __future__ import annotations

import math

from ferrum._ferrum import Distribution, Float, Tensor
from ferrum.config import config
from ferrum.nn.stateless import Stateless
from ferrum.nn.type_vars import B, D

__all__ = ["GaussianNoise", "GaussianNoiseConfig"]


def _check_std(owner: str, std: object) -> None:
    if isinstance(std, bool) or not isinstance(std, (int, float)) or not math.isfinite(std) or std < 0:
        raise ValueError(f"{owner}.std must be a finite number >= 0, found {std!r}")


@config
class GaussianNoiseConfig:
    """Configuration of ``GaussianNoise``: the standard deviation ``std`` of the noise.

    Example:
        >>> from ferrum.nn import GaussianNoiseConfig
        >>> GaussianNoiseConfig(0.1).init().std
        0.1
    """

    std: float

    def __post_init__(self) -> None:
        _check_std("GaussianNoiseConfig", self.std)

    def init(self) -> GaussianNoise:
        """The layer (no parameters, so no device)."""
        return GaussianNoise(float(self.std))


class GaussianNoise(Stateless):
    """``x + N(0, std^2)`` elementwise during training; identity otherwise.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import Autodiff, NdArray
        >>> from ferrum.nn import GaussianNoise
        >>> Autodiff[NdArray].seed(0)
        >>> noisy = GaussianNoise(1.0).forward(Tensor.zeros((1000,), Autodiff[NdArray].device()))
        >>> 0.9 < noisy.var(0).into_scalar() < 1.1
        True
    """

    std: float

    def __post_init__(self) -> None:
        _check_std("GaussianNoise", self.std)

    def forward(self, x: Tensor[B, D, Float]) -> Tensor[B, D, Float]:
        """``x`` plus noise of the same shape (training only)."""
        if not x.device().is_autodiff or self.std == 0.0:
            return x
        return x + x.random_like(Distribution.Normal(0.0, self.std))
