"""What happens to a step's output: metrics updated, entries logged and stored, the renderer told.

Burn's event processor, run in the training thread: per step the output is
synced once to the inner backend (``sync_item``), handed to every metric of
the split, the entries go to the metric loggers, numeric values to the
store (epoch aggregates for checkpointing, early stopping and the summary)
and the states to the renderer.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ferrum._ferrum import Tensor
from ferrum.data.dataloader import Progress
from ferrum.train.logger import MetricLogger
from ferrum.train.metric.base import Metric, MetricEntry, MetricMetadata, Numeric, NumericEntry, format_float
from ferrum.train.output import sync_item
from ferrum.train.renderer.base import MetricsRenderer, MetricState, TrainingProgress
from ferrum.train.store import MetricStore, Split

__all__ = ["EventProcessor", "Reduce", "SplitMetrics", "copy_metric", "is_finite", "loss_value"]

Reduce = Callable[[npt.NDArray[np.float64]], npt.NDArray[np.float64]]
# A numeric metric's entry as metric/state.py formats it: "epoch <running><unit> - batch <value><unit>".
_FORMATTED = re.compile(r"^epoch \S+?(?P<unit>\s?[^\d\s.eE+-]*) - batch ")


@dataclass
class _Registered:
    metric: Metric[Any]
    name: str
    numeric: Numeric | None


class SplitMetrics:
    """The metrics of one split, in registration order."""

    def __init__(self, split: Split) -> None:
        self.split = split
        self._metrics: list[_Registered] = []

    def register(self, metric: Metric[Any], *, numeric: bool, text: bool = False) -> None:
        """Add ``metric``; ``ValueError`` if one of the same name is already there (they share a log file).

        ``numeric`` requires the metric to be numeric; ``text`` registers it as a text metric
        (Burn's ``metrics_text``) even if it is numeric: its entries are logged and shown as
        text, but not stored, summarised or plotted.
        """
        if not isinstance(metric, Metric):
            raise TypeError(
                f"a metric has name(), update(item, metadata) and clear(); found {type(metric).__name__}"
            )
        name = metric.name()
        if any(r.name == name for r in self._metrics):
            raise ValueError(
                f"{self.split} metric {name!r} is registered twice (metric names must be unique)"
            )
        if numeric and not isinstance(metric, Numeric):
            raise TypeError(
                f"metric {name!r} ({type(metric).__name__}) is not numeric: it needs higher_is_better, "
                "value() and running_value()"
            )
        as_numeric = metric if isinstance(metric, Numeric) and not text else None
        self._metrics.append(_Registered(metric, name, as_numeric))

    def names(self, *, numeric_only: bool = False) -> list[str]:
        """The registered metrics' names."""
        return [r.name for r in self._metrics if r.numeric is not None or not numeric_only]

    def __len__(self) -> int:
        return len(self._metrics)

    def update(
        self, item: object, metadata: MetricMetadata, store: MetricStore, reduce: Reduce | None = None
    ) -> tuple[list[MetricEntry], list[MetricState]]:
        """Every metric's entry and state after ``item``; numeric values go into ``store``.

        With ``reduce`` (data-parallel training), each numeric value and
        running value becomes the mean over ranks, weighted by their item
        counts: exact for metrics that are means over items (loss, accuracy),
        the ranks' weighted mean for the others.
        """
        updates = [(registered, registered.metric.update(item, metadata)) for registered in self._metrics]
        numerics = [
            (registered.numeric.value(), registered.numeric.running_value())
            if registered.numeric is not None
            else None
            for registered, _ in updates
        ]
        if reduce is not None:
            numerics = _reduced(numerics, reduce)
        entries: list[MetricEntry] = []
        states: list[MetricState] = []
        for (registered, entry), pair in zip(updates, numerics, strict=True):
            if pair is None:
                entries.append(entry)
                states.append(MetricState(entry))
                continue
            value, running = pair
            if reduce is not None:
                entry = _entry(entry, value, running)
            entries.append(entry)
            store.add(registered.name, metadata.epoch, self.split, value)
            states.append(MetricState(entry, value, running))
        return entries, states

    def clear(self) -> None:
        """Reset every metric (an epoch of this split ended)."""
        for registered in self._metrics:
            registered.metric.clear()


def _reduced(
    numerics: list[tuple[NumericEntry, NumericEntry] | None], reduce: Reduce
) -> list[tuple[NumericEntry, NumericEntry] | None]:
    """Each (value, running value) as the count-weighted mean over ranks; one exchange for all metrics."""
    sums: list[float] = []
    for pair in numerics:
        for entry in pair or ():
            weight = 1 if entry.count is None else entry.count
            sums.extend((entry.value * weight, float(weight)))
    if not sums:
        return numerics
    total = reduce(np.array(sums, np.float64))
    out: list[tuple[NumericEntry, NumericEntry] | None] = []
    at = 0
    for pair in numerics:
        if pair is None:
            out.append(None)
            continue
        combined = []
        for entry in pair:
            weighted, weight = float(total[at]), float(total[at + 1])
            at += 2
            mean = weighted / weight if weight else entry.value
            combined.append(NumericEntry(mean, None if entry.count is None else int(weight)))
        out.append((combined[0], combined[1]))
    return out


def _entry(local: MetricEntry, value: NumericEntry, running: NumericEntry) -> MetricEntry:
    """The entry of the values over every rank, shown with the metric's unit."""
    match = _FORMATTED.match(local.formatted)
    unit = match.group("unit") if match else ""
    formatted = f"epoch {format_float(running.value, 2)}{unit} - batch {format_float(value.value, 2)}{unit}"
    return MetricEntry(local.name, formatted, value.serialize())


def copy_metric(metric: Metric[Any]) -> Metric[Any]:
    """An independent copy of a fresh metric, for the other split (Burn clones it)."""
    try:
        return copy.deepcopy(metric)
    except Exception as err:
        raise TypeError(
            f"metric {metric.name()!r} ({type(metric).__name__}) cannot be copied for the second split "
            f"({err}); register one instance per split with metric_train and metric_valid"
        ) from err


class EventProcessor:
    """Routes each step's output through the metrics, loggers, store and renderer."""

    def __init__(
        self,
        train: SplitMetrics,
        valid: SplitMetrics,
        loggers: Sequence[MetricLogger],
        store: MetricStore,
        renderer: MetricsRenderer,
        reduce: Reduce | None = None,
        test: SplitMetrics | None = None,
        evaluation: str | None = None,
    ) -> None:
        self._metrics = {Split.Train: train, Split.Valid: valid, Split.Test: test or SplitMetrics(Split.Test)}
        # The name of the evaluation whose test split this processor handles (Burn's EvaluationName).
        self._evaluation = evaluation
        # Only training runs on every rank; validation runs where the logs are.
        self._reduce = reduce
        self._loggers = list(loggers)
        self.store = store
        self.renderer = renderer

    def start(self, split: Split, epoch: int, epoch_total: int, items_total: int) -> None:
        """A split's epoch begins."""
        self.renderer.start(self._progress(split, epoch, epoch_total, 0, Progress(0, items_total)))

    def process(
        self,
        split: Split,
        output: object,
        progress: Progress,
        epoch: int,
        epoch_total: int,
        iteration: int,
        lr: float | None,
    ) -> None:
        """One step's output."""
        metrics = self._metrics[split]
        item = sync_item(output)
        metadata = MetricMetadata(progress, epoch, epoch_total, iteration, lr)
        reduce = self._reduce if split is Split.Train else None
        entries, states = metrics.update(item, metadata, self.store, reduce)
        if entries:
            for logger in self._loggers:
                logger.log(entries, epoch, split)
        self.renderer.update(self._progress(split, epoch, epoch_total, iteration, progress), states)

    def end(self, split: Split, epoch: int, epoch_total: int, iteration: int, progress: Progress) -> None:
        """A split's epoch is over: metrics cleared, loggers flushed, renderer told."""
        self._metrics[split].clear()
        for logger in self._loggers:
            logger.end_epoch(epoch, split)
        self.renderer.end(self._progress(split, epoch, epoch_total, iteration, progress))

    def _progress(
        self, split: Split, epoch: int, epoch_total: int, iteration: int, progress: Progress
    ) -> TrainingProgress:
        evaluation = self._evaluation if split is Split.Test else None
        return TrainingProgress(split, epoch, epoch_total, iteration, progress, evaluation)


def loss_value(item: object) -> float | None:
    """The step's loss as a number when the output has a ``loss`` tensor (the sum of a per-item loss)."""
    loss = getattr(item, "loss", None)
    if not isinstance(loss, Tensor):
        return None
    if loss.device().is_autodiff:
        loss = loss.inner()
    if loss.num_elements() != 1:
        loss = loss.sum()
    return float(loss.into_scalar())


def is_finite(value: float | None) -> bool:
    """True for a finite number or no number at all."""
    return value is None or math.isfinite(value)
