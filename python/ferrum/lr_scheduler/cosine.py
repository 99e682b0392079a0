"""Cosine annealing with warm restarts (Burn's ``CosineAnnealingLrSchedulerConfig``).

``lr(i) = min_lr + (initial_lr - min_lr) * (1 + cos(pi * i / num_iters)) / 2``
for ``i = 0 .. num_iters``, after which it restarts at ``initial_lr``.

Example:
    >>> from ferrum.lr_scheduler import CosineAnnealingLrSchedulerConfig
    >>> scheduler = CosineAnnealingLrSchedulerConfig(0.5, 2).with_min_lr(0.1).init()
    >>> [round(scheduler.step(), 6) for _ in range(4)]
    [0.5, 0.3, 0.1, 0.5]
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ferrum.config import config
from ferrum.lr_scheduler.base import LrScheduler, check_lr, record_number

__all__ = ["CosineAnnealingLrScheduler", "CosineAnnealingLrSchedulerConfig"]


@config
class CosineAnnealingLrSchedulerConfig:
    """Configuration of cosine annealing.

    Example:
        >>> from ferrum.lr_scheduler import CosineAnnealingLrSchedulerConfig
        >>> CosineAnnealingLrSchedulerConfig(0.1, 100).min_lr
        0.0
    """

    initial_lr: float
    num_iters: int
    min_lr: float = 0.0

    def init(self) -> CosineAnnealingLrScheduler:
        """The schedule; ValueError for ``initial_lr`` outside (0, 1], ``min_lr`` outside [0, initial_lr]
        or ``num_iters`` below 1."""
        owner = "CosineAnnealingLrSchedulerConfig"
        initial_lr = check_lr(owner, "initial_lr", self.initial_lr)
        min_lr = check_lr(owner, "min_lr", self.min_lr)
        if not 0.0 < initial_lr <= 1.0:
            raise ValueError(f"{owner}.initial_lr must be greater than 0 and at most 1, found {initial_lr}")
        if not 0.0 <= min_lr <= initial_lr:
            raise ValueError(
                f"{owner}.min_lr must be at least 0 and at most initial_lr ({initial_lr}), found {min_lr}"
            )
        if isinstance(self.num_iters, bool) or not isinstance(self.num_iters, int) or self.num_iters < 1:
            raise ValueError(f"{owner}.num_iters must be an int of at least 1, found {self.num_iters!r}")
        return CosineAnnealingLrScheduler(initial_lr, min_lr, self.num_iters)


class CosineAnnealingLrScheduler(LrScheduler):
    """Cosine annealing; build it with ``CosineAnnealingLrSchedulerConfig(...).init()``.

    Example:
        >>> from ferrum.lr_scheduler import CosineAnnealingLrSchedulerConfig
        >>> CosineAnnealingLrSchedulerConfig(0.2, 10).init().step()
        0.2
    """

    def __init__(self, max_lr: float, min_lr: float, num_iters: int) -> None:
        self.max_lr = max_lr
        self.min_lr = min_lr
        self.num_iters = num_iters
        # -1 so that the first step lands on iteration 0 (the initial rate).
        self.current_iter = -1

    def step(self) -> float:
        self.current_iter = (self.current_iter + 1) % (self.num_iters + 1)
        phase = math.pi * self.current_iter / self.num_iters
        return self.min_lr + 0.5 * (self.max_lr - self.min_lr) * (1.0 + math.cos(phase))

    def to_record(self) -> dict[str, Any]:
        return {"current_iter": self.current_iter}

    def _load(self, record: Mapping[str, Any]) -> None:
        current = record_number("CosineAnnealingLrScheduler", record, "current_iter", integer=True)
        if not -1 <= current <= self.num_iters:
            raise ValueError(
                f"CosineAnnealingLrScheduler record 'current_iter' must be in [-1, {self.num_iters}],"
                f" found {current}"
            )
        self.current_iter = int(current)
