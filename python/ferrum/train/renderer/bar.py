"""``ProgressBarRenderer``: a tqdm progress bar per split and epoch, for terminals (extra ``[progress]``).

Each bar shows the items done and the total, the speed, the elapsed time
and the ETA, and the running epoch value of every metric::

    train 1/3:  45%|█████▍      | 1792/4000 [00:01<00:01, 1503.2item/s, Loss 0.6123  Accuracy 81.25]

Example:
    >>> import io
    >>> from ferrum.data.dataloader import Progress
    >>> from ferrum.train.renderer import ProgressBarRenderer, TrainingProgress
    >>> from ferrum.train.store import Split
    >>> out = io.StringIO()
    >>> renderer = ProgressBarRenderer(stream=out)
    >>> renderer.start(TrainingProgress(Split.Train, 1, 3, 0, Progress(0, 4)))
    >>> renderer.update(TrainingProgress(Split.Train, 1, 3, 1, Progress(4, 4)), [])
    >>> renderer.end(TrainingProgress(Split.Train, 1, 3, 1, Progress(4, 4)))
    >>> "train 1/3: 100%" in out.getvalue() and "4/4" in out.getvalue()
    True
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from tqdm import tqdm

from ferrum.train.renderer.base import MetricState, TrainingProgress, format_metrics

__all__ = ["ProgressBarRenderer"]

# The metrics text is rebuilt at most this often: tqdm redraws ~10 times a second anyway.
_POSTFIX_INTERVAL = 0.25


class ProgressBarRenderer:
    """One tqdm bar per split epoch, left on screen when it ends; writes to ``stream`` (default stdout)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream
        self._bar: tqdm[Any] | None = None
        self._postfix_at = 0.0
        self._metrics: Sequence[MetricState] = ()

    def start(self, progress: TrainingProgress) -> None:
        """Open a tqdm bar for the split's epoch, sized for the terminal."""
        self._close()
        self._metrics = ()
        self._postfix_at = 0.0
        stream = self._stream or sys.stdout
        # A terminal that reports a 0x0 size (some pseudo-terminals) would hide the bar: use 80x24.
        sized = _sized(stream)
        fallback = shutil.get_terminal_size()
        self._bar = tqdm(
            total=progress.progress.items_total,
            desc=_description(progress),
            unit="item",
            file=stream,
            dynamic_ncols=sized,
            ncols=None if sized else fallback.columns,
            nrows=None if sized else fallback.lines,
            leave=True,
        )

    def update(self, progress: TrainingProgress, metrics: Sequence[MetricState]) -> None:
        """Advance the bar to the items processed; the metrics' running values are refreshed a few times a
        second.
        """
        bar = self._bar
        if bar is None:
            return
        self._metrics = metrics
        now = time.monotonic()
        if now - self._postfix_at >= _POSTFIX_INTERVAL:
            self._postfix_at = now
            bar.set_postfix_str(format_metrics(metrics), refresh=False)
        bar.update(progress.progress.items_processed - bar.n)

    def end(self, progress: TrainingProgress) -> None:
        """Show the final metric values and close the bar, left on screen."""
        bar = self._bar
        if bar is None:
            return
        bar.set_postfix_str(format_metrics(self._metrics), refresh=False)
        bar.update(progress.progress.items_processed - bar.n)
        self._close()

    def _close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _description(progress: TrainingProgress) -> str:
    """``"train 1/3"``; an evaluation's bar is named after it: ``"test Plain"``."""
    if progress.evaluation is not None:
        return f"{progress.split} {progress.evaluation}"
    return f"{progress.split} {progress.epoch}/{progress.epoch_total}"


def _sized(stream: TextIO) -> bool:
    """False for a terminal that says it has no columns or rows."""
    try:
        size = os.get_terminal_size(stream.fileno())
    except (AttributeError, OSError, ValueError):
        return True  # not a terminal (a file, a StringIO): tqdm's own logic applies
    return size.columns > 0 and size.lines > 0
