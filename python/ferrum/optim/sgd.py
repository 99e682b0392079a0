"""Stochastic gradient descent (Burn's ``SgdConfig``/``Sgd``).

``param = param - lr * g``, where ``g`` is the gradient plus the weight
decay penalty, passed through momentum when configured.

Example:
    >>> from ferrum.optim import MomentumConfig, SgdConfig, WeightDecayConfig
    >>> sgd = SgdConfig().with_momentum(MomentumConfig()).with_weight_decay(WeightDecayConfig(1e-4)).init()
    >>> sgd.has_gradient_clipping()
    False
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import ferrum._ferrum as _ferrum
from ferrum.config import config
from ferrum.optim import record
from ferrum.optim.base import FloatTensor, Optimizer
from ferrum.optim.clipping import GradientClippingConfig, init_clipping
from ferrum.optim.decay import WeightDecayConfig, penalty_of
from ferrum.optim.momentum import MomentumConfig

__all__ = ["Sgd", "SgdConfig", "SgdState"]


@config
class SgdConfig:
    """Configuration of SGD: optional weight decay, momentum and gradient clipping.

    Example:
        >>> from ferrum.optim import SgdConfig
        >>> SgdConfig()
        SgdConfig(weight_decay=None, momentum=None, gradient_clipping=None)
    """

    weight_decay: WeightDecayConfig | None = None
    momentum: MomentumConfig | None = None
    gradient_clipping: GradientClippingConfig | None = None

    def init(self) -> Sgd:
        """A fresh optimizer (no state yet)."""
        return Sgd(self)


@dataclasses.dataclass(frozen=True)
class SgdState:
    """The state SGD keeps per parameter: the momentum velocity (None without momentum).

    The velocity is a ``StateTensor`` that the next step rewrites in place (a
    tensor taken from it with ``tensor()`` keeps its values).
    """

    velocity: _ferrum.StateTensor | None


class Sgd(Optimizer[SgdState]):
    """SGD; build it with ``SgdConfig(...).init()``.

    Example:
        >>> from ferrum.optim import SgdConfig
        >>> type(SgdConfig().init()).__name__
        'Sgd'
    """

    def __init__(self, config: SgdConfig) -> None:
        super().__init__(init_clipping(config.gradient_clipping))
        self.config = config

    def _update(
        self, lr: float, tensor: FloatTensor, grad: FloatTensor, state: SgdState | None
    ) -> tuple[FloatTensor, SgdState]:
        c = self.config
        momentum = c.momentum
        new, velocity = _ferrum.sgd_step(
            tensor,
            grad,
            state.velocity if state is not None and momentum is not None else None,
            lr,
            penalty_of(c.weight_decay),
            momentum.momentum if momentum is not None else None,
            momentum.dampening if momentum is not None else 0.0,
            momentum.nesterov if momentum is not None else False,
        )
        return new, SgdState(velocity)

    def _state_to_record(self, state: SgdState) -> dict[str, Any]:
        return {"momentum": record.optional_state("velocity", state.velocity)}

    def _state_from_record(self, path: str, data: Mapping[str, Any]) -> SgdState:
        return SgdState(record.optional_state_tensor(data, path, "momentum", "velocity"))
