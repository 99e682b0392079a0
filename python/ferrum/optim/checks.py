"""Validation of optimizer hyper-parameters, with errors that name the field and the value."""

from __future__ import annotations

import math

__all__ = ["check_learning_rate", "check_number"]


def check_number(
    owner: str,
    name: str,
    value: object,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """``value`` as a float, or ValueError naming ``owner.name`` when it is not a finite number in range."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{owner}.{name} must be a finite number, found {value!r}")
    number = float(value)
    too_low = low is not None and (number <= low if low_open else number < low)
    too_high = high is not None and (number >= high if high_open else number > high)
    if too_low or too_high:
        # An unbounded side is open: (-inf and inf).
        left = "(-inf" if low is None else f"{'(' if low_open else '['}{low}"
        right = "inf)" if high is None else f"{high}{')' if high_open else ']'}"
        raise ValueError(f"{owner}.{name} must be in {left}, {right}, found {value!r}")
    return number


def check_learning_rate(lr: object) -> float:
    """The learning rate of a step as a float; it must be a finite number."""
    if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not math.isfinite(lr):
        raise ValueError(f"step: the learning rate must be a finite number, found {lr!r}")
    return float(lr)
