"""The metric store: epoch values of numeric metrics, for checkpointing, early stopping and summaries.

Burn's ``metric::store``: ``Split`` (train, valid, test), ``Aggregate``
(how an epoch's batch values combine: the mean weighted by their counts)
and ``Direction`` (which way is better). ``MetricStore.find_metric`` gives
a metric's epoch value and ``find_epoch`` the best epoch so far; values of
the running epochs are kept in memory as they are logged, older ones
(before a resumed run started) are read back from the metric loggers.

Example:
    >>> from ferrum.train.metric import NumericEntry
    >>> from ferrum.train.store import Aggregate, Direction, MetricStore, Split
    >>> store = MetricStore([])
    >>> store.add("Loss", 1, Split.Valid, NumericEntry(0.5, 10))
    >>> store.add("Loss", 1, Split.Valid, NumericEntry(2.0, 5))
    >>> store.add("Loss", 2, Split.Valid, NumericEntry(0.25, 15))
    >>> store.find_metric("Loss", 1, Aggregate.Mean, Split.Valid)
    1.0
    >>> store.find_epoch("Loss", Aggregate.Mean, Direction.Lowest, Split.Valid)
    2
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence

from ferrum.train.logger import MetricLogger
from ferrum.train.metric.base import NumericEntry
from ferrum.train.split import Split

__all__ = ["Aggregate", "Direction", "MetricStore", "Split"]


class Aggregate(enum.Enum):
    """Burn's ``Aggregate``: how an epoch's batch values combine (the mean weighted by their counts).

    Example:
        >>> from ferrum.train.metric import NumericEntry
        >>> store = MetricStore([])
        >>> store.add("Loss", 1, Split.Valid, NumericEntry(1.0, 1))
        >>> store.add("Loss", 1, Split.Valid, NumericEntry(0.0, 3))
        >>> store.find_metric("Loss", 1, Aggregate.Mean, Split.Valid)
        0.25
    """

    Mean = "mean"


class Direction(enum.Enum):
    """Burn's ``Direction``: whether the lowest or the highest value is the best.

    Example:
        >>> Direction.Lowest.better(0.1, 0.2), Direction.Highest.better(0.1, 0.2)
        (True, False)
    """

    Lowest = "lowest"
    Highest = "highest"

    def better(self, value: float, than: float) -> bool:
        """Whether ``value`` strictly beats ``than`` (NaN never does)."""
        return value < than if self is Direction.Lowest else value > than


class _Sum:
    __slots__ = ("count", "total")

    def __init__(self) -> None:
        self.total = 0.0
        self.count = 0

    def add(self, entry: NumericEntry) -> None:
        # Burn's rule: a plain value counts once, an aggregate `count` times.
        count = 1 if entry.count is None else entry.count
        if count:
            self.total += entry.value * count
            self.count += count

    def mean(self) -> float | None:
        return self.total / self.count if self.count else None


class MetricStore:
    """Epoch values of numeric metrics (Burn's ``EventStoreClient`` as the strategies see it).

    ``loggers`` are asked for the entries of epochs this store has not seen
    (a resumed run's earlier epochs), in order, the first that has any wins.

    Example:
        >>> from ferrum.train.metric import NumericEntry
        >>> store = MetricStore([])
        >>> for epoch, loss in [(1, 0.5), (2, 0.3), (3, 0.4)]:
        ...     store.add("Loss", epoch, Split.Valid, NumericEntry(loss))
        >>> store.find_epoch("Loss", Aggregate.Mean, Direction.Lowest, Split.Valid)
        2
    """

    def __init__(self, loggers: Sequence[MetricLogger]) -> None:
        self._loggers = list(loggers)
        self._sums: dict[tuple[str, int, Split], _Sum] = {}
        self._read: dict[tuple[str, int, Split], float | None] = {}

    def add(self, name: str, epoch: int, split: Split, entry: NumericEntry) -> None:
        """Count one logged entry of metric ``name`` into its epoch's value."""
        key = (name, epoch, split)
        found = self._sums.get(key)
        if found is None:
            found = self._sums[key] = _Sum()
        found.add(entry)

    def forget_from(self, epoch: int) -> None:
        """Drop every value of epochs ``epoch`` and later (a run starting there writes them anew)."""
        for table in (self._sums, self._read):
            for key in [key for key in table if key[1] >= epoch]:
                del table[key]

    def find_metric(self, name: str, epoch: int, aggregate: Aggregate, split: Split) -> float | None:
        """The epoch value of metric ``name``, or None when that epoch has no entry of it."""
        if aggregate is not Aggregate.Mean:
            raise ValueError(f"unknown aggregate {aggregate!r}; Burn's is Aggregate.Mean")
        key = (name, epoch, split)
        found = self._sums.get(key)
        if found is not None:
            return found.mean()
        if key not in self._read:
            self._read[key] = self._from_loggers(name, epoch, split)
        return self._read[key]

    def find_epoch(self, name: str, aggregate: Aggregate, direction: Direction, split: Split) -> int | None:
        """The epoch (from 1) with the best value of ``name`` so far; the earliest wins a tie."""
        best_epoch: int | None = None
        best = 0.0
        epoch = 1
        while (value := self.find_metric(name, epoch, aggregate, split)) is not None:
            if (
                best_epoch is None
                or (math.isnan(best) and not math.isnan(value))
                or direction.better(value, best)
            ):
                best_epoch, best = epoch, value
            epoch += 1
        return best_epoch

    def epoch_values(self, name: str, split: Split, last_epoch: int) -> list[tuple[int, float]]:
        """``(epoch, value)`` for every epoch up to ``last_epoch`` that has a value of ``name``."""
        values = (
            (epoch, self.find_metric(name, epoch, Aggregate.Mean, split))
            for epoch in range(1, last_epoch + 1)
        )
        return [(epoch, value) for epoch, value in values if value is not None]

    def _from_loggers(self, name: str, epoch: int, split: Split) -> float | None:
        for logger in self._loggers:
            entries = logger.read_numeric(name, epoch, split)
            if entries:
                total = _Sum()
                for entry in entries:
                    total.add(entry)
                return total.mean()
        return None
