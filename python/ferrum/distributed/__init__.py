"""Data-parallel training across processes and machines, on MPI (``pip install 'ferrum-dl[mpi]'``).

Launch the same script on every rank (``mpiexec -n 2 python train.py``,
``mpiexec -f hosts ...``, ``srun`` under Slurm). The Learner trains
data-parallel by itself when launched so; a custom loop averages the
gradients between ``from_grads`` and ``optim.step``::

    comm = Communicator()
    model = comm.broadcast_module(model)              # the same start everywhere
    loader = builder.shard(comm.rank, comm.size).build(dataset)
    comm.check_even(loader)                           # each epoch: every rank as many steps
    for batch in loader:
        grads = GradientsParams.from_grads(model.forward(batch).backward(), model)
        model = optim.step(lr, model, comm.sync_gradients(grads))

See ``docs/distributed.md`` for launch commands and measured scaling.
"""

from ferrum.distributed.communicator import Communicator, ReduceOp, launched_rank, launched_ranks
from ferrum.distributed.data_parallel import DataParallel
from ferrum.distributed.errors import (
    CollectiveTimeoutError,
    DistributedError,
    GradientMismatchError,
    RankFailedError,
    ReplicaDriftError,
    ReplicaMismatchError,
    UnevenRanksError,
)

__all__ = [
    "CollectiveTimeoutError",
    "Communicator",
    "DataParallel",
    "DistributedError",
    "GradientMismatchError",
    "RankFailedError",
    "ReduceOp",
    "ReplicaDriftError",
    "ReplicaMismatchError",
    "UnevenRanksError",
    "launched_rank",
    "launched_ranks",
]
