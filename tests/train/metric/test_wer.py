"""WordErrorRate: Burn's cases, padding, epoch weights and the text of its errors."""

from __future__ import annotations

import math

import pytest
from ferrum.train.metric import NumericEntry, WerInput, WordErrorRate

from tests.support.metric_reference import META, check_burn_error_rate_cases, ints


def test_burn_cases() -> None:
    padded = check_burn_error_rate_cases(WordErrorRate, WerInput)
    assert padded.name() == "WER" and padded.higher_is_better is False and padded.unit == "%"


def test_burn_clear_resets_state() -> None:
    metric = WordErrorRate()
    metric.update(WerInput(ints([[1, 2]]), ints([[1, 3]])), META)
    metric.clear()
    assert math.isnan(metric.value().current())


def test_a_sequence_ends_at_its_first_pad_token() -> None:
    metric = WordErrorRate(pad_token=9)
    # Reference [4, 5] (the 6 after the pad is not read); prediction [4, 5, 6]: one insertion.
    metric.update(WerInput(ints([[4, 5, 6, 9]]), ints([[4, 5, 9, 6]])), META)
    assert metric.value() == NumericEntry(50.0, 2)


def test_bad_input() -> None:
    with pytest.raises(TypeError, match=r"WerInput\.outputs must be an Int tensor"):
        WerInput(ints([[1.5]]).float(), ints([[1]]))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="pad token"):
        WordErrorRate(pad_token=-3)
