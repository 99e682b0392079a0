"""ferrum's record tree and the tree Burn's files hold.

Parameter ids are decimal text in ferrum and base32hex text in Burn's files;
bincode, which stores no names, needs maps, enums and options marked. Reading
checks every id and optimizer rank tag a file holds.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import ferrum._ferrum as _ferrum
from ferrum._ferrum import QTensor, Tensor
from ferrum.record.base import OptimizerRecord, Some, SomeConstant
from ferrum.record.error import RecordError
from ferrum.record.param_id import ParamId

__all__ = ["rank_problem"]


def _is_param(node: Mapping[str, Any]) -> bool:
    return set(node) == {"id", "param"} and isinstance(node["param"], (Tensor, QTensor))


def _is_optimizer_record(node: Mapping[str, Any]) -> bool:
    # Burn's optimizer records: {param id: {"V1": {"Rank<N>": state}}}, keyed by the id's text.
    if isinstance(node, OptimizerRecord):
        return True
    return bool(node) and all(
        isinstance(key, str) and isinstance(value, Mapping) and list(value) == ["V1"]
        for key, value in node.items()
    )


class _Map(dict[str, Any]):
    """Burn's ``HashMap`` (an optimizer record): bincode writes its length before the entries."""


class _Variant(dict[str, Any]):
    """One variant of a Rust enum, ``{name: value}``: bincode writes ``index`` before the value."""

    def __init__(self, name: str, index: int, value: Any) -> None:
        super().__init__({name: value})
        self.index = index


class _OneOf(dict[str, Any]):
    """A schema's alternative ``_Variant``s: reading picks the one whose index the file holds."""


class _SomeTensor(tuple[Any, ...]):
    """Rust's ``Some(tensor)`` of an ``Option<Tensor>``: bincode writes a 1 byte before the tensor."""


def _mark_optional_tensors(node: object, parent: str = "") -> Any:
    """A state with its ``Option<Tensor>`` fields marked for bincode.

    Burn's optimizer states hold one: RMSProp's ``centered.grad_avg`` (None
    unless centered). Other formats write ``Some(x)`` as ``x``, so only bincode
    needs to know; ``None`` is already an option.
    """
    if not isinstance(node, Mapping):
        return node
    marked = {
        name: _SomeTensor((value,))
        if (parent, name) == ("centered", "grad_avg") and isinstance(value, Tensor)
        else _mark_optional_tensors(value, name)
        for name, value in node.items()
    }
    return _same_kind(node, marked)


def _rank_variants(key: str, inner: object) -> Any:
    if not isinstance(inner, Mapping) or not inner:
        raise RecordError(f"optimizer record '{key}.V1': expected {{'Rank<N>': state}}, found {inner!r}")
    variants: dict[str, _Variant] = {}
    for name, state in inner.items():
        if not (isinstance(name, str) and name.startswith("Rank") and name[4:].isdigit()):
            raise RecordError(
                f"optimizer record '{key}.V1': bincode writes Burn's 'Rank<N>' variants, found {name!r}"
            )
        _check_bincode_state(f"{key}.V1.{name}", state)
        variants[name] = _Variant(name, int(name[4:]), _mark_optional_tensors(state))
    return next(iter(variants.values())) if len(variants) == 1 else _OneOf(variants)


def _check_bincode_state(path: str, node: object) -> None:
    # bincode holds no types: a Python float could be Rust's f32 or f64, so Burn could misread it.
    if isinstance(node, float):
        raise RecordError(
            f"optimizer record '{path}': bincode cannot write a float state field ({node!r}),"
            " its Rust type (f32 or f64) is unknown; save with NamedMpkFileRecorder or a JSON recorder"
        )
    if isinstance(node, (list, tuple, bytes, str)):
        raise RecordError(
            f"optimizer record '{path}': bincode writes optimizer states of tensors, ints, bools,"
            f" None and dicts, found {type(node).__name__}"
        )
    if isinstance(node, Mapping):
        for name, value in node.items():
            _check_bincode_state(f"{path}.{name}", value)


def _bincode_layout(node: Any) -> Any:
    """An optimizer record in Burn's bincode shape: ``HashMap<ParamId, AdaptorRecord>``.

    The map and its enums (``V1``, ``Rank<N>``) are marked for the bincode writer,
    which writes the map's length and each variant's index; other records pass through.
    """
    if not (isinstance(node, Mapping) and _is_optimizer_record(node)):
        return node
    return _Map({key: _Variant("V1", 0, _rank_variants(key, value["V1"])) for key, value in node.items()})


def _same_kind(node: Mapping[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    if isinstance(node, _Variant):
        ((name, value),) = out.items()
        return _Variant(name, node.index, value)
    return type(node)(out) if isinstance(node, (Some, OptimizerRecord)) else out


def _burn_id(value: object) -> object:
    """Burn's text of a parameter id: ferrum's decimal text, an int or a ParamId become base32hex.

    Text that is already Burn's (base32hex or a legacy UUID) stays; any other
    text is written as the id ``ParamId.from_str`` maps it to, so that the
    file loads back to the same id in ferrum and in Burn.
    """
    if isinstance(value, ParamId):
        return _ferrum.param_id_encode(value.value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 64:
        return _ferrum.param_id_encode(value)
    if not isinstance(value, str) or not value:
        return value
    if not value.isdigit():
        try:
            _ferrum.param_id_decode(value)
            return value
        except ValueError:
            pass
    return _ferrum.param_id_encode(ParamId.from_str(value).value)


def _ids_to_burn(node: Any, root: bool = True) -> Any:
    # ferrum shows a ParamId as its decimal value; Burn's files hold base32hex text.
    if isinstance(node, Mapping):
        if _is_param(node):
            return _same_kind(node, {"id": _burn_id(node["id"]), "param": node["param"]})
        # An optimizer record is a whole file's record, keyed by parameter id.
        optimizer = root and _is_optimizer_record(node)
        out: dict[Any, Any] = {}
        for key, value in node.items():
            out[_burn_id(key) if optimizer else key] = _ids_to_burn(value, False)
        return _same_kind(node, out)
    if isinstance(node, SomeConstant):
        return node
    if isinstance(node, tuple):
        return tuple(_ids_to_burn(item, False) for item in node)
    if isinstance(node, list):
        return [_ids_to_burn(item, False) for item in node]
    return node


def _join(path: str, name: object) -> str:
    return f"{path}.{name}" if path else str(name)


def _decoded_id(text: object, source: str, where: str) -> str:
    """ferrum's text of the id a file holds; a damaged id is a RecordError, never a fresh id."""
    expected = "a parameter id (13 base32hex characters, or a UUID in older files)"
    if not isinstance(text, str):
        found = "nothing" if text is None else f"{type(text).__name__} {text!r}"
        raise RecordError(f"{source}: {where}: expected {expected}, found {found}")
    try:
        return str(_ferrum.param_id_decode(text))
    except ValueError:
        raise RecordError(f"{source}: {where}: expected {expected}, found {text[:40]!r}") from None


def _tensor_paths(node: object, path: str) -> Iterator[tuple[str, Tensor[Any, Any, Any]]]:
    if isinstance(node, Tensor):
        yield path, node
    elif isinstance(node, Mapping):
        for key, value in node.items():
            yield from _tensor_paths(value, _join(path, key))
    elif isinstance(node, (list, tuple)):
        for i, value in enumerate(node):
            yield from _tensor_paths(value, _join(path, i))


def rank_problem(path: str, versioned: object) -> str | None:
    """What is wrong with Burn's ``{"Rank<N>": state}`` at ``path``, or None when it fits.

    The variant names the rank of the parameter, and every tensor of its state
    (moments, velocities, sums) has that rank: a tag that disagrees would load
    the state onto a parameter of another shape.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.record import rank_problem
        >>> state = {"momentum": {"velocity": Tensor.zeros((2, 3), NdArray.device())}}
        >>> rank_problem("7.V1", {"Rank2": state}) is None
        True
        >>> print(rank_problem("7.V1", {"Rank3": state}))
        7.V1.Rank3: the variant says rank 3, but 7.V1.Rank3.momentum.velocity has rank 2 (shape (2, 3))
    """
    if not isinstance(versioned, Mapping) or len(versioned) != 1:
        return f"{path}: expected {{'Rank<N>': state}}, found {versioned!r:.80}"
    variant, state = next(iter(versioned.items()))
    if not (isinstance(variant, str) and variant.startswith("Rank") and variant[4:].isdigit()):
        return f"{path}: expected a 'Rank<N>' variant, found {variant!r:.40}"
    rank, where = int(variant[4:]), f"{path}.{variant}"
    for at, tensor in _tensor_paths(state, where):
        if len(tensor.dims()) != rank:
            found = f"{at} has rank {len(tensor.dims())} (shape {tensor.dims()})"
            return f"{where}: the variant says rank {rank}, but {found}"
    return None


def _ids_from_burn(node: Any, source: str, path: str) -> Any:
    """The loaded tree with ferrum's ids, checking every id and optimizer rank tag against ``source``."""
    if isinstance(node, dict):
        if isinstance(node.get("param"), (Tensor, QTensor)):
            node["id"] = _decoded_id(node.get("id"), source, _join(path, "id"))
            return node
        if not path and _is_optimizer_record(node):
            loaded = OptimizerRecord()
            for key, value in node.items():
                where = _join(path, key)
                problem = rank_problem(f"{where}.V1", value["V1"])
                if problem is not None:
                    raise RecordError(f"{source}: optimizer record {problem}")
                loaded[_decoded_id(key, source, f"optimizer record key {where!r}")] = _ids_from_burn(
                    value, source, where
                )
            return loaded
        for key, value in node.items():
            if isinstance(value, _CONTAINERS):
                node[key] = _ids_from_burn(value, source, _join(path, key))
    elif isinstance(node, list):
        # Only containers can hold ids: a list of millions of numbers costs one pass.
        for i, item in enumerate(node):
            if isinstance(item, _CONTAINERS):
                node[i] = _ids_from_burn(item, source, _join(path, i))
    elif isinstance(node, tuple):
        return tuple(_ids_from_burn(item, source, _join(path, i)) for i, item in enumerate(node))
    return node


_CONTAINERS = (dict, list, tuple)


def _as_record(loaded: object, source: str) -> dict[str, Any]:
    if not isinstance(loaded, dict):
        raise RecordError(
            f"{source}: expected a module record (a map of fields), found {type(loaded).__name__}"
        )
    return _ids_from_burn(loaded, source, "")  # type: ignore[no-any-return]
