"""Metric loggers: where every metric update is written (Burn's ``FileMetricLogger`` and friends).

``FileMetricLogger`` writes Burn's layout: one file per split, epoch and
metric, ``<directory>/<split>/epoch-<N>/<Metric>.log``, holding one
serialized entry per line (``"value,count"`` for numeric metrics). A file
is truncated when its epoch starts, so a resumed run rewrites the epochs it
runs. ``InMemoryMetricLogger`` keeps the same entries in memory. A user
logger implements the ``MetricLogger`` protocol and is registered with
``SupervisedTraining.with_metric_logger``. A logger may also define
``start_training(learner)`` and ``end_training()``: ``launch`` calls them
before the first step and once the run is over, failed or not (the
``TensorBoardLogger`` reads the learning rate and the parameters through
the learner, and closes its files at the end).

Example:
    >>> import tempfile
    >>> from ferrum.train.logger import FileMetricLogger
    >>> from ferrum.train.metric import MetricEntry
    >>> from ferrum.train.split import Split
    >>> logger = FileMetricLogger(tempfile.mkdtemp())
    >>> logger.log([MetricEntry("Loss", "0.50", "0.5,64")], 1, Split.Train)
    >>> logger.log([MetricEntry("Loss", "0.25", "0.25,36")], 1, Split.Train)
    >>> logger.read_numeric("Loss", 1, Split.Train)
    [NumericEntry(value=0.5, count=64), NumericEntry(value=0.25, count=36)]
    >>> logger.end_epoch(1, Split.Train)
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Protocol, runtime_checkable

from ferrum.train.metric.base import MetricEntry, NumericEntry
from ferrum.train.safe_open import open_no_follow
from ferrum.train.split import Split

__all__ = [
    "EPOCH_PREFIX",
    "FileMetricLogger",
    "InMemoryMetricLogger",
    "MetricLogger",
    "end_training",
    "log_file_name",
    "start_training",
]

EPOCH_PREFIX = "epoch-"
"""Prefix of the per-epoch folders: ``train/epoch-1``."""

_EPOCH_DIR = re.compile(r"epoch-(\d+)")


@runtime_checkable
class MetricLogger(Protocol):
    """Burn's ``MetricLogger``: receives every update of every metric and can read numeric ones back."""

    def log(self, entries: Sequence[MetricEntry], epoch: int, split: Split) -> None:
        """Record the entries of one step (one per metric of ``split``)."""
        ...

    def read_numeric(self, name: str, epoch: int, split: Split) -> list[NumericEntry]:
        """Every numeric entry of metric ``name`` logged for ``epoch`` and ``split`` (empty if none)."""
        ...

    def end_epoch(self, epoch: int, split: Split) -> None:
        """``split``'s epoch ended: flush and release what it held open."""
        ...


def start_training(loggers: Sequence[MetricLogger], learner: object) -> None:
    """Call ``start_training(learner)`` on each logger that defines it (a run begins)."""
    for logger in loggers:
        hook = getattr(logger, "start_training", None)
        if callable(hook):
            hook(learner)


def end_training(loggers: Sequence[MetricLogger]) -> None:
    """Call ``end_training()`` on each logger that defines it; every one is called even if one fails."""
    failure: BaseException | None = None
    for logger in loggers:
        hook = getattr(logger, "end_training", None)
        if callable(hook):
            try:
                hook()
            except Exception as err:
                failure = failure or err
    if failure is not None:
        raise failure


def log_file_name(name: str) -> str:
    """The log file of metric ``name``: spaces (as in Burn) and path separators become underscores."""
    return re.sub(r"[\s/\\]", "_", name) + ".log"


class FileMetricLogger:
    """Writes ``<directory>/<split>/epoch-<N>/<Metric>.log``, one serialized entry per line (Burn's layout).

    Files stay open during their epoch and are buffered; ``end_epoch`` (or
    ``read_numeric`` for the file read) flushes them.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self._files: dict[tuple[str, Split], IO[str]] = {}
        # The files' paths: a file from os.fdopen is named by its descriptor number only.
        self._paths: dict[tuple[str, Split], Path] = {}
        self._epoch: dict[Split, int] = {}

    def file_path(self, name: str, epoch: int, split: Split) -> Path:
        """Where metric ``name`` of ``split`` is logged for ``epoch``."""
        return self.directory / split.value / f"{EPOCH_PREFIX}{epoch}" / log_file_name(name)

    def log(self, entries: Sequence[MetricEntry], epoch: int, split: Split) -> None:
        """Append each entry's serialized line to its metric's file (a new epoch closes the last one's)."""
        if self._epoch.get(split) != epoch:
            self.end_epoch(self._epoch.get(split, epoch), split)
            self._epoch[split] = epoch
        files = self._files
        for entry in entries:
            file = files.get((entry.name, split))
            if file is None:
                self._paths[(entry.name, split)] = self.file_path(entry.name, epoch, split)
                file = files[(entry.name, split)] = self._open(entry.name, epoch, split)
            file.write(entry.serialized)
            file.write("\n")

    def read_numeric(self, name: str, epoch: int, split: Split) -> list[NumericEntry]:
        """The numeric entries in metric ``name``'s file for ``epoch`` and ``split`` (empty when none).

        A line that does not parse is a ``ValueError`` naming the file and the line.
        """
        open_file = self._files.get((name, split))
        if open_file is not None and self._epoch.get(split) == epoch:
            open_file.flush()
        path = self.file_path(name, epoch, split)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        entries = []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                entries.append(NumericEntry.deserialize(line))
            except ValueError as err:
                raise ValueError(f"{path}, line {number}: {err}") from None
        return entries

    def end_epoch(self, epoch: int, split: Split) -> None:
        """Close (and so flush) ``split``'s files of the epoch.

        Every file is closed; the first that fails (a full disk, a quota) is an ``OSError`` naming it.
        """
        failure: OSError | None = None
        for key in [key for key in self._files if key[1] is split]:
            file, path = self._files.pop(key), self._paths.pop(key, None)
            try:
                file.close()
            except OSError as err:
                if failure is None:
                    failure = type(err)(
                        err.errno, f"cannot write the metric log {path}: {err.strerror or err}"
                    )
                    failure.__cause__ = err
        if failure is not None:
            raise failure

    def epochs(self) -> int:
        """The highest epoch that has a folder under any split (0 when none)."""
        found = [
            int(match.group(1))
            for split in Split
            if (self.directory / split.value).is_dir()
            for child in (self.directory / split.value).iterdir()
            if child.is_dir() and (match := _EPOCH_DIR.fullmatch(child.name))
        ]
        return max(found, default=0)

    def _open(self, name: str, epoch: int, split: Split) -> IO[str]:
        path = self.file_path(name, epoch, split)
        path.parent.mkdir(parents=True, exist_ok=True)
        # Truncating through a symbolic link planted under the log's name would empty its target.
        return open_no_follow(path, "w")

    def __repr__(self) -> str:
        return f"FileMetricLogger({str(self.directory)!r})"


class InMemoryMetricLogger:
    """Keeps every serialized entry in memory, by metric, split and epoch (Burn's ``InMemoryMetricLogger``).

    Example:
        >>> from ferrum.train.logger import InMemoryMetricLogger
        >>> from ferrum.train.metric import MetricEntry
        >>> from ferrum.train.split import Split
        >>> logger = InMemoryMetricLogger()
        >>> logger.log([MetricEntry("Loss", "0.5", "0.5,2")], 1, Split.Valid)
        >>> logger.values[("Loss", Split.Valid, 1)]
        ['0.5,2']
    """

    def __init__(self) -> None:
        self.values: dict[tuple[str, Split, int], list[str]] = {}

    def log(self, entries: Sequence[MetricEntry], epoch: int, split: Split) -> None:
        """Keep each entry's serialized value under its metric, ``split`` and ``epoch``."""
        for entry in entries:
            self.values.setdefault((entry.name, split, epoch), []).append(entry.serialized)

    def read_numeric(self, name: str, epoch: int, split: Split) -> list[NumericEntry]:
        """The numeric entries kept for metric ``name``, ``epoch`` and ``split`` (empty when none)."""
        return [NumericEntry.deserialize(value) for value in self.values.get((name, split, epoch), [])]

    def end_epoch(self, epoch: int, split: Split) -> None:
        """Nothing to flush: the values stay in memory."""
        pass
