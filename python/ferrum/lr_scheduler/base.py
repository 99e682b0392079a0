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
from collections.abc import Mapping
from typing import Any

from typing_extensions import Self

from ferrum.config.checks import check_finite

__all__ = [
    "ConstantLr",
    "LrScheduler",
    "LrSchedulerLike",
    "as_lr_scheduler",
    "check_count",
    "check_lr",
    "check_lr_range",
    "record_index",
    "record_number",
]


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
    return check_finite(owner, name, value)


def check_lr_range(
    owner: str, name: str, value: object, *, above_zero: bool, high: float = 1.0, high_text: str = "1"
) -> float:
    """``check_lr``, then ValueError unless the rate is in (0, high] (``above_zero``) or [0, high].

    ``high_text`` is how the message names the upper bound.

    Example:
        >>> check_lr_range("MyConfig", "final_lr", 1.5, above_zero=False)
        Traceback (most recent call last):
        ...
        ValueError: MyConfig.final_lr must be at least 0 and at most 1, found 1.5
    """
    lr = check_lr(owner, name, value)
    if not ((0.0 < lr) if above_zero else (0.0 <= lr)) or lr > high:
        low_text = "greater than 0" if above_zero else "at least 0"
        raise ValueError(f"{owner}.{name} must be {low_text} and at most {high_text}, found {lr}")
    return lr


def check_count(owner: str, name: str, value: object, expected: str) -> int:
    """``value`` if it is an int of at least 1, else ValueError saying it must be ``expected``.

    Example:
        >>> check_count("MyConfig", "num_iters", 0, "an int of at least 1")
        Traceback (most recent call last):
        ...
        ValueError: MyConfig.num_iters must be an int of at least 1, found 0
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{owner}.{name} must be {expected}, found {value!r}")
    return value


def record_index(owner: str, record: Mapping[str, Any], name: str, low: int, high: int | None = None) -> int:
    """The int ``record[name]`` in [low, high] (no upper bound when ``high`` is None), or ValueError.

    Example:
        >>> record_index("MyScheduler", {"step": -2}, "step", -1)
        Traceback (most recent call last):
        ...
        ValueError: MyScheduler record 'step' must be >= -1, found -2
    """
    value = int(record_number(owner, record, name, integer=True))
    if value < low or (high is not None and value > high):
        bounds = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{owner} record '{name}' must be {bounds}, found {value}")
    return value


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
