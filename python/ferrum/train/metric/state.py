"""``NumericMetricState``: the running mean most numeric metrics keep (Burn's ``metric::state``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ferrum.train.metric.base import MetricEntry, NumericEntry, format_float

__all__ = ["FormatOptions", "NumericMetricState"]


@dataclass(frozen=True)
class FormatOptions:
    """How a numeric metric shows: its name, an optional unit and decimals."""

    name: str
    unit: str | None = None
    precision: int | None = None


class NumericMetricState:
    """Sum and count of batch values weighted by batch size, plus the last batch.

    Example:
        >>> s = NumericMetricState()
        >>> _ = s.update(1.0, 2, FormatOptions("Loss"))
        >>> s.update(4.0, 1, FormatOptions("Loss", precision=2)).formatted
        'epoch 2.00 - batch 4.00'
        >>> s.running_value()
        NumericEntry(value=2.0, count=3)
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget every value (an epoch ended)."""
        self._sum = 0.0
        self._count = 0
        self._current = math.nan
        self._current_count = 0

    def update(self, value: float, batch_size: int, fmt: FormatOptions) -> MetricEntry:
        """Add a batch's value, weighted by ``batch_size``; return the entry to show and log.

        A batch of weight 0 is shown and logged but leaves the epoch's mean as it was
        (even when its value is NaN: a batch with nothing to score).
        """
        if batch_size:
            self._sum += value * batch_size
            self._count += batch_size
        self._current = value
        self._current_count = batch_size
        running = self._sum / self._count if self._count else math.nan
        if fmt.precision is None:
            current_s, running_s = f"{value}", f"{running}"
        else:
            current_s, running_s = format_float(value, fmt.precision), format_float(running, fmt.precision)
        unit = f" {fmt.unit}" if fmt.unit else ""
        formatted = f"epoch {running_s}{unit} - batch {current_s}{unit}"
        return MetricEntry(fmt.name, formatted, NumericEntry(value, batch_size).serialize())

    def current_value(self) -> NumericEntry:
        """The last batch's value and size."""
        return NumericEntry(self._current, self._current_count)

    def running_value(self) -> NumericEntry:
        """The epoch's weighted mean so far and the items it covers."""
        return NumericEntry(self._sum / self._count if self._count else math.nan, self._count)
