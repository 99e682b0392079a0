"""training.rs: the training config and ``train``, the loop written by hand.

Each epoch: forward, MSE loss, ``backward``, the gradients of the model's
parameters, and Adam's step (which clips them to a global norm of 1 first,
as set in its config); then the mean validation loss with ``model.valid()``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ferrum import config
from ferrum.backend import Autodiff, NdArray
from ferrum.data.dataloader import DataLoaderBuilder
from ferrum.nn.loss import MseLoss, Reduction
from ferrum.optim import AdamConfig, GradientsParams
from ferrum.record import CompactRecorder

from ..guide.training import create_artifact_dir
from .dataset import NOISE_LEVEL, RANDOM_SEED, SequenceBatch, SequenceBatcher, SequenceDataset
from .model import LstmNetwork, LstmNetworkConfig

TrainB = Autodiff[NdArray]


@config
class TrainingConfig:
    model: LstmNetworkConfig
    optimizer: AdamConfig
    num_epochs: int = 30
    batch_size: int = 32
    num_workers: int = 2
    lr: float = 1.0e-3
    num_sequences: int = 1000  # training sequences; validation gets a fifth as many
    seq_length: int = 10
    seed: int = RANDOM_SEED


@dataclass(frozen=True)
class EpochLosses:
    epoch: int
    train: float  # mean MSE per sequence
    valid: float


def train(artifact_dir: str, cfg: TrainingConfig, log_every: int = 5) -> list[EpochLosses]:
    """Train on ``cfg.num_sequences`` sequences; every ``log_every``-th epoch prints its mean losses.
    The artifact directory gets ``config.json`` and the model."""
    create_artifact_dir(artifact_dir)
    cfg.save(os.path.join(artifact_dir, "config.json"))
    device = TrainB.device()
    TrainB.seed(cfg.seed)

    model: LstmNetwork[TrainB] = cfg.model.init(device)
    optim = cfg.optimizer.init()
    train_data = SequenceDataset(cfg.num_sequences, cfg.seq_length, NOISE_LEVEL, seed=cfg.seed)
    # 20% of the training size, drawn from another seed: sequences the model never trained on.
    valid_data = SequenceDataset(cfg.num_sequences // 5, cfg.seq_length, NOISE_LEVEL, seed=cfg.seed + 1)
    dataloader_train = (
        DataLoaderBuilder(SequenceBatcher())
        .batch_size(cfg.batch_size)
        .shuffle(cfg.seed)
        .num_workers(cfg.num_workers)
        .set_device(device)
        .build(train_data)
    )
    dataloader_valid = (
        DataLoaderBuilder(SequenceBatcher())
        .batch_size(cfg.batch_size)
        .num_workers(cfg.num_workers)
        .set_device(NdArray.device())
        .build(valid_data)
    )
    loss_fn = MseLoss()

    print("Starting training...")
    history = []
    for epoch in range(1, cfg.num_epochs + 1):
        train_loss = 0.0
        batch: SequenceBatch[TrainB]
        for batch in dataloader_train:
            output = model.forward(batch.sequences)
            loss = loss_fn.forward(output, batch.targets, Reduction.Mean)
            # Weighted by the batch's size: the last batch may be smaller.
            train_loss += loss.into_scalar() * batch.targets.dims()[0]
            grads = GradientsParams.from_grads(loss.backward(), model)
            model = optim.step(cfg.lr, model, grads)

        valid_model: LstmNetwork[NdArray] = model.valid()  # the same weights, without autodiff
        valid_loss = 0.0
        valid_batch: SequenceBatch[NdArray]
        for valid_batch in dataloader_valid:
            output_valid = valid_model.forward(valid_batch.sequences)
            loss_valid = loss_fn.forward(output_valid, valid_batch.targets, Reduction.Mean)
            valid_loss += loss_valid.into_scalar() * valid_batch.targets.dims()[0]

        losses = EpochLosses(epoch, train_loss / train_data.len(), valid_loss / valid_data.len())
        history.append(losses)
        if epoch % log_every == 0 or epoch == 1:
            print(
                f"Epoch {epoch}/{cfg.num_epochs}, "
                f"Avg Loss {losses.train:.4f}, Avg Val Loss: {losses.valid:.4f}"
            )

    model.save_file(os.path.join(artifact_dir, "model"), CompactRecorder())
    return history
