"""Reading an ONNX file into a checked graph: parse, validate, order the nodes, infer shapes.

Nothing from the file is executed: the protobuf is parsed by the ``onnx``
package, checked by its checker, then by ferrum (opset range, ops known,
every input produced, no cycle) before any tensor is built.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence, Set
from typing import Any

import numpy as np
import onnx
from google.protobuf.message import DecodeError

from ferrum.onnx.dtypes import compute_dtype
from ferrum.onnx.errors import OnnxError, OnnxFileError
from ferrum.onnx.external import resolve_external_data, tensor_array

__all__ = ["MIN_OPSET", "Graph", "ValueInfo", "parse_graph", "read_model"]

MIN_OPSET = 7
_DEFAULT_DOMAINS = ("", "ai.onnx")

Dim = int | str | None


@dataclasses.dataclass(frozen=True)
class ValueInfo:
    """A value's element type and shape as the graph (or shape inference) declares them."""

    name: str
    elem_type: int
    shape: tuple[Dim, ...] | None
    containers: tuple[str, ...] = ()
    """``()`` for a tensor; for a sequence or optional value its containers, outermost first
    (``("optional", "sequence")``), ``elem_type`` then being its tensors' and ``shape`` None."""

    def static_shape(self) -> tuple[int, ...] | None:
        """The shape when every dim is a known number."""
        if self.shape is None or any(not isinstance(d, int) for d in self.shape):
            return None
        return tuple(int(d) for d in self.shape)  # type: ignore[arg-type]


@dataclasses.dataclass(frozen=True)
class Graph:
    """A validated graph: nodes in a topological order, initializers as arrays."""

    name: str
    opset: int
    nodes: tuple[onnx.NodeProto, ...]
    inputs: tuple[ValueInfo, ...]
    outputs: tuple[ValueInfo, ...]
    initializers: dict[str, np.ndarray[Any, Any]]
    values: dict[str, ValueInfo]
    source: str


def read_model(
    source: str | os.PathLike[str] | bytes | onnx.ModelProto,
    base_dir: str | os.PathLike[str] | None = None,
) -> tuple[onnx.ModelProto, str]:
    """Parse an ONNX model from a path, bytes or a ``ModelProto``, with its external data read in.

    External tensor data is read from ``base_dir`` when given, else from the
    model file's own folder; a model given as bytes or a ``ModelProto`` with
    external data needs ``base_dir`` (see ``ferrum.onnx.external``). Errors
    name the file.
    """
    if isinstance(source, onnx.ModelProto):
        where = source.graph.name or "<model>"
        return resolve_external_data(source, base_dir, where, owned=False), where
    if isinstance(source, bytes):
        where, data = "<bytes>", source
    else:
        where = os.fspath(source)
        try:
            with open(where, "rb") as f:
                data = f.read()
        except OSError as exc:
            raise OnnxFileError(f"cannot read ONNX file {where!r}: {exc.strerror or exc}") from exc
        if base_dir is None:
            base_dir = os.path.dirname(os.path.abspath(where))
    if not data:
        raise OnnxFileError(f"{where}: empty file, expected an ONNX model")
    try:
        model = onnx.load_model_from_string(data)
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise OnnxFileError(
            f"{where}: not a readable ONNX model (truncated or corrupt protobuf: {exc})"
        ) from exc
    return resolve_external_data(model, base_dir, where, owned=True), where


def _opset(model: onnx.ModelProto, where: str) -> int:
    versions = {o.domain: o.version for o in model.opset_import}
    found = [versions[d] for d in _DEFAULT_DOMAINS if d in versions]
    newest = onnx.defs.onnx_opset_version()
    other_domains = ("ai.onnx.ml", "ai.onnx.preview", "ai.onnx.preview.training")
    if not found and any(d in versions for d in other_domains):
        # A model of ML or training ops only: no default-domain op runs, so no opset's semantics
        # matter; the newest stands in (the registry's `since` counts in the default domain's opset).
        return newest
    if not found:
        if model.ir_version >= 3 or model.opset_import:
            raise OnnxError(
                f"{where}: the model imports no ONNX opset (default domain); expected one in "
                f"{MIN_OPSET}..{newest}"
            )
        return 1
    opset = int(max(found))
    if not MIN_OPSET <= opset <= newest:
        raise OnnxError(f"{where}: ONNX opset {opset} is not supported: expected {MIN_OPSET}..{newest}")
    return opset


def _value_info(info: onnx.ValueInfoProto) -> ValueInfo:
    kind, containers = info.type, []
    # A sequence's or optional's element type is the tensor type inside it.
    while kind.HasField("sequence_type") or kind.HasField("optional_type"):
        outer = "sequence" if kind.HasField("sequence_type") else "optional"
        containers.append(outer)
        kind = kind.sequence_type.elem_type if outer == "sequence" else kind.optional_type.elem_type
    t = kind.tensor_type
    shape: tuple[Dim, ...] | None = None
    # A sequence's shape would be its elements' (which may differ): None, so no rank is read from it.
    if t.HasField("shape") and not containers:
        shape = tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in t.shape.dim)
    return ValueInfo(info.name, t.elem_type, shape, tuple(containers))


def _toposort(nodes: Sequence[onnx.NodeProto], known: set[str], where: str) -> list[onnx.NodeProto]:
    producer: dict[str, int] = {}
    for i, node in enumerate(nodes):
        for out in node.output:
            if out and out in producer:
                raise OnnxError(
                    f"{where}: value {out!r} is produced twice (nodes "
                    f"{_node_name(nodes[producer[out]], producer[out])} and {_node_name(node, i)})"
                )
            if out:
                producer[out] = i
    waiting = [0] * len(nodes)
    users: list[list[int]] = [[] for _ in nodes]
    for i, node in enumerate(nodes):
        # A control-flow body's reads of outer values are inputs of its node too: the node must
        # come after whatever produces them.
        for name in (*node.input, *sorted(_outer_reads(node) & producer.keys())):
            if not name or (name in known and name not in producer):
                continue
            if name not in producer:
                raise OnnxError(
                    f"{where}: node {_node_name(node, i)} ({node.op_type}) reads {name!r}, "
                    "which is no graph input, initializer or node output"
                )
            waiting[i] += 1
            users[producer[name]].append(i)
    ready = [i for i in range(len(nodes)) if waiting[i] == 0]
    order: list[int] = []
    while ready:
        i = ready.pop(0)
        order.append(i)
        for j in users[i]:
            waiting[j] -= 1
            if waiting[j] == 0:
                ready.append(j)
    if len(order) < len(nodes):
        stuck = [_node_name(nodes[i], i) for i in range(len(nodes)) if waiting[i] > 0]
        raise OnnxError(f"{where}: the graph has a cycle through nodes {', '.join(stuck[:8])}")
    return [nodes[i] for i in order]


def _outer_reads(node: onnx.NodeProto) -> set[str]:
    """The names a node's subgraphs (If/Loop/Scan bodies, nested ones included) read from outside."""
    reads: set[str] = set()
    stack = [g for a in node.attribute for g in ([a.g] if a.HasField("g") else []) + list(a.graphs)]
    while stack:  # a stack, not recursion: the nesting depth is the file's
        g = stack.pop()
        defined = {v.name for v in g.input} | {t.name for t in g.initializer}
        defined |= {t.values.name for t in g.sparse_initializer}
        defined |= {o for n in g.node for o in n.output}
        used = {name for n in g.node for name in n.input if name} | {o.name for o in g.output}
        for n in g.node:
            for a in n.attribute:
                stack.extend(([a.g] if a.HasField("g") else []) + list(a.graphs))
        # A nested body's outer reads surface through the node holding it, read here as plain names.
        reads |= used - defined
    return reads


def _node_name(node: onnx.NodeProto, index: int) -> str:
    return repr(node.name) if node.name else f"#{index}"


def _initializers(graph: onnx.GraphProto, where: str) -> dict[str, np.ndarray[Any, Any]]:
    found: dict[str, np.ndarray[Any, Any]] = {}
    for tensor in graph.initializer:
        try:
            found[tensor.name] = compute_dtype(tensor_array(tensor, where))
        except (ValueError, TypeError) as exc:
            raise OnnxError(f"{where}: initializer {tensor.name!r} cannot be read: {exc}") from exc
    return found


def parse_graph(model: onnx.ModelProto, where: str) -> Graph:
    """Validate ``model`` and return its graph in topological order, with inferred shapes."""
    opset = _opset(model, where)
    graph = model.graph
    initializers = _initializers(graph, where)
    inputs = tuple(_value_info(v) for v in graph.input if v.name not in initializers)
    nodes = _ordered(graph, set(initializers) | {v.name for v in inputs}, where, "graph output")
    values = _infer(model, where)
    for t in graph.initializer:  # their declared types, which shape inference lists only for inputs
        values.setdefault(t.name, ValueInfo(t.name, t.data_type, tuple(int(d) for d in t.dims)))
    for v in (*inputs, *(_value_info(o) for o in graph.output)):
        values.setdefault(v.name, v)
    return _graph(graph, opset, nodes, inputs, initializers, values, where)


def _ordered(g: onnx.GraphProto, known: set[str], where: str, what: str) -> list[onnx.NodeProto]:
    """``g``'s nodes in topological order, given the ``known`` values; ``OnnxError`` for an output
    (named ``what`` in the message) that no node produces."""
    nodes = _toposort(list(g.node), known, where)
    produced = {o for n in nodes for o in n.output}
    for out in g.output:
        if out.name not in known and out.name not in produced:
            raise OnnxError(f"{where}: {what} {out.name!r} is produced by no node")
    return nodes


def _graph(
    g: onnx.GraphProto,
    opset: int,
    nodes: list[onnx.NodeProto],
    inputs: tuple[ValueInfo, ...],
    initializers: dict[str, np.ndarray[Any, Any]],
    values: dict[str, ValueInfo],
    where: str,
) -> Graph:
    return Graph(
        name=g.name,
        opset=opset,
        nodes=tuple(nodes),
        inputs=inputs,
        outputs=tuple(_value_info(o) for o in g.output),
        initializers=initializers,
        values=values,
        source=where,
    )


def _infer(model: onnx.ModelProto, where: str) -> dict[str, ValueInfo]:
    """Types and shapes of intermediate values, from ONNX shape inference (best effort)."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
    except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError, RuntimeError) as exc:
        raise OnnxError(f"{where}: ONNX shape inference rejects the model: {exc}") from exc
    g = inferred.graph
    return {v.name: _value_info(v) for v in (*g.value_info, *g.input, *g.output)}


def parse_subgraph(g: onnx.GraphProto, parent: Graph, visible: Set[str], where: str) -> Graph:
    """A control-flow body as a ``Graph``: its inputs, initializers, ordered nodes; outer values visible."""
    initializers = _initializers(g, where)
    inputs = tuple(_value_info(v) for v in g.input)
    nodes = _ordered(g, set(initializers) | {v.name for v in inputs} | visible, where, "output")
    values = dict(parent.values)
    values.update({v.name: _value_info(v) for v in (*g.value_info, *g.input, *g.output)})
    return _graph(g, parent.opset, nodes, inputs, initializers, values, where)
