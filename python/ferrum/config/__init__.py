"""``@config``: Burn's Config pattern, as a frozen typed dataclass.

A config holds the hyper-parameters of a module, an optimizer or an
experiment. Required fields come first and may be passed positionally; fields
with defaults may be left out and are changed with typed ``with_<field>``
builders, each returning a new config. ``save``/``load`` round-trip a config
through JSON, nested configs included; ``load`` checks every value against
the field's type and names the offending field when one does not fit. The
files are Burn's: a config standing for a Rust enum (an initializer, a
padding) is written in serde's form (``"Valid"``, ``{"Explicit": [1, 1]}``,
see ``ferrum.config.serde``), so Burn loads ferrum's files and ferrum
Burn's.

Example:
    >>> from ferrum import config
    >>> @config
    ... class ExperimentConfig:
    ...     hidden_size: int
    ...     dropout: float = 0.5
    >>> cfg = ExperimentConfig(128).with_dropout(0.1)
    >>> cfg.dropout, cfg.hidden_size
    (0.1, 128)
    >>> ExperimentConfig.from_dict(cfg.to_dict()) == cfg
    True

mypy learns about the builders and the JSON methods from the plugin
``ferrum.mypy`` (``plugins = ferrum.mypy`` in the mypy configuration).
"""

from __future__ import annotations

import dataclasses
import enum
import json
import os
import re
import sys
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from typing_extensions import dataclass_transform

import ferrum._ferrum as _ferrum
from ferrum.config.decode import (
    CONFIG_MARKER,
    ConfigError,
    ConfigFileNotFoundError,
    decode_config,
    field_hints,
    is_config,
    type_name,
)
from ferrum.config.serde import serde_enum_of, serde_names, serde_union_of

__all__ = ["ConfigError", "ConfigFileNotFoundError", "config", "is_config"]

_T = TypeVar("_T")
_C = TypeVar("_C")


@dataclass_transform(frozen_default=True)
def config(cls: type[_T]) -> type[_T]:
    """Turn a class with annotated fields into a frozen, typed config.

    Adds ``with_<field>(value)`` builders, ``save(path)``, ``load(path)``,
    ``to_dict()``, ``from_dict(data)``, equality, hashing, a JSON ``str`` and
    a dataclass ``repr``. Methods defined in the class body are kept, so a
    config can carry its own ``init(device)``.

    Example:
        >>> from ferrum import config
        >>> @config
        ... class MomentumConfig:
        ...     momentum: float = 0.9
        ...     nesterov: bool = False
        >>> MomentumConfig().with_nesterov(True)
        MomentumConfig(momentum=0.9, nesterov=True)
    """
    if not isinstance(cls, type):
        raise TypeError(f"@config decorates a class, found {type(cls).__name__} {cls!r}")
    data_cls = dataclasses.dataclass(frozen=True)(cls)
    setattr(data_cls, CONFIG_MARKER, True)
    for field in dataclasses.fields(typing.cast(Any, data_cls)):
        if field.init:
            _add(data_cls, f"with_{field.name}", _builder(data_cls, field.name))
    _add(data_cls, "to_dict", _to_dict)
    _add(data_cls, "from_dict", classmethod(_from_dict))
    _add(data_cls, "save", _save)
    _add(data_cls, "load", classmethod(_load))
    _add(data_cls, "__str__", _str)
    return data_cls


def _add(cls: type, name: str, member: object) -> None:
    # Like dataclasses, never replace what the user wrote in the class body.
    if name not in cls.__dict__:
        setattr(cls, name, member)


def _builder(cls: type, name: str) -> Callable[[_T, object], _T]:
    def with_field(self: _T, value: object) -> _T:
        return typing.cast(_T, dataclasses.replace(typing.cast(Any, self), **{name: value}))

    with_field.__name__ = f"with_{name}"
    with_field.__qualname__ = f"{cls.__qualname__}.with_{name}"
    with_field.__doc__ = f"A copy of this config with ``{name}`` set to ``value``."
    return with_field


def _to_dict(self: object) -> dict[str, Any]:
    """The fields as plain JSON values: nested configs as Burn's files hold them, enums their member names."""
    return _encode_fields(self, "", lenient=False)


def _from_dict(cls: type[_C], data: Mapping[str, Any]) -> _C:
    """Build a config from ``to_dict()`` output, checking every value against its field's type."""
    return decode_config(cls, data)


def _save(self: object, path: str | os.PathLike[str]) -> None:
    """Write the config as JSON, as Burn's ``Config::save``; a crash mid-write leaves the old file intact."""
    text = json.dumps(_encode(self, "", lenient=False), indent=2, ensure_ascii=False) + "\n"
    target = os.fspath(path)
    try:
        # The engine's writer: temporary file, fsync, rename; it removes the
        # temporary files of writers killed mid-save.
        _ferrum.write_file_atomic(target, text.encode("utf-8"))
    except OSError as err:
        raise ConfigError(f"cannot write config file '{target}': {err.strerror or err}", file=target) from err


# Deeper JSON is damage or an attack: configs nest a few levels, and refusing
# early keeps every recursive walk (parser, checks, repr) far from Python's limit.
_MAX_DEPTH = 100
_NESTING = re.compile(r'\\.|["\[\]{}]', re.DOTALL)


def _too_deep(text: str) -> int | None:
    """The offset where ``text`` opens its (_MAX_DEPTH + 1)-th nested JSON level, if it does."""
    if text.count("[") + text.count("{") <= _MAX_DEPTH:
        return None
    depth, in_string = 0, False
    for token in _NESTING.finditer(text):
        mark = token.group()
        if mark == '"':
            in_string = not in_string
        elif in_string or len(mark) == 2:
            continue
        elif mark in "[{":
            depth += 1
            if depth > _MAX_DEPTH:
                return token.start()
        else:
            depth -= 1
    return None


class _LongInt:
    """An integer literal longer than Python converts (``sys.get_int_max_str_digits()``)."""

    def __init__(self, literal: str) -> None:
        self.digits = len(literal.lstrip("-"))


def _parse_int(literal: str) -> int | _LongInt:
    try:
        return int(literal)
    except ValueError:
        return _LongInt(literal)


def _long_ints(data: object, path: str) -> list[str]:
    """A problem for every integer literal too long to convert, named by its field path."""
    if isinstance(data, _LongInt):
        # Python 3.10 before 3.10.7 has no limit, hence no such literal.
        limit: int = getattr(sys, "get_int_max_str_digits", lambda: 4300)()
        where = path or "<root>"
        return [f"{where}: an integer of {data.digits} digits, more than the {limit} Python converts"]
    if isinstance(data, dict):
        return [problem for key, value in data.items() for problem in _long_ints(value, _join(path, key))]
    if isinstance(data, list):
        return [problem for i, value in enumerate(data) for problem in _long_ints(value, f"{path}[{i}]")]
    return []


def _parse(text: str, source: str) -> object:
    """The JSON of a config file, or ConfigError naming the file and what is wrong."""
    at = _too_deep(text)
    if at is not None:
        line, column = text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)
        raise ConfigError(
            f"config file '{source}' nests deeper than {_MAX_DEPTH} levels (line {line} column {column}):"
            " it is damaged or not a config",
            file=source,
        )
    try:
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            raise
        except ValueError as err:
            # An integer literal past Python's conversion limit: find which fields hold one.
            problems = _long_ints(json.loads(text, parse_int=_parse_int), "") or [str(err)]
            message = f"config file '{source}': {'; '.join(problems)}"
            raise ConfigError(message, problems=problems, file=source) from None
    except json.JSONDecodeError as err:
        raise ConfigError(
            f"config file '{source}' is not valid JSON: {err.msg} at line {err.lineno} column {err.colno}",
            file=source,
        ) from err
    except RecursionError:
        # The stack was already deep when load was called.
        raise ConfigError(f"config file '{source}' nests too deep for the JSON parser", file=source) from None


def _load(cls: type[_C], path: str | os.PathLike[str]) -> _C:
    """Read a config saved by ``save``, checking every value against its field's type.

    A missing file raises ``ConfigFileNotFoundError`` (a ``ConfigError`` and a ``FileNotFoundError``).
    """
    source = os.fspath(path)
    try:
        with open(source, encoding="utf-8") as file:
            text = file.read()
    except FileNotFoundError as err:
        message = f"cannot read config file '{source}': {err.strerror or err}"
        raise ConfigFileNotFoundError(message, source, err.strerror) from err
    except OSError as err:
        raise ConfigError(f"cannot read config file '{source}': {err.strerror or err}", file=source) from err
    except UnicodeDecodeError as err:
        raise ConfigError(f"config file '{source}' is not UTF-8 text: {err}", file=source) from err
    data = _parse(text, source)
    try:
        return decode_config(cls, data)
    except ConfigError as err:
        raise ConfigError(
            f"config file '{source}' does not match {cls.__qualname__}: {err}",
            problems=err.problems,
            file=source,
        ) from err


def _str(self: object) -> str:
    # Burn prints a config as its pretty JSON; values JSON cannot hold show as their repr.
    return json.dumps(_encode(self, "", lenient=True), indent=2, ensure_ascii=False)


def _encode_fields(obj: object, path: str, lenient: bool) -> dict[str, Any]:
    hints, names = field_hints(type(obj)), serde_names(type(obj))
    return {
        names.get(field.name, field.name): _encode(
            getattr(obj, field.name), _join(path, field.name), lenient, hints.get(field.name)
        )
        for field in dataclasses.fields(typing.cast(Any, obj))
    }


def _encode(value: object, path: str, lenient: bool, hint: object = None) -> Any:
    union = serde_union_of(hint)
    if union is not None:
        # One of several configs, written as Burn's enum variant: {"Linear": {...}}.
        name = union.name_of(value)
        if name is not None:
            return {name: _encode(value, _join(path, name), lenient)}
    item_hint = _item_hint(hint)
    if isinstance(value, enum.Enum):
        return value.name
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if is_config(value):
        # A config standing for a Rust enum is written in serde's form, as Burn's files hold it.
        spec = serde_enum_of(type(value))
        if spec is not None:
            return spec.encode(value, lambda item, where: _encode(item, where, lenient), path)
        return _encode_fields(value, path, lenient)
    if isinstance(value, (list, tuple)):
        return [_encode(item, f"{path}[{i}]", lenient, item_hint) for i, item in enumerate(value)]
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        return {key: _encode(item, f"{path}[{key!r}]", lenient) for key, item in value.items()}
    if lenient:
        return repr(value)
    raise ConfigError(
        f"{path}: cannot save a value of type {type_name(type(value))} as JSON (configs hold None, bool,"
        " int, float, str, enums, configs, and lists, tuples and str-keyed dicts of these)",
        problems=(f"{path}: unsupported value {value!r}",),
    )


def _item_hint(hint: object) -> object:
    """The type of the items of a ``tuple[X, ...]`` or ``list[X]`` field, else None."""
    args = typing.get_args(hint)
    if typing.get_origin(hint) is list and len(args) == 1:
        return args[0]
    if typing.get_origin(hint) is tuple and len(args) == 2 and args[1] is Ellipsis:
        return args[0]
    return None


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name
