"""ferrum.onnx's sequence and optional values beyond the node suite: the Sequence* ops, ConcatFromSequence,
SplitToSequence, SequenceMap and the Optional* ops, through If and Loop, ``OnnxModel.forward`` and
``FerrumBackend``.

Results are checked against onnx's reference evaluator (``onnx.reference``); bad input must give a clear
``OnnxError``, and the code generator must refuse these graphs by name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from ferrum import Tensor
from ferrum.backend import NdArray
from ferrum.onnx import OnnxError, load
from ferrum.onnx.backend import FerrumBackend
from ferrum.onnx.codegen import generate
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

DEVICE = NdArray.device()
F, I64 = TensorProto.FLOAT, TensorProto.INT64
RNG = np.random.default_rng(11)


def _tensor(name: str, elem: int = F, shape: list[Any] | None = None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def _seq(name: str, elem: int = F) -> onnx.ValueInfoProto:
    return helper.make_tensor_sequence_value_info(name, elem, None)


def _opt(name: str, elem: int = F, sequence: bool = False) -> onnx.ValueInfoProto:
    inner = helper.make_tensor_type_proto(elem, None)
    if sequence:
        inner = helper.make_sequence_type_proto(inner)
    return helper.make_value_info(name, helper.make_optional_type_proto(inner))


def _model(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[onnx.ValueInfoProto],
    opset: int = 18,
) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _to_ferrum(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, list):
        return [Tensor.from_numpy(v, DEVICE) for v in value]
    return Tensor.from_numpy(value, DEVICE)


def _to_numpy(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, list):
        return [np.asarray(v.to_numpy()) for v in value]
    return np.asarray(value.to_numpy())


def _ferrum(model: onnx.ModelProto, feeds: dict[str, Any]) -> list[Any]:
    out = load(model, DEVICE).forward(*(_to_ferrum(v) for v in feeds.values()))
    return [_to_numpy(o) for o in (out if isinstance(out, tuple) else (out,))]


def _same(got: Any, want: Any) -> None:
    if want is None:
        assert got is None
        return
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _same(g, w)
        return
    want = np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def _check(model: onnx.ModelProto, feeds: dict[str, Any]) -> None:
    want = ReferenceEvaluator(model).run(None, feeds)
    got = _ferrum(model, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        _same(g, w)


def _x(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize(
    ("split", "axis", "keepdims"),
    [(None, 0, 1), (None, 1, 0), (2, 1, 1), (np.array([1, 3], np.int64), -1, 1), (3, 0, 0)],
)
def test_split_to_sequence_and_back(split: np.ndarray | int | None, axis: int, keepdims: int) -> None:
    x = _x(4, 4)
    inputs, feeds, names = [_tensor("x", F, [4, 4])], {"x": x}, ["x"]
    if split is not None:
        array = np.asarray(split, np.int64)
        inputs.append(_tensor("s", I64, list(array.shape)))
        feeds["s"], names = array, ["x", "s"]
    nodes = [
        helper.make_node("SplitToSequence", names, ["seq"], axis=axis, keepdims=keepdims),
        helper.make_node("SequenceLength", ["seq"], ["n"]),
        helper.make_node("ConcatFromSequence", ["seq"], ["cat"], axis=axis, new_axis=0),
    ]
    outputs = [_seq("seq"), _tensor("n", I64, []), _tensor("cat")]
    if split is None and not keepdims:
        outputs.pop()  # the parts lost the axis: concatenating them along it is another shape
        nodes.pop()
    _check(_model(nodes, inputs, outputs), feeds)


@pytest.mark.parametrize(("axis", "new_axis"), [(0, 1), (-1, 1), (2, 1), (1, 0), (-2, 0)])
def test_concat_from_sequence(axis: int, new_axis: int) -> None:
    nodes = [
        helper.make_node("SequenceConstruct", ["a", "b", "c"], ["seq"]),
        helper.make_node("ConcatFromSequence", ["seq"], ["y"], axis=axis, new_axis=new_axis),
    ]
    inputs = [_tensor(n, F, [2, 3]) for n in "abc"]
    _check(_model(nodes, inputs, [_tensor("y")]), {"a": _x(2, 3), "b": _x(2, 3), "c": _x(2, 3)})


# Not position 3 (n, the back): onnx's reference SequenceInsert takes it modulo n, inserting at the front.
@pytest.mark.parametrize("position", [None, 0, 2, -1, -3])
def test_sequence_insert_at_erase(position: int | None) -> None:
    pos = [] if position is None else ["p"]
    nodes = [
        helper.make_node("SequenceInsert", ["seq", "t", *pos], ["inserted"]),
        helper.make_node("SequenceAt", ["inserted", "p" if pos else "zero"], ["at"]),
        helper.make_node("SequenceErase", ["inserted", *pos], ["erased"]),
    ]
    inputs = [_seq("seq"), _tensor("t", F, [2]), _tensor("p" if pos else "zero", I64, [])]
    feeds = {"seq": [_x(2), _x(1), _x(3)], "t": _x(2), "p": np.array(position or 0, np.int64)}
    if not pos:
        feeds["zero"] = feeds.pop("p")
    outputs = [_seq("inserted"), _tensor("at"), _seq("erased")]
    _check(_model(nodes, inputs, outputs), feeds)


def test_sequence_insert_at_n_appends() -> None:
    node = helper.make_node("SequenceInsert", ["seq", "t", "p"], ["y"])
    model = _model([node], [_seq("seq"), _tensor("t", F, [2]), _tensor("p", I64, [])], [_seq("y")])
    seq, t = [_x(2), _x(2), _x(2)], _x(2)
    # The schema accepts positions in [-n, n]; n inserts at the back.
    _same(_ferrum(model, {"seq": seq, "t": t, "p": np.array(3, np.int64)})[0], [*seq, t])


def test_sequence_empty_and_construct_constants() -> None:
    one = helper.make_tensor("one", F, [2], [1.0, 2.0])
    nodes = [
        helper.make_node("Constant", [], ["c"], value=one),
        helper.make_node("SequenceEmpty", [], ["empty"], dtype=F),
        helper.make_node("SequenceInsert", ["empty", "c"], ["s1"]),
        helper.make_node("SequenceConstruct", ["c", "c"], ["s2"]),
        helper.make_node("SequenceLength", ["empty"], ["n0"]),
    ]
    outputs = [_seq("empty"), _seq("s1"), _seq("s2"), _tensor("n0", I64, [])]
    _check(_model(nodes, [], outputs), {})


def _map_body() -> onnx.GraphProto:
    nodes = [
        helper.make_node("Add", ["a", "b"], ["sum"]),
        helper.make_node("Shape", ["a"], ["shape"]),
    ]
    return helper.make_graph(
        nodes, "body", [_tensor("a"), _tensor("b")], [_tensor("sum"), _tensor("shape", I64, [1])]
    )


@pytest.mark.parametrize("second", ["sequence", "tensor"])
def test_sequence_map(second: str) -> None:
    b_info = _seq("b") if second == "sequence" else _tensor("b", F, [1])
    node = helper.make_node("SequenceMap", ["a", "b"], ["sums", "shapes"], body=_map_body())
    model = _model([node], [_seq("a"), b_info], [_seq("sums"), _seq("shapes", I64)])
    a = [_x(3), _x(1), _x(5)]
    b = [_x(3), _x(1), _x(5)] if second == "sequence" else _x(1)
    _check(model, {"a": a, "b": b})


def test_optional_ops() -> None:
    empty_type = helper.make_tensor_type_proto(F, None)
    nodes = [
        helper.make_node("Optional", ["x"], ["full"]),
        helper.make_node("Optional", [], ["empty"], type=empty_type),
        helper.make_node("OptionalHasElement", ["full"], ["has_full"]),
        helper.make_node("OptionalHasElement", ["empty"], ["has_empty"]),
        helper.make_node("OptionalHasElement", ["x"], ["has_x"]),
        helper.make_node("OptionalGetElement", ["full"], ["got"]),
    ]
    outputs = [_tensor(n, TensorProto.BOOL, []) for n in ("has_full", "has_empty", "has_x")]
    model = _model(nodes, [_tensor("x", F, [2])], [*outputs, _tensor("got"), _opt("empty")])
    x = _x(2)
    # onnx's reference evaluator holds an optional as a one-item list ([None] when empty, which it then
    # reports as having an element): the expected values are the schema's, written here.
    want = [np.array(True), np.array(False), np.array(True), x, None]
    for got, expected in zip(_ferrum(model, {"x": x}), want, strict=True):
        _same(got, expected)


def _if_model() -> onnx.ModelProto:
    then = helper.make_graph(
        [helper.make_node("SplitToSequence", ["x"], ["parts"])], "then", [], [_seq("parts")]
    )
    orelse = helper.make_graph(
        [helper.make_node("SequenceConstruct", ["x"], ["one"])], "else", [], [_seq("one")]
    )
    node = helper.make_node("If", ["cond"], ["seq"], then_branch=then, else_branch=orelse)
    return _model([node], [_tensor("cond", TensorProto.BOOL, []), _tensor("x", F, [3])], [_seq("seq")])


@pytest.mark.parametrize("cond", [True, False])
def test_if_returns_a_sequence(cond: bool) -> None:
    _check(_if_model(), {"cond": np.array(cond), "x": _x(3)})


def _loop_model() -> onnx.ModelProto:
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["c_in"], ["c_out"]),
            helper.make_node("Cast", ["i"], ["fi"], to=F),
            helper.make_node("Add", ["x", "fi"], ["xi"]),
            helper.make_node("SequenceInsert", ["s_in", "xi"], ["s_out"]),
        ],
        "body",
        [_tensor("i", I64, []), _tensor("c_in", TensorProto.BOOL, []), _seq("s_in")],
        [_tensor("c_out", TensorProto.BOOL, []), _seq("s_out")],
    )
    # The condition is given: onnx's reference Loop runs no iteration when it is absent.
    node = helper.make_node("Loop", ["n", "c", "s"], ["s_final"], body=body)
    inputs = [_tensor("n", I64, []), _tensor("c", TensorProto.BOOL, []), _seq("s"), _tensor("x", F, [2])]
    return _model([node], inputs, [_seq("s_final")])


def test_loop_carries_a_sequence() -> None:
    feeds = {"n": np.array(4, np.int64), "c": np.array(True), "s": [_x(2)], "x": _x(2)}
    _check(_loop_model(), feeds)


def test_forward_takes_and_returns_lists_and_none() -> None:
    nodes = [helper.make_node("Identity", ["o"], ["o2"]), helper.make_node("Identity", ["s"], ["s2"])]
    model = load(_model(nodes, [_opt("o", F, True), _seq("s")], [_opt("o2", F, True), _seq("s2")]), DEVICE)
    items = [Tensor.from_numpy(_x(2), DEVICE), Tensor.from_numpy(_x(3), DEVICE)]
    opt, seq = model.forward(None, items)
    assert opt is None
    assert isinstance(seq, list) and [t.dims() for t in seq] == [(2,), (3,)]
    given = [items[0]]
    full, _ = model.forward(given, given)
    assert isinstance(full, list) and full is not given  # forward never hands back the caller's list


def test_backend_runs_sequences_and_optionals() -> None:
    nodes = [
        helper.make_node("OptionalHasElement", ["o"], ["has"]),
        helper.make_node("Identity", ["s"], ["s2"]),
    ]
    model = _model(
        nodes,
        [_opt("o", I64), _seq("s", TensorProto.INT32)],
        [_tensor("has", TensorProto.BOOL, []), _seq("s2", TensorProto.INT32)],
    )
    has, seq = FerrumBackend.run_model(model, [None, [np.array([1, 2], np.int32)]])
    assert not has and isinstance(seq, list) and seq[0].dtype == np.int32 and seq[0].tolist() == [1, 2]
    has, _ = FerrumBackend.run_model(model, [np.array([3], np.int64), []])
    assert has


def _run_error(model: onnx.ModelProto, feeds: dict[str, Any], match: str) -> None:
    with pytest.raises(OnnxError, match=match):
        _ferrum(model, feeds)


@pytest.mark.parametrize(("position", "match"), [(3, "position 3 is out of range"), (-4, "position -4")])
def test_sequence_at_out_of_range(position: int, match: str) -> None:
    node = helper.make_node("SequenceAt", ["seq", "p"], ["y"])
    model = _model([node], [_seq("seq"), _tensor("p", I64, [])], [_tensor("y")])
    _run_error(model, {"seq": [_x(1)] * 3, "p": np.array(position, np.int64)}, match)


def test_bad_sequence_input_errors() -> None:
    seq_len = _model(
        [helper.make_node("SequenceLength", ["seq"], ["n"])], [_seq("seq")], [_tensor("n", I64, [])]
    )
    model = load(seq_len, DEVICE)
    with pytest.raises(OnnxError, match="must be a list of ferrum Tensors"):
        model.forward(Tensor.from_numpy(_x(2), DEVICE))
    with pytest.raises(OnnxError, match="must be a list of ferrum Tensors"):
        model.forward([_x(2)])  # type: ignore[list-item]  # arrays, not tensors: the error under test
    with pytest.raises(OnnxError, match="expected a Float tensor"):
        model.forward([Tensor.from_numpy(np.array([1], np.int64), DEVICE)])


def test_empty_sequence_errors() -> None:
    erase = _model([helper.make_node("SequenceErase", ["seq"], ["y"])], [_seq("seq")], [_seq("y")])
    _run_error(erase, {"seq": []}, "SequenceErase: the sequence is empty")
    concat = helper.make_node("ConcatFromSequence", ["seq"], ["y"], axis=0)
    _run_error(
        _model([concat], [_seq("seq")], [_tensor("y")]), {"seq": []}, "ConcatFromSequence: the sequence"
    )


def test_optional_get_element_of_empty() -> None:
    node = helper.make_node("OptionalGetElement", ["o"], ["y"])
    _run_error(
        _model([node], [_opt("o")], [_tensor("y")]), {"o": None}, "OptionalGetElement: the optional is empty"
    )


def test_mismatches_are_onnx_errors() -> None:
    insert = _model(
        [helper.make_node("SequenceInsert", ["seq", "t"], ["y"])],
        [_seq("seq"), _tensor("t", I64, [1])],
        [_seq("y")],
    )
    with pytest.raises(OnnxError, match="SequenceInsert: a Int tensor into a sequence of Float"):
        load(insert, DEVICE).forward(
            [Tensor.from_numpy(_x(1), DEVICE)], Tensor.from_numpy(np.array([1]), DEVICE)
        )
    split = _model(
        [helper.make_node("SplitToSequence", ["x", "s"], ["y"])],
        [_tensor("x", F, [4]), _tensor("s", I64, [2])],
        [_seq("y")],
    )
    _run_error(split, {"x": _x(4), "s": np.array([1, 2], np.int64)}, "do not add up")
    _run_error(split, {"x": _x(4), "s": np.array([0, 4], np.int64)}, "positive sizes")
    node = helper.make_node("SequenceMap", ["a", "b"], ["sums", "shapes"], body=_map_body())
    mapped = _model([node], [_seq("a"), _seq("b")], [_seq("sums"), _seq("shapes", I64)])
    _run_error(mapped, {"a": [_x(1)] * 2, "b": [_x(1)] * 3}, "input 1 holds 3 tensors, input 0 holds 2")


def test_codegen_refuses_sequences(tmp_path: Path) -> None:
    path = tmp_path / "seq.onnx"
    onnx.save(_loop_model(), path)
    with pytest.raises(OnnxError, match="graph input 's' is an ONNX sequence value"):
        generate(path, tmp_path / "out")
    onnx.save(
        _model(
            [
                helper.make_node("SplitToSequence", ["x"], ["s"]),
                helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0),
            ],
            [_tensor("x", F, [2])],
            [_tensor("y")],
        ),
        path,
    )
    with pytest.raises(OnnxError, match="op SplitToSequence"):
        generate(path, tmp_path / "out")
