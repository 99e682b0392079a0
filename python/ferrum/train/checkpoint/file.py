"""Checkpoint files: Burn's ``FileCheckpointer`` and the Learner's set of them.

``with_file_checkpointer(recorder)`` writes, per checkpointed epoch ``N``,
``checkpoint/model-N``, ``checkpoint/optim-N`` and ``checkpoint/scheduler-N``
with the recorder's extension (``.mpk`` for ``CompactRecorder``), as Burn
does, plus ferrum's ``checkpoint/training-N.json`` (the random generators
and data loader epochs, for a bit-exact resume). Every file is written
atomically.

Example:
    >>> import tempfile
    >>> from ferrum.backend import NdArray
    >>> from ferrum.record import DefaultRecorder
    >>> from ferrum.train.checkpoint import FileCheckpointer
    >>> optim = FileCheckpointer(DefaultRecorder(), tempfile.mkdtemp(), "optim")
    >>> optim.save(3, {})
    >>> optim.file(3).name, optim.restore(3, NdArray.device())
    ('optim-3.mpk', {})
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ferrum._ferrum import Device
from ferrum.record import FileRecorder
from ferrum.train.checkpoint.state import TrainingState, write_atomically
from ferrum.train.checkpoint.strategy import CheckpointingAction, CheckpointingStrategy
from ferrum.train.learner import Learner
from ferrum.train.store import MetricStore

__all__ = ["FileCheckpointer", "LearningCheckpointer"]

_log = logging.getLogger("ferrum.train")


class FileCheckpointer:
    """Saves, restores and deletes the record ``<directory>/<name>-<epoch>`` with ``recorder``.

    Example:
        >>> import tempfile
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import LinearConfig
        >>> from ferrum.record import DefaultRecorder
        >>> model = LinearConfig(2, 2).init(NdArray.device())
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     checkpointer = FileCheckpointer(DefaultRecorder(), tmp, "model")
        ...     checkpointer.save(3, model.into_record())
        ...     restored = model.load_record(checkpointer.restore(3, NdArray.device()))
        ...     name = checkpointer.file(3).name
        >>> name, restored.weight.val().all_close(model.weight.val())
        ('model-3.mpk', True)
    """

    def __init__(self, recorder: FileRecorder, directory: str | os.PathLike[str], name: str) -> None:
        if not isinstance(recorder, FileRecorder):
            raise TypeError(
                "a file checkpointer needs a FileRecorder (e.g. CompactRecorder()), "
                f"found {type(recorder).__name__}"
            )
        self.recorder = recorder
        self.directory = Path(directory)
        self.name = name

    def file(self, epoch: int) -> Path:
        """The file of ``epoch``'s checkpoint, extension included."""
        return Path(self.recorder.file_path(self.directory / f"{self.name}-{epoch}"))

    def save(self, epoch: int, record: Mapping[str, Any]) -> None:
        """Write ``record`` as ``epoch``'s checkpoint."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self.recorder.record(record, self.directory / f"{self.name}-{epoch}")

    def restore(
        self, epoch: int, device: Device[Any], schema: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """Read ``epoch``'s checkpoint (``FileNotFoundError`` naming the file when it is absent)."""
        return self.recorder.load(self.directory / f"{self.name}-{epoch}", device, schema)

    def delete(self, epoch: int) -> None:
        """Remove ``epoch``'s checkpoint, if it exists."""
        self.file(epoch).unlink(missing_ok=True)

    def __repr__(self) -> str:
        return f"FileCheckpointer({self.recorder!r}, {str(self.directory)!r}, {self.name!r})"


class LearningCheckpointer:
    """The model, optimizer and scheduler checkpointers, the training state files and the strategy."""

    def __init__(self, recorder: FileRecorder, directory: Path, strategy: CheckpointingStrategy) -> None:
        self.directory = directory
        self.model = FileCheckpointer(recorder, directory, "model")
        self.optim = FileCheckpointer(recorder, directory, "optim")
        self.scheduler = FileCheckpointer(recorder, directory, "scheduler")
        self.strategy = strategy

    def state_file(self, epoch: int) -> Path:
        """ferrum's training state of ``epoch``: ``training-<epoch>.json``."""
        return self.directory / f"training-{epoch}.json"

    def checkpoint(self, learner: Learner[Any], epoch: int, store: MetricStore, state: TrainingState) -> None:
        """Apply the strategy's actions for ``epoch``."""
        for action in self.strategy.checkpointing(epoch, store):
            if isinstance(action, CheckpointingAction.Delete):
                self.delete(action.epoch)
            else:
                self.save(learner, epoch, state)

    def save(self, learner: Learner[Any], epoch: int, state: TrainingState) -> None:
        """Write every file of ``epoch``'s checkpoint."""
        self.model.save(epoch, learner.model.into_record())
        self.optim.save(epoch, learner.optimizer.to_record())
        self.scheduler.save(epoch, learner.lr_scheduler.to_record())
        write_atomically(self.state_file(epoch), state.to_json())
        _log.info("checkpoint of epoch %d written to %s", epoch, self.directory)

    def delete(self, epoch: int) -> None:
        """Remove every file of ``epoch``'s checkpoint."""
        for checkpointer in (self.model, self.optim, self.scheduler):
            checkpointer.delete(epoch)
        self.state_file(epoch).unlink(missing_ok=True)
        _log.info("checkpoint of epoch %d deleted", epoch)

    def load(self, learner: Learner[Any], epoch: int) -> TrainingState | None:
        """Restore ``learner`` from ``epoch``'s checkpoint; the training state, if that file exists.

        ``FileNotFoundError`` names every missing file and the epochs that do have checkpoints.
        """
        needed = [c.file(epoch) for c in (self.model, self.optim, self.scheduler)]
        missing = [path.name for path in needed if not path.is_file()]
        if missing:
            raise FileNotFoundError(
                f"cannot resume from epoch {epoch}: {', '.join(missing)} missing from {self.directory} "
                f"(checkpoints found: {self._epochs_found()})"
            )
        devices = learner.model.devices()
        if not devices:
            raise ValueError(f"{type(learner.model).__name__} has no tensors to restore a checkpoint into")
        device = devices[0]
        bincode = self.model.recorder.format.startswith("bin")
        learner.load_model(self.model.restore(epoch, device, learner.model.into_record()))
        # Optimizer states live beside the gradients, on the inner backend.
        inner = device.inner if device.is_autodiff else device
        optim_schema = learner.optimizer.record_schema(inner) if bincode else None
        learner.load_optim(self.optim.restore(epoch, inner, optim_schema))
        scheduler_schema = learner.lr_scheduler.to_record() if bincode else None
        learner.load_scheduler(self.scheduler.restore(epoch, inner, scheduler_schema))
        _log.info("checkpoint of epoch %d restored from %s", epoch, self.directory)
        path = self.state_file(epoch)
        if not path.is_file():
            _log.warning("%s is missing: random generators and data loader epochs are not restored", path)
            return None
        return TrainingState.from_json(path.read_text(encoding="utf-8"), str(path))

    def _epochs_found(self) -> str:
        pattern = re.compile(r"model-(\d+)\.")
        found = sorted(
            {int(m.group(1)) for p in self.directory.glob("model-*") if (m := pattern.match(p.name))}
        )
        return ", ".join(map(str, found)) if found else "none"
