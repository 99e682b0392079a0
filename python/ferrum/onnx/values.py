"""ONNX's values at run time: tensors, string tensors, sequences of tensors and optionals.

A string tensor (ONNX's ``tensor(string)``) is a NumPy array of dtype
``object`` whose elements are Python ``str`` (``StringTensor``), never a
ferrum ``Tensor``: ferrum's tensors hold numbers only. It is what the graph's
string inputs take, what its string outputs give, and what the string ops
(``ferrum.onnx.ops.strings``) read and return; no op changes one in place.

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

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeAlias, TypeGuard

import numpy as np

from ferrum._ferrum import Device, Tensor
from ferrum.onnx.errors import OnnxError

__all__ = [
    "CONTAINER_OPS",
    "StringTensor",
    "TensorSeq",
    "Value",
    "as_sequence",
    "as_strings",
    "as_tensor",
    "check_value",
    "constant_value",
    "describe",
    "is_strings",
    "map_tensors",
    "string_tensor",
    "tensors_in",
    "to_strings",
]

TensorSeq: TypeAlias = "list[Tensor[Any, Any, Any]]"
StringTensor: TypeAlias = "np.ndarray[Any, np.dtype[np.object_]]"
"""A string tensor: a NumPy array of dtype ``object`` holding Python ``str`` (see the module docstring)."""
Value: TypeAlias = "Tensor[Any, Any, Any] | StringTensor | TensorSeq | None"

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
    if is_strings(value):
        return f"a string tensor of shape {list(value.shape)}"
    if isinstance(value, list):
        return f"a sequence of {len(value)} values"
    return f"a {type(value).__name__}"


def as_tensor(value: Value, what: str) -> Tensor[Any, Any, Any]:
    """``value`` when it is a tensor; else ``ValueError`` saying that ``what`` must be one."""
    if not isinstance(value, Tensor):
        raise ValueError(f"{what} must be a tensor, found {describe(value)}")
    return value


def is_strings(value: object) -> TypeGuard[StringTensor]:
    """Whether ``value`` is a string tensor (a NumPy array of dtype ``object``)."""
    return isinstance(value, np.ndarray) and value.dtype == object


def as_strings(value: object, what: str) -> StringTensor:
    """``value`` when it is a string tensor; else ``ValueError`` saying that ``what`` must be one."""
    if not is_strings(value):
        raise ValueError(f"{what} must be a string tensor, found {describe(value)}")
    return value


def string_tensor(items: Iterable[str], shape: Sequence[int]) -> StringTensor:
    """The string tensor of shape ``shape`` holding ``items`` in row-major order."""
    listed = list(items)
    out = np.empty(len(listed), dtype=object)
    out[:] = listed
    return out.reshape(tuple(shape))


def to_strings(array: Any, what: str) -> StringTensor:
    """``array`` (NumPy ``str``, ``bytes`` or ``object`` elements) as a string tensor; bytes read as UTF-8.

    ``ValueError`` saying what ``what`` holds when an element is neither ``str`` nor ``bytes``.
    """
    found = np.asarray(array)
    if found.dtype.kind not in "OUS":
        raise ValueError(f"{what} must hold strings, found a {found.dtype} array")
    items = []
    for item in found.reshape(-1).tolist():
        if isinstance(item, bytes):
            try:
                item = item.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ValueError(f"{what} holds bytes that are not UTF-8: {item[:20]!r}") from exc
        if not isinstance(item, str):
            raise ValueError(f"{what} must hold strings, found a {type(item).__name__} element")
        items.append(item)
    return string_tensor(items, found.shape)


def constant_value(array: np.ndarray[Any, Any], device: Device[Any]) -> Tensor[Any, Any, Any] | StringTensor:
    """A translated constant at run time: a tensor on ``device``, or a string array as it is."""
    return array if is_strings(array) else Tensor.from_numpy(array, device)


def as_sequence(value: Value, what: str) -> TensorSeq:
    """``value`` when it is a sequence; else ``ValueError`` saying that ``what`` must be one."""
    if not isinstance(value, list):
        raise ValueError(f"{what} must be a sequence of tensors, found {describe(value)}")
    return value


def tensors_in(value: Value) -> list[Tensor[Any, Any, Any]]:
    """The ferrum tensors ``value`` holds: itself, a sequence's elements, none for an empty optional or a
    string tensor."""
    if isinstance(value, list):
        return list(value)
    return [value] if isinstance(value, Tensor) else []


def map_tensors(value: Any, fn: Callable[[Any], Any]) -> Any:
    """``value`` with ``fn`` applied to each tensor (or array) in it, lists and ``None`` kept as such."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return [fn(v) for v in value]
    return fn(value)


def check_value(value: object, containers: tuple[str, ...], what: str, *, strings: bool = False) -> Value:
    """A caller's ``value`` for a graph input declared as ``containers``: a sequence copied to a new list
    (a tuple accepted), so no op sees the caller's own list; ``OnnxError`` when it is of another kind.

    With ``strings`` (an input of ONNX type ``tensor(string)``), a NumPy array of ``str`` (or ``bytes``,
    read as UTF-8) elements, returned as a string tensor.
    """
    if containers[:1] == ("optional",):
        return None if value is None else check_value(value, containers[1:], what, strings=strings)
    if strings and not containers:
        if not isinstance(value, np.ndarray):
            raise OnnxError(f"{what} must be a NumPy array of str (ONNX string tensor), found {_kind(value)}")
        try:
            return to_strings(value, what)
        except ValueError as exc:
            raise OnnxError(str(exc)) from exc
    if containers[:1] == ("sequence",):
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, Tensor) for v in value):
            raise OnnxError(f"{what} must be a list of ferrum Tensors (ONNX sequence), found {_kind(value)}")
        return list(value)
    if strings:
        raise OnnxError(f"{what}: sequences of string tensors are not supported")
    if not isinstance(value, Tensor):
        expected = "a ferrum Tensor" if not containers else f"an ONNX {'/'.join(containers)} value"
        raise OnnxError(f"{what} must be {expected}, found {_kind(value)}")
    return value


def _kind(value: object) -> str:
    if isinstance(value, (list, tuple)):
        inner = sorted({type(v).__name__ for v in value})
        return f"a {type(value).__name__} of {', '.join(inner) or 'nothing'}"
    return "None" if value is None else type(value).__name__
