"""LearningRateMetric: the metadata's learning rate, one weight per step."""

from __future__ import annotations

import pytest
from ferrum.data.dataloader import Progress
from ferrum.train.metric import LearningRateMetric, MetricMetadata, NumericEntry

from tests.support.metric_reference import aggregate


def meta(lr: float | None) -> MetricMetadata:
    return MetricMetadata(Progress(1, 4), epoch=1, epoch_total=2, iteration=1, lr=lr)


def test_reads_the_metadata() -> None:
    metric = LearningRateMetric()
    entries = [metric.update(None, meta(1e-3)), metric.update(None, meta(3e-3))]
    assert metric.value() == NumericEntry(3e-3, 1)
    assert metric.running_value() == NumericEntry(pytest.approx(2e-3), 2)  # type: ignore[arg-type]
    assert aggregate(entries) == pytest.approx(2e-3)
    assert entries[0].formatted == "epoch 1.00e-03 - batch 1.00e-03"
    assert metric.name() == "Learning Rate"


def test_no_learning_rate_is_zero() -> None:
    metric = LearningRateMetric()
    assert metric.update(object(), meta(None)).serialized == "0.0,1"
