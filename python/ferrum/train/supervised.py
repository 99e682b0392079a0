"""``SupervisedTraining``: configure a training run, then ``launch`` it with a ``Learner`` (Burn's builder).

Example (the Burn Book guide, ``examples/guide``, in full)::

    training = (
        SupervisedTraining(artifact_dir, dataloader_train, dataloader_valid)
        .metrics(AccuracyMetric(), LossMetric())
        .with_file_checkpointer(CompactRecorder())
        .num_epochs(10)
        .summary()
    )
    result = training.launch(Learner(model, AdamConfig().init(), 1e-4))
    result.model  # trained, on the inner backend

The artifact directory gets Burn's layout: ``experiment.log`` (the
application log), ``train/epoch-N/<Metric>.log`` and
``valid/epoch-N/<Metric>.log`` (one entry per step), ``checkpoint/``
(``model-N``, ``optim-N``, ``scheduler-N`` plus ferrum's ``training-N.json``,
and ``manifest-N.json``, written last, which makes the checkpoint complete),
and ferrum's ``plots/<Metric>.png``, ``summary.txt`` and ``result.json``:
written last, once ``launch`` returns, it tells a finished run from a cut one.

A run in the main thread stops cleanly on the first Ctrl-C (``launch``
returns) and on the first SIGTERM, what ``kill`` and job schedulers send
(``launch`` raises ``TrainingTerminated``, a ``SystemExit`` of status 143):
the current step finishes and a checkpoint is written first.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from types import FrameType
from typing import Any, Generic, Literal, TypeVar

from typing_extensions import Self

from ferrum.data.dataloader import DataLoader, takes_device
from ferrum.distributed.strategy import SingleDevice, TrainingStrategy
from ferrum.module import Module
from ferrum.record import FileRecorder
from ferrum.train.arg_checks import require
from ferrum.train.checkpoint.file import LearningCheckpointer
from ferrum.train.checkpoint.state import TrainingState, write_atomically
from ferrum.train.checkpoint.strategy import (
    CheckpointingStrategy,
    ComposedCheckpointingStrategy,
    KeepLastNCheckpoints,
    MetricCheckpointingStrategy,
)
from ferrum.train.early_stopping import EarlyStoppingStrategy
from ferrum.train.epoch import report, train_epoch, valid_epoch
from ferrum.train.interrupter import Interrupter, sigint_stops
from ferrum.train.learner import Learner, LearningResult
from ferrum.train.logger import FileMetricLogger, MetricLogger, end_training, start_training
from ferrum.train.metric.base import Metric
from ferrum.train.plot.background import BackgroundPlotter, start_plotter
from ferrum.train.precision import MixedPrecision, Precision, validation_model
from ferrum.train.processor import EventProcessor, SplitMetrics, copy_metric
from ferrum.train.renderer import MetricsRenderer, default_renderer
from ferrum.train.renderer.base import MetricState, TrainingProgress
from ferrum.train.run_options import RunOptions
from ferrum.train.safe_open import open_no_follow
from ferrum.train.store import Aggregate, Direction, MetricStore, Split
from ferrum.train.summary import LearnerSummary

__all__ = ["SupervisedTraining", "TrainingTerminated"]

TrainBatchT = TypeVar("TrainBatchT")
ValidBatchT = TypeVar("ValidBatchT")
M = TypeVar("M", bound=Module[Any])

_log = logging.getLogger("ferrum.train")
# In the artifact directory, written last by a run that returned: status, last epoch, stop reason.
RESULT_FILE = "result.json"


class TrainingTerminated(SystemExit):
    """SIGTERM stopped ``launch``, after the current step and a checkpoint (Lightning's ``SIGTERMException``).

    A ``SystemExit``: uncaught, the process exits quietly with status 143 (128 + SIGTERM, the
    status a process killed by SIGTERM reports), so a scheduler sees the job was terminated;
    ``except Exception`` blocks let it through. ``checkpoint`` is the epoch whose checkpoint was
    written (``None`` without a file checkpointer).

    Example:
        >>> error = TrainingTerminated("SIGTERM: stopped at epoch 2, iteration 3", 2)
        >>> error.code, error.checkpoint, str(error)
        (143, 2, 'SIGTERM: stopped at epoch 2, iteration 3')
    """

    def __init__(self, message: str, checkpoint: int | None) -> None:
        super().__init__(128 + int(signal.SIGTERM))
        self.message = message
        self.checkpoint = checkpoint

    def __str__(self) -> str:
        return self.message


def _default_strategy() -> CheckpointingStrategy:
    # Burn's default: the last two epochs, and the best one by validation loss.
    return ComposedCheckpointingStrategy(
        KeepLastNCheckpoints(2),
        MetricCheckpointingStrategy("Loss", Aggregate.Mean, Direction.Lowest, Split.Valid),
    )


class SupervisedTraining(RunOptions, Generic[TrainBatchT, ValidBatchT]):
    """A supervised training run: data, metrics, checkpoints, epochs; ``launch`` trains a ``Learner``.

    ``dataloader_train`` yields batches for the model's ``train_step`` (on
    the autodiff backend), ``dataloader_valid`` batches for its
    ``inference_step`` (on the inner backend). Every builder method returns
    the builder.

    Example (a linear regression; batches are ``(x, y)`` pairs):
        >>> import io, tempfile
        >>> from typing import Any
        >>> from ferrum import D2, Tensor
        >>> from ferrum.backend import Autodiff, NdArray
        >>> from ferrum.data.dataloader import Batcher, DataLoaderBuilder
        >>> from ferrum.data.dataset import InMemDataset
        >>> from ferrum.module import Module
        >>> from ferrum.nn import Linear, LinearConfig
        >>> from ferrum.nn.loss import MseLoss
        >>> from ferrum.optim import SgdConfig
        >>> from ferrum.train import (
        ...     Learner, PlainRenderer, RegressionOutput, Split, SupervisedTraining, TrainOutput
        ... )
        >>> from ferrum.train.metric import LossMetric
        >>> class Line(Module[Any]):
        ...     fc: Linear[Any]
        ...     def step(self, batch: tuple[Tensor[Any, D2], Tensor[Any, D2]]) -> RegressionOutput[Any]:
        ...         out = self.fc.forward(batch[0])
        ...         return RegressionOutput(MseLoss().forward(out, batch[1]), out, batch[1])
        ...     def train_step(self, batch: Any) -> TrainOutput[RegressionOutput[Any]]:
        ...         item = self.step(batch)
        ...         return TrainOutput(self, item.loss.backward(), item)
        ...     def inference_step(self, batch: Any) -> RegressionOutput[Any]:
        ...         return self.step(batch)
        >>> class Pairs(Batcher[float, Any]):
        ...     def __init__(self, device: Any) -> None:
        ...         self.device = device
        ...     def batch(self, xs: list[float]) -> Any:
        ...         x = Tensor.from_data([[x] for x in xs], self.device)
        ...         return x, x * 3.0 + 1.0
        >>> data = InMemDataset([i / 10 for i in range(40)])
        >>> train = DataLoaderBuilder(Pairs(Autodiff[NdArray].device())).batch_size(8).build(data)
        >>> valid = DataLoaderBuilder(Pairs(NdArray.device())).batch_size(40).build(data)
        >>> model = Line(LinearConfig(1, 1).init(Autodiff[NdArray].device()))
        >>> result = (
        ...     SupervisedTraining(tempfile.mkdtemp(), train, valid)
        ...     .metrics(LossMetric())
        ...     .num_epochs(20)
        ...     .renderer(PlainRenderer(stream=io.StringIO()))
        ...     .launch(Learner(model, SgdConfig().init(), 0.05))
        ... )
        >>> result.summary.metric("Loss", Split.Valid).last < 0.01
        True
        >>> result.model.fc.bias.val().device().is_autodiff
        False
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        dataloader_train: DataLoader[TrainBatchT],
        dataloader_valid: DataLoader[ValidBatchT],
    ) -> None:
        for name, loader in (("dataloader_train", dataloader_train), ("dataloader_valid", dataloader_valid)):
            wanted = f"SupervisedTraining {name} must be a DataLoader (DataLoaderBuilder(...).build(dataset))"
            require(loader, DataLoader, wanted)
        self._directory = Path(directory)
        self._loader_train = dataloader_train
        self._loader_valid = dataloader_valid
        self._train = SplitMetrics(Split.Train)
        self._valid = SplitMetrics(Split.Valid)
        self._num_epochs = 1
        self._checkpoint: int | Literal["latest"] | None = None
        self._recorder: FileRecorder | None = None
        self._strategy = _default_strategy()
        self._accumulation: int | None = None
        self._early_stopping: EarlyStoppingStrategy | None = None
        self._init_run_options()
        self._loggers: list[MetricLogger] = []
        self._plots = True
        self._training_strategy: TrainingStrategy | None = None
        self._precision: Precision | MixedPrecision | None = None

    # ---- metrics

    def metrics(self, *metrics: Metric[Any]) -> Self:
        """Register each metric on both splits (a copy for validation); numeric ones are also plotted."""
        for metric in metrics:
            self._train.register(metric, numeric=False)
            self._valid.register(copy_metric(metric), numeric=False)
        return self

    def metrics_text(self, *metrics: Metric[Any]) -> Self:
        """Register each metric on both splits as a text metric (Burn's ``metrics_text``).

        Text metrics read the step outputs as the others do (CER and WER read
        token sequences: an output with ``output`` and ``targets`` Int
        [batch, length], or a ``cer_input()``/``wer_input()`` method); their
        entries are logged and shown, but not aggregated: they are not in the
        summary, the plots, or what checkpointing and early stopping can watch.
        """
        for metric in metrics:
            self._train.register(metric, numeric=False, text=True)
            self._valid.register(copy_metric(metric), numeric=False, text=True)
        return self

    def metric_train(self, metric: Metric[Any]) -> Self:
        """Register a training metric."""
        self._train.register(metric, numeric=False)
        return self

    def metric_valid(self, metric: Metric[Any]) -> Self:
        """Register a validation metric."""
        self._valid.register(metric, numeric=False)
        return self

    def metric_train_numeric(self, metric: Metric[Any]) -> Self:
        """Register a numeric training metric (``TypeError`` if it is not ``Numeric``)."""
        self._train.register(metric, numeric=True)
        return self

    def metric_valid_numeric(self, metric: Metric[Any]) -> Self:
        """Register a numeric validation metric (``TypeError`` if it is not ``Numeric``)."""
        self._valid.register(metric, numeric=True)
        return self

    # ---- checkpoints and stopping

    def with_file_checkpointer(self, recorder: FileRecorder) -> Self:
        """Write checkpoints with ``recorder`` into ``<directory>/checkpoint``."""
        wanted = "with_file_checkpointer needs a FileRecorder (e.g. CompactRecorder())"
        require(recorder, FileRecorder, wanted)
        self._recorder = recorder
        return self

    def with_checkpointing_strategy(self, strategy: CheckpointingStrategy) -> Self:
        """Which checkpoints to keep (default: the last 2 and the best by validation loss)."""
        require(strategy, CheckpointingStrategy, "a checkpointing strategy has checkpointing(epoch, store)")
        self._strategy = strategy
        return self

    def checkpoint(self, epoch: int | Literal["latest"]) -> Self:
        """Resume from the checkpoint of ``epoch``: training continues at ``epoch + 1``.

        ``"latest"`` resumes from the newest complete checkpoint, and starts at epoch 1 when
        there is none (what a job that may be requeued wants). A checkpoint whose save was cut
        short (no ``manifest-N.json``) is never resumed from: ``checkpoint(N)`` raises
        ``IncompleteCheckpointError`` naming what is missing.
        """
        if isinstance(epoch, str) and epoch != "latest":
            raise ValueError(f"checkpoint takes an epoch (an int >= 1) or 'latest', found {epoch!r}")
        self._checkpoint = "latest" if epoch == "latest" else _positive("checkpoint", epoch)
        return self

    def num_epochs(self, num_epochs: int) -> Self:
        """Train for ``num_epochs`` epochs (default 1)."""
        self._num_epochs = _positive("num_epochs", num_epochs)
        return self

    def grads_accumulation(self, accumulation: int) -> Self:
        """Sum the gradients of ``accumulation`` batches before each optimizer step."""
        self._accumulation = _positive("grads_accumulation", accumulation)
        return self

    def early_stopping(self, strategy: EarlyStoppingStrategy) -> Self:
        """Stop when ``strategy.should_stop(epoch, store)`` says so after an epoch."""
        require(strategy, EarlyStoppingStrategy, "an early-stopping strategy has should_stop(epoch, store)")
        self._early_stopping = strategy
        return self

    def with_training_strategy(self, strategy: TrainingStrategy) -> Self:
        """Train alone (``SingleDevice()``) or as one rank of a job (``ferrum.distributed.DataParallel``).

        Without it, a run launched by ``mpiexec`` with several ranks trains
        data-parallel over ``MPI.COMM_WORLD``, and any other run alone.
        """
        require(
            strategy,
            TrainingStrategy,
            "with_training_strategy needs a TrainingStrategy (SingleDevice() or "
            "ferrum.distributed.DataParallel(comm))",
        )
        self._training_strategy = strategy
        return self

    def with_precision(self, precision: Precision | MixedPrecision) -> Self:
        """Train in ``precision``: ``Precision.BF16_MIXED``, ``F16_MIXED`` (f32 master weights) or ``FULL``.

        Each step and each validation batch runs on a bf16/f16 copy of the model; the
        optimizer updates the f32 model with f32 gradients and keeps its state in f32;
        losses and outputs reach the metrics in f32; checkpoints and the model returned
        hold the f32 weights. ``F16_MIXED`` scales the loss (``GradScaler``, PyTorch's
        defaults): the model's ``train_step`` calls ``scale_loss(loss).backward()``.
        A ``MixedPrecision`` passes a scaler of one's own. See ``ferrum.train.precision``.
        """
        require(
            precision,
            (Precision, MixedPrecision),
            "with_precision needs a Precision (Precision.BF16_MIXED, F16_MIXED, FULL) or a MixedPrecision",
        )
        self._precision = precision
        return self

    # ---- output

    def with_metric_logger(self, logger: MetricLogger) -> Self:
        """Log metrics with ``logger``; once one is given the default file logger is not added (as Burn).

        ``with_metric_logger(FileMetricLogger(dir)).with_metric_logger(TensorBoardLogger(dir / "tb"))``
        keeps Burn's files and adds TensorBoard's.
        """
        require(logger, MetricLogger, "a metric logger has log, read_numeric and end_epoch methods")
        self._loggers.append(logger)
        return self

    def with_plots(self, enabled: bool) -> Self:
        """Whether ``plots/<Metric>.png`` are redrawn at each epoch end (default True; needs matplotlib)."""
        self._plots = bool(enabled)
        return self

    # ---- the run

    def launch(self, learner: Learner[M]) -> LearningResult[M]:
        """Train ``learner`` and return the model on the inner backend with the run's summary.

        The model must define ``train_step`` and ``inference_step`` and live
        on an autodiff backend; the loaders must not be empty; the artifact
        directory must be writable. Each is checked before the first step.
        """
        require(learner, Learner, "launch needs a Learner(model, optimizer, lr)")
        self._check(learner)
        if self._precision is not None:
            learner.set_precision(self._precision)
        self._move_loaders(learner)
        strategy = self._training_strategy or _default_training_strategy()
        try:
            directory = _prepare_directory(self._directory)
            main = strategy.is_main
            if self._recorder is not None and main:
                # Found now, not when the first epoch's checkpoint fails to be written.
                _prepare_directory(directory / "checkpoint", "checkpoint directory")
            with _application_log(directory if self._application_log and main else None):
                result, terminated = self._run(learner, directory, strategy)
        except BaseException as error:
            strategy.failed(error)
            raise
        if terminated is not None:
            # Raised once the run is over (logs closed, handlers restored); the other ranks got
            # SIGTERM too, so this is no failure to tell them about.
            raise terminated
        return result

    def _check(self, learner: Learner[Any]) -> None:
        model = learner.model
        name = type(model).__name__
        for method, burn in (("train_step", "TrainStep"), ("inference_step", "InferenceStep")):
            if not callable(getattr(model, method, None)):
                raise TypeError(
                    f"{name} has no {method}(batch) method: the Learner needs it (Burn's {burn}); "
                    "see ferrum.train.step"
                )
        devices = model.devices()
        plain = [d for d in devices if not d.is_autodiff]
        if plain or not devices:
            found = plain[0].backend.name() if plain else "no tensors"
            raise TypeError(
                f"the Learner trains {name} on an autodiff backend (e.g. Autodiff[NdArray]); found {found}"
            )
        for split, loader in (
            ("dataloader_train", self._loader_train),
            ("dataloader_valid", self._loader_valid),
        ):
            if len(loader) == 0:
                raise ValueError(
                    f"{split} is empty ({loader.num_items()} items): there is nothing to train on"
                )
        if self._checkpoint is not None and self._recorder is None:
            raise ValueError(
                f"checkpoint({self._checkpoint!r}) resumes from checkpoint files: "
                "call with_file_checkpointer(recorder) too"
            )

    def _move_loaders(self, learner: Learner[Any]) -> None:
        # Burn's Learner moves its loaders to the model's device: a batcher of Burn 0.20's
        # form, batch(items, device), makes training batches there and validation batches
        # on the inner backend (the model's valid()).
        device = learner.model.devices()[0]
        if takes_device(self._loader_train.batcher):
            self._loader_train = self._loader_train.to_device(device)
        if takes_device(self._loader_valid.batcher):
            self._loader_valid = self._loader_valid.to_device(device.inner)

    def _run(
        self, learner: Learner[M], directory: Path, strategy: TrainingStrategy
    ) -> tuple[LearningResult[M], TrainingTerminated | None]:
        # Logs, progress, plots and checkpoint files are the main rank's; the others train in silence.
        main = strategy.is_main
        loggers: list[MetricLogger] = (self._loggers or [FileMetricLogger(directory)]) if main else []
        store = MetricStore(loggers)
        renderer = (self._renderer or default_renderer()) if main else _SilentRenderer()
        reduce = strategy.reduce_sum if strategy.world_size > 1 else None
        processor = EventProcessor(self._train, self._valid, loggers, store, renderer, reduce)
        checkpointer = (
            LearningCheckpointer(self._recorder, directory / "checkpoint", self._strategy)
            if self._recorder is not None
            else None
        )
        numeric = sorted(
            set(self._train.names(numeric_only=True)) | set(self._valid.names(numeric_only=True))
        )
        num_epochs = self._num_epochs
        resume = self._checkpoint
        if checkpointer is not None and resume == "latest":
            resume = checkpointer.latest()
            if resume is None:
                _log.info(
                    "checkpoint('latest'): no complete checkpoint in %s, training starts at epoch 1",
                    checkpointer.directory,
                )
        assert resume != "latest"  # resolved above: checkpoint() without a checkpointer is refused in _check
        start = 1 if resume is None else resume + 1
        if checkpointer is not None and resume is not None:
            # Every rank reads the checkpoint (the artifact directory is shared, as in PyTorch's DDP);
            # the broadcast below makes sure they start from the same model all the same.
            self._restore(learner, checkpointer, resume)
        # Checked before the model is broadcast: a rank started differently fails here, at once,
        # instead of training to the end with replicas that silently differ.
        strategy.require_same("optimizer", learner.optimizer)
        strategy.require_same("learning rate schedule", learner.lr_scheduler)
        strategy.require_same(
            "run settings",
            {"epochs": (start, num_epochs), "grads_accumulation": self._accumulation, "checkpoint": resume},
        )
        learner.model = strategy.prepare_model(learner.model)
        # The rank's share of each epoch; kept as the run's loader so checkpoints record its epoch.
        self._loader_train = loader_train = strategy.prepare_loader(self._loader_train)
        if main:
            # A result.json left by an earlier run in this directory would make this one, if cut,
            # look finished.
            (directory / RESULT_FILE).unlink(missing_ok=True)
            # Only once the checkpoint is in: a failed resume must not cost the logs it would have replaced.
            _remove_logs_from(directory, start)
            if checkpointer is not None:
                checkpointer.remove_incomplete()
        store.forget_from(start)
        if checkpointer is not None and resume is not None:
            self._replay(checkpointer, store, resume)
        if not main:
            checkpointer = None
        _log.info(
            "training %s (%d parameters) with %s, epochs %d to %d, %d train and %d valid batches per epoch",
            type(learner.model).__name__,
            learner.model.num_params(),
            learner,
            start,
            num_epochs,
            len(loader_train),
            len(self._loader_valid),
        )
        stop_reason: str | None = None
        last_epoch = start - 1
        saved: int | None = None  # the epoch of the checkpoint written on an interruption
        plotter = start_plotter(directory, numeric) if self._plots and main else None
        sigterm = _SigtermStops(self._interrupter)
        start_training(loggers, learner)
        with (
            sigint_stops(self._interrupter),
            sigterm.installed(),
            _cleanup(plotter, loggers, num_epochs),
            _closed_at_end(renderer),
        ):
            for epoch in range(start, num_epochs + 1):
                strategy.start_epoch(loader_train, epoch)
                trained = train_epoch(
                    learner,
                    loader_train,
                    epoch,
                    num_epochs,
                    self._accumulation,
                    processor,
                    self._interrupter,
                    strategy,
                )
                if trained.diverged:
                    stop_reason = trained.stop_reason
                    break
                strategy.end_epoch(learner.model, epoch)
                last_epoch = epoch
                if trained.stop_reason is not None:
                    stop_reason = trained.stop_reason
                    if main:  # the checkpoint and the report are the main rank's
                        iterations = trained.iterations
                        saved = self._save_on_interrupt(
                            learner, checkpointer, epoch, iterations, complete=False
                        )
                    break
                if not main:
                    # Validation, checkpoints and early stopping happen on the main rank (as Burn's
                    # DDP validates on its main device); this rank learns only whether to go on.
                    if strategy.decide(False):
                        stop_reason = "stopped by the main rank"
                        break
                    continue
                valid = valid_epoch(
                    validation_model(learner.model.valid(), learner.precision),
                    self._loader_valid,
                    epoch,
                    num_epochs,
                    processor,
                    self._interrupter,
                )
                _log.info("epoch %d/%d: %s", epoch, num_epochs, _epoch_values(store, numeric, epoch))
                if valid.stop_reason is not None:
                    stop_reason = valid.stop_reason
                    saved = self._save_on_interrupt(
                        learner, checkpointer, epoch, trained.iterations, complete=True
                    )
                    strategy.decide(True)
                    break
                if checkpointer is not None:
                    checkpointer.checkpoint(
                        learner, epoch, store, self._state(learner, epoch, trained.iterations, True)
                    )
                if plotter is not None:
                    plotter.request(epoch)
                if self._early_stopping is not None and self._early_stopping.should_stop(epoch, store):
                    stop_reason = f"early stopping after epoch {epoch}"
                if strategy.decide(stop_reason is not None):
                    break
        if stop_reason is not None:
            _log.info("training stopped: %s", stop_reason)
        summary = LearnerSummary.from_store(store, numeric, last_epoch, model=repr(learner.model))
        if self._summary and main:
            text = str(summary)
            print(text)
            write_atomically(directory / "summary.txt", text + "\n")
        terminated = None
        if main and not sigterm.received:
            _write_result(directory, last_epoch, num_epochs, stop_reason, strategy.world_size)
        if sigterm.received:
            where = f"checkpoint of epoch {saved} written" if saved is not None else "no checkpoint written"
            terminated = TrainingTerminated(
                f"training terminated by SIGTERM at epoch {last_epoch}; {where}", saved
            )
            _log.info("%s; exiting with status %d", terminated, terminated.code)
        return LearningResult(learner.model.valid(), summary, stop_reason), terminated

    def _restore(self, learner: Learner[Any], checkpointer: LearningCheckpointer, epoch: int) -> None:
        """The learner, random generators and loader epochs as the checkpoint of ``epoch`` left them."""
        state = checkpointer.load(learner, epoch)
        loaders: dict[str, DataLoader[Any]] = {"train": self._loader_train, "valid": self._loader_valid}
        if state is None:
            for loader in loaders.values():
                loader.set_epoch(epoch)
        else:
            if not state.complete:
                report(
                    f"the checkpoint of epoch {epoch} was written after iteration {state.iteration}, "
                    f"before the epoch ended; training resumes at epoch {epoch + 1}"
                )
            state.restore_random()
            mixed = learner.precision
            if state.grad_scaler is not None and mixed is not None and mixed.scaler is not None:
                mixed.scaler = mixed.scaler.load_record(state.grad_scaler)
            for name, loader in loaders.items():
                loader.set_epoch(state.loader_epochs.get(name, epoch))
        _log.info("resumed from the checkpoint of epoch %d", epoch)

    def _replay(self, checkpointer: LearningCheckpointer, store: MetricStore, epoch: int) -> None:
        """Rebuild the strategies' memory (best epoch so far, checkpoints kept) from the logged epochs."""
        for past in range(1, epoch + 1):
            checkpointer.strategy.checkpointing(past, store)
            if self._early_stopping is not None:
                self._early_stopping.should_stop(past, store)

    def _state(self, learner: Learner[Any], epoch: int, iteration: int, complete: bool) -> TrainingState:
        scaler = None if learner.precision is None else learner.precision.scaler
        return TrainingState.capture(
            epoch=epoch,
            complete=complete,
            iteration=iteration,
            loader_epochs={"train": self._loader_train.epoch, "valid": self._loader_valid.epoch},
            grad_scaler=None if scaler is None else scaler.to_record(),
        )

    def _save_on_interrupt(
        self,
        learner: Learner[Any],
        checkpointer: LearningCheckpointer | None,
        epoch: int,
        iteration: int,
        *,
        complete: bool,
    ) -> int | None:
        if checkpointer is None:
            report("training interrupted; no checkpoint written (no file checkpointer)")
            return None
        checkpointer.save(learner, epoch, self._state(learner, epoch, iteration, complete))
        files = checkpointer.model.file(epoch)
        report(f"training interrupted at epoch {epoch}, iteration {iteration}; checkpoint written: {files}")
        return epoch

    def __repr__(self) -> str:
        return (
            f"SupervisedTraining({str(self._directory)!r}, epochs={self._num_epochs}, "
            f"train metrics={self._train.names()}, valid metrics={self._valid.names()})"
        )


class _SilentRenderer(MetricsRenderer):
    """The progress of a rank other than the main one: shown nowhere."""

    def start(self, progress: TrainingProgress) -> None:
        """Nothing to show."""

    def update(self, progress: TrainingProgress, metrics: Sequence[MetricState]) -> None:
        """Nothing to show."""

    def end(self, progress: TrainingProgress) -> None:
        """Nothing to show."""


def _default_training_strategy() -> TrainingStrategy:
    """Data-parallel when ``mpiexec`` (or ``srun``) started several ranks, else this process alone."""
    from ferrum.distributed.communicator import launched_ranks

    ranks = launched_ranks()
    if ranks <= 1:
        return SingleDevice()
    try:
        from ferrum.distributed import Communicator, DataParallel
    except ImportError as err:
        raise ImportError(
            f"this run was launched as {ranks} MPI ranks, which train data-parallel through mpi4py: "
            "pip install 'ferrum-dl[mpi]' (or pass with_training_strategy(SingleDevice()) to train "
            f"{ranks} independent copies)"
        ) from err
    return DataParallel(Communicator())


def _positive(setting: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{setting} must be an int >= 1, found {value!r}")
    return value


def _prepare_directory(directory: Path, what: str = "artifact directory") -> Path:
    """Create ``directory`` (artifacts or checkpoints) and check it can be written, before any training."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        probe = directory / f".ferrum-write-check-{os.getpid()}"  # per process: ranks share the directory
        # Created exclusively, so a link planted under this name is not followed (its target
        # truncated); unlink removes a leftover or planted entry itself, never a link's target.
        probe.unlink(missing_ok=True)
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        probe.unlink()
    except OSError as err:
        raise type(err)(
            err.errno, f"the {what} {directory} cannot be written ({err.strerror or err})"
        ) from err
    return directory


def _write_result(
    directory: Path, last_epoch: int, num_epochs: int, stop_reason: str | None, world_size: int
) -> None:
    # Written last, by the main rank, once the run returns: what tells a finished run from one
    # that was cut (a kill, a node lost, a rank of an MPI job that ended and took the job with it,
    # which the launcher may even report as success).
    status = "finished" if stop_reason is None else "stopped"
    result = {
        "status": status,
        "last_epoch": last_epoch,
        "num_epochs": num_epochs,
        "stop_reason": stop_reason,
        "world_size": world_size,
    }
    write_atomically(directory / RESULT_FILE, json.dumps(result, indent=2) + "\n")
    _log.info("training %s at epoch %d of %d; wrote %s", status, last_epoch, num_epochs, RESULT_FILE)


def _remove_logs_from(directory: Path, epoch: int) -> None:
    # A run owns the metric logs of the epochs it runs: older runs' logs of those epochs would mix in.
    # A symbolic link is never descended into: its target (maybe outside the artifact directory,
    # planted by whoever else can write there) is not this run's to delete.
    pattern = re.compile(r"epoch-(\d+)")
    for split in (Split.Train, Split.Valid):
        split_dir = directory / split.value
        if split_dir.is_symlink():
            _log.warning("%s is a symbolic link: the old metric logs it leads to are not removed", split_dir)
            continue
        if not split_dir.is_dir():
            continue
        for child in split_dir.iterdir():
            match = pattern.fullmatch(child.name)
            if not match or int(match.group(1)) < epoch:
                continue
            if child.is_symlink():
                # Removing the link itself keeps this epoch's logs from being written through it.
                _log.warning("%s is a symbolic link: removing the link, not what it leads to", child)
                child.unlink(missing_ok=True)
            elif child.is_dir():
                shutil.rmtree(child)


class _SigtermStops:
    """While ``installed``, the first SIGTERM stops the interrupter (as the first Ctrl-C); the next aborts.

    Python's default for SIGTERM is to die at once, with no checkpoint: a scheduler's
    pre-emption or time limit would lose the epoch.
    """

    def __init__(self, interrupter: Interrupter) -> None:
        self.interrupter = interrupter
        self.received = False

    def _on_sigterm(self, signum: int, frame: FrameType | None) -> None:
        if self.received:
            raise TrainingTerminated("a second SIGTERM: training aborted with no checkpoint", None)
        self.received = True
        self.interrupter.stop("SIGTERM")
        print(
            "\nferrum.train: SIGTERM: finishing the current step, then writing a checkpoint and exiting "
            "(status 143); a second SIGTERM aborts at once",
            file=sys.stderr,
            flush=True,
        )

    @contextmanager
    def installed(self) -> Iterator[None]:
        """Handle SIGTERM inside, then restore the previous handler; outside the main thread, do nothing."""
        if threading.current_thread() is not threading.main_thread():
            yield  # only the main thread may set signal handlers
            return
        previous = signal.getsignal(signal.SIGTERM)
        if previous is None:
            # A handler set outside Python (by an MPI runtime, an embedding program) could not be
            # put back afterwards: it stays in charge.
            yield
            return
        signal.signal(signal.SIGTERM, self._on_sigterm)
        try:
            yield
        finally:
            signal.signal(signal.SIGTERM, previous)


@contextmanager
def _cleanup(plotter: BackgroundPlotter | None, loggers: list[MetricLogger], epoch: int) -> Iterator[None]:
    """The plotting worker is always stopped (the plots finished unless training failed).

    On an error the loggers also release their open files.
    """
    try:
        yield
    except BaseException:
        for logger in loggers:
            for split in (Split.Train, Split.Valid):
                logger.end_epoch(epoch, split)
        with suppress(Exception):  # the training's own error is the one to report
            end_training(loggers)
        if plotter is not None:
            plotter.close(draw=False)
        raise
    if plotter is not None:
        plotter.close()
    end_training(loggers)


@contextmanager
def _closed_at_end(renderer: MetricsRenderer) -> Iterator[None]:
    """A renderer with a ``close()`` (the dashboard) gives the terminal back however the run ends."""
    try:
        yield
    finally:
        close = getattr(renderer, "close", None)
        if callable(close):
            close()


@contextmanager
def _application_log(directory: Path | None, file_name: str = "experiment.log") -> Iterator[None]:
    """While inside, ferrum's log (INFO and up) goes to ``<directory>/<file_name>`` too."""
    if directory is None:
        yield
        return
    logger = logging.getLogger("ferrum")
    # logging.FileHandler would append through a symbolic link planted as experiment.log.
    stream = open_no_follow(directory / file_name, "a")
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.setLevel(logging.INFO)
    level = logger.level
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        handler.close()
        stream.close()


def _epoch_values(store: MetricStore, names: list[str], epoch: int) -> str:
    parts = []
    for split in (Split.Train, Split.Valid):
        for name in names:
            value = store.find_metric(name, epoch, Aggregate.Mean, split)
            if value is not None:
                parts.append(f"{split} {name} {value:.6g}")
    return ", ".join(parts) or "no numeric metric"
