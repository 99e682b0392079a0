"""Gradient synchronisation: every rank's ``GradientsParams`` averaged, in buckets, as PyTorch's DDP does.

Gradients are taken in a fixed order (by ``ParamId``, which every rank
shares once the module was broadcast), packed per dtype into flat buffers
of about ``bucket_mb`` megabytes and all-reduced. Every bucket's all-reduce
is started before the first is waited for, so packing the next bucket
overlaps the exchange of the previous one.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ferrum._ferrum import Tensor
from ferrum.distributed.collectives import Collectives
from ferrum.distributed.errors import GradientMismatchError
from ferrum.module import ParamId
from ferrum.optim import GradientsParams

__all__ = ["sync_gradients"]

_MASK = (1 << 63) - 1


# What to do about gradients of different parameters depends on who broadcast the module: a
# custom loop must do it itself, the Learner (DataParallel) did it at launch.
_BROADCAST_HINT = (
    "broadcast the module from rank 0 first (comm.broadcast_module(model)) so that parameter ids "
    "agree, and let every rank's loss reach the same parameters"
)
_LEARNER_HINT = (
    "the Learner broadcast rank 0's model at launch, so the ids agree: every rank's loss must reach "
    "the same parameters (a layer used only for some batches, or only on some ranks, leaves it out)"
)


def sync_gradients(
    comm: Collectives, grads: GradientsParams, bucket_mb: float, *, learner: bool = False
) -> GradientsParams:
    """The mean over ranks of each gradient in ``grads`` (see ``Communicator.sync_gradients``).

    ``learner``: called by the Learner's ``DataParallel``, which broadcast the
    module itself (the error on mismatched parameters gives the hint that fits).
    """
    if not isinstance(grads, GradientsParams):
        raise TypeError(
            "sync_gradients needs GradientsParams (GradientsParams.from_grads(...)), "
            f"found {type(grads).__name__}"
        )
    if not bucket_mb > 0:
        raise ValueError(f"sync_gradients: bucket_mb must be > 0, found {bucket_mb!r}")
    entries = sorted(grads, key=lambda entry: entry[0].value)
    _check_same_parameters(comm, entries, _LEARNER_HINT if learner else _BROADCAST_HINT)
    if comm.size == 1:
        return grads
    arrays = [(pid, tensor, np.ascontiguousarray(tensor.to_numpy())) for pid, tensor in entries]
    pending: list[
        tuple[Any, npt.NDArray[Any], list[tuple[ParamId, Tensor[Any, Any, Any], tuple[int, ...]]]]
    ] = []
    limit = int(bucket_mb * 2**20)
    for dtype in sorted({array.dtype.str for _, _, array in arrays}):
        members = [entry for entry in arrays if entry[2].dtype.str == dtype]
        for bucket in _buckets(members, limit):
            flat = np.concatenate([array.reshape(-1) for _, _, array in bucket])
            request = comm.start_sum_in_place(flat)
            pending.append((request, flat, [(pid, tensor, array.shape) for pid, tensor, array in bucket]))
    out = GradientsParams()
    for request, flat, layout in pending:
        comm.wait(request, "sync_gradients")
        flat /= comm.size
        offset = 0
        for pid, tensor, shape in layout:
            count = int(np.prod(shape, dtype=np.int64))
            piece = flat[offset : offset + count].reshape(shape)
            offset += count
            out.register(pid, Tensor.from_numpy(piece, tensor.device(), dtype=tensor.dtype))
    return out


def _buckets(
    members: list[tuple[ParamId, Tensor[Any, Any, Any], npt.NDArray[Any]]], limit: int
) -> list[list[tuple[ParamId, Tensor[Any, Any, Any], npt.NDArray[Any]]]]:
    buckets: list[list[tuple[ParamId, Tensor[Any, Any, Any], npt.NDArray[Any]]]] = [[]]
    size = 0
    for member in members:
        if buckets[-1] and size + member[2].nbytes > limit:
            buckets.append([])
            size = 0
        buckets[-1].append(member)
        size += member[2].nbytes
    return [bucket for bucket in buckets if bucket]


def _check_same_parameters(
    comm: Collectives, entries: list[tuple[ParamId, Tensor[Any, Any, Any]]], hint: str
) -> None:
    """Every rank must send gradients of the same parameters: compare counts and an id checksum.

    One all-gather, so that every rank raises the same error naming each rank's count.
    """
    digest = 0
    for pid, tensor in entries:
        digest = (digest * 1_000_003 + pid.value + sum(tensor.dims())) & _MASK
    rows = comm.all_gather_ints([len(entries), digest], "sync_gradients")
    if any(row != rows[0] for row in rows):
        raise GradientMismatchError([row[0] for row in rows], hint)
