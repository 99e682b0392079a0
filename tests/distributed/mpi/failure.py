"""A rank that fails mid-training: ``raise`` (an exception) or ``kill`` (the process dies at once).

    python -m tests.distributed.mpi.failure raise|kill

Rank 1 fails at its third step; rank 0 keeps exchanging gradients.
tests/distributed/test_mpi.py checks that the job ends, soon, with an error
that names rank 1, instead of rank 0 waiting forever.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from typing import NoReturn

from ferrum import Tensor
from ferrum.backend import Autodiff, NdArray
from ferrum.distributed import Communicator
from ferrum.nn import LinearConfig
from ferrum.optim import GradientsParams, SgdConfig


def train_until_rank_1_leaves(comm: Communicator, steps: int, leave: Callable[[], NoReturn]) -> None:
    """Up to ``steps - 1`` SGD steps of a Linear(4, 1) whose gradients ``comm`` syncs; rank 1
    calls ``leave`` at its third step (``leave`` must not return)."""
    device = Autodiff[NdArray].device()
    model = comm.broadcast_module(LinearConfig(4, 1).init(device))
    optim = SgdConfig().init()
    x = Tensor.ones((8, 4), device)
    for step in range(1, steps):
        if comm.rank == 1 and step == 3:
            leave()
        grads = GradientsParams.from_grads(model.forward(x).sum().backward(), model)
        model = optim.step(1e-3, model, comm.sync_gradients(grads))


def main(how: str) -> None:
    comm = Communicator(timeout=60.0)

    def fail() -> NoReturn:
        if how == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        raise ValueError("a bad batch on rank 1")

    train_until_rank_1_leaves(comm, 1000, fail)
    print(f"rank {comm.rank} finished without noticing", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
