"""ONNX's values at run time: tensors, sequences of tensors and optionals.

A sequence is a Python ``list`` of tensors, never a tuple: an op returns a
tuple for its several outputs, so a tuple cannot also be one value. An
optional is its element (a tensor or a sequence), or ``None`` when it is
empty: ONNX reads an optional holding ``x`` as it reads ``x`` (Identity,
If, Loop pass it on; OptionalGetElement of a tensor is the tensor), so no
wrapper is kept. Ops never change a list they are given: a sequence op
returns a new one.

A value's declared type is its ``ValueInfo.containers``: ``()`` for a
tensor, ``("sequence",)``, ``("optional",)`` (of a tensor),
``("optional", "sequence")``..., outermost first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

from ferrum._ferrum import Tensor
from ferrum.onnx.errors import OnnxError

__all__ = [
    "CONTAINER_OPS",
    "TensorSeq",
    "Value",
    "as_sequence",
    "as_tensor",
    "check_value",
    "describe",
    "map_tensors",
    "tensors_in",
]

TensorSeq: TypeAlias = "list[Tensor[Any, Any, Any]]"
Value: TypeAlias = "Tensor[Any, Any, Any] | TensorSeq | None"

CONTAINER_OPS = frozenset(
    {
        "SequenceConstruct",
        "SequenceEmpty",
        "SequenceAt",
        "SequenceInsert",
        "SequenceErase",
        "SequenceLength",
        "ConcatFromSequence",
        "SplitToSequence",
        "SequenceMap",
        "Optional",
        "OptionalHasElement",
        "OptionalGetElement",
    }
)
"""The ops that make or read sequences and optionals (the code generator does not write them)."""


def describe(value: object) -> str:
    """``value``'s kind in words, for error messages: "a tensor", "a sequence of 3 tensors"..."""
    if value is None:
        return "an empty optional"
    if isinstance(value, Tensor):
        return "a tensor"
    if isinstance(value, list):
        return f"a sequence of {len(value)} values"
    return f"a {type(value).__name__}"


def as_tensor(value: Value, what: str) -> Tensor[Any, Any, Any]:
    """``value`` when it is a tensor; else ``ValueError`` saying that ``what`` must be one."""
    if not isinstance(value, Tensor):
        raise ValueError(f"{what} must be a tensor, found {describe(value)}")
    return value


def as_sequence(value: Value, what: str) -> TensorSeq:
    """``value`` when it is a sequence; else ``ValueError`` saying that ``what`` must be one."""
    if not isinstance(value, list):
        raise ValueError(f"{what} must be a sequence of tensors, found {describe(value)}")
    return value


def tensors_in(value: Value) -> list[Tensor[Any, Any, Any]]:
    """The tensors ``value`` holds: itself, a sequence's elements, none for an empty optional."""
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def map_tensors(value: Any, fn: Callable[[Any], Any]) -> Any:
    """``value`` with ``fn`` applied to each tensor (or array) in it, lists and ``None`` kept as such."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return [fn(v) for v in value]
    return fn(value)


def check_value(value: object, containers: tuple[str, ...], what: str) -> Value:
    """A caller's ``value`` for a graph input declared as ``containers``: a sequence copied to a new list
    (a tuple accepted), so no op sees the caller's own list; ``OnnxError`` when it is of another kind."""
    if containers[:1] == ("optional",):
        return None if value is None else check_value(value, containers[1:], what)
    if containers[:1] == ("sequence",):
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, Tensor) for v in value):
            raise OnnxError(f"{what} must be a list of ferrum Tensors (ONNX sequence), found {_kind(value)}")
        return list(value)
    if not isinstance(value, Tensor):
        expected = "a ferrum Tensor" if not containers else f"an ONNX {'/'.join(containers)} value"
        raise OnnxError(f"{what} must be {expected}, found {_kind(value)}")
    return value


def _kind(value: object) -> str:
    if isinstance(value, (list, tuple)):
        inner = sorted({type(v).__name__ for v in value})
        return f"a {type(value).__name__} of {', '.join(inner) or 'nothing'}"
    return "None" if value is None else type(value).__name__
