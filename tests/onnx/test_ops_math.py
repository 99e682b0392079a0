"""ferrum.onnx's math, normalization, loss and window ops beyond ONNX's node tests (issue 50).

Checked against NumPy (einsum, det, the pooling and window formulas), against
onnxruntime's own results where behaviour is platform-defined (Cast of NaN,
infinities and out-of-range floats to integers), and through autodiff (the
imported ops are differentiable).
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from ferrum import DType, Tensor
from ferrum.backend import Autodiff, NdArray
from ferrum.onnx import OnnxError, load
from ferrum.onnx.backend import FerrumBackend
from ferrum.onnx.codegen import generate
from ferrum.onnx.ops.einsum import einsum
from ferrum.onnx.ops.linalg import det
from ferrum.onnx.ops.loss import softmax_cross_entropy_loss
from ferrum.onnx.ops.norm import lp_normalization
from ferrum.onnx.ops.reduce import lp_pool
from ferrum.onnx.ops.shape import cast
from onnx import TensorProto, helper, numpy_helper

from tests.support.onnx_models import import_generated

DEVICE = NdArray.device()
TRAIN = Autodiff[NdArray].device()


def _model(
    nodes: list[onnx.NodeProto],
    inputs: dict[str, np.ndarray],
    outputs: list[tuple[str, int]],
    opset: int = 24,
    initializers: list[onnx.TensorProto] | None = None,
) -> onnx.ModelProto:
    types = {
        np.dtype(np.float32): TensorProto.FLOAT,
        np.dtype(np.float64): TensorProto.DOUBLE,
        np.dtype(np.float16): TensorProto.FLOAT16,
        np.dtype(np.int64): TensorProto.INT64,
        np.dtype(np.int32): TensorProto.INT32,
    }
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(k, types[v.dtype], list(v.shape)) for k, v in inputs.items()],
        [helper.make_tensor_value_info(name, kind, None) for name, kind in outputs],
        initializers or [],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _run(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    return list(FerrumBackend.run_model(model, list(inputs.values())))


def _grad(x: Tensor[Any, Any, Any], grads: Any) -> np.ndarray:
    found = x.grad(grads)
    assert found is not None
    return np.asarray(found.to_numpy())


# --- Cast of values an integer cannot hold ---------------------------------------------------

CAST_INPUT = np.array(
    [
        *(1.7, -1.7, np.inf, -np.inf, np.nan, 3e9, -3e9, 9.3e18),
        *(-9.3e18, 1e30, 300.0, -129.0, 70000.0, 2147483520.0, -2147483648.0),
    ],
    np.float32,
)
_I64, _I32 = -(2**63), -(2**31)
# onnxruntime 1.32's CPU Cast of CAST_INPUT on x86-64, from float and from double alike (ONNX's
# reference evaluator, NumPy's astype, gives the same there). In-range values truncate toward zero.
ORT_CAST: dict[int, list[int]] = {
    TensorProto.INT64: [
        *(1, -1, _I64, _I64, _I64, 3000000000, -3000000000, _I64),
        *(_I64, _I64, 300, -129, 70000, 2147483520, -2147483648),
    ],
    TensorProto.INT32: [1, -1, *[_I32] * 8, 300, -129, 70000, 2147483520, -2147483648],
    TensorProto.INT16: [1, -1, *[0] * 8, 300, -129, 4464, -128, 0],
    TensorProto.INT8: [1, -1, *[0] * 8, 44, 127, 112, -128, 0],
    TensorProto.UINT8: [1, 255, *[0] * 8, 44, 127, 112, 128, 0],
    TensorProto.UINT16: [1, 65535, *[0] * 8, 300, 65407, 4464, 65408, 0],
    TensorProto.UINT32: [
        *(1, 4294967295, 0, 2**31, 2**31, 3000000000, 2**31, 0),
        *(2**31, 0, 300, 4294967167, 70000, 2147483520, 2**31),
    ],
    TensorProto.UINT64: [
        *(1, 2**64 - 1, 0, 2**63, 2**63, 3000000000, 2**64 - 3000000000, 9300000300729368576),
        *(2**63, 0, 300, 2**64 - 129, 70000, 2147483520, 2**64 - 2**31),
    ],
}


@pytest.mark.parametrize("source", [np.float32, np.float64])
@pytest.mark.parametrize("to", sorted(ORT_CAST))
def test_cast_of_nan_infinities_and_out_of_range_floats_matches_onnxruntime(source: type, to: int) -> None:
    x: np.ndarray = CAST_INPUT.astype(source)
    model = _model([helper.make_node("Cast", ["x"], ["y"], to=to)], {"x": x}, [("y", to)], opset=21)
    (y,) = _run(model, {"x": x})
    assert y.dtype == helper.tensor_dtype_to_np_dtype(to)
    assert y.tolist() == ORT_CAST[to]


def test_t5_relative_position_bias_casts_minus_inf_to_int64() -> None:
    # T5's bucket: log(relative position) (-inf at 0) cast to int64, clipped, and used only where
    # the position is large; the graph used to raise at the Cast.
    rel = np.array([[0, 1, 2, 5], [9, 0, 40, 200]], np.int64)
    nodes = [
        helper.make_node("Cast", ["rel"], ["rel_f"], to=TensorProto.FLOAT),
        helper.make_node("Log", ["rel_f"], ["log"]),
        helper.make_node("Mul", ["log", "scale"], ["scaled"]),
        helper.make_node("Cast", ["scaled"], ["bucket_raw"], to=TensorProto.INT64),
        helper.make_node("Add", ["bucket_raw", "two"], ["bucket"]),
        helper.make_node("Min", ["bucket", "top"], ["large"]),
        helper.make_node("Less", ["rel", "two"], ["small"]),
        helper.make_node("Where", ["small", "rel", "large"], ["out"]),
        helper.make_node("Identity", ["bucket_raw"], ["raw"]),
    ]
    consts = [
        numpy_helper.from_array(np.array(2.0, np.float32), "scale"),
        numpy_helper.from_array(np.array(2, np.int64), "two"),
        numpy_helper.from_array(np.array(7, np.int64), "top"),
    ]
    model = _model(
        nodes, {"rel": rel}, [("out", TensorProto.INT64), ("raw", TensorProto.INT64)], 17, consts
    )
    out, raw = _run(model, {"rel": rel})
    with np.errstate(divide="ignore"):
        scaled = np.log(rel.astype(np.float32)) * np.float32(2.0)
    assert raw[0, 0] == raw[1, 1] == np.iinfo(np.int64).min
    large = np.minimum(np.where(np.isfinite(scaled), scaled, 0).astype(np.int64) + 2, 7)
    np.testing.assert_array_equal(out, np.where(rel < 2, rel, large))


def test_cast_keeps_in_range_values_and_other_kinds() -> None:
    x = np.array([[-2.9, 0.0, 2.9], [2.0**62, -(2.0**63), 0.5]], np.float32)
    model = _model(
        [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.INT64)], {"x": x}, [("y", TensorProto.INT64)]
    )
    np.testing.assert_array_equal(_run(model, {"x": x})[0], np.trunc(x).astype(np.int64))
    # f64 values keep their precision up to the bounds
    wide = np.array([1e18 + 128, -9.2e18, 2.0**63, -(2.0**63) - 4096, np.nan])
    got = cast(Tensor.from_numpy(wide, DEVICE, dtype=DType.F64), to=TensorProto.INT64).to_numpy()
    assert got.tolist() == [10**18 + 128, -9200000000000000000, _I64, _I64, _I64]
    got32 = cast(Tensor.from_numpy(wide[:2] / 1e9, DEVICE, dtype=DType.F64), to=TensorProto.INT32)
    assert got32.to_numpy().tolist() == [1000000000, _I32]
    b = np.array([0, 3, -1], np.int64)
    to_bool = _model(
        [helper.make_node("Cast", ["b"], ["y"], to=TensorProto.BOOL)], {"b": b}, [("y", TensorProto.BOOL)]
    )
    np.testing.assert_array_equal(_run(to_bool, {"b": b})[0], [False, True, True])


# --- Einsum ----------------------------------------------------------------------------------

EQUATIONS = [
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("bhqk,bhkd->bhqd", [(2, 3, 4, 6), (2, 3, 6, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk", [(2, 1, 3, 4), (5, 4, 2)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,i", [(5,), (5,)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("iij->ji", [(3, 3, 2)]),
    ("iii->i", [(3, 3, 3)]),
    ("ij->", [(3, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("ij,ji->ij", [(3, 4), (4, 3)]),
    ("i,j,k->ijk", [(2,), (3,), (4,)]),
    ("Ab,bA->A", [(3, 4), (4, 3)]),
    ("...,...->...", [(2, 3), (3,)]),
    ("i...->...", [(3, 2, 2)]),
    ("ijk,ik->ij", [(2, 1, 3), (2, 3)]),
    ("bhld,lrd->bhlr", [(2, 3, 4, 5), (4, 6, 5)]),
    ("ii,ij->j", [(3, 3), (3, 4)]),
    ("i,->i", [(3,), ()]),
    ("->", [()]),
]


@pytest.mark.parametrize(("equation", "shapes"), EQUATIONS, ids=[e for e, _ in EQUATIONS])
def test_einsum_matches_numpy(equation: str, shapes: list[tuple[int, ...]]) -> None:
    rng = np.random.default_rng(0)
    floats = [rng.normal(size=s).astype(np.float32) for s in shapes]
    got = einsum(*(Tensor.from_numpy(a, DEVICE) for a in floats), equation=equation).to_numpy()
    want = np.einsum(equation, *floats)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    ints = [rng.integers(-3, 4, size=s) for s in shapes]
    got_int = einsum(*(Tensor.from_numpy(a, DEVICE) for a in ints), equation=equation).to_numpy()
    np.testing.assert_array_equal(got_int, np.einsum(equation, *ints))


@pytest.mark.parametrize(
    ("equation", "shapes", "message"),
    [
        ("ij,jk->ik", [(2, 3)], "2 terms for 1 inputs"),
        ("ijk->i", [(2, 3)], "names 3 dims of a rank-2 operand"),
        ("ij,jk->ik", [(2, 3), (4, 5)], "label 'j' .* sizes 3 and 4"),
        ("i1->i", [(2, 2)], "not letters"),
        ("ij->ii", [(2, 2)], "repeats a label"),
        ("ij->k", [(2, 2)], r"output labels \['k'\]"),
        ("i....->i", [(2, 2)], "stray"),
        ("abcd,efgh->abcdefgh", [(1, 1, 1, 1), (1, 1, 1, 1)], "rank 8, above ferrum's 6"),
    ],
)
def test_einsum_refuses_what_does_not_fit(equation: str, shapes: list[tuple[int, ...]], message: str) -> None:
    operands = [Tensor.from_numpy(np.ones(s, np.float32), DEVICE) for s in shapes]
    with pytest.raises(ValueError, match=message):
        einsum(*operands, equation=equation)


def test_einsum_is_differentiable() -> None:
    rng = np.random.default_rng(1)
    a_np, b_np = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4))
    a = Tensor.from_numpy(a_np, TRAIN, dtype=DType.F64).require_grad()
    b = Tensor.from_numpy(b_np, TRAIN, dtype=DType.F64).require_grad()
    weights = rng.normal(size=(2, 3, 5))
    out = einsum(a, b, equation="bik,bjk->bij") * Tensor.from_numpy(weights, TRAIN, dtype=DType.F64)
    grads = out.sum().backward()
    np.testing.assert_allclose(_grad(a, grads), np.einsum("bij,bjk->bik", weights, b_np))
    np.testing.assert_allclose(_grad(b, grads), np.einsum("bij,bik->bjk", weights, a_np))
    # a diagonal and a broadcast sum: the gradient lands on the diagonal only
    m = Tensor.from_numpy(rng.normal(size=(3, 3)), TRAIN, dtype=DType.F64).require_grad()
    grads = einsum(m, equation="ii->").backward()
    np.testing.assert_allclose(_grad(m, grads), np.eye(3))


def test_einsum_in_an_imported_graph_trains_and_generates(tmp_path: Path) -> None:
    x = np.random.default_rng(2).normal(size=(2, 3, 4)).astype(np.float32)
    w = np.random.default_rng(3).normal(size=(4, 5)).astype(np.float32)
    model = _model(
        [helper.make_node("Einsum", ["x", "w"], ["y"], equation="bsd,de->bse")],
        {"x": x},
        [("y", TensorProto.FLOAT)],
        initializers=[numpy_helper.from_array(w, "w")],
    )
    net = load(model, TRAIN)
    y = net.forward(Tensor.from_numpy(x, TRAIN))
    np.testing.assert_allclose(y.to_numpy(), np.einsum("bsd,de->bse", x, w), rtol=1e-5, atol=1e-5)
    grads = y.sum().backward()
    (param,) = [p for _, p in net.named_parameters()]
    want_grad = x.sum(axis=(0, 1))[:, None].repeat(5, 1)
    np.testing.assert_allclose(_grad(param.val(), grads), want_grad, rtol=1e-5)
    onnx.save(model, tmp_path / "einsum.onnx")
    files = generate(tmp_path / "einsum.onnx", tmp_path)
    module = import_generated(files.source, "math_einsum")
    generated = module.load(files.weights, DEVICE)
    out = generated.forward(Tensor.from_numpy(x, DEVICE)).to_numpy()
    np.testing.assert_allclose(out, np.einsum("bsd,de->bse", x, w), rtol=1e-5, atol=1e-5)


# --- Det -------------------------------------------------------------------------------------


def test_det_matches_numpy_with_pivoting_and_singular_matrices() -> None:
    rng = np.random.default_rng(4)
    for shape in [(1, 1), (2, 2), (3, 3), (5, 5), (4, 3, 3), (2, 3, 4, 4)]:
        x = rng.normal(size=shape)
        got = det(Tensor.from_numpy(x, DEVICE, dtype=DType.F64))
        assert got.dims() == shape[:-2]
        np.testing.assert_allclose(got.to_numpy(), np.linalg.det(x), rtol=1e-10, atol=1e-12)
    special = np.array(
        [
            [[0.0, 1.0, 2.0], [0.0, 3.0, 4.0], [0.0, 5.0, 6.0]],  # a zero column
            [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]],  # a zero pivot: one swap
            [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 1.0, 1.0]],  # dependent rows
            [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]],
        ]
    )
    got = det(Tensor.from_numpy(special, DEVICE, dtype=DType.F64)).to_numpy()
    np.testing.assert_allclose(got, np.linalg.det(special), atol=1e-12)
    with pytest.raises(ValueError, match="square"):
        det(Tensor.from_numpy(np.ones((2, 3), np.float32), DEVICE))


def test_det_gradient_is_the_adjugate() -> None:
    x = np.random.default_rng(5).normal(size=(3, 4, 4))
    t = Tensor.from_numpy(x, TRAIN, dtype=DType.F64).require_grad()
    grads = det(t).sum().backward()
    want = np.linalg.det(x)[:, None, None] * np.linalg.inv(x).transpose(0, 2, 1)
    np.testing.assert_allclose(_grad(t, grads), want, rtol=1e-8, atol=1e-10)


# --- Losses ----------------------------------------------------------------------------------


def _loss_model(
    op_type: str, x: np.ndarray, labels: np.ndarray, outputs: int = 1, **attrs: Any
) -> onnx.ModelProto:
    names = ["loss", "log_prob"][:outputs]
    return _model(
        [helper.make_node(op_type, ["x", "t"], names, **attrs)],
        {"x": x, "t": labels},
        [(n, TensorProto.FLOAT) for n in names],
        opset=22 if op_type == "NegativeLogLikelihoodLoss" else 13,
    )


def test_softmax_cross_entropy_with_weights_ignore_index_and_log_prob() -> None:
    rng = np.random.default_rng(6)
    x = rng.normal(size=(3, 4, 2)).astype(np.float32)
    labels = np.array([[0, -7], [3, 1], [-7, -7]], np.int64)  # ignore_index outside [0, C)
    weights = np.array([1.0, 2.0, 0.5, 3.0], np.float32)
    model = _model(
        [
            helper.make_node(
                "SoftmaxCrossEntropyLoss", ["x", "t", "w"], ["loss", "log_prob"], ignore_index=-7
            )
        ],
        {"x": x, "t": labels},
        [("loss", TensorProto.FLOAT), ("log_prob", TensorProto.FLOAT)],
        opset=13,
        initializers=[numpy_helper.from_array(weights, "w")],
    )
    loss, log_prob = _run(model, {"x": x, "t": labels})
    want_log = x - np.log(np.exp(x).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(log_prob, want_log, rtol=1e-5, atol=1e-6)
    kept = labels != -7
    safe = np.where(kept, labels, 0)
    picked = np.take_along_axis(want_log, safe[:, None, :], axis=1)[:, 0, :]
    share = np.where(kept, weights[safe], 0.0)
    assert loss.shape == ()
    np.testing.assert_allclose(loss, -(picked * share).sum() / share.sum(), rtol=1e-5)


def test_losses_refuse_targets_outside_the_classes() -> None:
    x = np.zeros((2, 3), np.float32)
    labels = np.array([0, 3], np.int64)
    for op_type in ("NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"):
        with pytest.raises(OnnxError, match=r"outside the 3 classes"):
            _run(_loss_model(op_type, x, labels), {"x": x, "t": labels})
    with pytest.raises(OnnxError, match="reduction must be"):
        _run(_loss_model("NegativeLogLikelihoodLoss", x, labels, reduction="max"), {"x": x, "t": labels})


def test_every_target_ignored_gives_nan_as_the_reference() -> None:
    x = np.zeros((2, 3), np.float32)
    labels = np.array([1, 1], np.int64)
    (loss,) = _run(_loss_model("NegativeLogLikelihoodLoss", x, labels, ignore_index=1), {"x": x, "t": labels})
    assert np.isnan(loss)


def test_softmax_cross_entropy_gradient_is_softmax_minus_one_hot() -> None:
    rng = np.random.default_rng(7)
    scores = rng.normal(size=(4, 5))
    labels = np.array([1, 0, 4, 2])
    s = Tensor.from_numpy(scores, TRAIN, dtype=DType.F64).require_grad()
    loss, _ = softmax_cross_entropy_loss(s, Tensor.from_numpy(labels, TRAIN), reduction="mean")
    grads = loss.backward()
    soft = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(_grad(s, grads), (soft - np.eye(5)[labels]) / 4, rtol=1e-10)


# --- Lp pooling and normalization --------------------------------------------------------------


def _lp_pool_reference(
    x: np.ndarray,
    kernel: list[int],
    strides: list[int],
    dilations: list[int],
    pads: list[int],
    p: int,
    ceil: bool,
) -> np.ndarray:
    """Loop over every output position, summing |x| ** p over the window's in-bounds taps."""
    n = len(kernel)
    size = x.shape[2:]
    outs = []
    for i in range(n):
        span = (kernel[i] - 1) * dilations[i] + 1
        room = size[i] + pads[i] + pads[i + n] - span
        out = (-(-room // strides[i]) if ceil else room // strides[i]) + 1
        if ceil and (out - 1) * strides[i] >= size[i] + pads[i]:
            out -= 1
        outs.append(out)
    y = np.zeros(x.shape[:2] + tuple(outs))
    for pos in itertools.product(*(range(o) for o in outs)):
        total = np.zeros(x.shape[:2])
        for tap in itertools.product(*(range(k) for k in kernel)):
            at = [pos[i] * strides[i] + tap[i] * dilations[i] - pads[i] for i in range(n)]
            if all(0 <= a < s for a, s in zip(at, size, strict=True)):
                tap_index: Any = (slice(None), slice(None), *at)
                total += np.abs(x[tap_index]) ** p
        out_index: Any = (slice(None), slice(None), *pos)
        y[out_index] = total ** (1.0 / p)
    return y


@pytest.mark.parametrize(
    ("shape", "kernel", "strides", "dilations", "pads", "p", "ceil"),
    [
        ((1, 2, 7), [3], [2], [1], [1, 0], 2, True),
        ((2, 1, 5, 6), [2, 3], [2, 1], [2, 1], [0, 1, 1, 0], 1, False),
        ((1, 2, 5, 5), [2, 2], [2, 2], [1, 1], [0, 0, 0, 0], 3, True),
        ((1, 1, 4, 5, 3), [2, 2, 2], [1, 2, 1], [1, 1, 2], [1, 0, 0, 0, 1, 0], 2, False),
    ],
)
def test_lp_pool_matches_a_loop_reference(
    shape: tuple[int, ...],
    kernel: list[int],
    strides: list[int],
    dilations: list[int],
    pads: list[int],
    p: int,
    ceil: bool,
) -> None:
    x = np.random.default_rng(8).normal(size=shape)
    got = lp_pool(
        Tensor.from_numpy(x, DEVICE, dtype=DType.F64),
        ceil_mode=int(ceil),
        dilations=tuple(dilations),
        kernel_shape=tuple(kernel),
        p=p,
        pads=tuple(pads),
        strides=tuple(strides),
    ).to_numpy()
    want = _lp_pool_reference(x, kernel, strides, dilations, pads, p, ceil)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_global_lp_pool_is_the_norm_over_spatial_dims() -> None:
    x = np.random.default_rng(9).normal(size=(2, 3, 4, 5)).astype(np.float32)
    for p in (1, 2, 3):
        model = _model(
            [helper.make_node("GlobalLpPool", ["x"], ["y"], p=p)], {"x": x}, [("y", TensorProto.FLOAT)]
        )
        want = (np.abs(x) ** p).sum(axis=(2, 3), keepdims=True) ** (1.0 / p)
        np.testing.assert_allclose(_run(model, {"x": x})[0], want, rtol=1e-5)


def test_lp_normalization_of_a_zero_vector_is_zero_with_a_finite_gradient() -> None:
    x = np.array([[3.0, 4.0, 0.0], [0.0, 0.0, 0.0]])
    t = Tensor.from_numpy(x, TRAIN, dtype=DType.F64).require_grad()
    y = lp_normalization(t, axis=1, p=2)
    np.testing.assert_allclose(y.to_numpy(), [[0.6, 0.8, 0.0], [0.0, 0.0, 0.0]])
    grads = y.sum().backward()
    assert np.isfinite(_grad(t, grads)).all()
    with pytest.raises(ValueError, match="p must be 1 or 2"):
        lp_normalization(Tensor.from_numpy(x, DEVICE), p=3)


def test_mean_variance_and_rms_normalization_on_other_axes() -> None:
    x = np.random.default_rng(10).normal(size=(2, 3, 4)).astype(np.float32)
    mvn = _model(
        [helper.make_node("MeanVarianceNormalization", ["x"], ["y"], axes=[-1])],
        {"x": x},
        [("y", TensorProto.FLOAT)],
    )
    centered = x - x.mean(axis=-1, keepdims=True)
    want = centered / (np.sqrt((centered**2).mean(axis=-1, keepdims=True)) + 1e-9)
    np.testing.assert_allclose(_run(mvn, {"x": x})[0], want, rtol=1e-4, atol=1e-5)
    xd = x.astype(np.float64)
    scale = np.random.default_rng(11).normal(size=(3, 4))
    rms = _model(
        [helper.make_node("RMSNormalization", ["x", "s"], ["y"], axis=1, epsilon=1e-3)],
        {"x": xd, "s": scale},
        [("y", TensorProto.DOUBLE)],
    )
    (y,) = _run(rms, {"x": xd, "s": scale})
    assert y.dtype == np.float64
    want_rms = xd / np.sqrt((xd**2).mean(axis=(1, 2), keepdims=True) + 1e-3) * scale
    np.testing.assert_allclose(y, want_rms, rtol=1e-5)


# --- Activations -----------------------------------------------------------------------------


def test_swish_swiglu_and_shrink() -> None:
    x = np.linspace(-3.0, 3.0, 12, dtype=np.float32).reshape(3, 4)
    v = np.random.default_rng(12).normal(size=(3, 4)).astype(np.float32)
    sig = 1.0 / (1.0 + np.exp(-0.5 * x))
    swish = _model([helper.make_node("Swish", ["x"], ["y"], alpha=0.5)], {"x": x}, [("y", TensorProto.FLOAT)])
    np.testing.assert_allclose(_run(swish, {"x": x})[0], x * sig, rtol=1e-5)
    swiglu = _model(
        [helper.make_node("SwiGLU", ["x", "v"], ["y"], alpha=0.5)],
        {"x": x, "v": v},
        [("y", TensorProto.FLOAT)],
        opset=28,
    )
    np.testing.assert_allclose(_run(swiglu, {"x": x, "v": v})[0], x * sig * v, rtol=1e-5, atol=1e-6)
    short = v[:, :1].copy()
    mismatched = _model(
        [helper.make_node("SwiGLU", ["x", "v"], ["y"])], {"x": x, "v": short}, [("y", TensorProto.FLOAT)], 28
    )
    with pytest.raises(OnnxError, match="must have one shape"):
        _run(mismatched, {"x": x, "v": short})
    ints = np.array([-5, -1, 0, 1, 5], np.int64)
    node = helper.make_node("Shrink", ["x"], ["y"], lambd=1.5, bias=1.5)
    shrink = _model([node], {"x": ints}, [("y", TensorProto.INT64)])
    np.testing.assert_array_equal(_run(shrink, {"x": ints})[0], [-3, 0, 0, 0, 3])


# --- Windows ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op_type", "symmetric"),
    [("HannWindow", np.hanning), ("BlackmanWindow", np.blackman), ("HammingWindow", None)],
)
def test_windows_symmetric_periodic_and_double(op_type: str, symmetric: Any) -> None:
    size = np.array(9, np.int64)
    both = _model(
        [
            helper.make_node(op_type, ["n"], ["sym"], periodic=0, output_datatype=TensorProto.DOUBLE),
            helper.make_node(op_type, ["n"], ["per"]),
        ],
        {"n": size},
        [("sym", TensorProto.DOUBLE), ("per", TensorProto.FLOAT)],
        opset=17,
    )
    sym, per = _run(both, {"n": size})
    assert sym.dtype == np.float64 and per.dtype == np.float32
    if symmetric is not None:
        np.testing.assert_allclose(sym, symmetric(9), atol=1e-12)
    else:
        np.testing.assert_allclose(sym, 25 / 46 - 21 / 46 * np.cos(2 * np.pi * np.arange(9) / 8), atol=1e-12)
    # periodic: the symmetric window one longer, without its last value
    longer = _model(
        [helper.make_node(op_type, ["n"], ["y"], periodic=0)], {"n": size}, [("y", TensorProto.FLOAT)], 17
    )
    np.testing.assert_allclose(per, _run(longer, {"n": np.array(10, np.int64)})[0][:9], atol=1e-6)
    one = _run(longer, {"n": np.array(1, np.int64)})[0]
    np.testing.assert_array_equal(one, [1.0])
