"""Linear schedule (Burn's ``LinearLrSchedulerConfig``): ``initial_lr`` to ``final_lr`` over ``num_iters``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ferrum.config import config
from ferrum.lr_scheduler.base import LrScheduler, check_count, check_lr_range, record_index

__all__ = ["LinearLrScheduler", "LinearLrSchedulerConfig"]


@config
class LinearLrSchedulerConfig:
    """Configuration of the linear schedule.

    Example:
        >>> from ferrum.lr_scheduler import LinearLrSchedulerConfig
        >>> LinearLrSchedulerConfig(0.01, 0.04, 3).num_iters
        3
    """

    initial_lr: float
    final_lr: float
    num_iters: int

    def init(self) -> LinearLrScheduler:
        """The schedule; ValueError for ``initial_lr`` outside (0, 1], ``final_lr`` outside [0, 1]
        or ``num_iters`` below 1."""
        owner = "LinearLrSchedulerConfig"
        initial_lr = check_lr_range(owner, "initial_lr", self.initial_lr, above_zero=True)
        final_lr = check_lr_range(owner, "final_lr", self.final_lr, above_zero=False)
        num_iters = check_count(owner, "num_iters", self.num_iters, "an int of at least 1")
        return LinearLrScheduler(initial_lr, final_lr, num_iters)


class LinearLrScheduler(LrScheduler):
    """The linear schedule; build it with ``LinearLrSchedulerConfig(...).init()``.

    Example:
        >>> from ferrum.lr_scheduler import LinearLrSchedulerConfig
        >>> scheduler = LinearLrSchedulerConfig(0.9, 0.5, 4).init()
        >>> [round(scheduler.step(), 6) for _ in range(6)]
        [0.9, 0.8, 0.7, 0.6, 0.5, 0.5]
        >>> scheduler.to_record()
        {'remaining_iters': 0}
    """

    def __init__(self, initial_lr: float, final_lr: float, num_iters: int) -> None:
        self.final_lr = final_lr
        self.step_size = (final_lr - initial_lr) / num_iters
        self.remaining_iters = num_iters + 1

    def step(self) -> float:
        if self.remaining_iters > 0:
            self.remaining_iters -= 1
        return self.final_lr - self.step_size * self.remaining_iters

    def to_record(self) -> dict[str, Any]:
        return {"remaining_iters": self.remaining_iters}

    def _load(self, record: Mapping[str, Any]) -> None:
        self.remaining_iters = record_index("LinearLrScheduler", record, "remaining_iters", 0)
