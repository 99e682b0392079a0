"""``BurnpackStore``: Burn's own ``.bpk`` files, read and written with parameter ids.

Files ferrum writes load in Burn's ``BurnpackStore`` and the other way
round. As in Burn, ``from_file("model")`` means ``model.bpk`` unless
``auto_extension(False)``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import ClassVar

from typing_extensions import Self

from ferrum.store.base import MetadataStore
from ferrum.store.burnpack.format import read_burnpack, write_burnpack
from ferrum.store.snapshot import TensorSnapshot

__all__ = ["BurnpackStore"]


@dataclasses.dataclass(frozen=True)
class BurnpackStore(MetadataStore):
    """A Burnpack (``.bpk``) file, read or written; parameter ids are saved and restored.

    Example:
        >>> from ferrum.store import BurnpackStore
        >>> BurnpackStore.from_file("model").file_path().name
        'model.bpk'
    """

    file_format: ClassVar[str] = "burnpack"
    add_extension: bool = True

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
        write_burnpack(self.file_path(), snapshots, dict(self.metadata_items()))
