"""Turning raw rows (JSON objects, CSV records, SQLite rows) into dataclass items.

Values are converted to the annotated field types: ``int``, ``float``,
``bool``, ``str``, ``bytes``, enums, ``Literal``, optionals and unions,
``list``/``tuple``/``dict``, nested dataclasses and NumPy arrays. Text
values (from CSV) are parsed: numbers, ``true``/``false``, an empty cell for
``None`` in an optional field, and JSON for containers.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

import numpy as np

__all__ = ["FieldSpec", "build_item", "convert_value", "item_fields", "type_name"]

T = TypeVar("T")
N = TypeVar("N", int, float)

_NONE_TYPE = type(None)
_TRUE_TEXT = frozenset({"true", "1", "yes"})
_FALSE_TEXT = frozenset({"false", "0", "no"})


@dataclasses.dataclass(frozen=True)
class FieldSpec:
    """One dataclass field with its annotation resolved to a type."""

    name: str
    hint: Any
    required: bool


def item_fields(item_type: type[Any]) -> list[FieldSpec]:
    """The init fields of dataclass ``item_type``; raises ``TypeError`` for anything else."""
    if not (isinstance(item_type, type) and dataclasses.is_dataclass(item_type)):
        raise TypeError(f"item type must be a dataclass, found {item_type!r}")
    hints = typing.get_type_hints(item_type)
    return [
        FieldSpec(
            f.name,
            hints[f.name],
            f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING,
        )
        for f in dataclasses.fields(item_type)
        if f.init
    ]


def build_item(item_type: type[T], row: Mapping[str, Any], where: str, *, text: bool = False) -> T:
    """An ``item_type`` built from ``row``; columns that are not fields are ignored (as serde does).

    ``where`` (e.g. ``"data.csv line 3"``) prefixes every error message.
    """
    kwargs: dict[str, Any] = {}
    for spec in item_fields(item_type):
        if spec.name not in row:
            if spec.required:
                raise ValueError(f"{where}: missing field {spec.name!r} of {item_type.__name__}")
            continue
        kwargs[spec.name] = convert_value(
            row[spec.name], spec.hint, f"{where}: field {spec.name!r}", text=text
        )
    return item_type(**kwargs)


def type_name(hint: Any) -> str:
    """A readable name for a type annotation: ``int``, ``list[float]``, ``Point``."""
    if isinstance(hint, type) and get_origin(hint) is None:
        return hint.__name__
    return repr(hint).replace("typing.", "")


def convert_value(value: Any, hint: Any, where: str, *, text: bool = False) -> Any:
    """``value`` converted to the annotated type ``hint``; raises ``ValueError`` naming ``where``.

    With ``text=True`` the value comes from a text format (CSV) and strings are parsed.
    """
    if hint is Any or hint is object:
        return value
    origin = get_origin(hint)
    if origin is Union or origin is types.UnionType:
        return _convert_union(value, hint, where, text=text)
    if value is None:
        if hint is _NONE_TYPE:
            return None
        raise ValueError(f"{where}: expected {type_name(hint)}, found null")
    if origin is Literal:
        return _convert_literal(value, hint, where, text=text)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return _convert_enum(value, hint, where)
    if hint in _SCALARS:
        return _SCALARS[hint](value, where, text)
    if text and isinstance(value, str):
        value = _parse_json(value, hint, where)
    if hint is np.ndarray or origin is np.ndarray:
        return _convert_array(value, hint, where)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if isinstance(value, hint):
            return value
        if not isinstance(value, Mapping):
            raise ValueError(f"{where}: expected an object for {hint.__name__}, found {value!r}")
        return build_item(hint, value, where)
    if origin in (list, tuple, dict) or hint in (list, tuple, dict):
        return _convert_container(value, hint, where)
    raise TypeError(f"{where}: unsupported field type {type_name(hint)}")


def _convert_union(value: Any, hint: Any, where: str, *, text: bool) -> Any:
    args = get_args(hint)
    # serde's CSV reader reads an empty cell as None for an optional field, strings included.
    if _NONE_TYPE in args and (value is None or (text and value == "")):
        return None
    for arg in args:
        if arg is _NONE_TYPE:
            continue
        try:
            return convert_value(value, arg, where, text=text)
        except (ValueError, TypeError):
            continue
    raise ValueError(f"{where}: expected {type_name(hint)}, found {value!r}")


def _convert_literal(value: Any, hint: Any, where: str, *, text: bool) -> Any:
    for allowed in get_args(hint):
        if value == allowed and type(value) is type(allowed):
            return allowed
        if text and isinstance(value, str) and not isinstance(allowed, str):
            try:
                if convert_value(value, type(allowed), where, text=True) == allowed:
                    return allowed
            except ValueError:
                continue
    raise ValueError(f"{where}: expected one of {list(get_args(hint))}, found {value!r}")


def _convert_enum(value: Any, hint: type[enum.Enum], where: str) -> enum.Enum:
    if isinstance(value, hint):
        return value
    for member in hint:
        if member.value == value or (
            isinstance(value, str) and (member.name == value or str(member.value) == value)
        ):
            return member
    raise ValueError(f"{where}: expected one of {[m.name for m in hint]} ({hint.__name__}), found {value!r}")


def _number_converter(kind: type[N], accepted: tuple[type[Any], ...]) -> Callable[[Any, str, bool], N]:
    """The converter to ``kind`` of a number of the ``accepted`` types (never a bool), or of its text."""

    def convert(value: Any, where: str, text: bool) -> N:
        if isinstance(value, accepted) and not isinstance(value, (bool, np.bool_)):
            return kind(value)
        if text and isinstance(value, str):
            try:
                return kind(value.strip())
            except ValueError:
                pass
        raise ValueError(f"{where}: expected {kind.__name__}, found {value!r}")

    return convert


_to_int = _number_converter(int, (int, np.integer))
_to_float = _number_converter(float, (int, float, np.integer, np.floating))


def _to_bool(value: Any, where: str, text: bool) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if text and isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in _TRUE_TEXT:
            return True
        if lowered in _FALSE_TEXT:
            return False
    raise ValueError(f"{where}: expected bool, found {value!r}")


def _to_str(value: Any, where: str, text: bool) -> str:
    if isinstance(value, str):
        return value
    raise ValueError(f"{where}: expected str, found {value!r}")


def _to_bytes(value: Any, where: str, text: bool) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise ValueError(f"{where}: expected bytes, found {value!r}")


_SCALARS: dict[Any, Any] = {int: _to_int, float: _to_float, bool: _to_bool, str: _to_str, bytes: _to_bytes}


def _parse_json(value: str, hint: Any, where: str) -> Any:
    try:
        return json.loads(value)
    except json.JSONDecodeError as err:
        raise ValueError(
            f"{where}: expected JSON for {type_name(hint)}, found {value!r} ({err.msg})"
        ) from None


def _convert_array(value: Any, hint: Any, where: str) -> np.ndarray[Any, Any]:
    dtype: Any = None
    args = get_args(hint)
    if len(args) == 2 and get_args(args[1]):
        candidate = get_args(args[1])[0]
        if isinstance(candidate, type) and issubclass(candidate, np.generic):
            dtype = candidate
    try:
        return np.asarray(value, dtype=dtype)
    except (ValueError, TypeError) as err:
        raise ValueError(
            f"{where}: expected an array for {type_name(hint)}, found {value!r} ({err})"
        ) from None


def _convert_container(value: Any, hint: Any, where: str) -> Any:
    origin = get_origin(hint) or hint
    args = get_args(hint)
    if origin is dict:
        if not isinstance(value, Mapping):
            raise ValueError(f"{where}: expected an object for {type_name(hint)}, found {value!r}")
        key_hint, value_hint = args if args else (Any, Any)
        return {
            convert_value(k, key_hint, f"{where} key", text=True): convert_value(
                v, value_hint, f"{where}[{k!r}]"
            )
            for k, v in value.items()
        }
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (list, tuple, np.ndarray)):
        raise ValueError(f"{where}: expected a sequence for {type_name(hint)}, found {value!r}")
    values = list(value)
    if origin is list:
        element = args[0] if args else Any
        return [convert_value(v, element, f"{where}[{i}]") for i, v in enumerate(values)]
    if not args or (len(args) == 2 and args[1] is Ellipsis):
        element = args[0] if args else Any
        return tuple(convert_value(v, element, f"{where}[{i}]") for i, v in enumerate(values))
    if len(values) != len(args):
        raise ValueError(f"{where}: expected {len(args)} elements for {type_name(hint)}, found {len(values)}")
    return tuple(
        convert_value(v, a, f"{where}[{i}]") for i, (v, a) in enumerate(zip(values, args, strict=True))
    )
