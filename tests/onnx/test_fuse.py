"""Inference fusion in ferrum.onnx: Conv -> BatchNormalization -> Add/Sum -> Relu run as one fused
convolution on a device without autodiff, checked against NumPy, and the same graph on Autodiff (run
step by step) against the same reference."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import onnx
import pytest
from ferrum import Tensor
from ferrum.backend import Autodiff, NdArray
from ferrum.onnx import load
from ferrum.onnx.fuse import FusedConv
from numpy.lib.stride_tricks import sliding_window_view
from onnx import TensorProto, helper, numpy_helper

Array = npt.NDArray[Any]
EPS = 1e-5


def np_conv(x: Array, w: Array, pad: int) -> Array:
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    windows = sliding_window_view(xp, w.shape[2:], axis=(2, 3))  # n, c, oh, ow, kh, kw
    out: Array = np.einsum("nchwij,ocij->nohw", windows, w)
    return out


def np_bn(x: Array, p: dict[str, Array]) -> Array:
    per = (None, slice(None), None, None)
    return (x - p["mean"][per]) / np.sqrt(p["var"][per] + EPS) * p["scale"][per] + p["bias"][per]


class Graph:
    """A residual block's graph under construction, with its NumPy twin."""

    def __init__(self) -> None:
        self.rng = np.random.default_rng(0)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.arrays: dict[str, Array] = {}

    def const(self, name: str, a: Array) -> str:
        a = a.astype(np.float32)
        self.inits.append(numpy_helper.from_array(a, name))
        self.arrays[name] = a.astype(np.float64)
        return name

    def conv(self, x: str, out: str, w_shape: tuple[int, ...], pad: int, bias: bool) -> str:
        inputs = [x, self.const(out + "_w", self.rng.normal(size=w_shape) * 0.3)]
        if bias:
            inputs.append(self.const(out + "_b", self.rng.normal(size=w_shape[0])))
        self.nodes.append(helper.make_node("Conv", inputs, [out], name=out, pads=[pad] * 4))
        return out

    def bn(self, x: str, out: str, channels: int) -> str:
        names = []
        for part, low in (("scale", 0.5), ("bias", -1.0), ("mean", -0.5), ("var", 0.5)):
            names.append(self.const(f"{out}_{part}", low + self.rng.random(channels)))
        self.nodes.append(helper.make_node("BatchNormalization", [x, *names], [out], name=out, epsilon=EPS))
        return out

    def node(self, op: str, inputs: list[str], out: str) -> str:
        self.nodes.append(helper.make_node(op, inputs, [out], name=out))
        return out

    def model(self, outputs: list[str]) -> onnx.ModelProto:
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 6, 6])
        outs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs]
        graph = helper.make_graph(self.nodes, "block", [x], outs, self.inits)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])

    def params(self, out: str) -> dict[str, Array]:
        return {p: self.arrays[f"{out}_{p}"] for p in ("scale", "bias", "mean", "var")}


def residual_block(add: str = "Sum") -> tuple[Graph, Array, Array]:
    """x -> conv/bn/relu -> conv/bn, plus a 1x1 conv/bn of x computed after it, added, relu."""
    g = Graph()
    g.conv("x", "c1", (16, 4, 3, 3), 1, bias=True)
    g.node("Relu", [g.bn("c1", "n1", 16)], "r1")
    g.conv("r1", "c2", (16, 16, 3, 3), 1, bias=False)
    g.bn("c2", "n2", 16)
    g.conv("x", "c3", (16, 4, 1, 1), 0, bias=False)
    g.bn("c3", "n3", 16)
    g.node("Relu", [g.node(add, ["n2", "n3"], "s")], "y")
    x = g.rng.normal(size=(2, 4, 6, 6))
    a = g.arrays
    n1 = np_bn(np_conv(x, a["c1_w"], 1) + a["c1_b"][None, :, None, None], g.params("n1"))
    n2 = np_bn(np_conv(np.maximum(n1, 0), a["c2_w"], 1), g.params("n2"))
    n3 = np_bn(np_conv(x, a["c3_w"], 0), g.params("n3"))
    return g, x, np.maximum(n2 + n3, 0)


def run(model: onnx.ModelProto, x: Array, device: Any) -> Any:
    return load(model, device).forward(Tensor.from_numpy(x.astype(np.float32), device))


@pytest.mark.parametrize("add", ["Sum", "Add"])
def test_a_residual_block_fuses_into_three_convolutions_and_matches_numpy(add: str) -> None:
    g, x, want = residual_block(add)
    model = g.model(["y"])
    net = load(model, NdArray.device())
    groups = [a for a in net.schedule.actions if isinstance(a, FusedConv)]
    ops = sorted(([net.program.steps[i].op_type for i in group.steps] for group in groups), key=len)
    # One branch's second convolution takes the add and the relu, with the other branch's output as
    # its residual (whichever runs later in the program); the other keeps its conv and BatchNorm.
    assert ops == [
        ["Conv", "BatchNormalization"],
        ["Conv", "BatchNormalization", "Relu"],
        ["Conv", "BatchNormalization", add, "Relu"],
    ]
    (joined,) = [group for group in groups if group.residual is not None]
    assert joined.relu
    assert joined.residual in {"n2", "n3"} and joined.output == "y"
    assert not [a for a in net.schedule.actions if not isinstance(a, FusedConv)]
    np.testing.assert_allclose(run(model, x, NdArray.device()).to_numpy(), want, rtol=1e-4, atol=1e-4)
    # On Autodiff the steps run one by one (BatchNorm would use batch statistics when training, so
    # only the inference result is the same): that path matches the reference too.
    trained = load(model, Autodiff[NdArray].device())
    trained_out = trained.valid().forward(Tensor.from_numpy(x.astype(np.float32), NdArray.device()))
    np.testing.assert_allclose(trained_out.to_numpy(), want, rtol=1e-4, atol=1e-4)


def test_values_the_graph_returns_are_not_fused_away() -> None:
    g, x, want = residual_block()
    model = g.model(["y", "n1", "c3"])
    net = load(model, NdArray.device())
    groups = [a for a in net.schedule.actions if isinstance(a, FusedConv)]
    ops = [[net.program.steps[i].op_type for i in group.steps] for group in groups]
    # n1 ends its group (its relu runs alone); c3 is an output, so its convolution and BatchNorm run alone.
    assert ops == [["Conv", "BatchNormalization"], ["Conv", "BatchNormalization", "Sum", "Relu"]]
    assert groups[0].output == "n1"
    y, n1, c3 = run(model, x, NdArray.device())
    a = g.arrays
    np.testing.assert_allclose(y.to_numpy(), want, rtol=1e-4, atol=1e-4)
    want_n1 = np_bn(np_conv(x, a["c1_w"], 1) + a["c1_b"][None, :, None, None], g.params("n1"))
    np.testing.assert_allclose(n1.to_numpy(), want_n1, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(c3.to_numpy(), np_conv(x, a["c3_w"], 0), rtol=1e-4, atol=1e-4)


def test_a_broadcast_residual_runs_the_steps_one_by_one() -> None:
    g = Graph()
    g.bn(g.conv("x", "c1", (16, 4, 3, 3), 1, bias=True), "n1", 16)
    g.node("Add", ["n1", g.const("offset", g.rng.normal(size=(1, 16, 1, 1)))], "s")
    g.node("Relu", ["s"], "y")
    x = g.rng.normal(size=(2, 4, 6, 6))
    a = g.arrays
    n1 = np_bn(np_conv(x, a["c1_w"], 1) + a["c1_b"][None, :, None, None], g.params("n1"))
    got = run(g.model(["y"]), x, NdArray.device())
    np.testing.assert_allclose(got.to_numpy(), np.maximum(n1 + a["offset"], 0), rtol=1e-4, atol=1e-4)
