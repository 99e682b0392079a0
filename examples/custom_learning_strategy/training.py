"""training.rs: the Learner run with the user's strategy, a composed schedule and early stopping.

As Burn's example: the training split is cut in two (the first part trains,
the next validates), the learning rate follows a product of a warm-up, a
cosine and a linear decay, and training stops early when the validation
loss has not improved for a few epochs.
"""

from __future__ import annotations

import os

from ferrum import config
from ferrum.backend import Autodiff, NdArray
from ferrum.data.dataset import Dataset
from ferrum.data.dataset.vision import MnistItem
from ferrum.lr_scheduler import (
    ComposedLrSchedulerConfig,
    CosineAnnealingLrSchedulerConfig,
    LinearLrSchedulerConfig,
)
from ferrum.optim import AdamConfig
from ferrum.record import CompactRecorder
from ferrum.train import (
    Learner,
    LearningResult,
    SupervisedTraining,
)
from ferrum.train.metric import AccuracyMetric, LossMetric

from ..common.mnist_mlp import Model, ModelConfig
from ..common.training import stop_when_valid_loss_stalls
from ..guide.training import create_artifact_dir, mnist_dataloaders
from .strategy import ClipAndReport

TrainB = Autodiff[NdArray]


@config
class MnistTrainingConfig:
    model: ModelConfig
    optimizer: AdamConfig
    num_epochs: int = 15
    batch_size: int = 64
    num_workers: int = 4
    seed: int = 42
    lr: float = 1.0e-3  # the peak of the schedule
    max_grad_norm: float = 1.0
    patience: int = 2  # epochs without a better validation loss before stopping


def run(
    artifact_dir: str,
    cfg: MnistTrainingConfig,
    train_data: Dataset[MnistItem],
    valid_data: Dataset[MnistItem],
    strategy: ClipAndReport,
) -> LearningResult[Model[NdArray]]:
    create_artifact_dir(artifact_dir)
    device = TrainB.device()
    TrainB.seed(cfg.seed)
    model = cfg.model.init(device)

    dataloader_train, dataloader_valid = mnist_dataloaders(
        device, train_data, valid_data, cfg.batch_size, cfg.seed, cfg.num_workers
    )

    # The schedules' rates are multiplied: warm up over the first tenth of the steps, a cosine
    # over all of them, and a linear decay from cfg.lr.
    steps = len(dataloader_train) * cfg.num_epochs
    lr_scheduler = (
        ComposedLrSchedulerConfig()
        .cosine(CosineAnnealingLrSchedulerConfig(1.0, steps))
        .linear(LinearLrSchedulerConfig(1.0e-8, 1.0, max(1, steps // 10)))
        .linear(LinearLrSchedulerConfig(cfg.lr, cfg.lr / 100, steps))
    )
    training = (
        SupervisedTraining(artifact_dir, dataloader_train, dataloader_valid)
        .metrics(AccuracyMetric(), LossMetric())
        .with_file_checkpointer(CompactRecorder())
        .early_stopping(stop_when_valid_loss_stalls(cfg.patience))
        .num_epochs(cfg.num_epochs)
        .summary()
        .with_training_strategy(strategy)
    )
    result = training.launch(Learner(model, cfg.optimizer.init(), lr_scheduler.init()))
    cfg.save(os.path.join(artifact_dir, "config.json"))
    result.model.save_file(os.path.join(artifact_dir, "model"), CompactRecorder())
    return result
