"""The user's renderer: how the Learner shows progress, replaced by one written here.

A renderer is told three things (``MetricsRenderer``): a split's epoch
starts, a step is done (with every metric's state), the epoch's split is
over. Burn's example prints the progress structures as they come; this one
draws its own compact lines: a bar every ``every`` steps, and an epoch line
with the epoch's metrics and how long it took.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import TextIO

from ferrum.train import MetricsRenderer, MetricState, TrainingProgress


class CustomRenderer(MetricsRenderer):
    """Writes ``[custom] ...`` lines to ``stream`` (default stdout)."""

    def __init__(self, every: int = 10, width: int = 20, stream: TextIO | None = None) -> None:
        self.every = every
        self.width = width
        self.stream = stream
        self.lines = 0  # how many lines it wrote: the example reports it
        self._started = 0.0
        self._metrics: Sequence[MetricState] = ()

    def _write(self, line: str) -> None:
        print(f"[custom] {line}", file=self.stream or sys.stdout, flush=True)
        self.lines += 1

    def start(self, progress: TrainingProgress) -> None:
        self._started = time.monotonic()
        self._metrics = ()
        total = progress.progress.items_total
        self._write(f"{progress.split.value} epoch {progress.epoch}/{progress.epoch_total}: {total} items")

    def update(self, progress: TrainingProgress, metrics: Sequence[MetricState]) -> None:
        self._metrics = metrics
        if progress.iteration % self.every:
            return
        done, total = progress.progress.items_processed, progress.progress.items_total
        filled = self.width * done // max(total, 1)
        bar = "#" * filled + "." * (self.width - filled)
        self._write(
            f"  {progress.split.value} step {progress.iteration:>4} [{bar}] {done}/{total}  "
            + _values(metrics, running=False)
        )

    def end(self, progress: TrainingProgress) -> None:
        seconds = time.monotonic() - self._started
        self._write(
            f"{progress.split.value} epoch {progress.epoch}/{progress.epoch_total} done in {seconds:.1f}s: "
            f"{progress.iteration} steps, " + _values(self._metrics, running=True)
        )


def _values(metrics: Sequence[MetricState], running: bool) -> str:
    """``"Loss=0.512 Accuracy=84.375"``: each numeric metric's step value, or its epoch value so far."""
    parts = []
    for state in metrics:
        entry = state.running if running else state.value
        parts.append(
            f"{state.name}={entry.value:.4g}"
            if entry is not None
            else f"{state.name}={state.entry.formatted}"
        )
    return " ".join(parts)
