"""Burn's row-serialized SQLite tables: ``row_id integer, item blob``, each item one MessagePack blob.

Burn's ``SqliteDatasetWriter`` stores an item with rmp-serde's default
(compact) form: a struct is an array of its fields in declaration order, a
unit enum variant its name, ``Option::None`` nil, a tuple or ``Vec`` an
array (``Vec<u8>`` too: serde writes bytes as a sequence). Reading also takes
structs written as maps of field names (rmp-serde's named form).
"""

from __future__ import annotations

import dataclasses
import enum
import sqlite3
import types
from collections.abc import Mapping
from typing import Any, Union, get_args, get_origin

import numpy as np

from ferrum.data.dataset import msgpack
from ferrum.data.dataset.dataclass_rows import FieldSpec, convert_value, item_fields, type_name
from ferrum.data.dataset.sqlite_columns import quote_identifier

__all__ = ["CREATE_COLUMNS", "is_row_serialized", "item_from_blob", "item_to_blob", "table_columns"]

CREATE_COLUMNS = "row_id integer primary key autoincrement not null, item blob not null"
"""The columns of a split's table, as Burn's writer declares them."""


def is_row_serialized(columns: list[tuple[str, str]], fields: list[FieldSpec]) -> bool:
    """Burn's test on a table's ``(name, type)`` columns: exactly ``row_id integer, item blob``.

    A dataclass whose own field is named ``item`` is read from columns, so
    ferrum's column tables of such items keep working.
    """
    if any(f.name == "item" for f in fields) or len(columns) != 2:
        return False
    (id_name, id_type), (item_name, item_type) = ((n.lower(), t.lower()) for n, t in columns)
    return (id_name, id_type, item_name, item_type) == ("row_id", "integer", "item", "blob")


def item_to_blob(item: Any, fields: list[FieldSpec], where: str) -> bytes:
    """``item`` (a dataclass checked against ``fields``) as rmp-serde's compact MessagePack."""
    values = [
        _to_serde(
            convert_value(getattr(item, f.name), f.hint, f"{where}: field {f.name!r}"), f"{where}.{f.name}"
        )
        for f in fields
    ]
    try:
        return msgpack.encode(values)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{where}: cannot store the item as MessagePack ({err})") from None


def item_from_blob(blob: object, item_type: type[Any], where: str) -> Any:
    """The ``item_type`` stored in ``blob``; ``ValueError`` naming ``where`` when it does not fit."""
    if not isinstance(blob, bytes):
        raise ValueError(
            f"{where}: expected a MessagePack BLOB in column 'item', found {type(blob).__name__}"
        )
    try:
        value = msgpack.decode(blob)
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None
    return _from_serde(value, item_type, where)


def _to_serde(value: Any, where: str) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        # The init fields, which reading fills back (item_fields).
        fields = [f for f in dataclasses.fields(value) if f.init]
        return [_to_serde(getattr(value, f.name), f"{where}.{f.name}") for f in fields]
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, (bytes, bytearray, memoryview)):
        return list(bytes(value))
    if isinstance(value, np.ndarray):
        return _to_serde(value.tolist(), where)
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_to_serde(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {_to_serde(k, where): _to_serde(v, f"{where}[{k!r}]") for k, v in value.items()}
    return value


def _from_serde(value: Any, hint: Any, where: str) -> Any:
    origin = get_origin(hint)
    if origin is Union or origin is types.UnionType:
        if value is None:
            return convert_value(None, hint, where)
        for arg in get_args(hint):
            if arg is type(None):
                continue
            try:
                return _from_serde(value, arg, where)
            except (ValueError, TypeError):
                continue
        raise ValueError(f"{where}: expected {type_name(hint)}, found {value!r}")
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _struct(value, hint, where)
    if hint is bytes and isinstance(value, list):
        if not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 255 for v in value):
            raise ValueError(f"{where}: expected bytes (a sequence of 0..255), found {value!r}")
        return bytes(value)
    args = get_args(hint)
    if origin is list and args and isinstance(value, list):
        return [_from_serde(v, args[0], f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is tuple and args and isinstance(value, list):
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_from_serde(v, args[0], f"{where}[{i}]") for i, v in enumerate(value))
        if len(value) != len(args):
            raise ValueError(
                f"{where}: expected {len(args)} elements for {type_name(hint)}, found {len(value)}"
            )
        return tuple(
            _from_serde(v, a, f"{where}[{i}]") for i, (v, a) in enumerate(zip(value, args, strict=True))
        )
    if origin is dict and len(args) == 2 and isinstance(value, Mapping):
        return {
            _from_serde(k, args[0], f"{where} key"): _from_serde(v, args[1], f"{where}[{k!r}]")
            for k, v in value.items()
        }
    return convert_value(value, hint, where)


def _struct(value: Any, hint: type[Any], where: str) -> Any:
    fields = item_fields(hint)
    if isinstance(value, list):
        # Compact form: the fields in order; trailing ones may be left out only when they have defaults.
        if len(value) > len(fields) or any(f.required for f in fields[len(value) :]):
            raise ValueError(
                f"{where}: expected {len(fields)} fields for {hint.__name__} "
                f"({', '.join(f.name for f in fields)}), found an array of {len(value)}"
            )
        named = dict(zip((f.name for f in fields), value, strict=False))
    elif isinstance(value, Mapping):
        named = dict(value)
        missing = [f.name for f in fields if f.required and f.name not in named]
        if missing:
            raise ValueError(f"{where}: missing fields {missing} of {hint.__name__}")
    else:
        raise ValueError(f"{where}: expected an array or map for {hint.__name__}, found {value!r}")
    kwargs = {
        f.name: _from_serde(named[f.name], f.hint, f"{where}.{f.name}") for f in fields if f.name in named
    }
    return hint(**kwargs)


def table_columns(connection: sqlite3.Connection, table: str) -> list[tuple[str, str]]:
    """``(name, declared type)`` of each column of ``table``."""
    rows: list[Any] = connection.execute(f"PRAGMA table_info({quote_identifier(table)})").fetchall()
    return [(str(row[1]), str(row[2])) for row in rows]
