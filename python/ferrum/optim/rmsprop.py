"""RMSProp (Burn's ``RmsPropConfig``/``RmsProp``), optionally centered and with momentum.

```
g = grad + penalty * param                               (weight decay)
square_avg = alpha * square_avg + (1 - alpha) * g^2
avg = square_avg - grad_avg^2  (centered, grad_avg the running mean of g)  or  square_avg
d = g / (sqrt(avg) + epsilon);  buf = momentum * buf + d;  d = buf   (momentum > 0)
param = param - lr * d
```

Example:
    >>> from ferrum.optim import RmsPropConfig
    >>> config = RmsPropConfig()
    >>> config.alpha, config.momentum, config.epsilon, config.centered
    (0.99, 0.9, 1e-05, False)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import ferrum._ferrum as _ferrum
from ferrum.config import config
from ferrum.config.checks import check_number
from ferrum.optim import record
from ferrum.optim.base import FloatTensor, Optimizer
from ferrum.optim.clipping import GradientClippingConfig, init_clipping
from ferrum.optim.decay import WeightDecayConfig, penalty_of

__all__ = ["RmsProp", "RmsPropConfig", "RmsPropState"]


@config
class RmsPropConfig:
    """Configuration of RMSProp (Burn's defaults).

    Example:
        >>> from ferrum.optim import RmsPropConfig
        >>> RmsPropConfig().with_centered(True).init().config.centered
        True
    """

    alpha: float = 0.99
    momentum: float = 0.9
    epsilon: float = 1e-5
    centered: bool = False
    weight_decay: WeightDecayConfig | None = None
    grad_clipping: GradientClippingConfig | None = None

    def __post_init__(self) -> None:
        check_number("RmsPropConfig", "alpha", self.alpha, low=0.0, high=1.0)
        check_number("RmsPropConfig", "momentum", self.momentum, low=0.0)
        check_number("RmsPropConfig", "epsilon", self.epsilon, low=0.0)
        if not isinstance(self.centered, bool):
            raise ValueError(f"RmsPropConfig.centered must be a bool, found {self.centered!r}")

    def init(self) -> RmsProp:
        """A fresh optimizer (no state yet)."""
        return RmsProp(self)


@dataclasses.dataclass(frozen=True)
class RmsPropState:
    """RMSProp's state per parameter; ``grad_avg`` only when centered, ``momentum`` only with momentum.

    Each is a ``StateTensor`` that the next step rewrites in place (a tensor
    taken from it with ``tensor()`` keeps its values).
    """

    square_avg: _ferrum.StateTensor
    grad_avg: _ferrum.StateTensor | None
    momentum: _ferrum.StateTensor | None


class RmsProp(Optimizer[RmsPropState]):
    """RMSProp; build it with ``RmsPropConfig(...).init()``.

    Example:
        >>> from ferrum.optim import RmsPropConfig
        >>> type(RmsPropConfig().init()).__name__
        'RmsProp'
    """

    def __init__(self, config: RmsPropConfig) -> None:
        super().__init__(init_clipping(config.grad_clipping))
        self.config = config

    def _update(
        self, lr: float, tensor: FloatTensor, grad: FloatTensor, state: RmsPropState | None
    ) -> tuple[FloatTensor, RmsPropState]:
        c = self.config
        centered = c.centered
        with_momentum = c.momentum > 0.0
        new, square_avg, grad_avg, buf = _ferrum.rmsprop_step(
            tensor,
            grad,
            None if state is None else state.square_avg,
            None if state is None or not centered else state.grad_avg,
            None if state is None or not with_momentum else state.momentum,
            lr,
            c.alpha,
            c.momentum,
            c.epsilon,
            centered,
            penalty_of(c.weight_decay),
        )
        return new, RmsPropState(square_avg, grad_avg, buf)

    def _state_to_record(self, state: RmsPropState) -> dict[str, Any]:
        # Burn's CenteredState also stores the average the step divided by;
        # ferrum recomputes it, so it is written for Burn and ignored on load.
        square_avg = state.square_avg.tensor()
        grad_avg = None if state.grad_avg is None else state.grad_avg.tensor()
        avg = square_avg if grad_avg is None else square_avg - grad_avg * grad_avg
        return {
            "square_avg": {"square_avg": square_avg},
            "centered": {"grad_avg": grad_avg, "avg": avg},
            "momentum": record.optional_state("buf", state.momentum),
        }

    def _state_from_record(self, path: str, data: Mapping[str, Any]) -> RmsPropState:
        square_avg = record.state_tensor(data, path, "square_avg", "square_avg")
        centered = record.section(data, path, "centered")
        grad_avg = record.optional_tensor(centered, f"{path}.centered", "grad_avg")
        momentum = record.optional_state_tensor(data, path, "momentum", "buf")
        return RmsPropState(square_avg, None if grad_avg is None else _ferrum.StateTensor(grad_avg), momentum)
