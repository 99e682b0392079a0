"""ferrum.onnx's string tensors beyond the node suite: StringConcat, StringSplit, StringNormalizer,
RegexFullMatch, TfIdfVectorizer, LabelEncoder and Equal on strings, through ``FerrumBackend`` and
``OnnxModel.forward``, with constant folding and control flow.

A string tensor is a NumPy array of dtype object holding ``str``, never a ferrum tensor. Results are checked
against onnx's reference evaluator (``onnx.reference``) or values written by hand from the spec; bad input
must give a clear ``OnnxError``, and the code generator must refuse string graphs naming the value.
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
from ferrum.onnx.ops.strings import python_pattern
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

DEVICE = NdArray.device()
S, F, I64, B = TensorProto.STRING, TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def _info(name: str, elem: int, shape: list[Any] | None = None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def _model(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[onnx.ValueInfoProto],
    opset: int = 20,
    initializers: list[onnx.TensorProto] | None = None,
) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "strings", inputs, outputs, initializers or [])
    opsets = [helper.make_opsetid("", opset), helper.make_opsetid("ai.onnx.ml", 4)]
    return helper.make_model(graph, opset_imports=opsets)


def _strings(*items: Any) -> np.ndarray[Any, Any]:
    out = np.empty(len(items), dtype=object)
    out[:] = list(items)
    return out


def _check(model: onnx.ModelProto, *feeds: np.ndarray[Any, Any]) -> tuple[Any, ...]:
    """Run ``model`` through FerrumBackend and the reference evaluator; their outputs must agree."""
    names = [i.name for i in model.graph.input]
    expected = ReferenceEvaluator(model).run(None, dict(zip(names, feeds, strict=True)))
    got = FerrumBackend.run_model(model, list(feeds))
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        e = np.asarray(e)
        assert g.shape == e.shape
        if e.dtype.kind in "OU":
            assert g.dtype == object and all(isinstance(v, str) for v in g.reshape(-1))
            assert g.tolist() == e.astype(object).tolist()
        else:
            np.testing.assert_allclose(g.astype(np.float64), e.astype(np.float64))
    return got


def _node_model(op: str, x_shape: list[Any] | None = None, out: int = S, **attrs: Any) -> onnx.ModelProto:
    node = helper.make_node(op, ["x"], ["y"], domain="ai.onnx.ml" if op == "LabelEncoder" else "", **attrs)
    return _model([node], [_info("x", S, x_shape)], [_info("y", out)])


# --- the ops, against the reference evaluator ---------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "y"),
    [
        (_strings("a", "bc"), _strings("-", "é")),
        (np.array([["x"], ["y"]], dtype=object), _strings("1", "2", "3")),  # [2, 1] with [3]
        (np.array("cat", dtype=object), np.array("s", dtype=object)),
    ],
)
def test_string_concat_broadcasts(x: np.ndarray[Any, Any], y: np.ndarray[Any, Any]) -> None:
    node = helper.make_node("StringConcat", ["x", "y"], ["z"])
    _check(_model([node], [_info("x", S), _info("y", S)], [_info("z", S)]), x, y)


@pytest.mark.parametrize(
    "attrs",
    [{"delimiter": ","}, {"delimiter": ",", "maxsplit": 1}, {}, {"maxsplit": 1}, {"delimiter": ", "}],
)
def test_string_split(attrs: dict[str, Any]) -> None:
    x = np.array([["a,b,,c", ""], ["  one two  three ", "x, y"]], dtype=object)
    node = helper.make_node("StringSplit", ["x"], ["y", "n"], **attrs)
    model = _model([node], [_info("x", S, [2, 2])], [_info("y", S), _info("n", I64)])
    _check(model, x)


def test_string_split_by_hand() -> None:
    node = helper.make_node("StringSplit", ["x"], ["y", "n"], delimiter="-", maxsplit=1)
    model = _model([node], [_info("x", S, [3])], [_info("y", S), _info("n", I64)])
    parts, counts = FerrumBackend.run_model(model, [_strings("a-b-c", "d", "")])
    assert parts.tolist() == [["a", "b-c"], ["d", ""], ["", ""]]
    assert counts.tolist() == [2, 1, 1]


@pytest.mark.parametrize(
    ("shape", "attrs"),
    [
        ([4], {"case_change_action": "LOWER", "stopwords": ["Mon"]}),
        ([1, 4], {"case_change_action": "UPPER", "stopwords": ["mon", "tue"], "is_case_sensitive": 1}),
        ([4], {"case_change_action": "NONE"}),
    ],
)
def test_string_normalizer(shape: list[int], attrs: dict[str, Any]) -> None:
    x = np.array(["Mon", "tue", "mon", "Wed"], dtype=object).reshape(shape)
    _check(_node_model("StringNormalizer", shape, **attrs), x)


def test_string_normalizer_by_hand() -> None:
    """Stop words match whole elements ignoring case; all dropped gives ``[""]`` (``[[""]]`` for [1, C])."""
    model = _node_model("StringNormalizer", [2], stopwords=["MONDAY"], case_change_action="UPPER")
    assert FerrumBackend.run_model(model, [_strings("monday", "Friday")])[0].tolist() == ["FRIDAY"]
    assert FerrumBackend.run_model(model, [_strings("Monday", "monday")])[0].tolist() == [""]
    wide = _node_model("StringNormalizer", [1, 2], stopwords=["a"])
    assert FerrumBackend.run_model(wide, [np.array([["a", "A"]], dtype=object)])[0].tolist() == [[""]]


@pytest.mark.parametrize(
    "pattern",
    [r"[a-z]+\d{2}", r"(\w+)@(\w+)\.com", r"\s*x\s*", r"(?i)abc|d.f", r"\bab\b.*", r"[^]a]+"],
)
def test_regex_full_match(pattern: str) -> None:
    x = np.array(
        [["abc12", "ab1", "me@host.com"], [" x ", "ABC", "d\nf"], ["é9", "]]", "ab cd"]], dtype=object
    )
    _check(_node_model("RegexFullMatch", [3, 3], out=B, pattern=pattern), x)


def test_regex_classes_are_ascii_as_in_re2() -> None:
    """RE2's ``\\w`` and ``\\d`` are ASCII: a Unicode letter or digit does not match them; ``\\z`` ends."""
    model = _node_model("RegexFullMatch", [3], out=B, pattern=r"\w+\d\z")
    assert FerrumBackend.run_model(model, [_strings("ab1", "é1", "a٣")])[0].tolist() == [True, False, False]
    assert python_pattern(r"[\z]a\z\123") == r"[\z]a\Z\123"


@pytest.mark.parametrize(
    ("pattern", "named"),
    [
        (r"a(?=b)", "lookahead"),
        (r"(?<!a)b", "lookbehind"),
        (r"(a)\1", "backreference"),
        (r"a*+", "possessive"),
        (r"(?>ab)", "atomic"),
        (r"[[:alpha:]]+", "POSIX class"),
        (r"\pL", "Unicode classes"),
        (r"ab\Z", r"\z"),
        (r"a(b", "not a valid regex"),
    ],
)
def test_regex_refuses_what_re_reads_otherwise(pattern: str, named: str) -> None:
    model = _node_model("RegexFullMatch", [1], out=B, pattern=pattern)
    with pytest.raises(OnnxError, match=r"RegexFullMatch.*") as info:
        FerrumBackend.run_model(model, [_strings("ab")])
    assert named in str(info.value)


@pytest.mark.parametrize("mode", ["TF", "IDF", "TFIDF"])
@pytest.mark.parametrize("skip", [0, 2])
def test_tfidf_vectorizer_strings(mode: str, skip: int) -> None:
    pool = ["a", "b", "c", "a", "b", "b", "c", "c", "a", "a", "b", "c"]  # 3 unigrams, 3 bigrams, a 3-gram
    node = helper.make_node(
        "TfIdfVectorizer",
        ["x"],
        ["y"],
        mode=mode,
        min_gram_length=1,
        max_gram_length=3,
        max_skip_count=skip,
        ngram_counts=[0, 3, 9],
        ngram_indexes=[6, 0, 1, 2, 3, 4, 5],
        pool_strings=pool,
        weights=[0.5, 1.0, 2.0, 3.0, 0.25, 1.5, 4.0],
    )
    model = _model([node], [_info("x", S, [2, 6])], [_info("y", F)], opset=9)
    x = np.array([["a", "b", "c", "a", "b", "c"], ["c", "c", "b", "a", "x", "c"]], dtype=object)
    _check(model, x)


@pytest.mark.parametrize(("low", "high"), [(1, 1), (2, 3), (1, 3)])
def test_tfidf_vectorizer_ints(low: int, high: int) -> None:
    node = helper.make_node(
        "TfIdfVectorizer",
        ["x"],
        ["y"],
        mode="TF",
        min_gram_length=low,
        max_gram_length=high,
        max_skip_count=1,
        ngram_counts=[0, 2, 6],
        ngram_indexes=[0, 1, 2, 3, 4, 5, 6],
        pool_int64s=[1, 2, 1, 2, 2, 3, 1, 2, 3],
    )
    model = _model([node], [_info("x", I64, [7])], [_info("y", F)], opset=9)
    got = _check(model, np.array([1, 2, 3, 1, 1, 2, 3], dtype=np.int64))
    assert got[0].dtype == np.float32


@pytest.mark.parametrize(
    ("x_type", "x", "attrs"),
    [
        (
            S,
            _strings("a", "b", "z", "a"),
            {"keys_strings": ["a", "b", "a"], "values_strings": ["A", "B", "C"]},
        ),
        (I64, np.array([3, 1, 7]), {"keys_int64s": [1, 3], "values_strings": ["one", "three"]}),
        (S, _strings("x", "y", "q"), {"keys_strings": ["x", "y"], "values_floats": [0.5, -2.0]}),
        (
            S,
            _strings("x", "y", "q"),
            {
                "keys_tensor": numpy_helper.from_array(_strings("x", "y"), "k"),
                "values_tensor": numpy_helper.from_array(_strings("X", "Y"), "v"),
                "default_tensor": numpy_helper.from_array(_strings("?"), "d"),
            },
        ),
    ],
)
def test_label_encoder_strings(x_type: int, x: np.ndarray[Any, Any], attrs: dict[str, Any]) -> None:
    out = S if "values_strings" in attrs or "values_tensor" in attrs else F
    node = helper.make_node("LabelEncoder", ["x"], ["y"], domain="ai.onnx.ml", **attrs)
    _check(_model([node], [_info("x", x_type)], [_info("y", out)]), x)


def test_label_encoder_string_defaults_by_hand() -> None:
    """Unknown keys take ``default_string`` ("_Unused" when not set); the last of repeated keys wins."""
    node = helper.make_node(
        "LabelEncoder", ["x"], ["y"], domain="ai.onnx.ml", keys_int64s=[1, 1], values_strings=["a", "b"]
    )
    model = _model([node], [_info("x", I64)], [_info("y", S)])
    assert FerrumBackend.run_model(model, [np.array([1, 2])])[0].tolist() == ["b", "_Unused"]


def test_equal_strings() -> None:
    node = helper.make_node("Equal", ["x", "y"], ["z"])
    model = _model([node], [_info("x", S), _info("y", S)], [_info("z", B)], opset=19)
    _check(model, np.array([["a", "b"], ["c", "a"]], dtype=object), _strings("a", "a"))
    _check(model, np.array("é", dtype=object), np.array("é", dtype=object))


# --- graphs: forward, folding, control flow, code generation ------------------------------------------


def _pipeline() -> onnx.ModelProto:
    """x (strings) -> lowered, joined with a constant suffix -> y (strings) and its label ids (int)."""
    suffix = numpy_helper.from_array(_strings("!"), "suffix")
    nodes = [
        helper.make_node("StringNormalizer", ["x"], ["low"], case_change_action="LOWER"),
        helper.make_node("StringConcat", ["low", "suffix"], ["y"]),
        helper.make_node(
            "LabelEncoder",
            ["low"],
            ["ids"],
            domain="ai.onnx.ml",
            keys_strings=["a", "b"],
            values_int64s=[1, 2],
        ),
        helper.make_node("Identity", ["y"], ["y2"]),
    ]
    return _model(
        nodes, [_info("x", S, [3])], [_info("y2", S, [3]), _info("ids", I64, [3])], initializers=[suffix]
    )


def test_forward_takes_and_gives_string_arrays() -> None:
    model = load(_pipeline(), DEVICE)
    x = _strings("A", "b", "C")
    y, ids = model.forward(x)
    assert y.dtype == object and y.tolist() == ["a!", "b!", "c!"]
    assert isinstance(ids, Tensor) and ids.to_numpy().tolist() == [1, 2, -1]
    assert x.tolist() == ["A", "b", "C"]  # the caller's array is left as it was
    y2, _ = model.forward(np.array([b"B", b"a", b"c"]))  # bytes read as UTF-8; str dtype too
    assert y2.tolist() == ["b!", "a!", "c!"]
    _check(_pipeline(), x)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (Tensor.from_numpy(np.zeros(3, np.float32), DEVICE), "NumPy array of str"),
        (np.zeros(3, np.float32), "must hold strings"),
        (_strings("a", 1, "b"), "int element"),
        (_strings("a", "b"), r"expected shape \[3\]"),
    ],
)
def test_forward_refuses_what_is_no_string_tensor(value: Any, message: str) -> None:
    with pytest.raises(OnnxError, match=message):
        load(_pipeline(), DEVICE).forward(value)


def test_string_array_for_a_number_input_is_refused() -> None:
    node = helper.make_node("Relu", ["x"], ["y"])
    model = _model([node], [_info("x", F, [2])], [_info("y", F, [2])])
    with pytest.raises(OnnxError, match="ferrum Tensor"):
        load(model, DEVICE).forward(_strings("a", "b"))
    with pytest.raises(OnnxError, match="object"):
        FerrumBackend.run_model(model, [_strings("a", "b")])


def test_constant_strings_fold_and_stay_arrays() -> None:
    """Constant string nodes and initializers fold through string ops into string constants."""
    value = numpy_helper.from_array(_strings("ab", "cd"), "v")
    nodes = [
        helper.make_node("Constant", [], ["c"], value=value),
        helper.make_node("StringConcat", ["c", "c"], ["cc"]),
        helper.make_node("RegexFullMatch", ["cc"], ["m"], pattern="(ab)+"),
        helper.make_node("Equal", ["x", "cc"], ["eq"]),
    ]
    model = _model(nodes, [_info("x", S, [2])], [_info("cc", S), _info("m", B), _info("eq", B)])
    program = load(model, DEVICE).program
    assert not [s.op_type for s in program.steps if s.op_type != "Equal"]  # folded
    assert program.output_constants["cc"].dtype == object
    cc, m, eq = _check(model, _strings("abab", "x"))
    assert cc.tolist() == ["abab", "cdcd"] and m.tolist() == [True, False] and eq.tolist() == [True, False]
    out = load(model, DEVICE)
    out.forward(_strings("a", "b"))[0][0] = "changed"  # a returned constant is the caller's copy
    assert out.forward(_strings("a", "b"))[0].tolist() == ["abab", "cdcd"]


def test_strings_through_if() -> None:
    then = helper.make_graph(
        [helper.make_node("StringConcat", ["x", "x"], ["t"])], "then", [], [_info("t", S)]
    )
    other = helper.make_graph([helper.make_node("Identity", ["x"], ["e"])], "else", [], [_info("e", S)])
    nodes = [helper.make_node("If", ["flag"], ["y"], then_branch=then, else_branch=other)]
    model = _model(nodes, [_info("flag", B, []), _info("x", S, [2])], [_info("y", S)])
    _check(model, np.array(True), _strings("a", "b"))
    _check(model, np.array(False), _strings("a", "b"))


def test_codegen_refuses_string_graphs(tmp_path: Path) -> None:
    path = tmp_path / "strings.onnx"
    onnx.save(_pipeline(), path)
    with pytest.raises(OnnxError, match=r"code generation: values .*'low'.* are ONNX string tensors"):
        generate(path, tmp_path / "out")


# --- bad input ---------------------------------------------------------------------------------------


def test_bad_string_op_input_is_an_onnx_error() -> None:
    with pytest.raises(OnnxError, match=r"StringNormalizer: x must be of shape \[C\] or \[1, C\]"):
        FerrumBackend.run_model(_node_model("StringNormalizer"), [np.array([["a"], ["b"]], dtype=object)])
    with pytest.raises(OnnxError, match="case_change_action must be one of"):
        FerrumBackend.run_model(_node_model("StringNormalizer", case_change_action="lower"), [_strings("a")])
    node = helper.make_node("StringConcat", ["x", "y"], ["z"])
    model = _model([node], [_info("x", S), _info("y", S)], [_info("z", S)])
    with pytest.raises(OnnxError, match="do not broadcast"):
        FerrumBackend.run_model(model, [_strings("a", "b"), _strings("a", "b", "c")])


def test_label_encoder_kind_mismatch_is_an_onnx_error() -> None:
    node = helper.make_node(
        "LabelEncoder", ["x"], ["y"], domain="ai.onnx.ml", keys_strings=["a"], values_int64s=[1]
    )
    model = _model([node], [_info("x", I64)], [_info("y", I64)])
    with pytest.raises(OnnxError, match="string keys are not supported on a number tensor x"):
        FerrumBackend.run_model(model, [np.array([1])])
    node = helper.make_node(
        "LabelEncoder", ["x"], ["y"], domain="ai.onnx.ml", keys_int64s=[1], values_int64s=[1]
    )
    model = _model([node], [_info("x", S)], [_info("y", I64)])
    with pytest.raises(OnnxError, match="a string tensor x needs string keys"):
        FerrumBackend.run_model(model, [_strings("a")])
