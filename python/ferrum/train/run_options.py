"""The options a training run and an evaluation share: how progress is shown, how the run is
stopped from outside, whether ferrum's log is written, and whether a summary is printed."""

from __future__ import annotations

from typing_extensions import Self

from ferrum.train.arg_checks import require
from ferrum.train.interrupter import Interrupter
from ferrum.train.renderer import MetricsRenderer

__all__ = ["RunOptions"]


class RunOptions:
    """The setters ``SupervisedTraining`` and ``EvaluatorBuilder`` both have, as Burn's builders do.

    A subclass calls ``_init_run_options()`` in its ``__init__``; the run reads
    ``_renderer`` (None: the default bar or lines), ``_interrupter``,
    ``_summary`` and ``_application_log``.

    Example:
        >>> from ferrum.train import Interrupter, SupervisedTraining
        >>> from ferrum.train.evaluator import EvaluatorBuilder
        >>> stop = Interrupter()
        >>> EvaluatorBuilder("/tmp/run").with_interrupter(stop).summary().interrupter() is stop
        True
        >>> issubclass(SupervisedTraining, RunOptions)
        True
    """

    _renderer: MetricsRenderer | None
    _interrupter: Interrupter
    _summary: bool
    _application_log: bool

    def _init_run_options(self) -> None:
        self._renderer = None
        self._interrupter = Interrupter()
        self._summary = False
        self._application_log = True

    def renderer(self, renderer: MetricsRenderer) -> Self:
        """Show progress with ``renderer`` (start/update/end) instead of the default bar or lines."""
        require(renderer, MetricsRenderer, "a renderer has start, update and end methods")
        self._renderer = renderer
        return self

    def with_interrupter(self, interrupter: Interrupter) -> Self:
        """Use ``interrupter``: ``stop()`` it from another thread or a callback to end the run
        cleanly after the current step (training) or batch (evaluation)."""
        require(interrupter, Interrupter, "with_interrupter needs an Interrupter")
        self._interrupter = interrupter
        return self

    def interrupter(self) -> Interrupter:
        """The interrupter the run checks after every step or batch."""
        return self._interrupter

    def with_application_logger(self, enabled: bool) -> Self:
        """Whether ferrum's log is written to ``experiment.log`` (training) or ``evaluation.log``
        (evaluation) while the run lasts (default True)."""
        self._application_log = bool(enabled)
        return self

    def summary(self) -> Self:
        """Print the summary when the run ends and save it as ``summary.txt`` (training: in the
        directory; evaluation: in ``test/<name>/``, once per ``eval``)."""
        self._summary = True
        return self
