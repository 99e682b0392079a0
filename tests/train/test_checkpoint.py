"""Checkpointing strategies (Burn's own test cases), file checkpointers and the training state file."""

from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path

import numpy as np
import pytest
from ferrum import ArgumentError, Distribution, Tensor
from ferrum.backend import NdArray
from ferrum.record import BinFileRecorder, DefaultRecorder, FullPrecisionSettings
from ferrum.train import (
    Aggregate,
    CheckpointingAction,
    ComposedCheckpointingStrategy,
    Direction,
    FileCheckpointer,
    KeepLastNCheckpoints,
    MetricCheckpointingStrategy,
    MetricStore,
    Split,
)
from ferrum.train.checkpoint import LearningCheckpointer, TrainingState
from ferrum.train.checkpoint.state import write_atomically
from ferrum.train.metric import NumericEntry

from tests.support.train_setup import learner

Save = CheckpointingAction.Save()
Delete = CheckpointingAction.Delete


def test_keep_last_n_deletes_the_epoch_n_back() -> None:
    strategy, store = KeepLastNCheckpoints(2), MetricStore([])
    assert strategy.checkpointing(1, store) == [Save]
    assert strategy.checkpointing(2, store) == [Save]
    assert strategy.checkpointing(3, store) == [Save, Delete(1)]


def test_metric_strategy_always_keeps_the_best_epoch() -> None:
    # Burn's always_keep_the_best_epoch: train loss means 0.75, 0.4, 2.0.
    strategy = MetricCheckpointingStrategy("Loss", Aggregate.Mean, Direction.Lowest, Split.Train)
    store = MetricStore([])
    for epoch, points in enumerate([(1.0, 0.5), (0.5, 0.3), (1.0, 3.0)], start=1):
        for point in points:
            store.add("Loss", epoch, Split.Train, NumericEntry(point))
        if epoch == 1:
            assert strategy.checkpointing(epoch, store) == [Save]
        elif epoch == 2:
            assert strategy.checkpointing(epoch, store) == [Delete(1), Save]
        else:
            assert strategy.checkpointing(epoch, store) == []


def test_metric_strategy_saves_when_the_metric_is_missing() -> None:
    strategy = MetricCheckpointingStrategy("Loss", Aggregate.Mean, Direction.Highest, Split.Valid)
    assert strategy.checkpointing(1, MetricStore([])) == [Save]


def test_composed_deletes_only_what_every_strategy_gave_up() -> None:
    # Burn's should_delete_when_both_deletes.
    strategy = (
        ComposedCheckpointingStrategy.builder()
        .add(KeepLastNCheckpoints(1))
        .add(KeepLastNCheckpoints(2))
        .build()
    )
    store = MetricStore([])
    assert strategy.checkpointing(1, store) == [Save]
    assert strategy.checkpointing(2, store) == [Save]
    assert strategy.checkpointing(3, store) == [Save, Delete(1)]


def test_composed_keeps_the_best_beside_the_last_two() -> None:
    strategy = ComposedCheckpointingStrategy(
        KeepLastNCheckpoints(2),
        MetricCheckpointingStrategy("Loss", Aggregate.Mean, Direction.Lowest, Split.Valid),
    )
    store = MetricStore([])
    actions = []
    for epoch, loss in enumerate([0.5, 0.9, 0.8, 0.7, 0.4, 0.6], start=1):
        store.add("Loss", epoch, Split.Valid, NumericEntry(loss))
        actions.append(strategy.checkpointing(epoch, store))
    # Epoch 1, the best, outlives the last two until epoch 5 beats it; 2, 3 and 4 go as they age out.
    assert actions == [
        [Save],
        [Save],
        [Save],
        [Save, Delete(2)],
        [Save, Delete(3), Delete(1)],
        [Save, Delete(4)],
    ]


def test_strategies_reject_bad_arguments() -> None:
    with pytest.raises(ValueError, match="num_keep must be an int >= 1, found 0"):
        KeepLastNCheckpoints(0)
    with pytest.raises(TypeError, match=r"takes strategies .* found int"):
        ComposedCheckpointingStrategy(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"expected a metric .* found float"):
        MetricCheckpointingStrategy(1.5, Aggregate.Mean, Direction.Lowest, Split.Valid)


@pytest.mark.parametrize("recorder", [DefaultRecorder(), BinFileRecorder(FullPrecisionSettings)])
def test_learning_checkpointer_round_trips_model_optimizer_and_schedule(
    tmp_path: Path, recorder: object
) -> None:
    from ferrum.lr_scheduler import ExponentialLrSchedulerConfig
    from ferrum.optim import AdamConfig, GradientsParams
    from ferrum.train import Learner

    trained = learner()
    trained = Learner(trained.model, AdamConfig().init(), ExponentialLrSchedulerConfig(0.5, 0.9).init())
    loss = trained.model.forward(Tensor.ones((2, 4), trained.model.devices()[0])).sum()
    trained.lr_step()
    trained.lr_step()
    trained.optimizer_step(GradientsParams.from_grads(loss.backward(), trained.model))
    assert isinstance(recorder, (DefaultRecorder, BinFileRecorder))
    checkpointer = LearningCheckpointer(recorder, tmp_path, KeepLastNCheckpoints(1))
    state = TrainingState.capture(epoch=4, complete=True, iteration=6, loader_epochs={"train": 4})
    checkpointer.save(trained, 4, state)

    fresh = learner(seed=77)
    fresh = Learner(fresh.model, AdamConfig().init(), ExponentialLrSchedulerConfig(0.5, 0.9).init())
    assert checkpointer.load(fresh, 4) == state
    for (path, a), (_, b) in zip(
        trained.model.named_parameters(), fresh.model.named_parameters(), strict=True
    ):
        assert a.id == b.id, path
        np.testing.assert_array_equal(a.val().to_numpy(), b.val().to_numpy())
    assert fresh.optimizer.to_record().keys() == trained.optimizer.to_record().keys()
    fresh.lr_step()
    trained.lr_step()
    assert fresh.lr_current() == trained.lr_current()


def test_file_checkpointer_names_and_deletes_files(tmp_path: Path) -> None:
    checkpointer = FileCheckpointer(DefaultRecorder(), tmp_path / "checkpoint", "scheduler")
    checkpointer.save(2, {"remaining_iters": 3})
    assert checkpointer.file(2) == tmp_path / "checkpoint" / "scheduler-2.mpk"
    assert checkpointer.restore(2, NdArray.device()) == {"remaining_iters": 3}
    checkpointer.delete(2)
    checkpointer.delete(2)  # already gone: fine
    with pytest.raises(FileNotFoundError, match=r"scheduler-2\.mpk"):
        checkpointer.restore(2, NdArray.device())
    with pytest.raises(TypeError, match="needs a FileRecorder"):
        FileCheckpointer("mpk", tmp_path, "model")  # type: ignore[arg-type]


def test_training_state_restores_every_generator() -> None:
    NdArray.seed(1)
    random.seed(2)
    np.random.seed(3)
    state = TrainingState.capture(epoch=1, complete=True, iteration=5, loader_epochs={"train": 1, "valid": 1})

    def draws() -> tuple[list[float], float, float]:
        engine = Tensor.random((4,), Distribution.Default, NdArray.device()).to_data().to_list()
        return engine, random.random(), float(np.random.random())

    first = draws()
    NdArray.seed(10)
    random.seed(20)
    np.random.seed(30)
    restored = TrainingState.from_json(state.to_json(), "state.json")
    restored.restore_random()
    assert draws() == first


def test_training_state_file_is_checked_field_by_field() -> None:
    good = json.loads(TrainingState.capture(epoch=2, complete=False, iteration=3, loader_epochs={}).to_json())

    def broken(**changes: object) -> str:
        data = dict(good)
        for key, value in changes.items():
            if value is None:
                del data[key]
            else:
                data[key] = value
        return json.dumps(data)

    cases = [
        ("{", "invalid JSON"),
        ("[]", "a JSON object, found list"),
        (broken(version=9), "expected format 'ferrum-training-state' version 1"),
        (broken(epoch=None), "missing 'epoch'"),
        (broken(epoch=-1), "'epoch' must be >= 0"),
        (broken(complete="yes"), "'complete' must be a bool"),
        (broken(engine_random="zz"), "'engine_random' must be hex text"),
        (broken(python_random=[3, [1, 2], None]), "not a state of Python's random module"),
        (broken(numpy_random=["PCG64", [], 0, 0, 0.0]), "not a state of NumPy's MT19937 generator"),
        (broken(loader_epochs={"train": -1}), "'loader_epochs' must map loader names to epochs >= 0"),
    ]
    for text, message in cases:
        with pytest.raises(ValueError, match=message):
            TrainingState.from_json(text, "checkpoint/training-2.json")
    with pytest.raises(ValueError, match=r"^checkpoint/training-2.json: "):
        TrainingState.from_json("{", "checkpoint/training-2.json")
    # A state of the wrong length is refused by the engine when restored, not half-applied.
    short = TrainingState.from_json(broken(engine_random="00" * 10), "s.json")
    with pytest.raises(ArgumentError, match="56 bytes"):
        short.restore_random()


@pytest.mark.skipif(sys.platform == "win32", reason="planting symbolic links needs privileges on Windows")
def test_write_atomically_replaces_planted_links_never_their_targets(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    folder = tmp_path / "checkpoint"
    folder.mkdir()
    target = folder / "training-3.json"
    # The old temporary name, the engine's temporary names for this process, and the file itself.
    planted = [folder / "training-3.json.part", target]
    planted += [folder / f".training-3.json.{os.getpid()}.{n}.tmp" for n in range(64)]
    for link in planted:
        link.symlink_to(victim)
    write_atomically(target, '{"epoch": 3}')
    assert victim.read_text() == "precious"
    assert not target.is_symlink() and target.read_text() == '{"epoch": 3}'


def test_write_atomically_names_the_file_it_cannot_write(tmp_path: Path) -> None:
    missing = tmp_path / "missing" / "training-1.json"
    with pytest.raises(FileNotFoundError, match=rf"cannot write {missing}: "):
        write_atomically(missing, "{}")
