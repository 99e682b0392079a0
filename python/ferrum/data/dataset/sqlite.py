"""``SqliteDataset``: items read lazily, row by row, from a table of an SQLite file."""

from __future__ import annotations

import os
import sqlite3
import threading
import weakref
from pathlib import Path
from typing import TypeVar

from ferrum.data.closing import ClosesOnExit
from ferrum.data.dataset.base import Dataset
from ferrum.data.dataset.dataclass_rows import item_fields
from ferrum.data.dataset.sqlite_columns import decode_column, quote_identifier
from ferrum.data.dataset.sqlite_serialized import is_row_serialized, item_from_blob, table_columns

__all__ = ["SqliteDataset"]

T = TypeVar("T")


class SqliteDataset(Dataset[T], ClosesOnExit):
    """The rows of table ``split`` of an SQLite file, as items of a dataclass: Burn's ``SqliteDataset``.

    Each field is read from the column of the same name (extra columns are
    ignored), or, from a table of Burn's form (``row_id integer, item blob``,
    as Burn's ``SqliteDatasetWriter`` and ``row_serialized=True`` write), from
    the MessagePack blob of each row (serde's compact form: a dataclass as the
    array of its fields). Rows are fetched on demand in ``rowid`` order, so the
    file may be larger than memory. The file is opened read-only and may be
    read from several threads (the data loader's workers). Files written by
    ``SqliteDatasetWriter`` hold one table per split.

    Example:
        >>> import dataclasses, pathlib, tempfile
        >>> from ferrum.data.dataset import SqliteDataset, SqliteDatasetWriter
        >>> @dataclasses.dataclass
        ... class Row:
        ...     text: str
        ...     label: int
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "data.db"
        >>> with SqliteDatasetWriter(path, Row) as writer:
        ...     _ = writer.write("train", Row("hello", 1))
        >>> with SqliteDataset.from_db_file(path, "train", Row) as ds:
        ...     ds.get(0)
        Row(text='hello', label=1)
    """

    def __init__(self, connection: sqlite3.Connection, path: Path, split: str, item_type: type[T]) -> None:
        self._connection = connection
        self._lock = threading.Lock()
        self._path = path
        self._split = split
        self._item_type = item_type
        self._fields = item_fields(item_type)
        table = quote_identifier(split)
        typed_columns = table_columns(connection, split)
        self._serialized = is_row_serialized(typed_columns, self._fields)
        if self._serialized:
            self._read_fields = []
            names = "item"
        else:
            columns = [name for name, _ in typed_columns]
            missing = [f.name for f in self._fields if f.required and f.name not in columns]
            if missing:
                raise ValueError(
                    f"{path}: table {split!r} lacks the columns {missing} of {item_type.__name__} "
                    f"(found {columns})"
                )
            self._read_fields = [f for f in self._fields if f.name in columns]
            names = ", ".join(quote_identifier(f.name) for f in self._read_fields) or "NULL"
        count, low, high = connection.execute(
            f"SELECT COUNT(*), MIN(rowid), MAX(rowid) FROM {table}"
        ).fetchone()
        self._len: int = count
        # Rows written by the writer have rowids 1..n: index them directly; otherwise
        # (rows deleted or inserted by other tools) fall back to ordered offsets.
        if count == 0 or (low == 1 and high == count):
            self._query = f"SELECT {names} FROM {table} WHERE rowid = ? + 1"
        else:
            self._query = f"SELECT {names} FROM {table} ORDER BY rowid LIMIT 1 OFFSET ?"
        self._finalizer = weakref.finalize(self, connection.close)

    @staticmethod
    def from_db_file(path: str | os.PathLike[str], split: str, item_type: type[T]) -> SqliteDataset[T]:
        """The dataset stored in table ``split`` of the SQLite file at ``path``.

        Raises ``FileNotFoundError`` when the file is missing and ``ValueError``
        naming the available splits when the table is.
        """
        file = Path(path)
        item_fields(item_type)
        if not file.is_file():
            raise FileNotFoundError(f"SQLite dataset file not found: {file}")
        try:
            connection = sqlite3.connect(
                f"{file.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False
            )
            splits = _tables(connection)
        except sqlite3.DatabaseError as err:
            raise ValueError(f"{file}: not a readable SQLite database ({err})") from None
        if split not in splits:
            connection.close()
            raise ValueError(f"{file}: no split {split!r}; the file holds the splits {splits}")
        try:
            return SqliteDataset(connection, file, split, item_type)
        except BaseException:
            connection.close()
            raise

    @staticmethod
    def splits(path: str | os.PathLike[str]) -> list[str]:
        """The split (table) names stored in the SQLite file at ``path``."""
        file = Path(path)
        if not file.is_file():
            raise FileNotFoundError(f"SQLite dataset file not found: {file}")
        connection = sqlite3.connect(f"{file.resolve().as_uri()}?mode=ro", uri=True)
        try:
            return _tables(connection)
        except sqlite3.DatabaseError as err:
            raise ValueError(f"{file}: not a readable SQLite database ({err})") from None
        finally:
            connection.close()

    @property
    def split(self) -> str:
        """The table the items are read from."""
        return self._split

    def get(self, index: int) -> T | None:
        if not 0 <= index < self._len:
            return None
        with self._lock:
            if not self._finalizer.alive:
                raise ValueError(f"SqliteDataset {self._path} ({self._split!r}) is closed")
            row = self._connection.execute(self._query, (index,)).fetchone()
        if row is None:
            return None
        where = f"{self._path} table {self._split!r} row {index}"
        if self._serialized:
            item: T = item_from_blob(row[0], self._item_type, where)
            return item
        values = {
            f.name: decode_column(value, f, f"{where}: field {f.name!r}")
            for f, value in zip(self._read_fields, row, strict=True)
        }
        return self._item_type(**values)

    def len(self) -> int:
        return self._len

    def close(self) -> None:
        """Close the file; further reads raise ``ValueError``."""
        with self._lock:
            self._finalizer()

    def __repr__(self) -> str:
        return f"SqliteDataset({str(self._path)!r}, split={self._split!r}, len={self._len})"


def _tables(connection: sqlite3.Connection) -> list[str]:
    rows = connection.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
    ).fetchall()
    return [str(name) for (name,) in rows]
