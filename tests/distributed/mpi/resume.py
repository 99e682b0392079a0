"""A Learner run checkpointed on some number of ranks and resumed on another (the MLP of equivalence.py).

    python -m tests.distributed.mpi.resume EPOCHS [RESUME_FROM] ARTIFACT_DIR OUT.npz

Trains to epoch EPOCHS with the global batch of 64 split over however many
ranks run it (one process without mpiexec), resuming from the checkpoint of
epoch RESUME_FROM when given (0: a fresh run); rank 0 writes the weights.
"""

from __future__ import annotations

import sys

import numpy as np
from ferrum.backend import NdArray
from ferrum.data.dataloader import DataLoaderBuilder
from ferrum.distributed import launched_ranks
from ferrum.optim import AdamConfig
from ferrum.record import DefaultRecorder
from ferrum.train import Learner, PlainRenderer, SupervisedTraining

from .equivalence import BATCH, B, Images, dataset, make_model


def main(epochs: int, resume_from: int, directory: str, out: str) -> None:
    ranks = launched_ranks()
    B.seed(0)
    train = DataLoaderBuilder(Images()).shuffle(7).set_device(B.device()).batch_size(BATCH // ranks)
    valid = DataLoaderBuilder(Images()).batch_size(BATCH).set_device(NdArray.device())
    training = (
        SupervisedTraining(directory, train.build(dataset()), valid.build(dataset()))
        .with_file_checkpointer(DefaultRecorder())
        .num_epochs(epochs)
        .with_plots(False)
        .renderer(PlainRenderer(stream=sys.stderr))
    )
    if resume_from:
        training = training.checkpoint(resume_from)
    model = training.launch(Learner(make_model("mlp"), AdamConfig().init(), 1e-3)).model
    if ranks == 1 or _rank() == 0:
        np.savez(out, **{path: param.val().to_numpy() for path, param in model.named_parameters()})


def _rank() -> int:
    from mpi4py import MPI

    return int(MPI.COMM_WORLD.Get_rank())


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4])
