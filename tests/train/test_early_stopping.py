"""Early stopping, with Burn's own test cases (train loss points per epoch, stop or not)."""

from __future__ import annotations

import pytest
from ferrum.train import (
    Aggregate,
    Direction,
    MetricEarlyStoppingStrategy,
    MetricStore,
    Split,
    StoppingCondition,
)
from ferrum.train.metric import LossMetric, NumericEntry

Epochs = list[tuple[list[float], bool]]


def run(warmup: int | None, n_epochs: int, data: Epochs, direction: Direction = Direction.Lowest) -> None:
    strategy = MetricEarlyStoppingStrategy(
        LossMetric(), Aggregate.Mean, direction, Split.Train, StoppingCondition.NoImprovementSince(n_epochs)
    ).with_warmup_epochs(warmup)
    store = MetricStore([])
    for epoch, (points, expected) in enumerate(data, start=1):
        for point in points:
            store.add("Loss", epoch, Split.Train, NumericEntry(point))
        assert strategy.should_stop(epoch, store) is expected, f"epoch {epoch}"


def test_never_stops_while_improving() -> None:
    run(None, 1, [([0.5, 0.3], False), ([0.4, 0.3], False), ([0.3, 0.3], False), ([0.2, 0.3], False)])


def test_stops_when_no_improvement_since_two_epochs() -> None:
    run(None, 2, [([1.0, 0.5], False), ([0.5, 0.3], False), ([1.0, 3.0], False), ([1.0, 2.0], True)])


def test_warmup_epochs_never_stop() -> None:
    run(3, 2, [([1.0, 0.5], False)] * 3 + [([1.0, 0.5], True)])


def test_stops_when_the_value_stays_equal() -> None:
    run(None, 2, [([0.5, 0.3], False), ([0.5, 0.3], False), ([0.5, 0.3], True)])


def test_highest_direction_waits_for_a_higher_value() -> None:
    run(None, 1, [([0.5], False), ([0.7], False), ([0.6], True)], direction=Direction.Highest)


def test_a_missing_value_never_stops(caplog: pytest.LogCaptureFixture) -> None:
    strategy = MetricEarlyStoppingStrategy(
        "Accuracy", Aggregate.Mean, Direction.Highest, Split.Valid, StoppingCondition.NoImprovementSince(1)
    )
    assert strategy.should_stop(1, MetricStore([])) is False
    assert "no valid value of metric 'Accuracy' for epoch 1" in caplog.text


def test_bad_conditions_are_refused() -> None:
    with pytest.raises(ValueError, match="n_epochs must be an int >= 1, found 0"):
        StoppingCondition.NoImprovementSince(0)
    with pytest.raises(TypeError, match=r"StoppingCondition.NoImprovementSince\(n_epochs\), found int"):
        MetricEarlyStoppingStrategy("Loss", Aggregate.Mean, Direction.Lowest, Split.Valid, 3)  # type: ignore[arg-type]
