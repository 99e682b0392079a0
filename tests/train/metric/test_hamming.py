"""HammingScore: Burn's cases, a NumPy reference, sigmoid, names and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from ferrum.train import ClassificationOutput, MultiLabelClassificationOutput
from ferrum.train.metric import HammingScore, HammingScoreInput, NumericEntry
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.metric_reference import META, aggregate, floats, ints

X = [
    [0.32, 0.52, 0.38, 0.68, 0.61],
    [0.43, 0.31, 0.21, 0.63, 0.53],
    [0.44, 0.25, 0.71, 0.39, 0.73],
    [0.49, 0.37, 0.68, 0.39, 0.31],
]
Y = np.array([[0, 1, 0, 1, 1], [0, 0, 0, 1, 1], [0, 0, 1, 0, 1], [0, 0, 1, 0, 0]])


def test_burn_hamming_score() -> None:
    metric = HammingScore()
    metric.update(HammingScoreInput(floats(X), ints(Y)), META)
    assert metric.value().current() == 100.0
    metric.update(HammingScoreInput(floats(X), ints(1 - Y)), META)
    assert metric.value().current() == 0.0
    flipped = [[0, 1, 1, 0, 1], [0, 0, 0, 0, 1], [0, 0, 0, 0, 1], [0, 1, 1, 0, 0]]
    metric.update(HammingScoreInput(floats(X), ints(flipped)), META)
    assert metric.value().current() == 75.0


def test_burn_parameterized_unique_name() -> None:
    assert (
        HammingScore().with_threshold(0.5).name() == HammingScore().name() == "Hamming Score @ Threshold(0.5)"
    )
    assert HammingScore().with_threshold(0.75).name() == "Hamming Score @ Threshold(0.75)"
    assert HammingScore(threshold=1.0).name() == "Hamming Score @ Threshold(1)"


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    batch=st.integers(1, 8),
    labels=st.integers(1, 6),
    threshold=st.sampled_from([0.25, 0.5, 0.75]),
    use_sigmoid=st.booleans(),
)
def test_matches_numpy(seed: int, batch: int, labels: int, threshold: float, use_sigmoid: bool) -> None:
    rng = np.random.default_rng(seed)
    outputs = rng.normal(size=(batch, labels)).astype(np.float32)
    targets = rng.integers(0, 2, (batch, labels))
    scores = 1 / (1 + np.exp(-outputs.astype(np.float64))) if use_sigmoid else outputs
    expected = 100.0 * ((scores > threshold) == targets.astype(bool)).mean()
    metric = HammingScore().with_threshold(threshold).with_sigmoid(use_sigmoid)
    metric.update(HammingScoreInput(floats(outputs), ints(targets)), META)
    assert metric.value() == NumericEntry(pytest.approx(expected), batch)  # type: ignore[arg-type]


def test_multilabel_output_and_epoch_weights() -> None:
    metric = HammingScore()
    entries = [
        metric.update(MultiLabelClassificationOutput(floats([0.1]), floats(X), ints(Y)), META),  # 100 %, 4
        metric.update(HammingScoreInput(floats([[0.9, 0.9]]), ints([[0, 0]])), META),  # 0 %, 1
    ]
    assert metric.running_value() == NumericEntry(80.0, 5)
    assert aggregate(entries) == pytest.approx(80.0)


def test_classification_output_is_a_type_error() -> None:
    out = ClassificationOutput(floats([0.1]), floats(X), ints([0, 1, 2, 3]))
    with pytest.raises(TypeError, match=r"'Hamming Score @ Threshold\(0.5\)'.*ClassificationOutput.*targets"):
        HammingScore().update(out, META)  # type: ignore[arg-type]


def test_bad_input() -> None:
    with pytest.raises(ValueError, match=r"same shape, found \(1, 2\) and \(1, 3\)"):
        HammingScoreInput(floats([[0.1, 0.2]]), ints([[1, 0, 1]]))
