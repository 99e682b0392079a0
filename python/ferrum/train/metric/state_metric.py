"""``StateMetric``: what the numeric metrics keeping a ``NumericMetricState`` share; ``PadTokenMetric``
adds a pad token."""

from __future__ import annotations

import math

from typing_extensions import Self

from ferrum.train.metric.base import MetricEntry, NumericEntry
from ferrum.train.metric.state import FormatOptions, NumericMetricState

__all__ = ["PadTokenMetric", "StateMetric", "check_pad_token"]


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


class PadTokenMetric(StateMetric):
    """A ``StateMetric`` in percent whose targets may hold a pad token, left out of the score.

    ``pad_token`` (a class or token index, or ``None``) is set at init or by
    ``with_pad_token``; ``_record_share`` records ``part`` of ``total`` in percent.

    Example:
        >>> from ferrum.train.metric import MetricMetadata
        >>> class ThreeOfFour(PadTokenMetric):
        ...     def update(self, item: object, metadata: MetricMetadata) -> MetricEntry:
        ...         return self._record_share(3, 4)
        >>> metric = ThreeOfFour("Share", None).with_pad_token(0)
        >>> metric.pad_token, metric.update(None, MetricMetadata.fake()).serialized
        (0, '75.0,4')
    """

    def __init__(self, name: str, pad_token: int | None) -> None:
        super().__init__(name, unit="%")
        self.pad_token = check_pad_token(pad_token)

    def with_pad_token(self, index: int) -> Self:
        """Use ``index`` as the pad token (the metric says what it leaves out); returns this metric."""
        self.pad_token = check_pad_token(index)
        return self

    def _record_share(self, part: int, total: int) -> MetricEntry:
        return self._record(100.0 * part / total if total else math.nan, total)


def check_pad_token(index: int | None) -> int | None:
    """``index`` itself, a ``ValueError`` unless it is ``None`` or a class index (an int >= 0).

    Example:
        >>> check_pad_token(0), check_pad_token(None)
        (0, None)
    """
    if index is not None and (isinstance(index, bool) or not isinstance(index, int) or index < 0):
        raise ValueError(f"a pad token is a class index (an int >= 0), found {index!r}")
    return index
