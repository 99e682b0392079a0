"""``DataframeDataset``: the rows of a pandas (or polars) DataFrame as dataclass items."""

from __future__ import annotations

import math
import types
from typing import Any, TypeVar, Union, get_args, get_origin

import numpy as np

from ferrum.data.dataset.base import Dataset
from ferrum.data.dataset.dataclass_rows import FieldSpec, convert_value, item_fields

__all__ = ["DataframeDataset"]

ItemT = TypeVar("ItemT")

_NONE_TYPE = type(None)
_PANDAS_HINT = "pip install 'ferrum-dl[dataframe]'"


class DataframeDataset(Dataset[ItemT]):
    """The rows of a DataFrame as items of dataclass ``item_type``: Burn's ``DataframeDataset``.

    Each init field of ``item_type`` reads the column of the same name (a
    field with a default may have no column); other columns are ignored.
    Row ``i`` is the ``i``-th row by position, whatever the frame's index.
    Values are converted to the field types as ``InMemDataset.from_json_rows``
    does; besides, a missing value (``None``, ``NaN``, ``pd.NA``, ``NaT``) is
    ``None`` in an optional field, an integral float (an int column with
    gaps) is an ``int``, and a ``bytes`` cell fills a ``list[int]`` field
    (Burn's binary column to ``Vec<u8>``).

    ``frame`` is a ``pandas.DataFrame`` (the extra ``dataframe``:
    ``pip install 'ferrum-dl[dataframe]'``) or, when polars is installed, a
    ``polars.DataFrame``. Columns are taken once, without copying the
    frame; ``get`` converts one row.

    Example:
        >>> from dataclasses import dataclass
        >>> import pandas as pd
        >>> from ferrum.data.dataset import DataframeDataset
        >>> @dataclass
        ... class Review:
        ...     text: str
        ...     stars: int
        >>> frame = pd.DataFrame({"text": ["good", "bad"], "stars": [5, 1], "id": [10, 11]})
        >>> reviews = DataframeDataset(frame, Review)
        >>> len(reviews), reviews.get(1), reviews.get(2)
        (2, Review(text='bad', stars=1), None)
    """

    def __init__(self, frame: Any, item_type: type[ItemT]) -> None:
        fields = item_fields(item_type)
        library = type(frame).__module__.split(".")[0]
        if library == "pandas" and hasattr(frame, "iloc"):
            names = [str(c) for c in frame.columns]
            length = len(frame)
        elif library == "polars" and hasattr(frame, "get_column"):
            names = list(frame.columns)
            length = int(frame.height)
        else:
            raise TypeError(
                f"DataframeDataset expects a pandas or polars DataFrame, found {type(frame).__module__}."
                f"{type(frame).__qualname__} (pandas: {_PANDAS_HINT})"
            )
        missing = [f.name for f in fields if f.required and f.name not in names]
        if missing:
            raise ValueError(
                f"DataframeDataset: the DataFrame has no column {missing} for the fields of "
                f"{item_type.__name__} (its columns: {names})"
            )
        repeated = sorted({f.name for f in fields if names.count(f.name) > 1})
        if repeated:
            raise ValueError(f"DataframeDataset: the DataFrame has several columns named {repeated}")
        self._item_type = item_type
        self._fields: list[tuple[FieldSpec, Any]] = []
        for spec in fields:
            if spec.name not in names:
                continue
            # pandas: a NumPy array per column (a view where the dtype allows); polars: the Series.
            column = frame[spec.name].to_numpy() if library == "pandas" else frame.get_column(spec.name)
            self._fields.append((spec, column))
        self._len = length

    def get(self, index: int) -> ItemT | None:
        if not 0 <= index < self._len:
            return None
        kwargs: dict[str, Any] = {}
        for spec, column in self._fields:
            where = f"DataframeDataset row {index}, column {spec.name!r}"
            kwargs[spec.name] = convert_value(_normalize(column[index], spec.hint), spec.hint, where)
        return self._item_type(**kwargs)

    def len(self) -> int:
        return self._len


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float | np.floating):
        return math.isnan(value)
    if isinstance(value, np.datetime64 | np.timedelta64):
        return bool(np.isnat(value))
    # pd.NA and pd.NaT, without importing pandas.
    return type(value).__name__ in ("NAType", "NaTType")


def _normalize(value: Any, hint: Any) -> Any:
    """The cell ``value`` in the form ``convert_value`` expects for ``hint``."""
    origin = get_origin(hint)
    optional = (origin is Union or origin is types.UnionType) and _NONE_TYPE in get_args(hint)
    if optional and _is_missing(value):
        return None
    if isinstance(value, np.generic):
        value = value.item()
    targets = [a for a in get_args(hint) if a is not _NONE_TYPE] if optional else [hint]
    if isinstance(value, float) and value.is_integer() and int in targets and float not in targets:
        return int(value)
    if isinstance(value, bytes | bytearray) and any(
        get_origin(t) is list or t is list for t in targets
    ):
        return list(value)
    return value
