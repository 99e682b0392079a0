"""What a renderer is told: the ``MetricsRenderer`` protocol, ``TrainingProgress`` and ``MetricState``.

The Learner calls ``start`` when a split's epoch begins, ``update`` after
every step with the progress and each metric's state, and ``end`` when the
epoch's split is over. A renderer of the user's is any object with these
three methods, given to ``SupervisedTraining.renderer``.

Example:
    >>> from ferrum.train.renderer import MetricState, MetricsRenderer, TrainingProgress
    >>> class Quiet:
    ...     def __init__(self) -> None:
    ...         self.steps = 0
    ...     def start(self, progress: TrainingProgress) -> None:
    ...         pass
    ...     def update(self, progress: TrainingProgress, metrics: list[MetricState]) -> None:
    ...         self.steps += 1
    ...     def end(self, progress: TrainingProgress) -> None:
    ...         print(f"{progress.split} epoch {progress.epoch}: {self.steps} steps")
    >>> isinstance(Quiet(), MetricsRenderer)
    True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ferrum.data.dataloader import Progress
from ferrum.train.metric.base import MetricEntry, NumericEntry
from ferrum.train.store import Split

__all__ = ["MetricState", "MetricsRenderer", "TrainingProgress", "format_duration", "format_metrics"]


@dataclass(frozen=True)
class TrainingProgress:
    """Where a split's epoch stands (Burn's ``TrainingProgress``, with the split).

    ``iteration`` counts the steps of this epoch (0 at ``start``);
    ``progress`` the items done and the epoch's total. An evaluation
    (``Evaluator.eval``) reports the ``Split.Test`` split as epoch 1 of 1,
    with ``evaluation`` its name (Burn's ``EvaluationProgress`` and
    ``EvaluationName``); training leaves it ``None``.
    """

    split: Split
    epoch: int
    epoch_total: int
    iteration: int
    progress: Progress
    evaluation: str | None = None


@dataclass(frozen=True)
class MetricState:
    """One metric after a step (Burn's ``MetricState``).

    ``entry`` is what the metric returned (its ``formatted`` text for
    display); numeric metrics also give the step's ``value`` and the
    epoch's ``running`` value so far.
    """

    entry: MetricEntry
    value: NumericEntry | None = None
    running: NumericEntry | None = None

    @property
    def name(self) -> str:
        """The metric's name."""
        return self.entry.name


@runtime_checkable
class MetricsRenderer(Protocol):
    """Shows training as it goes (Burn's ``MetricsRenderer``, reduced to three calls)."""

    def start(self, progress: TrainingProgress) -> None:
        """A split's epoch begins (``progress.progress.items_total`` items to come)."""
        ...

    def update(self, progress: TrainingProgress, metrics: Sequence[MetricState]) -> None:
        """A step is done; ``metrics`` has the state of every metric of this split."""
        ...

    def end(self, progress: TrainingProgress) -> None:
        """The split's epoch is over (or was cut short by an interrupt)."""
        ...


def format_metrics(metrics: Sequence[MetricState]) -> str:
    """``"Loss 0.3127  Accuracy 91.41"``: numeric metrics by their running epoch value, others as shown."""
    parts = []
    for state in metrics:
        if state.running is not None:
            parts.append(f"{state.name} {_number(state.running.value)}")
        else:
            parts.append(f"{state.name} {state.entry.formatted}")
    return "  ".join(parts)


def _number(value: float) -> str:
    if not math.isfinite(value):
        return str(value)
    return f"{value:.4g}" if abs(value) >= 1e-3 or value == 0.0 else f"{value:.3e}"


def format_duration(seconds: float) -> str:
    """``"42s"``, ``"3m07s"``, ``"1h02m"``."""
    if not math.isfinite(seconds) or seconds < 0:
        return "?"
    whole = round(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
