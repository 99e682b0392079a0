"""ONNX graphs built from nodes and NumPy inputs, run by ferrum and by ONNX's reference evaluator.

The op tests (tests/onnx/test_ops_*.py) build a graph around the nodes they
test, with value infos from their inputs' dtypes and shapes, and compare
ferrum's outputs with ``onnx.reference.ReferenceEvaluator``'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from ferrum import Tensor
from ferrum.backend import NdArray
from ferrum.onnx import load
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

#: The element type of a graph input of each NumPy dtype.
ONNX_TYPES = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.float64): TensorProto.DOUBLE,
    np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.bool_): TensorProto.BOOL,
}


def graph_model(
    nodes: Sequence[onnx.NodeProto],
    inputs: Mapping[str, np.ndarray],
    outputs: Sequence[str],
    opsets: Mapping[str, int],
    initializers: Mapping[str, np.ndarray] | None = None,
) -> onnx.ModelProto:
    """A model of ``nodes`` with graph inputs typed after ``inputs``, untyped ``outputs``,
    ``initializers`` as constants, and ``opsets`` (``{domain: version}``, ``""`` for ai.onnx)."""
    graph = helper.make_graph(
        list(nodes),
        "g",
        [helper.make_tensor_value_info(k, ONNX_TYPES[v.dtype], list(v.shape)) for k, v in inputs.items()],
        [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in outputs],
        [numpy_helper.from_array(v, k) for k, v in (initializers or {}).items()],
    )
    imports = [helper.make_opsetid(domain, version) for domain, version in opsets.items()]
    return helper.make_model(graph, opset_imports=imports)


def typed_model(
    nodes: Sequence[onnx.NodeProto],
    inputs: Mapping[str, np.ndarray],
    outputs: Sequence[tuple[str, int]],
    initializers: Mapping[str, np.ndarray] | None = None,
    opset: int = 21,
) -> onnx.ModelProto:
    """A model of ``nodes`` at ai.onnx ``opset`` whose ``outputs`` are ``(name, TensorProto type)``.

    The quantization tests declare each output's element type (int8, float8, ...), which the
    dtypes ``graph_model`` knows do not cover; inputs take any dtype ONNX maps from NumPy."""
    graph = helper.make_graph(
        list(nodes),
        "g",
        [
            helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
            for k, v in inputs.items()
        ],
        [helper.make_tensor_value_info(n, t, None) for n, t in outputs],
        [numpy_helper.from_array(v, k) for k, v in (initializers or {}).items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def node_outputs(node: onnx.NodeProto) -> list[str]:
    """``node``'s outputs, without the empty names of the optional ones it leaves out."""
    return [o for o in node.output if o]


def ferrum_outputs(model: onnx.ModelProto, inputs: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """``model`` loaded by ferrum on NdArray and run on ``inputs``: its outputs as NumPy arrays."""
    device = NdArray.device()
    out = load(model, device).forward(*(Tensor.from_numpy(v, device) for v in inputs.values()))
    return [np.asarray(o.to_numpy()) for o in (out if isinstance(out, tuple) else (out,))]


def reference_outputs(model: onnx.ModelProto, inputs: Mapping[str, np.ndarray]) -> list[Any]:
    """``model`` run by ONNX's reference evaluator on ``inputs``."""
    return list(ReferenceEvaluator(model).run(None, dict(inputs)))


def check_against_reference(model: onnx.ModelProto, inputs: Mapping[str, np.ndarray], tol: float) -> None:
    """ferrum's outputs equal the reference's, in shape and within ``tol`` (relative and absolute)."""
    got, want = ferrum_outputs(model, inputs), [np.asarray(o) for o in reference_outputs(model, inputs)]
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w.astype(g.dtype), rtol=tol, atol=tol)
