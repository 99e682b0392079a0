"""One translation of a graph into ferrum calls, shared by the run-time model and the code generator.

``translate`` walks the validated graph once, in topological order. Each node
becomes a ``Step``: a ferrum layer (a Conv2d, Linear, BatchNorm, ... built
from the node's constant weights) or an op function of ``ferrum.onnx.ops``
with literal keyword arguments (the node's attributes and its constant
"static" inputs). Nodes whose inputs are all constants are folded: run once
here, their outputs become constants. ``OnnxModel`` interprets the steps;
``ferrum.onnx.codegen`` prints them as Python source.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from typing import Any

import numpy as np
import onnx

from ferrum._ferrum import Device, Tensor
from ferrum.backend import NdArray
from ferrum.module import Module
from ferrum.onnx.dtypes import compute_dtype
from ferrum.onnx.errors import OnnxError, UnsupportedOpError
from ferrum.onnx.external import tensor_array
from ferrum.onnx.graph import Graph, parse_subgraph
from ferrum.onnx.ops import NodeInfo, OpSpec, lookup
from ferrum.onnx.program import Program, Step, Subgraph
from ferrum.onnx.values import constant_value, is_strings

__all__ = ["Program", "Step", "field_name", "translate", "unique"]


def field_name(name: str, taken: set[str]) -> str:
    """A Python identifier for ``name``, unique among ``taken`` (which it joins)."""
    base = re.sub(r"\W+", "_", name).strip("_").lower() or "value"
    if base[0].isdigit() or base in _RESERVED:
        base = f"v_{base}"
    return unique(base, taken)


def unique(base: str, taken: set[str]) -> str:
    """``base``, or ``base_2``, ``base_3``, ...: the first not in ``taken`` (which it joins)."""
    candidate, n = base, 1
    while candidate in taken:
        n += 1
        candidate = f"{base}_{n}"
    taken.add(candidate)
    return candidate


_RESERVED = {
    "self",
    "forward",
    "program",
    "and",
    "or",
    "not",
    "in",
    "is",
    "if",
    "else",
    "for",
    "while",
    "def",
    "class",
    "return",
    "import",
    "from",
    "as",
    "with",
    "lambda",
    "pass",
    "none",
    "true",
    "false",
    "valid",
    "map",
    "visit",
    "fork",
    "to_device",
    "num_params",
    "devices",
    "into_record",
    "load_record",
    "save_file",
    "load_file",
    "no_grad",
    "parameters",
    "named_parameters",
    "yield",
    "global",
    "del",
    "try",
    "raise",
}


def _f32(value: float) -> float:
    """An f32 attribute as the shortest decimal reading back as the same f32 (1e-05, not 9.99999974e-06)."""
    return float(str(np.float32(value)))


def attribute_value(attr: onnx.AttributeProto, where: str) -> Any:
    """An attribute as a Python literal (tuples for lists, NumPy arrays for tensors)."""
    kind = attr.type
    A = onnx.AttributeProto
    if kind == A.INT:
        return int(attr.i)
    if kind == A.FLOAT:
        return _f32(attr.f)
    if kind == A.STRING:
        return attr.s.decode("utf-8", "replace")
    if kind == A.INTS:
        return tuple(int(v) for v in attr.ints)
    if kind == A.FLOATS:
        return tuple(_f32(v) for v in attr.floats)
    if kind == A.STRINGS:
        return tuple(s.decode("utf-8", "replace") for s in attr.strings)
    if kind == A.TENSOR:
        return compute_dtype(tensor_array(attr.t, where))
    if kind == A.TYPE_PROTO:
        # Optional's type: what an empty optional would hold, as text (an empty optional is None at run time).
        return " ".join(str(attr.tp).split())
    raise UnsupportedOpError(
        f"{where}: attribute {attr.name!r} of type {A.AttributeType.Name(kind)} is not supported"
    )


def check_supported(graph: Graph) -> None:
    """Raise ``UnsupportedOpError`` naming every unsupported op, with its first node and the opset."""
    missing: dict[str, str] = {}
    for i, node in enumerate(graph.nodes):
        if lookup(node.op_type, graph.opset, node.domain) is None:
            label = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}::{node.op_type}"
            missing.setdefault(label, node.name or f"#{i}")
    if missing:
        listed = "; ".join(f"{op} (node {name!r})" for op, name in missing.items())
        raise UnsupportedOpError(f"{graph.source}: unsupported ONNX op(s) at opset {graph.opset}: {listed}")


class _Translator:
    def __init__(
        self,
        graph: Graph,
        device: Device[Any],
        outer: dict[str, np.ndarray[Any, Any]] | None = None,
        scope: frozenset[str] = frozenset(),
    ) -> None:
        self.graph = graph
        # the values of enclosing graphs defined before the node that holds this body
        self.scope = scope
        # a subgraph sees its outer scope's constants; it holds no layers or parameters of its own
        self.subgraph_of = outer
        self.device = device
        self.fold_device = NdArray.device()
        self.consts: dict[str, np.ndarray[Any, Any]] = {**(outer or {}), **graph.initializers}
        self.initializer_names = set(graph.initializers)
        self.steps: list[Step] = []
        self.layers: dict[str, Module[Any]] = {}
        self.taken: set[str] = set()

    def where(self, node: onnx.NodeProto, index: int) -> str:
        name = node.name or f"#{index}"
        return f"{self.graph.source}: node {name!r} ({node.op_type}, opset {self.graph.opset})"

    def run(self) -> Program:
        check_supported(self.graph)
        for index, node in enumerate(self.graph.nodes):
            self.node(node, index)
        return self.finish()

    def node(self, node: onnx.NodeProto, index: int) -> None:
        where = self.where(node, index)
        spec = lookup(node.op_type, self.graph.opset)
        assert spec is not None  # check_supported ran
        kwargs: dict[str, Any] = {}
        captures: set[str] = set()
        for attr in node.attribute:
            key = spec.keyword(attr.name)
            if not spec.accepts(key):
                raise UnsupportedOpError(f"{where}: attribute {attr.name!r} is not supported")
            if attr.type == onnx.AttributeProto.GRAPH:
                body = self.subgraph(attr.g, where)
                captures.update(body.captures)
                kwargs[key] = body
            else:
                kwargs[key] = attribute_value(attr, where)
        params = _params(spec)
        if "opset" in params and "opset" not in kwargs:
            kwargs["opset"] = self.graph.opset
        if "outputs" in params:
            kwargs["outputs"] = len(node.output)
        if "input_types" in params:
            # ferrum computes int8..uint16 in i64 and float8 in f32: ops whose result depends on an
            # input's declared ONNX type (QuantizeLinear's zero point, BitCast) are told it (0: unknown).
            kwargs["input_types"] = tuple(self.elem_type(n) for n in node.input)
        names = list(node.input)
        positional: list[str | None] = []
        tensor_kwargs: dict[str, str] = {}
        for i, name in enumerate(names):
            key = spec.static[i] if i < len(spec.static) else None
            if key is None:
                positional.append(name or None)
            elif name and name in self.consts:
                kwargs[key] = _literal(self.consts[name])
            elif name:
                tensor_kwargs[key] = name
        outputs = tuple(node.output)
        if self.fold(spec, node, positional, kwargs, tensor_kwargs, outputs, where):
            return
        plan = None
        if spec.layer is not None and self.subgraph_of is None:
            info = NodeInfo(
                name=node.name,
                op_type=node.op_type,
                opset=self.graph.opset,
                kwargs=kwargs,
                constants=tuple(self.consts.get(n) if n else None for n in names),
                present=tuple(bool(n) for n in names),
                ranks=tuple(self.rank(n) for n in names),
            )
            plan = spec.layer(info, self.device)
        if plan is not None:
            field = field_name(node.name or f"{node.op_type}_{index}", self.taken)
            self.layers[field] = plan.layer
            step_inputs = tuple(names[i] or None for i in plan.tensor_inputs)
            self.steps.append(Step(node.name, node.op_type, spec.fn, step_inputs, {}, {}, outputs, field))
            return
        self.steps.append(
            Step(
                node.name,
                node.op_type,
                spec.fn,
                tuple(positional),
                kwargs,
                tensor_kwargs,
                outputs,
                device="device" in params,
                captures=tuple(sorted(captures)),
            )
        )

    def subgraph(self, g: onnx.GraphProto, where: str) -> Subgraph:
        """Translate a control-flow body; the outer values it reads become its captures."""
        # Only values defined before this node: a body reading the node's own output, or a later
        # node's, would otherwise pass here and fail at run time on a value never computed.
        visible = self.scope | set(self.consts) | {o for s in self.steps for o in s.outputs}
        visible |= {v.name for v in self.graph.inputs}
        graph = parse_subgraph(g, self.graph, visible, f"{where} body {g.name!r}")
        inner = _Translator(graph, self.device, self.consts, frozenset(visible))
        program = inner.run()
        own = {v.name for v in graph.inputs} | set(graph.initializers)
        produced = {o for s in program.steps for o in s.outputs}
        reads = {n for s in program.steps for n in (*s.inputs, *s.tensor_kwargs.values(), *s.captures) if n}
        reads |= {o.name for o in graph.outputs}
        captures = sorted(
            n
            for n in reads - own - produced
            if n not in program.constants and n not in program.output_constants
        )
        return Subgraph(program, tuple(captures))

    def elem_type(self, name: str) -> int:
        info = self.graph.values.get(name) if name else None
        return info.elem_type if info is not None else 0

    def rank(self, name: str) -> int | None:
        info = self.graph.values.get(name)
        if info is not None and info.shape is not None:
            return len(info.shape)
        if name in self.consts:
            return self.consts[name].ndim
        return None

    def fold(
        self,
        spec: OpSpec,
        node: onnx.NodeProto,
        positional: list[str | None],
        kwargs: dict[str, Any],
        tensor_kwargs: dict[str, str],
        outputs: tuple[str, ...],
        where: str,
    ) -> bool:
        """Run the node now if its inputs are all known; its outputs become constants."""
        if not spec.deterministic or tensor_kwargs:
            return False
        if node.op_type == "Constant" and is_strings(kwargs.get("value")) and outputs[0]:
            # a string constant stays a NumPy array of str: ferrum tensors hold numbers only
            self.consts[outputs[0]] = kwargs["value"]
            return True
        if node.op_type in ("Shape", "Size") and positional and positional[0] is not None:
            info = self.graph.values.get(positional[0])
            shape = info.static_shape() if info is not None else None
            if shape is None and positional[0] in self.consts:
                shape = self.consts[positional[0]].shape
            if shape is None:
                return False
            fake = Tensor.from_numpy(np.zeros(shape, dtype=np.float32), self.fold_device)
            results = spec.fn(fake, **kwargs)
        elif all(name is None or name in self.consts for name in positional):
            args = [
                None if n is None else constant_value(self.consts[n], self.fold_device) for n in positional
            ]
            extra = {"device": self.fold_device} if "device" in _params(spec) else {}
            try:
                results = spec.fn(*args, **kwargs, **extra)
            except (ValueError, TypeError, IndexError) as exc:
                raise OnnxError(f"{where}: {exc}") from exc
        else:
            return False
        if not isinstance(results, tuple):
            results = (results,)
        named = [(name, value) for name, value in zip(outputs, results, strict=False) if name]
        if not all(isinstance(value, Tensor) or is_strings(value) for _, value in named):
            return False  # a sequence or optional (SequenceConstruct of constants...): made at run time
        for name, value in named:
            self.consts[name] = value if is_strings(value) else np.asarray(value.to_numpy())
        return True

    def finish(self) -> Program:
        graph = self.graph
        read: dict[str, int] = {}
        for i, step in enumerate(self.steps):
            for name in (*step.inputs, *step.tensor_kwargs.values(), *step.captures):
                if name:
                    read[name] = i
        out_names = {o.name for o in graph.outputs}
        params: dict[str, np.ndarray[Any, Any]] = {}
        buffers: dict[str, np.ndarray[Any, Any]] = {}
        constants: dict[str, np.ndarray[Any, Any]] = {}
        fields: dict[str, str] = {}
        for name in read:
            if name not in self.consts:
                continue
            value = self.consts[name]
            if value.dtype.kind == "f" and self.subgraph_of is None:
                field = field_name(name, self.taken)
                fields[name] = field
                (params if name in self.initializer_names else buffers)[field] = value
            else:
                constants[name] = value
        last_read = {name: i for name, i in read.items() if name not in out_names}
        steps = []
        for i, step in enumerate(self.steps):
            free = tuple(
                sorted(
                    {
                        n
                        for n in (*step.inputs, *step.tensor_kwargs.values(), *step.captures)
                        if n and last_read.get(n) == i
                    }
                )
            )
            steps.append(dataclasses.replace(step, free=free))
        output_constants = {o.name: self.consts[o.name] for o in graph.outputs if o.name in self.consts}
        live = {*read, *(o for s in self.steps for o in s.outputs)}
        live |= {v.name for v in (*graph.inputs, *graph.outputs)}
        typed = {n for n, info in graph.values.items() if info.elem_type == onnx.TensorProto.STRING}
        strings = live & typed
        strings |= {name for name in (*constants, *output_constants) if is_strings(self.consts[name])}
        return Program(
            name=graph.name,
            opset=graph.opset,
            source=graph.source,
            inputs=graph.inputs,
            outputs=graph.outputs,
            steps=steps,
            params=params,
            buffers=buffers,
            constants=constants,
            layers=self.layers,
            fields=fields,
            output_constants=output_constants,
            strings=tuple(sorted(strings)),
        )


def _params(spec: OpSpec) -> set[str]:
    return set(inspect.signature(spec.fn).parameters)


def _literal(value: np.ndarray[Any, Any]) -> Any:
    """A constant static input as a keyword literal: a tuple of ints, a number, or the array itself."""
    if value.dtype.kind in "iu" and value.ndim <= 1:
        return tuple(int(v) for v in value.reshape(-1)) if value.ndim == 1 else int(value)
    if value.ndim == 0 and value.dtype.kind == "f":
        return float(value)
    if value.ndim == 0 and value.dtype.kind == "b":
        return bool(value)
    return value


def translate(graph: Graph, device: Device[Any]) -> Program:
    """Translate ``graph`` into steps; layers and parameters are built on ``device``."""
    return _Translator(graph, device).run()
