"""``PlainRenderer``: progress as plain lines, for logs and CI (stdout that is not a terminal).

One line at most every ``interval`` seconds while a split's epoch runs,
and one when it ends, e.g.::

    [train] epoch 1/3  1280/4000 items (32%)  1587 items/s  ETA 2s  Loss 0.6123  Accuracy 81.25
    [train] epoch 1/3  done: 4000 items in 2.5s (1600 items/s)  Loss 0.5123  Accuracy 84.1

Example:
    >>> import io
    >>> from ferrum.data.dataloader import Progress
    >>> from ferrum.train.renderer import PlainRenderer, TrainingProgress
    >>> from ferrum.train.store import Split
    >>> out = io.StringIO()
    >>> renderer = PlainRenderer(interval=60.0, stream=out)
    >>> renderer.start(TrainingProgress(Split.Valid, 2, 5, 0, Progress(0, 10)))
    >>> renderer.update(TrainingProgress(Split.Valid, 2, 5, 1, Progress(10, 10)), [])
    >>> renderer.end(TrainingProgress(Split.Valid, 2, 5, 1, Progress(10, 10)))
    >>> out.getvalue().startswith("[valid] epoch 2/5  done: 10 items in ")
    True
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import TextIO

from ferrum.train.renderer.base import MetricState, TrainingProgress, format_duration, format_metrics

__all__ = ["PlainRenderer"]


class PlainRenderer:
    """Writes a progress line every ``interval`` seconds and one per finished split epoch.

    ``stream`` defaults to ``sys.stdout`` (looked up at each write, so
    redirections apply); ``clock`` is for tests. The Learner uses it where
    stdout is not a terminal (CI, a log file); ``SupervisedTraining.renderer``
    sets it anywhere.

    Example:
        >>> PlainRenderer(interval=30.0).interval  # SupervisedTraining(...).renderer(PlainRenderer(30.0))
        30.0
    """

    def __init__(
        self,
        interval: float = 10.0,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not interval >= 0.0:
            raise ValueError(f"PlainRenderer.interval must be >= 0 seconds, found {interval!r}")
        self.interval = interval
        self._stream = stream
        self._clock = clock
        self._started = 0.0
        self._last_line = 0.0
        self._metrics: Sequence[MetricState] = ()

    def start(self, progress: TrainingProgress) -> None:
        """Start the epoch's clock."""
        self._started = self._last_line = self._clock()
        self._metrics = ()

    def update(self, progress: TrainingProgress, metrics: Sequence[MetricState]) -> None:
        """Write a progress line (items, speed, ETA, metrics) when ``interval`` seconds have passed since the
        last.
        """
        self._metrics = metrics
        now = self._clock()
        if now - self._last_line < self.interval:
            return
        self._last_line = now
        done, total = progress.progress.items_processed, progress.progress.items_total
        elapsed = now - self._started
        speed = done / elapsed if elapsed > 0 else float("nan")
        eta = (total - done) / speed if speed > 0 else float("nan")
        percent = f" ({100 * done // total}%)" if total else ""
        self._write(
            f"{_prefix(progress)}  {done}/{total} items{percent}  {speed:.0f} items/s  "
            f"ETA {format_duration(eta)}  {format_metrics(metrics)}"
        )

    def end(self, progress: TrainingProgress) -> None:
        """Write the epoch's summary line: items done, time, speed and metrics."""
        elapsed = self._clock() - self._started
        done = progress.progress.items_processed
        speed = f" ({done / elapsed:.0f} items/s)" if elapsed > 0 else ""
        cut = "" if done >= progress.progress.items_total else f" of {progress.progress.items_total}"
        self._write(
            f"{_prefix(progress)}  done: {done}{cut} items in {format_duration(elapsed)}{speed}  "
            f"{format_metrics(self._metrics)}"
        )

    def _write(self, line: str) -> None:
        stream = self._stream or sys.stdout
        stream.write(line.rstrip() + "\n")
        stream.flush()


def _prefix(progress: TrainingProgress) -> str:
    if progress.evaluation is not None:
        return f"[{progress.split}] {progress.evaluation}"
    return f"[{progress.split}] epoch {progress.epoch}/{progress.epoch_total}"
