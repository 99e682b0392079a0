"""Step schedule (Burn's ``StepLrSchedulerConfig``): multiply by ``gamma`` every ``step_size`` steps.

``lr(i) = initial_lr * gamma^(i // step_size)`` for ``i = 0, 1, ...``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ferrum.config import config
from ferrum.lr_scheduler.base import LrScheduler, check_count, check_lr, record_index

__all__ = ["StepLrScheduler", "StepLrSchedulerConfig"]


@config
class StepLrSchedulerConfig:
    """Configuration of the step schedule.

    Atypical ``initial_lr`` or ``gamma`` values are accepted (Burn only warns).

    Example:
        >>> from ferrum.lr_scheduler import StepLrSchedulerConfig
        >>> StepLrSchedulerConfig(0.5, 3).gamma
        0.1
    """

    initial_lr: float
    step_size: int
    gamma: float = 0.1

    def init(self) -> StepLrScheduler:
        """The schedule; ValueError when ``step_size`` is not a positive int."""
        initial_lr = check_lr("StepLrSchedulerConfig", "initial_lr", self.initial_lr)
        gamma = check_lr("StepLrSchedulerConfig", "gamma", self.gamma)
        step_size = check_count("StepLrSchedulerConfig", "step_size", self.step_size, "an int > 0")
        return StepLrScheduler(initial_lr, step_size, gamma)


class StepLrScheduler(LrScheduler):
    """The step schedule; build it with ``StepLrSchedulerConfig(...).init()``.

    Example:
        >>> from ferrum.lr_scheduler import StepLrSchedulerConfig
        >>> scheduler = StepLrSchedulerConfig(0.1, 2).with_gamma(2.0).init()
        >>> [round(scheduler.step(), 6) for _ in range(5)]
        [0.1, 0.1, 0.2, 0.2, 0.4]
    """

    def __init__(self, initial_lr: float, step_size: int, gamma: float) -> None:
        self.initial_lr = initial_lr
        self.step_size = step_size
        self.gamma = gamma
        self.iter_idx = -1

    def step(self) -> float:
        self.iter_idx += 1
        return float(self.initial_lr * self.gamma ** (self.iter_idx // self.step_size))

    def to_record(self) -> dict[str, Any]:
        return {"iter_idx": self.iter_idx}

    def _load(self, record: Mapping[str, Any]) -> None:
        self.iter_idx = record_index("StepLrScheduler", record, "iter_idx", -1)
