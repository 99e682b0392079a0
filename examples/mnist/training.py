"""training.rs: the datasets of transform combinations, the Learner, and one evaluation per combination.

As Burn's example: the training digits are cut in two (Burn: 55,000 train
and 5,000 validate), the training set is every combination of the four
transforms with ``samples_per_transform`` digits drawn per transform it
holds (so ``Sr Sc Rot Tr`` is four times as large as ``Tr``, and the plain
digits get none), the validation set and each test evaluation cover every
digit once per combination. AdamW with cautious weight decay, a composed
learning-rate schedule (cosine, warm-up, linear decay) and early stopping
on the validation loss.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence
from dataclasses import dataclass

from ferrum import config
from ferrum.backend import Autodiff, NdArray
from ferrum.data.dataloader import DataLoaderBuilder
from ferrum.data.dataset import ComposedDataset, Dataset, MapperDataset, SamplerDataset
from ferrum.data.dataset.vision import MnistItem
from ferrum.lr_scheduler import (
    ComposedLrSchedulerConfig,
    CosineAnnealingLrSchedulerConfig,
    LinearLrSchedulerConfig,
)
from ferrum.optim import AdamWConfig
from ferrum.record import CompactRecorder
from ferrum.train import (
    EvaluationSummary,
    EvaluatorBuilder,
    Learner,
    LearningResult,
    SupervisedTraining,
)
from ferrum.train.metric import AccuracyMetric, LearningRateMetric, LossMetric

from ..common.training import stop_when_valid_loss_stalls
from ..guide.training import create_artifact_dir
from .data import MnistBatcher, MnistItemPrepared, MnistMapper, Transform
from .model import Model, ModelConfig

TrainB = Autodiff[NdArray]

# Burn's schedule is written for its run: 5 epochs of 1,250 steps. Here each length is scaled by
# this run's number of steps over those, so that the schedule has the same shape on any data.
BURN_STEPS = 6250


@config
class MnistTrainingConfig:
    optimizer: AdamWConfig
    model: ModelConfig
    num_epochs: int = 5
    batch_size: int = 256
    num_workers: int = 2
    seed: int = 42
    samples_per_transform: int = 10_000
    patience: int = 5  # epochs without a lower validation loss before stopping


@dataclass(frozen=True)
class DatasetIdent:
    """A combination of transforms; no transform is ``Plain``, all four ``All``, else their short names."""

    transforms: tuple[Transform, ...]

    def __str__(self) -> str:
        if not self.transforms:
            return "Plain"
        if len(self.transforms) == len(Transform):
            return "All"
        return " ".join(str(t) for t in self.transforms)

    def prepare(self, dataset: Dataset[MnistItem], seed: int | None) -> Dataset[MnistItemPrepared]:
        return MapperDataset(dataset, MnistMapper(self.transforms, seed))

    @staticmethod
    def compose(
        idents: Sequence[tuple[DatasetIdent, int | None]], dataset: Dataset[MnistItem], seed: int
    ) -> Dataset[MnistItemPrepared]:
        """Each combination's prepared digits: ``size`` drawn with replacement, or all of them once."""
        parts: list[Dataset[MnistItemPrepared]] = []
        for i, (ident, size) in enumerate(idents):
            prepared = ident.prepare(dataset, seed + i)
            if size is None:
                parts.append(SamplerDataset.without_replacement(prepared, prepared.len(), seed=seed + i))
            else:
                parts.append(SamplerDataset.with_replacement(prepared, size, seed=seed + i))
        return ComposedDataset(parts)


def generate_idents(num_samples_base: int | None) -> list[tuple[DatasetIdent, int | None]]:
    """The 16 combinations of (Shear, Scale, Rotation, Translate), each with its sample count
    (``num_samples_base`` times its number of transforms; ``None``: the whole dataset)."""
    idents: list[tuple[DatasetIdent, int | None]] = []
    order = (Transform.Shear, Transform.Scale, Transform.Rotation, Transform.Translate)
    for chosen in itertools.product((False, True), repeat=4):
        transforms = tuple(t for t, on in zip(order, chosen, strict=True) if on)
        size = None if num_samples_base is None else num_samples_base * len(transforms)
        idents.append((DatasetIdent(transforms), size))
    return idents


@dataclass(frozen=True)
class MnistRun:
    result: LearningResult[Model[NdArray]]
    evaluations: list[EvaluationSummary]


def run(
    artifact_dir: str,
    cfg: MnistTrainingConfig,
    train_plain: Dataset[MnistItem],
    valid_plain: Dataset[MnistItem],
    test_plain: Dataset[MnistItem],
) -> MnistRun:
    """Train, evaluate every combination of transforms on ``test_plain``, save the model and config."""
    create_artifact_dir(artifact_dir)
    device = TrainB.device()
    TrainB.seed(cfg.seed)
    model = cfg.model.init(device)

    dataset_train = DatasetIdent.compose(generate_idents(cfg.samples_per_transform), train_plain, cfg.seed)
    dataset_valid = DatasetIdent.compose(generate_idents(None), valid_plain, cfg.seed + 100)
    dataloader_train = (
        DataLoaderBuilder(MnistBatcher())
        .batch_size(cfg.batch_size)
        .shuffle(cfg.seed)
        .num_workers(cfg.num_workers)
        .build(dataset_train)
    )
    dataloader_valid = (
        DataLoaderBuilder(MnistBatcher())
        .batch_size(cfg.batch_size)
        .shuffle(cfg.seed)
        .num_workers(cfg.num_workers)
        .build(dataset_valid)
    )

    scale = len(dataloader_train) * cfg.num_epochs / BURN_STEPS
    lr_scheduler = (
        ComposedLrSchedulerConfig()
        .cosine(CosineAnnealingLrSchedulerConfig(1.0, max(1, round(2000 * scale))))
        .linear(LinearLrSchedulerConfig(1.0e-8, 1.0, max(1, round(2000 * scale))))  # warm-up
        .linear(LinearLrSchedulerConfig(1.0e-2, 1.0e-6, max(1, round(10_000 * scale))))
    )
    training = (
        SupervisedTraining(artifact_dir, dataloader_train, dataloader_valid)
        .metrics(AccuracyMetric(), LossMetric())
        .metric_train_numeric(LearningRateMetric())
        .with_file_checkpointer(CompactRecorder())
        .early_stopping(stop_when_valid_loss_stalls(cfg.patience))
        .num_epochs(cfg.num_epochs)
        .summary()
    )
    result = training.launch(Learner(model, cfg.optimizer.init(), lr_scheduler.init()))

    evaluations = []
    for i, (ident, _) in enumerate(generate_idents(None)):
        dataloader_test = (
            DataLoaderBuilder(MnistBatcher())
            .batch_size(cfg.batch_size)
            .num_workers(cfg.num_workers)
            .set_device(NdArray.device())
            .build(ident.prepare(test_plain, cfg.seed + 200 + i))
        )
        evaluator = EvaluatorBuilder(artifact_dir).metrics(AccuracyMetric(), LossMetric()).build(result.model)
        evaluations.append(evaluator.eval(str(ident), dataloader_test).summary)

    result.model.save_file(os.path.join(artifact_dir, "model"), CompactRecorder())
    cfg.save(os.path.join(artifact_dir, "config.json"))
    return MnistRun(result, evaluations)
