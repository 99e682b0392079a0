"""IterationSpeedMetric: iterations per second from the metadata and a (faked) clock."""

from __future__ import annotations

import pytest
from ferrum.data.dataloader import Progress
from ferrum.train.metric import IterationSpeedMetric, MetricMetadata, NumericEntry
from ferrum.train.metric import iteration_speed as module


def meta(iteration: int) -> MetricMetadata:
    return MetricMetadata(Progress(iteration, 100), epoch=1, epoch_total=1, iteration=iteration)


def test_speed_since_the_first_update(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter([10.0, 10.5, 11.0, 12.0, 50.0, 50.25])
    monkeypatch.setattr(module, "perf_counter", lambda: next(clock))
    metric = IterationSpeedMetric()
    assert metric.update(None, meta(1)).serialized == "0.0,0"  # starts the clock
    metric.update(None, meta(2))
    assert metric.value() == NumericEntry(2.0, 1)  # 1 iteration in 0.5 s
    metric.update(None, meta(3))
    assert metric.value() == NumericEntry(2.0, 1)  # 2 in 1 s
    entry = metric.update(None, meta(5))
    assert metric.value() == NumericEntry(2.0, 1)  # 4 in 2 s
    assert entry.formatted == "epoch 2.00 iter/sec - batch 2.00 iter/sec"
    assert metric.running_value() == NumericEntry(2.0, 3)
    metric.clear()  # a new epoch restarts the clock and the mean
    assert metric.update(None, meta(1)).serialized == "0.0,0"
    metric.update(None, meta(2))
    assert metric.running_value() == NumericEntry(4.0, 1)
    assert metric.name() == "Iteration Speed" and metric.higher_is_better
