"""A translated graph: the ``Program`` that ``translate`` makes, ``OnnxModel`` runs and ``codegen`` prints.

``Step`` is one node as a ferrum call; ``Subgraph`` a control-flow body (Loop,
Scan, If) that ops receive and run through ``ferrum.onnx.execute``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from ferrum.module import Module
from ferrum.onnx.graph import ValueInfo

__all__ = ["Program", "Step", "Subgraph"]


@dataclasses.dataclass(frozen=True)
class Step:
    """One node as a ferrum call: ``outputs = layer(*inputs)`` or ``outputs = fn(*inputs, **kwargs)``."""

    node: str
    op_type: str
    fn: Callable[..., Any]
    inputs: tuple[str | None, ...]
    kwargs: dict[str, Any]
    tensor_kwargs: dict[str, str]
    """Static inputs not known at load time: keyword -> value name, read at run time."""
    outputs: tuple[str, ...]
    layer: str | None = None
    device: bool = False
    """Whether ``fn`` takes the run's device (ops that make tensors from nothing)."""
    free: tuple[str, ...] = ()
    """Values no later step reads: dropped after this step to bound memory."""
    captures: tuple[str, ...] = ()
    """Outer values the node's subgraphs read, passed as ``captured={name: tensor}``."""


@dataclasses.dataclass
class Program:
    """A translated graph (see the module docstring)."""

    name: str
    opset: int
    source: str
    inputs: tuple[ValueInfo, ...]
    outputs: tuple[ValueInfo, ...]
    steps: list[Step]
    params: dict[str, np.ndarray[Any, Any]]
    """Float initializers read by steps: trainable parameters, by field name."""
    buffers: dict[str, np.ndarray[Any, Any]]
    """Other float constants read by steps (folded values, Constant nodes): saved, not trained."""
    constants: dict[str, np.ndarray[Any, Any]]
    """Int and Bool constants read by steps, by value name."""
    layers: dict[str, Module[Any]]
    fields: dict[str, str]
    """Value name -> the param or buffer field holding it."""
    output_constants: dict[str, np.ndarray[Any, Any]]
    """Graph outputs that are constants (no step computes them)."""
    strings: tuple[str, ...] = ()
    """The values of ONNX type ``tensor(string)`` (NumPy arrays of ``str`` at run time, never ferrum
    tensors), sorted: as declared or inferred, and the string constants."""


@dataclasses.dataclass(frozen=True)
class Subgraph:
    """A control-flow body (Loop, Scan, If): its translated program and the outer values it reads."""

    program: Program
    captures: tuple[str, ...]
