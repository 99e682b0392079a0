"""CharErrorRate: Burn's cases, edit distance over reference length, padding, epoch weights, bad input."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pytest
from ferrum import D2, Int, Tensor
from ferrum.train import ClassificationOutput
from ferrum.train.metric import CerInput, CharErrorRate, NumericEntry

from tests.support.metric_reference import META, aggregate, check_burn_error_rate_cases, floats, ints


def test_burn_cases() -> None:
    check_burn_error_rate_cases(CharErrorRate, CerInput)


def test_burn_clear_resets_state() -> None:
    metric = CharErrorRate()
    metric.update(CerInput(ints([[1, 2]]), ints([[1, 3]])), META)
    assert metric.value().current() > 0.0
    metric.clear()
    assert math.isnan(metric.value().current())


def test_epoch_is_the_error_rate_over_every_reference_token() -> None:
    metric = CharErrorRate(pad_token=0)
    entries = [
        metric.update(CerInput(ints([[1, 2, 3, 4]]), ints([[1, 2, 3, 5]])), META),  # 1 edit / 4
        metric.update(CerInput(ints([[7, 0, 0, 0]]), ints([[6, 0, 0, 0]])), META),  # 1 edit / 1
    ]
    assert metric.running_value() == NumericEntry(40.0, 5)
    assert aggregate(entries) == pytest.approx(40.0)


def test_outputs_and_targets_may_differ_in_width() -> None:
    metric = CharErrorRate(pad_token=0)
    metric.update(CerInput(ints([[1, 2, 3, 4, 5, 0]]), ints([[1, 2, 3]])), META)
    assert metric.value() == NumericEntry(pytest.approx(200.0 / 3), 3)  # type: ignore[arg-type]


def test_empty_references_have_no_value() -> None:
    metric = CharErrorRate(pad_token=0)
    assert metric.update(CerInput(ints([[1, 0]]), ints([[0, 0]])), META).serialized == "nan,0"


@dataclass
class Decoded:
    output: Tensor[Any, D2, Int]
    targets: Tensor[Any, D2, Int]


def test_reads_token_fields_and_rejects_logits() -> None:
    metric = CharErrorRate()
    metric.update(Decoded(ints([[1, 2]]), ints([[1, 3]])), META)
    assert metric.value().current() == 50.0
    out = ClassificationOutput(floats([0.1]), floats([[0.1, 0.9]]), ints([1]))
    with pytest.raises(
        TypeError, match=r"'CER'.*ClassificationOutput.*cer_input\(\).*`output` is a Float tensor"
    ):
        metric.update(out, META)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="same batch size"):
        CerInput(ints([[1, 2]]), ints([[1, 2], [3, 4]]))
