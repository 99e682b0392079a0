"""Data-parallel scaling on MPI: all-reduce cost per size, and training throughput on 1 and N ranks.

    python benches/distributed_scaling.py                       # 1 rank
    mpiexec -n 2 python benches/distributed_scaling.py          # 2 ranks
    RAYON_NUM_THREADS=1 mpiexec -n 2 python benches/distributed_scaling.py   # one engine thread per rank

Rank 0 prints one line per measurement (medians over rounds, every rank starting each
round together; the all-reduce through tensors and the MPI exchange alone take turns,
see ``harness.alternate``), and with ``--json PATH`` writes the rows with the machine
(``--compare-with OLD.json``: new/old against an earlier run). Throughput is
weak scaling: every rank trains on its own batch of the given size, the
gradients averaged over ranks each step (``Communicator.sync_gradients``),
so samples/s counts every rank's samples. docs/distributed.md has the
figures for this machine and what they imply for N machines. ``--tiny`` is the
smoke run the tests use (one round, the 1 MB all-reduce only).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from ferrum import Tensor
from ferrum.backend import Autodiff, NdArray
from ferrum.distributed import Communicator
from ferrum.nn.transformer import TransformerEncoderConfig, TransformerEncoderInput
from ferrum.optim import AdamConfig, GradientsParams
from harness import Measure, Report, Stats, Thunk, alternate, bench_parser, time_call

B = Autodiff[NdArray]


def together(comm: Communicator) -> Measure:
    """A ``Measure``: the seconds of one call, every rank starting it together (after a barrier)."""

    def measure(fn: Thunk) -> float:
        comm.barrier()
        return time_call(fn)

    return measure


def all_reduce_cost(comm: Communicator, megabytes: float, rounds: int) -> dict[str, Stats]:
    """Seconds to all-reduce ``megabytes`` of f32, through tensors (``"tensors"``) and the MPI
    exchange alone (``"exchange"``), the two taking turns round by round."""
    count = int(megabytes * 2**20 / 4)
    tensor = Tensor.from_numpy(np.ones(count, np.float32), NdArray.device())
    buffer = np.ones(count, np.float32)
    out = np.empty_like(buffer)
    return alternate(
        {
            "tensors": lambda: comm.all_reduce(tensor),
            "exchange": lambda: comm._wait(comm._comm.Iallreduce(buffer, out), "bench"),
        },
        rounds,
        warmup=1,
        measure=together(comm),
    )


def guide_cnn(batch: int) -> tuple[Any, Callable[[Any], Any], Any]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root
    from examples.guide.model import ModelConfig

    model = ModelConfig(10, 512, dropout=0.0).init(B.device())
    rng = np.random.default_rng(0)
    images = Tensor.from_numpy(rng.random((batch, 28, 28), dtype=np.float32), B.device())
    targets = Tensor.from_numpy(rng.integers(0, 10, batch), B.device())

    def loss(m: Any) -> Any:
        return m.forward_classification(images, targets).loss

    return model, loss, batch


def encoder(batch: int) -> tuple[Any, Callable[[Any], Any], Any]:
    model = TransformerEncoderConfig(256, 1024, 4, 4).with_dropout(0.0).init(B.device())
    x = Tensor.from_numpy(np.random.default_rng(0).random((batch, 128, 256), dtype=np.float32), B.device())

    def loss(m: Any) -> Any:
        return m.forward(TransformerEncoderInput(x)).square().mean()

    return model, loss, batch


def throughput(
    comm: Communicator, make: Callable[[int], Any], batch: int, steps: int, rounds: int
) -> tuple[float, Stats]:
    """Samples per second over all ranks (median over rounds of ``steps`` training steps), and the
    rounds' seconds."""
    model, loss, batch = make(batch)
    model = comm.broadcast_module(model)
    optim = AdamConfig().init()
    state = {"model": model}

    def run() -> None:
        m = state["model"]
        for _ in range(steps):
            grads = GradientsParams.from_grads(loss(m).backward(), m)
            m = optim.step(1e-4, m, comm.sync_gradients(grads))
        state["model"] = m

    stats = alternate({"train": run}, rounds, warmup=1, measure=together(comm))["train"]
    return float(comm.size * batch * steps / stats.median), stats


def main() -> None:
    parser = bench_parser(__doc__, rounds=7)
    args = parser.parse_args()
    rounds, sizes = (1, (1,)) if args.tiny else (args.rounds, (1, 10, 100))
    comm = Communicator()
    threads = os.environ.get("RAYON_NUM_THREADS", "all")
    report = Report("distributed", {"rounds": rounds, "ranks": comm.size, "threads/rank": threads})

    def say(text: str) -> None:
        if comm.is_main:
            print(f"ranks {comm.size}  threads/rank {threads}  {text}", flush=True)

    if comm.size > 1:
        for mb in sizes:
            cost = all_reduce_cost(comm, mb, rounds)
            full, exchange = cost["tensors"].median * 1e3, cost["exchange"].median * 1e3
            say(f"all_reduce {mb:>3} MB: {full:8.2f} ms (MPI exchange alone {exchange:8.2f} ms)")
            report.add(f"all_reduce {mb} MB", {"ms": full, "exchange ms": exchange}, cost["tensors"])
    rate, stats = throughput(comm, guide_cnn, 64, 10, rounds)
    say(f"guide CNN, batch 64/rank: {rate:8.0f} samples/s")
    report.add("guide CNN, batch 64/rank", {"samples/s": rate}, stats)
    rate, stats = throughput(comm, encoder, 16, 2, rounds)
    say(f"encoder d256 L4 s128, batch 16/rank: {rate:8.1f} samples/s")
    report.add("encoder d256 L4 s128, batch 16/rank", {"samples/s": rate}, stats)
    if comm.is_main:
        report.finish(args)


if __name__ == "__main__":
    main()
