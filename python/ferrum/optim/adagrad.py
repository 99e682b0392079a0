"""AdaGrad (Burn's ``AdaGradConfig``/``AdaGrad``) with learning-rate decay.

```
g = grad + penalty * param         (weight decay, when configured)
sum = sum + g^2
param = param - lr / (1 + (t - 1) * lr_decay) * g / (sqrt(sum) + epsilon)
```

Example:
    >>> from ferrum.optim import AdaGradConfig
    >>> AdaGradConfig()
    AdaGradConfig(lr_decay=0.0, epsilon=1e-05, weight_decay=None, grad_clipping=None)
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

__all__ = ["AdaGrad", "AdaGradConfig", "LrDecayState"]


@config
class AdaGradConfig:
    """Configuration of AdaGrad (Burn's defaults).

    Example:
        >>> from ferrum.optim import AdaGradConfig
        >>> AdaGradConfig().with_lr_decay(0.5).init().config.lr_decay
        0.5
    """

    lr_decay: float = 0.0
    epsilon: float = 1e-5
    weight_decay: WeightDecayConfig | None = None
    grad_clipping: GradientClippingConfig | None = None

    def __post_init__(self) -> None:
        check_number("AdaGradConfig", "lr_decay", self.lr_decay, low=0.0)
        check_number("AdaGradConfig", "epsilon", self.epsilon, low=0.0)

    def init(self) -> AdaGrad:
        """A fresh optimizer (no state yet)."""
        return AdaGrad(self)


@dataclasses.dataclass(frozen=True)
class LrDecayState:
    """AdaGrad's state per parameter: the step count and the sum of squared gradients.

    The sum is a ``StateTensor`` that the next step rewrites in place (a
    tensor taken from it with ``tensor()`` keeps its values).
    """

    time: int
    sum: _ferrum.StateTensor


class AdaGrad(Optimizer[LrDecayState]):
    """AdaGrad; build it with ``AdaGradConfig(...).init()``.

    Example:
        >>> from ferrum.optim import AdaGradConfig
        >>> type(AdaGradConfig().init()).__name__
        'AdaGrad'
    """

    def __init__(self, config: AdaGradConfig) -> None:
        super().__init__(init_clipping(config.grad_clipping))
        self.config = config

    def _update(
        self, lr: float, tensor: FloatTensor, grad: FloatTensor, state: LrDecayState | None
    ) -> tuple[FloatTensor, LrDecayState]:
        c = self.config
        time = 1 if state is None else state.time + 1
        new, total = _ferrum.adagrad_step(
            tensor,
            grad,
            None if state is None else state.sum,
            time,
            lr,
            c.lr_decay,
            c.epsilon,
            penalty_of(c.weight_decay),
        )
        return new, LrDecayState(time, total)

    def _state_to_record(self, state: LrDecayState) -> dict[str, Any]:
        return {"lr_decay": {"time": state.time, "sum": state.sum.tensor()}}

    def _state_from_record(self, path: str, data: Mapping[str, Any]) -> LrDecayState:
        section = record.section(data, path, "lr_decay")
        total = record.state_tensor(data, path, "lr_decay", "sum")
        return LrDecayState(record.step_count(section, f"{path}.lr_decay", "time"), total)
