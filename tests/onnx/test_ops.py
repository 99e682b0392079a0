"""ferrum.onnx op semantics the node suite cannot check (random ops, old opsets), against NumPy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from ferrum.onnx import OnnxError
from ferrum.onnx.backend import FerrumBackend
from ferrum.onnx.codegen import generate
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


def _counting_loop() -> onnx.ModelProto:
    """Loop: ``total += step * i`` for i < trips, with ``step`` read from the outer graph (a capture)."""
    body = helper.make_graph(
        [
            helper.make_node("Cast", ["i"], ["i_f"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["i_f", "step"], ["inc"]),
            helper.make_node("Add", ["total_in", "inc"], ["total_out"]),
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Identity", ["total_out"], ["trace"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("total_in", TensorProto.FLOAT, [1]),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("total_out", TensorProto.FLOAT, [1]),
            helper.make_tensor_value_info("trace", TensorProto.FLOAT, [1]),
        ],
    )
    graph = helper.make_graph(
        [helper.make_node("Loop", ["trips", "", "start"], ["total", "traces"], name="loop", body=body)],
        "g",
        [
            helper.make_tensor_value_info("trips", TensorProto.INT64, []),
            helper.make_tensor_value_info("start", TensorProto.FLOAT, [1]),
            helper.make_tensor_value_info("step", TensorProto.FLOAT, [1]),
        ],
        [
            helper.make_tensor_value_info("total", TensorProto.FLOAT, [1]),
            helper.make_tensor_value_info("traces", TensorProto.FLOAT, None),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_loop_carries_state_reads_outer_values_and_stacks_scan_outputs() -> None:
    trips, start, step = np.array(4, np.int64), np.array([1.0], np.float32), np.array([0.5], np.float32)
    total, traces = FerrumBackend.run_model(_counting_loop(), [trips, start, step])
    running = 1.0 + 0.5 * np.cumsum(np.arange(4))
    np.testing.assert_allclose(total, [running[-1]])
    np.testing.assert_allclose(traces, running.reshape(4, 1))


def test_code_generation_refuses_control_flow_by_name(tmp_path: Path) -> None:
    onnx.save(_counting_loop(), tmp_path / "loop.onnx")
    with pytest.raises(
        OnnxError, match=r"control-flow op Loop \(node 'loop'\) is not written by the generator"
    ):
        generate(tmp_path / "loop.onnx", tmp_path / "out")


def test_training_dropout_zeroes_a_ratio_and_rescales_the_rest() -> None:
    x = np.ones((100, 100), np.float32)
    ratio = helper.make_tensor("ratio", TensorProto.FLOAT, [], [0.25])
    training = helper.make_tensor("training", TensorProto.BOOL, [], [True])
    graph = helper.make_graph(
        [helper.make_node("Dropout", ["x", "ratio", "training"], ["y", "mask"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [100, 100])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("mask", TensorProto.BOOL, None),
        ],
        [ratio, training],
    )
    y, mask = FerrumBackend.run_model(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), [x]
    )
    assert abs(mask.mean() - 0.75) < 0.03
    np.testing.assert_allclose(y[mask], 1.0 / 0.75)
    assert (y[~mask] == 0).all()


@pytest.mark.parametrize(
    ("start", "end", "step"),
    [(-1, -(2**63) + 1, -1), (-1, -(2**63), -1), (3, -10, -2), (-1, 0, -1), (2, -1, -1), (-2, -100, -3)],
)
def test_backward_slices_through_index_zero(start: int, end: int, step: int) -> None:
    """torch's F.pad export reverses the pads with Slice(-1, -INT64_MAX, -1): the whole axis, backwards
    (it came out empty, breaking Swin's TorchScript export), checked against ONNX's reference."""
    from onnx import numpy_helper
    from onnx.reference import ReferenceEvaluator

    values = {"s": start, "e": end, "a": 0, "st": step}
    consts = [numpy_helper.from_array(np.array([v], np.int64), n) for n, v in values.items()]
    graph = helper.make_graph(
        [helper.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        consts,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = np.arange(10, dtype=np.float32).reshape(5, 2)
    (expected,) = ReferenceEvaluator(model).run(None, {"x": x})
    (got,) = FerrumBackend.prepare(model).run([x])
    np.testing.assert_array_equal(got, expected)


def test_reduce_log_sum_exp_does_not_overflow() -> None:
    """log(sum(exp(x))) of values past 88 is inf in f32 unless shifted by the max; NumPy in f64 is the
    reference, and a window of -inf stays -inf."""
    x = np.array([[100.0, 101.0, 99.0], [-np.inf, -np.inf, -np.inf], [0.5, -3.0, 2.0]], np.float32)
    graph = helper.make_graph(
        [helper.make_node("ReduceLogSumExp", ["x", "axes"], ["y"], keepdims=0)],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [onnx.numpy_helper.from_array(np.array([1], np.int64), "axes")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    (got,) = FerrumBackend.prepare(model).run([x])
    wide = x.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        top = wide.max(axis=1, keepdims=True)
        shift = np.where(np.isinf(top), 0.0, top)
        expected = (np.log(np.exp(wide - shift).sum(axis=1, keepdims=True)) + shift)[:, 0]
    np.testing.assert_allclose(got, expected.astype(np.float32), rtol=1e-6)
    assert np.isfinite(got[0]) and got[1] == -np.inf
