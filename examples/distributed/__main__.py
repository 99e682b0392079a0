"""``python -m examples.distributed``: data-parallel training on MPI ranks (or one process).

Run ``mpiexec -n 2 python -m examples.distributed`` (``pip install
'ferrum-dl[mpi]'``), or without ``mpiexec`` as one process. Options:
``--epochs N`` (default 3), ``--iterations N`` (all-reduce iterations,
default 20), ``--artifact-dir DIR`` (the Learner's; default
``distributed`` in the temporary directory), ``--smoke`` (512 training and
256 test digits, 2 epochs, a small network, a temporary artifact folder).
Give each rank its share of the cores: ``RAYON_NUM_THREADS=1`` for two
ranks on two cores.
"""

from __future__ import annotations

import shutil
import tempfile
import time

from ferrum.data.dataset import PartialDataset
from ferrum.data.dataset.vision import MnistDataset
from ferrum.distributed import Communicator
from ferrum.optim import AdamConfig
from ferrum.train import Split

from ..common.cli import example_parser
from .model import MlpConfig
from .tasks import (
    DistributedConfig,
    accuracy,
    checksum,
    describe,
    say,
    task_all_reduce,
    task_grad_all_reduce,
    task_learner,
)


def main() -> None:
    parser = example_parser("distributed", __doc__, epochs=3, artifact_dir=True, smoke=True)
    parser.add_argument("--iterations", type=int, default=20)
    args = parser.parse_args()

    comm = Communicator()
    describe(comm)
    train, test = MnistDataset.sample("train"), MnistDataset.sample("test")
    cfg = DistributedConfig(MlpConfig(), AdamConfig(), num_epochs=args.epochs)
    iterations, size, batch = args.iterations, 64, 8
    artifact_dir = args.artifact_dir
    if args.smoke:
        train, test = PartialDataset(train, 0, 512), PartialDataset(test, 0, 256)
        cfg = DistributedConfig(MlpConfig(32), AdamConfig(), num_epochs=2, log_every=4)
        iterations, size = 3, 16
        # Every rank must name the same folder: rank 0 makes it, the others are told.
        made = tempfile.mkdtemp(prefix="distributed-") if comm.is_main else None
        artifact_dir = comm.broadcast_bytes(made.encode() if made else None).decode()

    start = time.perf_counter()
    worst = task_all_reduce(comm, iterations, size, batch, cfg.seed)
    say(comm, f"all-reduce: {iterations} iterations in {time.perf_counter() - start:.2f}s, "
        f"largest relative difference from NumPy {worst:.2e}")

    start = time.perf_counter()
    loop = task_grad_all_reduce(comm, cfg, train)
    seconds = time.perf_counter() - start
    say(comm, f"custom loop: trained in {seconds:.1f}s; parameter checksum {checksum(loop.model):.6f}")

    start = time.perf_counter()
    result = task_learner(comm, cfg, artifact_dir, train, test)
    say(comm, f"Learner: trained in {time.perf_counter() - start:.1f}s; "
        f"parameter checksum {checksum(result.model):.6f}")

    if comm.is_main:
        ranks = f"{comm.size} rank{'s' if comm.size > 1 else ''}"
        print(
            f"\nFinal metrics ({ranks}, {train.len()} training digits, "
            f"global batch {cfg.batch_size}, {cfg.num_epochs} epochs):"
        )
        losses = loop.epoch_losses
        print(f"custom loop: train loss {losses[0]:.4f} -> {losses[-1]:.4f}, "
              f"test accuracy {accuracy(loop.model, test):.2f} %")
        loss = result.summary.metric("Loss", Split.Train)
        valid = result.summary.metric("Accuracy", Split.Valid)
        print(f"Learner:     train loss {loss.entries[0][1]:.4f} -> {loss.last:.4f}, "
              f"test accuracy {valid.last:.2f} %")
    comm.barrier()
    if args.smoke and comm.is_main:
        shutil.rmtree(artifact_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
