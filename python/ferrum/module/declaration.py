"""The field declaration a value needs: what ``Module`` shows when a layer is assigned in ``__init__``.

A PyTorch habit (``self.fc1 = Linear(...)`` in ``__init__``) would leave the
layer out of the module tree: no parameters, nothing trained, nothing saved.
``Module.__setattr__`` refuses it and prints the field to declare instead,
spelled with this module's annotation (``fc1: Linear[B]``).

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import NdArray
    >>> from ferrum.module import Param
    >>> annotation(Param(Tensor.zeros((2, 3), NdArray.device())))
    'Param[Tensor[B, D2]]'
    >>> annotation(Tensor.zeros((4,), NdArray.device()).int())
    'Tensor[B, D1, Int]'
"""

from __future__ import annotations

from typing import Any

from ferrum._ferrum import Float, Tensor
from ferrum.module.param import Param, RunningState
from ferrum.module.tree import is_module

__all__ = ["annotation", "holds_tree_value", "undeclared_error"]


def _tensor(tensor: Tensor[Any, Any, Any]) -> str:
    kind = tensor.kind
    return f"Tensor[B, D{tensor.rank()}{'' if kind is Float else ', ' + kind.__name__}]"


def annotation(value: object) -> str:
    """The annotation of a field holding ``value``, with ``B`` for the backend (``list[Linear[B]]``)."""
    if isinstance(value, Tensor):
        return _tensor(value)
    if isinstance(value, (Param, RunningState)):
        inner = value.val() if isinstance(value, Param) else value.value()
        return f"{type(value).__name__}[{_tensor(inner)}]"
    if is_module(value):
        cls = type(value)
        # A module generic in its backend (Linear[B]) is annotated with it; Relu, Dropout are not generic.
        return f"{cls.__name__}[B]" if getattr(cls, "__parameters__", ()) else cls.__name__
    if isinstance(value, (list, tuple)) and value:
        item = annotation(value[0])
        return f"list[{item}]" if isinstance(value, list) else f"tuple[{item}, ...]"
    return type(value).__name__


def holds_tree_value(value: object) -> bool:
    """Whether ``value`` is (or is a list/tuple holding) a module, tensor, ``Param`` or ``RunningState``."""
    if isinstance(value, (Tensor, Param, RunningState)) or is_module(value):
        return True
    return isinstance(value, (list, tuple)) and any(holds_tree_value(item) for item in value)


def undeclared_error(owner: object, name: str, value: object) -> TypeError:
    """The error for ``owner.name = value`` when ``name`` is not a declared field."""
    cls = type(owner).__name__
    hint = (
        " A plain tensor field is a constant: to train it, wrap it in Param(...) and declare"
        f" `{name}: Param[{_tensor(value)}]`."
        if isinstance(value, Tensor)
        else ""
    )
    return TypeError(
        f"{cls}.{name}: cannot assign a {type(value).__name__} to an undeclared attribute of a Module;"
        " it would hold no parameters, train nothing and be left out of records."
        f" Modules are dataclasses: declare it as a field of {cls}:\n"
        f"    {name}: {annotation(value)}\n"
        f"and build the module with {cls}({name}=...), usually in a config's init(device);"
        f" an __init__ of your own may then assign it.{hint}"
    )
