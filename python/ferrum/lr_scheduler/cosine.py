"""Cosine annealing with warm restarts (Burn's ``CosineAnnealingLrSchedulerConfig``).

``lr(i) = min_lr + (initial_lr - min_lr) * (1 + cos(pi * i / num_iters)) / 2``
for ``i = 0 .. num_iters``, after which it restarts at ``initial_lr``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ferrum.config import config
from ferrum.lr_scheduler.base import LrScheduler, check_count, check_lr_range, record_index

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
        initial_lr = check_lr_range(owner, "initial_lr", self.initial_lr, above_zero=True)
        high_text = f"initial_lr ({initial_lr})"
        min_lr = check_lr_range(
            owner, "min_lr", self.min_lr, above_zero=False, high=initial_lr, high_text=high_text
        )
        num_iters = check_count(owner, "num_iters", self.num_iters, "an int of at least 1")
        return CosineAnnealingLrScheduler(initial_lr, min_lr, num_iters)


class CosineAnnealingLrScheduler(LrScheduler):
    """Cosine annealing; build it with ``CosineAnnealingLrSchedulerConfig(...).init()``.

    Example:
        >>> from ferrum.lr_scheduler import CosineAnnealingLrSchedulerConfig
        >>> scheduler = CosineAnnealingLrSchedulerConfig(0.5, 2).with_min_lr(0.1).init()
        >>> [round(scheduler.step(), 6) for _ in range(4)]
        [0.5, 0.3, 0.1, 0.5]
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
        owner = "CosineAnnealingLrScheduler"
        self.current_iter = record_index(owner, record, "current_iter", -1, self.num_iters)
