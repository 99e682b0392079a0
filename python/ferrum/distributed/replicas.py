"""Replicas that stay alike: the ranks' models and settings compared at launch, their weights each epoch.

Data-parallel training is correct only while every rank holds the same
model and steps it the same way. A rank started with another learning rate
or a model of another shape trains to the end unnoticed (its gradients are
averaged all the same), so the ranks compare a digest of each setting before
the first step, and the parameters' sums after each epoch.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
from typing import Any

import numpy as np

from ferrum._ferrum import Tensor
from ferrum.distributed.collectives import Collectives
from ferrum.distributed.errors import ReplicaDriftError, ReplicaMismatchError
from ferrum.module import Module, tree
from ferrum.module.param import Param

__all__ = ["check_replicas", "describe", "require_same", "structure"]

# A description longer than this is cut in the error message (the digest covers all of it).
_SHOWN = 600
_DEPTH = 6


def describe(value: object, depth: int = 0) -> str:
    """A text that two ranks produce alike exactly when ``value``'s settings are alike.

    Numbers, strings, containers, dataclasses (configs) and plain objects'
    fields, recursively; tensors by shape and dtype, never by address (a
    default ``repr`` holds one, which differs across processes).

    Example:
        >>> from ferrum.optim import SgdConfig
        >>> describe(SgdConfig(weight_decay=None).init())[:24]
        'Sgd(_grad_clipping=None,'
    """
    if depth > _DEPTH:
        return "..."
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes, enum.Enum)):
        return repr(value)
    if isinstance(value, Tensor):
        return f"Tensor({value.dims()}, {value.dtype})"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(describe(item, depth + 1) for item in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    if isinstance(value, dict):
        items = sorted((describe(key, depth + 1), describe(item, depth + 1)) for key, item in value.items())
        return "{" + ", ".join(f"{key}: {item}" for key, item in items) + "}"
    kind = type(value).__qualname__
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = [(field.name, getattr(value, field.name)) for field in dataclasses.fields(value)]
    elif hasattr(value, "__dict__") and not callable(value):
        fields = sorted(vars(value).items())
    else:
        return kind  # functions, classes, generators, native objects: their kind is what can be compared
    return kind + "(" + ", ".join(f"{name}={describe(item, depth + 1)}" for name, item in fields) + ")"


def structure(module: Module[Any]) -> str:
    """The module's type and every parameter's and running state's path, shape and dtype, one per line."""
    lines = [type(module).__qualname__]
    for path, leaf in tree.leaves(module):
        value = leaf.val() if isinstance(leaf, Param) else leaf.value()
        lines.append(f"{path} {value.dims()} {value.dtype}")
    return "\n".join(lines)


def require_same(comm: Collectives, what: str, description: str) -> None:
    """``Communicator.require_same``: every rank's ``description`` equal to rank 0's, or an error on each."""
    digest = int.from_bytes(hashlib.blake2b(description.encode(), digest_size=8).digest(), "little") >> 1
    digests = [row[0] for row in comm.all_gather_ints([digest], f"require_same({what})")]
    differing = [rank for rank, other in enumerate(digests) if other != digests[0]]
    if not differing:
        return
    # Every rank takes this branch (they all hold the digests): rank 0's text, for the message of
    # the ranks that differ from it.
    root = comm.broadcast_bytes(description.encode() if comm.rank == 0 else None, 0).decode()
    if comm.rank not in differing:
        raise ReplicaMismatchError(what, differing)
    raise ReplicaMismatchError(what, differing, *_first_difference(root, description))


def _first_difference(root: str, mine: str) -> tuple[str, str]:
    """Both texts, or for texts of several lines (a model's structure) the first line that differs."""
    root_lines, my_lines = root.splitlines(), mine.splitlines()
    if len(root_lines) <= 1 and len(my_lines) <= 1:
        return _cut(root), _cut(mine)
    pairs = zip(root_lines, my_lines, strict=False)
    line = next((i for i, (a, b) in enumerate(pairs) if a != b), min(len(root_lines), len(my_lines)))

    def at(lines: list[str]) -> str:
        if line >= len(lines):
            return f"{len(lines)} lines"
        return f"{lines[line]!r} (line {line + 1} of {len(lines)})"

    return _cut(at(root_lines)), _cut(at(my_lines))


def _cut(text: str) -> str:
    return text if len(text) <= _SHOWN else text[:_SHOWN] + f"... ({len(text)} characters)"


def check_replicas(comm: Collectives, module: Module[Any], when: str, tolerance: float) -> None:
    """``Communicator.check_replicas``: the parameters' sums compared across ranks."""
    if not tolerance >= 0:
        raise ValueError(f"check_replicas tolerance must be >= 0, found {tolerance!r}")
    named = module.named_parameters()
    sums = np.empty(2 * len(named), np.float64)
    for i, (_, param) in enumerate(named):
        tensor = param.val()
        values = (tensor.inner() if tensor.device().is_autodiff else tensor).to_numpy()
        sums[2 * i] = np.sum(values, dtype=np.float64)
        sums[2 * i + 1] = np.sum(np.abs(values), dtype=np.float64)
    rows = comm.all_gather_array(sums, "check_replicas")
    # Both sums of a parameter, against rank 0's, relative to its magnitude (and at least one
    # element's worth, so that an all-zero parameter is compared in absolute terms).
    scale = np.maximum(rows[:, 1::2].max(axis=0), 1.0)
    gap = np.abs(rows - rows[0]).reshape(comm.size, len(named), 2).max(axis=2) / scale
    if not np.all(gap <= tolerance):  # NaN counts as drift
        gap = np.where(np.isnan(gap), np.inf, gap)
        worst = int(np.argmax(gap.max(axis=0)))
        ranks = [rank for rank in range(comm.size) if gap[rank, worst] > tolerance]
        raise ReplicaDriftError(named[worst][0], ranks, float(gap[:, worst].max()), when)
