"""``BurnpackStore``: Burn's own ``.bpk`` files, read and written with parameter ids.

Files ferrum writes load in Burn's ``BurnpackStore`` and the other way
round. As in Burn, ``from_file("model")`` means ``model.bpk`` unless
``auto_extension(False)``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from typing_extensions import Self

from ferrum.store.base import ModuleStore
from ferrum.store.burnpack.format import read_burnpack, write_burnpack
from ferrum.store.snapshot import TensorSnapshot

__all__ = ["BurnpackStore"]


def _default_metadata() -> tuple[tuple[str, str], ...]:
    from importlib.metadata import PackageNotFoundError, version

    try:
        ours = version("ferrum")
    except PackageNotFoundError:
        ours = "unknown"
    return (("format", "burnpack"), ("producer", "ferrum"), ("version", ours))


@dataclasses.dataclass(frozen=True)
class BurnpackStore(ModuleStore):
    """A Burnpack (``.bpk``) file, read or written; parameter ids are saved and restored.

    Example:
        >>> from ferrum.store import BurnpackStore
        >>> BurnpackStore.from_file("model").file_path().name
        'model.bpk'
    """

    extra_metadata: tuple[tuple[str, str], ...] = dataclasses.field(default_factory=_default_metadata)
    add_extension: bool = True

    def metadata(self, key: str, value: str) -> Self:
        """Also write the string pair ``key: value`` into the file's metadata."""
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError(
                f"Burnpack metadata is str: str, found {type(key).__name__}: {type(value).__name__}"
            )
        kept = tuple((k, v) for k, v in self.extra_metadata if k != key)
        return dataclasses.replace(self, extra_metadata=(*kept, (key, value)))

    def clear_metadata(self) -> Self:
        """Write no metadata (not even the producer)."""
        return dataclasses.replace(self, extra_metadata=())

    def auto_extension(self, enabled: bool) -> Self:
        """Whether a path without an extension gets ``.bpk`` (default True)."""
        if not isinstance(enabled, bool):
            raise TypeError(f"auto_extension takes a bool, found {type(enabled).__name__}")
        return dataclasses.replace(self, add_extension=enabled)

    def file_path(self) -> Path:
        """The file read or written."""
        if self.add_extension and not self.path.suffix:
            return self.path.with_suffix(".bpk")
        return self.path

    def file_metadata(self) -> dict[str, str]:
        """The string metadata stored in the file."""
        return read_burnpack(self.file_path())[1]

    def _read(self) -> dict[str, TensorSnapshot]:
        return read_burnpack(self.file_path())[0]

    def _write(self, snapshots: list[TensorSnapshot]) -> None:
        dataclasses.replace(self, path=self.file_path())._check_writable()
        write_burnpack(self.file_path(), snapshots, dict(self.extra_metadata))
