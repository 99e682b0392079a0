"""ferrum.onnx.load: an ONNX graph as a ferrum Module (params, records, valid, fine-tuning) and its errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from ferrum import Tensor
from ferrum.backend import Autodiff, NdArray
from ferrum.nn import BatchNorm, Linear
from ferrum.nn.conv import Conv2d
from ferrum.nn.loss import CrossEntropyLossConfig
from ferrum.onnx import OnnxError, OnnxFileError, UnsupportedOpError, load
from ferrum.optim import AdamConfig, GradientsParams
from ferrum.record import NamedMpkFileRecorder
from onnx import TensorProto, helper

from tests.support.onnx_models import reference_cnn, single_node, small_cnn

DEVICE = NdArray.device()


def _x(batch: int = 2, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(batch, 1, 6, 6)).astype(np.float32)


def test_cnn_matches_numpy_reference_and_maps_layers() -> None:
    model_proto, weights = small_cnn()
    model = load(model_proto, DEVICE)
    x = _x()
    out = model.forward(Tensor.from_numpy(x, DEVICE)).to_numpy()
    np.testing.assert_allclose(out, reference_cnn(x, weights), rtol=1e-4, atol=1e-5)
    # layer fields are named after the ONNX nodes
    layers = {name: type(getattr(model, name)) for name in model.program.layers}
    assert layers == {"conv_conv": Conv2d, "bn_batchnormalization": BatchNorm, "fc_gemm": Linear}
    # every float initializer is a parameter of a layer: 4*9+4 + 4+4 + 16*3+3
    assert model.num_params() == 40 + 8 + 51


def test_save_and_load_with_a_recorder(tmp_path: Path) -> None:
    model = load(small_cnn(seed=0)[0], DEVICE)
    path = tmp_path / "cnn"
    model.save_file(path, NamedMpkFileRecorder())
    other = load(small_cnn(seed=5)[0], DEVICE)
    x = Tensor.from_numpy(_x(), DEVICE)
    assert not np.allclose(other.forward(x).to_numpy(), model.forward(x).to_numpy())
    restored = other.load_file(path, NamedMpkFileRecorder(), DEVICE)
    # the same weights (the imported Linear weight is a transposed view, the loaded one contiguous:
    # the product may sum in another order)
    np.testing.assert_allclose(restored.forward(x).to_numpy(), model.forward(x).to_numpy(), rtol=1e-5)
    for (name, a), (_, b) in zip(model.named_parameters(), restored.named_parameters(), strict=True):
        np.testing.assert_array_equal(a.val().to_numpy(), b.val().to_numpy(), err_msg=name)


def test_fine_tune_under_autodiff_lowers_the_loss() -> None:
    train_device = Autodiff[NdArray].device()
    model = load(small_cnn()[0], train_device)
    rng = np.random.default_rng(3)
    x = Tensor.from_numpy(rng.normal(size=(16, 1, 6, 6)).astype(np.float32), train_device)
    y = Tensor.from_numpy(rng.integers(0, 3, size=16), train_device)
    loss_fn = CrossEntropyLossConfig().init(train_device)
    optim = AdamConfig().init()
    losses = []
    for _ in range(15):
        loss = loss_fn.forward(model.forward(x), y)
        losses.append(loss.into_scalar())
        model = optim.step(0.05, model, GradientsParams.from_grads(loss.backward(), model))
    assert losses[-1] < 0.5 * losses[0]
    inference = model.valid()
    out = inference.forward(Tensor.from_numpy(_x(), DEVICE))
    assert out.dims() == (2, 3) and not out.device().is_autodiff


def test_initializers_outside_layers_are_params() -> None:
    scale = onnx.numpy_helper.from_array(np.full((3,), 2.0, np.float32), "scale")
    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "scale"], ["y"], name="mul")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [scale],
    )
    model = load(helper.make_model(graph), DEVICE)
    assert [name for name, _ in model.named_parameters()] == ["scale"]
    out = model.forward(Tensor.from_numpy(np.ones((2, 3), np.float32), DEVICE))
    assert out.to_data().to_list() == [[2.0] * 3] * 2


def test_constant_subgraphs_are_folded() -> None:
    """Shape -> Gather -> Unsqueeze -> Concat -> Reshape on a static shape runs once, at load time."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Constant", [], ["zero"], value=onnx.numpy_helper.from_array(np.array(0, np.int64))),
        helper.make_node("Gather", ["s", "zero"], ["b"], axis=0),
        helper.make_node("Unsqueeze", ["b", "axes"], ["b1"]),
        helper.make_node("Concat", ["b1", "minus_one"], ["shape"], axis=0),
        helper.make_node("Reshape", ["x", "shape"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [
            onnx.numpy_helper.from_array(np.array([0], np.int64), "axes"),
            onnx.numpy_helper.from_array(np.array([-1], np.int64), "minus_one"),
        ],
    )
    model = load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), DEVICE)
    assert [s.op_type for s in model.program.steps] == ["Reshape"]
    assert model.program.steps[0].kwargs["shape"] == (2, -1)
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(model.forward(Tensor.from_numpy(x, DEVICE)).to_numpy(), x.reshape(2, 12))


def test_dynamic_shapes_are_read_at_run_time() -> None:
    """With a symbolic batch dim, Shape is computed at run time and Reshape reads it then."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], start=0, end=1),
        helper.make_node("Concat", ["s", "minus_one"], ["shape"], axis=0),
        helper.make_node("Reshape", ["x", "shape"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [onnx.numpy_helper.from_array(np.array([-1], np.int64), "minus_one")],
    )
    model = load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), DEVICE)
    for batch in (1, 5):
        x = np.ones((batch, 3, 4), np.float32)
        assert model.forward(Tensor.from_numpy(x, DEVICE)).dims() == (batch, 12)


def test_truncated_file_is_a_clear_error(tmp_path: Path) -> None:
    data = small_cnn()[0].SerializeToString()
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(OnnxError, match=r"cut\.onnx"):
        load(path, DEVICE)


def test_not_onnx_and_missing_files(tmp_path: Path) -> None:
    path = tmp_path / "junk.onnx"
    path.write_bytes(b"\xff\xfe this is not protobuf \x00\x01")
    with pytest.raises(OnnxFileError, match=r"junk\.onnx"):
        load(path, DEVICE)
    with pytest.raises(OnnxFileError, match="cannot read"):
        load(tmp_path / "absent.onnx", DEVICE)
    empty = tmp_path / "empty.onnx"
    empty.write_bytes(b"")
    with pytest.raises(OnnxFileError, match="empty file"):
        load(empty, DEVICE)


def test_wrong_opset_names_the_range() -> None:
    with pytest.raises(OnnxError, match=r"opset 5 is not supported: expected 7\.\.\d+"):
        load(single_node("Relu", ["x"], ["y"], opset=5), DEVICE)
    newest = onnx.defs.onnx_opset_version()
    with pytest.raises(OnnxError, match=f"opset {newest + 1} is not supported"):
        load(single_node("Relu", ["x"], ["y"], opset=newest + 1), DEVICE)


def test_unknown_op_names_op_node_and_opset() -> None:
    with pytest.raises(UnsupportedOpError, match=r"opset 17: FancyOp \(node 'the_node'\)"):
        load(single_node("FancyOp", ["x"], ["y"]), DEVICE)


def test_unsupported_attribute_is_named() -> None:
    with pytest.raises(UnsupportedOpError, match=r"node 'the_node' \(Relu, opset 17\): attribute 'color'"):
        load(single_node("Relu", ["x"], ["y"], color=3), DEVICE)


def test_cyclic_graph_is_a_clear_error() -> None:
    nodes = [
        helper.make_node("Add", ["x", "b"], ["a"], name="first"),
        helper.make_node("Relu", ["a"], ["b"], name="second"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("b", TensorProto.FLOAT, [2])],
    )
    with pytest.raises(OnnxError, match="cycle through nodes 'first', 'second'"):
        load(helper.make_model(graph), DEVICE)


def test_body_reading_a_value_not_yet_computed_is_refused_at_load() -> None:
    """An If branch whose output is the If's own output (or a value made from it) is a cycle through
    the body: refused at load, not a KeyError when the branch runs."""
    out = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])]
    zeros = onnx.numpy_helper.from_array(np.zeros(2, np.float32))
    branch = helper.make_graph(
        [helper.make_node("Constant", [], ["z"], value=zeros)],
        "branch",
        [],
        out,
    )
    cond = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    node = helper.make_node("If", ["c"], ["y"], then_branch=branch, else_branch=branch)
    own = helper.make_graph([node], "g", [cond], out)
    with pytest.raises(OnnxError, match="cycle through nodes #0"):
        load(helper.make_model(own, opset_imports=[helper.make_opsetid("", 17)]), DEVICE)
    later = helper.make_graph(
        [
            helper.make_node("If", ["c"], ["w"], then_branch=branch, else_branch=branch),
            helper.make_node("Identity", ["w"], ["y"]),
        ],
        "g",
        [cond],
        out,
    )
    with pytest.raises(OnnxError, match="cycle through nodes #0, #1"):
        load(helper.make_model(later, opset_imports=[helper.make_opsetid("", 17)]), DEVICE)


def test_a_body_runs_after_the_outer_values_it_reads() -> None:
    """Nodes are ordered by their bodies' reads too: an If listed before the node making the value
    its branch reads (as ONNX's expanded AffineGrid tests are) still runs after it."""
    out = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])]
    reads_doubled = helper.make_graph([helper.make_node("Identity", ["doubled"], ["z"])], "then", [], [
        helper.make_tensor_value_info("z", TensorProto.FLOAT, [2])
    ])
    negated = helper.make_graph([helper.make_node("Neg", ["x"], ["z"])], "else", [], [
        helper.make_tensor_value_info("z", TensorProto.FLOAT, [2])
    ])
    nodes = [
        helper.make_node("If", ["c"], ["y"], then_branch=reads_doubled, else_branch=negated),
        helper.make_node("Add", ["x", "x"], ["doubled"]),
    ]
    inputs = [
        helper.make_tensor_value_info("c", TensorProto.BOOL, []),
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
    ]
    graph = helper.make_graph(nodes, "g", inputs, out)
    model = load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), DEVICE)
    x = Tensor.from_numpy(np.array([1.0, -2.0], np.float32), DEVICE)
    yes = Tensor.from_data([True], DEVICE).reshape(())
    no = Tensor.from_data([False], DEVICE).reshape(())
    assert model.forward(yes, x).to_data().to_list() == [2.0, -4.0]
    assert model.forward(no, x).to_data().to_list() == [-1.0, 2.0]


def test_dangling_input_is_named() -> None:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["ghost"], ["y"], name="r")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    with pytest.raises(OnnxError, match="node 'r' \\(Relu\\) reads 'ghost'"):
        load(helper.make_model(graph), DEVICE)


def test_hostile_shape_is_refused_at_load() -> None:
    """A file asking ConstantOfShape for 10^16 elements fails with the op's name, allocating nothing."""
    huge = onnx.numpy_helper.from_array(np.array([10**8, 10**8], np.int64), "shape")
    graph = helper.make_graph(
        [helper.make_node("ConstantOfShape", ["shape"], ["y"], name="big")],
        "g",
        [],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [huge],
    )
    with pytest.raises(OnnxError, match=r"node 'big' \(ConstantOfShape.*more than 2147483648"):
        load(helper.make_model(graph), DEVICE)


def test_forward_checks_inputs() -> None:
    model = load(small_cnn()[0], DEVICE)
    with pytest.raises(OnnxError, match=r"expected 1 inputs \(x\), found 2"):
        model.forward(Tensor.zeros((1, 1, 6, 6), DEVICE), Tensor.zeros((1, 1, 6, 6), DEVICE))
    with pytest.raises(OnnxError, match=r"input 'x' expected shape \['\?', 1, 6, 6\], found \[1, 2, 6, 6\]"):
        model.forward(Tensor.zeros((1, 2, 6, 6), DEVICE))
    ints = Tensor.from_numpy(np.zeros((1, 1, 6, 6), np.int64), DEVICE)
    with pytest.raises(OnnxError, match=r"input 'x' expected a Float tensor \(ONNX FLOAT\), found Int"):
        model.forward(ints)
