"""``Collectives``: the exchanges that gradient sync, module broadcast and replica checks are built on.

``Communicator`` provides them over MPI and offers those three as its own
methods (``sync_gradients``, ``broadcast_module``, ``require_same``,
``check_replicas``); the files that implement them take any object with
these members, so they stand below the communicator instead of beside it.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy.typing as npt

__all__ = ["Collectives"]


class Collectives(Protocol):
    """The members of ``Communicator`` that ``gradients``, ``module_sync`` and ``replicas`` use."""

    @property
    def rank(self) -> int:
        """This process's rank, from 0."""
        ...

    @property
    def size(self) -> int:
        """The number of ranks."""
        ...

    def broadcast_bytes(self, data: bytes | None, root: int = 0) -> bytes:
        """``root``'s bytes on every rank (the others pass ``None``)."""
        ...

    def start_sum_in_place(self, buffer: npt.NDArray[Any]) -> Any:
        """Start summing ``buffer`` over ranks into itself; ``wait(request, what)`` finishes it."""
        ...

    def wait(self, request: Any, what: str) -> None:
        """Finish a started exchange."""
        ...

    def all_gather_ints(self, values: list[int], what: str = "all_gather") -> list[list[int]]:
        """Every rank's ``values``, in rank order."""
        ...

    def all_gather_array(self, array: npt.NDArray[Any], what: str = "all_gather") -> npt.NDArray[Any]:
        """Every rank's 1-D ``array`` as the rows of a ``[size, n]`` array, in rank order."""
        ...
