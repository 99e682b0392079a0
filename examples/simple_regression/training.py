"""training.rs: the experiment config and ``train``, which runs the Learner and saves the model."""

from __future__ import annotations

import os

from ferrum import Device, config
from ferrum.backend import Autodiff, NdArray
from ferrum.data.dataloader import DataLoaderBuilder
from ferrum.data.dataset import Dataset, InMemDataset, PartialDataset, ShuffledDataset
from ferrum.optim import AdamConfig
from ferrum.record import CompactRecorder
from ferrum.train import Learner, LearningResult, SupervisedTraining
from ferrum.train.metric import LossMetric

from ..guide.training import create_artifact_dir
from .data import Normalizer, RegressionBatcher, RegressionItem
from .model import RegressionModel, RegressionModelConfig

TrainB = Autodiff[NdArray]


@config
class ExpConfig:
    model: RegressionModelConfig
    optimizer: AdamConfig
    normalizer: Normalizer
    target: str
    feature_names: list[str]
    num_epochs: int = 100
    num_workers: int = 2
    seed: int = 1337
    batch_size: int = 32
    learning_rate: float = 1.0e-3
    valid_fraction: float = 0.2


def split(
    dataset: Dataset[RegressionItem], valid_fraction: float, seed: int
) -> tuple[list[RegressionItem], list[RegressionItem]]:
    """The rows shuffled once by ``seed``, then cut in a training and a validation part."""
    shuffled = ShuffledDataset(dataset, seed)
    n_valid = max(1, round(shuffled.len() * valid_fraction))
    train, valid = PartialDataset.split_at(shuffled, shuffled.len() - n_valid)
    return list(train), list(valid)


def train(
    artifact_dir: str,
    cfg: ExpConfig,
    train_items: list[RegressionItem],
    valid_items: list[RegressionItem],
    device: Device[TrainB],
) -> LearningResult[RegressionModel[NdArray]]:
    """Train on ``train_items``, validate on ``valid_items``; saves config.json and the model."""
    create_artifact_dir(artifact_dir)
    TrainB.seed(cfg.seed)
    print(f"Train Dataset Size: {len(train_items)}")
    print(f"Valid Dataset Size: {len(valid_items)}")

    builder = (
        DataLoaderBuilder(RegressionBatcher(cfg.normalizer))
        .batch_size(cfg.batch_size)
        .num_workers(cfg.num_workers)
    )
    dataloader_train = builder.shuffle(cfg.seed).build(InMemDataset(train_items))
    dataloader_valid = builder.build(InMemDataset(valid_items))

    training = (
        SupervisedTraining(artifact_dir, dataloader_train, dataloader_valid)
        .metric_train_numeric(LossMetric())
        .metric_valid_numeric(LossMetric())
        .with_file_checkpointer(CompactRecorder())
        .num_epochs(cfg.num_epochs)
        .summary()
    )
    model = cfg.model.init(device)
    result = training.launch(Learner(model, cfg.optimizer.init(), cfg.learning_rate))
    cfg.save(os.path.join(artifact_dir, "config.json"))
    result.model.save_file(os.path.join(artifact_dir, "model"), CompactRecorder())
    return result
