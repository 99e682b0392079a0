"""training.rs: the training config and ``train``, which runs the Learner and saves the model."""

from __future__ import annotations

import os
import shutil

from ferrum import Device, config
from ferrum.backend import Autodiff, NdArray
from ferrum.data.dataloader import DataLoaderBuilder
from ferrum.data.dataset.vision import MnistDataset
from ferrum.distributed import Communicator, launched_rank, launched_ranks
from ferrum.optim import AdamConfig
from ferrum.record import CompactRecorder
from ferrum.train import Learner, SupervisedTraining
from ferrum.train.metric import AccuracyMetric, LossMetric

from .data import MnistBatcher
from .model import Model, ModelConfig

TrainB = Autodiff[NdArray]


@config
class TrainingConfig:
    model: ModelConfig
    optimizer: AdamConfig
    num_epochs: int = 10
    batch_size: int = 64
    num_workers: int = 2
    seed: int = 42
    learning_rate: float = 1.0e-3


def create_artifact_dir(artifact_dir: str) -> None:
    # Remove the artifacts of an earlier run, so that the summary covers this one only.
    shutil.rmtree(artifact_dir, ignore_errors=True)
    os.makedirs(artifact_dir)


def train(artifact_dir: str, cfg: TrainingConfig, device: Device[TrainB]) -> Model[NdArray]:
    """Train on ferrum's MNIST sample; the artifact directory gets the logs, checkpoints, plots and model.

    Under ``mpiexec -n N`` it trains data-parallel: each rank takes its share
    of every batch of ``cfg.batch_size``, and rank 0 writes the artifacts.
    """
    ranks, main = launched_ranks(), launched_rank() == 0
    if main:
        create_artifact_dir(artifact_dir)
        cfg.save(os.path.join(artifact_dir, "config.json"))
    if ranks > 1:
        Communicator().barrier()  # the others write into the directory only once rank 0 has made it
    TrainB.seed(cfg.seed)

    dataloader_train = (
        DataLoaderBuilder(MnistBatcher(device))
        .batch_size(max(1, cfg.batch_size // ranks))
        .shuffle(cfg.seed)
        .num_workers(cfg.num_workers)
        .build(MnistDataset.sample("train"))
    )
    # Validation needs no gradients: its batches live on the inner backend.
    dataloader_test = (
        DataLoaderBuilder(MnistBatcher(NdArray.device()))
        .batch_size(cfg.batch_size)
        .num_workers(cfg.num_workers)
        .build(MnistDataset.sample("test"))
    )

    training = (
        SupervisedTraining(artifact_dir, dataloader_train, dataloader_test)
        .metrics(AccuracyMetric(), LossMetric())
        .with_file_checkpointer(CompactRecorder())
        .num_epochs(cfg.num_epochs)
        .summary()
    )
    model = cfg.model.init(device)
    result = training.launch(Learner(model, cfg.optimizer.init(), cfg.learning_rate))
    if main:
        result.model.save_file(os.path.join(artifact_dir, "model"), CompactRecorder())
    return result.model
