"""training.rs: the training config and ``train``, which runs the Learner and saves the model."""

from __future__ import annotations

import os
import shutil
from typing import TypeVar

from ferrum import Device, config
from ferrum.backend import Autodiff, NdArray
from ferrum.data.dataloader import DataLoader, DataLoaderBuilder
from ferrum.data.dataset import Dataset
from ferrum.data.dataset.vision import MnistDataset, MnistItem
from ferrum.distributed import Communicator, launched_rank, launched_ranks
from ferrum.optim import AdamConfig
from ferrum.record import CompactRecorder
from ferrum.train import Learner, SupervisedTraining
from ferrum.train.metric import AccuracyMetric, LossMetric

from .data import MnistBatch, MnistBatcher
from .model import Model, ModelConfig

TrainB = Autodiff[NdArray]
TrainBatchT = TypeVar("TrainBatchT")
ValidBatchT = TypeVar("ValidBatchT")


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


def mnist_dataloaders(
    device: Device[TrainB],
    train_data: Dataset[MnistItem],
    valid_data: Dataset[MnistItem],
    batch_size: int,
    seed: int,
    num_workers: int,
    ranks: int = 1,
) -> tuple[DataLoader[MnistBatch[TrainB]], DataLoader[MnistBatch[NdArray]]]:
    """The training loader (shuffled by ``seed``, batches on ``device``) and the validation one.

    Each of ``ranks`` data-parallel ranks takes its share of a training batch.
    Validation needs no gradients: its batches live on the inner backend.
    The examples that train on the guide's batches build their loaders here.
    """
    dataloader_train = (
        DataLoaderBuilder(MnistBatcher(device))
        .batch_size(max(1, batch_size // ranks))
        .shuffle(seed)
        .num_workers(num_workers)
        .build(train_data)
    )
    dataloader_valid = (
        DataLoaderBuilder(MnistBatcher(NdArray.device()))
        .batch_size(batch_size)
        .num_workers(num_workers)
        .build(valid_data)
    )
    return dataloader_train, dataloader_valid


def classification_training(
    artifact_dir: str,
    dataloader_train: DataLoader[TrainBatchT],
    dataloader_valid: DataLoader[ValidBatchT],
    num_epochs: int,
) -> SupervisedTraining[TrainBatchT, ValidBatchT]:
    """The guide's run of ``num_epochs``: accuracy and loss on both splits, a checkpoint per epoch
    in ``artifact_dir``, and the summary at the end. The examples that train a classifier the
    guide's way start from it."""
    return (
        SupervisedTraining(artifact_dir, dataloader_train, dataloader_valid)
        .metrics(AccuracyMetric(), LossMetric())
        .with_file_checkpointer(CompactRecorder())
        .num_epochs(num_epochs)
        .summary()
    )


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

    dataloader_train, dataloader_test = mnist_dataloaders(
        device,
        MnistDataset.sample("train"),
        MnistDataset.sample("test"),
        cfg.batch_size,
        cfg.seed,
        cfg.num_workers,
        ranks,
    )

    training = classification_training(artifact_dir, dataloader_train, dataloader_test, cfg.num_epochs)
    model = cfg.model.init(device)
    result = training.launch(Learner(model, cfg.optimizer.init(), cfg.learning_rate))
    if main:
        result.model.save_file(os.path.join(artifact_dir, "model"), CompactRecorder())
    return result.model
