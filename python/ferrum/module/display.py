"""The readable tree a module prints as, in Burn's style.

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
from typing import TYPE_CHECKING, Any

from ferrum.module.param import Param, RunningState
from ferrum.module.tree import is_module

if TYPE_CHECKING:
    from ferrum.module.base import Module

__all__ = ["format_module", "format_value"]


def format_value(value: object) -> str:
    """One setting as Burn prints it: lowercase booleans, enum member names, plain numbers."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_value(item) for item in value) + "]"
    if value is None:
        return "None"
    return str(value) if isinstance(value, (int, float, str)) else repr(value)


def format_module(module: Module[Any], indent: int = 0) -> str:
    name = type(module).__name__
    count = module.num_params()
    settings = module._display_settings()
    if settings is not None:
        parts = [f"{key}: {format_value(value)}" for key, value in settings]
        parts.append(f"params: {count}")
        return f"{name} {{{', '.join(parts)}}}"
    shown = [field for field in dataclasses.fields(module) if field.repr]  # type: ignore[arg-type]
    if not shown:
        return name
    pad = " " * (indent + 2)
    lines = [f"{pad}{field.name}: {_format_node(getattr(module, field.name), indent + 2)}" for field in shown]
    lines.append(f"{pad}params: {count}")
    return name + " {\n" + "\n".join(lines) + "\n" + " " * indent + "}"


def _format_node(value: object, indent: int) -> str:
    if isinstance(value, Param):
        grad = "" if value.is_require_grad() else ", require_grad: false"
        return f"Param {{shape: {list(value.shape())}{grad}}}"
    if isinstance(value, RunningState):
        return f"RunningState {{shape: {list(value.shape())}}}"
    if is_module(value):
        return format_module(value, indent)  # type: ignore[arg-type]
    if isinstance(value, (list, tuple)) and value and all(
        isinstance(item, (Param, RunningState)) or is_module(item) for item in value
    ):
        pad = " " * (indent + 2)
        items = [f"{pad}{i}: {_format_node(item, indent + 2)}" for i, item in enumerate(value)]
        return "[\n" + "\n".join(items) + "\n" + " " * indent + "]"
    return format_value(value)
