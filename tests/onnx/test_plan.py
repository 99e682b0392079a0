"""Compiled plans (ferrum.onnx.plan): each op family against NumPy through the plan, mixed engine and
Python segments, signatures (recompiling, bad input) and the paths that keep running step by step."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from ferrum import Tensor
from ferrum.backend import Autodiff, NdArray
from ferrum.nn import LinearConfig
from ferrum.onnx import OnnxError, load
from ferrum.onnx.plan import CACHE_SIZE, plan_cache, profile, signature
from numpy.lib.stride_tricks import sliding_window_view
from onnx import TensorProto, helper, numpy_helper

from tests.support.onnx_plan import only_engine, plan_model, run_planned

Array = npt.NDArray[Any]
DEVICE = NdArray.device()
F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


# a graph that cannot compile warns and runs step by step: here that is a failure
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


RNG = np.random.default_rng(7)


def _f32(*shape: int) -> Array:
    return RNG.normal(size=shape).astype(np.float32)


def test_elementwise_arithmetic_and_activations() -> None:
    nodes = [
        helper.make_node("Add", ["x", "b"], ["a"]),  # [2, 3] + [3]
        helper.make_node("Mul", ["a", "x"], ["m"]),
        helper.make_node("Sub", ["m", "b"], ["s"]),
        helper.make_node("Div", ["s", "two"], ["d"]),
        helper.make_node("Pow", ["d", "two"], ["p"]),
        helper.make_node("Abs", ["d"], ["ab"]),
        helper.make_node("Sqrt", ["ab"], ["sq"]),
        helper.make_node("Erf", ["d"], ["e"]),
        helper.make_node("Tanh", ["d"], ["t"]),
        helper.make_node("Sigmoid", ["d"], ["sg"]),
        helper.make_node("Relu", ["d"], ["r"]),
        helper.make_node("Neg", ["d"], ["n"]),
        helper.make_node("Exp", ["n"], ["ex"]),
        helper.make_node("Reciprocal", ["ex"], ["rc"]),
        helper.make_node("Gelu", ["d"], ["g"]),
        helper.make_node("HardSigmoid", ["d"], ["hs"], alpha=0.25, beta=0.4),
        helper.make_node("HardSwish", ["d"], ["hw"]),
    ]
    outs = ["p", "sq", "e", "t", "sg", "r", "ex", "rc", "g", "hs", "hw"]
    b, two = _f32(3), np.array(2.0, np.float32)
    model = plan_model(nodes, [("x", F, [2, 3])], [(o, F) for o in outs], {"b": b, "two": two}, opset=20)
    x = _f32(2, 3)
    got, compiled = run_planned(model, x)
    only_engine(compiled)
    d = ((x + b) * x - b) / 2.0
    erf = np.vectorize(math.erf)
    hs = np.clip(0.25 * d + 0.4, 0, 1)
    want = [
        d**2, np.sqrt(np.abs(d)), erf(d), np.tanh(d), 1 / (1 + np.exp(-d)), np.maximum(d, 0), np.exp(-d),
        1 / np.exp(-d), 0.5 * d * (1 + erf(d / math.sqrt(2))), hs, d * np.clip(d / 6 + 0.5, 0, 1),
    ]  # fmt: skip
    for name, g, w in zip(outs, got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=name)


def test_comparisons_logic_where_and_casts() -> None:
    nodes = [
        helper.make_node("Greater", ["x", "y"], ["gt"]),
        helper.make_node("Less", ["x", "zero"], ["lt"]),
        helper.make_node("Equal", ["i", "j"], ["eq"]),  # Int, broadcast [2, 3] and [3]
        helper.make_node("And", ["gt", "lt"], ["both"]),
        helper.make_node("Not", ["both"], ["nb"]),
        helper.make_node("IsNaN", ["x"], ["nan"]),
        helper.make_node("Where", ["nb", "x", "y"], ["w"]),
        helper.make_node("Cast", ["eq"], ["eqf"], to=F),
        helper.make_node("Cast", ["i"], ["if"], to=F),
    ]
    model = plan_model(
        nodes,
        [("x", F, [2, 3]), ("y", F, [2, 3]), ("i", I64, [2, 3]), ("j", I64, [3])],
        [("w", F), ("eqf", F), ("if", F), ("nan", B)],
        {"zero": np.array([0.0], np.float32)},
    )
    x, y = _f32(2, 3), _f32(2, 3)
    x[0, 0] = np.nan
    i, j = np.array([[1, 2, 3], [3, 2, 1]]), np.array([1, 5, 1])
    (w, eqf, i_f, nan), compiled = run_planned(model, x, y, i, j)
    only_engine(compiled)
    nb = ~((x > y) & (x < 0))
    np.testing.assert_array_equal(w, np.where(nb, x, y))
    np.testing.assert_array_equal(eqf, (i == j).astype(np.float32))
    np.testing.assert_array_equal(i_f, i.astype(np.float32))
    np.testing.assert_array_equal(nan, np.isnan(x))


def test_shape_ops_and_a_shape_chain_resolved_at_compile() -> None:
    # x is [batch, 4, 6] with a symbolic batch: Shape -> Gather -> Concat -> Reshape stays in the graph,
    # and the plan resolves it from the signature
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["batch"], axis=0),
        helper.make_node("Concat", ["batch", "rest"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["flat"]),  # [batch, 24]
        helper.make_node("Transpose", ["x"], ["tx"], perm=[0, 2, 1]),  # [batch, 6, 4]
        helper.make_node("Slice", ["tx", "starts", "ends", "axes", "steps"], ["sl"]),  # [batch, 2, 4]
        helper.make_node("Split", ["sl", "sizes"], ["s0", "s1"], axis=2),
        helper.make_node("Concat", ["s1", "s0"], ["cat"], axis=-1),
        helper.make_node("Unsqueeze", ["cat", "ax1"], ["un"]),  # [batch, 1, 2, 4]
        helper.make_node("Expand", ["un", "big"], ["ex"]),  # [batch, 3, 2, 4]
        helper.make_node("Squeeze", ["un", "ax1"], ["sq"]),
        helper.make_node("Flatten", ["ex"], ["fl"], axis=2),
        helper.make_node("Gather", ["x", "idx"], ["ga"], axis=2),  # run-time indices, some negative
        helper.make_node("Gather", ["x", "cidx"], ["gc"], axis=-1),  # constant negative indices
    ]
    inits = {
        "zero": np.array([0], np.int64),
        "rest": np.array([-1], np.int64),
        "starts": np.array([1], np.int64),
        "ends": np.array([100], np.int64),
        "axes": np.array([1], np.int64),
        "steps": np.array([3], np.int64),
        "sizes": np.array([1, 3], np.int64),
        "ax1": np.array([1], np.int64),
        "big": np.array([1, 3, 1, 1], np.int64),
        "cidx": np.array([-1, 0], np.int64),
    }
    model = plan_model(
        nodes,
        [("x", F, ["batch", 4, 6]), ("idx", I64, [2, 2])],
        [(o, F) for o in ("flat", "cat", "sq", "fl", "ga", "gc")],
        inits,
    )
    x, idx = _f32(2, 4, 6), np.array([[0, -1], [5, -6]])
    (flat, cat, sq, fl, ga, gc), compiled = run_planned(model, x, idx)
    only_engine(compiled)
    tx = x.transpose(0, 2, 1)
    sl = tx[:, 1:100:3]
    want_cat = np.concatenate([sl[..., 1:], sl[..., :1]], axis=-1)
    np.testing.assert_array_equal(flat, x.reshape(2, 24))
    np.testing.assert_array_equal(cat, want_cat)
    np.testing.assert_array_equal(sq, want_cat)
    np.testing.assert_array_equal(fl, np.broadcast_to(want_cat[:, None], (2, 3, 2, 4)).reshape(6, 8))
    np.testing.assert_array_equal(ga, np.take(x, idx, axis=2))
    np.testing.assert_array_equal(gc, np.take(x, [-1, 0], axis=-1))
    # another batch size is another signature: a second plan, as correct
    x3 = _f32(3, 4, 6)
    (flat3, *_), _ = run_planned(model, x3, idx)
    np.testing.assert_array_equal(flat3, x3.reshape(3, 24))
    assert len(plan_cache(model)) == 2


def test_matmul_linear_norms_and_reductions() -> None:
    w, c = _f32(8, 5), _f32(5)
    scale, bias = _f32(5), _f32(5)
    nodes = [
        helper.make_node("Gemm", ["x2", "w", "c"], ["lin"]),  # a Linear layer
        helper.make_node("MatMul", ["x3", "w"], ["mm"]),  # a Linear layer without bias, rank 3
        helper.make_node("MatMul", ["q", "k"], ["scores"]),  # [2, 3, 4, 8] @ [3, 8, 4]: batch broadcasts
        helper.make_node("Softmax", ["scores"], ["attn"], axis=-1),
        helper.make_node("LayerNormalization", ["mm", "scale", "bias"], ["ln"], axis=-1, epsilon=1e-3),
        helper.make_node("ReduceMean", ["ln", "axes"], ["rm"], keepdims=0),
    ]
    model = plan_model(
        nodes,
        [("x2", F, [3, 8]), ("x3", F, [2, 3, 8]), ("q", F, [2, 3, 4, 8]), ("k", F, [3, 8, 4])],
        [("lin", F), ("attn", F), ("ln", F), ("rm", F)],
        {"w": w, "c": c, "scale": scale, "bias": bias, "axes": np.array([1], np.int64)},
        opset=18,
    )
    x2, x3, q, k = _f32(3, 8), _f32(2, 3, 8), _f32(2, 3, 4, 8), _f32(3, 8, 4)
    (lin, attn, ln, rm), compiled = run_planned(model, x2, x3, q, k)
    only_engine(compiled)
    np.testing.assert_allclose(lin, x2 @ w + c, rtol=1e-5, atol=1e-5)
    s = q @ k
    e = np.exp(s - s.max(-1, keepdims=True))
    np.testing.assert_allclose(attn, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-6)
    mm = x3 @ w
    mu, var = mm.mean(-1, keepdims=True), mm.var(-1, keepdims=True)
    want_ln = (mm - mu) / np.sqrt(var + 1e-3) * scale + bias
    np.testing.assert_allclose(ln, want_ln, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(rm, want_ln.mean(1), rtol=1e-4, atol=1e-5)


def _np_conv(x: Array, w: Array, pad: int) -> Array:
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    windows = sliding_window_view(xp, w.shape[2:], axis=(2, 3))
    out: Array = np.einsum("nchwij,ocij->nohw", windows, w)
    return out


def test_convolutions_fused_groups_and_pools() -> None:
    w1, b1, w2 = _f32(4, 3, 3, 3) * 0.3, _f32(4), _f32(4, 4, 3, 3) * 0.3
    bn = {"sc": _f32(4), "bi": _f32(4), "mu": _f32(4), "va": np.abs(_f32(4)) + 0.5}
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),  # a fused group: conv, relu
        helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c2", "sc", "bi", "mu", "va"], ["n2"]),
        helper.make_node("Add", ["n2", "r1"], ["res"]),  # a fused group: conv, bn, residual add, relu
        helper.make_node("Relu", ["res"], ["r2"]),
        helper.make_node("BatchNormalization", ["r2", "sc", "bi", "mu", "va"], ["bn3"]),  # alone
        helper.make_node("MaxPool", ["bn3"], ["mp"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("AveragePool", ["r2"], ["ap"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("GlobalAveragePool", ["ap"], ["gap"]),
    ]
    model = plan_model(
        nodes,
        [("x", F, [2, 3, 6, 6])],
        [("mp", F), ("ap", F), ("gap", F)],
        {"w1": w1, "b1": b1, "w2": w2, **bn},
    )
    x = _f32(2, 3, 6, 6)
    (mp, ap, gap), compiled = run_planned(model, x)
    only_engine(compiled)
    per = (None, slice(None), None, None)

    def np_bn(v: Array) -> Array:
        out: Array = (v - bn["mu"][per]) / np.sqrt(bn["va"][per] + 1e-5) * bn["sc"][per] + bn["bi"][per]
        return out

    r1 = np.maximum(_np_conv(x, w1, 1) + b1[per], 0)
    r2 = np.maximum(np_bn(_np_conv(r1, w2, 1)) + r1, 0)
    bn3 = np_bn(r2)
    want_mp = bn3.reshape(2, 4, 3, 2, 3, 2).max(axis=(3, 5))
    padded = np.pad(r2, ((0, 0), (0, 0), (1, 1), (1, 1)))
    counts = np.pad(np.ones((6, 6)), 1)
    sums = sliding_window_view(padded, (3, 3), axis=(2, 3)).sum(axis=(-1, -2))
    want_ap = sums / sliding_window_view(counts, (3, 3)).sum(axis=(-1, -2))  # padding not counted
    np.testing.assert_allclose(mp, want_mp, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(ap, want_ap, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gap, want_ap.mean(axis=(2, 3), keepdims=True), rtol=1e-4, atol=1e-4)


def test_an_op_without_a_plan_form_splits_the_plan() -> None:
    # Softplus has no instruction: engine segment, the Softplus from Python, engine segment
    nodes = [
        helper.make_node("Mul", ["x", "x"], ["sq"]),
        helper.make_node("Softplus", ["sq"], ["cs"]),
        helper.make_node("Add", ["cs", "x"], ["y"]),
        helper.make_node("Tanh", ["y"], ["t"]),
    ]
    model = plan_model(nodes, [("x", F, [3, 4])], [("t", F), ("sq", F)])
    x = _f32(3, 4)
    (t, sq), compiled = run_planned(model, x)
    assert compiled.python_ops == ("Softplus",) and compiled.engine_segments == 2 and not compiled.direct
    np.testing.assert_allclose(t, np.tanh(np.log1p(np.exp(x * x)) + x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sq, x * x, rtol=1e-6)


def test_bad_input_for_a_signature_raises_a_clear_error() -> None:
    model = plan_model([helper.make_node("Relu", ["x"], ["y"])], [("x", F, ["n", 4])], [("y", F)])
    good = Tensor.from_numpy(_f32(2, 4), DEVICE)
    model.forward(good)
    model.forward(good)
    with pytest.raises(OnnxError, match=r"input 'x' expected shape \['\?', 4\], found \[2, 5\]"):
        model.forward(Tensor.from_numpy(_f32(2, 5), DEVICE))
    with pytest.raises(OnnxError, match=r"input 'x' expected a Float tensor .* found Int"):
        model.forward(Tensor.from_numpy(np.zeros((2, 4), np.int64), DEVICE))
    with pytest.raises(OnnxError, match="forward expected 1 inputs"):
        model.forward(good, good)
    # a compiled plan refuses another signature itself, naming it (the model compiles a new plan instead)
    key = signature([good])
    assert key is not None
    compiled = plan_cache(model)[key]
    assert compiled is not None and compiled.segments[0].plan is not None
    with pytest.raises(OnnxError, match=r"expected shape \[2, 4\] of f32, found shape \[3, 4\] of f32"):
        compiled.run(model, [Tensor.from_numpy(_f32(3, 4), DEVICE)], DEVICE)
    # the model itself compiles a new plan for the new batch size
    negative = Tensor.from_numpy(-np.ones((3, 4), np.float32), DEVICE)
    np.testing.assert_array_equal(model.forward(negative).to_numpy(), 0)


def test_plans_are_cached_per_instance_with_a_bound() -> None:
    model = plan_model([helper.make_node("Neg", ["x"], ["y"])], [("x", F, ["n"])], [("y", F)])
    for n in range(1, CACHE_SIZE + 3):
        x = np.arange(n, dtype=np.float32)
        np.testing.assert_array_equal(model.forward(Tensor.from_numpy(x, DEVICE)).to_numpy(), -x)
    assert len(plan_cache(model)) == CACHE_SIZE
    other = plan_model([helper.make_node("Neg", ["x"], ["y"])], [("x", F, ["n"])], [("y", F)])
    assert plan_cache(other) == {}


def test_opting_out_and_autodiff_run_step_by_step() -> None:
    w = _f32(4, 2)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"])]
    off = plan_model(nodes, [("x", F, [3, 4])], [("y", F)], {"w": w}, plan=False)
    x = _f32(3, 4)
    for _ in range(2):
        np.testing.assert_allclose(off.forward(Tensor.from_numpy(x, DEVICE)).to_numpy(), x @ w, rtol=1e-5)
    assert plan_cache(off) == {}
    ad = Autodiff[NdArray].device()
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", F, [3, 4])],
        [helper.make_tensor_value_info("y", F, None)],
        [numpy_helper.from_array(w, "w")],
    )
    trained = load(helper.make_model(graph), ad)
    xt = Tensor.from_numpy(x, ad).require_grad()
    for _ in range(2):
        y = trained.forward(xt)
    assert plan_cache(trained) == {}  # on Autodiff, step by step: gradients flow
    grads = y.sum().backward()
    grad = xt.grad(grads)
    assert grad is not None
    np.testing.assert_allclose(grad.to_numpy(), np.broadcast_to(w.sum(1), (3, 4)), rtol=1e-5)


@pytest.mark.parametrize("halved_first", [False, True])
def test_the_erf_gelu_pattern_runs_as_one_kernel(halved_first: bool) -> None:
    # x * 0.5 * (1 + erf(x / sqrt 2)), as torch's exporter writes nn.GELU (and the other order of products)
    consts = {"r2": np.array(math.sqrt(2.0), np.float32), "one": np.array(1.0, np.float32)}
    consts["half"] = np.array(0.5, np.float32)
    nodes = [
        helper.make_node("Div", ["x", "r2"], ["a"]),
        helper.make_node("Erf", ["a"], ["e"]),
        helper.make_node("Add", ["e", "one"], ["c"]),
    ]
    if halved_first:
        nodes += [helper.make_node("Mul", ["x", "half"], ["h"]), helper.make_node("Mul", ["h", "c"], ["y"])]
    else:
        nodes += [helper.make_node("Mul", ["x", "c"], ["m"]), helper.make_node("Mul", ["m", "half"], ["y"])]
    nodes.append(helper.make_node("Pow", ["y", "three"], ["cube"]))
    consts["three"] = np.array(3.0, np.float32)
    model = plan_model(nodes, [("x", F, [4, 8])], [("cube", F)], consts)
    x = _f32(4, 8) * 3
    (cube,), compiled = run_planned(model, x)
    only_engine(compiled)
    plan = compiled.segments[0].plan
    assert plan is not None and len(plan) == 2  # gelu, then the cube as products
    y = 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2.0)))
    np.testing.assert_allclose(cube, y**3, rtol=1e-5, atol=1e-6)


def test_profile_times_each_instruction_and_python_step() -> None:
    nodes = [
        helper.make_node("Mul", ["x", "x"], ["sq"]),
        helper.make_node("Softplus", ["sq"], ["cs"]),
        helper.make_node("Add", ["cs", "x"], ["y"]),
    ]
    model = plan_model(nodes, [("x", F, [3, 4])], [("y", F)])
    rows = profile(model, Tensor.from_numpy(_f32(3, 4), DEVICE))
    expected = [("binary", "Mul"), ("python", "Softplus"), ("binary", "Add")]
    assert [(op, label) for op, label, _ in rows] == expected
    assert all(seconds >= 0.0 for _, _, seconds in rows)


def test_profile_of_a_module_not_made_by_onnx_load_names_its_type() -> None:
    layer = LinearConfig(4, 2).init(DEVICE)
    with pytest.raises(OnnxError, match=r"expected a model made by ferrum\.onnx\.load, found Linear"):
        profile(layer, Tensor.from_numpy(_f32(3, 4), DEVICE))
