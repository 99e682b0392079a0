"""Every collective on two or more ranks, checked against NumPy on each rank; rank 0 prints 'ok N ranks'.

A failed check on any rank ends the job with a non-zero exit (the rank's
exception tells the others, and the job aborts).

    mpiexec -n 2 python -m tests.distributed.mpi.collectives
"""

from __future__ import annotations

import numpy as np
from ferrum import DType, Tensor
from ferrum.backend import Autodiff, NdArray
from ferrum.data.dataloader import Progress
from ferrum.distributed import Communicator, DistributedError, ReduceOp
from ferrum.train import MetricStore, Split
from ferrum.train.metric import LossMetric
from ferrum.train.metric.base import MetricMetadata, NumericEntry
from ferrum.train.output import RegressionOutput
from ferrum.train.processor import SplitMetrics


def main() -> None:
    comm = Communicator(timeout=60.0)
    rank, size = comm.rank, comm.size
    device = NdArray.device()
    # Rank r holds r + 1 + arange: every reduction has a closed form to compare with.
    mine = np.arange(6, dtype=np.float32).reshape(2, 3) + rank + 1
    every = [np.arange(6, dtype=np.float32).reshape(2, 3) + r + 1 for r in range(size)]
    tensor = Tensor.from_numpy(mine, device)
    expected = {
        ReduceOp.SUM: np.sum(every, axis=0),
        ReduceOp.MEAN: np.mean(every, axis=0),
        ReduceOp.MAX: np.max(every, axis=0),
        ReduceOp.MIN: np.min(every, axis=0),
    }
    for op, want in expected.items():
        got = comm.all_reduce(tensor, op)
        assert got.dims() == (2, 3) and got.dtype == DType.F32, (op, got)
        np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-6)
    ints = Tensor.from_numpy(np.array([rank, 10 * rank], np.int64), device)
    assert comm.all_reduce(ints, ReduceOp.MAX).to_numpy().tolist() == [size - 1, 10 * (size - 1)]
    # An autodiff tensor is exchanged by value, and the result is a plain tensor of its inner backend.
    tracked = Tensor.from_numpy(mine, Autodiff[NdArray].device()).require_grad()
    assert not comm.all_reduce(tracked).device().is_autodiff

    np.testing.assert_array_equal(comm.broadcast(tensor, root=size - 1).to_numpy(), every[-1])
    np.testing.assert_array_equal(comm.all_gather(tensor).to_numpy(), np.concatenate(every))
    rows = Tensor.from_numpy(np.repeat(mine[:1], size, axis=0) * np.arange(1, size + 1)[:, None], device)
    part = comm.reduce_scatter(rows, ReduceOp.SUM).to_numpy()
    np.testing.assert_allclose(part, (rank + 1) * np.sum([e[:1] for e in every], axis=0), rtol=1e-6)
    comm.barrier()
    assert comm.agree(rank == size - 1) and not comm.agree(False)
    assert comm.broadcast_bytes(b"from rank 0" if rank == 0 else None) == b"from rank 0"

    # Tensors of different shapes on different ranks are an error on every rank, not a buffer overrun.
    uneven = Tensor.zeros((2 + rank,), device)
    try:
        comm.all_reduce(uneven)
    except DistributedError as err:
        assert "different tensors" in str(err), err
    else:
        raise AssertionError("all_reduce of different shapes was accepted")

    # Training metrics are combined over ranks, weighted by each rank's item count:
    # rank r's batch has r + 1 items of loss 2r + 1.
    metrics = SplitMetrics(Split.Train)
    metrics.register(LossMetric(), numeric=True)
    items = rank + 1
    loss = Tensor.from_data([float(2 * rank + 1)] * items, device).mean()
    output = RegressionOutput(loss, Tensor.zeros((items, 1), device), Tensor.zeros((items, 1), device))
    store = MetricStore([])
    entries, states = metrics.update(
        output, MetricMetadata(Progress(items, items), 1, 1, 1), store, lambda v: comm.all_reduce_array(v)
    )
    counts = [r + 1 for r in range(size)]
    want_loss = sum(c * (2 * r + 1) for r, c in enumerate(counts)) / sum(counts)
    value = NumericEntry.deserialize(entries[0].serialized)
    assert abs(value.value - want_loss) < 1e-6 and value.count == sum(counts), (entries, want_loss)
    assert states[0].running is not None and abs(states[0].running.value - want_loss) < 1e-6
    comm.barrier()
    if rank == 0:
        print(f"ok {size} ranks", flush=True)


if __name__ == "__main__":
    main()
