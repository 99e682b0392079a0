"""AurocMetric: Burn's cases, the Mann-Whitney definition of ROC AUC in NumPy, edge cases and bad input."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from ferrum.train import ClassificationOutput
from ferrum.train.metric import AurocInput, AurocMetric, NumericEntry
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.metric_reference import META, aggregate, floats, ints, roc_auc


def auroc(outputs: list[list[float]], targets: list[int]) -> float:
    metric = AurocMetric()
    metric.update(AurocInput(floats(outputs), ints(targets)), META)
    return metric.value().current()


def test_burn_cases() -> None:
    assert auroc([[0.1, 0.9], [0.7, 0.3], [0.6, 0.4], [0.2, 0.8]], [1, 0, 0, 1]) == 100.0
    assert auroc([[0.0, 1.0], [1.0, 0.0], [1.0, 0.0], [0.0, 1.0]], [1, 0, 0, 1]) == 100.0
    assert auroc([[0.5, 0.5]] * 4, [1, 0, 0, 1]) == 50.0


def test_burn_all_one_class_is_zero_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="ferrum.train.metric.auroc"):
        assert auroc([[0.1, 0.9], [0.2, 0.8], [0.3, 0.7], [0.4, 0.6]], [1, 1, 1, 1]) == 0.0
    assert "all target values are positive" in caplog.text


def test_burn_multiclass_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"binary classification only.*found \(2, 3\)"):
        auroc([[0.1, 0.2, 0.7], [0.3, 0.5, 0.2]], [2, 1])


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), batch=st.integers(2, 16))
def test_matches_mann_whitney(seed: int, batch: int) -> None:
    rng = np.random.default_rng(seed)
    # Logit gaps on a coarse grid give exact ties, and distinct gaps distinct probabilities.
    gaps = rng.integers(-6, 7, batch) * 0.5
    outputs = np.stack([np.zeros(batch), gaps], axis=1)
    targets = rng.integers(0, 2, batch)
    targets[:2] = [0, 1]
    assert auroc(outputs.tolist(), targets.tolist()) == pytest.approx(roc_auc(gaps, targets))


def test_reads_a_classification_output_and_weighs_batches() -> None:
    metric = AurocMetric()
    # Both positives score below the negative: 0 %, 3 samples; then 100 %, 2 samples.
    out = ClassificationOutput(floats([0.2]), floats([[0.0, 1.0], [0.0, -1.0], [0.0, 2.0]]), ints([1, 1, 0]))
    entries = [metric.update(out, META)]
    entries.append(metric.update(AurocInput(floats([[0.0, 1.0], [0.0, 0.0]]), ints([1, 0])), META))
    assert metric.value() == NumericEntry(100.0, 2)
    assert metric.running_value() == NumericEntry(40.0, 5)
    assert aggregate(entries) == pytest.approx(40.0)
    assert metric.name() == "AUROC"
