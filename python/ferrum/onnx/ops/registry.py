"""The op table: which ferrum function runs each ONNX op, and how its inputs and attributes map.

Each op family module registers its ops with ``@op(...)``. A registration says
which inputs are positional tensors and which are keyword arguments (the
"static" inputs such as Reshape's shape: a literal when the graph makes them
constant, a tensor read at run time otherwise), how attribute names map to
keyword names (snake_case by default), and optionally a layer factory that
turns the node into a ferrum layer (Conv2d, Linear, BatchNorm, ...) when its
weights are constants. An op outside the default ONNX domain names its
``domain`` (``ai.onnx.ml``, ``ai.onnx.preview``, ``ai.onnx.preview.training``); ``DOMAINS`` lists
those ferrum knows.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import numpy as np

from ferrum.module import Module

__all__ = ["DOMAINS", "LayerPlan", "NodeInfo", "OpSpec", "define", "lookup", "op", "registered_ops"]

DOMAINS = ("", "ai.onnx.ml", "ai.onnx.preview", "ai.onnx.preview.training")
"""The op domains ferrum registers ops in: ONNX's default one (``""``, also spelled ``ai.onnx``) and these."""


@dataclasses.dataclass(frozen=True)
class NodeInfo:
    """What a layer factory knows about a node at load time."""

    name: str
    op_type: str
    opset: int
    kwargs: Mapping[str, Any]
    """The node's attributes as keyword arguments (snake_case), with constant static inputs."""
    constants: tuple[np.ndarray[Any, Any] | None, ...]
    """Each input's constant value, or None when it is computed at run time (or absent)."""
    present: tuple[bool, ...]
    """Whether each input is given (ONNX marks an omitted optional input with an empty name)."""
    ranks: tuple[int | None, ...]
    """Each input's rank when shape inference knows it."""


@dataclasses.dataclass(frozen=True)
class LayerPlan:
    """A node run by a ferrum layer: ``layer.forward(*inputs[i] for i in tensor_inputs)``."""

    layer: Module[Any]
    tensor_inputs: tuple[int, ...] = (0,)


Fn = TypeVar("Fn", bound=Callable[..., Any])

LayerFactory = Callable[[NodeInfo, Any], LayerPlan | None]


@dataclasses.dataclass(frozen=True)
class OpSpec:
    """How one ONNX op runs in ferrum (see the module docstring)."""

    name: str
    fn: Callable[..., Any]
    static: tuple[str | None, ...] = ()
    attrs: Mapping[str, str] = dataclasses.field(default_factory=dict)
    layer: LayerFactory | None = None
    since: int = 1
    deterministic: bool = True
    domain: str = ""

    def keyword(self, attribute: str) -> str:
        """The keyword argument an ONNX attribute is passed as."""
        return self.attrs.get(attribute) or _snake(attribute)

    def accepts(self, keyword: str) -> bool:
        """Whether ``fn`` takes the keyword argument ``keyword`` (by name, or through ``**kwargs``)."""
        params = inspect.signature(self.fn).parameters
        return keyword in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


_TABLE: dict[str, list[OpSpec]] = {}


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def op(
    *names: str,
    static: tuple[str | None, ...] = (),
    attrs: Mapping[str, str] | None = None,
    layer: LayerFactory | None = None,
    since: int = 1,
    deterministic: bool = True,
    domain: str = "",
) -> Callable[[Fn], Fn]:
    """Register the decorated function as the implementation of the ONNX ops ``names`` (its type is kept).

    ``domain`` is the ops' domain (one of ``DOMAINS``); ``since`` counts in the default domain's opset.
    """
    if domain not in DOMAINS:
        raise ValueError(f"op domain must be one of {DOMAINS}, found {domain!r}")

    def register(fn: Fn) -> Fn:
        for name in names:
            spec = OpSpec(name, fn, static, dict(attrs or {}), layer, since, deterministic, domain)
            _TABLE.setdefault(name, []).append(spec)
            _TABLE[name].sort(key=lambda s: s.since)
        return fn

    return register


def define(onnx_name: str, name: str, fn: Fn, doc: str, module: str, **registration: Any) -> Fn:
    """Register ``fn`` (made from a table: a lambda, or a closure of a family's factory) as the ONNX op
    ``onnx_name`` and name it the module-level function ``module.name`` with docstring ``doc``.

    Generated code calls an op as ``ops.<family>.<__name__>``, so ``name`` must be the name the
    function is bound to in ``module``; ``registration`` takes ``op``'s keywords.
    """
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = module
    fn.__doc__ = doc
    return op(onnx_name, **registration)(fn)


def lookup(name: str, opset: int, domain: str | None = None) -> OpSpec | None:
    """The registration of ``name`` that applies at ``opset`` (the latest one since at or before it).

    With ``domain`` (``"ai.onnx"`` is the default domain ``""``), only that domain's ops; without,
    any domain's (no op name is registered in two domains).
    """
    if domain == "ai.onnx":
        domain = ""
    found = None
    for spec in _TABLE.get(name, []):
        if spec.since <= opset and (domain is None or spec.domain == domain):
            found = spec
    return found


def registered_ops() -> list[str]:
    """The names of every supported ONNX op, sorted."""
    return sorted(_TABLE)
