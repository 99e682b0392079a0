"""Learning-rate schedules, as in Burn's ``burn::lr_scheduler``.

A schedule's ``step()`` returns the learning rate of the next iteration; a
plain float is a constant schedule. Every schedule saves its position with
``to_record()`` and resumes with ``load_record(record)``.

Example:
    >>> from ferrum.lr_scheduler import StepLrSchedulerConfig
    >>> scheduler = StepLrSchedulerConfig(0.5, 3).init()
    >>> [round(scheduler.step(), 6) for _ in range(4)]
    [0.5, 0.5, 0.5, 0.05]
"""

from ferrum.lr_scheduler.base import ConstantLr, LrScheduler, LrSchedulerLike, as_lr_scheduler
from ferrum.lr_scheduler.composed import ComposedLrScheduler, ComposedLrSchedulerConfig, SchedulerReduction
from ferrum.lr_scheduler.cosine import CosineAnnealingLrScheduler, CosineAnnealingLrSchedulerConfig
from ferrum.lr_scheduler.exponential import ExponentialLrScheduler, ExponentialLrSchedulerConfig
from ferrum.lr_scheduler.linear import LinearLrScheduler, LinearLrSchedulerConfig
from ferrum.lr_scheduler.noam import NoamLrScheduler, NoamLrSchedulerConfig
from ferrum.lr_scheduler.step import StepLrScheduler, StepLrSchedulerConfig

__all__ = [
    "ComposedLrScheduler",
    "ComposedLrSchedulerConfig",
    "ConstantLr",
    "CosineAnnealingLrScheduler",
    "CosineAnnealingLrSchedulerConfig",
    "ExponentialLrScheduler",
    "ExponentialLrSchedulerConfig",
    "LinearLrScheduler",
    "LinearLrSchedulerConfig",
    "LrScheduler",
    "LrSchedulerLike",
    "NoamLrScheduler",
    "NoamLrSchedulerConfig",
    "SchedulerReduction",
    "StepLrScheduler",
    "StepLrSchedulerConfig",
    "as_lr_scheduler",
]
