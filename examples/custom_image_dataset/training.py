"""training.rs: the training config and ``train``, which runs the Learner and saves the model."""

from __future__ import annotations

import os

from ferrum import Device, config
from ferrum.backend import Autodiff, NdArray
from ferrum.data.dataloader import DataLoaderBuilder
from ferrum.optim import AdamConfig
from ferrum.record import CompactRecorder
from ferrum.train import Learner, LearningResult

from ..guide.training import classification_training, create_artifact_dir
from .data import ClassificationBatcher, Splits
from .model import Cnn, CnnConfig

TrainB = Autodiff[NdArray]


@config
class TrainingConfig:
    """How to train: Adam at 1e-3 on batches of 32 (Burn's SGD with momentum, at 0.02 on batches of 128,
    needs more steps than a CPU run has). ``mean`` and ``std`` are the training images' channel
    statistics and ``classes`` the folder names, so that inference reads images as training did."""

    model: CnnConfig
    optimizer: AdamConfig
    classes: list[str]
    mean: list[float]
    std: list[float]
    num_epochs: int = 20
    batch_size: int = 32
    num_workers: int = 2
    seed: int = 42
    learning_rate: float = 1.0e-3


def train(
    artifact_dir: str, cfg: TrainingConfig, splits: Splits, device: Device[TrainB]
) -> LearningResult[Cnn[NdArray]]:
    """Train on ``splits``; ``artifact_dir`` gets the logs, checkpoints, ``config.json`` and ``model.mpk``.

    The DataLoader's worker threads (``cfg.num_workers``) decode the images
    and apply the transforms of ``ClassificationBatcher``.
    """
    create_artifact_dir(artifact_dir)
    cfg.save(os.path.join(artifact_dir, "config.json"))
    TrainB.seed(cfg.seed)
    size = cfg.model.image_size

    batcher_train: ClassificationBatcher[TrainB] = ClassificationBatcher(
        size, cfg.mean, cfg.std, train=True, seed=cfg.seed
    )
    # The validation images are only resized and centre-cropped; their batches live on the inner backend.
    batcher_valid: ClassificationBatcher[NdArray] = ClassificationBatcher(size, cfg.mean, cfg.std, False)
    dataloader_train = (
        DataLoaderBuilder(batcher_train)
        .batch_size(cfg.batch_size)
        .shuffle(cfg.seed)
        .num_workers(cfg.num_workers)
        .build(splits.train)
    )
    dataloader_valid = (
        DataLoaderBuilder(batcher_valid)
        .batch_size(cfg.batch_size)
        .num_workers(cfg.num_workers)
        .build(splits.valid)
    )

    training = classification_training(artifact_dir, dataloader_train, dataloader_valid, cfg.num_epochs)
    model = cfg.model.init(device)
    result = training.launch(Learner(model, cfg.optimizer.init(), cfg.learning_rate))
    result.model.save_file(os.path.join(artifact_dir, "model"), CompactRecorder())
    return result
