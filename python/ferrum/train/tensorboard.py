"""``TensorBoardLogger``: the Learner's metrics as TensorBoard event files (extra ``[tensorboard]``).

A ``MetricLogger`` (register it with ``SupervisedTraining.with_metric_logger``)
that writes, through ``tensorboardX``:

- every numeric metric after every step, tag ``step/<Metric>``, at the
  split's step count (steps of that split since the logger started);
- every numeric metric's epoch value (the count-weighted mean of the epoch's
  entries, the value the Learner's summary, checkpointing and early stopping
  use), tag ``epoch/<Metric>``, at the epoch number;
- the learning rate of each training step, tag ``step/Learning_Rate``;
- with ``histograms=True``, each parameter's values after every training
  epoch, tag ``parameters/<path>`` (e.g. ``parameters/fc.weight``);
- with ``hparams``, the run's hyper-parameters for TensorBoard's HParams tab,
  with the final epoch values of the metrics.

Characters a tag may not hold (spaces) become ``_``, as tensorboardX has it:
``step/Learning_Rate``. Each split is a run of its own (``<log_dir>/train``, ``<log_dir>/valid``), so
TensorBoard draws training and validation in the same chart; the
hyper-parameters go to ``<log_dir>`` itself. View with
``tensorboard --logdir <log_dir>``.

Example:
    >>> import tempfile
    >>> from ferrum.train import Split, TensorBoardLogger
    >>> from ferrum.train.metric import MetricEntry
    >>> with TensorBoardLogger(tempfile.mkdtemp(), hparams={"lr": 1e-3, "batch_size": 32}) as logger:
    ...     logger.log([MetricEntry("Loss", "0.5", "0.5,8")], 1, Split.Train)
    ...     logger.log([MetricEntry("Loss", "0.3", "0.3,2")], 1, Split.Train)
    ...     logger.end_epoch(1, Split.Train)
    >>> round(logger.epoch_value("Loss", 1, Split.Train), 6)  # (0.5 * 8 + 0.3 * 2) / 10
    0.46
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
import os
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ferrum.data.closing import ClosesOnExit
from ferrum.train.metric.base import MetricEntry, NumericEntry
from ferrum.train.split import Split

if TYPE_CHECKING:
    from ferrum.train.learner import Learner

__all__ = ["TensorBoardLogger", "flatten_hparams", "tag"]

INSTALL_HINT = "pip install 'ferrum-dl[tensorboard]'"
# The characters TensorBoard tags may hold; tensorboardX replaces others by "_" (and so does this logger,
# so the HParams tab names the tags that exist).
_INVALID_TAG = re.compile(r"[^-/\w\.]")


def tag(kind: str, name: str) -> str:
    """The tag of metric ``name`` for ``kind`` ("step", "epoch", "parameters"): ``step/Learning_Rate``."""
    return _INVALID_TAG.sub("_", f"{kind}/{name}")


def _summary_writer() -> Any:
    try:
        from tensorboardX import SummaryWriter
    except ImportError as err:
        raise ImportError(f"TensorBoardLogger writes through tensorboardX: {INSTALL_HINT}") from err
    return SummaryWriter


class TensorBoardLogger(ClosesOnExit):
    """Writes the Learner's metrics, learning rate, hyper-parameters and histograms for TensorBoard.

    Args:
        log_dir: The folder of the event files (created); one run per split below it.
        hparams: The run's hyper-parameters: a ferrum ``@config`` (nested configs
            become dotted names: ``optimizer.beta_1``), a dataclass or a mapping.
        histograms: Whether to write a histogram of every parameter after each training epoch.
        flush_secs: How often tensorboardX writes its queue out between epochs (each epoch's
            end flushes too).

    ``read_numeric`` answers from what this logger logged in this process: a
    resumed run that needs the epochs of an earlier run (for checkpointing or
    early stopping) needs a ``FileMetricLogger`` registered as well.

    Example:
        >>> import tempfile
        >>> from ferrum.train import TensorBoardLogger
        >>> TensorBoardLogger(tempfile.mkdtemp(), histograms=True).histograms
        True
    """

    def __init__(
        self,
        log_dir: str | os.PathLike[str],
        *,
        hparams: object = None,
        histograms: bool = False,
        flush_secs: int = 30,
    ) -> None:
        self._writer_class = _summary_writer()
        if isinstance(flush_secs, bool) or not isinstance(flush_secs, int) or flush_secs < 1:
            raise ValueError(f"TensorBoardLogger flush_secs must be an int >= 1, found {flush_secs!r}")
        self.log_dir = Path(log_dir)
        self.hparams = flatten_hparams(hparams) if hparams is not None else None
        self.histograms = bool(histograms)
        self.flush_secs = flush_secs
        self._writers: dict[str, Any] = {}
        self._steps: dict[Split, int] = {}
        self._entries: dict[tuple[str, Split, int], list[NumericEntry]] = {}
        self._learner: Learner[Any] | None = None
        self._hparams_written = False
        self._closed = False

    # ---- MetricLogger

    def log(self, entries: Sequence[MetricEntry], epoch: int, split: Split) -> None:
        """Write the step's value of every numeric entry (text entries as text) and the learning rate."""
        self._open_check()
        step = self._steps[split] = self._steps.get(split, 0) + 1
        writer = self._writer(split.value)
        wall = time.time()
        names = set()
        for entry in entries:
            names.add(entry.name)
            try:
                value = NumericEntry.deserialize(entry.serialized)
            except ValueError:
                writer.add_text(tag("step", entry.name), entry.formatted, step, walltime=wall)
                continue
            self._entries.setdefault((entry.name, split, epoch), []).append(value)
            writer.add_scalar(tag("step", entry.name), value.value, step, walltime=wall)
        learner = self._learner
        if split is Split.Train and learner is not None and "Learning Rate" not in names:
            writer.add_scalar(tag("step", "Learning Rate"), learner.lr_current(), step, walltime=wall)

    def read_numeric(self, name: str, epoch: int, split: Split) -> list[NumericEntry]:
        """The numeric entries of ``name`` logged here for ``epoch`` and ``split`` (empty if none)."""
        return list(self._entries.get((name, split, epoch), []))

    def end_epoch(self, epoch: int, split: Split) -> None:
        """Write the epoch values (and, after training epochs, the histograms), then flush ``split``'s run."""
        if self._closed:
            return
        writer = self._writer(split.value)
        for (name, entry_split, entry_epoch), _ in list(self._entries.items()):
            if entry_split is split and entry_epoch == epoch:
                value = self.epoch_value(name, epoch, split)
                if value is not None:
                    writer.add_scalar(tag("epoch", name), value, epoch)
        if split is Split.Train and self.histograms and self._learner is not None:
            for path, param in self._learner.model.named_parameters():
                values = np.asarray(param.val().to_numpy(), dtype=np.float64)
                if values.size and np.isfinite(values).all():
                    writer.add_histogram(tag("parameters", path), values, epoch)
        if split is Split.Valid or split is Split.Test:
            self._write_hparams()
        writer.flush()

    # ---- the Learner's hooks

    def start_training(self, learner: Learner[Any]) -> None:
        """Called by ``SupervisedTraining.launch`` before the first step: the learning rate and the
        parameters are read from ``learner``."""
        self._learner = learner

    def end_training(self) -> None:
        """Called when ``launch`` is over: the hyper-parameters are written and the files closed."""
        self.close()

    # ---- reading back and closing

    def epoch_value(self, name: str, epoch: int, split: Split) -> float | None:
        """The count-weighted mean of ``name``'s entries in ``epoch`` (what ``epoch/<name>`` records)."""
        total = 0.0
        count = 0
        for entry in self._entries.get((name, split, epoch), []):
            weight = 1 if entry.count is None else entry.count
            total += entry.value * weight
            count += weight
        return total / count if count else None

    def close(self) -> None:
        """Write the hyper-parameters (with the last epoch values) and close every event file."""
        if self._closed:
            return
        self._write_hparams()
        if self.hparams is not None:
            from tensorboardX.summary import hparams as hparams_summaries

            _, _, session_end = hparams_summaries(self.hparams, {})
            self._writer("").file_writer.add_summary(session_end)
        for writer in self._writers.values():
            writer.close()
        self._closed = True
        self._learner = None

    def __repr__(self) -> str:
        return f"TensorBoardLogger({str(self.log_dir)!r})"

    def _open_check(self) -> None:
        if self._closed:
            raise ValueError(f"{self!r} is closed: a TensorBoardLogger serves one training run")

    def _writer(self, run: str) -> Any:
        writer = self._writers.get(run)
        if writer is None:
            directory = self.log_dir / run if run else self.log_dir
            try:
                directory.mkdir(parents=True, exist_ok=True)
            except OSError as err:
                raise type(err)(
                    err.errno, f"the TensorBoard log folder {directory} cannot be created: {err.strerror}"
                ) from err
            writer = self._writers[run] = self._writer_class(str(directory), flush_secs=self.flush_secs)
        return writer

    def _write_hparams(self) -> None:
        """The HParams tab's experiment and session, once; its metrics are every split's epoch tags."""
        if self.hparams is None or self._hparams_written:
            return
        from tensorboardX.proto.api_pb2 import Experiment, MetricInfo, MetricName
        from tensorboardX.proto.plugin_hparams_pb2 import HParamsPluginData
        from tensorboardX.proto.summary_pb2 import Summary, SummaryMetadata
        from tensorboardX.summary import hparams as hparams_summaries

        experiment, session_start, _ = hparams_summaries(self.hparams, {})
        metrics = sorted({(split.value, name) for name, split, _ in self._entries})
        # tensorboardX names metrics by tag only; TensorBoard finds a metric of another run (a
        # split's) through the metric's group, the run's folder relative to the session's.
        content = HParamsPluginData()
        content.ParseFromString(experiment.value[0].metadata.plugin_data.content)
        infos = [MetricInfo(name=MetricName(group=group, tag=tag("epoch", name))) for group, name in metrics]
        exp = Experiment(hparam_infos=content.experiment.hparam_infos, metric_infos=infos)
        data = HParamsPluginData(experiment=exp, version=content.version)
        plugin = SummaryMetadata.PluginData(plugin_name="hparams", content=data.SerializeToString())
        metadata = SummaryMetadata(plugin_data=plugin)
        summary = Summary(value=[Summary.Value(tag=experiment.value[0].tag, metadata=metadata)])
        writer = self._writer("")
        writer.file_writer.add_summary(summary)
        writer.file_writer.add_summary(session_start)
        writer.flush()
        self._hparams_written = True


def flatten_hparams(hparams: object) -> dict[str, bool | int | float | str]:
    """Hyper-parameters as TensorBoard takes them: one level, with numbers, booleans and strings.

    Nested configs, dataclasses and mappings become dotted names; ``None``
    values are left out; enums become their names; lists and anything else
    their JSON (or ``str``) text.

    Example:
        >>> flatten_hparams({"optimizer": {"lr": 1e-3, "betas": [0.9, 0.99]}, "epochs": 3, "seed": None})
        {'optimizer.lr': 0.001, 'optimizer.betas': '[0.9, 0.99]', 'epochs': 3}
    """
    flat: dict[str, bool | int | float | str] = {}

    def add(prefix: str, value: object) -> None:
        as_mapping = _as_mapping(value)
        if as_mapping is not None:
            for key, inner in as_mapping.items():
                add(f"{prefix}.{key}" if prefix else str(key), inner)
            return
        if not prefix:
            raise TypeError(
                "TensorBoardLogger hparams must be a ferrum @config, a dataclass or a mapping, "
                f"found {type(value).__name__}"
            )
        if value is None:
            return
        if isinstance(value, enum.Enum):
            flat[prefix] = value.name
        elif isinstance(value, (bool, int, str)):
            flat[prefix] = value
        elif isinstance(value, float):
            flat[prefix] = value if math.isfinite(value) else str(value)
        elif isinstance(value, (np.integer, np.floating, np.bool_)):
            add(prefix, value.item())
        else:
            try:
                flat[prefix] = json.dumps(value)
            except (TypeError, ValueError):
                flat[prefix] = str(value)

    add("", hparams)
    return flat


def _as_mapping(value: object) -> Mapping[Any, Any] | None:
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict) and not isinstance(value, type):
        result = to_dict()
        if isinstance(result, Mapping):
            return result
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return value
    return None
