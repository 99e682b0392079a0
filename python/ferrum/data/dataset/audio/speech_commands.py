"""Speech Commands from a local copy of its WAV files: Burn's ``SpeechCommandsDataset``.

The layout is the one of ``speech_commands_v0.02.tar.gz``: a folder per
word holding its ``.wav`` clips, ``_background_noise_`` with longer noise
recordings, and ``validation_list.txt`` and ``testing_list.txt`` naming the
clips (``word/file.wav``) of those splits. WAV files are read with Python's
``wave`` module (PCM, 8 to 32 bits) each time an item is read.
"""

from __future__ import annotations

import enum
import os
import wave
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias, Union

import numpy as np
import numpy.typing as npt

from ferrum.data.dataset.base import Dataset

__all__ = ["SpeechCommandClass", "SpeechCommandsDataset", "SpeechItem", "read_wav"]

PathLike: TypeAlias = Union[str, "os.PathLike[str]"]
Split: TypeAlias = Literal["train", "test", "validation"]

_LISTS = {"validation": "validation_list.txt", "test": "testing_list.txt"}
_SILENCE_FOLDERS = ("_background_noise_", "_silence_")
_UNKNOWN_FOLDER = "_unknown_"


class SpeechCommandClass(enum.IntEnum):
    """The classes of Speech Commands, with Burn's numbering (``int(label)`` is the class index).

    ``str(label)`` is the member's name, as Burn's ``to_string()``.
    """

    # The 20 target words.
    Yes = 0
    No = 1
    Up = 2
    Down = 3
    Left = 4
    Right = 5
    On = 6
    Off = 7
    Stop = 8
    Go = 9
    Zero = 10
    One = 11
    Two = 12
    Three = 13
    Four = 14
    Five = 15
    Six = 16
    Seven = 17
    Eight = 18
    Nine = 19
    # Other words of v0.01.
    Bed = 20
    Bird = 21
    Cat = 22
    Dog = 23
    Happy = 24
    House = 25
    Marvin = 26
    Sheila = 27
    Tree = 28
    Wow = 29
    # Words added in v0.02.
    Backward = 30
    Forward = 31
    Follow = 32
    Learn = 33
    Visual = 34
    # Background noise (``_background_noise_``, ``_silence_``).
    Silence = 35
    # Any other word (an ``_unknown_`` folder).
    Other = 36

    def __str__(self) -> str:
        return self.name


_WORDS = [m for m in SpeechCommandClass if m not in (SpeechCommandClass.Silence, SpeechCommandClass.Other)]


@dataclass(frozen=True, eq=False)
class SpeechItem:
    """One clip: Burn's ``SpeechItem``.

    ``audio_samples`` is ``float32`` in ``[-1, 1]``, the PCM values divided
    by ``2 ** (bits - 1)`` (channels interleaved, as the file stores them;
    Speech Commands is mono); ``sample_rate`` is in Hz.
    """

    audio_samples: npt.NDArray[np.float32]
    sample_rate: int
    label: SpeechCommandClass

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SpeechItem):
            return NotImplemented
        return (self.sample_rate, self.label) == (other.sample_rate, other.label) and bool(
            np.array_equal(self.audio_samples, other.audio_samples)
        )

    __hash__ = None  # type: ignore[assignment]


def read_wav(path: PathLike) -> tuple[npt.NDArray[np.float32], int]:
    """The samples of PCM WAV file ``path`` as ``float32`` in ``[-1, 1]``, and its sample rate.

    8-bit files are unsigned (128 is silence), wider ones signed; a value is
    divided by ``2 ** (bits - 1)``. Raises ``ValueError`` naming the file for
    anything but a complete PCM WAV file.

    Example:
        >>> import tempfile, wave
        >>> from pathlib import Path
        >>> from ferrum.data.dataset.audio import read_wav
        >>> path = Path(tempfile.mkdtemp()) / "a.wav"
        >>> with wave.open(str(path), "wb") as out:
        ...     out.setnchannels(1); out.setsampwidth(2); out.setframerate(16000)
        ...     out.writeframes((16384).to_bytes(2, "little", signed=True))
        >>> samples, rate = read_wav(path)
        >>> samples.tolist(), rate
        ([0.5], 16000)
    """
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"WAV file {file} not found")
    try:
        with wave.open(str(file), "rb") as reader:
            channels, width, rate = reader.getnchannels(), reader.getsampwidth(), reader.getframerate()
            frames = reader.getnframes()
            frame_size = channels * width
            # The header's frame count is not trusted: never read past what the file can hold.
            available = file.stat().st_size // max(frame_size, 1)
            if frames > available:
                raise ValueError(
                    f"WAV file {file} is truncated: its header announces {frames} frames of {frame_size} "
                    f"bytes, the file holds at most {available}"
                )
            data = reader.readframes(frames)
    except (wave.Error, EOFError) as err:
        raise ValueError(
            f"WAV file {file} cannot be read ({err}): expected an uncompressed PCM WAV"
        ) from None
    if len(data) != frames * frame_size:
        raise ValueError(
            f"WAV file {file} is truncated: its header announces {frames} frames, "
            f"its data holds {len(data) // max(frame_size, 1)}"
        )
    return _pcm_to_float(data, width, file), rate


def _pcm_to_float(data: bytes, width: int, file: Path) -> npt.NDArray[np.float32]:
    raw = np.frombuffer(data, dtype=np.uint8)
    if width == 1:
        values = raw.astype(np.int32) - 128
    elif width == 2:
        values = raw.view("<i2").astype(np.int32)
    elif width == 3:
        triples = raw.reshape(-1, 3).astype(np.int32)
        values = triples[:, 0] | (triples[:, 1] << 8) | (triples[:, 2] << 16)
        values = np.where(values >= 1 << 23, values - (1 << 24), values)
    elif width == 4:
        values = raw.view("<i4")
    else:
        raise ValueError(f"WAV file {file}: {8 * width}-bit samples are not supported (8, 16, 24 or 32)")
    return (values.astype(np.float64) / float(1 << (8 * width - 1))).astype(np.float32)


def _folder_class(name: str, root: Path) -> SpeechCommandClass:
    if name in _SILENCE_FOLDERS:
        return SpeechCommandClass.Silence
    if name == _UNKNOWN_FOLDER:
        return SpeechCommandClass.Other
    for member in _WORDS:
        if member.name.lower() == name:
            return member
    raise ValueError(
        f"folder {root / name} is not a Speech Commands word: expected one of "
        f"{[m.name.lower() for m in _WORDS]}, _background_noise_, _silence_ or _unknown_"
    )


class SpeechCommandsDataset(Dataset[SpeechItem]):
    """Speech Commands (v0.02: 35 words, 105,829 clips) from a local copy: Burn's ``SpeechCommandsDataset``.

    ``root`` is the folder the archive extracts to. The splits are the
    dataset's own: ``"validation"`` the clips of ``validation_list.txt``,
    ``"test"`` those of ``testing_list.txt``, ``"train"`` every other clip of
    a word folder plus the ``_background_noise_`` recordings (labelled
    ``Silence``, whole, as Burn's source gives them). Clips are in sorted
    path order. Nothing is downloaded: a missing list file or listed clip
    raises ``FileNotFoundError`` naming it.

    Example:
        >>> from ferrum.data.dataset.audio import SpeechCommandsDataset
        >>> test = SpeechCommandsDataset.test("/data/speech_commands_v0.02")  # doctest: +SKIP
        >>> item = test.get(0)  # doctest: +SKIP
        >>> item.sample_rate, str(item.label)  # doctest: +SKIP
        (16000, 'Right')
    """

    def __init__(self, root: PathLike, split: Split) -> None:
        """The clips of ``split`` (``"train"``, ``"test"`` or ``"validation"``) under ``root``."""
        if split not in ("train", "test", "validation"):
            raise ValueError(
                f"SpeechCommandsDataset split must be 'train', 'test' or 'validation', found {split!r}"
            )
        base = Path(root)
        if not base.is_dir():
            raise FileNotFoundError(
                f"Speech Commands folder {base} not found: extract speech_commands_v0.02.tar.gz there"
            )
        listed = {name: _read_list(base, name) for name in _LISTS}
        if split == "train":
            held_out = listed["validation"] | listed["test"]
            entries = [
                (path, label)
                for path, label in _all_clips(base)
                if label is SpeechCommandClass.Silence or path.relative_to(base).as_posix() not in held_out
            ]
        else:
            entries = []
            for relative in sorted(listed[split]):
                path = base / relative
                if not path.is_file():
                    raise FileNotFoundError(f"clip {path}, listed in {base / _LISTS[split]}, not found")
                entries.append((path, _folder_class(relative.split("/")[0], base)))
        self._entries: list[tuple[Path, SpeechCommandClass]] = entries

    @staticmethod
    def train(root: PathLike) -> SpeechCommandsDataset:
        """The training clips."""
        return SpeechCommandsDataset(root, "train")

    @staticmethod
    def test(root: PathLike) -> SpeechCommandsDataset:
        """The clips of ``testing_list.txt``."""
        return SpeechCommandsDataset(root, "test")

    @staticmethod
    def validation(root: PathLike) -> SpeechCommandsDataset:
        """The clips of ``validation_list.txt``."""
        return SpeechCommandsDataset(root, "validation")

    @staticmethod
    def num_classes() -> int:
        """The number of classes, 37 (``SpeechCommandClass``)."""
        return len(SpeechCommandClass)

    def get(self, index: int) -> SpeechItem | None:
        if not 0 <= index < len(self._entries):
            return None
        path, label = self._entries[index]
        samples, rate = read_wav(path)
        return SpeechItem(samples, rate, label)

    def len(self) -> int:
        return len(self._entries)

    def paths(self) -> Sequence[Path]:
        """The clip files, in item order."""
        return [path for path, _ in self._entries]


def _read_list(root: Path, split: str) -> set[str]:
    path = root / _LISTS[split]
    if not path.is_file():
        raise FileNotFoundError(
            f"Speech Commands {split} list {_LISTS[split]} is missing from {root}: "
            f"it ships in speech_commands_v0.02.tar.gz; put it at {path}"
        )
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not UTF-8 text ({err.reason})") from None
    entries = set()
    for number, line in enumerate(lines, 1):
        entry = line.strip().replace("\\", "/")
        if not entry:
            continue
        parts = entry.split("/")
        if len(parts) != 2 or not all(parts) or ".." in parts:
            raise ValueError(f"{path} line {number}: expected 'word/file.wav', found {entry[:80]!r}")
        entries.add(entry)
    return entries


def _all_clips(root: Path) -> list[tuple[Path, SpeechCommandClass]]:
    clips: list[tuple[Path, SpeechCommandClass]] = []
    for folder in sorted(e for e in root.iterdir() if e.is_dir() and not e.name.startswith(".")):
        label = _folder_class(folder.name, root)
        clips.extend((path, label) for path in sorted(folder.glob("*.wav")) if path.is_file())
    return clips
