"""``InMemDataset``: items held in a list, loadable from JSON-lines and CSV files."""

from __future__ import annotations

import contextlib
import csv
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TextIO, TypeVar

from ferrum.data.dataset.base import Dataset
from ferrum.data.dataset.dataclass_rows import build_item, item_fields

__all__ = ["InMemDataset"]

ItemT = TypeVar("ItemT")
T = TypeVar("T")


class InMemDataset(Dataset[ItemT]):
    """A dataset over items kept in memory: Burn's ``InMemDataset``.

    Example:
        >>> from ferrum.data.dataset import InMemDataset
        >>> ds = InMemDataset(["a", "b", "c"])
        >>> len(ds), ds.get(1), ds.get(3)
        (3, 'b', None)
    """

    def __init__(self, items: Iterable[ItemT]) -> None:
        self._items = list(items)

    def get(self, index: int) -> ItemT | None:
        return self._items[index] if 0 <= index < len(self._items) else None

    def len(self) -> int:
        return len(self._items)

    @staticmethod
    def from_json_rows(path: str | os.PathLike[str], item_type: type[T]) -> InMemDataset[T]:
        """Items of dataclass ``item_type`` read from a file holding one JSON object per line.

        Blank lines are skipped; values are converted to the field types.

        Example:
            >>> import dataclasses, pathlib, tempfile
            >>> from ferrum.data.dataset import InMemDataset
            >>> @dataclasses.dataclass
            ... class Row:
            ...     text: str
            ...     label: int
            >>> path = pathlib.Path(tempfile.mkdtemp()) / "rows.jsonl"
            >>> _ = path.write_text('{"text": "hi", "label": 1}\\n')
            >>> InMemDataset.from_json_rows(path, Row).get(0)
            Row(text='hi', label=1)
        """
        item_fields(item_type)
        file = Path(path)
        items: list[T] = []
        with _open_text(file) as lines:
            for number, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                where = f"{file} line {number}"
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as err:
                    raise ValueError(f"{where}: invalid JSON ({err.msg} at column {err.colno})") from None
                if not isinstance(row, dict):
                    raise ValueError(f"{where}: expected a JSON object, found {type(row).__name__}")
                items.append(build_item(item_type, row, where))
        return InMemDataset(items)

    @staticmethod
    def from_csv(
        path: str | os.PathLike[str], item_type: type[T], *, delimiter: str = ","
    ) -> InMemDataset[T]:
        """Items of dataclass ``item_type`` read from a CSV file whose first row names the columns.

        Each cell is converted to its field's type; an empty cell is ``None`` in an
        optional field; containers are written as JSON in their cell.

        Example:
            >>> import dataclasses, pathlib, tempfile
            >>> from ferrum.data.dataset import InMemDataset
            >>> @dataclasses.dataclass
            ... class Point:
            ...     x: float
            ...     y: float
            >>> path = pathlib.Path(tempfile.mkdtemp()) / "points.csv"
            >>> _ = path.write_text("x,y\\n1,2.5\\n")
            >>> InMemDataset.from_csv(path, Point).get(0)
            Point(x=1.0, y=2.5)
        """
        fields = item_fields(item_type)
        file = Path(path)
        items: list[T] = []
        with _open_text(file, newline="") as handle:
            reader = csv.reader(handle, delimiter=delimiter)
            header = next(reader, None)
            if header is None:
                raise ValueError(f"{file}: empty CSV file, expected a header row")
            missing = [f.name for f in fields if f.required and f.name not in header]
            if missing:
                raise ValueError(
                    f"{file}: header {header} lacks the columns {missing} of {item_type.__name__}"
                )
            for record in reader:
                where = f"{file} line {reader.line_num}"
                if not record:
                    continue
                if len(record) != len(header):
                    raise ValueError(
                        f"{where}: expected {len(header)} cells as in the header, found {len(record)}"
                    )
                items.append(build_item(item_type, dict(zip(header, record, strict=True)), where, text=True))
        return InMemDataset(items)


@contextlib.contextmanager
def _open_text(file: Path, newline: str | None = None) -> Iterator[TextIO]:
    if not file.is_file():
        raise FileNotFoundError(f"dataset file not found: {file}")
    try:
        # utf-8-sig: spreadsheet exports often start with a byte-order mark.
        with open(file, encoding="utf-8-sig", newline=newline) as handle:
            yield handle
    except UnicodeDecodeError as err:
        raise ValueError(f"{file}: not UTF-8 text ({err.reason})") from None
