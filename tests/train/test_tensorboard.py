"""TensorBoardLogger: the event files, read back by TensorBoard's own reader, hold what the Learner reported.

A small linear regression trains with an InMemoryMetricLogger next to the TensorBoardLogger: the
step values in the event files must equal the entries the in-memory logger received, the epoch
values their count-weighted means (computed here with NumPy) and the run's summary, the learning
rate the schedule's 0.1 * 0.5**k, the histograms the trained weights, and the HParams tab the config.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ferrum import config
from ferrum.backend import Autodiff, NdArray
from ferrum.data.dataloader import DataLoaderBuilder
from ferrum.data.dataset import InMemDataset
from ferrum.lr_scheduler import ExponentialLrSchedulerConfig
from ferrum.nn import LinearConfig
from ferrum.optim import SgdConfig
from ferrum.train import (
    InMemoryMetricLogger,
    Learner,
    LearningResult,
    PlainRenderer,
    Split,
    SupervisedTraining,
    TensorBoardLogger,
)
from ferrum.train.metric import LossMetric, MetricEntry, NumericEntry
from ferrum.train.tensorboard import flatten_hparams

from tests.support.line_regression import Line, Pairs

pytest.importorskip("tensorboardX")
event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")

EPOCHS = 3
TRAIN_BATCHES = 5  # 40 items in batches of 8


@config
class OptimizerSettings:
    momentum: float = 0.0
    nesterov: bool = False


@config
class TrainingConfig:
    optimizer: OptimizerSettings
    batch_size: int = 8
    initial_lr: float = 0.1
    gamma: float = 0.5
    name: str = "line"


def _train(tmp_path: Path, **tensorboard: Any) -> tuple[LearningResult[Line], InMemoryMetricLogger, Path]:
    data = InMemDataset([i / 40 for i in range(40)])
    cfg = TrainingConfig(OptimizerSettings())
    train = DataLoaderBuilder(Pairs(Autodiff[NdArray].device())).batch_size(cfg.batch_size).build(data)
    valid = DataLoaderBuilder(Pairs(NdArray.device())).batch_size(16).build(data)
    model = Line(LinearConfig(1, 1).init(Autodiff[NdArray].device()))
    schedule = ExponentialLrSchedulerConfig(cfg.initial_lr, cfg.gamma).init()
    memory = InMemoryMetricLogger()
    log_dir = tmp_path / "tb"
    result = (
        SupervisedTraining(tmp_path / "run", train, valid)
        .metrics(LossMetric())
        .num_epochs(EPOCHS)
        .with_plots(False)
        .renderer(PlainRenderer(stream=io.StringIO()))
        .with_metric_logger(memory)
        .with_metric_logger(TensorBoardLogger(log_dir, hparams=cfg, **tensorboard))
        .launch(Learner(model, SgdConfig().init(), schedule))
    )
    return result, memory, log_dir


def _events(directory: Path) -> Any:
    accumulator = event_accumulator.EventAccumulator(
        str(directory), size_guidance={event_accumulator.SCALARS: 0, event_accumulator.HISTOGRAMS: 0}
    )
    accumulator.Reload()
    return accumulator


def test_scalars_per_step_and_epoch_equal_the_learner_metrics(tmp_path: Path) -> None:
    result, memory, log_dir = _train(tmp_path)
    for split in (Split.Train, Split.Valid):
        events = _events(log_dir / split.value)
        logged = [
            NumericEntry.deserialize(value)
            for epoch in range(1, EPOCHS + 1)
            for value in memory.values[("Loss", split, epoch)]
        ]
        steps = events.Scalars("step/Loss")
        assert [s.step for s in steps] == list(range(1, len(logged) + 1))
        np.testing.assert_allclose([s.value for s in steps], [e.value for e in logged], rtol=1e-6)
        per_epoch = events.Scalars("epoch/Loss")
        assert [s.step for s in per_epoch] == list(range(1, EPOCHS + 1))
        expected = []
        for epoch in range(1, EPOCHS + 1):
            entries = [NumericEntry.deserialize(v) for v in memory.values[("Loss", split, epoch)]]
            counts = np.array([e.count for e in entries], np.float64)
            values = np.array([e.value for e in entries], np.float64)
            expected.append(float((values * counts).sum() / counts.sum()))
        np.testing.assert_allclose([s.value for s in per_epoch], expected, rtol=1e-6)
        summary = result.summary.metric("Loss", split)
        assert summary is not None
        assert [epoch for epoch, _ in summary.entries] == [s.step for s in per_epoch]
        np.testing.assert_allclose([s.value for s in per_epoch], [v for _, v in summary.entries], rtol=1e-6)
    # The loss goes down: the run trained.
    valid_epochs = [s.value for s in _events(log_dir / "valid").Scalars("epoch/Loss")]
    assert valid_epochs[-1] < valid_epochs[0]


def test_learning_rate_per_training_step(tmp_path: Path) -> None:
    _, _, log_dir = _train(tmp_path)
    rates = _events(log_dir / "train").Scalars("step/Learning_Rate")
    expected = [0.1 * 0.5**k for k in range(EPOCHS * TRAIN_BATCHES)]
    assert [r.step for r in rates] == list(range(1, EPOCHS * TRAIN_BATCHES + 1))
    np.testing.assert_allclose([r.value for r in rates], expected, rtol=1e-6)
    assert "step/Learning_Rate" not in _events(log_dir / "valid").Tags()["scalars"]


def test_histograms_of_the_parameters_per_epoch(tmp_path: Path) -> None:
    result, _, log_dir = _train(tmp_path, histograms=True)
    events = _events(log_dir / "train")
    assert set(events.Tags()["histograms"]) == {"parameters/fc.weight", "parameters/fc.bias"}
    for path, param in result.model.named_parameters():
        histograms = events.Histograms(f"parameters/{path}")
        assert [h.step for h in histograms] == list(range(1, EPOCHS + 1))
        final = np.asarray(param.val().to_numpy(), np.float64)  # the model after the last epoch
        last = histograms[-1].histogram_value
        assert last.num == final.size
        np.testing.assert_allclose([last.sum, last.min, last.max], [final.sum(), final.min(), final.max()])
    # Without the option, no histogram is written.
    _, _, plain_dir = _train(tmp_path / "plain")
    assert _events(plain_dir / "train").Tags()["histograms"] == []


def test_hparams_of_the_config(tmp_path: Path) -> None:
    from tensorboard.plugins.hparams import plugin_data_pb2

    _, _, log_dir = _train(tmp_path)
    events = _events(log_dir)
    content = events.PluginTagToContent("hparams")
    assert set(content) == {
        "_hparams_/experiment",
        "_hparams_/session_start_info",
        "_hparams_/session_end_info",
    }
    start = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/session_start_info"])
    hparams = start.session_start_info.hparams
    assert hparams["batch_size"].number_value == 8
    assert hparams["initial_lr"].number_value == pytest.approx(0.1)
    assert hparams["gamma"].number_value == pytest.approx(0.5)
    assert hparams["name"].string_value == "line"
    assert hparams["optimizer.momentum"].number_value == 0.0
    assert hparams["optimizer.nesterov"].bool_value is False
    experiment = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/experiment"]).experiment
    assert {(m.name.group, m.name.tag) for m in experiment.metric_infos} == {
        ("train", "epoch/Loss"),
        ("valid", "epoch/Loss"),
    }
    assert {h.name for h in experiment.hparam_infos} == set(hparams)
    end = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/session_end_info"])
    assert end.session_end_info.status == 1  # STATUS_SUCCESS


def test_text_entries_and_flattened_hparams(tmp_path: Path) -> None:
    with TensorBoardLogger(tmp_path) as logger:
        logger.log([MetricEntry("Note", "warming up", "warming up")], 1, Split.Train)
        logger.end_epoch(1, Split.Train)
        assert logger.read_numeric("Note", 1, Split.Train) == []
    texts = _events(tmp_path / "train").Tensors("step/Note/text_summary")  # tensorboardX's suffix
    assert [t.tensor_proto.string_val[0] for t in texts] == [b"warming up"]
    assert flatten_hparams(TrainingConfig(OptimizerSettings(0.9))) == {
        "optimizer.momentum": 0.9,
        "optimizer.nesterov": False,
        "batch_size": 8,
        "initial_lr": 0.1,
        "gamma": 0.5,
        "name": "line",
    }


def test_bad_settings_and_a_closed_logger(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="hparams must be a ferrum @config, a dataclass or a mapping, found"):
        TensorBoardLogger(tmp_path, hparams=3)
    with pytest.raises(ValueError, match="flush_secs must be an int >= 1, found 0"):
        TensorBoardLogger(tmp_path, flush_secs=0)
    logger = TensorBoardLogger(tmp_path)
    logger.close()
    with pytest.raises(ValueError, match="is closed: a TensorBoardLogger serves one training run"):
        logger.log([], 1, Split.Train)


def test_missing_tensorboardx_says_how_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "tensorboardX", None)
    with pytest.raises(ImportError, match=r"pip install 'ferrum-dl\[tensorboard\]'"):
        TensorBoardLogger(tmp_path)
