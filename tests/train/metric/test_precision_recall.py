"""PrecisionMetric and RecallMetric: Burn's expected values and zero division.

Both read the same confusion counts, so each Burn case runs for both metrics,
with Burn's expected value for each. The comparison with scikit-learn's
definitions is in test_confusion_stats.py.
"""

from __future__ import annotations

import pytest
from ferrum.train.metric import (
    ClassReduction,
    ConfusionStatsInput,
    NumericEntry,
    PrecisionMetric,
    RecallMetric,
)

from tests.support.metric_reference import META, THRESHOLD, bools, burn_value, floats

MICRO, MACRO = ClassReduction.Micro, ClassReduction.Macro
Metric = type[PrecisionMetric] | type[RecallMetric]
BOTH = pytest.mark.parametrize("metric", [PrecisionMetric, RecallMetric], ids=["precision", "recall"])


@BOTH
def test_burn_binary(metric: Metric) -> None:
    assert burn_value(metric.binary(THRESHOLD), "binary") == pytest.approx(50.0)


@pytest.mark.parametrize(
    ("metric", "reduction", "top_k", "expected"),
    [
        (PrecisionMetric, MICRO, 1, 3.0 / 5.0),
        (PrecisionMetric, MICRO, 2, 4.0 / 10.0),
        (PrecisionMetric, MACRO, 1, (0.5 + 0.5 + 1.0) / 3.0),
        (PrecisionMetric, MACRO, 2, (0.5 + 1.0 / 4.0 + 0.5) / 3.0),
        (RecallMetric, MICRO, 1, 3.0 / 5.0),
        (RecallMetric, MICRO, 2, 4.0 / 5.0),
        (RecallMetric, MACRO, 1, (0.5 + 1.0 + 0.5) / 3.0),
        (RecallMetric, MACRO, 2, (1.0 + 1.0 + 0.5) / 3.0),
    ],
)
def test_burn_multiclass(metric: Metric, reduction: ClassReduction, top_k: int, expected: float) -> None:
    assert burn_value(metric.multiclass(top_k, reduction), "multiclass") == pytest.approx(100 * expected)


@pytest.mark.parametrize(
    ("metric", "reduction", "expected"),
    [
        (PrecisionMetric, MICRO, 5.0 / 8.0),
        (PrecisionMetric, MACRO, (2.0 / 3.0 + 2.0 / 3.0 + 0.5) / 3.0),
        (RecallMetric, MICRO, 5.0 / 9.0),
        (RecallMetric, MACRO, (0.5 + 1.0 + 1.0 / 3.0) / 3.0),
    ],
)
def test_burn_multilabel(metric: Metric, reduction: ClassReduction, expected: float) -> None:
    assert burn_value(metric.multilabel(THRESHOLD, reduction), "multilabel") == pytest.approx(100 * expected)


@pytest.mark.parametrize(
    ("metric", "first", "empty"),
    [
        # Precision: the second batch predicts no positive.
        (PrecisionMetric, ([[0.9], [0.8]], [[True], [False]]), ([[0.1]], [[True]])),
        # Recall: the second batch has no positive target.
        (RecallMetric, ([[0.9], [0.2]], [[True], [True]]), ([[0.9]], [[False]])),
    ],
    ids=["precision-no-predicted-positive", "recall-no-positive-target"],
)
def test_a_batch_without_denominator_does_not_poison_the_epoch(
    metric: Metric,
    first: tuple[list[list[float]], list[list[bool]]],
    empty: tuple[list[list[float]], list[list[bool]]],
) -> None:
    m = metric.binary(0.5)
    m.update(ConfusionStatsInput(floats(first[0]), bools(first[1])), META)
    entry = m.update(ConfusionStatsInput(floats(empty[0]), bools(empty[1])), META)
    assert entry.serialized == "nan,0"
    assert m.running_value() == NumericEntry(50.0, 2)
