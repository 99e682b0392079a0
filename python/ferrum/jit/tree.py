"""Arguments and results of a traced call as a list of tensors plus a hashable description of the rest.

A traced function takes and returns tensors inside Python containers
(tuples, lists, dicts, dataclasses, plain objects such as
``TransformerEncoderInput``). ``flatten`` lists the tensors in a fixed order and
describes everything else (types, non-tensor values, each tensor's shape and
dtype): two calls with equal descriptions run the same plan. ``Rebuild``
puts new tensors back into the structure of a traced result.

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import NdArray
    >>> from ferrum.jit.tree import flatten
    >>> x = Tensor.ones((2, 3), NdArray.device())
    >>> tensors, key = flatten(((x, 4), {"scale": 0.5}))
    >>> len(tensors), key[0]
    (1, 'tuple')
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from typing import Any

from ferrum._ferrum import Tensor

__all__ = ["Rebuild", "flatten", "rebuild_of"]

Rebuild = Callable[[list[Tensor[Any, Any, Any]]], Any]
"""Builds a result of the traced structure from its tensors, in ``flatten``'s order."""

_ATOMS = (type(None), bool, int, float, complex, str, bytes)


def _fields(obj: object) -> list[tuple[str, object]] | None:
    """The attributes that make up ``obj``: a dataclass's fields, else its slots and ``__dict__``; ``None``
    if it has neither."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return [(f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj)]
    found: dict[str, object] = {}
    for cls in type(obj).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in ("__dict__", "__weakref__") and hasattr(obj, name):
                found[name] = getattr(obj, name)
    state = getattr(obj, "__dict__", None)
    if isinstance(state, dict):
        found.update(state)
    elif not found:
        return None
    return sorted(found.items())


def flatten(value: object) -> tuple[list[Tensor[Any, Any, Any]], tuple[Any, ...]]:
    """The tensors inside ``value`` and a hashable key describing the rest (tensors by shape, dtype, device).

    Raises:
        TypeError: for a value that is neither a tensor, a plain constant, a container nor an
            object with attributes (a function, say), naming its type.
    """
    tensors: list[Tensor[Any, Any, Any]] = []

    def walk(v: object) -> Any:
        if isinstance(v, Tensor):
            tensors.append(v)
            return ("tensor", tuple(v.dims()), str(v.dtype), v.device())
        if isinstance(v, _ATOMS):
            return (type(v).__name__, v)
        if isinstance(v, (tuple, list)):
            return (type(v).__name__, tuple(walk(x) for x in v))
        if isinstance(v, dict):
            return ("dict", tuple((k, walk(x)) for k, x in v.items()))
        fields = _fields(v)
        if fields is None:
            raise TypeError(
                f"ferrum.jit.trace: cannot take a {type(v).__name__} apart (expected tensors, numbers,"
                " strings, None, tuples, lists, dicts, dataclasses or objects with attributes)"
            )
        return (type(v).__qualname__, id(type(v)), tuple((k, walk(x)) for k, x in fields))

    return tensors, walk(value)


def rebuild_of(value: object) -> Rebuild:
    """A function copying ``value`` with new tensors in place of its tensors (``flatten``'s order)."""

    def build(v: object) -> Callable[[list[Tensor[Any, Any, Any]], list[int]], Any]:
        if isinstance(v, Tensor):
            def take(ts: list[Tensor[Any, Any, Any]], at: list[int]) -> Any:
                at[0] += 1
                return ts[at[0] - 1]

            return take
        if isinstance(v, _ATOMS):
            return lambda ts, at: v
        if isinstance(v, (tuple, list)):
            parts = [build(x) for x in v]
            kind = type(v)

            def seq(ts: list[Tensor[Any, Any, Any]], at: list[int]) -> Any:
                items = [p(ts, at) for p in parts]
                if kind is list:
                    return items
                if kind is tuple:
                    return tuple(items)
                return kind(*items)  # a NamedTuple

            return seq
        if isinstance(v, dict):
            entries = [(k, build(x)) for k, x in v.items()]
            return lambda ts, at: {k: p(ts, at) for k, p in entries}
        fields = _fields(v)
        if fields is None:
            raise TypeError(f"ferrum.jit.trace: cannot rebuild a result of type {type(v).__name__}")
        named = [(k, build(x)) for k, x in fields]

        def obj(ts: list[Tensor[Any, Any, Any]], at: list[int]) -> Any:
            out = copy.copy(v)
            for k, p in named:
                # object.__setattr__ also fills frozen dataclasses, as dataclasses.replace would
                object.__setattr__(out, k, p(ts, at))
            return out

        return obj

    make = build(value)
    return lambda tensors: make(tensors, [0])
