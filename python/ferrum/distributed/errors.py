"""The errors of data-parallel training: a rank failed, a collective never completed, the ranks disagree."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from ferrum import FerrumError

__all__ = [
    "CollectiveTimeoutError",
    "DistributedError",
    "GradientMismatchError",
    "RankFailedError",
    "UnevenRanksError",
]


class DistributedError(FerrumError, RuntimeError):
    """A collective could not complete, or the ranks disagree about what to exchange."""

    # True for the errors every rank raises at once, from values all of them exchanged: no rank
    # needs to be told of it (a failure notice would only stop a rank that caught it), and the job
    # can end without waiting long for the others to print theirs.
    on_every_rank: ClassVar[bool] = False


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


def _by_rank(counts: Sequence[int]) -> str:
    return ", ".join(f"rank {rank}: {count}" for rank, count in enumerate(counts))


class UnevenRanksError(DistributedError):
    """The ranks hold different numbers of batches for an epoch, raised on every rank before its first step.

    A rank that runs out of batches first would leave the others waiting
    for its gradients. ``counts`` is each rank's number of batches, in rank
    order.

    Example:
        >>> error = UnevenRanksError([5, 3], "shard one dataset")
        >>> error.counts
        (5, 3)
        >>> print(error)  # doctest: +NORMALIZE_WHITESPACE
        the ranks hold different numbers of batches this epoch (rank 0: 5, rank 1: 3): expected
        every rank to hold rank 0's 5, found rank 1 with 3; every rank must take as many steps,
        or the ranks with more wait for gradients that never come; shard one dataset
    """

    on_every_rank = True

    def __init__(self, counts: Sequence[int], hint: str) -> None:
        self.counts = tuple(int(count) for count in counts)
        expected = self.counts[0]
        others = ", ".join(
            f"rank {rank} with {count}" for rank, count in enumerate(self.counts) if count != expected
        )
        super().__init__(
            f"the ranks hold different numbers of batches this epoch ({_by_rank(self.counts)}): "
            f"expected every rank to hold rank 0's {expected}, found {others}; every rank must take "
            f"as many steps, or the ranks with more wait for gradients that never come; {hint}"
        )


class GradientMismatchError(DistributedError):
    """The ranks passed ``sync_gradients`` gradients of different parameters (raised on every rank).

    ``counts`` is each rank's number of gradients, in rank order (they may
    agree while the parameters' ids or shapes differ).
    """

    on_every_rank = True

    def __init__(self, counts: Sequence[int], hint: str) -> None:
        self.counts = tuple(int(count) for count in counts)
        same = len(set(self.counts)) == 1
        detail = (
            f"each rank holds {self.counts[0]}, of parameters whose ids or shapes differ"
            if same
            else f"gradients by rank: {_by_rank(self.counts)}"
        )
        super().__init__(
            f"sync_gradients: the ranks hold gradients of different parameters ({detail}); {hint}"
        )
