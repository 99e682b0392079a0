"""The errors of data-parallel training: a rank that failed, a collective that never completed."""

from __future__ import annotations

from ferrum import FerrumError

__all__ = ["CollectiveTimeoutError", "DistributedError", "RankFailedError"]


class DistributedError(FerrumError, RuntimeError):
    """A collective could not complete, or the ranks disagree about what to exchange."""


class RankFailedError(DistributedError):
    """Another rank raised: this rank stops instead of waiting for it forever.

    ``rank`` is the rank that failed and ``reason`` what it raised
    (``"ValueError: ..."``).
    """

    def __init__(self, rank: int, reason: str, during: str) -> None:
        super().__init__(f"rank {rank} failed ({reason}); this rank stopped in {during}")
        self.rank = rank
        self.reason = reason


class CollectiveTimeoutError(DistributedError):
    """A collective did not complete within the communicator's timeout (a rank died or hangs)."""
