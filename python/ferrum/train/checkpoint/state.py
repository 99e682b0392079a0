"""The training state saved beside a checkpoint: every random generator and the data loaders' epochs.

Burn's checkpoints hold the model, the optimizer and the scheduler. To make
a resumed run give the same weights as an uninterrupted one, ferrum also
writes ``checkpoint/training-<epoch>.json``: the engine generator's exact
position (dropout masks, random tensors), Python's ``random`` and NumPy's
global generator (which batchers may use for augmentation), the epoch the
data loaders are at (their shuffle order), whether the epoch's training
had finished (a Ctrl-C checkpoint may be written mid-epoch) and, for f16
mixed precision, the loss scaler's state (``grad_scaler``). It is JSON,
read as untrusted input: every field is checked and errors name the file.

Example:
    >>> from ferrum.train.checkpoint.state import TrainingState
    >>> state = TrainingState.capture(epoch=3, complete=True, iteration=10, loader_epochs={"train": 3})
    >>> TrainingState.from_json(state.to_json(), "training-3.json") == state
    True
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import ferrum._ferrum as _ferrum
from ferrum.train.loss_scale import GradScaler

__all__ = ["TrainingState", "state_version", "write_atomically"]

_FORMAT = "ferrum-training-state"
# Version 2 has version 1's fields; it says the checkpoint is completed by a manifest
# (``manifest-<epoch>.json``, see ``file.py``), so a version-1 file without one is an older
# ferrum's complete checkpoint, while a version-2 file without one is a save cut short.
_VERSION = 2
_READABLE = (1, 2)
_MT_WORDS = 624


@dataclass(frozen=True)
class TrainingState:
    """Where training stood when a checkpoint was written, beyond the model, optimizer and scheduler."""

    epoch: int
    complete: bool
    iteration: int
    engine_random: bytes
    python_random: tuple[Any, ...]
    numpy_random: tuple[Any, ...]
    loader_epochs: dict[str, int] = field(default_factory=dict)
    # GradScaler.to_record() of an f16 mixed-precision run (PyTorch saves the scaler's state_dict too).
    grad_scaler: dict[str, Any] | None = None

    @staticmethod
    def capture(
        *,
        epoch: int,
        complete: bool,
        iteration: int,
        loader_epochs: dict[str, int],
        grad_scaler: dict[str, Any] | None = None,
    ) -> TrainingState:
        """The state of every generator now."""
        name, keys, pos, has_gauss, cached = np.random.get_state(legacy=True)
        version, words, gauss = random.getstate()
        return TrainingState(
            epoch=epoch,
            complete=complete,
            iteration=iteration,
            engine_random=_ferrum.random_state(),
            python_random=(version, tuple(words), gauss),
            numpy_random=(str(name), tuple(int(k) for k in keys), int(pos), int(has_gauss), float(cached)),
            loader_epochs=dict(loader_epochs),
            grad_scaler=None if grad_scaler is None else dict(grad_scaler),
        )

    def restore_random(self) -> None:
        """Put every generator back where ``capture`` found it."""
        _ferrum.set_random_state(self.engine_random)
        version, words, gauss = self.python_random
        random.setstate((version, tuple(words), gauss))
        name, keys, pos, has_gauss, cached = self.numpy_random
        np.random.set_state((name, np.array(keys, dtype=np.uint32), pos, has_gauss, cached))

    def to_json(self) -> str:
        """The state as JSON text."""
        scaler = {} if self.grad_scaler is None else {"grad_scaler": self.grad_scaler}
        return json.dumps(
            {
                "format": _FORMAT,
                "version": _VERSION,
                "epoch": self.epoch,
                "complete": self.complete,
                "iteration": self.iteration,
                "engine_random": self.engine_random.hex(),
                "python_random": _listed(self.python_random),
                "numpy_random": _listed(self.numpy_random),
                "loader_epochs": self.loader_epochs,
                **scaler,
            }
        )

    @staticmethod
    def from_json(text: str, source: str) -> TrainingState:
        """Parse ``to_json``'s text; ``ValueError`` names ``source`` and the bad field."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise ValueError(f"{source}: not a training state (invalid JSON: {err})") from None
        check = _Checker(source, data)
        if data.get("format") != _FORMAT or data.get("version") not in _READABLE:
            found = (data.get("format"), data.get("version"))
            raise ValueError(f"{source}: expected format {_FORMAT!r} version 1 or 2, found {found}")
        try:
            engine = bytes.fromhex(check.field("engine_random", str))
        except ValueError:
            raise ValueError(f"{source}: 'engine_random' must be hex text") from None
        py_random = check.field("python_random", list)
        if (
            len(py_random) != 3
            or not isinstance(py_random[0], int)
            or not _ints(py_random[1], _MT_WORDS + 1, 2**32)
            or not (py_random[2] is None or isinstance(py_random[2], float))
        ):
            raise ValueError(f"{source}: 'python_random' is not a state of Python's random module")
        np_random = check.field("numpy_random", list)
        if (
            len(np_random) != 5
            or np_random[0] != "MT19937"
            or not _ints(np_random[1], _MT_WORDS, 2**32)
            or not all(isinstance(v, int) for v in np_random[2:4])
            or not isinstance(np_random[4], (int, float))
        ):
            raise ValueError(f"{source}: 'numpy_random' is not a state of NumPy's MT19937 generator")
        loaders = check.field("loader_epochs", dict)
        if not all(isinstance(k, str) and isinstance(v, int) and v >= 0 for k, v in loaders.items()):
            raise ValueError(f"{source}: 'loader_epochs' must map loader names to epochs >= 0")
        scaler = data.get("grad_scaler")
        if scaler is not None:
            try:
                GradScaler().load_record(scaler)
            except (ValueError, TypeError) as err:
                raise ValueError(f"{source}: 'grad_scaler': {err}") from None
        return TrainingState(
            epoch=check.count("epoch"),
            complete=check.field("complete", bool),
            iteration=check.count("iteration"),
            engine_random=engine,
            python_random=(py_random[0], tuple(py_random[1]), py_random[2]),
            numpy_random=(np_random[0], tuple(np_random[1]), np_random[2], np_random[3], float(np_random[4])),
            loader_epochs=dict(loaders),
            grad_scaler=scaler,
        )


class _Checker:
    def __init__(self, source: str, data: object) -> None:
        if not isinstance(data, dict):
            raise ValueError(f"{source}: a training state is a JSON object, found {type(data).__name__}")
        self.source = source
        self.data = data

    def field(self, name: str, kind: type[Any]) -> Any:
        if name not in self.data:
            raise ValueError(f"{self.source}: missing '{name}'")
        value = self.data[name]
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            raise ValueError(f"{self.source}: '{name}' must be a {kind.__name__}, found {value!r}")
        return value

    def count(self, name: str) -> int:
        value: int = self.field(name, int)
        if value < 0:
            raise ValueError(f"{self.source}: '{name}' must be >= 0, found {value}")
        return value


def state_version(text: str) -> int | None:
    """The ``version`` of a training state file's text (``None`` when it is not a training state)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None
    version = data.get("version") if isinstance(data, dict) and data.get("format") == _FORMAT else None
    return version if isinstance(version, int) and not isinstance(version, bool) else None


def _listed(state: tuple[Any, ...]) -> list[Any]:
    # The generator's words (the second item) become a JSON list, the rest stays as it is.
    return [state[0], list(state[1]), *state[2:]]


def _ints(values: object, length: int, bound: int) -> bool:
    return (
        isinstance(values, list)
        and len(values) == length
        and all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < bound for v in values)
    )


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file, so a crash never leaves half a file.

    A symbolic link at ``path`` is replaced, never written through. The ``OSError`` names the file.
    """
    try:
        # The engine's writer creates its temporary file exclusively (a link planted under a
        # predictable temporary name is never followed), fsyncs it and renames it over ``path``.
        _ferrum.write_file_atomic(os.fspath(path), text.encode("utf-8"))
    except OSError as err:
        # The engine's error says which step failed (and keeps its kind) but not which file.
        raise type(err)(f"cannot write {path}: {err}") from err
