"""Sealing a module once its constructor returns: modules are values, as in Burn.

A Burn module is a struct: changing a layer means building a new one
(``Linear { bias: None, ..layer }``), and every holder of the old one keeps
it. A Python object could be changed in place behind the back of an
optimizer's state, a checkpoint or another model sharing the layer, so
``Module`` seals an instance when its outermost constructor (the dataclass
``__init__`` with ``__post_init__``, or an ``__init__`` of the class's own)
returns; after that, assignment raises ``dataclasses.FrozenInstanceError``
saying to use ``module.replace(field=value)``. Code in ferrum that builds a
changed copy sets the copy's fields through ``tree.with_fields``.

Example:
    >>> from ferrum.backend import NdArray
    >>> from ferrum.nn import LinearConfig
    >>> layer = LinearConfig(4, 2).init(NdArray.device())
    >>> is_sealed(layer)
    True
    >>> layer.bias = None
    Traceback (most recent call last):
    ...
    dataclasses.FrozenInstanceError: Linear.bias: a built module cannot be changed in place ...
    >>> layer.replace(bias=None).bias is None
    True
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

__all__ = ["is_sealed", "sealed_error", "sealing"]

# The instance flag; a copy (copy.copy, the tree walks, pickling) carries it over, so copies stay sealed.
_SEALED = "_ferrum_sealed"


def sealing(init: Callable[..., None]) -> Callable[..., None]:
    """``init`` (a module class's ``__init__``), sealing the instance when the outermost constructor returns.

    A subclass's ``__init__`` may call its parent's: only the constructor of
    the instance's own class seals it, so the subclass can still assign
    fields after ``super().__init__(...)``.
    """

    @functools.wraps(init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        if type(self).__init__ is __init__:
            self.__dict__[_SEALED] = True

    return __init__


def is_sealed(module: object) -> bool:
    """Whether ``module``'s constructor has returned (its attributes can no longer be assigned)."""
    return bool(getattr(module, "__dict__", {}).get(_SEALED, False))


def sealed_error(module: object, name: str, action: str) -> dataclasses.FrozenInstanceError:
    """The error for assigning (``action="assign"``) or deleting attribute ``name`` of a built module."""
    cls = type(module).__name__
    fields = getattr(module, "__dataclass_fields__", {})
    if name in fields:
        how = f"make a changed copy with `module.replace({name}=...)`"
        return dataclasses.FrozenInstanceError(
            f"{cls}.{name}: a built module cannot be changed in place (cannot {action} its fields);"
            f" modules are values, as in Burn: {how}, which leaves this one as it is"
            " (map, load_record, to_device, valid and no_grad return changed copies too)"
        )
    return dataclasses.FrozenInstanceError(
        f"{cls}.{name}: a built module takes no new attributes (cannot {action} '{name}');"
        f" {cls} has no field '{name}' (its fields: {', '.join(fields) or 'none'}). Declare it as a field"
        f" of {cls} and pass it to the constructor, or keep the value outside the module"
    )
