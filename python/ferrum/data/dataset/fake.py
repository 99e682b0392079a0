"""``FakeDataset``: ``size`` random items, made by a function or faked from a type's annotations."""

from __future__ import annotations

import dataclasses
import enum
import string
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

import numpy as np

from ferrum.data.dataset.base import Dataset
from ferrum.data.dataset.dataclass_rows import type_name
from ferrum.data.dataset.selection import RngSource, _generator

__all__ = ["FakeDataset", "fake_value"]

ItemT = TypeVar("ItemT")
T = TypeVar("T")

_INT_LOW, _INT_HIGH = -(2**31), 2**31
_STR_ALPHABET = string.ascii_letters + string.digits
_STR_LEN = (5, 21)
_BYTES_LEN = (0, 17)
_CONTAINER_LEN = (0, 9)
# Past this nesting depth optionals are None and containers empty, so recursive types stay finite.
_SHALLOW_DEPTH = 8
_MAX_DEPTH = 32
_NONE_TYPE = type(None)
_SCALARS = (bool, int, float, str, bytes, _NONE_TYPE)


class FakeDataset(Dataset[ItemT]):
    """``size`` random items, made once and kept in memory: Burn's ``FakeDataset``.

    ``FakeDataset(size, make, seed=...)`` calls ``make(rng)`` ``size`` times
    with one NumPy ``Generator`` drawn from ``seed``; ``FakeDataset.new(size,
    item_type, seed=...)`` fakes values of a type from its annotations, as
    Burn's ``FakeDataset::<I>::new(size)`` does with the ``fake`` crate (see
    ``fake_value`` for the values). The same seed gives the same items.

    Example:
        >>> from dataclasses import dataclass
        >>> from ferrum.data.dataset import FakeDataset
        >>> noise = FakeDataset(3, lambda rng: rng.normal(size=2), seed=0)
        >>> len(noise), noise.get(0).shape
        (3, (2,))
        >>> @dataclass
        ... class Row:
        ...     text: str
        ...     label: int
        >>> rows = FakeDataset.new(4, Row, seed=1)
        >>> isinstance(rows.get(0), Row), rows.get(0) == FakeDataset.new(4, Row, seed=1).get(0)
        (True, True)
    """

    def __init__(
        self, size: int, make: Callable[[np.random.Generator], ItemT], *, seed: RngSource = None
    ) -> None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ValueError(f"FakeDataset size must be an int >= 0, found {size!r}")
        if isinstance(make, type):
            raise TypeError(
                f"FakeDataset(size, make) takes a function of a numpy Generator, found the type "
                f"{make.__name__}: use FakeDataset.new(size, {make.__name__}) to fake it from its annotations"
            )
        if not callable(make):
            raise TypeError(f"FakeDataset make must be callable, found {type(make).__name__}")
        rng = _generator(seed)
        self._items = [make(rng) for _ in range(size)]

    @staticmethod
    def new(size: int, item_type: type[T], *, seed: RngSource = None) -> FakeDataset[T]:
        """``size`` items of ``item_type`` faked by ``fake_value`` (Burn's ``FakeDataset::new``).

        Raises ``TypeError`` naming a type it cannot fake, before making any item.
        """
        _check_fakeable(item_type, type_name(item_type), 0)
        return FakeDataset(size, lambda rng: fake_value(item_type, rng), seed=seed)

    def get(self, index: int) -> ItemT | None:
        return self._items[index] if 0 <= index < len(self._items) else None

    def len(self) -> int:
        return len(self._items)


def fake_value(hint: Any, rng: np.random.Generator) -> Any:
    """A random value of the annotated type ``hint``, drawn from ``rng``.

    * ``int``: uniform over the 32-bit range ``[-2**31, 2**31)``;
      ``float``: standard normal; ``bool``: a fair coin;
    * ``str``: 5 to 20 ASCII letters and digits; ``bytes``: 0 to 16 bytes;
    * ``X | None``: ``None`` half of the time; ``A | B``: one of them;
      ``Literal[...]`` and enums: one of the values;
    * ``list[X]``, ``tuple[X, ...]``, ``set[X]``, ``dict[K, V]``: 0 to 8
      elements; ``tuple[A, B]``: one of each;
    * dataclasses: each init field faked from its annotation.
    * ``Any`` (and a container's missing parameters): ``int``.

    Example:
        >>> import numpy as np
        >>> from ferrum.data.dataset.fake import fake_value
        >>> value = fake_value(list[int], np.random.default_rng(0))
        >>> isinstance(value, list) and all(isinstance(v, int) for v in value)
        True
    """
    _check_fakeable(hint, type_name(hint), 0)
    return _fake(hint, rng, 0)


def _fake(hint: Any, rng: np.random.Generator, depth: int) -> Any:
    shallow = depth >= _SHALLOW_DEPTH
    origin = get_origin(hint)
    if hint is Any or hint is object:
        hint = int
    if origin is Union or origin is types.UnionType:
        args = get_args(hint)
        if _NONE_TYPE in args and (shallow or rng.random() < 0.5):
            return None
        choices = [a for a in args if a is not _NONE_TYPE]
        return _fake(choices[int(rng.integers(len(choices)))], rng, depth + 1)
    if hint is _NONE_TYPE:
        return None
    if origin is Literal:
        values = get_args(hint)
        return values[int(rng.integers(len(values)))]
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        members = list(hint)
        return members[int(rng.integers(len(members)))]
    if hint is bool:
        return bool(rng.integers(2))
    if hint is int:
        return int(rng.integers(_INT_LOW, _INT_HIGH))
    if hint is float:
        return float(rng.standard_normal())
    if hint is str:
        length = int(rng.integers(*_STR_LEN))
        return "".join(_STR_ALPHABET[int(i)] for i in rng.integers(len(_STR_ALPHABET), size=length))
    if hint is bytes:
        return rng.integers(256, size=int(rng.integers(*_BYTES_LEN)), dtype=np.uint8).tobytes()
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        hints = typing.get_type_hints(hint)
        kwargs = {f.name: _fake(hints[f.name], rng, depth + 1) for f in dataclasses.fields(hint) if f.init}
        return hint(**kwargs)
    container = origin or hint
    args = get_args(hint)
    if container is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
        return tuple(_fake(a, rng, depth + 1) for a in args)
    length = 0 if shallow else int(rng.integers(*_CONTAINER_LEN))
    if container is dict:
        key, value = args if args else (str, int)
        return {_fake(key, rng, depth + 1): _fake(value, rng, depth + 1) for _ in range(length)}
    element = args[0] if args else int
    values = [_fake(element, rng, depth + 1) for _ in range(length)]
    if container is tuple:
        return tuple(values)
    if container is set:
        return set(values)
    return values


def _check_fakeable(
    hint: Any,
    where: str,
    depth: int,
    required: frozenset[Any] = frozenset(),
    visiting: frozenset[Any] = frozenset(),
) -> None:
    """Raise ``TypeError`` for a type ``_fake`` cannot make, or that would nest without end.

    ``visiting`` holds the dataclasses on the path from the root type;
    ``required`` those reached only through required fields since the last
    optional or container (which stop a recursion: ``None`` or empty once deep).
    """
    if depth > _MAX_DEPTH:
        raise TypeError(f"cannot fake {where}: its type nests more than {_MAX_DEPTH} levels deep")
    origin = get_origin(hint)
    args = get_args(hint)
    if hint is Any or hint is object or hint in _SCALARS or origin is Literal:
        return
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        if not list(hint):
            raise TypeError(f"cannot fake {where}: enum {hint.__name__} has no member")
        return
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if hint in required:
            raise TypeError(
                f"cannot fake {where}: dataclass {hint.__name__} contains itself through required fields "
                "(make the field optional or a list)"
            )
        if hint in visiting:
            return
        hints = typing.get_type_hints(hint)
        for field in dataclasses.fields(hint):
            if field.init:
                _check_fakeable(
                    hints[field.name], f"{where}.{field.name}", depth + 1, required | {hint},
                    visiting | {hint},
                )
        return
    container = origin or hint
    escapes = (origin is Union or origin is types.UnionType) and _NONE_TYPE in args
    variadic = container is tuple and (not args or args[-1] is Ellipsis)
    escapes = escapes or container in (list, set, dict) or variadic
    if origin is Union or origin is types.UnionType or container in (list, set, dict, tuple):
        for arg in args:
            if arg is not Ellipsis:
                _check_fakeable(arg, where, depth + 1, frozenset() if escapes else required, visiting)
        return
    raise TypeError(
        f"cannot fake {where}: unsupported type {type_name(hint)} "
        "(use FakeDataset(size, make) with a function)"
    )
