"""Reading optimizer state back from records, with errors that name the offending entry."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import ferrum._ferrum as _ferrum
from ferrum._ferrum import Float, Tensor
from ferrum.record import Some

__all__ = [
    "entry",
    "optional_state",
    "optional_state_tensor",
    "optional_tensor",
    "section",
    "state_tensor",
    "step_count",
    "tensor",
]


def entry(record: Mapping[str, Any], path: str, name: str) -> Any:
    """``record[name]``, or ValueError naming ``path.name`` when missing."""
    if name not in record:
        raise ValueError(f"optimizer record '{path}' has no '{name}' (found keys {sorted(record)})")
    return record[name]


def section(record: Mapping[str, Any], path: str, name: str) -> Mapping[str, Any]:
    """The nested dict ``record[name]``."""
    value = entry(record, path, name)
    if not isinstance(value, Mapping):
        raise ValueError(f"optimizer record '{path}.{name}': expected a dict, found {type(value).__name__}")
    return value


def tensor(record: Mapping[str, Any], path: str, name: str) -> Tensor[Any, Any, Float]:
    """The Float tensor ``record[name]``."""
    value = entry(record, path, name)
    if not isinstance(value, Tensor) or value.kind is not Float:
        raise ValueError(f"optimizer record '{path}.{name}': expected a Float Tensor, found {value!r}")
    return value


def optional_tensor(record: Mapping[str, Any], path: str, name: str) -> Tensor[Any, Any, Float] | None:
    """The Float tensor ``record[name]``, which may be None."""
    if entry(record, path, name) is None:
        return None
    return tensor(record, path, name)


def state_tensor(record: Mapping[str, Any], path: str, name: str, field: str) -> _ferrum.StateTensor:
    """The Float tensor ``record[name][field]``, as the ``StateTensor`` the next step rewrites."""
    return _ferrum.StateTensor(tensor(section(record, path, name), f"{path}.{name}", field))


def optional_state_tensor(
    record: Mapping[str, Any], path: str, name: str, field: str
) -> _ferrum.StateTensor | None:
    """``state_tensor(...)``, or None when ``record[name]`` is None (Burn's ``Option`` state)."""
    if entry(record, path, name) is None:
        return None
    return state_tensor(record, path, name, field)


def optional_state(field: str, state: _ferrum.StateTensor | None) -> Some | None:
    """The record of Burn's optional state ``Option<{field: tensor}>``: ``Some({field: ...})`` or None."""
    return None if state is None else Some({field: state.tensor()})


def step_count(record: Mapping[str, Any], path: str, name: str) -> int:
    """The step counter ``record[name]``, an int >= 1."""
    value = entry(record, path, name)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"optimizer record '{path}.{name}': expected an int >= 1, found {value!r}")
    return value
