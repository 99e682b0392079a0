"""Noam schedule (Burn's ``NoamLrSchedulerConfig``), from "Attention Is All You Need".

``lr(t) = factor * model_size^-0.5 * min(t^-0.5, t * warmup_steps^-1.5)``
for steps ``t = 1, 2, ...``: a linear warm-up, then decay as ``1/sqrt(t)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ferrum.config import config
from ferrum.lr_scheduler.base import LrScheduler, check_count, check_lr, record_number

__all__ = ["NoamLrScheduler", "NoamLrSchedulerConfig"]


@config
class NoamLrSchedulerConfig:
    """Configuration of the Noam schedule.

    Example:
        >>> from ferrum.lr_scheduler import NoamLrSchedulerConfig
        >>> NoamLrSchedulerConfig(0.5)
        NoamLrSchedulerConfig(factor=0.5, warmup_steps=4000, model_size=512)
    """

    factor: float
    warmup_steps: int = 4000
    model_size: int = 512

    def init(self) -> NoamLrScheduler:
        """The schedule; ValueError when ``warmup_steps`` or ``model_size`` is not positive."""
        factor = check_lr("NoamLrSchedulerConfig", "factor", self.factor)
        warmup_steps = check_count("NoamLrSchedulerConfig", "warmup_steps", self.warmup_steps, "an int > 0")
        model_size = check_count("NoamLrSchedulerConfig", "model_size", self.model_size, "an int > 0")
        return NoamLrScheduler(factor, warmup_steps, model_size)


class NoamLrScheduler(LrScheduler):
    """The Noam schedule; build it with ``NoamLrSchedulerConfig(factor).init()``.

    Example:
        >>> from ferrum.lr_scheduler import NoamLrSchedulerConfig
        >>> scheduler = NoamLrSchedulerConfig(1.0).with_warmup_steps(2).with_model_size(4).init()
        >>> [round(scheduler.step(), 4) for _ in range(3)]
        [0.1768, 0.3536, 0.2887]
        >>> scheduler.to_record()
        {'step': 3.0}
    """

    def __init__(self, factor: float, warmup_steps: int, model_size: int) -> None:
        self.factor = factor
        self.warmup_steps = float(warmup_steps)
        self.model_size = float(model_size)
        self.current = 0.0

    def step(self) -> float:
        self.current += 1.0
        rising = self.current * self.warmup_steps**-1.5
        falling = self.current**-0.5
        return float(self.factor * self.model_size**-0.5 * min(falling, rising))

    def to_record(self) -> dict[str, Any]:
        return {"step": self.current}

    def _load(self, record: Mapping[str, Any]) -> None:
        self.current = float(record_number("NoamLrScheduler", record, "step"))
