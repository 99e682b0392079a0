"""Walking a module's fields: which hold parameters, and rebuilding a module with new ones.

A field is part of the module tree when it holds a ``Param``, a
``RunningState``, a ``Module``, a list or tuple of those, or ``None`` (an
absent optional part). Anything else is a constant: kept as is, left out of
records.
"""

from __future__ import annotations

import copy
import dataclasses
import weakref
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ferrum.module.param import Param, RunningState

__all__ = [
    "Leaf",
    "ModuleNode",
    "field_names",
    "is_module",
    "is_tree_node",
    "join",
    "leaves",
    "node_fields",
    "rebuild",
    "with_fields",
]

Leaf = Param[Any] | RunningState[Any]


class ModuleNode:
    """The base class of ``Module``: what the walks of this folder (records, display) know of one.

    ``Module`` (in ``base.py``) derives from it, so these files tell a module
    from any other value without importing ``base.py``, which stands on them.
    """

    __slots__ = ()

    def _display_settings(self) -> list[tuple[str, object]] | None:
        """Settings shown on one line (``Linear {d_input: 4, ...}``); None prints the field tree."""
        return None


def is_module(value: object) -> bool:
    """Whether ``value`` is a ``Module``."""
    return isinstance(value, ModuleNode)


def _is_item(value: object) -> bool:
    return isinstance(value, (Param, RunningState)) or is_module(value)


def _holds_tree(value: object) -> bool | None:
    """True for a tree node, False for a constant, None for a list mixing both."""
    if _is_item(value):
        return True
    if isinstance(value, (list, tuple)):
        if not value:
            # An empty list may be a list of layers built with zero items; an empty tuple is a constant.
            return isinstance(value, list)
        kinds = {_holds_tree(item) for item in value}
        if len(kinds) == 1:
            return kinds.pop()
        return None
    return False


def _is_node(owner: object, name: str, value: object) -> bool:
    kind = _holds_tree(value)
    if kind is None:
        raise TypeError(
            f"{type(owner).__name__}.{name} mixes modules or parameters with other values;"
            " a list field holds either only modules/parameters or only constants"
        )
    return kind


def is_tree_node(owner: object, name: str, value: object) -> bool:
    """Whether the field ``name`` of ``owner`` holds parameters or modules (else it is a constant)."""
    return _is_node(owner, name, value)


class _Shape:
    """What a walk needs to know of a module class, worked out once per class.

    A training step walks the model twice (``from_grads``, the optimizer's
    ``map``); asking ``dataclasses`` for the fields and ``copy`` for a copy
    at every node took a third of the Python time of a small MLP's step.
    """

    __slots__ = ("names", "plain")

    def __init__(self, cls: type[Any]) -> None:
        self.names = tuple(field.name for field in dataclasses.fields(cls))
        # An instance whose state is its __dict__ (no class below object defines
        # a copy or pickle hook, or slots other than empty ones such as
        # Generic's) is copied as copy.copy would, without the trip through
        # __reduce_ex__.
        self.plain = not any(
            any(hook in vars(base) for hook in _COPY_HOOKS) or vars(base).get("__slots__")
            for base in cls.__mro__
            if base is not object
        )


_COPY_HOOKS = ("__copy__", "__reduce_ex__", "__reduce__", "__getstate__", "__setstate__")
_shapes: weakref.WeakKeyDictionary[type[Any], _Shape] = weakref.WeakKeyDictionary()


def _shape(cls: type[Any]) -> _Shape:
    shape = _shapes.get(cls)
    if shape is None:
        shape = _shapes[cls] = _Shape(cls)
    return shape


_MISSING = object()


def field_names(module: ModuleNode) -> tuple[str, ...]:
    """The names of every field of ``module``'s class (tree nodes and constants), in declaration order."""
    return _shape(type(module)).names


def with_fields(node: Any, changes: Mapping[str, object]) -> Any:
    """A shallow copy of the module ``node`` whose fields in ``changes`` hold the new values.

    The one way code in ferrum changes a built module's fields: a built module
    refuses assignment (``Module.__setattr__``), so the copy's fields are set
    here, before anyone else holds it. ``node`` is left as it was.
    """
    new = _shallow_copy(node)
    for name, value in changes.items():
        object.__setattr__(new, name, value)
    return new


def node_fields(module: ModuleNode) -> list[tuple[str, object]]:
    """The (name, value) of every field of ``module`` that belongs to the tree, in declaration order."""
    found: list[tuple[str, object]] = []
    for name in _shape(type(module)).names:
        value = getattr(module, name, _MISSING)
        if value is _MISSING:
            raise AttributeError(f"{type(module).__name__} has no value for its field '{name}'")
        if _is_node(module, name, value):
            found.append((name, value))
    return found


def join(path: str, name: str) -> str:
    """The dotted path of field ``name`` under ``path``: ``join("fc", "weight") == "fc.weight"``."""
    return f"{path}.{name}" if path else name


def leaves(node: object, path: str = "") -> Iterator[tuple[str, Leaf]]:
    """Every parameter and running state under ``node``, with its dotted path (list items by index)."""
    found: list[tuple[str, Leaf]] = []
    _collect(node, path, found)
    return iter(found)


def _collect(node: object, path: str, found: list[tuple[str, Leaf]]) -> None:
    # One list filled in place: nested generators cost a frame per level and item.
    if isinstance(node, (Param, RunningState)):
        found.append((path, node))
    elif is_module(node):
        for name, value in node_fields(node):  # type: ignore[arg-type]
            _collect(value, join(path, name), found)
    elif isinstance(node, (list, tuple)):
        for i, item in enumerate(node):
            _collect(item, join(path, str(i)), found)


OnParam = Callable[[str, Param[Any]], Param[Any]]
OnState = Callable[[str, RunningState[Any]], RunningState[Any]]


def _copy_state(path: str, state: RunningState[Any]) -> RunningState[Any]:
    return RunningState(state.value(), state.id)


def rebuild(node: Any, on_param: OnParam, on_state: OnState = _copy_state, path: str = "") -> Any:
    """A copy of ``node`` with each parameter replaced by ``on_param`` and each state by ``on_state``.

    The original is left untouched; constants are shared (they are immutable by convention).
    """
    if isinstance(node, Param):
        return on_param(path, node)
    if isinstance(node, RunningState):
        return on_state(path, node)
    if is_module(node):
        changes = {
            name: rebuild(value, on_param, on_state, join(path, name)) for name, value in node_fields(node)
        }
        return with_fields(node, changes)
    if isinstance(node, (list, tuple)):
        items = [rebuild(item, on_param, on_state, join(path, str(i))) for i, item in enumerate(node)]
        return items if isinstance(node, list) else tuple(items)
    return node


def _shallow_copy(node: Any) -> Any:
    """``copy.copy(node)``, without its generic machinery for a plain instance."""
    cls: Any = type(node)
    if not _shape(cls).plain:
        return copy.copy(node)
    new = cls.__new__(cls)
    new.__dict__.update(node.__dict__)
    return new
