"""The same start on every rank: rank 0's module (parameters, their ids, running statistics) sent to all."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from ferrum.module import Module
from ferrum.record import NamedMpkBytesRecorder

if TYPE_CHECKING:
    from ferrum.distributed.communicator import Communicator

__all__ = ["broadcast_module"]

M = TypeVar("M", bound=Module[Any])


def broadcast_module(comm: Communicator, module: M, root: int) -> M:
    """``root``'s ``module`` on every rank, as a record (full precision), loaded onto each rank's device."""
    if not isinstance(module, Module):
        raise TypeError(f"broadcast_module needs a Module, found {type(module).__name__}")
    devices = module.devices()
    if comm.size == 1 or not devices:
        return module
    recorder = NamedMpkBytesRecorder()
    data = comm.broadcast_bytes(recorder.record(module.into_record()) if comm.rank == root else None, root)
    if comm.rank == root:
        return module
    return module.load_record(recorder.load(data, devices[0], module.into_record()))
