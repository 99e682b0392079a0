"""How dataclass fields are stored in SQLite columns, shared by the writer and the reader.

Scalars map to native column types (``int``/``bool`` INTEGER, ``float`` REAL,
``str`` TEXT, ``bytes`` BLOB); NumPy arrays are BLOBs in ``.npy`` format;
anything else (lists, tuples, dicts, nested dataclasses, enums) is TEXT
holding JSON. ``Optional`` fields are nullable.
"""

from __future__ import annotations

import dataclasses
import enum
import io
import json
import math
import types
from typing import Any, Literal, Union, get_args, get_origin

import numpy as np

from ferrum.data.dataset.dataclass_rows import FieldSpec, convert_value, type_name

__all__ = ["Storage", "column_type", "decode_column", "encode_column", "quote_identifier", "storage_of"]

Storage = Literal["integer", "bool", "real", "text", "blob", "npy", "json"]

_SCALAR_STORAGE: dict[Any, Storage] = {
    int: "integer",
    bool: "bool",
    float: "real",
    str: "text",
    bytes: "blob",
}
_SQL_TYPES: dict[Storage, str] = {
    "integer": "INTEGER",
    "bool": "INTEGER",
    "real": "REAL",
    "text": "TEXT",
    "blob": "BLOB",
    "npy": "BLOB",
    "json": "TEXT",
}


def quote_identifier(name: str) -> str:
    """``name`` as a quoted SQL identifier, safe for any text."""
    return '"' + name.replace('"', '""') + '"'


def _strip_optional(hint: Any) -> tuple[Any, bool]:
    if get_origin(hint) in (Union, types.UnionType):
        args = [a for a in get_args(hint) if a is not type(None)]
        optional = len(args) < len(get_args(hint))
        if len(args) == 1:
            return args[0], optional
        return Union[tuple(args)], optional  # noqa: UP007
    return hint, False


def storage_of(hint: Any) -> Storage:
    """The storage class of a field annotated ``hint``."""
    inner, _ = _strip_optional(hint)
    if inner in _SCALAR_STORAGE:
        return _SCALAR_STORAGE[inner]
    if inner is np.ndarray or get_origin(inner) is np.ndarray:
        return "npy"
    return "json"


def column_type(spec: FieldSpec) -> str:
    """The column declaration for ``spec``: SQL type, ``NOT NULL`` unless optional."""
    _, optional = _strip_optional(spec.hint)
    sql = _SQL_TYPES[storage_of(spec.hint)]
    return sql if optional else f"{sql} NOT NULL"


def encode_column(value: Any, spec: FieldSpec, where: str) -> Any:
    """``value`` of field ``spec`` as an SQLite value; ``ValueError`` when it does not fit the field."""
    storage = storage_of(spec.hint)
    if storage == "npy":
        if value is None:
            return convert_value(value, spec.hint, where)
        buffer = io.BytesIO()
        np.save(buffer, np.asarray(value), allow_pickle=False)
        return buffer.getvalue()
    # Checking against the annotation here means a bad item fails at write time, not when read back.
    value = convert_value(value, spec.hint, where)
    if value is None:
        return None
    if storage == "json":
        try:
            return json.dumps(_jsonable(value))
        except TypeError as err:
            raise ValueError(
                f"{where}: cannot store {value!r} as JSON for {type_name(spec.hint)} ({err})"
            ) from None
    if storage == "bool":
        return int(value)
    return value


def decode_column(value: Any, spec: FieldSpec, where: str) -> Any:
    """An SQLite ``value`` read back as field ``spec``'s type."""
    if value is None:
        return convert_value(None, spec.hint, where)
    storage = storage_of(spec.hint)
    if storage == "npy":
        if not isinstance(value, bytes):
            raise ValueError(f"{where}: expected an .npy BLOB, found {type(value).__name__}")
        return _load_npy(value, where)
    if storage == "json" and isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as err:
            raise ValueError(f"{where}: column holds invalid JSON ({err.msg})") from None
    if storage == "bool" and isinstance(value, int):
        value = bool(value)
    # A number column can still hold text (SQLite types are affinities), which is then parsed.
    numeric = storage in ("integer", "bool", "real")
    return convert_value(value, spec.hint, where, text=numeric and isinstance(value, str))


def _load_npy(blob: bytes, where: str) -> Any:
    """The array in an .npy ``blob``, its header's size checked against the blob before anything is made.

    ``np.load`` allocates what the header claims before reading the data, so a few bytes claiming
    terabytes would end in a MemoryError instead of an error naming the row and field.
    """
    stream = io.BytesIO(blob)
    try:
        version = np.lib.format.read_magic(stream)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(stream)
        else:  # 2.0 and 3.0 share the layout (a 4-byte header length)
            shape, _, dtype = np.lib.format.read_array_header_2_0(stream)
    except ValueError as err:
        raise ValueError(f"{where}: BLOB is not a valid .npy array ({err})") from None
    if not dtype.hasobject:  # object arrays are refused by np.load(allow_pickle=False) below
        claimed = math.prod(shape) * dtype.itemsize
        held = len(blob) - stream.tell()
        if claimed > held:
            raise ValueError(
                f"{where}: .npy header claims shape {shape} of {dtype} ({claimed} bytes),"
                f" but the BLOB holds {held} bytes of data"
            )
    try:
        return np.load(io.BytesIO(blob), allow_pickle=False)
    except ValueError as err:
        raise ValueError(f"{where}: BLOB is not a valid .npy array ({err})") from None


def _jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return _jsonable(value.value)
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k if isinstance(k, str) else json.dumps(_jsonable(k)): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (np.ndarray, np.generic)):
        return value.tolist()
    return value
