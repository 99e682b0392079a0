"""What every metric shares: Burn's ``Metric``/``Numeric`` traits as protocols.

A metric is any object with ``name()``, ``update(item, metadata)`` and
``clear()``. The Learner hands ``update`` the step's output (e.g. a
``ClassificationOutput``), already synced to the inner backend, together
with a ``MetricMetadata`` (progress, epoch, iteration, learning rate); the
metric reads what it needs from the item, updates its state and returns a
``MetricEntry``: a string to show and a string to log. A ``Numeric`` metric
also gives its value, which the Learner aggregates per epoch, plots and
uses for checkpointing and early stopping.

Example:
    >>> from ferrum.train.metric.base import MetricEntry, MetricMetadata, NumericEntry
    >>> from ferrum.train.metric.state import FormatOptions, NumericMetricState
    >>> class Constant:
    ...     higher_is_better = False
    ...     def __init__(self) -> None:
    ...         self.state = NumericMetricState()
    ...     def name(self) -> str:
    ...         return "Constant"
    ...     def update(self, item: object, metadata: MetricMetadata) -> MetricEntry:
    ...         return self.state.update(1.5, 4, FormatOptions(self.name()))
    ...     def clear(self) -> None:
    ...         self.state.reset()
    ...     def value(self) -> NumericEntry:
    ...         return self.state.current_value()
    ...     def running_value(self) -> NumericEntry:
    ...         return self.state.running_value()
    >>> Constant().update(None, MetricMetadata.fake()).serialized
    '1.5,4'
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol, TypeVar, runtime_checkable

from ferrum.data.dataloader import Progress

__all__ = [
    "Metric",
    "MetricEntry",
    "MetricMetadata",
    "Numeric",
    "NumericEntry",
    "format_float",
]

ItemT_contra = TypeVar("ItemT_contra", contravariant=True)


@dataclass(frozen=True)
class MetricMetadata:
    """Where training stands when a metric is updated: Burn's ``MetricMetadata``.

    ``epoch`` counts from 1, ``iteration`` from 1 within the run's split;
    ``lr`` is the learning rate of the step (``None`` during validation).
    """

    progress: Progress
    epoch: int
    epoch_total: int
    iteration: int
    lr: float | None = None

    @staticmethod
    def fake() -> MetricMetadata:
        """Metadata for calling a metric outside a Learner (tests, notebooks)."""
        return MetricMetadata(Progress(1, 1), epoch=1, epoch_total=1, iteration=1, lr=None)


@dataclass(frozen=True)
class MetricEntry:
    """One update of a metric: ``formatted`` for the terminal, ``serialized`` for the log file.

    Numeric metrics serialize a ``NumericEntry`` (``"value,count"`` or ``"value"``),
    which is what the Learner aggregates, plots and compares.

    Example:
        >>> entry = MetricEntry("Loss", "0.2500", NumericEntry(0.25, 32).serialize())
        >>> entry.serialized
        '0.25,32'
    """

    name: str
    formatted: str
    serialized: str


@dataclass(frozen=True)
class NumericEntry:
    """A numeric value, optionally aggregated over ``count`` items: Burn's ``NumericEntry``.

    ``count`` is ``None`` for a single value (``NumericEntry.Value``) and the
    number of items it averages for an aggregate (``NumericEntry.Aggregated``);
    epoch values are the mean of the batch values weighted by their counts.

    Example:
        >>> entry = NumericEntry(0.25, 32)
        >>> entry.serialize(), NumericEntry.deserialize("0.25,32") == entry
        ('0.25,32', True)
    """

    value: float
    count: int | None = None

    def current(self) -> float:
        """The value itself (the aggregate's value for an aggregate)."""
        return self.value

    def serialize(self) -> str:
        """``"value"`` or ``"value,count"``, as Burn writes metric logs."""
        return repr(self.value) if self.count is None else f"{self.value!r},{self.count}"

    @staticmethod
    def deserialize(entry: str) -> NumericEntry:
        """Parse what ``serialize`` wrote; a malformed entry is a ``ValueError`` naming it."""
        parts = entry.strip().split(",")
        try:
            if len(parts) == 1:
                return NumericEntry(float(parts[0]))
            if len(parts) == 2:
                count = int(parts[1])
                if count < 0:
                    raise ValueError("negative count")
                return NumericEntry(float(parts[0]), count)
        except ValueError as exc:
            raise ValueError(f"not a numeric metric entry: {entry!r} ({exc})") from None
        raise ValueError(f"not a numeric metric entry: {entry!r} (expected 'value' or 'value,count')")

    def better_than(self, other: NumericEntry, higher_is_better: bool) -> bool:
        """Whether this value beats ``other`` in the given direction."""
        return (self.current() > other.current()) == higher_is_better


@runtime_checkable
class Metric(Protocol[ItemT_contra]):
    """Burn's ``Metric``: a named, stateful summary of step outputs."""

    def name(self) -> str:
        """A unique name: the log file is ``<name>.log``, so a parameterised metric names its parameters."""
        ...

    def update(self, item: ItemT_contra, metadata: MetricMetadata) -> MetricEntry:
        """Fold one step's output into the state; return the entry to show and log."""
        ...

    def clear(self) -> None:
        """Forget the state (called at the end of every epoch and split)."""
        ...


@runtime_checkable
class Numeric(Protocol):
    """Burn's ``Numeric``: a metric with a number, which can be plotted and compared.

    ``higher_is_better`` is Burn's ``NumericAttributes::higher_is_better``.
    """

    higher_is_better: bool

    def value(self) -> NumericEntry:
        """The last update's value."""
        ...

    def running_value(self) -> NumericEntry:
        """The value aggregated over the epoch so far."""
        ...


def format_float(value: float, precision: int) -> str:
    """``value`` with ``precision`` decimals, in scientific notation when it would show as zero."""
    if math.isfinite(value) and abs(value) <= 0.1 ** (precision - 1) and value != 0.0:
        return f"{value:.{precision}e}"
    return f"{value:.{precision}f}"
