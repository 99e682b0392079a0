"""NumericMetricState and StateMetric: the count-weighted epoch mean, weight-0 batches, formatting."""

from __future__ import annotations

import math

from ferrum.train.metric import FormatOptions, MetricEntry, MetricMetadata, NumericEntry, NumericMetricState
from ferrum.train.metric.state_metric import StateMetric


def test_a_batch_of_weight_zero_leaves_the_mean() -> None:
    state = NumericMetricState()
    state.update(2.0, 3, FormatOptions("M"))
    entry = state.update(math.nan, 0, FormatOptions("M", precision=2))
    assert entry.serialized == "nan,0" and entry.formatted == "epoch 2.00 - batch nan"
    assert state.running_value() == NumericEntry(2.0, 3)


class Fixed(StateMetric):
    def __init__(self, values: list[tuple[float, int]]) -> None:
        super().__init__("Fixed", unit="u", precision=1)
        self.values = values

    def update(self, item: object, metadata: MetricMetadata) -> MetricEntry:
        return self._record(*self.values.pop(0))


def test_state_metric() -> None:
    metric = Fixed([(1.0, 1), (math.nan, 5), (4.0, 2)])
    entries = [metric.update(None, MetricMetadata.fake()) for _ in range(3)]
    assert [e.serialized for e in entries] == ["1.0,1", "nan,0", "4.0,2"]
    assert entries[2].formatted == "epoch 3.0 u - batch 4.0 u"
    assert metric.running_value() == NumericEntry(3.0, 3)
    assert metric.value() == NumericEntry(4.0, 2)
    assert repr(metric) == "Fixed('Fixed')" and metric.name() == "Fixed"
    metric.clear()
    assert math.isnan(metric.value().current()) and metric.running_value().count == 0
