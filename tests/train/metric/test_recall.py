"""RecallMetric: Burn's expected values and zero division.

The comparison with scikit-learn's definitions is in test_confusion_stats.py.
"""

from __future__ import annotations

import pytest
from ferrum.train.metric import ClassReduction, ConfusionStatsInput, NumericEntry, RecallMetric

from tests.support.metric_reference import (
    META,
    THRESHOLD,
    bools,
    burn_value,
    floats,
)

MICRO, MACRO = ClassReduction.Micro, ClassReduction.Macro


def test_burn_binary() -> None:
    assert burn_value(RecallMetric.binary(THRESHOLD), "binary") == pytest.approx(50.0)


@pytest.mark.parametrize(
    ("reduction", "top_k", "expected"),
    [
        (MICRO, 1, 3.0 / 5.0),
        (MICRO, 2, 4.0 / 5.0),
        (MACRO, 1, (0.5 + 1.0 + 0.5) / 3.0),
        (MACRO, 2, (1.0 + 1.0 + 0.5) / 3.0),
    ],
)
def test_burn_multiclass(reduction: ClassReduction, top_k: int, expected: float) -> None:
    assert burn_value(RecallMetric.multiclass(top_k, reduction), "multiclass") == pytest.approx(
        100 * expected
    )


@pytest.mark.parametrize(
    ("reduction", "expected"), [(MICRO, 5.0 / 9.0), (MACRO, (0.5 + 1.0 + 1.0 / 3.0) / 3.0)]
)
def test_burn_multilabel(reduction: ClassReduction, expected: float) -> None:
    assert burn_value(RecallMetric.multilabel(THRESHOLD, reduction), "multilabel") == pytest.approx(
        100 * expected
    )


def test_no_positive_target_does_not_poison_the_epoch() -> None:
    metric = RecallMetric.binary(0.5)
    metric.update(ConfusionStatsInput(floats([[0.9], [0.2]]), bools([[True], [True]])), META)
    entry = metric.update(ConfusionStatsInput(floats([[0.9]]), bools([[False]])), META)
    assert entry.serialized == "nan,0"
    assert metric.running_value() == NumericEntry(50.0, 2)
