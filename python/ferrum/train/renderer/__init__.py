"""Renderers: how training progress is shown (Burn's ``renderer``).

In a terminal the Learner draws a progress bar per split and epoch
(``ProgressBarRenderer``, with tqdm: ``pip install 'ferrum-dl[progress]'``);
when stdout is not a terminal (CI, a log file), or without tqdm, it writes
plain lines (``PlainRenderer``). ``SupervisedTraining.renderer(r)`` takes
any ``MetricsRenderer`` instead.

Example:
    >>> from ferrum.train.renderer import PlainRenderer, default_renderer
    >>> isinstance(default_renderer(), PlainRenderer)  # doctest output is not a terminal
    True
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ferrum.train.renderer.base import MetricsRenderer, MetricState, TrainingProgress
from ferrum.train.renderer.plain import PlainRenderer

if TYPE_CHECKING:
    from ferrum.train.renderer.bar import ProgressBarRenderer

__all__ = [
    "MetricState",
    "MetricsRenderer",
    "PlainRenderer",
    "ProgressBarRenderer",
    "TrainingProgress",
    "default_renderer",
]

_hinted = False


def default_renderer() -> MetricsRenderer:
    """A progress bar when stdout is a terminal and tqdm is installed, plain lines otherwise.

    In a terminal without tqdm, says once how to get progress bars.
    """
    global _hinted
    if not _isatty():
        return PlainRenderer()
    try:
        from ferrum.train.renderer.bar import ProgressBarRenderer
    except ImportError:
        if not _hinted:
            _hinted = True
            print("ferrum.train: progress bars need tqdm: pip install 'ferrum-dl[progress]'", file=sys.stderr)
        return PlainRenderer()
    return ProgressBarRenderer()


def _isatty() -> bool:
    isatty = getattr(sys.stdout, "isatty", None)
    return bool(isatty and isatty())


def __getattr__(name: str) -> object:
    # The bar needs tqdm (an extra): imported when asked for, so the rest works without it.
    if name == "ProgressBarRenderer":
        from ferrum.train.renderer.bar import ProgressBarRenderer

        return ProgressBarRenderer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
