"""Plots of the metric logs: one PNG per numeric metric, train and valid, over epochs and iterations.

The Learner redraws ``<artifact_dir>/plots/<Metric>.png`` at the end of each
epoch; ``python -m ferrum.train.plot ARTIFACT_DIR`` redraws them from the logs
of any finished or running experiment. Each figure has two panels: the
epoch values (the count-weighted mean of the batch values, as the Learner
aggregates them) and every iteration's value, placed at its fraction of
the epoch, for the training and validation splits. Plotting needs
matplotlib (``pip install 'ferrum-dl[plot]'``); reading the logs does not.

Example:
    >>> import tempfile
    >>> from ferrum.train.logger import FileMetricLogger
    >>> from ferrum.train.metric import MetricEntry
    >>> from ferrum.train.plot import read_history
    >>> from ferrum.train.store import Split
    >>> logger = FileMetricLogger(tempfile.mkdtemp())
    >>> for value in ("1.0,2", "0.5,2"):
    ...     logger.log([MetricEntry("Loss", value, value)], 1, Split.Train)
    >>> logger.end_epoch(1, Split.Train)
    >>> history = read_history(logger.directory)
    >>> history["Loss"][Split.Train].epochs, history["Loss"][Split.Train].iterations
    ([(1, 0.75)], [(0.5, 1.0), (1.0, 0.5)])
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ferrum.extras import require
from ferrum.train.logger import log_file_name
from ferrum.train.metric.base import NumericEntry
from ferrum.train.safe_open import create_no_follow
from ferrum.train.store import Split

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["PLOTS_DIR", "MetricHistory", "plot_file", "read_history", "write_plots"]

PLOTS_DIR = "plots"
"""The folder of the PNG files, in the artifact directory."""

_EPOCH_DIR = re.compile(r"epoch-(\d+)")
_SPLITS = (Split.Train, Split.Valid)
_COLORS = {Split.Train: "tab:blue", Split.Valid: "tab:orange"}


@dataclass
class MetricHistory:
    """A numeric metric's values on one split: ``(epoch, value)`` and ``(fractional epoch, value)`` pairs."""

    epochs: list[tuple[int, float]] = field(default_factory=list)
    iterations: list[tuple[float, float]] = field(default_factory=list)


def read_history(
    directory: str | os.PathLike[str], last_epoch: int | None = None
) -> dict[str, dict[Split, MetricHistory]]:
    """Every numeric metric logged under ``directory`` (Burn's layout), by log name and split.

    Only epochs up to ``last_epoch`` when given. A metric whose log holds a
    line that is not a numeric entry is left out (a text metric); of a log
    still being written, an unfinished last line is skipped.
    """
    root = Path(directory)
    found: dict[str, dict[Split, MetricHistory]] = {}
    text: set[str] = set()
    for split in _SPLITS:
        split_dir = root / split.value
        if not split_dir.is_dir():
            continue
        epochs = sorted(
            (int(match.group(1)), child)
            for child in split_dir.iterdir()
            if child.is_dir() and (match := _EPOCH_DIR.fullmatch(child.name))
        )
        for epoch, epoch_dir in epochs:
            if last_epoch is not None and epoch > last_epoch:
                continue
            for log in sorted(epoch_dir.glob("*.log")):
                name = log.stem
                entries = _numeric_entries(log)
                if entries is None:
                    text.add(name)
                    continue
                if not entries:
                    continue
                history = found.setdefault(name, {}).setdefault(split, MetricHistory())
                total = sum(_weight(e) for e in entries)
                mean = sum(e.value * _weight(e) for e in entries) / total if total else float("nan")
                history.epochs.append((epoch, mean))
                n = len(entries)
                history.iterations.extend((epoch - 1 + (i + 1) / n, e.value) for i, e in enumerate(entries))
    return {name: splits for name, splits in sorted(found.items()) if name not in text}


def plot_file(directory: str | os.PathLike[str], name: str) -> Path:
    """The PNG of metric ``name`` (a metric name or a log name) in artifact directory ``directory``."""
    return Path(directory) / PLOTS_DIR / log_file_name(name).replace(".log", ".png")


def write_plots(
    directory: str | os.PathLike[str], names: list[str] | None = None, last_epoch: int | None = None
) -> list[Path]:
    """Draw every numeric metric logged under ``directory`` (or only ``names``); the files written.

    ``last_epoch`` leaves later (still running) epochs out. ``ferrum.extras.MissingExtraError``
    (an ``ImportError``) when matplotlib is missing.
    """
    require("matplotlib", "plotting the metrics", "plot")
    from matplotlib.figure import Figure

    history = read_history(directory, last_epoch)
    wanted = None if names is None else {log_file_name(n)[: -len(".log")] for n in names}
    written = []
    for name, splits in history.items():
        if wanted is not None and name not in wanted:
            continue
        figure = Figure(figsize=(11, 4), layout="constrained")
        by_epoch, by_iteration = figure.subplots(1, 2)
        title = name.replace("_", " ")
        _draw_epochs(by_epoch, title, splits)
        _draw_iterations(by_iteration, title, splits)
        figure.suptitle(f"{title} ({Path(directory).resolve().name})")
        path = plot_file(directory, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        _save_atomically(figure, path)
        written.append(path)
    return written


def _save_atomically(figure: Figure, path: Path) -> None:
    # Drawn beside the PNG and renamed over it: a viewer never sees half a file. The temporary
    # file is created exclusively after removing whatever is under its name (a killed worker's
    # leftover, or a link planted there, removed itself), so no link's target is overwritten.
    partial = path.with_name(path.name + ".part.png")
    partial.unlink(missing_ok=True)
    try:
        with create_no_follow(partial) as out:
            figure.savefig(out, dpi=90, format="png")
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def _draw_epochs(axes: Axes, title: str, splits: dict[Split, MetricHistory]) -> None:
    from matplotlib.ticker import MaxNLocator

    for split, history in splits.items():
        xs, ys = zip(*history.epochs, strict=True)
        axes.plot(xs, ys, marker="o", color=_COLORS[split], label=split.value)
    axes.set_title(f"{title} per epoch (mean over the epoch)")
    axes.set_xlabel("epoch")
    axes.set_ylabel(title)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.grid(alpha=0.3)
    axes.legend()


def _draw_iterations(axes: Axes, title: str, splits: dict[Split, MetricHistory]) -> None:
    for split, history in splits.items():
        xs, ys = zip(*history.iterations, strict=True)
        axes.plot(xs, ys, linewidth=0.8, alpha=0.8, color=_COLORS[split], label=split.value)
    axes.set_title(f"{title} per iteration")
    axes.set_xlabel("epoch (each point: one iteration)")
    axes.set_ylabel(title)
    axes.grid(alpha=0.3)
    axes.legend()


def _numeric_entries(log: Path) -> list[NumericEntry] | None:
    text = log.read_text(encoding="utf-8")
    lines = text.split("\n")
    # A log being written may end in half a line: only the lines that end are read.
    lines.pop()
    entries = []
    for line in lines:
        if not line.strip():
            continue
        try:
            entries.append(NumericEntry.deserialize(line))
        except ValueError:
            return None
    return entries


def _weight(entry: NumericEntry) -> int:
    return 1 if entry.count is None else entry.count
