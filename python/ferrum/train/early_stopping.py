"""Early stopping: end training when a metric stops improving (Burn's ``MetricEarlyStoppingStrategy``).

After each epoch (validation and checkpoint done) the Learner asks its
strategy ``should_stop(epoch, store)``. ``MetricEarlyStoppingStrategy``
reads a metric's epoch value; a value strictly better than the best so far
resets the count, and ``StoppingCondition.NoImprovementSince(n_epochs=n)``
stops once ``n`` epochs passed without one.

Example:
    >>> from ferrum.train import (
    ...     Aggregate, Direction, MetricEarlyStoppingStrategy, Split, StoppingCondition
    ... )
    >>> from ferrum.train.metric import NumericEntry
    >>> from ferrum.train.store import MetricStore
    >>> strategy = MetricEarlyStoppingStrategy(
    ...     "Loss", Aggregate.Mean, Direction.Lowest, Split.Valid, StoppingCondition.NoImprovementSince(2)
    ... )
    >>> store = MetricStore([])
    >>> stops = []
    >>> for epoch, loss in enumerate([0.9, 0.5, 0.6, 0.7], start=1):
    ...     store.add("Loss", epoch, Split.Valid, NumericEntry(loss))
    ...     stops.append(strategy.should_stop(epoch, store))
    >>> stops
    [False, False, False, True]
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ferrum.train.checkpoint.strategy import metric_name
from ferrum.train.store import Aggregate, Direction, MetricStore, Split

__all__ = ["EarlyStoppingStrategy", "MetricEarlyStoppingStrategy", "StoppingCondition"]

_log = logging.getLogger("ferrum.train")


class StoppingCondition:
    """Burn's ``StoppingCondition``: when an early-stopping strategy gives up.

    Example:
        >>> StoppingCondition.NoImprovementSince(n_epochs=3).n_epochs
        3
    """

    @dataclass(frozen=True)
    class NoImprovementSince:
        """Stop when the best value is ``n_epochs`` or more epochs old."""

        n_epochs: int

        def __post_init__(self) -> None:
            n = self.n_epochs
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise ValueError(f"NoImprovementSince.n_epochs must be an int >= 1, found {n!r}")


@runtime_checkable
class EarlyStoppingStrategy(Protocol):
    """Burn's ``EarlyStoppingStrategy``: whether to stop after ``epoch``."""

    def should_stop(self, epoch: int, store: MetricStore) -> bool:
        """True to end training now (``store`` holds every epoch's metric values)."""
        ...


class MetricEarlyStoppingStrategy:
    """Stop when metric ``metric`` (a metric or its name) has not improved for a while.

    ``warmup_epochs``: never stop during the first epochs (Burn's
    ``with_warmup_epochs``).

    Example:
        >>> from ferrum.train.metric import NumericEntry
        >>> from ferrum.train.store import Aggregate, Direction, MetricStore, Split
        >>> patience = StoppingCondition.NoImprovementSince(1)
        >>> strategy = MetricEarlyStoppingStrategy(
        ...     "Accuracy", Aggregate.Mean, Direction.Highest, Split.Valid, patience, warmup_epochs=2
        ... )
        >>> store = MetricStore([])
        >>> stops = []
        >>> for epoch, accuracy in enumerate([0.5, 0.4, 0.4], start=1):
        ...     store.add("Accuracy", epoch, Split.Valid, NumericEntry(accuracy))
        ...     stops.append(strategy.should_stop(epoch, store))
        >>> stops  # epoch 2 is in the warm-up
        [False, False, True]
    """

    def __init__(
        self,
        metric: object,
        aggregate: Aggregate,
        direction: Direction,
        split: Split,
        condition: StoppingCondition.NoImprovementSince,
        *,
        warmup_epochs: int | None = None,
    ) -> None:
        if not isinstance(condition, StoppingCondition.NoImprovementSince):
            raise TypeError(
                "condition must be StoppingCondition.NoImprovementSince(n_epochs), "
                f"found {type(condition).__name__}"
            )
        self.metric_name = metric_name(metric)
        self.aggregate = aggregate
        self.direction = direction
        self.split = split
        self.condition = condition
        self.warmup_epochs = warmup_epochs
        self.best_epoch = 1
        self.best_value = math.inf if direction is Direction.Lowest else -math.inf

    def with_warmup_epochs(self, warmup: int | None) -> MetricEarlyStoppingStrategy:
        """Never stop during the first ``warmup`` epochs; returns the strategy."""
        self.warmup_epochs = warmup
        return self

    def should_stop(self, epoch: int, store: MetricStore) -> bool:
        """True once ``epoch`` is ``condition.n_epochs`` past the metric's best epoch (after the warm-up).

        An epoch without a value of the metric is logged as a warning and does not stop training.
        """
        value = store.find_metric(self.metric_name, epoch, self.aggregate, self.split)
        if value is None:
            _log.warning(
                "early stopping: no %s value of metric %r for epoch %d", self.split, self.metric_name, epoch
            )
            return False
        if self.direction.better(value, self.best_value):
            _log.info("new best epoch %d, %s %s: %s", epoch, self.split, self.metric_name, value)
            self.best_value = value
            self.best_epoch = epoch
            return False
        if self.warmup_epochs is not None and epoch <= self.warmup_epochs:
            return False
        stop = epoch - self.best_epoch >= self.condition.n_epochs
        if stop:
            _log.info(
                "early stopping: no improvement of %s %s since epoch %d (%s); epoch %d: %s",
                self.split,
                self.metric_name,
                self.best_epoch,
                self.best_value,
                epoch,
                value,
            )
        return stop

    def __repr__(self) -> str:
        return (
            f"MetricEarlyStoppingStrategy({self.metric_name!r}, {self.aggregate}, {self.direction}, "
            f"{self.split}, {self.condition})"
        )
