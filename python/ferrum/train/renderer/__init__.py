"""Renderers: how training progress is shown (Burn's ``renderer``).

In a terminal the Learner shows a live dashboard (``DashboardRenderer``,
Burn's TUI, with rich: ``pip install 'ferrum-dl[dashboard]'``); without rich,
a progress bar per split and epoch (``ProgressBarRenderer``, with tqdm:
``pip install 'ferrum-dl[progress]'``); when stdout is not a terminal (CI, a
log file), or with neither, it writes plain lines (``PlainRenderer``).
``SupervisedTraining.renderer(r)`` takes any ``MetricsRenderer`` instead, and
the environment variable ``FERRUM_RENDERER`` (``dashboard``, ``bar`` or
``plain``) forces one kind without touching the code.

Example:
    >>> from ferrum.train.renderer import PlainRenderer, default_renderer
    >>> isinstance(default_renderer(), PlainRenderer)  # doctest output is not a terminal
    True
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from ferrum.train.renderer.base import MetricsRenderer, MetricState, TrainingProgress
from ferrum.train.renderer.plain import PlainRenderer

if TYPE_CHECKING:
    from ferrum.train.renderer.bar import ProgressBarRenderer
    from ferrum.train.renderer.dashboard import DashboardRenderer

__all__ = [
    "DashboardRenderer",
    "MetricState",
    "MetricsRenderer",
    "PlainRenderer",
    "ProgressBarRenderer",
    "TrainingProgress",
    "default_renderer",
]

_hinted = False


RENDERER_VARIABLE = "FERRUM_RENDERER"
"""The environment variable that forces the default renderer: ``dashboard``, ``bar`` or ``plain``."""
_KINDS = ("dashboard", "bar", "plain")


def default_renderer() -> MetricsRenderer:
    """The dashboard on a terminal with rich, else a progress bar on a terminal with tqdm, else plain lines.

    The dashboard needs stdout to be a real terminal (a file descriptor that
    is a tty: it redraws in place at the terminal's size); a stream that only
    says it is a terminal gets the bar. ``FERRUM_RENDERER`` forces a kind (an
    ``ImportError`` names the extra it needs when that is missing). In a
    terminal without rich nor tqdm, says once how to get progress bars.
    """
    global _hinted
    forced = os.environ.get(RENDERER_VARIABLE, "").strip().lower()
    if forced:
        return _forced(forced)
    if not _isatty():
        return PlainRenderer()
    if _is_real_terminal():
        try:
            from ferrum.train.renderer.dashboard import DashboardRenderer
        except ImportError:
            pass
        else:
            return DashboardRenderer()
    try:
        from ferrum.train.renderer.bar import ProgressBarRenderer
    except ImportError:
        if not _hinted:
            _hinted = True
            print("ferrum.train: progress bars need tqdm: pip install 'ferrum-dl[progress]'", file=sys.stderr)
        return PlainRenderer()
    return ProgressBarRenderer()


def _forced(kind: str) -> MetricsRenderer:
    if kind == "plain":
        return PlainRenderer()
    if kind not in _KINDS:
        raise ValueError(f"{RENDERER_VARIABLE} must be one of {', '.join(_KINDS)}, found {kind!r}")
    extra = "dashboard" if kind == "dashboard" else "progress"
    try:
        if kind == "dashboard":
            from ferrum.train.renderer.dashboard import DashboardRenderer

            return DashboardRenderer()
        from ferrum.train.renderer.bar import ProgressBarRenderer

        return ProgressBarRenderer()
    except ImportError as err:
        raise ImportError(
            f"{RENDERER_VARIABLE}={kind} needs {err.name}: pip install 'ferrum-dl[{extra}]'"
        ) from err


def _isatty() -> bool:
    isatty = getattr(sys.stdout, "isatty", None)
    return bool(isatty and isatty())


def _is_real_terminal() -> bool:
    try:
        return os.isatty(sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError and a ValueError
        return False


def __getattr__(name: str) -> object:
    # The bar needs tqdm and the dashboard rich (extras): imported when asked for, so the rest works
    # without them.
    if name == "ProgressBarRenderer":
        from ferrum.train.renderer.bar import ProgressBarRenderer

        return ProgressBarRenderer
    if name == "DashboardRenderer":
        from ferrum.train.renderer.dashboard import DashboardRenderer

        return DashboardRenderer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
