"""Ranks started differently, or whose replicas drift apart.

    python -m tests.distributed.mpi.drift lr|structure|loop|learner

``lr``: rank 1's Learner gets another learning rate (refused at launch).
``structure``: rank 1 builds a deeper model and broadcasts it (refused before any record moves).
``loop``: a custom loop where rank 1 changes a weight by hand (``check_replicas`` after the epoch).
``learner``: a schedule that looks the same on both ranks but gives rank 1 another rate (the
Learner's check after epoch 1). tests/distributed/test_mpi.py checks every rank raises the typed error.
"""

from __future__ import annotations

import sys
import tempfile

from ferrum import Tensor
from ferrum.backend import Autodiff, NdArray
from ferrum.data.dataloader import DataLoaderBuilder
from ferrum.distributed import Communicator, DataParallel, launched_rank
from ferrum.lr_scheduler import LrScheduler
from ferrum.nn import LinearConfig
from ferrum.optim import GradientsParams, SgdConfig
from ferrum.train import Learner, PlainRenderer, SupervisedTraining

from .equivalence import B, Images, make_model
from .uneven import items


class RankRate(LrScheduler):
    """0.1 on rank 0 and 0.2 elsewhere, with no field that tells (the launch check cannot see it)."""

    def step(self) -> float:
        return 0.1 if launched_rank() == 0 else 0.2

    def to_record(self) -> dict[str, float]:
        return {}

    def _load(self, record: object) -> None:
        pass


def learner(comm: Communicator, lr: float | LrScheduler) -> None:
    builder = DataLoaderBuilder(Images()).batch_size(8).set_device(B.device())
    valid = DataLoaderBuilder(Images()).batch_size(8).set_device(NdArray.device()).build(items(8))
    (
        SupervisedTraining(tempfile.mkdtemp(), builder.build(items(32)), valid)
        .with_training_strategy(DataParallel(comm))
        .with_plots(False)
        .num_epochs(2)
        .renderer(PlainRenderer(stream=sys.stderr))
    ).launch(Learner(make_model("mlp"), SgdConfig().init(), lr))


def main(mode: str) -> None:
    comm = Communicator(timeout=60.0)
    device = Autodiff[NdArray].device()
    if mode == "lr":
        learner(comm, 1e-3 if comm.rank == 0 else 2e-3)
    elif mode == "learner":
        learner(comm, RankRate())
    elif mode == "structure":
        comm.broadcast_module(LinearConfig(4, 8).init(device))  # the same layer on both: passes
        comm.broadcast_module(LinearConfig(8, 1 if comm.rank == 0 else 8).init(device))
    else:
        model = comm.broadcast_module(LinearConfig(4, 2).init(device))
        optim = SgdConfig().init()
        x = Tensor.ones((8, 4), device)
        for step in range(4):
            grads = GradientsParams.from_grads(model.forward(x).sum().backward(), model)
            model = optim.step(1e-2, model, comm.sync_gradients(grads))
            if comm.rank == 1 and step == 1:
                assert model.bias is not None
                model = model.replace(bias=model.bias.map(lambda tensor: tensor + 0.2))
        comm.check_replicas(model, when="after epoch 1")
    print(f"rank {comm.rank} finished without noticing", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
