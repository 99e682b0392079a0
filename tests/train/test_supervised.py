"""The Learner end to end: artifact layout, logged values, resume, early stopping, stops and bad input."""

from __future__ import annotations

import io
import json
import logging
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ferrum import D2, Device, Tensor
from ferrum.backend import NdArray
from ferrum.data.dataloader import Batcher, DataLoaderBuilder
from ferrum.data.dataset import InMemDataset
from ferrum.lr_scheduler import LinearLrSchedulerConfig
from ferrum.optim import GradientsParams, SgdConfig
from ferrum.record import DefaultRecorder
from ferrum.train import (
    Aggregate,
    Direction,
    Interrupter,
    KeepLastNCheckpoints,
    Learner,
    MetricEarlyStoppingStrategy,
    MetricState,
    PlainRenderer,
    Split,
    StoppingCondition,
    SupervisedTraining,
    TrainingProgress,
)
from ferrum.train.metric import LearningRateMetric, LossMetric, MetricEntry, MetricMetadata, NumericEntry
from ferrum.train.supervised import _remove_logs_from

from tests.support.metric_reference import NotNumeric
from tests.support.train_setup import (
    Batch,
    Item,
    ItemBatcher,
    Recorder,
    TrainB,
    items,
    learner,
    loaders,
    tiny_net,
    training,
    weights,
)


def log_entries(path: Path) -> list[NumericEntry]:
    return [NumericEntry.deserialize(line) for line in path.read_text().splitlines()]


def test_artifact_directory_has_burns_layout(tmp_path: Path) -> None:
    out = io.StringIO()
    result = training(tmp_path, out=out).summary().launch(learner())
    assert result.stop_reason is None
    for name in ("experiment.log", "summary.txt"):
        assert (tmp_path / name).stat().st_size > 0, name
    for epoch in (1, 2):
        for stem in ("model", "optim", "scheduler"):
            assert (tmp_path / "checkpoint" / f"{stem}-{epoch}.mpk").is_file()
        assert (tmp_path / "checkpoint" / f"training-{epoch}.json").is_file()
        for metric in ("Accuracy", "Loss"):
            assert len(log_entries(tmp_path / "train" / f"epoch-{epoch}" / f"{metric}.log")) == 6  # 96 / 16
            assert len(log_entries(tmp_path / "valid" / f"epoch-{epoch}" / f"{metric}.log")) == 2  # 32 / 16
    log = (tmp_path / "experiment.log").read_text()
    assert "epoch 2/2: validation" in log and "checkpoint of epoch 2 written" in log
    assert (tmp_path / "summary.txt").read_text().strip() == str(result.summary)
    text = out.getvalue()
    assert "[train] epoch 1/2  done: 96 items" in text and "[valid] epoch 2/2  done: 32 items" in text


def test_logged_values_are_the_models_loss_and_accuracy(tmp_path: Path) -> None:
    result = training(tmp_path).launch(learner())
    model = result.model
    assert not any(d.is_autodiff for d in model.devices())
    # The last validation epoch ran the returned model: recompute its batches with NumPy.
    _, valid = loaders()
    losses, accuracies = [], []
    for batch in valid:
        logits = model.forward(batch.x).to_numpy().astype(np.float64)
        targets = np.array(batch.targets.to_data().to_list())
        log_probs = logits - logits.max(1, keepdims=True)
        log_probs -= np.log(np.exp(log_probs).sum(1, keepdims=True))
        losses.append((-log_probs[np.arange(len(targets)), targets].mean(), len(targets)))
        accuracies.append((100.0 * (logits.argmax(1) == targets).mean(), len(targets)))
    logged_loss = log_entries(tmp_path / "valid" / "epoch-2" / "Loss.log")
    logged_accuracy = log_entries(tmp_path / "valid" / "epoch-2" / "Accuracy.log")
    for (value, count), entry in zip(losses, logged_loss, strict=True):
        assert entry.count == count and entry.value == pytest.approx(value, rel=1e-5)
    for (value, count), entry in zip(accuracies, logged_accuracy, strict=True):
        assert entry.count == count and entry.value == pytest.approx(value)
    # The epoch value is the count-weighted mean of the batch values.
    weighted = sum(v * n for v, n in losses) / sum(n for _, n in losses)
    assert result.summary.metric("Loss", Split.Valid).last == pytest.approx(weighted, rel=1e-5)
    assert [epoch for epoch, _ in result.summary.metric("Accuracy", Split.Train).entries] == [1, 2]


@pytest.mark.parametrize("workers", [0, 2])
def test_resumed_run_ends_with_the_uninterrupted_runs_weights(tmp_path: Path, workers: int) -> None:
    straight = training(tmp_path / "straight", workers=workers, epochs=4).launch(learner())

    first = training(tmp_path / "split", workers=workers, epochs=2).launch(learner())
    assert first.stop_reason is None
    # A new process would build everything anew: a fresh model (other random draws), fresh loaders.
    resumed = training(tmp_path / "split", workers=workers, epochs=4).checkpoint(2).launch(learner(seed=99))

    expected, found = weights(straight.model), weights(resumed.model)
    for path in expected:
        np.testing.assert_array_equal(found[path], expected[path], err_msg=path)
    for split, batches in (("train", 6), ("valid", 2)):
        a = (tmp_path / "straight" / split / "epoch-4" / "Loss.log").read_text()
        assert a == (tmp_path / "split" / split / "epoch-4" / "Loss.log").read_text()
        assert len(a.splitlines()) == batches
    # The summary covers all four epochs: the first two are read back from the logs.
    assert [e for e, _ in resumed.summary.metric("Loss", Split.Valid).entries] == [1, 2, 3, 4]
    assert (
        resumed.summary.metric("Loss", Split.Valid).entries
        == straight.summary.metric("Loss", Split.Valid).entries
    )


def test_resuming_without_the_random_state_diverges(tmp_path: Path) -> None:
    # The control for the test above: the training state file is what makes the runs equal.
    straight = training(tmp_path / "straight", epochs=3).launch(learner())
    training(tmp_path / "split", epochs=2).launch(learner())
    (tmp_path / "split" / "checkpoint" / "training-2.json").unlink()
    resumed = training(tmp_path / "split", epochs=3).checkpoint(2).launch(learner(seed=99))
    assert any(
        not np.array_equal(a, b)
        for a, b in zip(weights(straight.model).values(), weights(resumed.model).values(), strict=True)
    )
    assert "training-2.json is missing" in (tmp_path / "split" / "experiment.log").read_text()


def test_resuming_from_an_epoch_without_checkpoint_names_the_files(tmp_path: Path) -> None:
    training(tmp_path, epochs=1).launch(learner())
    with pytest.raises(FileNotFoundError) as info:
        training(tmp_path, epochs=3).checkpoint(2).launch(learner())

    message = str(info.value)
    assert "model-2.mpk, optim-2.mpk, scheduler-2.mpk missing" in message
    assert str(tmp_path / "checkpoint") in message and "checkpoints found: 1" in message


def test_a_failed_resume_leaves_the_logs_it_would_replace(tmp_path: Path) -> None:
    training(tmp_path, epochs=2).launch(learner())
    (tmp_path / "checkpoint" / "optim-1.mpk").unlink()
    with pytest.raises(FileNotFoundError, match=r"optim-1\.mpk missing"):
        training(tmp_path, epochs=3).checkpoint(1).launch(learner())
    assert (tmp_path / "train" / "epoch-2" / "Loss.log").is_file()


def test_resuming_needs_a_file_checkpointer(tmp_path: Path) -> None:
    train, valid = loaders()
    with pytest.raises(ValueError, match=r"checkpoint\(1\) resumes from checkpoint files"):
        SupervisedTraining(tmp_path, train, valid).checkpoint(1).launch(learner())


def test_default_strategy_keeps_the_last_two_and_the_best_valid_loss(tmp_path: Path) -> None:
    class Pinned:
        """A valid "Loss" best at epoch 1, so the default strategy keeps it beside the last two."""

        higher_is_better = False

        def __init__(self) -> None:
            self.epoch = 0

        def name(self) -> str:
            return "Loss"

        def update(self, item: object, metadata: MetricMetadata) -> MetricEntry:
            self.epoch = metadata.epoch
            return MetricEntry("Loss", "", NumericEntry(float(self.epoch)).serialize())

        def clear(self) -> None:
            pass

        def value(self) -> NumericEntry:
            return NumericEntry(float(self.epoch))

        def running_value(self) -> NumericEntry:
            return NumericEntry(float(self.epoch))

    train, valid = loaders()
    (
        SupervisedTraining(tmp_path, train, valid)
        .metric_valid_numeric(Pinned())
        .with_file_checkpointer(DefaultRecorder())
        .num_epochs(5)
        .renderer(Recorder())
        .with_plots(False)
        .launch(learner())
    )
    kept = sorted(p.name for p in (tmp_path / "checkpoint").glob("model-*"))
    assert kept == ["model-1.mpk", "model-4.mpk", "model-5.mpk"]


def test_keep_last_n_strategy_is_used(tmp_path: Path) -> None:
    training(tmp_path, epochs=3).with_checkpointing_strategy(KeepLastNCheckpoints(1)).launch(learner())
    assert sorted(p.name for p in (tmp_path / "checkpoint").iterdir()) == [
        "manifest-3.json",
        "model-3.mpk",
        "optim-3.mpk",
        "scheduler-3.mpk",
        "training-3.json",
    ]


class Constant:
    """A numeric metric whose value never changes: early stopping sees no improvement."""

    higher_is_better = False

    def name(self) -> str:
        return "Constant"

    def update(self, item: object, metadata: MetricMetadata) -> MetricEntry:
        return MetricEntry("Constant", "1.0", "1.0")

    def clear(self) -> None:
        pass

    def value(self) -> NumericEntry:
        return NumericEntry(1.0)

    def running_value(self) -> NumericEntry:
        return NumericEntry(1.0)


def test_early_stopping_ends_training_after_n_epochs_without_improvement(tmp_path: Path) -> None:
    strategy = MetricEarlyStoppingStrategy(
        Constant(), Aggregate.Mean, Direction.Lowest, Split.Valid, StoppingCondition.NoImprovementSince(2)
    )
    result = (
        training(tmp_path, epochs=10)
        .metric_valid_numeric(Constant())
        .early_stopping(strategy)
        .launch(learner())
    )
    assert result.stop_reason == "early stopping after epoch 3"
    assert (tmp_path / "valid" / "epoch-3").is_dir() and not (tmp_path / "train" / "epoch-4").exists()
    assert result.summary.epochs == 3
    assert (
        "early stopping: no improvement of valid Constant since epoch 1"
        in (tmp_path / "experiment.log").read_text()
    )


def test_early_stopping_state_is_rebuilt_on_resume(tmp_path: Path) -> None:
    def run(epochs: int, checkpoint: int | None) -> str | None:
        strategy = MetricEarlyStoppingStrategy(
            "Constant", Aggregate.Mean, Direction.Lowest, Split.Valid, StoppingCondition.NoImprovementSince(3)
        )
        builder = training(tmp_path, epochs=epochs).metric_valid_numeric(Constant()).early_stopping(strategy)
        if checkpoint is not None:
            builder = builder.checkpoint(checkpoint)
        return builder.launch(learner()).stop_reason

    assert run(2, None) is None
    # Best at epoch 1 (read back from the logs), so epoch 4 is the third without improvement.
    assert run(10, 2) == "early stopping after epoch 4"


def test_user_renderer_sees_start_updates_and_end_of_each_split(tmp_path: Path) -> None:
    recorder = Recorder()
    training(tmp_path, epochs=1).renderer(recorder).launch(learner())
    kinds = [(kind, progress.split) for kind, progress, _ in recorder.calls]
    assert kinds == (
        [("start", Split.Train)]
        + [("update", Split.Train)] * 6
        + [("end", Split.Train)]
        + [("start", Split.Valid)]
        + [("update", Split.Valid)] * 2
        + [("end", Split.Valid)]
    )
    _, last_train, states = recorder.calls[6]
    assert last_train.iteration == 6 and last_train.progress.items_processed == 96
    assert last_train.progress.items_total == 96 and (last_train.epoch, last_train.epoch_total) == (1, 1)
    assert [s.name for s in states] == ["Accuracy", "Loss"]
    assert all(isinstance(s, MetricState) and s.running is not None and s.running.count == 96 for s in states)


def test_metrics_registered_on_both_splits_keep_separate_state(tmp_path: Path) -> None:
    recorder = Recorder()
    training(tmp_path, epochs=1).renderer(recorder).launch(learner())
    first_valid = next(m for k, p, m in recorder.calls if k == "update" and p.split is Split.Valid)
    assert all(s.running is not None and s.running.count == 16 for s in first_valid)


def test_learning_rate_metric_sees_each_steps_rate(tmp_path: Path) -> None:
    train, valid = loaders()
    schedule = LinearLrSchedulerConfig(0.1, 0.01, 10).init()
    (
        SupervisedTraining(tmp_path, train, valid)
        .metric_train_numeric(LearningRateMetric())
        .num_epochs(2)
        .renderer(Recorder())
        .with_plots(False)
        .launch(Learner(tiny_net(TrainB.device()), SgdConfig().init(), schedule))
    )
    logged = [
        e.value
        for epoch in (1, 2)
        for e in log_entries(tmp_path / "train" / f"epoch-{epoch}" / "Learning_Rate.log")
    ]
    # Burn's linear schedule: step k (from 1) gives initial + (final - initial) * min(k - 1, n) / n.
    expected = [0.1 + (0.01 - 0.1) * min(step - 1, 10) / 10 for step in range(1, 13)]
    assert logged == pytest.approx(expected)


def test_gradient_accumulation_sums_the_gradients_of_n_batches(tmp_path: Path) -> None:
    TrainB.seed(5)
    start = tiny_net(TrainB.device(), dropout=0.0)
    train, valid = loaders()
    result = (
        SupervisedTraining(tmp_path, train, valid)
        .grads_accumulation(4)
        .renderer(Recorder())
        .with_plots(False)
        .launch(Learner(start, SgdConfig().init(), 0.05))
    )
    # By hand: 6 batches, steps after batches 4 and 6 (the last two are not dropped).
    model, sgd = start, SgdConfig().init()
    batches, _ = loaders()
    pending: list[GradientsParams] = []
    for i, batch in enumerate(batches, 1):
        pending.append(GradientsParams.from_grads(model.classify(batch).loss.backward(), model))
        if i in (4, 6):
            total = GradientsParams()
            for param in model.parameters():
                grads = [g for g in (p.get(param.id) for p in pending) if g is not None]
                total.register(param.id, sum(grads[1:], grads[0]))
            model, pending = sgd.step(0.05, model, total), []
    for path, value in weights(model.valid()).items():
        np.testing.assert_allclose(weights(result.model)[path], value, rtol=1e-6, atol=1e-7)


def test_interrupter_stops_after_the_step_and_writes_a_checkpoint(tmp_path: Path) -> None:
    interrupter = Interrupter()

    class StopAtThree(Recorder):
        def update(self, progress: TrainingProgress, metrics: Sequence[MetricState]) -> None:
            super().update(progress, metrics)
            if progress.split is Split.Train and progress.epoch == 2 and progress.iteration == 3:
                interrupter.stop("enough")

    result = (
        training(tmp_path, epochs=5).renderer(StopAtThree()).with_interrupter(interrupter).launch(learner())
    )
    assert result.stop_reason == "interrupted (enough)"
    state = json.loads((tmp_path / "checkpoint" / "training-2.json").read_text())
    assert (state["epoch"], state["complete"], state["iteration"]) == (2, False, 3)
    assert not (tmp_path / "valid" / "epoch-2").exists()
    assert len(log_entries(tmp_path / "train" / "epoch-2" / "Loss.log")) == 3
    # The checkpoint holds the model returned.
    saved = tiny_net(NdArray.device()).load_file(
        tmp_path / "checkpoint" / "model-2", DefaultRecorder(), NdArray.device()
    )
    for path, value in weights(result.model).items():
        np.testing.assert_array_equal(weights(saved)[path], value)


def test_resuming_from_a_mid_epoch_checkpoint_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    interrupter = Interrupter()
    interrupter.stop("at once")
    training(tmp_path, epochs=3).with_interrupter(interrupter).launch(learner())
    result = training(tmp_path, epochs=2).checkpoint(1).launch(learner())
    assert result.stop_reason is None
    assert (
        "written after iteration 1, before the epoch ended; training resumes at epoch 2"
        in capsys.readouterr().err
    )


def test_a_nan_loss_stops_training_naming_epoch_and_iteration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = items(64, seed=4)
    data[40] = type(data[40])(np.full(4, np.nan, dtype=np.float32), 0)  # in batch 3 (items 32 to 47)
    train = DataLoaderBuilder(ItemBatcher(TrainB.device())).batch_size(16).build(InMemDataset(data))
    valid = (
        DataLoaderBuilder(ItemBatcher(NdArray.device())).batch_size(16).build(InMemDataset(items(16, seed=5)))
    )
    start = learner()
    before = weights(start.model)
    result = (
        SupervisedTraining(tmp_path, train, valid)
        .metrics(LossMetric())
        .num_epochs(3)
        .renderer(Recorder())
        .with_plots(False)
        .launch(Learner(start.model, SgdConfig().init(), 0.0))  # lr 0: the weights stay finite and known
    )
    assert result.stop_reason == "the training loss is nan at epoch 1, iteration 3"
    assert "training loss is nan at epoch 1, iteration 3" in capsys.readouterr().err
    assert all(np.isfinite(v).all() for v in weights(result.model).values())
    for path, value in before.items():
        np.testing.assert_array_equal(weights(result.model)[path], value)
    assert len(log_entries(tmp_path / "train" / "epoch-1" / "Loss.log")) == 2


@pytest.mark.parametrize("missing", ["train_step", "inference_step"])
def test_a_model_without_a_step_is_refused_at_launch(tmp_path: Path, missing: str) -> None:
    model = learner().model

    class Proxy:
        """The model minus one method."""

        def __getattr__(self, name: str) -> Any:
            if name == missing:
                raise AttributeError(name)
            return getattr(model, name)

    plain = Learner(model, SgdConfig().init(), 0.1)
    plain.model = Proxy()  # type: ignore[assignment]
    with pytest.raises(TypeError, match=rf"Proxy has no {missing}\(batch\) method"):
        training(tmp_path).launch(plain)
    assert not (tmp_path / "experiment.log").exists()


def test_a_model_on_a_plain_backend_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match=r"on an autodiff backend .* found NdArray"):
        # mypy refuses it too (ferrum.mypy): the ignore is the static check.
        training(tmp_path).launch(Learner(tiny_net(NdArray.device()), SgdConfig().init(), 0.1))  # type: ignore[misc, arg-type]


@pytest.mark.parametrize("which", ["train", "valid"])
def test_an_empty_loader_is_refused(tmp_path: Path, which: str) -> None:
    train, valid = loaders()
    empty_train = DataLoaderBuilder(ItemBatcher(TrainB.device())).build(InMemDataset[Any]([]))
    empty_valid = DataLoaderBuilder(ItemBatcher(NdArray.device())).build(InMemDataset[Any]([]))
    builder = (
        SupervisedTraining(tmp_path, empty_train, valid)
        if which == "train"
        else SupervisedTraining(tmp_path, train, empty_valid)
    )
    with pytest.raises(ValueError, match=rf"dataloader_{which} is empty \(0 items\)"):
        builder.launch(learner())


def test_an_artifact_directory_that_cannot_be_written_is_named(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(OSError, match=rf"the artifact directory {blocker / 'run'} cannot be written"):
        training(blocker / "run").launch(learner())


symlinks = pytest.mark.skipif(sys.platform == "win32", reason="planting links needs privileges on Windows")


def victims(tmp_path: Path) -> tuple[Path, Path]:
    """A file and a folder outside the artifact directory, which planted links lead to."""
    file, folder = tmp_path / "victim.txt", tmp_path / "victim-folder"
    file.write_text("precious")
    (folder / "epoch-1").mkdir(parents=True)
    (folder / "epoch-1" / "Loss.log").write_text("precious")
    return file, folder


def untouched(file: Path, folder: Path) -> bool:
    return file.read_text() == "precious" and sorted(p.name for p in folder.rglob("*")) == [
        "Loss.log",
        "epoch-1",
    ]


@symlinks
def test_links_planted_in_the_artifact_directory_are_not_followed(tmp_path: Path) -> None:
    file, folder = victims(tmp_path)
    run = tmp_path / "run"
    (run / "train").mkdir(parents=True)
    (run / "checkpoint").mkdir()
    for name in (
        f".ferrum-write-check-{os.getpid()}",
        "summary.txt",
        "summary.txt.part",
        "checkpoint/training-1.json",
        "checkpoint/training-1.json.part",
    ):
        (run / name).symlink_to(file)
    (run / "train" / "epoch-2").symlink_to(folder)  # a folder this run's logs replace
    training(run).summary().launch(learner())
    assert untouched(file, folder)
    assert (run / "train" / "epoch-2" / "Loss.log").is_file() and not (run / "train" / "epoch-2").is_symlink()
    assert not (run / "summary.txt").is_symlink()
    assert not (run / f".ferrum-write-check-{os.getpid()}").exists()
    assert json.loads((run / "checkpoint" / "training-1.json").read_text())["epoch"] == 1


@symlinks
def test_a_link_planted_as_experiment_log_is_refused(tmp_path: Path) -> None:
    file, folder = victims(tmp_path)
    (tmp_path / "run").mkdir()
    log = tmp_path / "run" / "experiment.log"
    log.symlink_to(file)
    with pytest.raises(OSError, match=rf"refusing to write through a symbolic link: {log}$"):
        training(tmp_path / "run").launch(learner())
    assert untouched(file, folder)


@symlinks
def test_old_logs_are_never_deleted_through_a_linked_split_folder(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    file, folder = victims(tmp_path)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "valid").symlink_to(folder)
    with caplog.at_level(logging.WARNING, logger="ferrum.train"):
        _remove_logs_from(tmp_path / "run", 1)
    assert untouched(file, folder)
    assert f"{tmp_path / 'run' / 'valid'} is a symbolic link" in caplog.text


def test_bad_settings_name_the_setting(tmp_path: Path) -> None:
    train, valid = loaders()
    builder = SupervisedTraining(tmp_path, train, valid)
    with pytest.raises(ValueError, match="num_epochs must be an int >= 1, found 0"):
        builder.num_epochs(0)
    with pytest.raises(ValueError, match="grads_accumulation must be an int >= 1, found -2"):
        builder.grads_accumulation(-2)
    with pytest.raises(TypeError, match="must be a DataLoader"):
        SupervisedTraining(tmp_path, [1, 2], valid)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="a renderer has start, update and end methods, found str"):
        builder.renderer("bar")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="train metric 'Loss' is registered twice"):
        builder.metric_train(LossMetric()).metric_train(LossMetric())
    with pytest.raises(TypeError, match=r"metric 'Stats' .* is not numeric"):
        builder.metric_valid_numeric(NotNumeric())


def test_a_fresh_run_replaces_the_logs_of_an_older_one(tmp_path: Path) -> None:
    training(tmp_path, epochs=3).launch(learner())
    result = training(tmp_path, epochs=1).launch(learner())
    assert sorted(p.name for p in (tmp_path / "train").iterdir()) == ["epoch-1"]
    assert result.summary.epochs == 1


def test_a_metric_that_cannot_read_the_output_names_both(tmp_path: Path) -> None:
    from ferrum.train.metric import HammingScore

    with pytest.raises(TypeError, match=r"HammingScore|Hamming Score") as info:
        # mypy refuses it too (ferrum.mypy reads the metric's input type): the ignore is the static check.
        training(tmp_path).metric_train(HammingScore()).launch(learner())  # type: ignore[arg-type]
    assert "ClassificationOutput" in str(info.value)


def test_the_summary_is_printed_when_asked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    training(tmp_path, epochs=1).launch(learner())
    assert "Learner Summary" not in capsys.readouterr().out
    assert not (tmp_path / "summary.txt").exists()
    result = training(tmp_path, epochs=1).summary().launch(learner())
    printed = capsys.readouterr().out
    assert "Learner Summary" in printed and "| Valid | Loss     |" in printed
    assert math.isfinite(result.summary.metric("Accuracy", Split.Train).last)
    assert "TinyNet" in printed  # the model's description, as Burn prints it


def test_the_result_model_is_a_module_on_the_inner_backend(tmp_path: Path) -> None:
    result = training(tmp_path, epochs=1).launch(learner())
    out = result.model.forward(Tensor.ones((2, 4), NdArray.device()))
    assert out.dims() == (2, 3) and not out.device().is_autodiff
    assert isinstance(result.model.inference_step(next(iter(loaders()[1]))).loss, Tensor)


def test_an_error_in_a_step_propagates_and_the_logs_are_closed(tmp_path: Path) -> None:
    class Failing(Recorder):
        def update(self, progress: TrainingProgress, metrics: Sequence[MetricState]) -> None:
            super().update(progress, metrics)
            if progress.iteration == 3:
                raise RuntimeError("renderer broke")

    with pytest.raises(RuntimeError, match="renderer broke"):
        training(tmp_path).renderer(Failing()).launch(learner())
    assert len(log_entries(tmp_path / "train" / "epoch-1" / "Loss.log")) == 3


@pytest.mark.parametrize("workers", [0, 2])
def test_the_guide_cnn_resumes_bit_for_bit(
    tmp_path: Path, workers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The real model: convolutions, dropout, threaded kernels, on 512 MNIST digits.
    from ferrum.data.dataset import PartialDataset
    from ferrum.data.dataset.vision import MnistDataset
    from ferrum.optim import AdamConfig

    from examples.guide.data import MnistBatcher
    from examples.guide.model import ModelConfig

    def run(directory: Path, epochs: int, checkpoint: int | None, seed: int) -> dict[str, Any]:
        train = (
            DataLoaderBuilder(MnistBatcher(TrainB.device()))
            .batch_size(64)
            .shuffle(5)
            .num_workers(workers)
            .build(PartialDataset(MnistDataset.sample("train"), 0, 512))
        )
        valid = (
            DataLoaderBuilder(MnistBatcher(NdArray.device()))
            .batch_size(256)
            .build(MnistDataset.sample("test"))
        )
        builder = (
            SupervisedTraining(directory, train, valid)
            .metrics(LossMetric())
            .with_file_checkpointer(DefaultRecorder())
            .num_epochs(epochs)
            .renderer(Recorder())
            .with_plots(False)
        )
        if checkpoint is not None:
            builder = builder.checkpoint(checkpoint)
        TrainB.seed(seed)
        model = ModelConfig(10, 64).init(TrainB.device())
        return weights(builder.launch(Learner(model, AdamConfig().init(), 1e-3)).model)

    straight = run(tmp_path / "straight", 3, None, seed=1)
    run(tmp_path / "split", 1, None, seed=1)
    resumed = run(tmp_path / "split", 3, 1, seed=2)
    for path, value in straight.items():
        np.testing.assert_array_equal(resumed[path], value, err_msg=path)


def test_a_user_metric_logger_replaces_the_files_and_the_log_can_be_off(tmp_path: Path) -> None:
    from ferrum.train import InMemoryMetricLogger

    memory = InMemoryMetricLogger()
    result = (
        training(tmp_path, epochs=2)
        .with_metric_logger(memory)
        .with_application_logger(False)
        .launch(learner())
    )
    assert not (tmp_path / "train").exists() and not (tmp_path / "experiment.log").exists()
    assert len(memory.values[("Loss", Split.Train, 2)]) == 6
    assert [e for e, _ in result.summary.metric("Loss", Split.Valid).entries] == [1, 2]


class DeviceBatcher(Batcher[Item, Batch[Any]]):
    """Burn 0.20's batcher form: the loader passes the device to each call."""

    def __init__(self) -> None:
        self.devices: set[Device[Any]] = set()

    def batch(self, items: list[Item], device: Device[Any]) -> Batch[Any]:
        self.devices.add(device)
        x: Tensor[Any, D2] = Tensor.from_numpy(np.stack([item.x for item in items]), device)
        return Batch(x, Tensor.from_data([item.label for item in items], device))


def test_loaders_of_device_batchers_follow_the_model(tmp_path: Path) -> None:
    # Built without set_device: the Learner moves them, training batches to the model's
    # autodiff device and validation batches to its inner device, as Burn's Learner does.
    train_batcher, valid_batcher = DeviceBatcher(), DeviceBatcher()
    train = DataLoaderBuilder(train_batcher).batch_size(16).build(InMemDataset(items(32, seed=1)))
    valid = DataLoaderBuilder(valid_batcher).batch_size(16).build(InMemDataset(items(16, seed=2)))
    run = (
        SupervisedTraining(tmp_path, train, valid)
        .metrics(LossMetric())
        .num_epochs(1)
        .renderer(PlainRenderer(interval=3600.0, stream=io.StringIO()))
        .with_plots(False)
    )
    result = run.launch(learner())
    assert result.stop_reason is None
    assert train_batcher.devices == {TrainB.device()}
    assert valid_batcher.devices == {NdArray.device()}
