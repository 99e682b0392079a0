"""Data-parallel scaling on MPI: all-reduce cost per size, and training throughput on 1 and N ranks.

    python benches/distributed.py                       # 1 rank
    mpiexec -n 2 python benches/distributed.py          # 2 ranks
    RAYON_NUM_THREADS=1 mpiexec -n 2 python benches/distributed.py   # one engine thread per rank

Rank 0 prints one line per measurement (medians over rounds). Throughput is
weak scaling: every rank trains on its own batch of the given size, the
gradients averaged over ranks each step (``Communicator.sync_gradients``),
so samples/s counts every rank's samples. docs/distributed.md has the
figures for this machine and what they imply for N machines.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from ferrum import Tensor
from ferrum.backend import Autodiff, NdArray
from ferrum.distributed import Communicator
from ferrum.nn.transformer import TransformerEncoderConfig, TransformerEncoderInput
from ferrum.optim import AdamConfig, GradientsParams

B = Autodiff[NdArray]


def timed(step: Callable[[], None], comm: Communicator, rounds: int) -> list[float]:
    """Seconds per call of ``step``, every rank starting each round together."""
    step()
    times = []
    for _ in range(rounds):
        comm.barrier()
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return times


def all_reduce_cost(comm: Communicator, megabytes: float, rounds: int) -> tuple[float, float]:
    """Median seconds to all-reduce ``megabytes`` of f32: through tensors, and the MPI exchange alone."""
    count = int(megabytes * 2**20 / 4)
    tensor = Tensor.from_numpy(np.ones(count, np.float32), NdArray.device())
    with_tensors = timed(lambda: _discard(comm.all_reduce(tensor)), comm, rounds)
    buffer = np.ones(count, np.float32)
    out = np.empty_like(buffer)
    exchange = timed(lambda: comm._wait(comm._comm.Iallreduce(buffer, out), "bench"), comm, rounds)
    return statistics.median(with_tensors), statistics.median(exchange)


def _discard(_: object) -> None:
    pass


def guide_cnn(batch: int) -> tuple[Any, Callable[[Any], Any], Any]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
    from guide.model import ModelConfig

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


def throughput(comm: Communicator, make: Callable[[int], Any], batch: int, steps: int, rounds: int) -> float:
    """Samples per second over all ranks, median over rounds of ``steps`` training steps."""
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

    seconds = statistics.median(timed(run, comm, rounds))
    return float(comm.size * batch * steps / seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    comm = Communicator()
    threads = os.environ.get("RAYON_NUM_THREADS", "all")

    def say(text: str) -> None:
        if comm.is_main:
            print(f"ranks {comm.size}  threads/rank {threads}  {text}", flush=True)

    if comm.size > 1:
        for mb in (1, 10, 100):
            full, exchange = all_reduce_cost(comm, mb, args.rounds)
            say(f"all_reduce {mb:>3} MB: {full * 1e3:8.2f} ms (MPI exchange alone {exchange * 1e3:8.2f} ms)")
    say(f"guide CNN, batch 64/rank: {throughput(comm, guide_cnn, 64, 10, args.rounds):8.0f} samples/s")
    rate = throughput(comm, encoder, 16, 2, args.rounds)
    say(f"encoder d256 L4 s128, batch 16/rank: {rate:8.1f} samples/s")


if __name__ == "__main__":
    main()
