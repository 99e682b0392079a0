"""The sequence examples (examples/text_classification.py, examples/lstm_time_series.py)
learn their tasks: run with fewer steps than the scripts use, they must already beat
chance (or the series' variance) by far."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

import lstm_time_series
import text_classification


def test_text_classification_learns_the_counting_task() -> None:
    assert text_classification.main(steps=200) > 0.9


def test_lstm_forecasts_far_below_the_series_variance() -> None:
    assert lstm_time_series.main(steps=200) < 0.02
