"""File recorders: each writes one file atomically, with its own extension (Burn's ``record/file.rs``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, ClassVar

import ferrum._ferrum as _ferrum
from ferrum._ferrum import Device
from ferrum.record.burn_format import _as_record
from ferrum.record.error import RecordError, RecordFileError
from ferrum.record.recorder import _Recorder
from ferrum.record.settings import HalfPrecisionSettings, PrecisionSettings

__all__ = [
    "BinFileRecorder",
    "BinGzFileRecorder",
    "CompactRecorder",
    "DefaultRecorder",
    "FileRecorder",
    "JsonGzFileRecorder",
    "NamedMpkFileRecorder",
    "NamedMpkGzFileRecorder",
    "PrettyJsonFileRecorder",
]


class FileRecorder(_Recorder):
    """A recorder that writes files; ``record``/``load`` take the path without extension.

    Example:
        >>> import os, tempfile
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import LinearConfig
        >>> device = NdArray.device()
        >>> model = LinearConfig(2, 3).init(device)
        >>> for recorder in [NamedMpkFileRecorder(), BinGzFileRecorder(), PrettyJsonFileRecorder()]:
        ...     with tempfile.TemporaryDirectory() as tmp:
        ...         model.save_file(os.path.join(tmp, "model"), recorder)
        ...         loaded = model.load_file(os.path.join(tmp, "model"), recorder, device)
        ...         files = os.listdir(tmp)
        ...     print(files, loaded.weight.val().all_close(model.weight.val()))
        ['model.mpk'] True
        ['model.bin.gz'] True
        ['model.json'] True
    """

    extension: ClassVar[str] = "mpk"

    def file_path(self, path: str | os.PathLike[str]) -> str:
        """``path`` with this recorder's extension (added unless already there)."""
        text = os.fspath(path)
        return text if text.endswith("." + self.extension) else f"{text}.{self.extension}"

    def record(self, record: Mapping[str, Any], path: str | os.PathLike[str]) -> None:
        """Write ``record`` atomically to ``path`` plus the extension."""
        target = self.file_path(path)
        try:
            _ferrum.record_save(self._wire(record), target, self.format, self.settings.name)
        except OSError as err:
            raise RecordFileError(err.errno, err.strerror, err.filename) from err
        except ValueError as err:
            raise RecordError(str(err)) from err

    def load(
        self, path: str | os.PathLike[str], device: Device[Any], schema: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """Read the whole file into a record on ``device``.

        ``schema`` (a freshly built model's ``into_record()``) checks structure
        and shapes and gives the dtypes; bincode files need it (for an
        optimizer record, pass ``optimizer.record_schema(device)``).
        """
        target = self.file_path(path)
        if not os.path.exists(target):
            raise FileNotFoundError(f"no record file at {target}")
        try:
            loaded = _ferrum.record_load(target, self.format, self._wire(schema), device)
        except OSError as err:
            raise RecordFileError(err.errno, err.strerror, err.filename) from err
        except ValueError as err:
            raise RecordError(str(err)) from err
        return _as_record(loaded, target)


class NamedMpkFileRecorder(FileRecorder):
    """Named MessagePack (``.mpk``), Burn's default file format; ``DefaultRecorder`` at full precision.

    Example:
        >>> NamedMpkFileRecorder().file_path("model")
        'model.mpk'
    """

    format: ClassVar[str] = "named_mpk"
    extension: ClassVar[str] = "mpk"


class NamedMpkGzFileRecorder(FileRecorder):
    """Named MessagePack, gzipped (``.mpk.gz``)."""

    format: ClassVar[str] = "named_mpk_gz"
    extension: ClassVar[str] = "mpk.gz"


class BinFileRecorder(FileRecorder):
    """bincode (``.bin``): compact, without field names; loading needs the model.

    Example:
        >>> BinFileRecorder().file_path("model")
        'model.bin'
    """

    format: ClassVar[str] = "bin"
    extension: ClassVar[str] = "bin"


class BinGzFileRecorder(FileRecorder):
    """bincode, gzipped (``.bin.gz``)."""

    format: ClassVar[str] = "bin_gz"
    extension: ClassVar[str] = "bin.gz"


class JsonGzFileRecorder(FileRecorder):
    """Compact JSON, gzipped (``.json.gz``)."""

    format: ClassVar[str] = "json_gz"
    extension: ClassVar[str] = "json.gz"


class PrettyJsonFileRecorder(FileRecorder):
    """Indented JSON (``.json``), for reading by eye.

    Example:
        >>> PrettyJsonFileRecorder().file_path("model")
        'model.json'
    """

    format: ClassVar[str] = "pretty_json"
    extension: ClassVar[str] = "json"


class CompactRecorder(NamedMpkFileRecorder):
    """Named MessagePack in half precision (Burn's ``CompactRecorder``): half the size, f16 values.

    Example:
        >>> CompactRecorder().settings is HalfPrecisionSettings, CompactRecorder().file_path("model")
        (True, 'model.mpk')
    """

    def __init__(self, settings: type[PrecisionSettings] = HalfPrecisionSettings) -> None:
        super().__init__(settings)


DefaultRecorder = NamedMpkFileRecorder
"""Burn's ``DefaultRecorder``: named MessagePack, full precision."""
