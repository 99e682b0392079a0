"""``StateMetric``: what the numeric metrics keeping a ``NumericMetricState`` share."""

from __future__ import annotations

import math

from ferrum.train.metric.base import MetricEntry, NumericEntry
from ferrum.train.metric.state import FormatOptions, NumericMetricState

__all__ = ["StateMetric"]


class StateMetric:
    """A numeric metric whose epoch value is the mean of its batch values weighted by their counts.

    Subclasses compute a batch's value in ``update`` and pass it to
    ``_record``. A NaN value (nothing to score: e.g. precision of a batch
    with no predicted positive) is recorded with weight 0, so it shows in
    the batch's entry but does not turn the epoch's value into NaN.

    Example:
        >>> from ferrum.train.metric import MetricMetadata
        >>> class Half(StateMetric):
        ...     def update(self, item: object, metadata: MetricMetadata) -> MetricEntry:
        ...         return self._record(50.0, 4)
        >>> metric = Half("Half", unit="%")
        >>> metric.update(None, MetricMetadata.fake()).formatted
        'epoch 50.00 % - batch 50.00 %'
        >>> metric.running_value()
        NumericEntry(value=50.0, count=4)
    """

    higher_is_better: bool = True

    def __init__(self, name: str, *, unit: str | None = None, precision: int = 2) -> None:
        self._name = name
        self._state = NumericMetricState()
        self.unit = unit
        self._precision = precision

    def name(self) -> str:
        """The metric's unique name (its log file is ``<name>.log``)."""
        return self._name

    def clear(self) -> None:
        """Forget the epoch's values."""
        self._state.reset()

    def value(self) -> NumericEntry:
        """The last batch's value and weight."""
        return self._state.current_value()

    def running_value(self) -> NumericEntry:
        """The epoch's weighted mean so far and the total weight."""
        return self._state.running_value()

    def _record(self, value: float, count: int) -> MetricEntry:
        if math.isnan(value):
            count = 0
        return self._state.update(value, count, FormatOptions(self._name, self.unit, self._precision))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._name!r})"
