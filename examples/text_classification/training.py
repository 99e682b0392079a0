"""training.rs: the experiment config and ``train``, which runs the Learner and saves the model."""

from __future__ import annotations

import os

from ferrum import Device, config
from ferrum.backend import Autodiff, NdArray
from ferrum.data.dataloader import DataLoaderBuilder
from ferrum.data.dataset import Dataset
from ferrum.optim import AdamConfig
from ferrum.record import CompactRecorder
from ferrum.train import Learner, LearningResult

from ..guide.training import classification_training, create_artifact_dir
from .data import TextClassificationBatcher, TextClassificationItem, Tokenizer
from .model import TextClassificationModel, TextClassificationModelConfig

TrainB = Autodiff[NdArray]


@config
class ExperimentConfig:
    model: TextClassificationModelConfig
    optimizer: AdamConfig
    max_seq_length: int = 12
    batch_size: int = 32
    num_epochs: int = 3
    learning_rate: float = 1.0e-3
    seed: int = 0


def train(
    artifact_dir: str,
    cfg: ExperimentConfig,
    dataset_train: Dataset[TextClassificationItem],
    dataset_test: Dataset[TextClassificationItem],
    device: Device[TrainB],
) -> LearningResult[TextClassificationModel[NdArray]]:
    """Train the classifier; ``artifact_dir`` gets logs, checkpoints, ``config.json`` and ``model.mpk``."""
    create_artifact_dir(artifact_dir)
    TrainB.seed(cfg.seed)
    batcher = TextClassificationBatcher(Tokenizer(), cfg.max_seq_length)
    dataloader_train = (
        DataLoaderBuilder(batcher).batch_size(cfg.batch_size).shuffle(cfg.seed).build(dataset_train)
    )
    dataloader_test = DataLoaderBuilder(batcher).batch_size(cfg.batch_size).build(dataset_test)

    training = classification_training(artifact_dir, dataloader_train, dataloader_test, cfg.num_epochs)
    model = cfg.model.init(device)
    result = training.launch(Learner(model, cfg.optimizer.init(), cfg.learning_rate))
    cfg.save(os.path.join(artifact_dir, "config.json"))
    result.model.save_file(os.path.join(artifact_dir, "model"), CompactRecorder())
    return result
