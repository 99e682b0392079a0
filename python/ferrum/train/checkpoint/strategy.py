"""Which checkpoints to write and which to delete after each epoch: Burn's checkpointing strategies.

After an epoch's validation the Learner asks its strategy what to do; the
answer is a list of actions, ``CheckpointingAction.Save()`` (write this
epoch's checkpoint) and ``CheckpointingAction.Delete(epoch)`` (remove an
older one). The default keeps the last two epochs plus the best one by
validation loss:

Example:
    >>> from ferrum.train.checkpoint import (
    ...     CheckpointingAction, ComposedCheckpointingStrategy, KeepLastNCheckpoints
    ... )
    >>> from ferrum.train.store import MetricStore
    >>> strategy = ComposedCheckpointingStrategy(KeepLastNCheckpoints(1), KeepLastNCheckpoints(2))
    >>> store = MetricStore([])
    >>> [strategy.checkpointing(epoch, store) for epoch in (1, 2, 3)][-1]
    [CheckpointingAction.Save(), CheckpointingAction.Delete(epoch=1)]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Union, runtime_checkable

from ferrum.train.store import Aggregate, Direction, MetricStore, Split

__all__ = [
    "CheckpointingAction",
    "CheckpointingStrategy",
    "ComposedCheckpointingStrategy",
    "ComposedCheckpointingStrategyBuilder",
    "KeepLastNCheckpoints",
    "MetricCheckpointingStrategy",
    "metric_name",
]


class CheckpointingAction:
    """Burn's ``CheckpointingAction``: its two variants, ``Save()`` and ``Delete(epoch)``."""

    @dataclass(frozen=True)
    class Save:
        """Write the current epoch's checkpoint."""

        def __repr__(self) -> str:
            return "CheckpointingAction.Save()"

    @dataclass(frozen=True)
    class Delete:
        """Remove the checkpoint of ``epoch``."""

        epoch: int

        def __repr__(self) -> str:
            return f"CheckpointingAction.Delete(epoch={self.epoch})"


Action = Union[CheckpointingAction.Save, CheckpointingAction.Delete]  # noqa: UP007 - a runtime alias on 3.10


@runtime_checkable
class CheckpointingStrategy(Protocol):
    """Burn's ``CheckpointingStrategy``: the actions to take at the end of ``epoch``."""

    def checkpointing(self, epoch: int, store: MetricStore) -> list[Action]:
        """What to save and delete now that ``epoch`` is over (``store`` has its metric values)."""
        ...


def metric_name(metric: object) -> str:
    """A metric's name: ``metric.name()``, or the string itself."""
    if isinstance(metric, str):
        return metric
    name = getattr(metric, "name", None)
    if not callable(name):
        raise TypeError(f"expected a metric (with name()) or a metric name, found {type(metric).__name__}")
    return str(name())


class KeepLastNCheckpoints:
    """Save every epoch and delete the one ``num_keep`` epochs back (Burn's ``KeepLastNCheckpoints``).

    Example:
        >>> from ferrum.train.checkpoint import KeepLastNCheckpoints
        >>> from ferrum.train.store import MetricStore
        >>> keep = KeepLastNCheckpoints(2)
        >>> keep.checkpointing(3, MetricStore([]))
        [CheckpointingAction.Save(), CheckpointingAction.Delete(epoch=1)]
    """

    def __init__(self, num_keep: int) -> None:
        if isinstance(num_keep, bool) or not isinstance(num_keep, int) or num_keep < 1:
            raise ValueError(f"KeepLastNCheckpoints.num_keep must be an int >= 1, found {num_keep!r}")
        self.num_keep = num_keep

    def checkpointing(self, epoch: int, store: MetricStore) -> list[Action]:
        """Save ``epoch`` and delete epoch ``epoch - num_keep`` when there is one."""
        actions: list[Action] = [CheckpointingAction.Save()]
        if epoch - self.num_keep > 0:
            actions.append(CheckpointingAction.Delete(epoch - self.num_keep))
        return actions

    def __repr__(self) -> str:
        return f"KeepLastNCheckpoints({self.num_keep})"


class MetricCheckpointingStrategy:
    """Keep only the best epoch by a metric's epoch value (Burn's ``MetricCheckpointingStrategy``).

    ``metric`` is a metric (its ``name()`` is used) or a metric name.

    Example:
        >>> from ferrum.train.checkpoint import MetricCheckpointingStrategy
        >>> from ferrum.train.metric import NumericEntry
        >>> from ferrum.train.store import Aggregate, Direction, MetricStore, Split
        >>> store = MetricStore([])
        >>> best = MetricCheckpointingStrategy("Loss", Aggregate.Mean, Direction.Lowest, Split.Valid)
        >>> store.add("Loss", 1, Split.Valid, NumericEntry(0.5))
        >>> best.checkpointing(1, store)
        [CheckpointingAction.Save()]
        >>> store.add("Loss", 2, Split.Valid, NumericEntry(0.9))
        >>> best.checkpointing(2, store)
        []
    """

    def __init__(self, metric: object, aggregate: Aggregate, direction: Direction, split: Split) -> None:
        self.name = metric_name(metric)
        self.aggregate = aggregate
        self.direction = direction
        self.split = split
        self._current: int | None = None

    def checkpointing(self, epoch: int, store: MetricStore) -> list[Action]:
        """Save ``epoch`` when it is the metric's best so far, and delete the best it replaces."""
        best = store.find_epoch(self.name, self.aggregate, self.direction, self.split)
        best_epoch = epoch if best is None else best
        actions: list[Action] = []
        if self._current is not None and self._current != best_epoch:
            actions.append(CheckpointingAction.Delete(self._current))
        if best_epoch == epoch:
            actions.append(CheckpointingAction.Save())
        self._current = best_epoch
        return actions

    def __repr__(self) -> str:
        return f"MetricCheckpointingStrategy({self.name!r}, {self.aggregate}, {self.direction}, {self.split})"


class ComposedCheckpointingStrategy:
    """Several strategies at once: save when any saves, delete when all of them gave an epoch up.

    Burn's ``ComposedCheckpointingStrategy``; build it from strategies
    directly or with ``ComposedCheckpointingStrategy.builder().add(s).build()``.

    Example:
        >>> from ferrum.train.store import Aggregate, Direction, MetricStore, Split
        >>> best = MetricCheckpointingStrategy("Loss", Aggregate.Mean, Direction.Lowest, Split.Valid)
        >>> both = ComposedCheckpointingStrategy.builder().add(KeepLastNCheckpoints(2)).add(best).build()
        >>> both.checkpointing(1, MetricStore([]))
        [CheckpointingAction.Save()]
    """

    def __init__(self, *strategies: CheckpointingStrategy) -> None:
        for strategy in strategies:
            if not isinstance(strategy, CheckpointingStrategy):
                raise TypeError(
                    "ComposedCheckpointingStrategy takes strategies (with checkpointing(epoch, store)), "
                    f"found {type(strategy).__name__}"
                )
        self.strategies = list(strategies)
        self._deleted: list[set[int]] = [set() for _ in strategies]

    @staticmethod
    def builder() -> ComposedCheckpointingStrategyBuilder:
        """An empty builder."""
        return ComposedCheckpointingStrategyBuilder()

    def checkpointing(self, epoch: int, store: MetricStore) -> list[Action]:
        """Save when any strategy saves ``epoch``; delete an epoch once every strategy has given it up."""
        saved = False
        to_check: list[int] = []
        for deleted, strategy in zip(self._deleted, self.strategies, strict=True):
            actions = strategy.checkpointing(epoch, store)
            # A strategy that neither saves nor deletes does not want this epoch.
            if not actions:
                deleted.add(epoch)
            for action in actions:
                if isinstance(action, CheckpointingAction.Delete):
                    deleted.add(action.epoch)
                    to_check.append(action.epoch)
                else:
                    saved = True
        out: list[Action] = [CheckpointingAction.Save()] if saved else []
        for old in to_check:
            if all(old in deleted for deleted in self._deleted):
                out.append(CheckpointingAction.Delete(old))
                for deleted in self._deleted:
                    deleted.discard(old)
        return out

    def __repr__(self) -> str:
        return f"ComposedCheckpointingStrategy({', '.join(map(repr, self.strategies))})"


class ComposedCheckpointingStrategyBuilder:
    """Collects strategies for a ``ComposedCheckpointingStrategy``."""

    def __init__(self) -> None:
        self._strategies: list[CheckpointingStrategy] = []

    def add(self, strategy: CheckpointingStrategy) -> ComposedCheckpointingStrategyBuilder:
        """Add one strategy; returns the builder."""
        self._strategies.append(strategy)
        return self

    def build(self) -> ComposedCheckpointingStrategy:
        """The composed strategy."""
        return ComposedCheckpointingStrategy(*self._strategies)
