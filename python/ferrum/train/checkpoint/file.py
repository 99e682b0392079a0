"""Checkpoint files: Burn's ``FileCheckpointer`` and the Learner's set of them.

``with_file_checkpointer(recorder)`` writes, per checkpointed epoch ``N``,
``checkpoint/model-N``, ``checkpoint/optim-N`` and ``checkpoint/scheduler-N``
with the recorder's extension (``.mpk`` for ``CompactRecorder``), as Burn
does, plus ferrum's ``checkpoint/training-N.json`` (the random generators
and data loader epochs, for a bit-exact resume). Every file is written
atomically, and ``checkpoint/manifest-N.json`` (each file's name and size)
last: a checkpoint without its manifest was cut short (the process killed
while saving or deleting it) and is never resumed from
(``IncompleteCheckpointError``); the next run removes its files.

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

import json
import logging
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ferrum._ferrum import Device
from ferrum.record import FileRecorder
from ferrum.train.checkpoint.state import TrainingState, state_version, write_atomically
from ferrum.train.checkpoint.strategy import CheckpointingAction, CheckpointingStrategy
from ferrum.train.learner import Learner
from ferrum.train.store import MetricStore

__all__ = ["FileCheckpointer", "IncompleteCheckpointError", "LearningCheckpointer"]

_MANIFEST_FORMAT = "ferrum-checkpoint-manifest"
_MANIFEST_VERSION = 1
# Every file a checkpoint of some epoch may leave, the engine's temporary files of a write cut
# short included (``.<name>.<pid>[.<n>].tmp``): what the orphan clean-up looks at.
_CHECKPOINT_FILE = re.compile(r"(model|optim|scheduler|training|manifest)-(\d+)\.[^.]+")
_TEMPORARY_FILE = re.compile(
    r"\.((?:model|optim|scheduler|training|manifest)-(\d+)\.[^.]+)\.(\d+)(?:\.\d+)?\.tmp"
)


_log = logging.getLogger("ferrum.train")


class IncompleteCheckpointError(FileNotFoundError):
    """A checkpoint that cannot be resumed from: files (or the manifest that completes it) are missing.

    ``missing`` names each missing or damaged part, ``epoch`` and ``directory`` the checkpoint.

    Example:
        >>> error = IncompleteCheckpointError(3, "checkpoint", ["manifest-3.json"], "found: 2")
        >>> error.missing, isinstance(error, FileNotFoundError)
        (('manifest-3.json',), True)
        >>> print(error)
        cannot resume from epoch 3: manifest-3.json missing from checkpoint (found: 2)
    """

    def __init__(
        self, epoch: int, directory: str | os.PathLike[str], missing: list[str], detail: str
    ) -> None:
        self.epoch = epoch
        self.directory = Path(directory)
        self.missing = tuple(missing)
        super().__init__(
            f"cannot resume from epoch {epoch}: {', '.join(missing)} missing from {directory} ({detail})"
        )

    def __str__(self) -> str:
        # OSError's own text would be the tuple of arguments.
        return str(self.args[0])


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
    """The model, optimizer and scheduler checkpointers, the training state files and the strategy.

    An epoch's checkpoint is complete once ``manifest-<epoch>.json`` is written, after every
    other file; deleting one removes the manifest first. So a process killed at any moment
    leaves complete checkpoints and files without a manifest, which ``remove_incomplete``
    clears.
    """

    def __init__(self, recorder: FileRecorder, directory: Path, strategy: CheckpointingStrategy) -> None:
        self.directory = directory
        self.model = FileCheckpointer(recorder, directory, "model")
        self.optim = FileCheckpointer(recorder, directory, "optim")
        self.scheduler = FileCheckpointer(recorder, directory, "scheduler")
        self.strategy = strategy

    def state_file(self, epoch: int) -> Path:
        """ferrum's training state of ``epoch``: ``training-<epoch>.json``."""
        return self.directory / f"training-{epoch}.json"

    def manifest_file(self, epoch: int) -> Path:
        """The file that completes ``epoch``'s checkpoint: ``manifest-<epoch>.json``."""
        return self.directory / f"manifest-{epoch}.json"

    def files(self, epoch: int) -> list[Path]:
        """The files of ``epoch``'s checkpoint the manifest lists: model, optimizer, scheduler, state."""
        return [c.file(epoch) for c in (self.model, self.optim, self.scheduler)] + [self.state_file(epoch)]

    def checkpoint(self, learner: Learner[Any], epoch: int, store: MetricStore, state: TrainingState) -> None:
        """Apply the strategy's actions for ``epoch``."""
        for action in self.strategy.checkpointing(epoch, store):
            if isinstance(action, CheckpointingAction.Delete):
                self.delete(action.epoch)
            else:
                self.save(learner, epoch, state)

    def save(self, learner: Learner[Any], epoch: int, state: TrainingState) -> None:
        """Write every file of ``epoch``'s checkpoint, then the manifest that makes it complete."""
        # A save over an older checkpoint of the same epoch must not leave it looking complete
        # while its files are being replaced.
        self.manifest_file(epoch).unlink(missing_ok=True)
        self.model.save(epoch, learner.model.into_record())
        self.optim.save(epoch, learner.optimizer.to_record())
        self.scheduler.save(epoch, learner.lr_scheduler.to_record())
        write_atomically(self.state_file(epoch), state.to_json())
        self._write_manifest(epoch)
        _log.info("checkpoint of epoch %d written to %s", epoch, self.directory)

    def _write_manifest(self, epoch: int) -> None:
        sizes = {path.name: path.stat().st_size for path in self.files(epoch)}
        manifest = {"format": _MANIFEST_FORMAT, "version": _MANIFEST_VERSION, "epoch": epoch, "files": sizes}
        write_atomically(self.manifest_file(epoch), json.dumps(manifest))

    def delete(self, epoch: int) -> None:
        """Remove every file of ``epoch``'s checkpoint, the manifest first."""
        self.manifest_file(epoch).unlink(missing_ok=True)
        for path in self.files(epoch):
            path.unlink(missing_ok=True)
        _log.info("checkpoint of epoch %d deleted", epoch)

    def missing(self, epoch: int) -> list[str]:
        """What keeps ``epoch``'s checkpoint from being resumed: missing or damaged parts (empty: none).

        A checkpoint of an older ferrum (a version-1 training state, no manifest) with all its
        files counts as complete. The training state file may be missing from a complete
        checkpoint (removed by hand, to resume without restoring the random generators).
        """
        names = [path.name for path in self.files(epoch)]
        present = {path.name: path.stat().st_size for path in self.files(epoch) if path.is_file()}
        manifest = self.manifest_file(epoch)
        if not manifest.is_file():
            absent = [name for name in names if name not in present]
            if not absent and self._legacy(epoch):
                return []
            # ferrum's own parts first, Burn's files after: "model-2.mpk, optim-2.mpk, scheduler-2.mpk
            # missing" reads as it did before manifests.
            state = self.state_file(epoch).name
            ours = [manifest.name] + [state] * (state in absent)
            return ours + [name for name in absent if name != state]
        listed = self._read_manifest(epoch)
        problems = []
        for name in names:
            if name not in listed:
                problems.append(f"{name} (not in {manifest.name})")
            elif name not in present:
                if name != self.state_file(epoch).name:
                    problems.append(name)
            elif present[name] != listed[name]:
                problems.append(f"{name} ({present[name]} bytes, {manifest.name} says {listed[name]})")
        return problems

    def complete_epochs(self) -> list[int]:
        """The epochs whose checkpoint can be resumed from, in order."""
        complete = []
        for epoch in self._epochs_with_files():
            try:
                if not self.missing(epoch):
                    complete.append(epoch)
            except ValueError as err:
                _log.warning("the checkpoint of epoch %d is skipped: %s", epoch, err)
        return complete

    def latest(self) -> int | None:
        """The newest epoch with a complete checkpoint (``None`` when there is none)."""
        complete = self.complete_epochs()
        return complete[-1] if complete else None

    def remove_incomplete(self) -> list[int]:
        """Delete the files of every checkpoint cut short (no manifest, not an older ferrum's complete one).

        A process killed while saving or deleting a checkpoint leaves them; nothing resumes from
        them, so they would stay forever. Checkpoints with a manifest are left alone, even with a
        file missing (that is someone's doing, not a kill's). The epochs cleared are returned.
        """
        if not self.directory.is_dir():
            return []
        cleared = []
        for epoch in self._epochs_with_files():
            if self.manifest_file(epoch).is_file() or not self.missing(epoch):
                continue
            for path in self.files(epoch):
                path.unlink(missing_ok=True)
            cleared.append(epoch)
        for path in self.directory.iterdir():
            match = _TEMPORARY_FILE.fullmatch(path.name)
            if match and not _alive(int(match.group(3))):
                path.unlink(missing_ok=True)
        if cleared:
            _log.warning(
                "removed the incomplete checkpoints of epochs %s from %s (their saves were cut short)",
                ", ".join(map(str, cleared)),
                self.directory,
            )
        return cleared

    def load(self, learner: Learner[Any], epoch: int) -> TrainingState | None:
        """Restore ``learner`` from ``epoch``'s checkpoint; the training state, if that file exists.

        ``IncompleteCheckpointError`` (a ``FileNotFoundError``) names every missing part and the
        epochs that do have complete checkpoints.
        """
        missing = self.missing(epoch)
        if missing:
            complete = self.complete_epochs()
            found = ", ".join(map(str, complete)) if complete else "none"
            partial = self.manifest_file(epoch).name in missing and epoch in self._epochs_with_files()
            detail = (
                "its save or deletion was cut short; " if partial else ""
            ) + f"checkpoints found: {found}"
            raise IncompleteCheckpointError(epoch, self.directory, missing, detail)
        if not self.manifest_file(epoch).is_file():
            _log.warning(
                "the checkpoint of epoch %d has no %s (written by an older ferrum): resuming from its files",
                epoch,
                self.manifest_file(epoch).name,
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

    def _legacy(self, epoch: int) -> bool:
        # Only an older ferrum wrote version-1 states, and it wrote the state file last.
        path = self.state_file(epoch)
        return state_version(path.read_text(encoding="utf-8")) == 1

    def _read_manifest(self, epoch: int) -> dict[str, int]:
        path = self.manifest_file(epoch)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}: not a checkpoint manifest (invalid JSON: {err})") from None
        files = data.get("files") if isinstance(data, dict) else None
        if (
            not isinstance(data, dict)
            or data.get("format") != _MANIFEST_FORMAT
            or data.get("version") != _MANIFEST_VERSION
            or data.get("epoch") != epoch
            or not isinstance(files, dict)
            or not all(isinstance(size, int) and not isinstance(size, bool) for size in files.values())
        ):
            raise ValueError(
                f"{path}: expected a {_MANIFEST_FORMAT!r} version {_MANIFEST_VERSION} of epoch {epoch} "
                "mapping file names to sizes"
            )
        return {str(name): int(size) for name, size in files.items()}

    def _epochs_with_files(self) -> list[int]:
        if not self.directory.is_dir():
            return []
        return sorted(
            {int(m.group(2)) for p in self.directory.iterdir() if (m := _CHECKPOINT_FILE.fullmatch(p.name))}
        )


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (on Windows, always assumed: probing a process there can end it)."""
    if sys.platform == "win32" or pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # someone else's process
    return True
