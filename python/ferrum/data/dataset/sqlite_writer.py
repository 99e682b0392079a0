"""``SqliteDatasetWriter``: storing dataclass items in an SQLite file, one table per split."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
import threading
import weakref
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import Any, Generic, TypeVar

from ferrum.data.closing import ClosesOnExit
from ferrum.data.dataset.dataclass_rows import item_fields
from ferrum.data.dataset.sqlite_columns import column_type, encode_column, quote_identifier
from ferrum.data.dataset.sqlite_serialized import CREATE_COLUMNS, item_to_blob

__all__ = ["SqliteDatasetWriter"]

T = TypeVar("T")


class SqliteDatasetWriter(ClosesOnExit, Generic[T]):
    """Writes items of dataclass ``item_type`` to an SQLite file: Burn's ``SqliteDatasetWriter``.

    Each split is a table with a ``row_id`` key (1, 2, ...) and one column per
    field; with ``row_serialized=True`` it has Burn's two columns instead,
    ``row_id`` and ``item`` (the item as a MessagePack blob in serde's compact
    form), which Burn's ``SqliteDataset`` reads into a Rust struct with the
    same fields in the same order. Rows go to ``<path>.tmp``;
    ``set_completed()`` (or leaving a ``with`` block without error) commits
    and moves the file into place, so readers never see a half-written dataset. Leaving a ``with`` block on an
    error discards the temporary file. ``write`` may be called from several
    threads.

    Example:
        >>> import dataclasses, pathlib, tempfile
        >>> from ferrum.data.dataset import SqliteDataset, SqliteDatasetWriter
        >>> @dataclasses.dataclass
        ... class Pair:
        ...     x: float
        ...     y: float
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "pairs.db"
        >>> with SqliteDatasetWriter(path, Pair) as writer:
        ...     writer.write_all("train", [Pair(0.0, 1.0), Pair(1.0, 2.0)])
        ...     writer.write("test", Pair(5.0, 6.0))
        0
        >>> SqliteDataset.splits(path)
        ['test', 'train']
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        item_type: type[T],
        *,
        overwrite: bool = False,
        row_serialized: bool = False,
    ) -> None:
        self._fields = item_fields(item_type)
        self._serialized = row_serialized
        if row_serialized and any(f.name == "item" for f in self._fields):
            raise ValueError(
                f"{item_type.__name__} has a field named 'item': its rows would be read back from columns, "
                "not from Burn's item blob (rename the field or write columns)"
            )
        if not row_serialized and any(f.name == "row_id" for f in self._fields):
            raise ValueError(f"{item_type.__name__} has a field named 'row_id', which the table reserves")
        self._item_type = item_type
        self._path = Path(path)
        if self._path.exists() and not overwrite:
            raise FileExistsError(f"SQLite dataset file already exists: {self._path} (pass overwrite=True)")
        if not self._path.parent.is_dir():
            raise FileNotFoundError(f"directory for the SQLite dataset does not exist: {self._path.parent}")
        # SQLite opens the file by name: in a folder only this user can enter, a link planted
        # under a predictable name (in a folder others may write to) cannot redirect it.
        private = tempfile.mkdtemp(prefix=f".{self._path.name}.", suffix=".tmp", dir=self._path.parent)
        self._tmp = Path(private) / self._path.name
        self._connection = sqlite3.connect(self._tmp, check_same_thread=False)
        # The temporary file is discarded on any failure, so a rollback journal buys nothing.
        self._connection.execute("PRAGMA journal_mode = OFF")
        self._connection.execute("PRAGMA synchronous = OFF")
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}
        self._completed = False
        self._finalizer = weakref.finalize(self, _discard, self._connection, self._tmp)

    @property
    def path(self) -> Path:
        """Where the finished file goes."""
        return self._path

    def write(self, split: str, item: T) -> int:
        """Append ``item`` to ``split``; returns its index in that split."""
        return self._insert(split, [item])

    def write_all(self, split: str, items: Iterable[T]) -> None:
        """Append every item of ``items`` to ``split``."""
        self._insert(split, list(items))

    def set_completed(self) -> None:
        """Commit, close and move the file to ``path``. No writes afterwards."""
        with self._lock:
            self._check_open()
            self._connection.commit()
            self._connection.close()
            self._finalizer.detach()
            with open(self._tmp, "rb+") as handle:
                os.fsync(handle.fileno())
            os.replace(self._tmp, self._path)
            self._tmp.parent.rmdir()
            self._completed = True

    def _insert(self, split: str, items: list[T]) -> int:
        rows = [self._row(split, item) for item in items]
        with self._lock:
            self._check_open()
            start = self._counts.get(split)
            if start is None:
                self._create_table(split)
                start = 0
            if self._serialized:
                names, marks = "row_id, item", "?, ?"
            else:
                names = ", ".join(["row_id", *(quote_identifier(f.name) for f in self._fields)])
                marks = ", ".join("?" * (len(self._fields) + 1))
            self._connection.executemany(
                f"INSERT INTO {quote_identifier(split)} ({names}) VALUES ({marks})",
                [(start + i + 1, *row) for i, row in enumerate(rows)],
            )
            self._counts[split] = start + len(rows)
            return start

    def _row(self, split: str, item: T) -> tuple[Any, ...]:
        if not isinstance(item, self._item_type):
            raise TypeError(
                f"SqliteDatasetWriter for {self._item_type.__name__} cannot write a {type(item).__name__} "
                f"to split {split!r}"
            )
        where = f"{self._path} split {split!r}"
        if self._serialized:
            return (item_to_blob(item, self._fields, where),)
        return tuple(
            encode_column(getattr(item, f.name), f, f"{where}: field {f.name!r}") for f in self._fields
        )

    def _create_table(self, split: str) -> None:
        if not isinstance(split, str) or not split or split.lower().startswith("sqlite_"):
            raise ValueError(
                f"invalid split name {split!r}: expected a non-empty name not starting with 'sqlite_'"
            )
        columns = CREATE_COLUMNS if self._serialized else ", ".join(
            [
                "row_id INTEGER PRIMARY KEY",
                *(f"{quote_identifier(f.name)} {column_type(f)}" for f in self._fields),
            ]
        )
        self._connection.execute(f"CREATE TABLE {quote_identifier(split)} ({columns})")

    def _check_open(self) -> None:
        if self._completed or not self._finalizer.alive:
            raise ValueError(f"SqliteDatasetWriter for {self._path} is already completed or closed")

    def close(self) -> None:
        """Abandon the writer: the temporary file is deleted and ``path`` is left untouched."""
        with self._lock:
            self._finalizer()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if exc_type is None and not self._completed:
            self.set_completed()
        else:
            self.close()


def _discard(connection: sqlite3.Connection, tmp: Path) -> None:
    connection.close()
    with contextlib.suppress(OSError):
        tmp.unlink()
    with contextlib.suppress(OSError):
        tmp.parent.rmdir()
