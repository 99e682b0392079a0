"""Checking JSON data against a ``@config`` class's field types.

``decode_config`` turns parsed JSON into a config, converting lists to tuples,
enum member names to members and nested objects to nested configs. It checks
the whole document and reports every value that does not fit, each with the
dotted path of its field, as one ``ConfigError``.

Example:
    >>> from ferrum import config
    >>> from ferrum.config.decode import ConfigError, decode_config
    >>> @config
    ... class Layer:
    ...     size: int
    >>> decode_config(Layer, {"size": 3})
    Layer(size=3)
    >>> try:
    ...     decode_config(Layer, {"size": "many"})
    ... except ConfigError as err:
    ...     print(err)
    size: expected int, found str 'many'
"""

from __future__ import annotations

import dataclasses
import enum
import errno
import os
import types
import typing
import weakref
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from ferrum._ferrum import FerrumError
from ferrum.config.serde import serde_enum_of, serde_names, serde_union_of

__all__ = [
    "CONFIG_MARKER",
    "ConfigError",
    "ConfigFileNotFoundError",
    "decode_config",
    "field_hints",
    "is_config",
    "type_name",
]

_C = TypeVar("_C")

# Set to True on every @config class.
CONFIG_MARKER = "__ferrum_config__"

# A problem is (field path, message); the root object has the empty path.
_Problem = tuple[str, str]


class _Failed:
    """Returned by a decoder that has recorded a problem instead of a value."""


_FAILED = _Failed()
_NONE_TYPE = type(None)
_HINTS: weakref.WeakKeyDictionary[type, dict[str, Any]] = weakref.WeakKeyDictionary()


class ConfigError(FerrumError, ValueError):
    """A config could not be loaded, built from data, or saved.

    A ``FerrumError`` like every error ferrum raises, and a ``ValueError`` as before.

    ``problems`` lists every offending value as ``"<field path>: <what is wrong>"``;
    ``file`` is the config file involved, when there is one.

    Example:
        >>> from ferrum import ConfigError
        >>> err = ConfigError("lr: expected float, found str 'fast'")
        >>> err.problems
        ("lr: expected float, found str 'fast'",)
    """

    def __init__(self, message: str, *, problems: Sequence[str] = (), file: str | None = None) -> None:
        super().__init__(message)
        self.problems: tuple[str, ...] = tuple(problems) or (message,)
        self.file = file


class ConfigFileNotFoundError(ConfigError, FileNotFoundError):
    """``load`` was given a file that does not exist.

    Both a ``ConfigError`` (so ``except ConfigError`` still catches it) and
    the ``FileNotFoundError`` Python users expect, with ``errno``
    (``ENOENT``), ``strerror`` and ``filename`` set as ``open`` sets them.
    ``str(err)`` is the ``ConfigError`` message.

    Example:
        >>> from ferrum.config import ConfigFileNotFoundError
        >>> err = ConfigFileNotFoundError("cannot read config file 'a.json'", "a.json")
        >>> isinstance(err, FileNotFoundError), isinstance(err, ConfigError), err.errno == errno.ENOENT
        (True, True, True)
        >>> err.filename, err.file, str(err)
        ('a.json', 'a.json', "cannot read config file 'a.json'")
    """

    def __init__(self, message: str, file: str | None = None, strerror: str | None = None) -> None:
        ConfigError.__init__(self, message, file=file)
        self.errno = errno.ENOENT
        self.strerror = strerror or os.strerror(errno.ENOENT)
        self.filename = file

    def __str__(self) -> str:
        return BaseException.__str__(self)

    def __reduce__(self) -> tuple[Any, ...]:
        # OSError's own reduce would rebuild from (errno, strerror, filename).
        return type(self), (self.args[0], self.file, self.strerror), {"problems": self.problems}


def decode_config(cls: type[_C], data: object) -> _C:
    """Build the config ``cls`` from parsed JSON ``data``, or raise ``ConfigError`` listing every problem.

    Example:
        >>> from ferrum import config
        >>> @config
        ... class Pair:
        ...     sizes: tuple[int, int]
        >>> decode_config(Pair, {"sizes": [2, 3]})
        Pair(sizes=(2, 3))
    """
    problems: list[_Problem] = []
    result = _decode_object(cls, data, "", problems)
    if problems or isinstance(result, _Failed):
        lines = [f"{path}: {message}" if path else message for path, message in problems]
        if len(lines) == 1:
            raise ConfigError(lines[0], problems=lines)
        raise ConfigError(f"{len(lines)} problems:\n  " + "\n  ".join(lines), problems=lines)
    return typing.cast(_C, result)


def type_name(hint: object) -> str:
    """How a field type reads in messages: ``int | None``, ``list[float]``, ``ExperimentConfig``.

    Example:
        >>> type_name(dict[str, list[int]])
        'dict[str, list[int]]'
    """
    if hint is _NONE_TYPE or hint is None:
        return "None"
    if hint is Any:
        return "Any"
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Annotated:
        return type_name(args[0])
    if _is_union(origin):
        return " | ".join(type_name(arg) for arg in args)
    if origin is typing.Literal:
        return f"Literal[{', '.join(repr(arg) for arg in args)}]"
    if origin is not None:
        base = getattr(origin, "__name__", repr(origin))
        if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
            return f"tuple[{type_name(args[0])}, ...]"
        if origin is tuple and args in ((), ((),)):
            return "tuple[()]"
        return f"{base}[{', '.join(type_name(arg) for arg in args)}]" if args else base
    if isinstance(hint, type):
        return hint.__qualname__
    return repr(hint)


def is_config(obj: object) -> bool:
    """Whether ``obj`` is a ``@config`` class or an instance of one.

    Example:
        >>> from ferrum import config
        >>> @config
        ... class C:
        ...     x: int = 1
        >>> is_config(C), is_config(C()), is_config(1)
        (True, True, False)
    """
    return getattr(obj, CONFIG_MARKER, False) is True


def _is_union(origin: object) -> bool:
    return origin is typing.Union or origin is types.UnionType


def _found(value: object) -> str:
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return f"found {type(value).__name__} {shown}" if value is not None else "found None"


def field_hints(cls: type) -> dict[str, Any]:
    """The field types of a config class, ``Annotated`` extras kept (resolved once, then cached)."""
    hints = _HINTS.get(cls)
    if hints is None:
        # Resolved on first use, not at decoration, so fields may name configs defined later.
        hints = typing.get_type_hints(cls, include_extras=True)
        _HINTS[cls] = hints
    return hints


def _decode_object(cls: type, data: object, path: str, problems: list[_Problem]) -> object:
    spec = serde_enum_of(cls)
    if spec is not None:
        # A Rust enum in serde's form ("Valid", {"Explicit": [1, 1]}) or ferrum's tagged object.
        tagged = spec.fields_of(data)
        if isinstance(tagged, str):
            problems.append((path, f"{cls.__qualname__}: {tagged}"))
            return _FAILED
        if tagged is None:
            expected = f"one of the variants {spec.names()} of {cls.__qualname__}"
            problems.append((path, f"expected {expected} (a name, or an object holding one), {_found(data)}"))
            return _FAILED
        data = tagged
    if not isinstance(data, Mapping):
        problems.append((path, f"expected a JSON object for {cls.__qualname__}, {_found(data)}"))
        return _FAILED
    renamed = {burn: field for field, burn in serde_names(cls).items()}
    if renamed:
        # Burn's spelling of a field (`strides`) reads into ferrum's (`stride`).
        data = {renamed.get(key, key) if isinstance(key, str) else key: value for key, value in data.items()}
    try:
        hints = field_hints(cls)
    except (NameError, TypeError) as err:
        problems.append((path, f"cannot resolve the field types of {cls.__qualname__}: {err}"))
        return _FAILED
    fields = [field for field in dataclasses.fields(cls) if field.init]
    names = {field.name for field in fields}
    for key in data:
        if key not in names:
            known = ", ".join(field.name for field in fields)
            problems.append((_join(path, str(key)), f"unknown field ({cls.__qualname__} has: {known})"))
    before = len(problems)
    kwargs: dict[str, object] = {}
    for field in fields:
        field_path = _join(path, field.name)
        hint = hints[field.name]
        if field.name in data:
            kwargs[field.name] = _decode(data[field.name], hint, field_path, problems)
        elif field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
            problems.append((field_path, f"missing required field of type {type_name(hint)}"))
    if len(problems) > before or len(names) < len(data):
        return _FAILED
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as err:
        # A user's __post_init__ may refuse values that each have the right type.
        problems.append((path, f"{cls.__qualname__} refused these values: {err}"))
        return _FAILED


def _decode(value: object, hint: object, path: str, problems: list[_Problem]) -> object:
    if hint is Any or hint is object:
        return value
    if typing.get_origin(hint) is typing.Annotated:
        return _decode_annotated(value, hint, path, problems)
    if hint is None or hint is _NONE_TYPE:
        return value if value is None else _mismatch(hint, value, path, problems)
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if _is_union(origin):
        return _decode_union(value, hint, args, path, problems)
    if origin is typing.Literal:
        # `1 == True` in Python, so compare types too.
        if any(value == arg and type(value) is type(arg) for arg in args):
            return value
        return _mismatch(hint, value, path, problems)
    if origin in (list, tuple, dict) or hint in (list, tuple, dict):
        return _decode_container(value, hint, origin or hint, args, path, problems)
    if not isinstance(hint, type):
        problems.append((path, f"field type {type_name(hint)} is not supported in configs"))
        return _FAILED
    return _decode_class(value, hint, path, problems)


def _decode_annotated(value: object, hint: object, path: str, problems: list[_Problem]) -> object:
    inner = typing.get_args(hint)[0]
    union = serde_union_of(hint)
    if union is not None and isinstance(value, Mapping) and len(value) == 1:
        ((name, payload),) = value.items()
        cls = union.variants.get(name) if isinstance(name, str) else None
        if cls is not None:
            # Burn's newtype variant: {"Linear": {...fields...}}.
            return _decode(payload, cls, f"{path}.{name}", problems)
    return _decode(value, inner, path, problems)


def _decode_class(value: object, hint: type, path: str, problems: list[_Problem]) -> object:
    if is_config(hint):
        return _decode_object(hint, value, path, problems)
    if issubclass(hint, enum.Enum):
        if isinstance(value, str) and value in hint.__members__:
            return hint.__members__[value]
        members = ", ".join(repr(name) for name in hint.__members__)
        problems.append((path, f"expected {hint.__qualname__} (one of {members}), {_found(value)}"))
        return _FAILED
    # bool is an int subclass in Python, but JSON keeps true/false apart from numbers.
    if hint is bool:
        ok = isinstance(value, bool)
    elif hint is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif hint is float:
        if isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        ok = isinstance(value, float)
    elif hint is str:
        ok = isinstance(value, str)
    else:
        problems.append((path, f"field type {type_name(hint)} is not supported in configs"))
        return _FAILED
    return value if ok else _mismatch(hint, value, path, problems)


def _decode_union(
    value: object, hint: object, args: tuple[Any, ...], path: str, problems: list[_Problem]
) -> object:
    if value is None and _NONE_TYPE in args:
        return None
    candidates = [arg for arg in args if arg is not _NONE_TYPE]
    # An exact match first, so that 3 stays an int under `float | int`.
    candidates.sort(key=lambda arg: arg is not type(value))
    deeper: list[list[_Problem]] = []
    for candidate in candidates:
        attempt: list[_Problem] = []
        result = _decode(value, candidate, path, attempt)
        if not attempt:
            return result
        if any(where != path for where, _ in attempt):
            deeper.append(attempt)
    # When the value had the shape of exactly one member, that member's problems say the most.
    if len(deeper) == 1:
        problems.extend(deeper[0])
        return _FAILED
    return _mismatch(hint, value, path, problems)


def _decode_container(
    value: object, hint: object, origin: object, args: tuple[Any, ...], path: str, problems: list[_Problem]
) -> object:
    if origin is dict:
        key_hint, item_hint = args if args else (str, Any)
        if key_hint is not str:
            unsupported = f"field type {type_name(hint)} is not supported in configs (keys must be str)"
            problems.append((path, unsupported))
            return _FAILED
        if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
            return _mismatch(hint, value, path, problems)
        items = {key: _decode(item, item_hint, f"{path}[{key!r}]", problems) for key, item in value.items()}
        return _FAILED if any(isinstance(item, _Failed) for item in items.values()) else items
    if not isinstance(value, (list, tuple)):
        return _mismatch(hint, value, path, problems)
    if hint is list or hint is tuple:
        hints: Sequence[object] = [Any] * len(value)
    elif origin is list or (len(args) == 2 and args[1] is Ellipsis):
        hints = [args[0]] * len(value)
    elif args in ((), ((),)):
        # `tuple[()]`: Python 3.10 spells its arguments `((),)`, later versions `()`.
        hints = []
    else:
        hints = args
    if len(hints) != len(value):
        expected = f"expected {type_name(hint)} with {len(hints)} items"
        problems.append((path, f"{expected}, found {len(value)} items"))
        return _FAILED
    decoded = [
        _decode(item, item_hint, f"{path}[{i}]", problems)
        for i, (item, item_hint) in enumerate(zip(value, hints, strict=True))
    ]
    if any(isinstance(item, _Failed) for item in decoded):
        return _FAILED
    return decoded if origin is list else tuple(decoded)


def _mismatch(hint: object, value: object, path: str, problems: list[_Problem]) -> _Failed:
    problems.append((path, f"expected {type_name(hint)}, {_found(value)}"))
    return _FAILED


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name
