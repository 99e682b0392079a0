"""PrecisionMetric: Burn's expected values, scikit-learn's definition in NumPy, zero division, epochs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ferrum.train import ClassificationOutput
from ferrum.train.metric import ClassReduction, ConfusionStatsInput, NumericEntry, PrecisionMetric
from hypothesis import given, settings
from hypothesis import strategies as st
from train_metric_reference import (
    META,
    THRESHOLD,
    aggregate,
    bools,
    burn_stats_input,
    floats,
    ints,
    precision_recall_fbeta,
    top_k_mask,
)

MICRO, MACRO = ClassReduction.Micro, ClassReduction.Macro


def value(metric: PrecisionMetric, kind: str) -> float:
    metric.update(ConfusionStatsInput(*burn_stats_input(kind)), META)
    return metric.value().current()


def test_burn_binary() -> None:
    assert value(PrecisionMetric.binary(THRESHOLD), "binary") == pytest.approx(50.0)


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
    assert value(PrecisionMetric.multiclass(top_k, reduction), "multiclass") == pytest.approx(100 * expected)


@pytest.mark.parametrize(
    ("reduction", "expected"), [(MICRO, 5.0 / 8.0), (MACRO, (2.0 / 3.0 + 2.0 / 3.0 + 0.5) / 3.0)]
)
def test_burn_multilabel(reduction: ClassReduction, expected: float) -> None:
    assert value(PrecisionMetric.multilabel(THRESHOLD, reduction), "multilabel") == pytest.approx(
        100 * expected
    )


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    samples=st.integers(1, 10),
    classes=st.integers(1, 5),
    k=st.one_of(st.none(), st.integers(1, 5)),
    threshold=st.sampled_from([0.2, 0.5, 0.8]),
    micro=st.booleans(),
)
def test_matches_scikit_learn_definition(
    seed: int, samples: int, classes: int, k: int | None, threshold: float, micro: bool
) -> None:
    rng = np.random.default_rng(seed)
    scores = rng.random((samples, classes), dtype=np.float32)
    true = rng.random((samples, classes)) < 0.4
    reduction = MICRO if micro else MACRO
    if k is None:
        metric, predicted = PrecisionMetric.multilabel(threshold, reduction), scores > np.float32(threshold)
    else:
        k = min(k, classes)
        metric, predicted = PrecisionMetric.multiclass(k, reduction), top_k_mask(scores, k)
    expected = precision_recall_fbeta(predicted, true, 1.0, "micro" if micro else "macro")[0]
    metric.update(ConfusionStatsInput(floats(scores), bools(true)), META)
    if math.isnan(expected):
        assert math.isnan(metric.value().current()) and metric.value().count == 0
    else:
        assert metric.value() == NumericEntry(pytest.approx(expected), samples)  # type: ignore[arg-type]


def test_no_predicted_positive_does_not_poison_the_epoch() -> None:
    metric = PrecisionMetric.binary(0.5)
    metric.update(ConfusionStatsInput(floats([[0.9], [0.8]]), bools([[True], [False]])), META)
    entry = metric.update(ConfusionStatsInput(floats([[0.1]]), bools([[True]])), META)
    assert entry.serialized == "nan,0"
    assert metric.running_value() == NumericEntry(50.0, 2)


def test_epoch_is_weighted_by_samples() -> None:
    metric = PrecisionMetric.multiclass(1, MICRO)
    logits = floats([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7], [0.6, 0.4]])
    entries = [
        metric.update(ClassificationOutput(floats([0.5]), logits, ints([0, 0, 1, 1])), META),  # 75 %
        metric.update(ClassificationOutput(floats([0.5]), floats([[0.9, 0.1]]), ints([1])), META),  # 0 %
    ]
    assert metric.running_value() == NumericEntry(60.0, 5)
    assert aggregate(entries) == pytest.approx(60.0)
