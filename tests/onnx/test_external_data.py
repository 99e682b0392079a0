"""ONNX external data: read from the model's own folder (or an explicit ``base_dir``) and nowhere else.

A tensor's ``location`` is written by whoever wrote the file; these tests hold
every path a location can take into ferrum (initializers, ``Constant`` values,
sparse tensors, control-flow bodies, functions; from a path, bytes or a
``ModelProto``) to the same rule, with the reproducer of issue 53 first.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from ferrum import Tensor
from ferrum.backend import NdArray
from ferrum.onnx import OnnxFileError, load
from ferrum.onnx.__main__ import main as codegen_main
from ferrum.onnx.external import model_tensors
from onnx import TensorProto, helper, numpy_helper

DEVICE = NdArray.device()
SECRET = bytes(range(100, 116))


def external(
    name: str, location: str, dims: list[int], data_type: int = TensorProto.UINT8, **extra: str
) -> TensorProto:
    """A tensor whose data lives in ``location`` (length left out unless given in ``extra``)."""
    t = TensorProto(name=name, data_type=data_type, dims=dims, data_location=TensorProto.EXTERNAL)
    for key, value in {"location": location, **extra}.items():
        entry = t.external_data.add()
        entry.key, entry.value = key, value
    return t


def constant_model(location: str = "secret.bin", **extra: str) -> onnx.ModelProto:
    """Issue 53's reproducer: a ``Constant`` node whose value is 16 external bytes."""
    t = external("w", location, [16], TensorProto.UINT8, **{"length": "16", **extra})
    graph = helper.make_graph(
        [helper.make_node("Constant", [], ["y"], value=t)],
        "g",
        [],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [16])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def initializer_model(location: str = "w.bin") -> onnx.ModelProto:
    """``y = x + w`` with ``w`` (four floats) stored externally."""
    w = external("w", location, [4], TensorProto.FLOAT, length="16")
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        [w],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A working directory holding ``secret.bin`` and a separate ``models`` folder; CWD is the former."""
    cwd = tmp_path / "cwd"
    models = tmp_path / "cwd" / "models"
    models.mkdir(parents=True)
    (cwd / "secret.bin").write_bytes(SECRET)
    monkeypatch.chdir(cwd)
    return cwd, models


def _values(model: object) -> list[int]:
    out = model.forward()  # type: ignore[attr-defined]
    return [int(v) for v in out.to_data().to_list()]


def test_issue_reproducer_does_not_read_the_current_directory(layout: tuple[Path, Path]) -> None:
    _, models = layout
    onnx.save(constant_model(), str(models / "m.onnx"))
    with pytest.raises(OnnxFileError, match=r"m\.onnx.*tensor 'w'.*'secret\.bin' refused.*No such file"):
        load(models / "m.onnx", DEVICE)


def test_constant_value_is_read_from_the_model_folder(layout: tuple[Path, Path]) -> None:
    _, models = layout
    onnx.save(constant_model(), str(models / "m.onnx"))
    mine = bytes(range(16))
    (models / "secret.bin").write_bytes(mine)
    assert _values(load(models / "m.onnx", DEVICE)) == list(mine)
    # the generated module reads it the same way
    assert codegen_main([str(models / "m.onnx"), str(models / "out")]) == 0


def test_bytes_and_model_proto_need_base_dir(layout: tuple[Path, Path]) -> None:
    cwd, models = layout
    proto = constant_model()
    for source in (proto.SerializeToString(), proto):
        with pytest.raises(
            OnnxFileError, match=r"tensor 'w' keeps its data in an external file \('secret\.bin'\).*base_dir"
        ):
            load(source, DEVICE)
    # an explicit folder is the caller's choice, the current directory included
    assert _values(load(proto.SerializeToString(), DEVICE, base_dir=cwd)) == list(SECRET)
    assert _values(load(proto, DEVICE, base_dir=".")) == list(SECRET)
    with pytest.raises(OnnxFileError, match="No such file"):
        load(proto, DEVICE, base_dir=models)
    # the caller's ModelProto is not changed by reading its data in
    assert proto.graph.node[0].attribute[0].t.data_location == TensorProto.EXTERNAL
    with pytest.raises(OnnxFileError, match="is not a folder"):
        load(proto, DEVICE, base_dir=cwd / "secret.bin")


def test_initializer_from_bytes_is_refused_without_base_dir(layout: tuple[Path, Path]) -> None:
    _, models = layout
    (models / "w.bin").write_bytes(np.arange(4, dtype=np.float32).tobytes())
    data = initializer_model().SerializeToString()
    with pytest.raises(OnnxFileError, match=r"<bytes>: tensor 'w'.*base_dir"):
        load(data, DEVICE)
    model = load(data, DEVICE, base_dir=models)
    out = model.forward(Tensor.from_numpy(np.ones(4, np.float32), DEVICE))
    np.testing.assert_array_equal(out.to_numpy(), np.arange(4, dtype=np.float32) + 1)


def test_onnx_saved_external_data_round_trips(tmp_path: Path) -> None:
    """A model written by ``onnx.save(..., save_as_external_data=True)`` with offsets into one file."""
    rng = np.random.default_rng(0)
    a = rng.normal(size=(8, 5)).astype(np.float32)
    b = rng.normal(size=(5,)).astype(np.float32)
    k = np.arange(6, dtype=np.int64).reshape(2, 3)
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "a"], ["xa"]),
            helper.make_node("Add", ["xa", "b"], ["y"]),
            helper.make_node("Constant", [], ["k"], value=numpy_helper.from_array(k, "k")),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5]),
            helper.make_tensor_value_info("k", TensorProto.INT64, [2, 3]),
        ],
        [numpy_helper.from_array(a, "a"), numpy_helper.from_array(b, "b")],
    )
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(
        proto,
        str(tmp_path / "m.onnx"),
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location="m.data",
        size_threshold=0,
    )
    saved = onnx.load(str(tmp_path / "m.onnx"), load_external_data=False)
    offsets = {t.name: {e.key: e.value for e in t.external_data}.get("offset") for t in model_tensors(saved)}
    assert set(offsets) == {"a", "b", "k"} and len(set(offsets.values())) == 3
    x = rng.normal(size=(2, 8)).astype(np.float32)
    y, kk = load(tmp_path / "m.onnx", DEVICE).forward(Tensor.from_numpy(x, DEVICE))
    np.testing.assert_allclose(y.to_numpy(), x @ a + b, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(kk.to_numpy(), k)


@pytest.mark.parametrize(
    ("location", "reason"),
    [
        ("../secret.bin", r"'\.\.' is not allowed"),
        ("sub/../../secret.bin", r"'\.\.' is not allowed"),
        ("..\\secret.bin", r"'\.\.' is not allowed"),
        ("C:\\secret.bin", "absolute paths|drive letters"),
        ("C:secret.bin", "drive letters"),
        ("", "the location is empty"),
        ("secret\0.bin", "NUL byte"),
    ],
)
def test_locations_leaving_the_folder_are_refused(
    layout: tuple[Path, Path], location: str, reason: str
) -> None:
    _, models = layout
    onnx.save(constant_model(location), str(models / "m.onnx"))
    with pytest.raises(OnnxFileError, match=reason):
        load(models / "m.onnx", DEVICE)


def test_absolute_location_is_refused(layout: tuple[Path, Path]) -> None:
    cwd, models = layout
    onnx.save(constant_model(str(cwd / "secret.bin")), str(models / "m.onnx"))
    with pytest.raises(OnnxFileError, match="absolute paths are not allowed"):
        load(models / "m.onnx", DEVICE)


@pytest.mark.skipif(
    sys.platform == "win32", reason="symbolic links, FIFOs and hard links as POSIX makes them"
)
def test_links_and_special_files_are_refused(layout: tuple[Path, Path]) -> None:
    cwd, models = layout
    onnx.save(constant_model("data/w.bin"), str(models / "m.onnx"))
    data = models / "data"
    # a symbolic link as the file
    data.mkdir()
    (data / "w.bin").symlink_to(cwd / "secret.bin")
    with pytest.raises(OnnxFileError, match="symbolic links are not followed"):
        load(models / "m.onnx", DEVICE)
    # a symbolic link as a folder on the way
    (data / "w.bin").unlink()
    data.rmdir()
    data.symlink_to(cwd)
    (cwd / "w.bin").write_bytes(SECRET)
    with pytest.raises(OnnxFileError, match="symbolic links are not followed"):
        load(models / "m.onnx", DEVICE)
    data.unlink()
    data.mkdir()
    # a hard link to a file elsewhere
    os.link(cwd / "secret.bin", data / "w.bin")
    with pytest.raises(OnnxFileError, match="hard links"):
        load(models / "m.onnx", DEVICE)
    (data / "w.bin").unlink()
    # a FIFO would block a plain open() forever
    os.mkfifo(data / "w.bin")
    with pytest.raises(OnnxFileError, match="not a regular file"):
        load(models / "m.onnx", DEVICE)
    (data / "w.bin").unlink()
    # a directory
    (data / "w.bin").mkdir()
    with pytest.raises(OnnxFileError, match=r"not a regular file|Is a directory"):
        load(models / "m.onnx", DEVICE)


def test_offsets_and_lengths_are_checked(layout: tuple[Path, Path]) -> None:
    _, models = layout
    (models / "w.bin").write_bytes(bytes(20))
    cases = [
        ({"offset": "8"}, r"16 bytes at offset 8 run past the file's end \(20 bytes\)"),
        ({"offset": "-1"}, "offset -1 is negative"),
        ({"offset": "ten"}, "offset 'ten' is not an integer"),
        ({"length": "4"}, r"length 4 does not match the tensor's 16 bytes \(UINT8 \[16\]\)"),
        ({"length": str(2**62)}, "does not match"),
    ]
    for extra, reason in cases:
        onnx.save(constant_model("w.bin", **extra), str(models / "m.onnx"))
        with pytest.raises(OnnxFileError, match=reason):
            load(models / "m.onnx", DEVICE)
    # dims far beyond the file are refused before anything is allocated
    big = constant_model("w.bin")
    t = big.graph.node[0].attribute[0].t
    del t.external_data[1:]
    t.dims[:] = [2**40, 2**20]
    onnx.save(big, str(models / "m.onnx"))
    with pytest.raises(OnnxFileError, match="run past the file's end"):
        load(models / "m.onnx", DEVICE)
    # a data file that holds exactly the tensor, read whole when no length is given
    onnx.save(constant_model("w.bin", offset="4"), str(models / "m.onnx"))
    assert _values(load(models / "m.onnx", DEVICE)) == [0] * 16


def _with_external_in(place: str) -> onnx.ModelProto:
    """A model whose only external tensor sits in ``place``."""
    ext = external("w", "secret.bin", [16], length="16")
    out = [helper.make_tensor_value_info("y", TensorProto.UINT8, [16])]
    opsets = [helper.make_opsetid("", 17)]
    if place == "initializer":
        g = helper.make_graph([helper.make_node("Identity", ["w"], ["y"])], "g", [], out, [ext])
    elif place == "sparse initializer":
        idx = numpy_helper.from_array(np.array([0], np.int64), "w_idx")
        sparse = helper.make_sparse_tensor(ext, idx, [16])
        g = helper.make_graph([helper.make_node("Identity", ["w"], ["y"])], "g", [], out)
        g.sparse_initializer.append(sparse)
    elif place == "sparse constant":
        idx = numpy_helper.from_array(np.array([0], np.int64), "w_idx")
        node = helper.make_node("Constant", [], ["y"], sparse_value=helper.make_sparse_tensor(ext, idx, [16]))
        g = helper.make_graph([node], "g", [], out)
    elif place in ("if branch", "branch initializer"):
        z = [helper.make_tensor_value_info("z", TensorProto.UINT8, [16])]
        branch = helper.make_graph([helper.make_node("Constant", [], ["z"], value=ext)], "b", [], z)
        if place == "branch initializer":
            branch = helper.make_graph([helper.make_node("Identity", ["w"], ["z"])], "b", [], z, [ext])
        other = helper.make_graph(
            [helper.make_node("Constant", [], ["z"], value=numpy_helper.from_array(np.zeros(16, np.uint8)))],
            "o",
            [],
            z,
        )
        cond = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
        g = helper.make_graph(
            [helper.make_node("If", ["c"], ["y"], then_branch=branch, else_branch=other)], "g", [cond], out
        )
    elif place == "function":
        fn = helper.make_function(
            "local", "F", [], ["z"], [helper.make_node("Constant", [], ["z"], value=ext)], opsets
        )
        g = helper.make_graph([helper.make_node("F", [], ["y"], domain="local")], "g", [], out)
        return helper.make_model(g, opset_imports=[*opsets, helper.make_opsetid("local", 1)], functions=[fn])
    elif place == "attribute tensor list":
        node = helper.make_node("Identity", ["x"], ["y"])
        node.attribute.append(helper.make_attribute("ts", [ext]))
        g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.UINT8, [16])], out)
    else:
        raise AssertionError(place)
    return helper.make_model(g, opset_imports=opsets)


PLACES = [
    "initializer",
    "sparse initializer",
    "sparse constant",
    "if branch",
    "branch initializer",
    "function",
    "attribute tensor list",
]


@pytest.mark.parametrize("place", PLACES)
def test_every_tensor_of_the_model_follows_the_rule(layout: tuple[Path, Path], place: str) -> None:
    _, models = layout
    proto = _with_external_in(place)
    assert [t.name for t in model_tensors(proto) if t.data_location == TensorProto.EXTERNAL] == ["w"]
    with pytest.raises(OnnxFileError, match="base_dir"):
        load(proto, DEVICE)
    with pytest.raises(OnnxFileError, match="base_dir"):
        load(proto.SerializeToString(), DEVICE)
    onnx.save(proto, str(models / "m.onnx"))
    with pytest.raises(OnnxFileError, match=r"'secret\.bin' refused: No such file"):
        load(models / "m.onnx", DEVICE)


def test_external_data_in_an_if_branch_runs(layout: tuple[Path, Path]) -> None:
    """The branch's Constant, read from the model's folder, is what the taken branch returns."""
    _, models = layout
    onnx.save(_with_external_in("if branch"), str(models / "m.onnx"))
    mine = bytes(range(50, 66))
    (models / "secret.bin").write_bytes(mine)
    model = load(models / "m.onnx", DEVICE)
    taken = model.forward(Tensor.from_data([True], DEVICE).reshape(()))
    assert [int(v) for v in taken.to_data().to_list()] == list(mine)
    other = model.forward(Tensor.from_data([False], DEVICE).reshape(()))
    assert [int(v) for v in other.to_data().to_list()] == [0] * 16
