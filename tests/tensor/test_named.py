# ruff: noqa: E501  (the typing snippets show whole error messages, one a line)
"""``NamedTensor`` (Burn's named tensors): values against NumPy, the names each op gives, the run-time
errors naming both sides' dims, and the typing: ``mypy --strict`` (with ferrum's plugin) and pyright
accept named code and reject a matmul, a mul or a swap over the wrong names, on the marked line."""

from __future__ import annotations

import importlib.util
import itertools
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ferrum import ArgumentError, Dim, Distribution, Int, NamedTensor, ShapeError, Tensor

from tests.support.mypy_marks import check_marks, expected, run_mypy
from tests.support.tensors import DEVICE


class Batch(Dim):
    """Test dim."""


class SeqLength(Dim):
    """Test dim."""


class DModel(Dim):
    """Test dim."""


class Heads(Dim):
    """Test dim."""


NAMES: tuple[type[Dim], ...] = (Batch, SeqLength, DModel, Heads)
RNG = np.random.default_rng(59)


def named(array: np.ndarray[Any, Any], dims: tuple[type[Dim], ...]) -> NamedTensor[Any, Any]:
    """A named tensor of ``array``'s values (the untyped constructor: the names vary with the test)."""
    return NamedTensor(Tensor.from_data(array.astype(np.float32), DEVICE), dims)


def values(t: NamedTensor[Any, Any]) -> np.ndarray[Any, Any]:
    return np.asarray(t.into_tensor())


def floats(*shape: int) -> np.ndarray[Any, Any]:
    return RNG.standard_normal(shape).astype(np.float32)


# ------------------------------------------------------------------ creation and reading


def test_from_tensor_keeps_the_values_and_names() -> None:
    data = floats(2, 3)
    t = NamedTensor.from_tensor(Tensor.from_data(data, DEVICE), (Batch, DModel))
    assert t.shape() == (2, 3)
    assert t.dim_names() == (Batch, DModel)
    np.testing.assert_array_equal(values(t), data)
    assert str(t) == repr(t) == "NamedTensor[shape=[2, 3], dims=[Batch, DModel]]"
    assert Batch.to_string() == "Batch"


def test_random_has_the_shape_and_names() -> None:
    t = NamedTensor.random((4, 2, 3), (Batch, SeqLength, DModel), Distribution.Uniform(2.0, 3.0), DEVICE)
    assert str(t) == "NamedTensor[shape=[4, 2, 3], dims=[Batch, SeqLength, DModel]]"
    v = values(t)
    assert v.shape == (4, 2, 3) and ((v >= 2.0) & (v < 3.0)).all()


@pytest.mark.parametrize("rank", [1, 2, 3, 4])
def test_every_rank_converts_back(rank: int) -> None:
    data = floats(*range(2, 2 + rank))
    t = named(data, NAMES[:rank])
    assert t.into_tensor().rank() == rank
    np.testing.assert_array_equal(values(t), data)


def test_reshape_renames() -> None:
    data = floats(2, 12)
    t = named(data, (Batch, DModel)).reshape((2, 3, -1), (Batch, Heads, DModel))
    assert t.dim_names() == (Batch, Heads, DModel) and t.shape() == (2, 3, 4)
    np.testing.assert_array_equal(values(t), data.reshape(2, 3, 4))


# ------------------------------------------------------------------ matmul, swap_dims, mul


@pytest.mark.parametrize(
    ("lhs_shape", "rhs_shape"),
    [((3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((2, 3, 4), (1, 4, 5)), ((2, 2, 3, 4), (2, 1, 4, 5))],
)
def test_matmul_chains_the_names(lhs_shape: tuple[int, ...], rhs_shape: tuple[int, ...]) -> None:
    rank = len(lhs_shape)
    batch = (Heads, Batch)[: rank - 2]
    a, b = floats(*lhs_shape), floats(*rhs_shape)
    out = named(a, (*batch, SeqLength, DModel)).matmul(named(b, (*batch, DModel, Batch)))
    assert out.dim_names() == (*batch, SeqLength, Batch)
    np.testing.assert_allclose(values(out), np.matmul(a, b), rtol=1e-5, atol=1e-5)
    again = named(a, (*batch, SeqLength, DModel)) @ named(b, (*batch, DModel, Batch))
    np.testing.assert_array_equal(values(again), values(out))


@pytest.mark.parametrize("rank", [2, 3, 4])
def test_swap_dims_swaps_values_and_names(rank: int) -> None:
    data = floats(*range(2, 2 + rank))
    t: Any = named(data, NAMES[:rank])  # the pairs are run-time ints, which the Literal overloads do not type
    for i, j in itertools.combinations(range(rank), 2):
        s = t.swap_dims(i, j)
        names = list(NAMES[:rank])
        names[i], names[j] = names[j], names[i]
        assert s.dim_names() == tuple(names)
        np.testing.assert_array_equal(values(s), np.swapaxes(data, i, j))


def test_mul_broadcasts_as_burn() -> None:
    a, b = floats(2, 3, 4), floats(1, 3, 1)
    dims = (Batch, SeqLength, DModel)
    out = named(a, dims).mul(named(b, dims))
    assert out.dim_names() == dims
    np.testing.assert_allclose(values(out), a * b, rtol=1e-6)
    np.testing.assert_array_equal(values(named(a, dims) * named(b, dims)), values(out))


def test_burns_example_computation() -> None:
    """Burn's example: ``input.matmul(weights).mul(input).swap_dims::<_, 1, 2>()`` against NumPy."""
    w, x = floats(1, 4, 4), floats(2, 3, 4)
    weights, input = named(w, (Batch, DModel, DModel)), named(x, (Batch, SeqLength, DModel))
    permute = input.matmul(weights).mul(input).swap_dims(1, 2)
    assert str(permute) == "NamedTensor[shape=[2, 4, 3], dims=[Batch, DModel, SeqLength]]"
    np.testing.assert_allclose(values(permute), np.swapaxes((x @ w) * x, 1, 2), rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ run-time errors


def test_wrong_names_in_matmul_name_both_sides() -> None:
    weights, input = named(floats(1, 4, 4), (Batch, DModel, DModel)), named(floats(2, 3, 4), NAMES[:3])
    with pytest.raises(ShapeError) as caught:
        weights.matmul(input)
    message = str(caught.value)
    assert "lhs [Batch, DModel, DModel]" in message and "rhs [Batch, SeqLength, DModel]" in message
    assert message.startswith("NamedTensor.matmul")
    # The sizes agree here (4 and 4): only the names are wrong.
    with pytest.raises(ShapeError, match=r"lhs \[Heads, DModel\] @ rhs \[SeqLength, DModel\]"):
        named(floats(4, 4), (Heads, DModel)) @ named(floats(4, 4), (SeqLength, DModel))
    # Batch names must agree too.
    with pytest.raises(
        ShapeError, match=r"lhs \[Heads, SeqLength, DModel\] @ rhs \[Batch, DModel, SeqLength\]"
    ):
        named(floats(2, 3, 4), (Heads, SeqLength, DModel)).matmul(
            named(floats(2, 4, 3), (Batch, DModel, SeqLength))
        )
    with pytest.raises(
        ShapeError, match=r"same rank, 2 to 4: lhs \[SeqLength, DModel\] @ rhs \[Batch, DModel, "
    ):
        named(floats(3, 4), (SeqLength, DModel)).matmul(named(floats(2, 4, 3), (Batch, DModel, SeqLength)))
    with pytest.raises(ShapeError, match=r"same rank, 2 to 4: lhs \[DModel\] @ rhs \[DModel\]"):
        named(floats(4), (DModel,)).matmul(named(floats(4), (DModel,)))


@pytest.mark.parametrize(("dim1", "dim2"), [(1, 1), (2, 1), (0, 3), (-1, 2)])
def test_a_swap_outside_burns_pairs_names_the_dims(dim1: int, dim2: int) -> None:
    t: Any = named(floats(2, 3, 4), NAMES[:3])
    with pytest.raises(ShapeError) as caught:
        t.swap_dims(dim1, dim2)
    assert f"({dim1}, {dim2}) for [Batch, SeqLength, DModel]" in str(caught.value)


def test_rank_1_has_no_swap() -> None:
    with pytest.raises(ShapeError, match=r"\(0, 1\) for \[Batch\]"):
        named(floats(3), (Batch,)).swap_dims(0, 1)


def test_mul_of_other_names_names_both_sides() -> None:
    a, b = named(floats(2, 3), (Batch, DModel)), named(floats(2, 3), (Batch, SeqLength))
    with pytest.raises(ShapeError, match=r"lhs \[Batch, DModel\] \* rhs \[Batch, SeqLength\]"):
        a.mul(b)


def test_names_must_fit_the_tensor() -> None:
    with pytest.raises(ShapeError, match=r"3 names \[Batch, SeqLength, DModel\] for a tensor of rank 2"):
        named(floats(2, 3), NAMES[:3])
    with pytest.raises(ShapeError, match=r"2 names \[Batch, DModel\] for a tensor of rank 1"):
        named(floats(2, 6), (Batch, DModel)).reshape((12,), (Batch, DModel))  # type: ignore[arg-type]
    with pytest.raises(ArgumentError, match="a dim name is a Dim subclass, found 'batch'"):
        NamedTensor(Tensor.zeros((2,), DEVICE), ("batch",))  # type: ignore[arg-type]
    with pytest.raises(ArgumentError, match=r"1 to 4 dims"):
        named(floats(1, 1, 1, 1, 1), (*NAMES, Batch))
    untyped_int: Any = Tensor.zeros((2,), DEVICE, Int)  # mypy rejects an Int tensor: see named_bad below
    with pytest.raises(ArgumentError, match="a named tensor is Float, found a Int one"):
        NamedTensor(untyped_int, (Batch,))


# ------------------------------------------------------------------ typing

HEADER = """\
from __future__ import annotations

from ferrum import D2, D3, D4, Dim, Distribution, Int, NamedTensor, Tensor
from ferrum.backend import NdArray


class Batch(Dim): ...
class SeqLength(Dim): ...
class DModel(Dim): ...
class Heads(Dim): ...
class DHead(Dim): ...


device = NdArray.device()
weights = NamedTensor.random((1, 24, 24), (Batch, DModel, DModel), Distribution.Default, device)
x = NamedTensor.random((32, 48, 24), (Batch, SeqLength, DModel), Distribution.Default, device)
"""

SNIPPETS = {
    "named_ok": """
        reveal_type(x)  # R: ferrum.tensor.named.NamedTensor[ferrum.backend.NdArray, tuple[named_ok.Batch, named_ok.SeqLength, named_ok.DModel]]
        out = x.matmul(weights).mul(x) * x
        reveal_type(out)  # R: ferrum.tensor.named.NamedTensor[ferrum.backend.NdArray, tuple[named_ok.Batch, named_ok.SeqLength, named_ok.DModel]]
        permute = out.swap_dims(1, 2)
        reveal_type(permute)  # R: ferrum.tensor.named.NamedTensor[ferrum.backend.NdArray, tuple[named_ok.Batch, named_ok.DModel, named_ok.SeqLength]]
        scores = x @ permute
        reveal_type(scores)  # R: ferrum.tensor.named.NamedTensor[ferrum.backend.NdArray, tuple[named_ok.Batch, named_ok.SeqLength, named_ok.SeqLength]]
        heads = x.reshape((32, 48, 4, 6), (Batch, SeqLength, Heads, DHead)).swap_dims(1, 2)
        reveal_type(heads)  # R: ferrum.tensor.named.NamedTensor[ferrum.backend.NdArray, tuple[named_ok.Batch, named_ok.Heads, named_ok.SeqLength, named_ok.DHead]]
        attention = heads.matmul(heads.swap_dims(2, 3))
        reveal_type(attention)  # R: ferrum.tensor.named.NamedTensor[ferrum.backend.NdArray, tuple[named_ok.Batch, named_ok.Heads, named_ok.SeqLength, named_ok.SeqLength]]
        plain: Tensor[NdArray, D3] = out.into_tensor()
        rank4: Tensor[NdArray, D4] = attention.into_tensor()
        back: NamedTensor[NdArray, tuple[Batch, SeqLength, DModel]] = NamedTensor.from_tensor(plain, (Batch, SeqLength, DModel))
        rows = NamedTensor.from_tensor(Tensor.zeros((2, 3), device), (SeqLength, DModel))
        proj = NamedTensor.from_tensor(Tensor.zeros((3, 5), device), (DModel, Heads))
        matrix: Tensor[NdArray, D2] = (rows @ proj).into_tensor()
        """,
    "named_bad": """
        weights.matmul(x)  # E: Argument 1 to "matmul" of "NamedTensor" has incompatible type "NamedTensor[NdArray, tuple[Batch, SeqLength, DModel]]"; expected "NamedTensor[NdArray, tuple[Batch, DModel, DModel]]"
        weights @ x  # E: Unsupported operand types for @ ("NamedTensor[NdArray, tuple[Batch, DModel, DModel]]" and "NamedTensor[NdArray, tuple[Batch, SeqLength, DModel]]")
        out = x.matmul(weights)
        out.mul(weights)  # E: Argument 1 to "mul" of "NamedTensor" has incompatible type "NamedTensor[NdArray, tuple[Batch, DModel, DModel]]"; expected "NamedTensor[NdArray, tuple[Batch, SeqLength, DModel]]"
        unswapped: NamedTensor[NdArray, tuple[Batch, SeqLength, DModel]] = out.swap_dims(1, 2)  # E: Incompatible types in assignment (expression has type "NamedTensor[NdArray, tuple[Batch, DModel, SeqLength]]"
        x.swap_dims(0, 3)  # E: No overload variant of "swap_dims" of "NamedTensor" matches argument types "int", "int"
        x.swap_dims(2, 1)  # E: No overload variant of "swap_dims" of "NamedTensor" matches argument types "int", "int"
        x.matmul(x.swap_dims(0, 2))  # E: Argument 1 to "matmul" of "NamedTensor" has incompatible type
        rows = NamedTensor.from_tensor(Tensor.zeros((2, 3), device), (SeqLength, DModel))
        rows.matmul(weights)  # E: Argument 1 to "matmul" of "NamedTensor" has incompatible type
        NamedTensor.from_tensor(Tensor.zeros((2, 3), device), (Batch, SeqLength, DModel))  # E: Argument 2 to "from_tensor" of "NamedTensor" has incompatible type
        wrong_rank: Tensor[NdArray, D2] = x.into_tensor()  # E: Incompatible types in assignment
        counts = Tensor.zeros((2,), device, Int)
        NamedTensor.from_tensor(counts, (Batch,))  # E: Argument 1 to "from_tensor" of "NamedTensor" has incompatible type "Tensor[NdArray, D1, Int]"; expected "Tensor[NdArray, D1, Float]"
        """,
}


def sources() -> dict[str, str]:
    return {name: HEADER + textwrap.dedent(body) for name, body in SNIPPETS.items()}


@pytest.fixture(scope="module")
def snippet_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("named")
    for name, source in sources().items():
        (directory / f"{name}.py").write_text(source)
    return directory


@pytest.mark.parametrize("plugin", [True, False], ids=["plugin", "no-plugin"])
def test_mypy_accepts_names_that_chain_and_rejects_the_others(snippet_dir: Path, plugin: bool) -> None:
    found = run_mypy(snippet_dir, [str(snippet_dir / f"{name}.py") for name in SNIPPETS], plugin=plugin)
    for name, source in sources().items():
        check_marks(name, source, found.get(name, []))


@pytest.mark.skipif(importlib.util.find_spec("pyright") is None, reason="pyright is not installed")
def test_pyright_accepts_and_rejects_the_same_lines(snippet_dir: Path) -> None:
    (snippet_dir / "pyrightconfig.json").write_text(json.dumps({"typeCheckingMode": "standard"}))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pyright",
            "--outputjson",
            "--pythonpath",
            sys.executable,
            "--project",
            str(snippet_dir),
            *(str(snippet_dir / f"{name}.py") for name in SNIPPETS),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    report = json.loads(proc.stdout)
    errors: dict[str, set[int]] = {}
    for d in report["generalDiagnostics"]:
        if d["severity"] == "error":
            errors.setdefault(Path(d["file"]).stem, set()).add(int(d["range"]["start"]["line"]) + 1)
    for name, source in sources().items():
        marked = {mark.line for mark in expected(source) if mark.kind == "E"}
        assert errors.get(name, set()) == marked, (name, report["generalDiagnostics"])
    revealed = [d["message"] for d in report["generalDiagnostics"] if d["severity"] == "information"]
    assert any(
        re.search(r'"permute" is "NamedTensor\[NdArray, tuple\[Batch, DModel, SeqLength\]\]"', m)
        for m in revealed
    ), revealed
