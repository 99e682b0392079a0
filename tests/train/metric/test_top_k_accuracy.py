"""TopKAccuracyMetric: Burn's cases, a NumPy reference, pad tokens, names and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ferrum.train import ClassificationOutput
from ferrum.train.metric import NumericEntry, TopKAccuracyInput, TopKAccuracyMetric
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.metric_reference import (
    BURN_OUTPUTS,
    BURN_PADDED_OUTPUTS,
    META,
    aggregate,
    floats,
    ints,
    top_k_mask,
)


def test_burn_without_padding() -> None:
    metric = TopKAccuracyMetric(2)
    metric.update(TopKAccuracyInput(floats(BURN_OUTPUTS), ints([2, 2, 1, 1])), META)
    assert metric.value() == NumericEntry(50.0, 4)


def test_burn_with_padding() -> None:
    metric = TopKAccuracyMetric(2).with_pad_token(3)
    metric.update(TopKAccuracyInput(floats(BURN_PADDED_OUTPUTS), ints([2, 2, 1, 1, 3, 3, 3])), META)
    assert metric.value() == NumericEntry(50.0, 4)


def test_burn_parameterized_unique_name() -> None:
    assert TopKAccuracyMetric(2).name() == TopKAccuracyMetric(2).name() == "Top-K Accuracy @ TopK(2)"
    assert TopKAccuracyMetric(1).name() != TopKAccuracyMetric(2).name()


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    batch=st.integers(1, 12),
    classes=st.integers(1, 6),
    k=st.integers(1, 6),
    pad=st.one_of(st.none(), st.integers(0, 5)),
)
def test_matches_numpy(seed: int, batch: int, classes: int, k: int, pad: int | None) -> None:
    k = min(k, classes)
    rng = np.random.default_rng(seed)
    outputs = rng.random((batch, classes), dtype=np.float32)
    targets = rng.integers(0, classes, batch)
    kept = targets != pad if pad is not None else np.ones(batch, dtype=bool)
    hits = top_k_mask(outputs, k)[np.arange(batch), targets] & kept
    metric = TopKAccuracyMetric(k, pad_token=pad)
    metric.update(TopKAccuracyInput(floats(outputs), ints(targets)), META)
    if kept.sum() == 0:
        assert math.isnan(metric.value().current())
    else:
        assert metric.value().current() == pytest.approx(100.0 * hits.sum() / kept.sum())
    assert metric.value().count == kept.sum()


def test_epoch_aggregate_and_classification_output() -> None:
    metric = TopKAccuracyMetric(1)
    out = ClassificationOutput(floats([0.3]), floats(BURN_OUTPUTS), ints([2, 2, 1, 1]))
    entries = [
        metric.update(out, META),
        metric.update(TopKAccuracyInput(floats([[0.0, 1.0]]), ints([1])), META),
    ]
    assert metric.running_value() == NumericEntry(60.0, 5)
    assert aggregate(entries) == pytest.approx(60.0)


def test_bad_k() -> None:
    for k in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="k must be an int >= 1"):
            TopKAccuracyMetric(k)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="k = 3 is more than the 2 classes"):
        TopKAccuracyMetric(3).update(TopKAccuracyInput(floats([[0.1, 0.9]]), ints([1])), META)
