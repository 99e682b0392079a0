"""Ranks given datasets of different sizes: ``learner`` (through the Learner) or ``loop`` (a custom loop).

    python -m tests.distributed.mpi.uneven learner|loop

Rank 0 holds 48 items and rank 1 holds 24, in batches of 8 (after the
sharding, 3 batches against 2 under the Learner; 6 against 3 in the loop).
tests/distributed/test_mpi.py checks that every rank raises ``UnevenRanksError``
naming both counts at once, instead of failing later for another reason or
waiting for the collective timeout.
"""

from __future__ import annotations

import sys
import tempfile

import numpy as np
from ferrum.backend import NdArray
from ferrum.data.dataloader import DataLoaderBuilder
from ferrum.data.dataset import InMemDataset
from ferrum.distributed import Communicator, DataParallel
from ferrum.optim import SgdConfig
from ferrum.train import Learner, PlainRenderer, SupervisedTraining

from .equivalence import B, Images, Item, make_model


def items(count: int) -> InMemDataset[Item]:
    rng = np.random.default_rng(0)
    images = rng.random((count, 28, 28), dtype=np.float32)
    return InMemDataset([Item(image, i % 10) for i, image in enumerate(images)])


def main(mode: str) -> None:
    # A short timeout: were the check missing, the test would see this instead of waiting 30 minutes.
    comm = Communicator(timeout=60.0)
    data = items(48 if comm.rank == 0 else 24)
    builder = DataLoaderBuilder(Images()).batch_size(8).set_device(B.device())
    if mode == "learner":
        valid = DataLoaderBuilder(Images()).batch_size(8).set_device(NdArray.device()).build(items(8))
        training = (
            SupervisedTraining(tempfile.mkdtemp(), builder.build(data), valid)
            .with_training_strategy(DataParallel(comm))
            .with_plots(False)
            .renderer(PlainRenderer(stream=sys.stderr))
        )
        training.launch(Learner(make_model("mlp"), SgdConfig().init(), 1e-3))
    else:
        model = comm.broadcast_module(make_model("mlp"))
        optim = SgdConfig().init()
        loader = builder.build(data)  # each rank its own dataset, unsharded: the mistake
        for _ in range(2):
            comm.check_even(loader)
            for batch in loader:
                grads = model.train_step(batch).grads
                model = optim.step(1e-3, model, comm.sync_gradients(grads))
    print(f"rank {comm.rank} finished without noticing", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
