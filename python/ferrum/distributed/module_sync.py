"""The same start on every rank: rank 0's module (parameters, their ids, running statistics) sent to all."""

from __future__ import annotations

from typing import Any, TypeVar

from ferrum.distributed.collectives import Collectives
from ferrum.distributed.replicas import require_same, structure
from ferrum.module import Module
from ferrum.record import NamedMpkBytesRecorder

__all__ = ["broadcast_module"]

M = TypeVar("M", bound=Module[Any])


def broadcast_module(comm: Collectives, module: M, root: int) -> M:
    """``root``'s ``module`` on every rank, as a record (full precision), loaded onto each rank's device.

    ``ReplicaMismatchError`` on every rank when the ranks' modules differ in structure.
    """
    if not isinstance(module, Module):
        raise TypeError(f"broadcast_module needs a Module, found {type(module).__name__}")
    if comm.size == 1:
        return module
    # Before any record moves: a record loaded into a model of another shape would be filled in
    # from this rank's own weights wherever the two differ, with no error.
    require_same(comm, "model structure", structure(module))
    devices = module.devices()
    if not devices:
        return module
    recorder = NamedMpkBytesRecorder()
    data = comm.broadcast_bytes(recorder.record(module.into_record()) if comm.rank == root else None, root)
    if comm.rank == root:
        return module
    return module.load_record(recorder.load(data, devices[0], module.into_record()))
