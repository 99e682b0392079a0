"""``DataParallel``: the Learner's training strategy for one rank of an MPI job (Burn's DDP, PyTorch's DDP).

Every rank holds the whole model. At launch rank 0's model (parameters,
ids, running statistics) is broadcast, so every rank starts the same; each
rank trains on its shard of every epoch; after each backward pass the
gradients are averaged over ranks, so every rank applies the same update
and the models stay equal without further exchange. Training metrics are
combined over ranks before they are logged; validation, progress, logs,
plots and checkpoints are rank 0's. Dropout draws differ per rank, the
shuffled order is shared.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from ferrum.data.dataloader import DataLoader
from ferrum.distributed.communicator import Communicator, ReduceOp
from ferrum.distributed.gradients import sync_gradients
from ferrum.distributed.replicas import describe
from ferrum.distributed.strategy import TrainingStrategy
from ferrum.module import Module
from ferrum.optim import GradientsParams

M = TypeVar("M", bound=Module[Any])

__all__ = ["DataParallel"]

# The advice for uneven ranks under the Learner: it shards the loader itself, so uneven shards
# come from ranks that were given datasets of different sizes.
_EVEN_HINT = (
    "DataParallel deals every rank its share of the training loader it is given: give every rank "
    "the same training dataset, not a part of its own"
)


class DataParallel(TrainingStrategy):
    """Train as one rank of ``comm``: ``SupervisedTraining(...).with_training_strategy(DataParallel(comm))``.

    ``bucket_mb`` sizes the gradient all-reduce buckets (PyTorch's default,
    25 MB). ``seed`` seeds each rank's backend generator (dropout, random
    layers) from ``seed`` and the rank; without it rank 0 keeps its
    generator and the others get seeds drawn on rank 0. ``drop_last``:
    each rank gets ``len // world_size`` items of an epoch instead of the
    order padded to an equal share. At launch the ranks compare their
    model's structure, optimizer, schedule and run settings
    (``ReplicaMismatchError`` when they differ); after each training epoch
    their parameters (``ReplicaDriftError``; ``check_replicas=False`` skips
    this one pass over the weights).

    Example (``mpiexec -n 2 python train.py``)::

        comm = Communicator()
        result = (
            SupervisedTraining(artifact_dir, loader_train, loader_valid)
            .with_training_strategy(DataParallel(comm))
            .metrics(AccuracyMetric(), LossMetric())
            .launch(Learner(model, AdamConfig().init(), 1e-3))
        )
    """

    def __init__(
        self,
        comm: Communicator,
        *,
        bucket_mb: float = 25.0,
        seed: int | None = None,
        drop_last: bool = False,
        check_replicas: bool = True,
    ) -> None:
        if not isinstance(comm, Communicator):
            raise TypeError(
                f"DataParallel needs a ferrum.distributed.Communicator, found {type(comm).__name__}"
            )
        if not bucket_mb > 0:
            raise ValueError(f"DataParallel bucket_mb must be > 0, found {bucket_mb!r}")
        self.comm = comm
        self.bucket_mb = float(bucket_mb)
        self.seed = seed
        self.drop_last = bool(drop_last)
        self.check_replicas = bool(check_replicas)

    @property
    def is_main(self) -> bool:
        return self.comm.is_main

    @property
    def world_size(self) -> int:
        return self.comm.size

    def prepare_model(self, model: M) -> M:
        model = self.comm.broadcast_module(model)
        self._seed_ranks(model)
        return model

    def prepare_loader(self, loader: DataLoader[Any]) -> DataLoader[Any]:
        if self.world_size == 1:
            return loader
        return loader.shard(self.comm.rank, self.world_size, drop_last=self.drop_last)

    def require_same(self, what: str, value: object) -> None:
        if self.world_size > 1:
            self.comm.require_same(what, describe(value))

    def start_epoch(self, loader: DataLoader[Any], epoch: int) -> None:
        # Every epoch, not once: a loader's length may change between epochs. Failing here, on
        # every rank and before the first step, beats the collectives of different steps meeting.
        if self.world_size > 1:
            self.comm.check_even(loader, hint=_EVEN_HINT)

    def end_epoch(self, model: Module[Any], epoch: int) -> None:
        if self.world_size > 1 and self.check_replicas:
            self.comm.check_replicas(model, when=f"in epoch {epoch}")

    def sync_gradients(self, grads: GradientsParams) -> GradientsParams:
        return sync_gradients(self.comm, grads, self.bucket_mb, learner=True)

    def reduce_sum(self, values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        return self.comm.all_reduce_array(values, ReduceOp.SUM)

    def agree(self, flag: bool) -> bool:
        return self.comm.agree(flag)

    def decide(self, flag: bool) -> bool:
        decision = np.array([int(bool(flag) and self.is_main)], np.int64)
        return bool(self.comm.all_reduce_array(decision, ReduceOp.MAX)[0])

    def failed(self, error: BaseException) -> None:
        self.comm.notify_failure(error)

    def _seed_ranks(self, model: Module[Any]) -> None:
        devices = model.devices()
        if not devices:
            return
        if self.seed is None:
            drawn = int.from_bytes(os.urandom(8), "little") if self.is_main else 0
            base = int(self.comm.all_reduce_array(np.array([drawn >> 1], np.int64), ReduceOp.MAX)[0])
            if self.is_main:
                return
        else:
            base = self.seed
        digest = hashlib.blake2b(f"{base}:{self.comm.rank}".encode(), digest_size=8).digest()
        devices[0].backend.seed(int.from_bytes(digest, "little") >> 1)

    def __repr__(self) -> str:
        return f"DataParallel(rank {self.comm.rank} of {self.comm.size}, bucket_mb={self.bucket_mb:g})"
