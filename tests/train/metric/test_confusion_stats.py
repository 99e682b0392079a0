"""ConfusionStats and ConfusionStatsInput: Burn's count tables, how Burn's outputs adapt, bad input."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from ferrum.train import ClassificationOutput, MultiLabelClassificationOutput, RegressionOutput
from ferrum.train.metric import (
    ClassificationMetricConfig,
    ClassReduction,
    ConfusionStats,
    ConfusionStatsInput,
    FBetaScoreMetric,
    NumericEntry,
    PrecisionMetric,
    RecallMetric,
    Threshold,
    TopK,
)
from ferrum.train.metric.confusion_stats import ConfusionStatsMetric, class_average
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.metric_reference import (
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
CONFIGS = {
    "threshold_micro": ClassificationMetricConfig(Threshold(THRESHOLD), MICRO),
    "threshold_macro": ClassificationMetricConfig(Threshold(THRESHOLD), MACRO),
    "k1_micro": ClassificationMetricConfig(TopK(1), MICRO),
    "k1_macro": ClassificationMetricConfig(TopK(1), MACRO),
    "k2_micro": ClassificationMetricConfig(TopK(2), MICRO),
    "k2_macro": ClassificationMetricConfig(TopK(2), MACRO),
}
# Burn's confusion_stats.rs tests: (input, config) -> expected counts.
CASES = [
    ("binary", "threshold_micro"),
    ("binary", "threshold_macro"),
    ("multiclass", "k1_micro"),
    ("multiclass", "k1_macro"),
    ("multiclass", "k2_micro"),
    ("multiclass", "k2_macro"),
    ("multilabel", "threshold_micro"),
    ("multilabel", "threshold_macro"),
]
EXPECTED = {
    "true_positive": [[1], [1], [3], [1, 1, 1], [4], [2, 1, 1], [5], [2, 2, 1]],
    "true_negative": [[2], [2], [8], [2, 3, 3], [4], [1, 1, 2], [3], [0, 2, 1]],
    "false_positive": [[1], [1], [2], [1, 1, 0], [6], [2, 3, 1], [3], [1, 1, 1]],
    "false_negative": [[1], [1], [2], [1, 0, 1], [1], [0, 0, 1], [4], [2, 0, 2]],
    "positive": [[2], [2], [5], [2, 1, 2], [5], [2, 1, 2], [9], [4, 2, 3]],
    "negative": [[3], [3], [10], [3, 4, 3], [10], [3, 4, 3], [6], [1, 3, 2]],
    "predicted_positive": [[2], [2], [5], [2, 2, 1], [10], [4, 4, 2], [8], [3, 3, 2]],
}


@pytest.mark.parametrize("count", sorted(EXPECTED))
@pytest.mark.parametrize("case", range(len(CASES)))
def test_burn_counts(count: str, case: int) -> None:
    kind, config = CASES[case]
    stats = ConfusionStats(ConfusionStatsInput(*burn_stats_input(kind)), CONFIGS[config])
    assert getattr(stats, count)().to_numpy().tolist() == EXPECTED[count][case]


def test_support_and_ratio() -> None:
    stats = ConfusionStats(ConfusionStatsInput(*burn_stats_input("multiclass")), CONFIGS["k1_macro"])
    assert stats.support().to_numpy().tolist() == [5, 5, 5]
    np.testing.assert_allclose(stats.ratio_of_support(stats.true_positive()).to_numpy(), [0.2, 0.2, 0.2])


def test_class_average() -> None:
    assert class_average(floats([0.25]), MICRO) == 0.25
    assert class_average(floats([0.5, float("nan"), 1.0]), MACRO) == 0.75
    assert math.isnan(class_average(floats([float("nan"), float("nan")]), MACRO))


@settings(max_examples=120, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    samples=st.integers(1, 10),
    classes=st.integers(1, 5),
    k=st.one_of(st.none(), st.integers(1, 5)),
    threshold=st.sampled_from([0.2, 0.5, 0.8]),
    beta=st.sampled_from([0.0, 0.5, 1.0, 2.0]),
    micro=st.booleans(),
)
def test_precision_recall_fbeta_match_scikit_learn_definitions(
    seed: int, samples: int, classes: int, k: int | None, threshold: float, beta: float, micro: bool
) -> None:
    rng = np.random.default_rng(seed)
    scores = rng.random((samples, classes), dtype=np.float32)
    true = rng.random((samples, classes)) < 0.4
    reduction = MICRO if micro else MACRO
    metrics: list[ConfusionStatsMetric]
    if k is None:
        predicted = scores > np.float32(threshold)
        metrics = [
            PrecisionMetric.multilabel(threshold, reduction),
            RecallMetric.multilabel(threshold, reduction),
            FBetaScoreMetric.multilabel(beta, threshold, reduction),
        ]
    else:
        k = min(k, classes)
        predicted = top_k_mask(scores, k)
        metrics = [
            PrecisionMetric.multiclass(k, reduction),
            RecallMetric.multiclass(k, reduction),
            FBetaScoreMetric.multiclass(beta, k, reduction),
        ]
    expected = precision_recall_fbeta(predicted, true, beta, "micro" if micro else "macro")
    stats_input = ConfusionStatsInput(floats(scores), bools(true))
    for metric, value in zip(metrics, expected, strict=True):
        metric.update(stats_input, META)
        if math.isnan(value):
            assert math.isnan(metric.value().current()) and metric.value().count == 0, metric
        else:
            assert metric.value() == NumericEntry(pytest.approx(value, rel=1e-5), samples), metric  # type: ignore[arg-type]


def test_epoch_is_weighted_by_samples() -> None:
    metric = PrecisionMetric.multiclass(1, MICRO)
    logits = floats([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7], [0.6, 0.4]])
    entries = [
        metric.update(ClassificationOutput(floats([0.5]), logits, ints([0, 0, 1, 1])), META),  # 75 %
        metric.update(ClassificationOutput(floats([0.5]), floats([[0.9, 0.1]]), ints([1])), META),  # 0 %
    ]
    assert metric.running_value() == NumericEntry(60.0, 5)
    assert aggregate(entries) == pytest.approx(60.0)


def test_classification_output_targets_are_one_hot() -> None:
    out = ClassificationOutput(floats([0.1]), floats([[0.1, 0.9, 0.0], [0.8, 0.1, 0.1]]), ints([1, 2]))
    stats_input: ConfusionStatsInput[Any] = ConfusionStatsInput.from_fields(out)
    assert stats_input.targets.to_numpy().tolist() == [[False, True, False], [False, False, True]]
    assert stats_input.predictions is out.output


def test_single_column_classification_output_is_binary() -> None:
    out = ClassificationOutput(floats([0.1]), floats([[0.9], [0.2]]), ints([1, 0]))
    assert ConfusionStatsInput.from_fields(out).targets.to_numpy().tolist() == [[True], [False]]


def test_multilabel_output_targets_are_the_mask() -> None:
    out = MultiLabelClassificationOutput(floats([0.1]), floats([[0.9, 0.2]]), ints([[1, 0]]))
    assert ConfusionStatsInput.from_fields(out).targets.to_numpy().tolist() == [[True, False]]


def test_regression_output_is_a_type_error() -> None:
    out = RegressionOutput(floats([0.1]), floats([[0.9]]), floats([[1.0]]))
    with pytest.raises(TypeError) as error:
        PrecisionMetric.binary().update(out, META)  # type: ignore[arg-type]
    message = str(error.value)
    assert "'Precision @ Threshold(0.5) [Macro]'" in message and "RegressionOutput" in message
    assert "confusion_stats_input()" in message and "its `targets` is a Float tensor (1, 1)" in message


def test_bad_input() -> None:
    with pytest.raises(ValueError, match=r"same shape, found \(2, 2\) and \(2, 1\)"):
        ConfusionStatsInput(floats([[0.1, 0.2], [0.3, 0.4]]), ints([[1], [0]]).bool())
    with pytest.raises(TypeError, match="targets must be a Bool tensor, found Int"):
        ConfusionStatsInput(floats([[0.1]]), ints([[1]]))
    with pytest.raises(ValueError, match=r"TopK\(3\) needs at least 3 classes, the predictions have 2"):
        ConfusionStats(
            ConfusionStatsInput(floats([[0.1, 0.2]]), ints([[1, 0]]).bool()),
            ClassificationMetricConfig(TopK(3)),
        )
