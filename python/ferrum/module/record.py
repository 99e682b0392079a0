"""A module's record: the nested dict of its parameters, and loading one back.

The record has Burn's shape, field for field in declaration order, so that
bincode (which holds no names) lines up with Burn's ``Module`` derive:
parameters and running states are ``{"id": "<ParamId>", "param": Tensor}``
(a quantized parameter's ``param`` its ``QTensor``, Burn's ``QFloat`` data),
sub-modules nested dicts, lists of modules lists (Rust ``Vec``), tuples of
modules tuples (Rust arrays), an optional field ``None`` or its value marked
``ferrum.record.Some``, and constants ``None`` (a tuple or list of constants a
tuple or list of ``None``: Burn's ``ConstantRecord``). Loading ignores the
records of constants, as Burn does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from ferrum._ferrum import Device, Float, QTensor, Tensor, TensorData
from ferrum.module.param import Param, ParamId, RunningState
from ferrum.module.tree import is_module, is_tree_node, join, node_fields, with_fields
from ferrum.record import Some, SomeConstant
from ferrum.record.burn_format import _Variant

__all__ = ["into_record", "load_record"]


def into_record(node: object) -> Any:
    """The record of a module, list, parameter or running state."""
    if isinstance(node, Param):
        quantized = node.record_quantized()
        return {"id": str(node.id), "param": node.record_value() if quantized is None else quantized}
    if isinstance(node, RunningState):
        return {"id": str(node.id), "param": node.value()}
    if is_module(node):
        if node._constant_record:  # type: ignore[attr-defined]
            return None
        variant = node._record_variant()  # type: ignore[attr-defined]
        if variant is not None:
            name, index, inner = variant
            return _Variant(name, index, into_record(inner))
        keys = node._record_keys  # type: ignore[attr-defined]
        return {keys.get(f.name, f.name): _field_record(node, f) for f in dataclasses.fields(node)}  # type: ignore[arg-type]
    if isinstance(node, list):
        return [into_record(item) for item in node]
    if isinstance(node, tuple):
        return tuple(into_record(item) for item in node)
    raise TypeError(f"cannot make a record of {type(node).__name__}")


def _field_record(module: object, field: dataclasses.Field[Any]) -> Any:
    value = getattr(module, field.name)
    if value is None:
        return None
    # An `X | None` field is Rust's Option<X>: bincode marks a present value.
    optional = "None" in str(field.type) or "Optional" in str(field.type)
    if not is_tree_node(module, field.name, value):
        record = _constant_record(value)
        return SomeConstant(record) if optional else record
    record = into_record(value)
    if record is None:
        return None  # a constant module (Burn's ConstantRecord)
    return Some(record) if optional and isinstance(record, dict) else record


def _constant_record(value: object) -> Any:
    # Burn's ConstantRecord is nil; arrays and Vecs of constants are sequences of them.
    if isinstance(value, tuple):
        return tuple(_constant_record(item) for item in value)
    if isinstance(value, list):
        return [_constant_record(item) for item in value]
    return None


def load_record(node: Any, record: object, path: str) -> Any:
    """A copy of ``node`` holding the tensors and ids of ``record``; ValueError names the first mismatch."""
    where = path or "<root>"
    if isinstance(node, Param):
        quantized = _quantized_leaf(node, record, where)
        if quantized is not None:
            return quantized
        # Compared in the record's layout, then brought to the module's (Burn's load mapper).
        tensor, pid = _leaf(record, node.record_value(), node.id, where)
        return node.with_value(node.from_record_value(tensor), pid)
    if isinstance(node, RunningState):
        tensor, pid = _leaf(record, node.value(), node.id, where)
        return RunningState(tensor, pid)
    if is_module(node):
        if node._constant_record:
            return node  # Burn ignores a constant's record (nil, or the settings of older files)
        if node._record_variant() is not None:
            return _load_variant(node, record, path)
        return _load_module(node, record, path)
    if isinstance(node, (list, tuple)):
        if not isinstance(record, (list, tuple)):
            found = _kind(record)
            raise ValueError(f"record for '{where}': expected a list of {len(node)} items, found {found}")
        if len(record) != len(node):
            raise ValueError(f"record for '{where}': expected {len(node)} items, found {len(record)}")
        pairs = enumerate(zip(node, record, strict=True))
        items = [load_record(item, rec, join(path, str(i))) for i, (item, rec) in pairs]
        return items if isinstance(node, list) else tuple(items)
    raise TypeError(f"cannot load a record into {type(node).__name__} at '{where}'")


def _load_module(module: Any, record: object, path: str) -> Any:
    name = type(module).__name__
    where = path or "<root>"
    if not isinstance(record, Mapping):
        raise ValueError(f"record for '{where}' ({name}): expected a dict of fields, found {_kind(record)}")
    if module._record_keys:
        # Fields whose Burn name Python cannot use (BiLstm's `forward`) are renamed in the record.
        field_of = {key: field for field, key in module._record_keys.items()}
        record = {field_of.get(key, key): value for key, value in record.items()}
    fields = node_fields(module)
    known = {field for field, _ in fields}
    constants = {field.name for field in dataclasses.fields(module)} - known
    for key in record:
        if key in known:
            continue
        sub = join(path, str(key))
        if isinstance(key, str) and hasattr(module, key) and getattr(module, key) is None:
            if record[key] is None:
                continue
            raise ValueError(f"record has a value for '{sub}', but {name}.{key} is None in this module")
        if key in constants:
            continue  # the record of a constant holds nothing (Burn ignores it too)
        have = ", ".join(sorted(known)) or "none"
        raise ValueError(f"record has '{sub}', which {name} does not have (its parameter fields: {have})")
    loaded: dict[str, object] = {}
    for field, value in fields:
        sub = join(path, field)
        rec = record.get(field)
        if isinstance(value, list) and not value:
            if rec not in (None, []):
                raise ValueError(f"record has items for '{sub}', but {name}.{field} is an empty list")
            continue
        if field not in record:
            raise ValueError(f"record is missing '{sub}' ({type(value).__name__})")
        if rec is None and is_module(value) and value._constant_record:  # type: ignore[attr-defined]
            continue
        if rec is None:
            kind = type(value).__name__
            raise ValueError(f"record has no value for '{sub}' (None), but {name}.{field} is a {kind}")
        loaded[field] = load_record(value, rec, sub)
    return with_fields(module, loaded)


def _load_variant(module: Any, record: object, path: str) -> Any:
    """An enum module loads the record of its own variant: ``{"Variant": record}``."""
    where = path or "<root>"
    name, _, inner = module._record_variant()
    if not isinstance(record, Mapping) or len(record) != 1:
        owner = type(module).__name__
        raise ValueError(f"record for '{where}' ({owner}): expected {{'{name}': ...}}, found {_kind(record)}")
    (found, rec), = record.items()
    if found != name:
        raise ValueError(
            f"record for '{where}' holds the variant '{found}', but this {type(module).__name__} is '{name}'"
        )
    fields = node_fields(module)
    if len(fields) != 1:
        owner = type(module).__name__
        raise TypeError(f"{owner} is an enum module: it holds its variant in exactly one field")
    return with_fields(module, {fields[0][0]: load_record(inner, rec, join(path, name))})


def _quantized_leaf(node: Param[Any], record: object, where: str) -> Param[Any] | None:
    """The parameter holding a record's quantized tensor, as Burn loads ``QFloat``
    data (quantized, whatever the parameter held); None when the record holds floats."""
    if not isinstance(record, Mapping) or not isinstance(record.get("param"), QTensor):
        return None
    q: QTensor[Any, Any] = record["param"]
    if not node.keeps_record_layout():
        return None  # record mappers change the layout: loaded as floats through them
    if q.dims() != node.shape():
        raise ValueError(
            f"record for parameter '{where}' has shape {list(q.dims())},"
            f" the module expects {list(node.shape())}"
        )
    if q.device() != node.device():
        return None  # on another device: loaded as floats, moved by the float path
    return node.with_value(node.val(), _record_id(record, node.id, where)).with_quantized(q)


def _leaf(record: object, current: Tensor[Any, Any, Any], pid: ParamId, where: str) -> tuple[Any, ParamId]:
    if not isinstance(record, Mapping) or "param" not in record:
        expected = "{'id': str, 'param': tensor}"
        raise ValueError(f"record for parameter '{where}': expected {expected}, found {_kind(record)}")
    tensor = _tensor(record["param"], current.device(), where)
    if tensor.dims() != current.dims():
        raise ValueError(
            f"record for parameter '{where}' has shape {list(tensor.dims())},"
            f" the module expects {list(current.dims())}"
        )
    if tensor.dtype != current.dtype:
        tensor = tensor.cast(current.dtype)
    return tensor, _record_id(record, pid, where)


def _record_id(record: Mapping[str, Any], pid: ParamId, where: str) -> ParamId:
    raw_id = record.get("id")
    if raw_id is None:
        return pid
    if isinstance(raw_id, ParamId):
        return raw_id
    if isinstance(raw_id, int) and not isinstance(raw_id, bool):
        return ParamId(raw_id)
    if isinstance(raw_id, str):
        return ParamId.from_str(raw_id)
    raise ValueError(f"record for parameter '{where}': id must be a str, found {_kind(raw_id)}")


def _tensor(value: object, device: Device[Any], where: str) -> Tensor[Any, Any, Any]:
    if isinstance(value, QTensor):
        # A quantized record for a running state or a parameter stored in another layout.
        value = value.dequantize()
    if isinstance(value, Tensor):
        tensor: Tensor[Any, Any, Any] = value if value.device() == device else value.to_device(device)
    elif isinstance(value, TensorData):
        tensor = Tensor.from_data(value, device)
    elif isinstance(value, np.ndarray):
        tensor = Tensor.from_numpy(value, device)
    else:
        expected = "a Tensor, TensorData or NumPy array"
        raise ValueError(f"record for parameter '{where}': expected {expected}, found {_kind(value)}")
    if tensor.kind is not Float:
        found = tensor.kind.__name__
        raise ValueError(f"record for parameter '{where}': expected a Float tensor, found kind {found}")
    return tensor


def _kind(value: object) -> str:
    return "None" if value is None else type(value).__name__
