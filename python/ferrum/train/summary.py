"""``LearnerSummary``: every numeric metric's epoch values, as Burn's end-of-training table.

For each metric and split: the lowest and highest epoch value with their
epochs, and the last epoch's value. ``str(summary)`` is the table the
Learner prints when ``summary()`` is set (and saves as ``summary.txt`` in
the artifact directory)::

    ======================== Learner Summary ========================
    Total Epochs: 2


    | Split | Metric | Min.     | Epoch    | Max.     | Epoch    | Last     |
    |-------|--------|----------|----------|----------|----------|----------|
    | Train | Loss   | 0.250    | 2        | 0.500    | 1        | 0.250    |

Example:
    >>> from ferrum.train.summary import LearnerSummary, MetricSummary
    >>> from ferrum.train.store import Split
    >>> summary = LearnerSummary(2, {Split.Train: [MetricSummary("Loss", [(1, 0.5), (2, 0.25)])]})
    >>> summary.metric("Loss", Split.Train).last
    0.25
    >>> print(str(summary).splitlines()[-1])
    | Train | Loss   | 0.250    | 2        | 0.500    | 1        | 0.250    |
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from ferrum.train.store import MetricStore, Split

__all__ = ["LearnerSummary", "MetricSummary"]


@dataclass(frozen=True)
class MetricSummary:
    """One metric's epoch values on one split: ``entries`` are ``(epoch, value)`` pairs, in order.

    Example:
        >>> loss = MetricSummary("Loss", [(1, 0.9), (2, 0.4), (3, 0.5)])
        >>> loss.min, loss.max, loss.last
        ((2, 0.4), (1, 0.9), 0.5)
    """

    name: str
    entries: list[tuple[int, float]]

    @property
    def min(self) -> tuple[int, float]:
        """The ``(epoch, value)`` of the lowest value (NaN counts as highest, as in Burn)."""
        return min(self.entries, key=lambda e: (math.isnan(e[1]), e[1]))

    @property
    def max(self) -> tuple[int, float]:
        """The ``(epoch, value)`` of the highest value (NaN counts as highest, as in Burn)."""
        return max(self.entries, key=lambda e: (math.isnan(e[1]), e[1]))

    @property
    def last(self) -> float:
        """The last epoch's value."""
        return self.entries[-1][1]


@dataclass(frozen=True)
class LearnerSummary:
    """Burn's ``LearnerSummary``: the epochs trained and each numeric metric's history per split."""

    epochs: int
    metrics: dict[Split, list[MetricSummary]]
    model: str | None = field(default=None, compare=False)

    @staticmethod
    def from_store(
        store: MetricStore, names: Iterable[str], epochs: int, model: str | None = None
    ) -> LearnerSummary:
        """The summary of metrics ``names`` (alphabetically, as Burn) over epochs ``1..epochs``."""
        metrics: dict[Split, list[MetricSummary]] = {}
        for split in (Split.Train, Split.Valid):
            found = [
                MetricSummary(name, store.epoch_values(name, split, epochs)) for name in sorted(set(names))
            ]
            metrics[split] = [summary for summary in found if summary.entries]
        return LearnerSummary(epochs, metrics, model)

    def metric(self, name: str, split: Split) -> MetricSummary:
        """The history of metric ``name`` on ``split``; ``KeyError`` names what exists otherwise."""
        for summary in self.metrics.get(split, []):
            if summary.name == name:
                return summary
        have = sorted(s.name for s in self.metrics.get(split, []))
        raise KeyError(f"no {split} values of metric {name!r} in the summary (it has {have})")

    def __str__(self) -> str:
        rows = [
            (split.name, summary)
            for split in (Split.Train, Split.Valid)
            for summary in self.metrics.get(split, [])
        ]
        width_split = max(len("Split"), *(len(split) for split, _ in rows)) if rows else len("Split")
        width_metric = max(len("Metric"), *(len(s.name) for _, s in rows)) if rows else len("Metric")
        lines = [f"{'=' * 24} Learner Summary {'=' * 24}"]
        if self.model is not None:
            lines += ["Model:", self.model]
        lines += [f"Total Epochs: {self.epochs}", "", ""]
        lines.append(
            f"| {'Split':<{width_split}} | {'Metric':<{width_metric}} | Min.     | Epoch    | Max.     "
            f"| Epoch    | Last     |"
        )
        lines.append(f"|{'-' * (width_split + 2)}|{'-' * (width_metric + 2)}|" + "----------|" * 5)
        for split, summary in rows:
            (min_epoch, min_value), (max_epoch, max_value) = summary.min, summary.max
            lines.append(
                f"| {split:<{width_split}} | {summary.name:<{width_metric}} | {_value(min_value)}| "
                f"{min_epoch:<9}| {_value(max_value)}| {max_epoch:<9}| {_value(summary.last)}|"
            )
        return "\n".join(lines)


def _value(value: float) -> str:
    # Burn's `{:<9.3}`, and `{:<9.3e}` below 0.01 so small values keep their digits (Rust's exponent style).
    if value < 1e-2 and value == value:
        mantissa, exponent = f"{value:.3e}".split("e")
        return f"{mantissa}e{int(exponent)}".ljust(9)
    return f"{value:<9.3f}"
