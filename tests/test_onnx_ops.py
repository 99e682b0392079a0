"""ferrum.onnx op semantics the node suite cannot check (random ops, old opsets), against NumPy."""

from __future__ import annotations

import numpy as np
import onnx
from ferrum.onnx.backend import FerrumBackend
from onnx import TensorProto, helper


def _run(node: onnx.NodeProto, inputs: dict[str, np.ndarray], out_type: int, opset: int = 17) -> np.ndarray:
    types = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.bool_): TensorProto.BOOL}
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info(k, types[v.dtype], list(v.shape)) for k, v in inputs.items()],
        [helper.make_tensor_value_info(node.output[0], out_type, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    result: np.ndarray = FerrumBackend.run_model(model, list(inputs.values()))[0]
    return result


def test_bernoulli_draws_follow_the_probabilities() -> None:
    p = np.array([0.0, 1.0, 0.0, 1.0] * 4 + [0.5] * 4000, np.float32)
    out = _run(helper.make_node("Bernoulli", ["p"], ["y"]), {"p": p}, TensorProto.FLOAT)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out[:16], p[:16])
    assert set(np.unique(out[16:])) == {0.0, 1.0}
    assert abs(out[16:].mean() - 0.5) < 0.05


def test_not_at_a_supported_opset() -> None:
    x = np.array([[True, False], [False, True]])
    out = _run(helper.make_node("Not", ["x"], ["y"]), {"x": x}, TensorProto.BOOL, opset=7)
    np.testing.assert_array_equal(out, ~x)


def test_softmax_before_opset_13_flattens_from_axis() -> None:
    x = np.random.default_rng(0).normal(size=(2, 3, 4)).astype(np.float32)
    out = _run(helper.make_node("Softmax", ["x"], ["y"]), {"x": x}, TensorProto.FLOAT, opset=11)
    flat = x.reshape(2, 12)
    expected = np.exp(flat) / np.exp(flat).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(out, expected.reshape(2, 3, 4), rtol=1e-5)
