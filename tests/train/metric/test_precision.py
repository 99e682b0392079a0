"""PrecisionMetric: Burn's expected values and zero division.

The comparison with scikit-learn's definitions is in test_confusion_stats.py.
"""

from __future__ import annotations

import pytest
from ferrum.train.metric import ClassReduction, ConfusionStatsInput, NumericEntry, PrecisionMetric

from tests.support.metric_reference import (
    META,
    THRESHOLD,
    bools,
    burn_value,
    floats,
)

MICRO, MACRO = ClassReduction.Micro, ClassReduction.Macro


def test_burn_binary() -> None:
    assert burn_value(PrecisionMetric.binary(THRESHOLD), "binary") == pytest.approx(50.0)


@pytest.mark.parametrize(
    ("reduction", "top_k", "expected"),
    [
        (MICRO, 1, 3.0 / 5.0),
        (MICRO, 2, 4.0 / 10.0),
        (MACRO, 1, (0.5 + 0.5 + 1.0) / 3.0),
        (MACRO, 2, (0.5 + 1.0 / 4.0 + 0.5) / 3.0),
    ],
)
def test_burn_multiclass(reduction: ClassReduction, top_k: int, expected: float) -> None:
    assert burn_value(PrecisionMetric.multiclass(top_k, reduction), "multiclass") == pytest.approx(
        100 * expected
    )


@pytest.mark.parametrize(
    ("reduction", "expected"), [(MICRO, 5.0 / 8.0), (MACRO, (2.0 / 3.0 + 2.0 / 3.0 + 0.5) / 3.0)]
)
def test_burn_multilabel(reduction: ClassReduction, expected: float) -> None:
    assert burn_value(PrecisionMetric.multilabel(THRESHOLD, reduction), "multilabel") == pytest.approx(
        100 * expected
    )


def test_no_predicted_positive_does_not_poison_the_epoch() -> None:
    metric = PrecisionMetric.binary(0.5)
    metric.update(ConfusionStatsInput(floats([[0.9], [0.8]]), bools([[True], [False]])), META)
    entry = metric.update(ConfusionStatsInput(floats([[0.1]]), bools([[True]])), META)
    assert entry.serialized == "nan,0"
    assert metric.running_value() == NumericEntry(50.0, 2)
