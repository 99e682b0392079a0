"""Every metric ferrum.train.metric exports is accepted by ``.metrics()``: copied for the validation split."""

from __future__ import annotations

import copy
import inspect
import io
import math
import pickle
from pathlib import Path
from typing import Any

import ferrum.train.metric as metrics
import pytest
from ferrum.record import DefaultRecorder
from ferrum.train import PlainRenderer, Split, SupervisedTraining
from ferrum.train.metric import AccuracyMetric, CpuMemory, CpuTemperature, CpuUse, NumericEntry
from ferrum.train.processor import SplitMetrics, copy_metric

from tests.support.metric_reference import META
from tests.support.train_setup import learner, loaders

# Constructor arguments of the exported metrics whose constructor needs some.
ARGS: dict[str, tuple[Any, ...]] = {"TopKAccuracyMetric": (2,)}


def exported_metric_classes() -> list[type[Any]]:
    """The concrete classes in ``__all__`` with name(), update() and clear(): what ``.metrics()`` takes."""
    found = []
    for name in metrics.__all__:
        value = getattr(metrics, name)
        if not inspect.isclass(value) or getattr(value, "_is_protocol", False) or inspect.isabstract(value):
            continue
        if all(callable(getattr(value, method, None)) for method in ("name", "update", "clear")):
            found.append(value)
    return found


def construct(cls: type[Any]) -> Any:
    return cls(*ARGS.get(cls.__name__, ()))


def test_the_walk_finds_every_kind_of_metric() -> None:
    names = {cls.__name__ for cls in exported_metric_classes()}
    # A sample of each family, so that a broken walk cannot pass by finding nothing.
    assert {"AccuracyMetric", "LossMetric", "CpuUse", "CpuMemory", "CpuTemperature", "DiceMetric"} <= names
    assert {"WordErrorRate", "CharErrorRate", "LearningRateMetric", "IterationSpeedMetric"} <= names
    assert len(names) >= 17


@pytest.mark.parametrize("cls", exported_metric_classes(), ids=lambda cls: cls.__name__)
def test_every_exported_metric_registers_on_both_splits(cls: type[Any]) -> None:
    metric = construct(cls)
    train, valid = SplitMetrics(Split.Train), SplitMetrics(Split.Valid)
    train.register(metric, numeric=False)
    copied = copy_metric(metric)
    valid.register(copied, numeric=False)
    assert copied is not metric and type(copied) is cls
    assert copied.name() == metric.name()
    assert train.names() == valid.names() == [metric.name()]


def test_metrics_takes_every_exported_metric_at_once(tmp_path: Path) -> None:
    train, valid = loaders()
    every = [construct(cls) for cls in exported_metric_classes()]
    SupervisedTraining(tmp_path, train, valid).metrics(*every)  # raised for the system metrics


@pytest.mark.parametrize("cls", [CpuUse, CpuMemory, CpuTemperature])
def test_a_copied_system_metric_reads_the_system(cls: type[CpuUse | CpuMemory | CpuTemperature]) -> None:
    metric = cls()
    for copied in (copy.deepcopy(metric), pickle.loads(pickle.dumps(metric))):
        assert copied._psutil is metric._psutil
        copied.clear()
        value = copied.update(None, META)
        assert value.name == metric.name()
        reading = copied.value().value
        # A machine without a CPU sensor reads NaN (°C); the others read a non-negative number.
        assert math.isnan(reading) or reading >= 0.0


def test_training_with_the_system_metrics(tmp_path: Path) -> None:
    train, valid = loaders()
    out = io.StringIO()
    result = (
        SupervisedTraining(tmp_path, train, valid)
        .metrics(AccuracyMetric(), CpuUse(), CpuMemory(), CpuTemperature())
        .with_file_checkpointer(DefaultRecorder())
        .num_epochs(1)
        .renderer(PlainRenderer(interval=3600.0, stream=out))
        .with_plots(False)
        .launch(learner())
    )
    assert result.stop_reason is None
    import psutil

    total_gb = psutil.virtual_memory().total / 1e9

    def logged(split: str, name: str) -> list[float]:
        path = tmp_path / split / "epoch-1" / f"{name.replace(' ', '_')}.log"  # the logger's file name
        return [NumericEntry.deserialize(line).value for line in path.read_text().splitlines()]

    for split, batches in (("train", 6), ("valid", 2)):  # 96 and 32 items in batches of 16
        for name in ("Accuracy", "CPU Usage", "CPU Memory", "CPU Temperature"):
            assert len(logged(split, name)) == batches, (split, name)
        assert all(0.0 <= value <= 100.0 for value in logged(split, "CPU Usage"))
        assert all(0.0 < value <= total_gb for value in logged(split, "CPU Memory"))
