"""``WeightDecayConfig``: an L2 penalty added to the gradient (Burn's ``WeightDecayConfig``).

Example:
    >>> from ferrum.optim import AdamConfig, WeightDecayConfig
    >>> AdamConfig().with_weight_decay(WeightDecayConfig(5e-4)).weight_decay
    WeightDecayConfig(penalty=0.0005)
"""

from __future__ import annotations

from ferrum.config import config
from ferrum.config.checks import check_number

__all__ = ["WeightDecayConfig", "penalty_of"]


@config
class WeightDecayConfig:
    """Weight decay: the optimizer sees ``grad + penalty * param``.

    Example:
        >>> from ferrum.optim import WeightDecayConfig
        >>> WeightDecayConfig(penalty=0.01).penalty
        0.01
    """

    penalty: float

    def __post_init__(self) -> None:
        check_number("WeightDecayConfig", "penalty", self.penalty)


def penalty_of(weight_decay: WeightDecayConfig | None) -> float | None:
    """The penalty an optimizer's fused step takes: ``None`` without weight decay.

    Example:
        >>> penalty_of(WeightDecayConfig(0.01)), penalty_of(None)
        (0.01, None)
    """
    return weight_decay.penalty if weight_decay is not None else None
