"""A rank whose program ends mid-run, with status 0: ``loop`` (sys.exit in a custom loop), ``hard``
(os._exit(0) in a Learner's train step), or ``none`` (a Learner run nobody cuts).

    python -m tests.distributed.mpi.early_exit loop|hard|none ARTIFACT_DIR

tests/distributed/test_mpi.py checks that in a loop the others stop at once naming the rank (not
after the collective timeout), and that only the run nobody cut leaves ``result.json``: MPICH's
launcher reports the hard exit as success, so the marker is how a cut run is told apart.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from ferrum.backend import NdArray
from ferrum.data.dataloader import DataLoaderBuilder
from ferrum.distributed import Communicator, DataParallel, launched_rank
from ferrum.optim import SgdConfig
from ferrum.train import Learner, PlainRenderer, SupervisedTraining

from .equivalence import B, Images, Mlp, make_model
from .failure import train_until_rank_1_leaves
from .uneven import items


class Leaving(Mlp):
    """Rank 1's process ends at its third step, skipping every handler (a library calling _exit)."""

    steps = 0

    def train_step(self, batch: Any) -> Any:
        Leaving.steps += 1
        if launched_rank() == 1 and Leaving.steps == 3:
            os._exit(0)
        return super().train_step(batch)


def main(mode: str, artifact_dir: str) -> None:
    comm = Communicator(timeout=60.0)
    if mode == "loop":
        train_until_rank_1_leaves(comm, 200, lambda: sys.exit(0))
    else:
        base = make_model("mlp")
        model = Leaving(base.fc1, base.act, base.fc2) if mode == "hard" else base
        builder = DataLoaderBuilder(Images()).batch_size(8).set_device(B.device())
        valid = DataLoaderBuilder(Images()).batch_size(8).set_device(NdArray.device()).build(items(8))
        (
            SupervisedTraining(artifact_dir, builder.build(items(64)), valid)
            .with_training_strategy(DataParallel(comm))
            .with_plots(False)
            .num_epochs(2)
            .renderer(PlainRenderer(stream=sys.stderr))
        ).launch(Learner(model, SgdConfig().init(), 1e-3))
    print(f"rank {comm.rank} finished", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
