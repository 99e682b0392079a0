"""Sequence ops: SequenceConstruct, SequenceEmpty, SequenceAt, SequenceInsert, SequenceErase, SequenceLength,
ConcatFromSequence, SplitToSequence and SequenceMap.

A sequence is a Python list of tensors (see ``ferrum.onnx.values``); each op
returns a new list and leaves the one it was given as it was. Its tensors
may differ in shape, so an empty sequence carries no element type: ONNX's
``dtype`` of SequenceEmpty is accepted and not kept.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ferrum._ferrum import Device, Tensor
from ferrum.backend import NdArray
from ferrum.onnx.execute import run_subgraph
from ferrum.onnx.ops._util import AnyTensor, IntArg, axis, ints
from ferrum.onnx.ops.registry import op
from ferrum.onnx.program import Subgraph
from ferrum.onnx.values import TensorSeq, Value, as_sequence, as_tensor

__all__ = [
    "concat_from_sequence",
    "sequence_at",
    "sequence_construct",
    "sequence_empty",
    "sequence_erase",
    "sequence_insert",
    "sequence_length",
    "sequence_map",
    "split_to_sequence",
]


def _position(position: IntArg, length: int, op_name: str, *, end_ok: bool) -> int:
    """A possibly negative ``position`` in ``[-n, n - 1]`` (``[-n, n]`` when ``end_ok``) as an index."""
    found = ints(position)
    if found is None or len(found) != 1:
        raise ValueError(f"{op_name}: position must be one integer, found {found}")
    top = length if end_ok else length - 1
    if not -length <= found[0] <= top:
        raise ValueError(f"{op_name}: position {found[0]} is out of range for a sequence of {length} tensors")
    return found[0] + length if found[0] < 0 else found[0]


@op("SequenceConstruct", since=11)
def sequence_construct(*inputs: AnyTensor) -> TensorSeq:
    """The sequence of ``inputs``, in order."""
    for i, x in enumerate(inputs):
        as_tensor(x, f"SequenceConstruct: input {i}")
    kinds = {x.kind for x in inputs}
    if len(kinds) > 1:
        raise ValueError(f"SequenceConstruct: tensors of different kinds {sorted(k.__name__ for k in kinds)}")
    return list(inputs)


@op("SequenceEmpty", since=11)
def sequence_empty(dtype: int = 1) -> TensorSeq:
    """An empty sequence (``dtype``, its tensors' ONNX type, is not kept: see the module docstring)."""
    del dtype
    return []


@op("SequenceAt", static=(None, "position"), since=11)
def sequence_at(seq: TensorSeq, position: IntArg = None) -> AnyTensor:
    """The tensor at ``position`` of ``seq`` (negative counts from the back)."""
    items = as_sequence(seq, "SequenceAt: input 0")
    return items[_position(position, len(items), "SequenceAt", end_ok=False)]


@op("SequenceInsert", static=(None, None, "position"), since=11)
def sequence_insert(seq: TensorSeq, tensor: AnyTensor, position: IntArg = None) -> TensorSeq:
    """``seq`` with ``tensor`` inserted before ``position`` (at the back when absent)."""
    items = as_sequence(seq, "SequenceInsert: input 0")
    as_tensor(tensor, "SequenceInsert: input 1")
    if items and items[0].kind is not tensor.kind:
        raise ValueError(
            f"SequenceInsert: a {tensor.kind.__name__} tensor into a sequence of {items[0].kind.__name__}"
        )
    at = len(items) if position is None else _position(position, len(items), "SequenceInsert", end_ok=True)
    return [*items[:at], tensor, *items[at:]]


@op("SequenceErase", static=(None, "position"), since=11)
def sequence_erase(seq: TensorSeq, position: IntArg = None) -> TensorSeq:
    """``seq`` without the tensor at ``position`` (the last one when absent)."""
    items = as_sequence(seq, "SequenceErase: input 0")
    if not items:
        raise ValueError("SequenceErase: the sequence is empty")
    at = -1 if position is None else _position(position, len(items), "SequenceErase", end_ok=False)
    at = at % len(items)
    return [*items[:at], *items[at + 1 :]]


@op("SequenceLength", since=11)
def sequence_length(seq: TensorSeq, device: Device[Any] | None = None) -> AnyTensor:
    """The number of tensors in ``seq``: an Int scalar."""
    items = as_sequence(seq, "SequenceLength: input 0")
    on = items[0].device() if items else device if device is not None else NdArray.device()
    return Tensor.from_numpy(np.array(len(items), dtype=np.int64), on)


@op("ConcatFromSequence", since=11)
def concat_from_sequence(seq: TensorSeq, axis: int = 0, new_axis: int = 0) -> AnyTensor:
    """``seq``'s tensors joined along ``axis`` (NumPy's concatenate), or along a new ``axis`` (stack)."""
    items = as_sequence(seq, "ConcatFromSequence: input 0")
    if not items:
        raise ValueError("ConcatFromSequence: the sequence is empty")
    ranks = {x.rank() for x in items}
    if len(ranks) != 1:
        raise ValueError(f"ConcatFromSequence: tensors of different ranks {sorted(ranks)}")
    rank = ranks.pop() + (1 if new_axis else 0)
    dim = _axis(axis, rank, "ConcatFromSequence")
    if new_axis:
        items = [x.unsqueeze_dims([dim]) for x in items]
    _same_dims(items, dim)
    return Tensor.cat(items, dim)


def _same_dims(items: TensorSeq, dim: int) -> None:
    first = list(items[0].dims())
    for x in items[1:]:
        other = list(x.dims())
        if other[:dim] + other[dim + 1 :] != first[:dim] + first[dim + 1 :]:
            raise ValueError(f"ConcatFromSequence: shapes {first} and {other} differ off axis {dim}")


@op("SplitToSequence", static=(None, "split"), since=11)
def split_to_sequence(x: AnyTensor, split: IntArg = None, axis: int = 0, keepdims: int = 1) -> TensorSeq:
    """``x`` cut along ``axis``: into parts of the sizes ``split`` (1-D), of ``split`` each (a scalar; the
    last may be smaller), or of 1 each without the axis when ``split`` is absent and ``keepdims`` is 0."""
    as_tensor(x, "SplitToSequence: input 0")
    dim = _axis(axis, x.rank(), "SplitToSequence")
    size = x.dims()[dim]
    sizes = _sizes(split, size)
    parts = _split(x, sizes, dim)
    if split is None and not keepdims:
        parts = [p.squeeze_dims([dim]) for p in parts]
    return parts


def _axis(value: int, rank: int, op_name: str) -> int:
    try:
        return axis(value, rank)
    except ValueError as exc:
        raise ValueError(f"{op_name}: {exc}") from exc


def _sizes(split_arg: IntArg, size: int) -> list[int]:
    """The part sizes: ``split_arg`` as a list (1-D), or chunks of one size (a scalar; 1 when absent)."""
    scalar = split_arg is None or isinstance(split_arg, (int, np.integer))
    if isinstance(split_arg, Tensor):
        scalar = split_arg.rank() == 0
    found = ints(split_arg) or [1]
    if any(s <= 0 for s in found):
        raise ValueError(f"SplitToSequence: split must hold positive sizes, found {found}")
    if not scalar:
        if sum(found) != size:
            raise ValueError(f"SplitToSequence: sizes {found} do not add up to the axis length {size}")
        return found
    chunk = found[0]
    return [chunk] * (size // chunk) + ([size % chunk] if size % chunk else [])


def _split(x: AnyTensor, sizes: list[int], dim: int) -> list[AnyTensor]:
    parts, start = [], 0
    for size in sizes:  # each positive: _sizes refuses the rest
        parts.append(x.narrow(dim, start, size))
        start += size
    return parts


@op("SequenceMap", since=17, deterministic=False)
def sequence_map(
    seq: TensorSeq,
    *extra: Value,
    body: Subgraph | None = None,
    captured: dict[str, Value] | None = None,
    device: Device[Any] | None = None,
) -> tuple[TensorSeq, ...]:
    """``body`` run on each element of ``seq`` (and the same element of each sequence in ``extra``; a tensor
    there is given whole each time): one sequence per body output."""
    assert body is not None, "SequenceMap without its body"
    items = as_sequence(seq, "SequenceMap: input 0")
    for i, value in enumerate(extra, start=1):
        if isinstance(value, list) and len(value) != len(items):
            raise ValueError(f"SequenceMap: input {i} holds {len(value)} tensors, input 0 holds {len(items)}")
    on = device if device is not None else NdArray.device()
    outs: list[TensorSeq] = [[] for _ in body.program.outputs]
    for i, item in enumerate(items):
        inputs = [item, *(v[i] if isinstance(v, list) else v for v in extra)]
        for acc, value in zip(outs, run_subgraph(body, inputs, captured or {}, on), strict=True):
            acc.append(as_tensor(value, "SequenceMap: a body output"))
    return tuple(outs)
