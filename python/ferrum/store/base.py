"""``ModuleStore``: the options every store shares, as immutable builders (Burn's store options).

A store reads its file's tensors as snapshots (``snapshots()``), renamed by
its key remapping and, when asked, with contiguous list indices; loading
matches them to a module's paths through the store's adapter and filter.
"""

from __future__ import annotations

import abc
import dataclasses
import functools
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from typing_extensions import Self

from ferrum.store.adapter import IdentityAdapter, ModuleAdapter, PyTorchToBurnAdapter
from ferrum.store.apply import load_into, save_from
from ferrum.store.filter import PathFilter
from ferrum.store.remap import KeyRemapper, map_indices_contiguous
from ferrum.store.result import ApplyResult, StoreError
from ferrum.store.snapshot import TensorSnapshot

__all__ = ["MetadataStore", "ModuleStore"]

M = TypeVar("M")


@dataclasses.dataclass(frozen=True)
class ModuleStore(abc.ABC):
    """Options shared by ``PytorchStore``, ``SafetensorsStore`` and ``BurnpackStore``.

    Every ``with_*``/option method returns a new store. Subclasses read
    (``_read``) and write (``_write``) their format.
    """

    path: Path
    path_filter: PathFilter = dataclasses.field(default_factory=PathFilter)
    remapper: KeyRemapper = dataclasses.field(default_factory=KeyRemapper)
    from_adapter: ModuleAdapter = dataclasses.field(default_factory=IdentityAdapter)
    to_adapter: ModuleAdapter = dataclasses.field(default_factory=IdentityAdapter)
    partial: bool = False
    # None: on when loading with PyTorchToBurnAdapter (files laid out by PyTorch), else off.
    contiguous_indices: bool | None = None
    overwrite_file: bool = False

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Self:
        """A store over the file at ``path`` (read when loading, written when saving)."""
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"{cls.__name__}.from_file needs a path, found {type(path).__name__}")
        return cls(Path(path))

    # ---- filters (Burn's PathFilter options) -------------------------------------------------
    def filter(self, path_filter: PathFilter) -> Self:
        """Load or save only the tensors ``path_filter`` passes (module paths)."""
        return dataclasses.replace(self, path_filter=path_filter)

    def with_regex(self, pattern: str) -> Self:
        """Also pass module paths where the regular expression ``pattern`` matches."""
        return self.filter(self.path_filter.with_regex(pattern))

    def with_regexes(self, patterns: Iterable[str]) -> Self:
        """``with_regex`` for each pattern."""
        return self.filter(functools.reduce(PathFilter.with_regex, patterns, self.path_filter))

    def with_full_path(self, path: str) -> Self:
        """Also pass exactly the module path ``path``."""
        return self.filter(self.path_filter.with_full_path(path))

    def with_full_paths(self, paths: Iterable[str]) -> Self:
        """``with_full_path`` for each path."""
        return self.filter(functools.reduce(PathFilter.with_full_path, paths, self.path_filter))

    def with_predicate(self, predicate: Callable[[str, str], bool]) -> Self:
        """Also pass paths for which ``predicate(path, container)`` is true."""
        return self.filter(self.path_filter.with_predicate(predicate))

    def match_all(self) -> Self:
        """Pass every path (the default when no filter is set)."""
        return dataclasses.replace(self, path_filter=self.path_filter.match_all())

    # ---- renaming --------------------------------------------------------------------------
    def remap(self, remapper: KeyRemapper) -> Self:
        """Rename the file's paths with ``remapper`` (replaces earlier rules)."""
        return dataclasses.replace(self, remapper=remapper)

    def with_key_remapping(self, pattern: str, replacement: str) -> Self:
        """Also rename paths: ``re.sub(pattern, replacement, path)``, after the earlier rules."""
        return dataclasses.replace(self, remapper=self.remapper.add_pattern(pattern, replacement))

    def map_indices_contiguous(self, enabled: bool) -> Self:
        """Renumber list indices that skip (``conv.0``, ``conv.2`` → ``conv.0``, ``conv.1``).

        Unset, it is on exactly when the load adapter is ``PyTorchToBurnAdapter``.
        """
        return dataclasses.replace(self, contiguous_indices=_flag("map_indices_contiguous", enabled))

    def maps_indices_contiguous(self) -> bool:
        """Whether list indices are renumbered: as set, else when the load adapter is PyTorch's."""
        if self.contiguous_indices is None:
            return isinstance(self.from_adapter, PyTorchToBurnAdapter)
        return self.contiguous_indices

    # ---- loading and saving ----------------------------------------------------------------
    def with_from_adapter(self, adapter: ModuleAdapter) -> Self:
        """The adapter applied to the file's tensors when loading."""
        return dataclasses.replace(self, from_adapter=adapter)

    def with_to_adapter(self, adapter: ModuleAdapter) -> Self:
        """The adapter applied to the module's tensors when saving."""
        return dataclasses.replace(self, to_adapter=adapter)

    def allow_partial(self, allow: bool) -> Self:
        """Whether module tensors missing from the file are allowed (they keep their values)."""
        return dataclasses.replace(self, partial=_flag("allow_partial", allow))

    def overwrite(self, overwrite: bool) -> Self:
        """Whether saving may replace an existing file (default False, as Burn)."""
        return dataclasses.replace(self, overwrite_file=_flag("overwrite", overwrite))

    def keys(self) -> list[str]:
        """The file's tensor paths, after remapping (for debugging a load)."""
        return list(self.snapshots())

    def describe(self) -> str:
        """One line per tensor of the file: path, dtype and shape."""
        return "\n".join(f"{s.path}: {s.dtype} {list(s.shape)}" for s in self.snapshots().values())

    # ---- applying (Burn's ModuleStore::apply_to and collect_from) ------------------------------
    def apply_to(self, module: M) -> tuple[M, ApplyResult]:
        """A copy of ``module`` holding the store's tensors, and what was applied (``module.load_from``).

        Raises ``StoreError`` (with ``.result``) on a shape mismatch or an
        unreadable tensor, and on missing tensors unless the store allows partial loads.
        """
        loaded: tuple[M, ApplyResult] = load_into(module, self)
        return loaded

    def collect_from(self, module: Any) -> None:
        """Write ``module``'s tensors into the file (``module.save_into``)."""
        save_from(module, self)

    def snapshots(self) -> dict[str, TensorSnapshot]:
        """The file's tensors by path: unpacked by the load adapter, then renamed by the remapping
        and contiguous-index options."""
        raw = self.from_adapter.unpack(self._read())
        paths: dict[str, str] = {path: path for path in raw}
        if not self.remapper.is_empty():
            paths = self.remapper.remap(raw)
        if self.maps_indices_contiguous():
            paths = {new: paths[old] for new, old in map_indices_contiguous(paths).items()}
        return {new: raw[old].with_path(new) for new, old in paths.items()}

    @abc.abstractmethod
    def _read(self) -> dict[str, TensorSnapshot]:
        """Every tensor of the file, by its path in the file."""

    @abc.abstractmethod
    def _write(self, snapshots: list[TensorSnapshot]) -> None:
        """Write the snapshots as the file (read-only formats raise ``StoreError``)."""

    def _check_writable(self) -> None:
        if self.path.exists() and not self.overwrite_file:
            raise StoreError(f"{self.path} exists; use .overwrite(True) to replace it")


def _flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} takes a bool, found {type(value).__name__}")
    return value


def _producer_metadata(file_format: str) -> tuple[tuple[str, str], ...]:
    from importlib.metadata import PackageNotFoundError, version

    try:
        ours = version("ferrum")
    except PackageNotFoundError:
        ours = "unknown"
    return (("format", file_format), ("producer", "ferrum"), ("version", ours))


@dataclasses.dataclass(frozen=True)
class MetadataStore(ModuleStore):
    """A store whose files hold string metadata: by default ``format``, ``producer`` and ``version``."""

    file_format: ClassVar[str] = ""
    # None: the default entries, made when the file is written.
    extra_metadata: tuple[tuple[str, str], ...] | None = None

    def metadata(self, key: str, value: str) -> Self:
        """Also write the string pair ``key: value`` into the file's metadata."""
        if not isinstance(key, str) or not isinstance(value, str):
            found = f"{type(key).__name__}: {type(value).__name__}"
            raise TypeError(f"{type(self).__name__} metadata is str: str, found {found}")
        kept = tuple((k, v) for k, v in self.metadata_items() if k != key)
        return dataclasses.replace(self, extra_metadata=(*kept, (key, value)))

    def clear_metadata(self) -> Self:
        """Write no metadata (not even the producer)."""
        return dataclasses.replace(self, extra_metadata=())

    def metadata_items(self) -> tuple[tuple[str, str], ...]:
        """The ``(key, value)`` pairs a save writes."""
        if self.extra_metadata is None:
            return _producer_metadata(self.file_format)
        return self.extra_metadata
