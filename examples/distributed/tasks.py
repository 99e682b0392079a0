"""lib.rs: Burn's tasks on MPI ranks instead of GPUs.

Burn's ``multi-gpus`` starts one thread per GPU and joins them in a
collective; here each rank is a process started by ``mpiexec``, and the
collective is a ``ferrum.distributed.Communicator``. Each task runs the
same on one process (a communicator of size 1).
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass

import numpy as np
from ferrum import D3, Tensor, config
from ferrum.backend import Autodiff, NdArray
from ferrum.data.dataloader import DataLoaderBuilder
from ferrum.data.dataset import Dataset
from ferrum.data.dataset.vision import MnistItem
from ferrum.distributed import Communicator, DataParallel, ReduceOp
from ferrum.nn.loss import CrossEntropyLossConfig
from ferrum.optim import AdamConfig, GradientsParams
from ferrum.train import Learner, LearningResult, SupervisedTraining
from ferrum.train.metric import AccuracyMetric, LossMetric

from .data import MnistBatcher
from .model import Mlp, MlpConfig

TrainB = Autodiff[NdArray]


@config
class DistributedConfig:
    model: MlpConfig
    optimizer: AdamConfig
    num_epochs: int = 3
    batch_size: int = 64  # the global batch: each rank takes batch_size / ranks of it
    learning_rate: float = 1.0e-3
    seed: int = 42
    log_every: int = 20  # iterations between a rank's progress lines


def line(text: str) -> None:
    """``text`` and its newline in one write, flushed: the ranks share the terminal, and a line
    written in two pieces could be cut by another rank's."""
    print(f"{text}\n", end="", flush=True)


def say(comm: Communicator, text: str) -> None:
    """A line of this rank's, prefixed with the rank."""
    line(f"[rank {comm.rank}/{comm.size}] {text}")


def describe(comm: Communicator) -> None:
    """Where each rank runs: Burn's example prints each device."""
    threads = os.environ.get("RAYON_NUM_THREADS", "all cores")
    say(comm, f"host {socket.gethostname()}, pid {os.getpid()}, engine threads: {threads}")


def signal(seed: int, rank: int, iteration: int, shape: tuple[int, int, int]) -> np.ndarray:
    """Rank ``rank``'s random input at ``iteration``: any rank can make any other rank's."""
    rng = np.random.default_rng([seed, rank, iteration])
    return rng.uniform(-0.5, 0.5, shape).astype(np.float32)


def task_all_reduce(comm: Communicator, iterations: int, size: int, batch: int, seed: int) -> float:
    """Burn's ``task_all_reduce``: the weights ``[1, n, n]`` times each rank's own signal
    ``[batch, n, n]``, averaged over the batch, then averaged over the ranks by an all-reduce:
    the next weights, the same on every rank.

    Every rank also computes the whole run in NumPy from every rank's signal; the largest
    difference from the all-reduced weights is returned.
    """
    rng = np.random.default_rng(seed)
    start = rng.uniform(-0.5, 0.5, (1, size, size)).astype(np.float32)
    device = NdArray.device()
    weights: Tensor[NdArray, D3] = Tensor.from_numpy(start, device)
    expected = start.astype(np.float64)
    worst = 0.0
    shape = (batch, size, size)
    for i in range(iterations):
        mine: Tensor[NdArray, D3] = Tensor.from_numpy(signal(seed, comm.rank, i, shape), device)
        update = weights.matmul(mine).mean_dim(0)  # [1, n, n]
        weights = comm.all_reduce(update, ReduceOp.MEAN)
        updates = [(expected @ signal(seed, r, i, shape)).mean(axis=0) for r in range(comm.size)]
        expected = np.mean(updates, axis=0)[None]
        scale = float(np.abs(expected).max()) or 1.0
        worst = max(worst, float(np.abs(weights.to_numpy() - expected).max()) / scale)
        if comm.is_main:
            line(f"[all-reduce] iter {i} => sum of weights {weights.sum().into_scalar():.6g}")
    return worst


@dataclass
class LoopResult:
    model: Mlp[NdArray]  # on the inner backend, for evaluation
    epoch_losses: list[float]  # each epoch's mean training loss over every rank's items


def task_grad_all_reduce(comm: Communicator, cfg: DistributedConfig, train: Dataset[MnistItem]) -> LoopResult:
    """Burn's ``task_grad_all_reduce``, written out: every rank starts from rank 0's weights,
    trains on its share of each epoch, and averages the gradients over the ranks before each
    step, so that the replicas stay equal."""
    device = TrainB.device()
    TrainB.seed(cfg.seed)
    model = comm.broadcast_module(cfg.model.init(device))  # rank 0's weights everywhere
    loader = (
        DataLoaderBuilder(MnistBatcher())
        .batch_size(max(1, cfg.batch_size // comm.size))
        .shuffle(cfg.seed)
        .shard(comm.rank, comm.size)  # every comm.size-th item of the epoch's order
        .set_device(device)
        .build(train)
    )
    say(comm, f"custom loop: {len(loader)} batches of {max(1, cfg.batch_size // comm.size)} per epoch")
    optim = cfg.optimizer.init()
    loss_fn = CrossEntropyLossConfig().init(device)
    epoch_losses: list[float] = []
    for epoch in range(1, cfg.num_epochs + 1):
        comm.check_even(loader)  # as many steps on every rank, or UnevenRanksError everywhere
        total = np.zeros(2)  # this rank's loss sum and item count
        for i, batch in enumerate(loader):
            loss = loss_fn.forward(model.forward(batch.images), batch.targets)
            grads = GradientsParams.from_grads(loss.backward(), model)
            model = optim.step(cfg.learning_rate, model, comm.sync_gradients(grads))  # the mean over ranks
            value, items = loss.into_scalar(), batch.targets.dims()[0]
            total += (value * items, items)
            if i % cfg.log_every == 0:
                say(comm, f"epoch {epoch} iter {i} => loss {value:.4f}")
        loss_sum, count = comm.all_reduce_array(total, ReduceOp.SUM)
        epoch_losses.append(float(loss_sum / count))
        comm.check_replicas(model, when=f"after epoch {epoch}")  # ReplicaDriftError if they differ
        if comm.is_main:
            line(f"[custom loop] epoch {epoch}: train loss {epoch_losses[-1]:.4f} (mean over ranks)")
    return LoopResult(model.valid(), epoch_losses)


def accuracy(model: Mlp[NdArray], test: Dataset[MnistItem]) -> float:
    """Percent of ``test`` classified right."""
    batch = MnistBatcher().batch(list(test), NdArray.device())
    right = model.forward(batch.images).argmax(1).squeeze_dim(1).equal(batch.targets).int().sum()
    return 100.0 * right.into_scalar() / test.len()


def checksum(model: Mlp[NdArray]) -> float:
    """The sum of the magnitudes of every parameter: equal on every rank when the replicas are."""
    return float(sum(np.abs(p.val().to_numpy()).sum() for p in model.parameters()))


def task_learner(
    comm: Communicator,
    cfg: DistributedConfig,
    artifact_dir: str,
    train: Dataset[MnistItem],
    test: Dataset[MnistItem],
) -> LearningResult[Mlp[NdArray]]:
    """The same training by the Learner with ``DataParallel``: it broadcasts the model, shards the
    loader, averages the gradients and the metrics; rank 0 validates and writes the artifacts."""
    TrainB.seed(cfg.seed)
    loader_train = (
        DataLoaderBuilder(MnistBatcher())
        .batch_size(max(1, cfg.batch_size // comm.size))
        .shuffle(cfg.seed)
        .build(train)
    )
    loader_test = DataLoaderBuilder(MnistBatcher()).batch_size(256).build(test)
    training = (
        SupervisedTraining(artifact_dir, loader_train, loader_test)
        .metrics(AccuracyMetric(), LossMetric())
        .num_epochs(cfg.num_epochs)
        .with_training_strategy(DataParallel(comm))
        .summary()
    )
    return training.launch(Learner(cfg.model.init(TrainB.device()), cfg.optimizer.init(), cfg.learning_rate))
