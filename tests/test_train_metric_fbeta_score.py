"""FBetaScoreMetric: Burn's expected values, scikit-learn's definition in NumPy, edge cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ferrum.train import MultiLabelClassificationOutput
from ferrum.train.metric import ClassReduction, ConfusionStatsInput, FBetaScoreMetric, NumericEntry
from hypothesis import given, settings
from hypothesis import strategies as st
from train_metric_reference import (
    META,
    THRESHOLD,
    bools,
    burn_stats_input,
    floats,
    ints,
    precision_recall_fbeta,
    top_k_mask,
)

MICRO, MACRO = ClassReduction.Micro, ClassReduction.Macro


def value(metric: FBetaScoreMetric, kind: str) -> float:
    metric.update(ConfusionStatsInput(*burn_stats_input(kind)), META)
    return metric.value().current()


@pytest.mark.parametrize("beta", [1.0, 2.0])
def test_burn_binary(beta: float) -> None:
    assert value(FBetaScoreMetric.binary(beta, THRESHOLD), "binary") == pytest.approx(50.0)


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
    assert value(metric, "multiclass") == pytest.approx(100 * expected, rel=1e-5)


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
    assert value(metric, "multilabel") == pytest.approx(100 * expected, rel=1e-5)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    samples=st.integers(1, 10),
    classes=st.integers(1, 5),
    k=st.one_of(st.none(), st.integers(1, 5)),
    beta=st.sampled_from([0.0, 0.5, 1.0, 2.0]),
    micro=st.booleans(),
)
def test_matches_scikit_learn_definition(
    seed: int, samples: int, classes: int, k: int | None, beta: float, micro: bool
) -> None:
    rng = np.random.default_rng(seed)
    scores = rng.random((samples, classes), dtype=np.float32)
    true = rng.random((samples, classes)) < 0.4
    reduction = MICRO if micro else MACRO
    if k is None:
        metric, predicted = FBetaScoreMetric.multilabel(beta, 0.5, reduction), scores > np.float32(0.5)
    else:
        k = min(k, classes)
        metric, predicted = FBetaScoreMetric.multiclass(beta, k, reduction), top_k_mask(scores, k)
    expected = precision_recall_fbeta(predicted, true, beta, "micro" if micro else "macro")[2]
    metric.update(ConfusionStatsInput(floats(scores), bools(true)), META)
    if math.isnan(expected):
        assert math.isnan(metric.value().current()) and metric.value().count == 0
    else:
        assert metric.value() == NumericEntry(pytest.approx(expected, rel=1e-5), samples)  # type: ignore[arg-type]


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
