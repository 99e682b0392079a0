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
    "ReplicaDriftError",
    "ReplicaMismatchError",
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


def _ranks(ranks: Sequence[int]) -> str:
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(str(rank) for rank in ranks)


class ReplicaMismatchError(DistributedError):
    """The ranks were started with different models or settings (raised on every rank, before training).

    ``what`` names the part that differs (``"model structure"``,
    ``"optimizer"``, ``"learning rate schedule"``, ...); ``ranks`` are the
    ranks whose ``what`` differs from rank 0's. Data-parallel replicas must
    be built the same way on every rank: the same script, arguments and
    configuration files. The message of a rank that differs shows rank 0's
    setting beside its own (for a model, the first parameter that differs).

    Example:
        >>> error = ReplicaMismatchError("optimizer", [1], "Sgd(lr=0.1)", "Sgd(lr=0.2)")
        >>> error.what, error.ranks
        ('optimizer', (1,))
        >>> print(error)  # doctest: +NORMALIZE_WHITESPACE
        the ranks were started with different optimizer: rank 1 differs from rank 0; every rank must
        build it the same way (same script, arguments and configuration); rank 0's: Sgd(lr=0.1);
        this rank's: Sgd(lr=0.2)
    """

    on_every_rank = True

    def __init__(
        self, what: str, ranks: Sequence[int], root: str | None = None, mine: str | None = None
    ) -> None:
        self.what = what
        self.ranks = tuple(int(rank) for rank in ranks)
        message = (
            f"the ranks were started with different {what}: {_ranks(self.ranks)} "
            f"{'differs' if len(self.ranks) == 1 else 'differ'} from rank 0; every rank must build it "
            "the same way (same script, arguments and configuration)"
        )
        if root is not None and mine is not None:
            message += f"; rank 0's: {root}; this rank's: {mine}"
        super().__init__(message)


class ReplicaDriftError(DistributedError):
    """The ranks' parameters are no longer equal (raised on every rank by the replica check).

    Data-parallel ranks apply the same averaged gradients with the same
    optimizer, so their parameters stay equal; when they drift apart a rank
    stepped differently (another learning rate or optimizer state, a
    gradient it did not average, a parameter it changed by hand).
    ``parameter`` is the path of the parameter that differs most, ``ranks``
    the ranks whose copy differs from rank 0's, ``relative`` the largest
    difference of the parameter's sums relative to its size.
    """

    on_every_rank = True

    def __init__(self, parameter: str, ranks: Sequence[int], relative: float, when: str) -> None:
        self.parameter = parameter
        self.ranks = tuple(int(rank) for rank in ranks)
        self.relative = float(relative)
        when = f" {when}" if when else ""
        super().__init__(
            f"the ranks' parameters drifted apart{when}: {parameter!r} on {_ranks(self.ranks)} differs "
            f"from rank 0's by {self.relative:.3g} of its size (expected equal copies); every rank must "
            "apply the same update: the same optimizer and learning rate, gradients averaged by "
            "sync_gradients, no parameter changed on one rank only"
        )
