"""ferrum.onnx's indexing ops beyond the node suite: GatherND, the scatter family, Compress, Unique,
ReverseSequence, CumSum and CumProd.

Results are checked against onnx's own reference evaluator (``onnx.reference``) on random cases,
against NumPy on the graph patterns torch's dynamo exporter writes (boolean-mask indexing,
multi-tensor indexing, slice assignment), for gradients on the autodiff backend, and through the
code ``python -m ferrum.onnx`` generates.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from ferrum import Tensor
from ferrum._ferrum import OutOfBoundsError
from ferrum.backend import Autodiff, NdArray
from ferrum.onnx import OnnxError, load
from ferrum.onnx.codegen import generate
from ferrum.onnx.ops import index, scatter
from ferrum.optim import GradientsParams
from onnx import TensorProto, helper

from tests.support.onnx_graphs import check_against_reference, ferrum_outputs, graph_model, reference_outputs
from tests.support.onnx_models import import_generated, mypy_strict

Arrays = dict[str, np.ndarray]
DEVICE = NdArray.device()
AD = Autodiff[NdArray].device()


def _model(
    nodes: list[onnx.NodeProto],
    inputs: dict[str, np.ndarray],
    outputs: list[str],
    initializers: dict[str, np.ndarray] | None = None,
    opset: int = 18,
) -> onnx.ModelProto:
    model = graph_model(nodes, inputs, outputs, {"": opset}, initializers)
    model.ir_version = 8
    return model


def _check(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> None:
    check_against_reference(model, inputs, 1e-6)


def _t(array: np.ndarray, device: Any = DEVICE) -> Tensor[Any, Any, Any]:
    return Tensor.from_numpy(array, device)


# --- CumSum's scalar axis (RoBERTa position ids: CumSum(mask, axis=1) with a rank-0 axis)


def _cumsum_rank0_initializer() -> onnx.ModelProto:
    return _model(
        [helper.make_node("CumSum", ["mask", "axis"], ["y"], name="position_ids")],
        {"mask": np.zeros((2, 5), np.int64)},
        ["y"],
        {"axis": np.array(1, np.int64)},
        opset=17,
    )


def _cumsum_computed_axis() -> onnx.ModelProto:
    """The axis is ``a - 1`` for a rank-0 graph input ``a``: a run-time tensor, never a literal."""
    return _model(
        [
            helper.make_node("Sub", ["a", "one"], ["axis"], name="axis_of"),
            helper.make_node("CumSum", ["x", "axis"], ["y"], name="running", exclusive=1),
        ],
        {"x": np.zeros((2, 5), np.float32), "a": np.array(0, np.int64)},
        ["y"],
        {"one": np.array(1, np.int64)},
        opset=17,
    )


MASK = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], np.int64)


def test_cumsum_takes_a_rank0_axis_initializer() -> None:
    (out,) = ferrum_outputs(_cumsum_rank0_initializer(), {"mask": MASK})
    np.testing.assert_array_equal(out, np.cumsum(MASK, axis=1))


def test_cumsum_takes_a_computed_rank0_axis() -> None:
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    model = _cumsum_computed_axis()
    for a in (2, 1, 0):  # axis 1, 0 and -1
        inputs: Arrays = {"x": x, "a": np.array(a, np.int64)}
        (out,) = ferrum_outputs(model, inputs)
        np.testing.assert_array_equal(out, reference_outputs(model, inputs)[0])


def test_generated_code_runs_cumsum_with_a_scalar_axis(tmp_path: Path) -> None:
    onnx.save(_cumsum_rank0_initializer(), tmp_path / "rank0.onnx")
    onnx.save(_cumsum_computed_axis(), tmp_path / "computed.onnx")
    rank0 = generate(tmp_path / "rank0.onnx", tmp_path).source
    computed = generate(tmp_path / "computed.onnx", tmp_path).source
    assert "axis=1" in rank0.read_text()
    net = import_generated(rank0, "cumsum").load(rank0.with_suffix(".mpk"), DEVICE)
    np.testing.assert_array_equal(net.forward(_t(MASK)).to_numpy(), np.cumsum(MASK, axis=1))
    net = import_generated(computed, "cumsum").load(computed.with_suffix(".mpk"), DEVICE)
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    out = net.forward(_t(x), _t(np.array(2, np.int64))).to_numpy()
    np.testing.assert_array_equal(out, np.cumsum(x, axis=1) - x)


def test_trilu_takes_a_rank0_k_initializer() -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    model = _model(
        [helper.make_node("Trilu", ["x", "k"], ["y"])], {"x": x}, ["y"], {"k": np.array(1, np.int64)}
    )
    np.testing.assert_array_equal(ferrum_outputs(model, {"x": x})[0], np.triu(x, 1))


def test_exclusive_cumulative_ops_are_shifted_not_subtracted() -> None:
    # x - x would lose the 1.0 next to 1e8 in f32; the exclusive sum is the inclusive one shifted
    x = np.array([1e8, 1.0, -1e8, 3.0, np.inf], np.float32)
    out = index.cum_sum(_t(x), 0, exclusive=1).to_numpy()
    np.testing.assert_array_equal(out, np.r_[np.float32(0), np.cumsum(x)[:-1]])
    # CumProd: no division, so zeros are fine
    y = np.array([2.0, 0.0, 3.0, 4.0], np.float32)
    np.testing.assert_array_equal(index.cum_prod(_t(y), (0,), exclusive=1).to_numpy(), [1.0, 2.0, 0.0, 0.0])
    np.testing.assert_array_equal(
        index.cum_prod(_t(y), 0, exclusive=1, reverse=1).to_numpy(), [0.0, 12.0, 4.0, 1.0]
    )


# --- GatherND


def _random_gather_nd(seed: int) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 5))
    dims = [int(d) for d in rng.integers(1, 4, rank)]
    b = int(rng.integers(0, rank))
    k = int(rng.integers(0 if b < rank - 1 else 1, rank - b + 1))
    if k == 0:
        k = 1
    m = [int(d) for d in rng.integers(1, 4, int(rng.integers(0, 3)))]
    inner = np.array(dims[b : b + k])
    idx = rng.integers(-inner, inner, size=(*dims[:b], *m, k)).astype(np.int64)
    x = rng.normal(size=dims).astype(np.float32)
    node = helper.make_node("GatherND", ["x", "idx"], ["y"], batch_dims=b)
    return _model([node], {"x": x, "idx": idx}, ["y"], opset=13), {"x": x, "idx": idx}


@pytest.mark.parametrize("seed", range(40))
def test_gather_nd_matches_thereference_outputs(seed: int) -> None:
    _check(*_random_gather_nd(seed))


def test_gather_nd_batch_dims() -> None:
    """batch_dims=2 over [2, 3, 4, 5]: indices [2, 3, 1] pick one row of dim 2 per (i, j)."""
    x = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    picks = np.array([[[3], [0], [-1]], [[1], [2], [0]]], np.int64)
    node = helper.make_node("GatherND", ["x", "idx"], ["y"], batch_dims=2)
    model = _model([node], {"x": x, "idx": picks}, ["y"], opset=13)
    (out,) = ferrum_outputs(model, {"x": x, "idx": picks})
    expected = np.stack([np.stack([x[i, j, picks[i, j, 0]] for j in range(3)]) for i in range(2)])
    np.testing.assert_array_equal(out, expected)
    _check(model, {"x": x, "idx": picks})


def test_gather_nd_of_a_boolean_mask_as_torch_exports_it() -> None:
    """``x[mask]`` for a Bool mask over the leading dims: NonZero -> Transpose -> GatherND (dynamo)."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 4, 3)).astype(np.float32)
    mask = rng.random((2, 4)) > 0.4
    nodes = [
        helper.make_node("NonZero", ["mask"], ["nz"]),
        helper.make_node("Transpose", ["nz"], ["idx"], perm=[1, 0]),
        helper.make_node("GatherND", ["x", "idx"], ["y"], batch_dims=0),
    ]
    model = _model(nodes, {"x": x, "mask": mask}, ["y"])
    (out,) = ferrum_outputs(model, {"x": x, "mask": mask})
    np.testing.assert_array_equal(out, x[mask])


def test_gather_nd_of_several_index_tensors_as_torch_exports_it() -> None:
    """``x[:, i, j]`` for broadcast index tensors: the indexed dims moved to the front, the indices
    stacked on a new last axis, GatherND, and the batch dim moved back (torchlib's aten_index)."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 5, 6, 3)).astype(np.float32)
    i = np.array([[0, 4, -1], [2, 2, 1]], np.int64)  # [2, 3]
    j = np.array([5, 0, -2], np.int64)  # [3], broadcast against i
    nodes = [
        helper.make_node("Transpose", ["x"], ["xt"], perm=[1, 2, 0, 3]),
        helper.make_node("Expand", ["j", "shape"], ["jb"]),
        helper.make_node("Unsqueeze", ["i", "last"], ["iu"]),
        helper.make_node("Unsqueeze", ["jb", "last"], ["ju"]),
        helper.make_node("Concat", ["iu", "ju"], ["idx"], axis=-1),
        helper.make_node("GatherND", ["xt", "idx"], ["g"]),  # [2, 3, batch 2, 3]
        helper.make_node("Transpose", ["g"], ["y"], perm=[2, 0, 1, 3]),
    ]
    consts = {"shape": np.array([2, 3], np.int64), "last": np.array([-1], np.int64)}
    model = _model(nodes, {"x": x, "i": i, "j": j}, ["y"], consts)
    (out,) = ferrum_outputs(model, {"x": x, "i": i, "j": j})
    np.testing.assert_array_equal(out, x[:, i, j])


def test_gather_nd_refuses_an_index_that_a_flat_view_would_alias() -> None:
    x = _t(np.arange(6, dtype=np.float32).reshape(2, 3))
    # [0, 3] is row 1, column 0 in a flat view: it must raise, not read x[1, 0]
    with pytest.raises(OutOfBoundsError, match="index 3"):
        index.gather_nd(x, _t(np.array([[0, 3]], np.int64)))
    with pytest.raises(OutOfBoundsError, match="index -3"):
        index.gather_nd(x, _t(np.array([[-3, 0]], np.int64)))
    node = helper.make_node("GatherND", ["x", "idx"], ["y"], name="pick")
    idx = np.array([[0, 3]], np.int64)
    model = _model([node], {"x": np.zeros((2, 3), np.float32), "idx": idx}, ["y"])
    with pytest.raises(OnnxError, match="pick"):
        ferrum_outputs(model, {"x": np.zeros((2, 3), np.float32), "idx": idx})


def test_gather_nd_is_differentiable() -> None:
    rng = np.random.default_rng(2)
    x_np = rng.normal(size=(2, 3, 4)).astype(np.float32)
    idx_np = np.array([[[0], [2], [0]], [[1], [1], [-1]]], np.int64)  # batch_dims=1: [2, 3, 1]
    x = _t(x_np, AD).require_grad()
    y = index.gather_nd(x, _t(idx_np, AD), batch_dims=1)
    weights = rng.normal(size=y.dims()).astype(np.float32)
    grad = x.grad((y * _t(weights, AD)).sum().backward())
    assert grad is not None
    expected = np.zeros_like(x_np)
    for b in range(2):
        for m in range(3):
            expected[b, idx_np[b, m, 0] % 3] += weights[b, m]
    np.testing.assert_allclose(grad.to_numpy(), expected, rtol=1e-6)


def test_an_imported_graph_trains_through_gather_nd_and_scatter_nd() -> None:
    """Under Autodiff, a parameter read through GatherND and written by ScatterND gets its gradient."""
    table = np.arange(12, dtype=np.float32).reshape(4, 3)
    nodes = [
        helper.make_node("Mul", ["table", "x"], ["scaled"]),
        helper.make_node("GatherND", ["scaled", "rows"], ["picked"]),  # [2, 3]
        helper.make_node("ScatterND", ["x", "rows", "picked"], ["y"], reduction="mul"),
    ]
    rows = np.array([[3], [1]], np.int64)
    inputs: Arrays = {"x": np.full((4, 3), 2.0, np.float32)}
    model = load(_model(nodes, inputs, ["y"], {"table": table, "rows": rows}), AD)
    out = model.forward(_t(inputs["x"], AD))
    expected_out = inputs["x"].copy()
    expected_out[[3, 1]] = 4.0 * table[[3, 1]]  # x * (table * x)
    np.testing.assert_array_equal(out.inner().to_numpy(), expected_out)
    grads = GradientsParams.from_grads(out.sum().backward(), model)
    ((_, param),) = list(model.named_parameters())
    grad = grads.get(param.id)
    assert grad is not None
    expected = np.zeros_like(table)
    expected[[3, 1]] = 4.0  # d(x^2 * table)/d table
    np.testing.assert_array_equal(grad.to_numpy(), expected)


# --- ScatterND


def _random_scatter_nd(seed: int, reduction: str) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 4))
    dims = [int(d) for d in rng.integers(1, 5, rank)]
    k = int(rng.integers(1, rank + 1))
    m = [int(d) for d in rng.integers(1, 5, int(rng.integers(1, 3)))]
    inner = np.array(dims[:k])
    idx = rng.integers(-inner, inner, size=(*m, k)).astype(np.int64)
    if reduction == "none":  # duplicates are undefined without a reduction: keep the first of each
        flat = np.ravel_multi_index(tuple((idx % inner).reshape(-1, k).T), dims[:k])
        _, first = np.unique(flat, return_index=True)
        idx = idx.reshape(-1, k)[np.sort(first)]
        m = [idx.shape[0]]
    x = rng.normal(size=dims).astype(np.float32)
    updates = rng.normal(size=(*m, *dims[k:])).astype(np.float32)
    node = helper.make_node("ScatterND", ["x", "idx", "u"], ["y"], reduction=reduction)
    inputs: Arrays = {"x": x, "idx": idx, "u": updates}
    return _model([node], inputs, ["y"]), inputs


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
@pytest.mark.parametrize("seed", range(16))
def test_scatter_nd_matches_thereference_outputs(seed: int, reduction: str) -> None:
    _check(*_random_scatter_nd(seed, reduction))


@pytest.mark.parametrize("reduction", ["add", "mul", "max", "min"])
def test_scatter_nd_reduces_every_update_of_a_much_hit_row(reduction: str) -> None:
    """37 updates on one row and a few on others: the pairwise tree takes 6 levels."""
    rng = np.random.default_rng(3)
    rows = np.r_[np.zeros(37, np.int64), [2, 4, 2, 4, 4]].reshape(-1, 1)
    rng.shuffle(rows)
    x = rng.uniform(0.5, 1.5, size=(5, 2)).astype(np.float32)
    u = rng.uniform(0.9, 1.1, size=(rows.shape[0], 2)).astype(np.float32)
    node = helper.make_node("ScatterND", ["x", "idx", "u"], ["y"], reduction=reduction)
    inputs: Arrays = {"x": x, "idx": rows, "u": u}
    model = _model([node], inputs, ["y"])
    got, want = ferrum_outputs(model, inputs)[0], reference_outputs(model, inputs)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_scatter_nd_without_reduction_keeps_the_last_duplicate() -> None:
    x = _t(np.zeros((3, 2), np.float32))
    idx = _t(np.array([[1], [0], [1]], np.int64))
    u = _t(np.array([[1, 1], [2, 2], [3, 3]], np.float32))
    np.testing.assert_array_equal(scatter.scatter_nd(x, idx, u).to_numpy(), [[2, 2], [3, 3], [0, 0]])


def test_scatter_nd_on_int_and_bool_data() -> None:
    xi = np.arange(6, dtype=np.int64).reshape(2, 3)
    idx = np.array([[0, 2], [1, 0], [0, 2]], np.int64)
    ui = np.array([10, 20, 30], np.int64)
    for reduction in ("add", "mul", "max", "min"):
        node = helper.make_node("ScatterND", ["x", "idx", "u"], ["y"], reduction=reduction)
        inputs: Arrays = {"x": xi, "idx": idx, "u": ui}
        _check(_model([node], inputs, ["y"]), inputs)
    xb = np.array([[True, False, True], [False, False, True]])
    ub = np.array([False, True, True])
    out = scatter.scatter_nd(_t(xb), _t(idx[:2]), _t(ub[:2])).to_numpy()
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, [[True, False, False], [True, False, True]])
    out = scatter.scatter_nd(_t(xb), _t(idx), _t(ub), reduction="add").to_numpy()
    np.testing.assert_array_equal(out, [[True, False, True], [True, False, True]])


def _slice_scatter(
    nodes: list[onnx.NodeProto], consts: Arrays, x: str, src: str, dim: int, start: int, end: int, tag: str
) -> str:
    """torchlib's aten_slice_scatter: Range over the dim, Slice it, Unsqueeze to [n, 1], swap the dim
    to the front, ScatterND, swap back. Returns the output's name."""
    consts[f"{tag}_dim"] = np.array(dim, np.int64)
    consts[f"{tag}_se"] = np.array([start, end], np.int64)
    perm = list(range(4))
    perm[0], perm[dim] = perm[dim], perm[0]
    nodes += [
        helper.make_node("Shape", [x], [f"{tag}_shape"]),
        helper.make_node("Gather", [f"{tag}_shape", f"{tag}_dim"], [f"{tag}_size"], axis=0),
        helper.make_node("Range", ["zero", f"{tag}_size", "one"], [f"{tag}_range"]),
        helper.make_node("Split", [f"{tag}_se"], [f"{tag}_start", f"{tag}_end"], num_outputs=2, axis=0),
        helper.make_node("Slice", [f"{tag}_range", f"{tag}_start", f"{tag}_end", "axis0"], [f"{tag}_idx"]),
        helper.make_node("Unsqueeze", [f"{tag}_idx", "last"], [f"{tag}_index"]),
        helper.make_node("Transpose", [src], [f"{tag}_src"], perm=perm),
        helper.make_node("Transpose", [x], [f"{tag}_self"], perm=perm),
        helper.make_node("ScatterND", [f"{tag}_self", f"{tag}_index", f"{tag}_src"], [f"{tag}_out"]),
        helper.make_node("Transpose", [f"{tag}_out"], [f"{tag}_y"], perm=perm),
    ]
    return f"{tag}_y"


def test_scatter_nd_slice_assignment_as_torch_exports_it() -> None:
    """Swin's attention mask, ``img_mask[:, h0:h1, w0:w1, :] = cnt`` for three windows: dynamo writes
    slice + slice_scatter along W inside a slice_scatter along H, each a ScatterND on [n, 1] indices."""
    data = np.zeros((1, 6, 6, 1), np.float32)
    expected = data.copy()
    nodes: list[onnx.NodeProto] = []
    consts: Arrays = {
        "zero": np.array(0, np.int64),
        "one": np.array(1, np.int64),
        "axis0": np.array([0], np.int64),
        "last": np.array([-1], np.int64),
    }
    value = "x"
    for n, (h, w) in enumerate([((0, 3), (0, 3)), ((0, 3), (3, 6)), ((3, 6), (0, 6))]):
        expected[:, h[0] : h[1], w[0] : w[1], :] = n + 1
        consts[f"h{n}"] = np.array([h[0]], np.int64)
        consts[f"h{n}_end"] = np.array([h[1]], np.int64)
        consts[f"d{n}"] = np.array([1], np.int64)
        consts[f"cnt{n}"] = np.full((1, h[1] - h[0], w[1] - w[0], 1), n + 1, np.float32)
        nodes.append(helper.make_node("Slice", [value, f"h{n}", f"h{n}_end", f"d{n}"], [f"rows{n}"]))
        filled = _slice_scatter(nodes, consts, f"rows{n}", f"cnt{n}", 2, *w, tag=f"w{n}")
        value = _slice_scatter(nodes, consts, value, filled, 1, *h, tag=f"h{n}")
    nodes.append(helper.make_node("Identity", [value], ["y"]))
    model = _model(nodes, {"x": data}, ["y"], consts)
    np.testing.assert_array_equal(ferrum_outputs(model, {"x": data})[0], expected)
    _check(model, {"x": data})


def test_scatter_nd_of_masked_and_indexed_assignment_as_torch_exports_it() -> None:
    """``x[mask] = v`` (index_put with a Bool mask: the mask expanded, NonZero, one element index per
    selected element) and ``x[i] += v`` (index_put with accumulate: reduction add, repeated rows)."""
    rng = np.random.default_rng(8)
    x = rng.normal(size=(3, 4)).astype(np.float32)
    mask = np.array([True, False, True])
    nodes = [
        helper.make_node("Unsqueeze", ["mask", "last"], ["m1"]),
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Expand", ["m1", "shape"], ["m2"]),
        helper.make_node("NonZero", ["m2"], ["nz"]),
        helper.make_node("Transpose", ["nz"], ["sel"], perm=[1, 0]),
        helper.make_node("Cast", ["mask"], ["mi"], to=TensorProto.INT64),
        helper.make_node("ReduceSum", ["mi"], ["count"], keepdims=1),
        helper.make_node("Concat", ["count", "trailing"], ["sel_shape"], axis=0),
        helper.make_node("Expand", ["v", "sel_shape"], ["vs"]),
        helper.make_node("Reshape", ["vs", "last"], ["flat"]),
        helper.make_node("ScatterND", ["x", "sel", "flat"], ["masked"]),
        helper.make_node("Unsqueeze", ["rows", "last"], ["rows1"]),
        helper.make_node("ScatterND", ["masked", "rows1", "add"], ["y"], reduction="add"),
    ]
    rows = np.array([1, 0, 1], np.int64)
    add = rng.normal(size=(3, 4)).astype(np.float32)
    consts: Arrays = {
        "last": np.array([-1], np.int64),
        "trailing": np.array([4], np.int64),
        "v": np.array([7.0], np.float32),
        "rows": rows,
        "add": add,
    }
    model = _model(nodes, {"x": x, "mask": mask}, ["y"], consts)
    expected = x.copy()
    expected[mask] = 7.0
    np.add.at(expected, rows, add)
    np.testing.assert_allclose(ferrum_outputs(model, {"x": x, "mask": mask})[0], expected, rtol=1e-6)


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
def test_scatter_nd_is_differentiable(reduction: str) -> None:
    rng = np.random.default_rng(4)
    x_np = rng.uniform(0.5, 2.0, size=(4, 3)).astype(np.float32)
    rows = np.array([[2], [0], [2]] if reduction != "none" else [[2], [0]], np.int64)
    u_np = rng.uniform(0.5, 2.0, size=(rows.shape[0], 3)).astype(np.float32)
    w_np = rng.normal(size=(4, 3)).astype(np.float32)

    def loss(x: np.ndarray, u: np.ndarray) -> float:
        out = x.astype(np.float64).copy()
        for r, row in zip(rows[:, 0], u.astype(np.float64), strict=True):
            out[r] = {
                "none": row,
                "add": out[r] + row,
                "mul": out[r] * row,
                "max": np.maximum(out[r], row),
                "min": np.minimum(out[r], row),
            }[reduction]
        return float((out * w_np).sum())

    x, u = _t(x_np, AD).require_grad(), _t(u_np, AD).require_grad()
    y = scatter.scatter_nd(x, _t(rows, AD), u, reduction=reduction)
    grads = (y * _t(w_np, AD)).sum().backward()
    for tensor, array, which in ((x, x_np, 0), (u, u_np, 1)):
        grad = tensor.grad(grads)
        assert grad is not None
        numeric = np.zeros(array.shape)
        eps = 1e-3
        for pos in np.ndindex(*array.shape):
            step = np.zeros(array.shape)
            step[pos] = eps
            args = [x_np.astype(np.float64), u_np.astype(np.float64)]
            plus, minus = list(args), list(args)
            plus[which], minus[which] = args[which] + step, args[which] - step
            numeric[pos] = (loss(*plus) - loss(*minus)) / (2 * eps)
        np.testing.assert_allclose(grad.to_numpy(), numeric, rtol=1e-3, atol=1e-3, err_msg=f"{which}")


def test_scatter_nd_refuses_bad_shapes_and_indices() -> None:
    x = _t(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="updates have shape"):
        scatter.scatter_nd(x, _t(np.array([[0]], np.int64)), _t(np.zeros((1, 2), np.float32)))
    with pytest.raises(OutOfBoundsError):
        scatter.scatter_nd(x, _t(np.array([[0, 3]], np.int64)), _t(np.zeros(1, np.float32)))
    with pytest.raises(ValueError, match="reduction"):
        scatter.scatter_nd(x, _t(np.array([[0]], np.int64)), _t(np.zeros((1, 3), np.float32)), "sum")


# --- ScatterElements and Scatter


def _random_scatter_elements(seed: int, reduction: str) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 4))
    dims = [int(d) for d in rng.integers(1, 5, rank)]
    axis = int(rng.integers(-rank, rank))
    shape = [int(rng.integers(1, d + 1)) for d in dims]
    size = dims[axis]
    if reduction == "none":  # distinct targets along the axis for each position
        shape[axis] = int(rng.integers(1, size + 1))
        idx = np.argsort(rng.random([*shape[: axis % rank], size, *shape[axis % rank + 1 :]]), axis=axis)
        idx = np.take(idx, np.arange(shape[axis]), axis=axis)
        idx = np.where(rng.random(idx.shape) < 0.5, idx - size, idx)
    else:
        shape[axis] = int(rng.integers(1, 6))
        idx = rng.integers(-size, size, size=shape)
    x = rng.normal(size=dims).astype(np.float32)
    u = rng.normal(size=idx.shape).astype(np.float32)
    node = helper.make_node("ScatterElements", ["x", "idx", "u"], ["y"], axis=axis, reduction=reduction)
    inputs: Arrays = {"x": x, "idx": idx.astype(np.int64), "u": u}
    return _model([node], inputs, ["y"]), inputs


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
@pytest.mark.parametrize("seed", range(16))
def test_scatter_elements_matches_thereference_outputs(seed: int, reduction: str) -> None:
    _check(*_random_scatter_elements(seed, reduction))


def test_scatter_at_opset_10_is_scatter_elements() -> None:
    x = np.zeros((3, 3), np.float32)
    idx = np.array([[1, 0, 2], [0, 2, -2]], np.int64)
    u = np.arange(6, dtype=np.float32).reshape(2, 3)
    node = helper.make_node("Scatter", ["x", "idx", "u"], ["y"], axis=0)
    inputs: Arrays = {"x": x, "idx": idx, "u": u}
    (out,) = ferrum_outputs(_model([node], inputs, ["y"], opset=10), inputs)
    expected = x.copy()
    for i in range(2):
        for j in range(3):
            expected[idx[i, j] % 3, j] = u[i, j]
    np.testing.assert_array_equal(out, expected)


def test_scatter_elements_is_differentiable() -> None:
    x = _t(np.ones((2, 3), np.float32), AD).require_grad()
    u = _t(np.full((1, 3), 5.0, np.float32), AD).require_grad()
    idx = _t(np.array([[1, -2, 0]], np.int64), AD)
    y = scatter.scatter_elements(x, idx, u, axis=0, reduction="mul")
    # column 0 goes to row 1, columns 1 (-2) and 2 to row 0
    np.testing.assert_array_equal(y.inner().to_numpy(), [[1, 5, 5], [5, 1, 1]])
    grads = y.sum().backward()
    gx, gu = x.grad(grads), u.grad(grads)
    assert gx is not None and gu is not None
    np.testing.assert_array_equal(gx.to_numpy(), [[1, 5, 5], [5, 1, 1]])
    np.testing.assert_array_equal(gu.to_numpy(), [[1, 1, 1]])


# --- TensorScatter


def _tensor_scatter_numpy(
    cache: np.ndarray, update: np.ndarray, starts: np.ndarray, axis: int, mode: str
) -> np.ndarray:
    out = cache.copy()
    axis %= cache.ndim
    for prefix in np.ndindex(*cache.shape[:axis]):
        for i in range(update.shape[axis]):
            pos = starts[prefix[0]] + i
            if mode == "circular":
                pos %= cache.shape[axis]
            out[(*prefix, pos)] = update[(*prefix, i)]
    return out


@pytest.mark.parametrize(("axis", "mode"), [(-2, "linear"), (2, "circular"), (1, "linear"), (-1, "circular")])
def test_tensor_scatter_writes_each_entry_at_its_index(axis: int, mode: str) -> None:
    rng = np.random.default_rng(5)
    cache = rng.normal(size=(3, 5, 6, 4)).astype(np.float32)
    shape = list(cache.shape)
    shape[axis] = 3
    update = rng.normal(size=shape).astype(np.float32)
    span = cache.shape[axis]
    starts = np.array([0, span - 3, 1] if mode == "linear" else [5, 2, span - 1], np.int64)
    node = helper.make_node("TensorScatter", ["cache", "update", "idx"], ["y"], axis=axis, mode=mode)
    inputs: Arrays = {"cache": cache, "update": update, "idx": starts}
    (out,) = ferrum_outputs(_model([node], inputs, ["y"], opset=24), inputs)
    np.testing.assert_array_equal(out, _tensor_scatter_numpy(cache, update, starts, axis, mode))


def test_tensor_scatter_without_write_indices_and_out_of_range() -> None:
    cache = np.zeros((2, 5, 3), np.float32)
    update = np.ones((2, 2, 3), np.float32)
    out = scatter.tensor_scatter(_t(cache), _t(update), axis=1).to_numpy()
    np.testing.assert_array_equal(
        out, _tensor_scatter_numpy(cache, update, np.zeros(2, np.int64), 1, "linear")
    )
    with pytest.raises(ValueError, match="outside"):
        scatter.tensor_scatter(_t(cache), _t(update), _t(np.array([0, 4], np.int64)), axis=1)


# --- Compress, Unique, ReverseSequence


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_compress(axis: int | None) -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    cond = np.array([True, False, True])
    attrs: dict[str, Any] = {} if axis is None else {"axis": axis}
    node = helper.make_node("Compress", ["x", "c"], ["y"], **attrs)
    inputs: Arrays = {"x": x, "c": cond}
    _check(_model([node], inputs, ["y"]), inputs)
    none = {"x": x, "c": np.zeros(3, bool)}
    assert ferrum_outputs(_model([node], none, ["y"]), none)[0].size == 0


X_UNIQUE = np.array([[2.0, 1.0, 2.0, 1.0], [0.0, 3.0, 0.0, 3.0], [2.0, 1.0, 2.0, 1.0]], np.float32)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_unique_sorted_matches_thereference_outputs(axis: int | None) -> None:
    attrs: dict[str, Any] = {} if axis is None else {"axis": axis}
    node = helper.make_node("Unique", ["x"], ["y", "indices", "inverse", "counts"], **attrs)
    _check(_model([node], {"x": X_UNIQUE}, ["y", "indices", "inverse", "counts"], opset=11), {"x": X_UNIQUE})


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_unique_unsorted_keeps_the_order_of_first_occurrence(axis: int | None) -> None:
    """Checked by its definition: onnx's reference takes ``y`` along axis 0 of the unflattened input
    when ``sorted=0``, which is right only for 1-D inputs."""
    y, first, inverse, counts = (
        np.asarray(t.to_numpy()) for t in index.unique(_t(X_UNIQUE), axis=axis, sorted=0)
    )
    x = X_UNIQUE.reshape(-1) if axis is None else X_UNIQUE
    dim = 0 if axis is None else axis
    assert (np.diff(first) > 0).all()
    np.testing.assert_array_equal(y, np.take(x, first, axis=dim))
    np.testing.assert_array_equal(np.take(y, inverse, axis=dim), x)
    np.testing.assert_array_equal(counts, np.bincount(inverse))
    assert y.shape[dim] == np.unique(x, axis=None if axis is None else dim).shape[dim]


def test_unique_values_are_differentiable() -> None:
    x = _t(np.array([3.0, 1.0, 3.0, 2.0], np.float32), AD).require_grad()
    y, first, inverse, counts = index.unique(x)
    np.testing.assert_array_equal(y.inner().to_numpy(), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(inverse.inner().to_numpy(), [2, 0, 2, 1])
    np.testing.assert_array_equal(counts.inner().to_numpy(), [1, 1, 2])
    grad = x.grad((y * _t(np.array([1.0, 10.0, 100.0], np.float32), AD)).sum().backward())
    assert grad is not None
    # each unique value comes from its first occurrence
    np.testing.assert_array_equal(grad.to_numpy(), [100.0, 1.0, 0.0, 10.0])
    np.testing.assert_array_equal(first.inner().to_numpy(), [1, 3, 0])


@pytest.mark.parametrize(("batch_axis", "time_axis"), [(1, 0), (0, 1)])
def test_reverse_sequence(batch_axis: int, time_axis: int) -> None:
    rng = np.random.default_rng(6)
    shape = [5, 4, 2] if time_axis == 0 else [4, 5, 2]
    x = rng.normal(size=shape).astype(np.float32)
    lens = np.array([5, 0, 1, 3], np.int64)
    node = helper.make_node(
        "ReverseSequence", ["x", "lens"], ["y"], batch_axis=batch_axis, time_axis=time_axis
    )
    inputs: Arrays = {"x": x, "lens": lens}
    _check(_model([node], inputs, ["y"], opset=10), inputs)
    xt = _t(x, AD).require_grad()
    y = index.reverse_sequence(xt, _t(lens, AD), batch_axis=batch_axis, time_axis=time_axis)
    grad = xt.grad(
        (y * _t(np.arange(y.num_elements(), dtype=np.float32).reshape(shape), AD)).sum().backward()
    )
    assert grad is not None
    # the reversal permutes each batch entry's steps: the gradient is the weights reversed the same way
    weights = np.arange(x.size, dtype=np.float32).reshape(shape)
    inputs_w: Arrays = {"x": weights, "lens": lens}
    np.testing.assert_array_equal(
        grad.to_numpy(), reference_outputs(_model([node], inputs_w, ["y"], opset=10), inputs_w)[0]
    )


# --- code generation


def test_generated_code_of_the_new_ops_passes_mypy_and_runs(tmp_path: Path) -> None:
    """GatherND, ScatterND, Unique (a tuple) and CumProd with a rank-0 axis literal: one generated module."""
    nodes = [
        helper.make_node("GatherND", ["x", "rows"], ["g"], name="pick"),
        helper.make_node("ScatterND", ["x", "rows", "g"], ["s"], name="put", reduction="add"),
        helper.make_node("CumProd", ["s", "axis"], ["c"], name="running"),
        helper.make_node("Unique", ["c"], ["u", "first", "inverse", "counts"], name="distinct"),
    ]
    consts = {"rows": np.array([[1], [1]], np.int64), "axis": np.array(-1, np.int64)}
    x = np.array([[1.0, 2.0], [3.0, 1.0]], np.float32)
    model = _model(nodes, {"x": x}, ["u", "counts"], consts, opset=26)
    onnx.save(model, tmp_path / "index_ops.onnx")
    files = generate(tmp_path / "index_ops.onnx", tmp_path)
    status, report = mypy_strict([files.source], tmp_path)
    assert status == 0, report
    net = import_generated(files.source, "index_ops").load(files.weights, DEVICE)
    u, counts = net.forward(_t(x))
    s = x.copy()
    s[1] += 2 * x[1]
    values, found = np.unique(np.cumprod(s, axis=-1), return_counts=True)
    np.testing.assert_array_equal(u.to_numpy(), values)
    np.testing.assert_array_equal(counts.to_numpy(), found)
    np.testing.assert_array_equal(u.to_numpy(), reference_outputs(model, {"x": x})[0])


def test_empty_selections_and_writes() -> None:
    """An all-False mask gives GatherND no index tuple and ScatterND nothing to write."""
    x = _t(np.arange(24, dtype=np.float32).reshape(2, 4, 3))
    none = _t(np.zeros((0, 2), np.int64))
    assert index.gather_nd(x, none).dims() == (0, 3)
    assert index.gather_nd(x, _t(np.zeros((2, 0, 1), np.int64)), batch_dims=1).dims() == (2, 0, 3)
    np.testing.assert_array_equal(
        scatter.scatter_nd(x, none, _t(np.zeros((0, 3), np.float32))).to_numpy(), x.to_numpy()
    )
    empty = _t(np.zeros((2, 0, 3), np.int64))
    out = scatter.scatter_elements(x, empty, _t(np.zeros((2, 0, 3), np.float32)), axis=1)
    np.testing.assert_array_equal(out.to_numpy(), x.to_numpy())
    assert index.compress(x, _t(np.zeros(4, bool)), axis=1).dims() == (2, 0, 3)
    # a full index tuple picks one element: a rank-0 result
    assert float(index.gather_nd(x, _t(np.array([1, 2, 0], np.int64))).to_numpy()) == 18.0
