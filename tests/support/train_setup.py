"""A tiny classifier, its data and a Learner run, shared by the Learner tests in tests/train/.

The model has dropout, so that a run draws from the engine's generator
every step (what a bit-exact resume has to restore).
"""

from __future__ import annotations

import io
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import numpy as np
import numpy.typing as npt
from ferrum import D1, D2, Device, Int, Tensor
from ferrum.backend import Autodiff, Backend, NdArray
from ferrum.data.dataloader import Batcher, DataLoader, DataLoaderBuilder
from ferrum.data.dataset import InMemDataset
from ferrum.module import Module
from ferrum.nn import Dropout, DropoutConfig, Linear, LinearConfig, Relu
from ferrum.nn.loss import CrossEntropyLossConfig
from ferrum.optim import AdamConfig
from ferrum.record import DefaultRecorder
from ferrum.train import (
    ClassificationOutput,
    Interrupter,
    Learner,
    MetricState,
    PlainRenderer,
    SupervisedTraining,
    TrainingProgress,
    TrainOutput,
)
from ferrum.train.metric import AccuracyMetric, LossMetric

B = TypeVar("B", bound=Backend)
I = TypeVar("I", bound=Backend)  # noqa: E741 - Burn's name for the inner backend
TrainB = Autodiff[NdArray]

FEATURES = 4
CLASSES = 3


@dataclass(frozen=True)
class Item:
    x: npt.NDArray[np.float32]
    label: int


@dataclass
class Batch(Generic[B]):
    x: Tensor[B, D2]
    targets: Tensor[B, D1, Int]


class ItemBatcher(Batcher[Item, Batch[B]]):
    def __init__(self, device: Device[B]) -> None:
        self.device = device

    def batch(self, items: list[Item]) -> Batch[B]:
        x: Tensor[B, D2] = Tensor.from_numpy(np.stack([item.x for item in items]), self.device)
        targets: Tensor[B, D1, Int] = Tensor.from_data([item.label for item in items], self.device)
        return Batch(x, targets)


class TinyNet(Module[B]):
    fc1: Linear[B]
    dropout: Dropout
    fc2: Linear[B]
    relu: Relu

    def forward(self, x: Tensor[B, D2]) -> Tensor[B, D2]:
        return self.fc2.forward(self.dropout.forward(self.relu.forward(self.fc1.forward(x))))

    def classify(self, batch: Batch[B]) -> ClassificationOutput[B]:
        output = self.forward(batch.x)
        loss = CrossEntropyLossConfig().init(output.device()).forward(output, batch.targets)
        return ClassificationOutput(loss, output, batch.targets)

    def train_step(
        self: TinyNet[Autodiff[I]], batch: Batch[Autodiff[I]]
    ) -> TrainOutput[ClassificationOutput[Autodiff[I]]]:
        item = self.classify(batch)
        return TrainOutput(self, item.loss.backward(), item)

    def inference_step(self, batch: Batch[B]) -> ClassificationOutput[B]:
        return self.classify(batch)


def tiny_net(device: Device[B], dropout: float = 0.3) -> TinyNet[B]:
    return TinyNet(
        LinearConfig(FEATURES, 16).init(device),
        DropoutConfig(dropout).init(),
        LinearConfig(16, CLASSES).init(device),
        Relu(),
    )


def items(n: int, seed: int) -> list[Item]:
    """Three Gaussian blobs: learnable, not trivially."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, CLASSES, n)
    centres = np.array([[1.0, 0.0, -1.0, 0.5], [-1.0, 1.0, 0.0, -0.5], [0.0, -1.0, 1.0, 0.0]])
    x = centres[labels] + rng.normal(0.0, 0.8, (n, FEATURES))
    return [Item(row.astype(np.float32), int(label)) for row, label in zip(x, labels, strict=True)]


def loaders(
    *, workers: int = 0, n_train: int = 96, n_valid: int = 32, batch_size: int = 16
) -> tuple[DataLoader[Batch[TrainB]], DataLoader[Batch[NdArray]]]:
    train = (
        DataLoaderBuilder(ItemBatcher(TrainB.device()))
        .batch_size(batch_size)
        .shuffle(7)
        .num_workers(workers)
        .build(InMemDataset(items(n_train, seed=1)))
    )
    valid = (
        DataLoaderBuilder(ItemBatcher(NdArray.device()))
        .batch_size(batch_size)
        .num_workers(workers)
        .build(InMemDataset(items(n_valid, seed=2)))
    )
    return train, valid


def training(
    directory: Path, *, workers: int = 0, epochs: int = 2, out: io.StringIO | None = None
) -> SupervisedTraining[Batch[TrainB], Batch[NdArray]]:
    """2 epochs of the tiny net with loss and accuracy, full-precision checkpoints, plain lines, no plots."""
    train, valid = loaders(workers=workers)
    return (
        SupervisedTraining(directory, train, valid)
        .metrics(AccuracyMetric(), LossMetric())
        .with_file_checkpointer(DefaultRecorder())
        .num_epochs(epochs)
        .renderer(PlainRenderer(interval=3600.0, stream=out or io.StringIO()))
        .with_plots(False)
    )


def learner(seed: int = 3, lr: float = 1e-2) -> Learner[TinyNet[TrainB]]:
    TrainB.seed(seed)
    return Learner(tiny_net(TrainB.device()), AdamConfig().init(), lr)


def weights(model: Module[Any]) -> dict[str, npt.NDArray[Any]]:
    return {path: np.array(param.val().to_numpy()) for path, param in model.named_parameters()}


class Recorder:
    """A renderer that keeps every call: ``("start" | "update" | "end", progress, metric states)``."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, TrainingProgress, Sequence[MetricState]]] = []

    def start(self, progress: TrainingProgress) -> None:
        self.calls.append(("start", progress, ()))

    def update(self, progress: TrainingProgress, metrics: Sequence[MetricState]) -> None:
        self.calls.append(("update", progress, metrics))

    def end(self, progress: TrainingProgress) -> None:
        self.calls.append(("end", progress, ()))


class StepAnnouncer(Recorder):
    """A renderer for the signal tests' child processes: prints ``step <epoch> <iteration>`` at each
    training step, and at step ``wait_at`` holds until ``interrupter`` is told to stop (60 s at most,
    whatever the machine's load), then ``after`` seconds more."""

    def __init__(self, interrupter: Interrupter, wait_at: str, after: float = 0.0) -> None:
        super().__init__()
        self.interrupter, self.wait_at, self.after = interrupter, wait_at, after

    def update(self, progress: TrainingProgress, metrics: Sequence[MetricState]) -> None:
        if progress.split.value == "train":
            step = f"step {progress.epoch} {progress.iteration}"
            print(step, flush=True)
            if step == self.wait_at:
                deadline = time.monotonic() + 60
                while not self.interrupter.should_stop() and time.monotonic() < deadline:
                    time.sleep(0.01)
                time.sleep(self.after)
