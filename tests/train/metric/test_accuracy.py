"""AccuracyMetric: Burn's cases, a NumPy reference, pad tokens, the epoch aggregate and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ferrum.train import ClassificationOutput, MultiLabelClassificationOutput
from ferrum.train.metric import AccuracyInput, AccuracyMetric, Numeric, NumericEntry
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.metric_reference import BURN_OUTPUTS, BURN_PADDED_OUTPUTS, META, aggregate, floats, ints


def test_burn_without_padding() -> None:
    metric = AccuracyMetric()
    entry = metric.update(AccuracyInput(floats(BURN_OUTPUTS), ints([2, 2, 1, 1])), META)
    assert metric.value().current() == 50.0
    assert (entry.name, entry.serialized, entry.formatted) == (
        "Accuracy",
        "50.0,4",
        "epoch 50.00 % - batch 50.00 %",
    )


def test_burn_with_padding() -> None:
    metric = AccuracyMetric().with_pad_token(3)
    metric.update(AccuracyInput(floats(BURN_PADDED_OUTPUTS), ints([2, 2, 1, 1, 3, 3, 3])), META)
    assert metric.value() == NumericEntry(50.0, 4)  # the batch weighs its 4 non-pad targets


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    batch=st.integers(1, 12),
    classes=st.integers(1, 6),
    pad=st.one_of(st.none(), st.integers(0, 5)),
)
def test_matches_numpy(seed: int, batch: int, classes: int, pad: int | None) -> None:
    rng = np.random.default_rng(seed)
    outputs = rng.random((batch, classes), dtype=np.float32)
    targets = rng.integers(0, classes, batch)
    kept = targets != pad if pad is not None else np.ones(batch, dtype=bool)
    hits = (outputs.argmax(axis=1) == targets) & kept
    metric = AccuracyMetric(pad_token=pad)
    metric.update(AccuracyInput(floats(outputs), ints(targets)), META)
    if kept.sum() == 0:
        assert math.isnan(metric.value().current()) and metric.value().count == 0
    else:
        assert metric.value().current() == pytest.approx(100.0 * hits.sum() / kept.sum())
        assert metric.value().count == kept.sum()


def test_epoch_is_weighted_by_batch_size() -> None:
    metric = AccuracyMetric()
    entries = [
        metric.update(AccuracyInput(floats([[1.0, 0.0]] * 4), ints([0, 0, 0, 1])), META),  # 75 %, 4 samples
        metric.update(AccuracyInput(floats([[1.0, 0.0]]), ints([1])), META),  # 0 %, 1 sample
    ]
    assert metric.running_value().current() == pytest.approx(60.0)
    assert metric.running_value().count == 5
    assert aggregate(entries) == pytest.approx(60.0)
    metric.clear()
    assert math.isnan(metric.running_value().current())


def test_all_padding_does_not_poison_the_epoch() -> None:
    metric = AccuracyMetric(pad_token=0)
    metric.update(AccuracyInput(floats([[0.0, 1.0]]), ints([1])), META)
    entry = metric.update(AccuracyInput(floats([[0.0, 1.0]]), ints([0])), META)
    assert entry.serialized == "nan,0"
    assert metric.running_value().current() == 100.0


def test_reads_a_classification_output() -> None:
    out = ClassificationOutput(floats([0.1]), floats(BURN_OUTPUTS), ints([2, 2, 1, 1]))
    metric = AccuracyMetric()
    metric.update(out, META)
    assert metric.value().current() == 50.0
    assert isinstance(metric, Numeric) and metric.higher_is_better


def test_multilabel_output_is_a_type_error() -> None:
    out = MultiLabelClassificationOutput(floats([0.1]), floats([[0.2, 0.8]]), ints([[0, 1]]))
    with pytest.raises(
        TypeError, match=r"'Accuracy'.*MultiLabelClassificationOutput.*AccuracyInput.*targets"
    ):
        AccuracyMetric().update(out, META)  # type: ignore[arg-type]


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="same batch size"):
        AccuracyInput(floats([[0.1, 0.9]]), ints([1, 0]))
    with pytest.raises(TypeError, match=r"AccuracyInput.targets must be an Int tensor, found Float"):
        AccuracyInput(floats([[0.1, 0.9]]), floats([1.0]))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"AccuracyInput.outputs must have rank 2, found shape \(2,\)"):
        AccuracyInput(floats([0.1, 0.9]), ints([1]))
    with pytest.raises(ValueError, match="pad token"):
        AccuracyMetric().with_pad_token(-1)
