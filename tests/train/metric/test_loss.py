"""LossMetric: the mean loss per batch, the epoch mean weighted by batch size, what it reads."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from ferrum import D1, Float, Tensor
from ferrum.backend import Autodiff, NdArray
from ferrum.train import ClassificationOutput, MultiLabelClassificationOutput, RegressionOutput
from ferrum.train.metric import LossInput, LossMetric, NumericEntry

from tests.support.metric_reference import META, aggregate, floats, ints


def test_burn_rule_without_a_batch_size() -> None:
    metric = LossMetric()
    entry = metric.update(LossInput(floats([1.0, 2.0, 4.5])), META)  # per-sample losses: their mean, weight 3
    assert metric.value() == NumericEntry(2.5, 3)
    assert (entry.name, entry.serialized, entry.formatted) == ("Loss", "2.5,3", "epoch 2.50 - batch 2.50")
    assert metric.higher_is_better is False


def test_outputs_weigh_by_their_batch_size() -> None:
    metric = LossMetric()
    entries = [
        metric.update(ClassificationOutput(floats([1.0]), floats(np.zeros((3, 2))), ints([0, 1, 0])), META),
        metric.update(MultiLabelClassificationOutput(floats([2.0]), floats([[0.0]]), ints([[1]])), META),
        metric.update(
            RegressionOutput(floats([4.0]), floats(np.zeros((4, 1))), floats(np.zeros((4, 1)))), META
        ),
    ]
    assert [e.serialized for e in entries] == ["1.0,3", "2.0,1", "4.0,4"]
    expected = (3 * 1.0 + 1 * 2.0 + 4 * 4.0) / 8
    assert metric.running_value() == NumericEntry(expected, 8)
    assert aggregate(entries) == pytest.approx(expected)


def test_autodiff_loss_after_sync() -> None:
    d = Autodiff[NdArray].device()
    out = ClassificationOutput(
        Tensor.from_floats([0.75], d).require_grad(), Tensor.zeros((2, 2), d), Tensor.from_ints([0, 1], d)
    )
    metric = LossMetric()
    metric.update(out.sync(), META)
    assert metric.value() == NumericEntry(0.75, 2)


@dataclass
class OnlyLoss:
    loss: Tensor[Any, D1, Float]


def test_loss_field_alone_and_explicit_input() -> None:
    metric = LossMetric()
    metric.update(OnlyLoss(floats([0.5])), META)
    assert metric.value() == NumericEntry(0.5, 1)

    class Explicit:
        def loss_input(self) -> LossInput[Any]:
            return LossInput(floats([3.0]), batch_size=16)

    metric.update(Explicit(), META)
    assert metric.value() == NumericEntry(3.0, 16)


def test_empty_loss_and_bad_input() -> None:
    metric = LossMetric()
    assert metric.update(LossInput(floats(np.zeros(0))), META).serialized == "nan,0"
    assert math.isnan(metric.running_value().current())
    with pytest.raises(ValueError, match=r"LossInput.tensor must have rank 1, found shape \(1, 1\)"):
        LossInput(floats([[1.0]]))
    with pytest.raises(ValueError, match="batch_size must be >= 0"):
        LossInput(floats([1.0]), batch_size=-1)
    with pytest.raises(
        TypeError, match=r"'Loss'.*an int.*loss_input\(\).*a `loss` field.*int has no field `loss`"
    ):
        metric.update(3, META)  # type: ignore[arg-type]
