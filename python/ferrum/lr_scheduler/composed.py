"""Composed schedule (Burn's ``ComposedLrSchedulerConfig``): several schedules combined per step.

Each step advances every child schedule and combines their rates by the
``reduction``: their product (the default), sum or average.

Example:
    >>> from ferrum.lr_scheduler import (
    ...     ComposedLrSchedulerConfig, ExponentialLrSchedulerConfig, LinearLrSchedulerConfig,
    ... )
    >>> config = (
    ...     ComposedLrSchedulerConfig()
    ...     .linear(LinearLrSchedulerConfig(1.0, 0.5, 1))
    ...     .exponential(ExponentialLrSchedulerConfig(0.5, 0.5))
    ... )
    >>> scheduler = config.init()
    >>> [scheduler.step() for _ in range(3)]
    [0.5, 0.125, 0.0625]
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from typing import Annotated, Any

from ferrum.config import config
from ferrum.config.serde import SerdeUnion
from ferrum.lr_scheduler.base import LrScheduler
from ferrum.lr_scheduler.cosine import CosineAnnealingLrSchedulerConfig
from ferrum.lr_scheduler.exponential import ExponentialLrSchedulerConfig
from ferrum.lr_scheduler.linear import LinearLrSchedulerConfig
from ferrum.lr_scheduler.noam import NoamLrSchedulerConfig

__all__ = ["ComposedLrScheduler", "ComposedLrSchedulerConfig", "SchedulerReduction"]

# Burn's `enum LrSchedulerConfig { Linear(..), Cosine(..), Exponential(..), Noam(..) }`.
SchedulerConfig = Annotated[
    LinearLrSchedulerConfig
    | CosineAnnealingLrSchedulerConfig
    | ExponentialLrSchedulerConfig
    | NoamLrSchedulerConfig,
    SerdeUnion(
        {
            "Linear": LinearLrSchedulerConfig,
            "Cosine": CosineAnnealingLrSchedulerConfig,
            "Exponential": ExponentialLrSchedulerConfig,
            "Noam": NoamLrSchedulerConfig,
        }
    ),
]


class SchedulerReduction(enum.Enum):
    """How the rates of the composed schedules combine."""

    Avg = "Avg"
    Sum = "Sum"
    Prod = "Prod"


@config
class ComposedLrSchedulerConfig:
    """A composed schedule's configuration; ``linear``, ``cosine``, ``exponential``, ``noam`` add children.

    Example:
        >>> from ferrum.lr_scheduler import ComposedLrSchedulerConfig, SchedulerReduction
        >>> ComposedLrSchedulerConfig().reduction
        <SchedulerReduction.Prod: 'Prod'>
    """

    schedulers: tuple[SchedulerConfig, ...] = ()
    reduction: SchedulerReduction = SchedulerReduction.Prod

    def __post_init__(self) -> None:
        allowed = (
            LinearLrSchedulerConfig,
            CosineAnnealingLrSchedulerConfig,
            ExponentialLrSchedulerConfig,
            NoamLrSchedulerConfig,
        )
        if not isinstance(self.schedulers, tuple):
            object.__setattr__(self, "schedulers", tuple(self.schedulers))
        for i, item in enumerate(self.schedulers):
            if not isinstance(item, allowed):
                raise ValueError(
                    f"ComposedLrSchedulerConfig.schedulers[{i}]: expected a Linear, CosineAnnealing,"
                    f" Exponential or Noam scheduler config, found {type(item).__name__}"
                )
        if not isinstance(self.reduction, SchedulerReduction):
            raise ValueError(
                f"ComposedLrSchedulerConfig.reduction must be a SchedulerReduction, found {self.reduction!r}"
            )

    def linear(self, config: LinearLrSchedulerConfig) -> ComposedLrSchedulerConfig:
        """A copy with a linear schedule appended."""
        return self._append(config)

    def cosine(self, config: CosineAnnealingLrSchedulerConfig) -> ComposedLrSchedulerConfig:
        """A copy with a cosine-annealing schedule appended."""
        return self._append(config)

    def exponential(self, config: ExponentialLrSchedulerConfig) -> ComposedLrSchedulerConfig:
        """A copy with an exponential schedule appended."""
        return self._append(config)

    def noam(self, config: NoamLrSchedulerConfig) -> ComposedLrSchedulerConfig:
        """A copy with a Noam schedule appended."""
        return self._append(config)

    def _append(self, config: SchedulerConfig) -> ComposedLrSchedulerConfig:
        return ComposedLrSchedulerConfig((*self.schedulers, config), self.reduction)

    def init(self) -> ComposedLrScheduler:
        """The composed schedule; ValueError when a child config is invalid."""
        return ComposedLrScheduler([child.init() for child in self.schedulers], self.reduction)


class ComposedLrScheduler(LrScheduler):
    """Several schedules combined; build it with ``ComposedLrSchedulerConfig(...).init()``.

    Example:
        >>> from ferrum.lr_scheduler import ComposedLrScheduler, ConstantLr, SchedulerReduction
        >>> ComposedLrScheduler([ConstantLr(0.2), ConstantLr(0.4)], SchedulerReduction.Avg).step()
        0.30000000000000004
    """

    def __init__(
        self, schedulers: list[LrScheduler], reduction: SchedulerReduction = SchedulerReduction.Prod
    ) -> None:
        for i, item in enumerate(schedulers):
            if not isinstance(item, LrScheduler):
                raise TypeError(f"ComposedLrScheduler: schedulers[{i}] is not an LrScheduler: {item!r}")
        self.schedulers = list(schedulers)
        self.reduction = reduction

    def step(self) -> float:
        rates = [scheduler.step() for scheduler in self.schedulers]
        if self.reduction is SchedulerReduction.Prod:
            return math.prod(rates)
        if self.reduction is SchedulerReduction.Sum:
            return sum(rates)
        return sum(rate / len(rates) for rate in rates)

    def to_record(self) -> dict[str, Any]:
        return {"schedulers": [scheduler.to_record() for scheduler in self.schedulers]}

    def _load(self, record: Mapping[str, Any]) -> None:
        records = record.get("schedulers")
        if not isinstance(records, list) or len(records) != len(self.schedulers):
            raise ValueError(
                f"ComposedLrScheduler record: expected 'schedulers' as a list of"
                f" {len(self.schedulers)} records, found {records!r}"
            )
        self.schedulers = [
            scheduler.load_record(child) for scheduler, child in zip(self.schedulers, records, strict=True)
        ]
