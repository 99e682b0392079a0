"""Adam (Burn's ``AdamConfig``/``Adam``): adaptive moments with bias correction.

```
g = grad + penalty * param           (weight decay, when configured)
m = beta_1 * m + (1 - beta_1) * g;   v = beta_2 * v + (1 - beta_2) * g^2
param = param - lr * m_hat / (sqrt(v_hat) + epsilon)
```

Example:
    >>> from ferrum.optim import AdamConfig
    >>> AdamConfig()
    AdamConfig(beta_1=0.9, beta_2=0.999, epsilon=1e-05, weight_decay=None, grad_clipping=None)
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Mapping
from typing import Any, Generic, Protocol, TypeVar

import ferrum._ferrum as _ferrum
from ferrum.config import config
from ferrum.config.checks import check_number
from ferrum.optim import record
from ferrum.optim.base import FloatTensor, Optimizer
from ferrum.optim.clipping import GradientClippingConfig, init_clipping
from ferrum.optim.decay import WeightDecayConfig, penalty_of

__all__ = ["Adam", "AdamConfig", "AdaptiveMomentumState"]


def check_betas(owner: str, beta_1: float, beta_2: float, epsilon: float) -> None:
    """Betas in [0, 1) and a non-negative epsilon, or ValueError naming the field."""
    check_number(owner, "beta_1", beta_1, low=0.0, high=1.0, high_open=True)
    check_number(owner, "beta_2", beta_2, low=0.0, high=1.0, high_open=True)
    check_number(owner, "epsilon", epsilon, low=0.0)


@config
class AdamConfig:
    """Configuration of Adam (Burn's defaults; note ``epsilon`` is 1e-5 as in Burn).

    Example:
        >>> from ferrum.optim import AdamConfig
        >>> AdamConfig().with_beta_1(0.8).init().config.beta_1
        0.8
    """

    beta_1: float = 0.9
    beta_2: float = 0.999
    epsilon: float = 1e-5
    weight_decay: WeightDecayConfig | None = None
    grad_clipping: GradientClippingConfig | None = None

    def __post_init__(self) -> None:
        check_betas("AdamConfig", self.beta_1, self.beta_2, self.epsilon)

    def init(self) -> Adam:
        """A fresh optimizer (no state yet)."""
        return Adam(self)


@dataclasses.dataclass(frozen=True)
class AdaptiveMomentumState:
    """Adam's state per parameter: the step count and both moment estimates.

    The moments are ``StateTensor`` s that the next step rewrites in place (a
    tensor taken from them with ``tensor()`` keeps its values).
    """

    time: int
    moment_1: _ferrum.StateTensor
    moment_2: _ferrum.StateTensor


def adaptive_momentum_step(
    tensor: FloatTensor,
    grad: FloatTensor,
    state: AdaptiveMomentumState | None,
    lr: float,
    betas_epsilon: tuple[float, float, float],
    penalty: float | None,
    decoupled: bool,
    cautious: bool = False,
) -> tuple[FloatTensor, AdaptiveMomentumState]:
    """One Adam update in the engine's fused kernel; ``decoupled`` applies AdamW's weight decay
    (``cautious``: only where the weight's sign agrees with the new first moment's)."""
    time = 1 if state is None else state.time + 1
    beta_1, beta_2, epsilon = betas_epsilon
    new, m1, m2 = _ferrum.adam_step(
        tensor,
        grad,
        None if state is None else state.moment_1,
        None if state is None else state.moment_2,
        time,
        lr,
        beta_1,
        beta_2,
        epsilon,
        penalty,
        decoupled,
        cautious,
    )
    return new, AdaptiveMomentumState(time, m1, m2)


class AdaptiveMomentumConfig(Protocol):
    """What ``AdaptiveMomentumOptimizer`` reads from ``AdamConfig`` and ``AdamWConfig``."""

    @property
    def beta_1(self) -> float:
        """The first moment's decay."""
        ...

    @property
    def beta_2(self) -> float:
        """The second moment's decay."""
        ...

    @property
    def epsilon(self) -> float:
        """Added to the second moment's root."""
        ...

    @property
    def grad_clipping(self) -> GradientClippingConfig | None:
        """The clipping of each gradient before the update, if any."""
        ...


C = TypeVar("C", bound=AdaptiveMomentumConfig)


class AdaptiveMomentumOptimizer(Optimizer[AdaptiveMomentumState], Generic[C]):
    """What Adam and AdamW share: their ``config`` (a ``C``), the update in the engine's fused kernel,
    the per-parameter ``AdaptiveMomentumState`` and its record; each says how it decays the weights.

    The record has Burn's field names: ``{"momentum": {"time", "moment_1", "moment_2"}}``.
    """

    def __init__(self, config: C) -> None:
        super().__init__(init_clipping(config.grad_clipping))
        self.config = config
        # Read once: configs are frozen, and each step of each parameter needs them.
        self._betas_epsilon = (config.beta_1, config.beta_2, config.epsilon)
        self._decay = self._weight_decay()

    @abc.abstractmethod
    def _weight_decay(self) -> tuple[float | None, bool, bool]:
        """The penalty (None for none), whether it is decoupled from the gradient (AdamW) and whether
        it is cautious (only where the weight's sign agrees with the first moment's)."""

    def _update(
        self, lr: float, tensor: FloatTensor, grad: FloatTensor, state: AdaptiveMomentumState | None
    ) -> tuple[FloatTensor, AdaptiveMomentumState]:
        penalty, decoupled, cautious = self._decay
        hyper = self._betas_epsilon
        return adaptive_momentum_step(tensor, grad, state, lr, hyper, penalty, decoupled, cautious)

    def _state_to_record(self, state: AdaptiveMomentumState) -> dict[str, Any]:
        moments = {"moment_1": state.moment_1.tensor(), "moment_2": state.moment_2.tensor()}
        return {"momentum": {"time": state.time, **moments}}

    def _state_from_record(self, path: str, data: Mapping[str, Any]) -> AdaptiveMomentumState:
        time = record.step_count(record.section(data, path, "momentum"), f"{path}.momentum", "time")
        moment_1 = record.state_tensor(data, path, "momentum", "moment_1")
        return AdaptiveMomentumState(time, moment_1, record.state_tensor(data, path, "momentum", "moment_2"))


class Adam(AdaptiveMomentumOptimizer[AdamConfig]):
    """Adam; build it with ``AdamConfig(...).init()``.

    Example:
        >>> from ferrum.optim import AdamConfig
        >>> type(AdamConfig().init()).__name__
        'Adam'
    """

    def _weight_decay(self) -> tuple[float | None, bool, bool]:
        # Burn's Adam adds the penalty to the gradient, before the moments.
        return penalty_of(self.config.weight_decay), False, False
