"""LearnerSummary: epoch values per metric and split, and Burn's table."""

from __future__ import annotations

import math

import pytest
from ferrum.train import LearnerSummary, MetricStore, MetricSummary, Split
from ferrum.train.metric import NumericEntry


def test_summary_collects_the_epoch_means() -> None:
    # Burn's test_summary_should_be_collected: train "1.0\n2.0" -> 1.5, valid "1.0" -> 1.0.
    store = MetricStore([])
    store.add("Loss", 1, Split.Train, NumericEntry(1.0))
    store.add("Loss", 1, Split.Train, NumericEntry(2.0))
    store.add("Loss", 1, Split.Valid, NumericEntry(1.0))
    summary = LearnerSummary.from_store(store, ["Loss", "Accuracy"], 1)
    assert summary.epochs == 1
    assert summary.metric("Loss", Split.Train).entries == [(1, 1.5)]
    assert summary.metric("Loss", Split.Valid).entries == [(1, 1.0)]
    assert [m.name for m in summary.metrics[Split.Train]] == ["Loss"]  # no value, no row
    with pytest.raises(
        KeyError, match=r"no valid values of metric 'Accuracy' in the summary \(it has \['Loss'\]\)"
    ):
        summary.metric("Accuracy", Split.Valid)


def test_min_max_last_and_nan_ordering() -> None:
    history = MetricSummary("Loss", [(1, 0.9), (2, math.nan), (3, 0.2), (4, 0.4)])
    assert history.min == (3, 0.2)
    assert history.max[0] == 2  # NaN sorts above every number, as in Burn
    assert history.last == 0.4


def test_table_has_burns_columns_and_a_last_value() -> None:
    summary = LearnerSummary(
        3,
        {
            Split.Train: [MetricSummary("Accuracy", [(1, 80.0), (2, 91.25), (3, 90.5)])],
            Split.Valid: [MetricSummary("Loss", [(1, 0.5), (2, 0.004), (3, 0.25)])],
        },
        model="Net {params: 10}",
    )
    lines = str(summary).splitlines()
    assert lines[0] == "======================== Learner Summary ========================"
    assert lines[1:4] == ["Model:", "Net {params: 10}", "Total Epochs: 3"]
    assert lines[6] == "| Split | Metric   | Min.     | Epoch    | Max.     | Epoch    | Last     |"
    assert lines[7] == "|-------|----------|----------|----------|----------|----------|----------|"
    assert lines[8] == "| Train | Accuracy | 80.000   | 1        | 91.250   | 2        | 90.500   |"
    # Below 0.01, scientific notation keeps the digits (Rust's exponent style, as Burn prints it).
    assert lines[9] == "| Valid | Loss     | 4.000e-3 | 2        | 0.500    | 1        | 0.250    |"
