"""DiceMetric: Burn's cases, the Dice formula in NumPy, background handling and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from ferrum.train.metric import DiceInput, DiceMetric, DiceMetricConfig, NumericEntry
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.metric_reference import META, aggregate, ints

WITH_BACKGROUND = DiceMetricConfig(epsilon=1e-7, include_background=True)


def dice(outputs: object, targets: object, config: DiceMetricConfig | None = None) -> float:
    metric = DiceMetric(config)
    metric.update(DiceInput(ints(np.asarray(outputs)), ints(np.asarray(targets))), META)
    return metric.value().current()


def test_burn_cases() -> None:
    assert dice([[[[1, 0], [1, 0]]]], [[[[1, 0], [1, 0]]]]) == pytest.approx(1.0)
    assert dice([[[[1, 0], [1, 0]]]], [[[[0, 1], [0, 1]]]]) < 1e-6
    assert dice([[[[1, 1], [0, 0]]]], [[[[1, 0], [1, 0]]]]) == pytest.approx(0.5)
    assert dice([[[[0, 0], [0, 0]]]], [[[[0, 0], [0, 0]]]]) == pytest.approx(1.0)
    ones_1, ones_2 = np.ones((1, 1, 2, 2), dtype=int), np.ones((1, 2, 2, 2), dtype=int)
    assert dice(ones_1, ones_1) == pytest.approx(1.0)
    assert dice(ones_2, ones_2, WITH_BACKGROUND) == pytest.approx(1.0)
    assert dice(ones_2, ones_2, DiceMetricConfig(include_background=False)) == pytest.approx(1.0)


def test_burn_errors() -> None:
    with pytest.raises(ValueError, match="DiceMetric requires at least 3 dimensions"):
        DiceMetric(rank=2)
    with pytest.raises(ValueError, match=r"same shape, found \(1, 1, 2, 2\) and \(1, 1, 2, 3\)"):
        DiceInput(ints(np.zeros((1, 1, 2, 2), dtype=int)), ints(np.zeros((1, 1, 2, 3), dtype=int)))
    one_class = np.ones((1, 1, 1, 2), dtype=int)
    with pytest.raises(ValueError, match="at least 2 classes when including background"):
        dice(one_class, one_class, WITH_BACKGROUND)
    dice(np.ones((1, 2, 1, 2), dtype=int), np.ones((1, 2, 1, 2), dtype=int), WITH_BACKGROUND)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    shape=st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 4), st.integers(1, 4)),
    background=st.booleans(),
)
def test_matches_numpy(seed: int, shape: tuple[int, int, int, int], background: bool) -> None:
    if background and shape[1] < 2:
        return
    rng = np.random.default_rng(seed)
    x, y = rng.integers(0, 2, shape), rng.integers(0, 2, shape)
    xs, ys = (x, y) if background or shape[1] == 1 else (x[:, 1:], y[:, 1:])
    expected = (2.0 * (xs * ys).sum() + 1e-7) / (xs.sum() + ys.sum() + 1e-7)
    assert dice(x, y, DiceMetricConfig(include_background=background)) == pytest.approx(expected)


def test_name_rank_and_epoch() -> None:
    metric = DiceMetric.with_config(DiceMetricConfig(), rank=3)
    assert metric.name() == "3D Dice Metric" and DiceMetric().name() == "4D Dice Metric"
    entries = [
        metric.update(
            DiceInput(ints([[[1, 1]], [[1, 1]], [[1, 1]]]), ints([[[1, 1]], [[1, 1]], [[1, 1]]])), META
        ),
        metric.update(DiceInput(ints([[[1, 0]]]), ints([[[0, 1]]])), META),
    ]
    assert metric.running_value() == NumericEntry(pytest.approx(0.75), 4)  # type: ignore[arg-type]
    assert aggregate(entries) == pytest.approx(0.75)
    with pytest.raises(ValueError, match=r"masks of rank 3, found shape \(1, 1, 1, 2\)"):
        metric.update(DiceInput(ints([[[[1, 0]]]]), ints([[[[1, 0]]]])), META)
