"""lib.rs: a classifier trained by the Learner, its progress shown by ``CustomRenderer``."""

from __future__ import annotations

from ferrum import config
from ferrum.backend import Autodiff, NdArray
from ferrum.data.dataset import Dataset
from ferrum.data.dataset.vision import MnistItem
from ferrum.optim import AdamConfig
from ferrum.train import InMemoryMetricLogger, Learner, LearningResult, SupervisedTraining
from ferrum.train.metric import AccuracyMetric, LossMetric

from ..common.mnist_mlp import Model, ModelConfig
from ..guide.training import mnist_dataloaders
from .renderer import CustomRenderer

TrainB = Autodiff[NdArray]


@config
class MnistTrainingConfig:
    model: ModelConfig
    optimizer: AdamConfig
    num_epochs: int = 5
    batch_size: int = 64
    num_workers: int = 4
    seed: int = 42
    lr: float = 1.0e-3


def run(
    directory: str,
    cfg: MnistTrainingConfig,
    train_data: Dataset[MnistItem],
    valid_data: Dataset[MnistItem],
    renderer: CustomRenderer,
) -> LearningResult[Model[NdArray]]:
    device = TrainB.device()
    TrainB.seed(cfg.seed)
    model = cfg.model.init(device)
    optim = cfg.optimizer.init()

    dataloader_train, dataloader_valid = mnist_dataloaders(
        device, train_data, valid_data, cfg.batch_size, cfg.seed, cfg.num_workers
    )
    # As Burn's example, nothing is written but the run's result file: metrics are kept in
    # memory, no application log, no plots, no checkpoints.
    training = (
        SupervisedTraining(directory, dataloader_train, dataloader_valid)
        .metrics(AccuracyMetric(), LossMetric())
        .num_epochs(cfg.num_epochs)
        .renderer(renderer)
        .with_metric_logger(InMemoryMetricLogger())
        .with_application_logger(False)
        .with_plots(False)
    )
    # training.interrupter() could stop the run from another thread or a callback.
    return training.launch(Learner(model, optim, cfg.lr))
