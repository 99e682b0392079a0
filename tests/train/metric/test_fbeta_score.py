"""FBetaScoreMetric: Burn's expected values, its default, edge cases.

The comparison with scikit-learn's definitions is in test_confusion_stats.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from ferrum.train import MultiLabelClassificationOutput
from ferrum.train.metric import ClassReduction, ConfusionStatsInput, FBetaScoreMetric

from tests.support.metric_reference import (
    META,
    THRESHOLD,
    bools,
    burn_value,
    floats,
    ints,
)

MICRO, MACRO = ClassReduction.Micro, ClassReduction.Macro


@pytest.mark.parametrize("beta", [1.0, 2.0])
def test_burn_binary(beta: float) -> None:
    assert burn_value(FBetaScoreMetric.binary(beta, THRESHOLD), "binary") == pytest.approx(50.0)


@pytest.mark.parametrize(
    ("beta", "reduction", "top_k", "expected"),
    [
        (1.0, MICRO, 1, 3.0 / 5.0),
        (1.0, MICRO, 2, 2.0 / (5.0 / 4.0 + 10.0 / 4.0)),
        (1.0, MACRO, 1, (0.5 + 2.0 / (1.0 + 2.0) + 2.0 / (2.0 + 1.0)) / 3.0),
        (1.0, MACRO, 2, (2.0 / (1.0 + 2.0) + 2.0 / (1.0 + 4.0) + 0.5) / 3.0),
        (2.0, MICRO, 1, 3.0 / 5.0),
        (2.0, MICRO, 2, 5.0 * 4.0 / (4.0 * 5.0 + 10.0)),
        (2.0, MACRO, 1, (0.5 + 5.0 / (4.0 + 2.0) + 5.0 / (8.0 + 1.0)) / 3.0),
        (2.0, MACRO, 2, (5.0 / (4.0 + 2.0) + 5.0 / (4.0 + 4.0) + 0.5) / 3.0),
    ],
)
def test_burn_multiclass(beta: float, reduction: ClassReduction, top_k: int, expected: float) -> None:
    metric = FBetaScoreMetric.multiclass(beta, top_k, reduction)
    assert burn_value(metric, "multiclass") == pytest.approx(100 * expected, rel=1e-5)


@pytest.mark.parametrize(
    ("beta", "reduction", "expected"),
    [
        (1.0, MICRO, 2.0 / (9.0 / 5.0 + 8.0 / 5.0)),
        (1.0, MACRO, (2.0 / (2.0 + 3.0 / 2.0) + 2.0 / (1.0 + 3.0 / 2.0) + 2.0 / (3.0 + 2.0)) / 3.0),
        (2.0, MICRO, 5.0 / (4.0 * 9.0 / 5.0 + 8.0 / 5.0)),
        (2.0, MACRO, (5.0 / (8.0 + 3.0 / 2.0) + 5.0 / (4.0 + 3.0 / 2.0) + 5.0 / (12.0 + 2.0)) / 3.0),
    ],
)
def test_burn_multilabel(beta: float, reduction: ClassReduction, expected: float) -> None:
    metric = FBetaScoreMetric.multilabel(beta, THRESHOLD, reduction)
    assert burn_value(metric, "multilabel") == pytest.approx(100 * expected, rel=1e-5)


def test_default_is_f1_and_reads_multilabel_outputs() -> None:
    metric = FBetaScoreMetric()
    assert metric.name() == "FBetaScore (1) @ Threshold(0.5) [Macro]"
    out = MultiLabelClassificationOutput(
        floats([0.2]), floats([[0.9, 0.1], [0.8, 0.7]]), ints([[1, 1], [0, 1]])
    )
    metric.update(out, META)
    # label 0: tp 1 fp 1 fn 0 -> 2/3; label 1: tp 1 fp 0 fn 1 -> 2/3
    assert metric.value().current() == pytest.approx(100 * 2 / 3)


def test_empty_batch_has_no_value() -> None:
    metric = FBetaScoreMetric.binary(1.0)
    entry = metric.update(ConfusionStatsInput(floats(np.zeros((0, 1))), bools(np.zeros((0, 1)))), META)
    assert entry.serialized == "nan,0"
