"""The check of the learning rate a step is given (config fields: ``ferrum.config.checks``)."""

from __future__ import annotations

import math

__all__ = ["check_learning_rate"]


def check_learning_rate(lr: object) -> float:
    """The learning rate of a step as a float; it must be a finite number."""
    if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not math.isfinite(lr):
        raise ValueError(f"step: the learning rate must be a finite number, found {lr!r}")
    return float(lr)
