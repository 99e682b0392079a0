"""The metric store: count-weighted epoch means and best epochs, from memory and from loggers."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from ferrum.train import Aggregate, Direction, FileMetricLogger, InMemoryMetricLogger, MetricStore, Split
from ferrum.train.metric import MetricEntry, NumericEntry


def test_epoch_value_weights_each_entry_by_its_count() -> None:
    # Burn's should_aggregate_numeric_entry: (0.5 + 1.25 * 2) / 3 = 1.0, not (0.5 + 1.25) / 2.
    store = MetricStore([])
    store.add("Loss", 1, Split.Train, NumericEntry(0.5))
    store.add("Loss", 1, Split.Train, NumericEntry(1.25, 2))
    assert store.find_metric("Loss", 1, Aggregate.Mean, Split.Train) == 1.0
    assert store.find_metric("Loss", 1, Aggregate.Mean, Split.Valid) is None
    assert store.find_metric("Loss", 2, Aggregate.Mean, Split.Train) is None


def test_find_epoch_from_logged_files(tmp_path: Path) -> None:
    # Burn's should_find_epoch: means 750, 600, 10000 -> epoch 2.
    logger = FileMetricLogger(tmp_path)
    for epoch, values in ((1, [500.0, 1000.0]), (2, [200.0, 1000.0]), (3, [10000.0])):
        for value in values:
            logger.log([MetricEntry("test-logger", str(value), str(value))], epoch, Split.Train)
        logger.end_epoch(epoch, Split.Train)
    store = MetricStore([logger])
    assert store.find_epoch("test-logger", Aggregate.Mean, Direction.Lowest, Split.Train) == 2
    assert store.find_epoch("test-logger", Aggregate.Mean, Direction.Highest, Split.Train) == 3
    assert store.epoch_values("test-logger", Split.Train, 5) == [(1, 750.0), (2, 600.0), (3, 10000.0)]


def test_ties_go_to_the_earliest_epoch_and_nan_never_wins() -> None:
    store = MetricStore([])
    for epoch, value in enumerate([math.nan, 0.3, 0.3, math.nan], start=1):
        store.add("Loss", epoch, Split.Valid, NumericEntry(value))
    assert store.find_epoch("Loss", Aggregate.Mean, Direction.Lowest, Split.Valid) == 2
    assert store.find_epoch("Other", Aggregate.Mean, Direction.Lowest, Split.Valid) is None


def test_memory_wins_over_loggers_and_forget_from_drops_later_epochs() -> None:
    logger = InMemoryMetricLogger()
    logger.log([MetricEntry("Loss", "", "9.0,1")], 1, Split.Valid)
    logger.log([MetricEntry("Loss", "", "7.0,1")], 2, Split.Valid)
    store = MetricStore([logger])
    store.add("Loss", 2, Split.Valid, NumericEntry(1.0, 4))
    assert store.find_metric("Loss", 1, Aggregate.Mean, Split.Valid) == 9.0
    assert store.find_metric("Loss", 2, Aggregate.Mean, Split.Valid) == 1.0
    store.forget_from(2)
    assert store.find_metric("Loss", 2, Aggregate.Mean, Split.Valid) == 7.0


def test_an_entry_of_count_zero_is_left_out() -> None:
    store = MetricStore([])
    store.add("Accuracy", 1, Split.Valid, NumericEntry(math.nan, 0))
    assert store.find_metric("Accuracy", 1, Aggregate.Mean, Split.Valid) is None
    store.add("Accuracy", 1, Split.Valid, NumericEntry(50.0, 4))
    assert store.find_metric("Accuracy", 1, Aggregate.Mean, Split.Valid) == 50.0


def test_direction_compares_strictly() -> None:
    assert Direction.Lowest.better(0.1, 0.2) and not Direction.Lowest.better(0.2, 0.2)
    assert Direction.Highest.better(3.0, 2.0) and not Direction.Highest.better(math.nan, 2.0)
    assert str(Split.Valid) == "valid"
    with pytest.raises(ValueError, match="unknown aggregate"):
        MetricStore([]).find_metric("Loss", 1, "mean", Split.Valid)  # type: ignore[arg-type]
