"""The text a module prints as: Burn's ``ModuleDisplay``, character for character.

A module with one-line settings prints ``Linear {d_input: 4, d_output: 32,
bias: true, params: 160}``; any other prints its fields, one per line,
indented two spaces per level. ``params:`` counts every float tensor the
module holds, running states included (Burn's count), and is left out when
it is 0. Numbers are written as Rust writes them (``0.00001``, ``1``), a
parameter as ``ParamTensor {rank: 2, shape: [4, 32], kind: float}``, a
plain tensor as ``Tensor {rank: 1, shape: [3]}``, a list of modules as
``Vec<0..n>``.

Example output::

    Mlp {
      linear1: Linear {d_input: 4, d_output: 32, bias: true, params: 160}
      activation: Relu
      params: 226
    }
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Sequence

from ferrum._ferrum import Tensor
from ferrum.module.param import Param, RunningState
from ferrum.module.tree import ModuleNode, is_module, leaves
from ferrum.rust_text import rust_display

__all__ = ["display_params", "format_module", "format_value", "tensor_summary"]

_INDENT = 2


def tensor_summary(shape: Sequence[int]) -> str:
    """How Burn shows a tensor held by a module: ``Tensor {rank: 1, shape: [3]}``.

    Example:
        >>> tensor_summary((2, 3))
        'Tensor {rank: 2, shape: [2, 3]}'
    """
    return f"Tensor {{rank: {len(shape)}, shape: [{', '.join(str(d) for d in shape)}]}}"


def format_value(value: object) -> str:
    """One setting as Burn prints it: ``true``/``false``, enum names, Rust's numbers, tensors summarised.

    Example:
        >>> format_value(1e-5), format_value(1.0), format_value((3, 3)), format_value(None)
        ('0.00001', '1', '[3, 3]', 'None')
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, float):
        return rust_display(value)
    if isinstance(value, Tensor):
        return tensor_summary(value.dims())
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_value(item) for item in value) + "]"
    if value is None:
        return "None"
    return str(value) if isinstance(value, (int, str)) else repr(value)


def display_params(module: ModuleNode) -> int:
    """The count Burn prints: every float tensor of the module, running states included.

    (``Module.num_params`` counts the trainable parameters only.)
    """
    return sum(
        leaf.val().num_elements() if isinstance(leaf, Param) else leaf.value().num_elements()
        for _, leaf in leaves(module)
    )


def format_module(module: ModuleNode, level: int = 1) -> str:
    """Burn's display of a module: a layer's settings on one line, else its fields' tree (at ``level``)."""
    name = type(module).__name__
    count = display_params(module)
    settings = module._display_settings()
    if settings is not None:
        parts = [f"{key}: {format_value(value)}" for key, value in settings]
        if count > 0:
            parts.append(f"params: {count}")
        return f"{name} {{{', '.join(parts)}}}" if parts else name
    shown = [field for field in dataclasses.fields(module) if field.repr]  # type: ignore[arg-type]
    attributes = [(field.name, _format_node(getattr(module, field.name), level + 1)) for field in shown]
    return _block(name, attributes, count, level)


def _block(name: str, attributes: list[tuple[str, str]], count: int, level: int) -> str:
    """Burn's multi-line form: ``name {`` then one attribute per line, ``params:``, ``}``."""
    if not attributes:
        return name
    pad = " " * (level * _INDENT)
    lines = [f"{pad}{key}: {text}" for key, text in attributes]
    if count > 0:
        lines.append(f"{pad}params: {count}")
    return name + " {\n" + "\n".join(lines) + "\n" + " " * ((level - 1) * _INDENT) + "}"


def _is_tree_item(value: object) -> bool:
    return isinstance(value, (Param, RunningState)) or is_module(value)


def _format_node(value: object, level: int) -> str:
    if isinstance(value, Param):
        kind = value.val().kind.__name__.lower()
        return f"ParamTensor {{rank: {len(value.shape())}, shape: {list(value.shape())}, kind: {kind}}}"
    if isinstance(value, RunningState):
        return "RunningState"
    if is_module(value):
        return format_module(value, level)  # type: ignore[arg-type]
    if isinstance(value, list) and all(_is_tree_item(item) for item in value):
        # Burn's Vec<T> display: its items as attributes "0", "1", ... under the type `Vec<0..n>`.
        # A Vec prints no count of its own (the module holding it does).
        attributes = [(str(i), _format_node(item, level + 1)) for i, item in enumerate(value)]
        return _block(f"Vec<0..{len(value)}>", attributes, 0, level)
    return format_value(value)
