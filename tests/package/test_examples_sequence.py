"""The sequence examples (examples/text_classification/, examples/lstm_time_series.py)
learn their tasks: run with fewer steps than the scripts use, they must already beat
chance (or the series' variance) by far."""

from __future__ import annotations

from pathlib import Path

from ferrum.backend import Autodiff, NdArray
from ferrum.optim import AdamConfig
from ferrum.train import Split

from examples import lstm_time_series
from examples.text_classification.data import MAX_LEN, CountingDataset
from examples.text_classification.model import TextClassificationModelConfig
from examples.text_classification.training import ExperimentConfig, train


def test_text_classification_learns_the_counting_task(tmp_path: Path) -> None:
    # 200 steps of 32 sentences (2 epochs of 3200), then the 500 test sentences.
    model = TextClassificationModelConfig(CountingDataset.num_classes(), 20, MAX_LEN)
    cfg = ExperimentConfig(model, AdamConfig(), num_epochs=2)
    data = CountingDataset.train(3200), CountingDataset.test(500)
    result = train(str(tmp_path), cfg, *data, Autodiff[NdArray].device())
    assert result.summary.metric("Accuracy", Split.Valid).last > 90.0


def test_lstm_forecasts_far_below_the_series_variance() -> None:
    assert lstm_time_series.main(steps=200) < 0.02
