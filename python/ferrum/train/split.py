"""``Split``: which data a metric value comes from (Burn's ``metric::store::Split``).

The metric loggers file their entries under it and the metric store
(``ferrum.train.store``, which re-exports it) sums them per split.
"""

from __future__ import annotations

import enum

__all__ = ["Split"]


class Split(enum.Enum):
    """Burn's ``Split``: which data a metric value comes from; its value names the log folder.

    Example:
        >>> str(Split.Valid), Split("train") is Split.Train
        ('valid', True)
    """

    Train = "train"
    Valid = "valid"
    Test = "test"

    def __str__(self) -> str:
        return self.value
