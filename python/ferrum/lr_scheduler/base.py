"""``LrScheduler``: what the training loop asks for the learning rate of each step.

``step()`` advances the schedule and returns the learning rate to use;
``to_record()``/``load_record()`` save and restore the position for
checkpoints. A plain float is a constant schedule (as Burn's ``f64``):
``as_lr_scheduler(1e-3)`` wraps it.

Example:
    >>> from ferrum.lr_scheduler import as_lr_scheduler
    >>> scheduler = as_lr_scheduler(1e-3)
    >>> scheduler.step(), scheduler.step()
    (0.001, 0.001)
"""

from __future__ import annotations

import abc
import copy
import math
from collections.abc import Mapping
from typing import Any

from typing_extensions import Self

__all__ = ["ConstantLr", "LrScheduler", "LrSchedulerLike", "as_lr_scheduler", "check_lr", "record_number"]


class LrScheduler(abc.ABC):
    """Base class of learning-rate schedules.

    Example:
        >>> from ferrum.lr_scheduler import ExponentialLrSchedulerConfig
        >>> scheduler = ExponentialLrSchedulerConfig(0.5, 0.5).init()
        >>> [scheduler.step() for _ in range(3)]
        [0.5, 0.25, 0.125]
    """

    @abc.abstractmethod
    def step(self) -> float:
        """Advance one iteration and return its learning rate."""

    @abc.abstractmethod
    def to_record(self) -> dict[str, Any]:
        """The schedule's position, as plain numbers."""

    def load_record(self, record: Mapping[str, Any]) -> Self:
        """A copy of this scheduler resumed at the position saved in ``record``."""
        if not isinstance(record, Mapping):
            found = type(record).__name__
            raise ValueError(f"{type(self).__name__}.load_record: expected a dict, found {found}")
        new = copy.copy(self)
        new._load(record)
        return new

    @abc.abstractmethod
    def _load(self, record: Mapping[str, Any]) -> None:
        """Set the position from ``record``; ValueError names the missing or bad entry."""


class ConstantLr(LrScheduler):
    """The same learning rate at every step.

    Example:
        >>> from ferrum.lr_scheduler import ConstantLr
        >>> ConstantLr(0.1).step()
        0.1
    """

    def __init__(self, lr: float) -> None:
        self.lr = check_lr("ConstantLr", "lr", lr)

    def step(self) -> float:
        return self.lr

    def to_record(self) -> dict[str, Any]:
        return {}

    def _load(self, record: Mapping[str, Any]) -> None:
        pass

    def __repr__(self) -> str:
        return f"ConstantLr({self.lr})"


LrSchedulerLike = float | LrScheduler


def as_lr_scheduler(scheduler: LrSchedulerLike) -> LrScheduler:
    """``scheduler`` itself, or a ``ConstantLr`` when it is a number.

    Example:
        >>> from ferrum.lr_scheduler import as_lr_scheduler
        >>> as_lr_scheduler(0.01)
        ConstantLr(0.01)
    """
    if isinstance(scheduler, LrScheduler):
        return scheduler
    if isinstance(scheduler, (int, float)) and not isinstance(scheduler, bool):
        return ConstantLr(scheduler)
    found = type(scheduler).__name__
    raise TypeError(f"a learning-rate scheduler is a float or an LrScheduler, found {found}")


def check_lr(owner: str, name: str, value: object) -> float:
    """``value`` as a float, or ValueError naming ``owner.name`` when it is not a finite number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{owner}.{name} must be a finite number, found {value!r}")
    return float(value)


def record_number(owner: str, record: Mapping[str, Any], name: str, *, integer: bool = False) -> Any:
    """``record[name]`` as a number (an int when ``integer``), or ValueError naming it."""
    if name not in record:
        raise ValueError(f"{owner} record has no '{name}' (found keys {sorted(record)})")
    value = record[name]
    kinds: tuple[type, ...] = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds):
        expected = "an int" if integer else "a number"
        raise ValueError(f"{owner} record '{name}': expected {expected}, found {value!r}")
    return value
