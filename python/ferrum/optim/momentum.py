"""``MomentumConfig``: SGD momentum with dampening and Nesterov (Burn's ``MomentumConfig``).

Example:
    >>> from ferrum.optim import MomentumConfig, SgdConfig
    >>> SgdConfig().with_momentum(MomentumConfig().with_nesterov(True)).momentum.nesterov
    True
"""

from __future__ import annotations

from ferrum.config import config
from ferrum.config.checks import check_number

__all__ = ["MomentumConfig"]


@config
class MomentumConfig:
    """Momentum: ``v = momentum * v + (1 - dampening) * grad`` (``v = grad`` on the first step).

    With ``nesterov`` the step is ``momentum * v + grad``, otherwise ``v``.

    Example:
        >>> from ferrum.optim import MomentumConfig
        >>> MomentumConfig()
        MomentumConfig(momentum=0.9, dampening=0.1, nesterov=False)
    """

    momentum: float = 0.9
    dampening: float = 0.1
    nesterov: bool = False

    def __post_init__(self) -> None:
        check_number("MomentumConfig", "momentum", self.momentum)
        check_number("MomentumConfig", "dampening", self.dampening)
        if not isinstance(self.nesterov, bool):
            raise ValueError(f"MomentumConfig.nesterov must be a bool, found {self.nesterov!r}")
