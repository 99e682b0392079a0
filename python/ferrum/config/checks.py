"""Checks of config fields shared by the whole package.

A config checks its fields when it is built (``__post_init__``) or
initialized, so a bad value fails where it was written rather than deep
inside a kernel. Each check raises ``ValueError`` naming the owner, the field
and the value found; a check that passes returns the value, as a float for
the number checks.

Example:
    >>> from ferrum.config.checks import check_positive_int
    >>> check_positive_int("EmbeddingConfig", "d_model", 0)
    Traceback (most recent call last):
    ...
    ValueError: EmbeddingConfig.d_model must be a positive int, found 0
"""

from __future__ import annotations

import math
from typing import TypeGuard

__all__ = [
    "check_epsilon",
    "check_finite",
    "check_number",
    "check_positive_int",
    "check_positive_ints",
    "check_probability",
]


def _is_number(value: object) -> TypeGuard[int | float]:
    # bool is an int subclass, but True is never meant as a size or a rate.
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_positive_int(owner: str, name: str, value: object) -> int:
    """``value`` if it is an int above 0, else ``ValueError`` naming ``owner.name``.

    Example:
        >>> check_positive_int("LinearConfig", "d_input", 3)
        3
    """
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{owner}.{name} must be a positive int, found {value!r}")
    return value


def check_positive_ints(owner: str, **values: object) -> None:
    """``check_positive_int`` of each keyword, in order: the first bad one is named.

    Example:
        >>> check_positive_ints("LstmConfig", d_input=2, d_hidden=-1)
        Traceback (most recent call last):
        ...
        ValueError: LstmConfig.d_hidden must be a positive int, found -1
    """
    for name, value in values.items():
        check_positive_int(owner, name, value)


def check_finite(owner: str, name: str, value: object) -> float:
    """``value`` as a float, or ``ValueError`` naming ``owner.name`` when it is not a finite number.

    Example:
        >>> check_finite("StepLrSchedulerConfig", "gamma", float("nan"))
        Traceback (most recent call last):
        ...
        ValueError: StepLrSchedulerConfig.gamma must be a finite number, found nan
    """
    if not _is_number(value) or not math.isfinite(value):
        raise ValueError(f"{owner}.{name} must be a finite number, found {value!r}")
    return float(value)


def check_number(
    owner: str, name: str, value: object, *, low: float | None = None, high: float | None = None,
    low_open: bool = False, high_open: bool = False,
) -> float:
    """``check_finite``, then ``ValueError`` unless the number is in the range (closed ends by default).

    Example:
        >>> check_number("AdamConfig", "beta_1", 1.0, low=0.0, high=1.0, high_open=True)
        Traceback (most recent call last):
        ...
        ValueError: AdamConfig.beta_1 must be in [0.0, 1.0), found 1.0
    """
    number = check_finite(owner, name, value)
    too_low = low is not None and (number <= low if low_open else number < low)
    too_high = high is not None and (number >= high if high_open else number > high)
    if too_low or too_high:
        # An unbounded side is open: (-inf and inf).
        left = "(-inf" if low is None else f"{'(' if low_open else '['}{low}"
        right = "inf)" if high is None else f"{high}{')' if high_open else ']'}"
        raise ValueError(f"{owner}.{name} must be in {left}, {right}, found {value!r}")
    return number


def check_probability(owner: str, name: str, value: object) -> float:
    """``value`` as a float, or ``ValueError`` naming ``owner.name`` unless it is in [0, 1].

    Example:
        >>> check_probability("DropoutConfig", "prob", 1.5)
        Traceback (most recent call last):
        ...
        ValueError: DropoutConfig.prob must be a probability in [0, 1], found 1.5
    """
    if not _is_number(value) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{owner}.{name} must be a probability in [0, 1], found {value!r}")
    return float(value)


def check_epsilon(owner: str, value: object) -> float:
    """``value`` as a float, or ``ValueError`` naming ``owner.epsilon`` unless it is a number above 0.

    Example:
        >>> check_epsilon("LayerNormConfig", 0.0)
        Traceback (most recent call last):
        ...
        ValueError: LayerNormConfig.epsilon must be a positive number, found 0.0
    """
    if not _is_number(value) or not value > 0:
        raise ValueError(f"{owner}.epsilon must be a positive number, found {value!r}")
    return float(value)
