"""The iteration-speed metric (Burn's ``IterationSpeedMetric``): steps per second, from the metadata."""

from __future__ import annotations

from time import perf_counter

from ferrum.train.metric.base import MetricEntry, MetricMetadata
from ferrum.train.metric.state_metric import StateMetric

__all__ = ["IterationSpeedMetric"]


class IterationSpeedMetric(StateMetric):
    """Iterations per second since the first update of the epoch. Name ``"Iteration Speed"``.

    The first update of an epoch starts the clock and records 0 with
    weight 0 (there is no interval yet); each later one records the
    iterations done since then (from ``metadata.iteration``) over the time
    elapsed. Reads the metadata and the clock, not the item.

    Example:
        >>> from ferrum.data.dataloader import Progress
        >>> from ferrum.train.metric import MetricMetadata
        >>> metric = IterationSpeedMetric()
        >>> metric.update(None, MetricMetadata(Progress(1, 10), 1, 1, iteration=1)).serialized
        '0.0,0'
        >>> metric.update(None, MetricMetadata(Progress(2, 10), 1, 1, iteration=2)).formatted
        'epoch ... iter/sec - batch ... iter/sec'
    """

    def __init__(self) -> None:
        super().__init__("Iteration Speed", unit="iter/sec")
        self._start: tuple[float, int] | None = None

    def update(self, item: object, metadata: MetricMetadata) -> MetricEntry:
        """Record the iterations per second since the epoch's first update."""
        now = perf_counter()
        if self._start is None:
            self._start = (now, metadata.iteration)
            return self._record(0.0, 0)
        started, first_iteration = self._start
        elapsed = now - started
        speed = (metadata.iteration - first_iteration) / elapsed if elapsed > 0 else 0.0
        return self._record(speed, 1)

    def clear(self) -> None:
        """Stop the clock and forget the epoch's values."""
        super().clear()
        self._start = None
