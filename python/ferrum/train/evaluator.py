"""Burn's evaluator: a trained model's metrics over a test set, logged and rendered as the Learner's.

``EvaluatorBuilder(artifact_dir)`` takes the metrics (``metrics`` for
numeric ones, ``metrics_text`` for text ones such as CER and WER), a
renderer and ``summary()``; ``build(model)`` gives an ``Evaluator``, and
``eval(name, dataloader)`` runs the model's ``inference_step`` (on the
inner backend, as the Learner's validation) over the loader. The metrics
go through the Learner's machinery (event processor, metric store,
renderer), under ``Split.Test`` and the evaluation's name:

- the logs follow Burn's layout, ``<artifact_dir>/test/<name>/epoch-1/<Metric>.log``
  (the name trimmed, lowercased, spaces as ``-``), one entry per batch;
- ``evaluation.log`` in the artifact directory receives ferrum's log;
- the renderer shows the progress as ``[test] <name>``;
- ``eval`` returns an ``EvaluationResult``: the ``EvaluationSummary``
  (every numeric metric's value over the whole loader, the count-weighted
  mean of its batch values), the renderer (Burn's return value, to pass to
  the next evaluation) and why it stopped early, if it did. With
  ``summary()`` the summary is printed and saved as ``test/<name>/summary.txt``.

Example (Burn's MNIST example evaluates this way)::

    evaluator = (
        EvaluatorBuilder(artifact_dir)
        .renderer(renderer)
        .metrics(AccuracyMetric(), LossMetric())
        .build(result.model)
    )
    renderer = evaluator.eval("Plain", dataloader_test).renderer
"""

from __future__ import annotations

import logging
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from typing_extensions import Self

from ferrum.data.dataloader import DataLoader, takes_device
from ferrum.module import Module
from ferrum.train.arg_checks import require
from ferrum.train.checkpoint.state import write_atomically
from ferrum.train.epoch import valid_epoch
from ferrum.train.interrupter import Interrupter
from ferrum.train.logger import EPOCH_PREFIX, FileMetricLogger, log_file_name
from ferrum.train.metric.base import Metric
from ferrum.train.processor import EventProcessor, SplitMetrics
from ferrum.train.renderer import MetricsRenderer, default_renderer
from ferrum.train.run_options import RunOptions
from ferrum.train.split import Split
from ferrum.train.store import Aggregate, MetricStore
from ferrum.train.summary import _value
from ferrum.train.supervised import _application_log, _prepare_directory

__all__ = ["EvaluationResult", "EvaluationSummary", "Evaluator", "EvaluatorBuilder", "evaluation_tag"]

M = TypeVar("M", bound=Module[Any])

_log = logging.getLogger("ferrum.train")
# An evaluation is one pass: Burn logs it as epoch 1 of the test split.
_EPOCH = 1


def evaluation_tag(name: str) -> str:
    """The folder of evaluation ``name`` under ``test/``: Burn's ``trim().replace(' ', "-").to_lowercase()``.

    Any whitespace and path separator becomes ``-`` as well, so the logs stay in the artifact
    directory; ``ValueError`` for a name that leaves no folder name.

    Example:
        >>> evaluation_tag(" Noise Plain "), evaluation_tag("a/b")
        ('noise-plain', 'a-b')
    """
    tag = re.sub(r"[\s/\\]", "-", name.strip()).lower()
    if tag in ("", ".", ".."):
        raise ValueError(f"an evaluation needs a name that can name its log folder, found {name!r}")
    return tag


class _EvaluationLogger(FileMetricLogger):
    """Burn's ``FileMetricLogger::new_eval``: ``<directory>/test/<tag>/epoch-1/<Metric>.log``."""

    def __init__(self, directory: Path, tag: str) -> None:
        super().__init__(directory)
        self.tag = tag

    def file_path(self, name: str, epoch: int, split: Split) -> Path:
        """Where metric ``name`` of the evaluation is logged."""
        return self.directory / split.value / self.tag / f"{EPOCH_PREFIX}{epoch}" / log_file_name(name)


@dataclass(frozen=True)
class EvaluationSummary:
    """What an evaluation found: each numeric metric's value over the loader, by name (alphabetically).

    A value is the count-weighted mean of the metric's batch values (the
    epoch value of the Learner's summary). Text metrics are logged and
    rendered, not summarised (as in the Learner's summary).

    Example:
        >>> summary = EvaluationSummary("Plain", 100, 4, {"Accuracy": 91.0, "Loss": 0.25})
        >>> summary.metric("Loss")
        0.25
        >>> print(str(summary).splitlines()[-1])
        | Loss     | 0.250    |
    """

    name: str
    items: int
    iterations: int
    metrics: dict[str, float]
    model: str | None = field(default=None, compare=False)

    def metric(self, name: str) -> float:
        """The value of metric ``name``; ``KeyError`` names the metrics there are otherwise."""
        try:
            return self.metrics[name]
        except KeyError:
            raise KeyError(
                f"no value of metric {name!r} in evaluation {self.name!r} (it has {sorted(self.metrics)})"
            ) from None

    def __str__(self) -> str:
        width = max(len("Metric"), *(len(name) for name in self.metrics)) if self.metrics else len("Metric")
        lines = [f"{'=' * 24} Evaluation Summary {'=' * 24}", f"Name: {self.name}"]
        if self.model is not None:
            lines += ["Model:", self.model]
        lines += [f"Items: {self.items}", "", ""]
        lines.append(f"| {'Metric':<{width}} | Value    |")
        lines.append(f"|{'-' * (width + 2)}|----------|")
        for name, value in self.metrics.items():
            lines.append(f"| {name:<{width}} | {_value(value)}|")
        return "\n".join(lines)


@dataclass(frozen=True)
class EvaluationResult:
    """What ``Evaluator.eval`` returns.

    ``summary``: the metrics' values; ``renderer``: the renderer that showed
    the evaluation (what Burn's ``eval`` returns, to give the next
    evaluation); ``stop_reason``: why the evaluation ended before the last
    batch (an interrupt), ``None`` when it saw them all.
    """

    summary: EvaluationSummary
    renderer: MetricsRenderer
    stop_reason: str | None = None


class EvaluatorBuilder(RunOptions):
    """Configures an ``Evaluator`` (Burn's ``EvaluatorBuilder``); methods but ``build`` return the builder.

    ``directory`` is the artifact directory (the Learner's, usually): the
    logs go to its ``test/<name>/`` folders.

    Example (the accuracy and loss of a fixed classifier on four points):
        >>> import io, tempfile
        >>> from typing import Any
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.data.dataloader import Batcher, DataLoaderBuilder
        >>> from ferrum.data.dataset import InMemDataset
        >>> from ferrum.module import Module
        >>> from ferrum.nn import Linear, LinearConfig
        >>> from ferrum.nn.loss import CrossEntropyLossConfig
        >>> from ferrum.train import ClassificationOutput, EvaluatorBuilder, PlainRenderer
        >>> from ferrum.train.metric import AccuracyMetric, LossMetric
        >>> class Classifier(Module[Any]):
        ...     fc: Linear[Any]
        ...     def inference_step(self, batch: Any) -> ClassificationOutput[Any]:
        ...         logits = self.fc.forward(batch[0])
        ...         loss = CrossEntropyLossConfig().init(logits.device()).forward(logits, batch[1])
        ...         return ClassificationOutput(loss, logits, batch[1])
        >>> class Points(Batcher[tuple[float, int], Any]):
        ...     def batch(self, items: list[tuple[float, int]]) -> Any:
        ...         x = Tensor.from_data([[x, -x] for x, _ in items], NdArray.device())
        ...         return x, Tensor.from_data([label for _, label in items], NdArray.device())
        >>> data = InMemDataset([(1.0, 0), (2.0, 0), (-1.0, 1), (0.5, 1)])
        >>> loader = DataLoaderBuilder(Points()).batch_size(2).build(data)
        >>> model = Classifier(LinearConfig(2, 2).init(NdArray.device()))
        >>> evaluator = (
        ...     EvaluatorBuilder(tempfile.mkdtemp())
        ...     .metrics(AccuracyMetric(), LossMetric())
        ...     .renderer(PlainRenderer(stream=io.StringIO()))
        ...     .build(model)
        ... )
        >>> result = evaluator.eval("Test set", loader)
        >>> result.summary.items, sorted(result.summary.metrics)
        (4, ['Accuracy', 'Loss'])
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self._directory = Path(directory)
        self._metrics = SplitMetrics(Split.Test)
        self._init_run_options()

    def metrics(self, *metrics: Metric[Any]) -> Self:
        """Register test metrics; numeric ones (with ``value()``) are summarised (Burn's ``metrics``)."""
        for metric in metrics:
            self._metrics.register(metric, numeric=False)
        return self

    def metrics_text(self, *metrics: Metric[Any]) -> Self:
        """Register text metrics (Burn's ``metrics_text``): logged and rendered, never summarised.

        CER and WER read token sequences: an output with ``output`` and
        ``targets`` Int [batch, length], or a ``cer_input()``/``wer_input()`` method.
        """
        for metric in metrics:
            self._metrics.register(metric, numeric=False, text=True)
        return self

    def metric(self, metric: Metric[Any]) -> Self:
        """Register one test metric (numeric ones are summarised, as with ``metrics``)."""
        self._metrics.register(metric, numeric=False)
        return self

    def metric_numeric(self, metric: Metric[Any]) -> Self:
        """Register one numeric test metric (``TypeError`` if it is not ``Numeric``)."""
        self._metrics.register(metric, numeric=True)
        return self

    def build(self, model: M) -> Evaluator[M]:
        """The evaluator of ``model``, which must define ``inference_step(batch)`` (Burn's ``InferenceStep``).

        A model on an autodiff backend is evaluated on the inner backend (its ``valid()``).
        """
        require(model, Module, "EvaluatorBuilder.build needs a Module")
        if not callable(getattr(model, "inference_step", None)):
            raise TypeError(
                f"{type(model).__name__} has no inference_step(batch) method: the Evaluator needs it "
                "(Burn's InferenceStep); see ferrum.train.step"
            )
        return Evaluator(
            model.valid(),
            self._directory,
            self._metrics,
            self._renderer or default_renderer(),
            self._interrupter,
            summary=self._summary,
            application_log=self._application_log,
        )

    def __repr__(self) -> str:
        return f"EvaluatorBuilder({str(self._directory)!r}, metrics={self._metrics.names()})"


class Evaluator(Generic[M]):
    """Evaluates a model on data sets (Burn's ``Evaluator``); made by ``EvaluatorBuilder.build``.

    ``model`` is the evaluated model, on the inner backend.
    """

    def __init__(
        self,
        model: M,
        directory: Path,
        metrics: SplitMetrics,
        renderer: MetricsRenderer,
        interrupter: Interrupter,
        *,
        summary: bool,
        application_log: bool,
    ) -> None:
        self.model = model
        self._directory = directory
        self._metrics = metrics
        self._renderer = renderer
        self._interrupter = interrupter
        self._summary = summary
        self._application_log = application_log

    def eval(self, name: str, dataloader: DataLoader[Any]) -> EvaluationResult:
        """Run the model's ``inference_step`` over ``dataloader``; log and show it under ``name``.

        The loader must not be empty. A loader whose batcher takes a device
        (Burn's ``batch(items, device)``) makes its batches on the model's device.
        """
        require(name, str, "an evaluation's name is a str")
        tag = evaluation_tag(name)
        wanted = "Evaluator.eval needs a DataLoader (DataLoaderBuilder(...).build(dataset))"
        require(dataloader, DataLoader, wanted)
        if len(dataloader) == 0:
            raise ValueError(
                f"the dataloader of evaluation {name!r} is empty ({dataloader.num_items()} items): "
                "there is nothing to evaluate"
            )
        devices = self.model.devices()
        if devices and takes_device(dataloader.batcher):
            dataloader = dataloader.to_device(devices[0])
        directory = _prepare_directory(self._directory)
        _remove_old_logs(directory / Split.Test.value / tag)
        logger = _EvaluationLogger(directory, tag)
        store = MetricStore([])
        processor = EventProcessor(
            SplitMetrics(Split.Train),
            SplitMetrics(Split.Valid),
            [logger],
            store,
            self._renderer,
            test=self._metrics,
            evaluation=name,
        )
        self._metrics.clear()  # an earlier evaluation that failed midway left its state
        log_to = directory if self._application_log else None
        with _application_log(log_to, "evaluation.log"), _closing(logger):
            model = type(self.model).__name__
            _log.info("evaluating %s on %r (%d items)", model, name, dataloader.num_items())
            done = valid_epoch(
                self.model, dataloader, _EPOCH, _EPOCH, processor, self._interrupter, Split.Test
            )
            values = {
                metric: value
                for metric in sorted(self._metrics.names(numeric_only=True))
                if (value := store.find_metric(metric, _EPOCH, Aggregate.Mean, Split.Test)) is not None
            }
            summary = EvaluationSummary(name, done.items, done.iterations, values, repr(self.model))
            found = ", ".join(f"{metric} {value:.6g}" for metric, value in values.items())
            _log.info("evaluation %r: %s", name, found or "no numeric metric")
            if done.stop_reason is not None:
                _log.info("evaluation %r stopped: %s", name, done.stop_reason)
        if self._summary:
            text = str(summary)
            print(text)
            folder = directory / Split.Test.value / tag
            folder.mkdir(parents=True, exist_ok=True)  # an evaluation without metrics logged nothing there
            write_atomically(folder / "summary.txt", text + "\n")
        return EvaluationResult(summary, self._renderer, done.stop_reason)

    def __repr__(self) -> str:
        return f"Evaluator({type(self.model).__name__}, metrics={self._metrics.names()})"


def _remove_old_logs(folder: Path) -> None:
    """An earlier evaluation of the same name's logs, which this one replaces (never through a link)."""
    for path in (folder.parent, folder):
        if path.is_symlink():
            _log.warning("%s is a symbolic link: the old evaluation logs it leads to are not removed", path)
            return
    old = folder / f"{EPOCH_PREFIX}{_EPOCH}"
    if old.is_symlink():
        _log.warning("%s is a symbolic link: removing the link, not what it leads to", old)
        old.unlink(missing_ok=True)
    elif old.is_dir():
        shutil.rmtree(old)
    (folder / "summary.txt").unlink(missing_ok=True)


@contextmanager
def _closing(logger: FileMetricLogger) -> Iterator[None]:
    """On an error the logger's open files are closed (the evaluation's end closes them otherwise)."""
    try:
        yield
    except BaseException:
        logger.end_epoch(_EPOCH, Split.Test)
        raise
