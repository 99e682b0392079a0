"""Linear schedule (Burn's ``LinearLrSchedulerConfig``): ``initial_lr`` to ``final_lr`` over ``num_iters``.

Example:
    >>> from ferrum.lr_scheduler import LinearLrSchedulerConfig
    >>> scheduler = LinearLrSchedulerConfig(0.9, 0.5, 4).init()
    >>> [round(scheduler.step(), 6) for _ in range(6)]
    [0.9, 0.8, 0.7, 0.6, 0.5, 0.5]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ferrum.config import config
from ferrum.lr_scheduler.base import LrScheduler, check_lr, record_number

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
        initial_lr = check_lr(owner, "initial_lr", self.initial_lr)
        final_lr = check_lr(owner, "final_lr", self.final_lr)
        if not 0.0 < initial_lr <= 1.0:
            raise ValueError(f"{owner}.initial_lr must be greater than 0 and at most 1, found {initial_lr}")
        if not 0.0 <= final_lr <= 1.0:
            raise ValueError(f"{owner}.final_lr must be at least 0 and at most 1, found {final_lr}")
        if isinstance(self.num_iters, bool) or not isinstance(self.num_iters, int) or self.num_iters < 1:
            raise ValueError(f"{owner}.num_iters must be an int of at least 1, found {self.num_iters!r}")
        return LinearLrScheduler(initial_lr, final_lr, self.num_iters)


class LinearLrScheduler(LrScheduler):
    """The linear schedule; build it with ``LinearLrSchedulerConfig(...).init()``.

    Example:
        >>> from ferrum.lr_scheduler import LinearLrSchedulerConfig
        >>> LinearLrSchedulerConfig(0.3, 0.1, 2).init().to_record()
        {'remaining_iters': 3}
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
        remaining = int(record_number("LinearLrScheduler", record, "remaining_iters", integer=True))
        if remaining < 0:
            raise ValueError(f"LinearLrScheduler record 'remaining_iters' must be >= 0, found {remaining}")
        self.remaining_iters = remaining
