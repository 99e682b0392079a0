"""Exponential schedule (Burn's ``ExponentialLrSchedulerConfig``): ``lr(i) = initial_lr * gamma^i``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ferrum.config import config
from ferrum.lr_scheduler.base import LrScheduler, check_lr_range, record_number

__all__ = ["ExponentialLrScheduler", "ExponentialLrSchedulerConfig"]


@config
class ExponentialLrSchedulerConfig:
    """Configuration of the exponential schedule.

    Example:
        >>> from ferrum.lr_scheduler import ExponentialLrSchedulerConfig
        >>> ExponentialLrSchedulerConfig(initial_lr=0.1, gamma=0.9).gamma
        0.9
    """

    initial_lr: float
    gamma: float

    def init(self) -> ExponentialLrScheduler:
        """The schedule; ValueError unless ``initial_lr`` and ``gamma`` are in (0, 1]."""
        owner = "ExponentialLrSchedulerConfig"
        initial_lr = check_lr_range(owner, "initial_lr", self.initial_lr, above_zero=True)
        gamma = check_lr_range(owner, "gamma", self.gamma, above_zero=True)
        return ExponentialLrScheduler(initial_lr, gamma)


class ExponentialLrScheduler(LrScheduler):
    """The exponential schedule; build it with ``ExponentialLrSchedulerConfig(...).init()``.

    Example:
        >>> from ferrum.lr_scheduler import ExponentialLrSchedulerConfig
        >>> scheduler = ExponentialLrSchedulerConfig(0.8, 0.5).init()
        >>> [scheduler.step() for _ in range(3)]
        [0.8, 0.4, 0.2]
    """

    def __init__(self, initial_lr: float, gamma: float) -> None:
        self.gamma = gamma
        # Starting one step "before" the first avoids a special case for it.
        self.previous_lr = initial_lr / gamma

    def step(self) -> float:
        self.previous_lr *= self.gamma
        return self.previous_lr

    def to_record(self) -> dict[str, Any]:
        return {"previous_lr": self.previous_lr}

    def _load(self, record: Mapping[str, Any]) -> None:
        self.previous_lr = float(record_number("ExponentialLrScheduler", record, "previous_lr"))
