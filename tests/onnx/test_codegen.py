"""python -m ferrum.onnx: the generated module (mypy --strict clean) and its weights reproduce the graph."""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from ferrum import Tensor
from ferrum.backend import NdArray
from ferrum.onnx import load
from ferrum.onnx.codegen import generate
from ferrum.onnx.ops.registry import DOMAINS, lookup, registered_ops
from onnx import TensorProto, helper, numpy_helper

from tests.support.onnx_models import import_generated, mypy_strict, reference_cnn, single_node, small_cnn

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
DEVICE = NdArray.device()


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("generated")
    onnx.save(small_cnn()[0], out / "small_cnn.onnx")
    files = {"small_cnn": generate(out / "small_cnn.onnx", out).source}
    files["resnet50"] = generate(LIGHT / "light_resnet50.onnx", out, "resnet50").source
    onnx.save(_resize_gather(), out / "resize_gather.onnx")
    files["resize_gather"] = generate(out / "resize_gather.onnx", out).source
    return files


def _resize_gather() -> onnx.ModelProto:
    """Resize by static scales (a float array literal) then Gather by constant indices (an Int literal)."""
    scales = numpy_helper.from_array(np.array([1.0, 1.0, 2.0, 2.0], np.float32), "scales")
    index = numpy_helper.from_array(np.array([3, 0], np.int64), "index")
    nodes = [
        helper.make_node("Resize", ["x", "", "scales"], ["big"], name="up", mode="nearest"),
        helper.make_node("Gather", ["big", "index"], ["y"], name="pick", axis=3),
    ]
    graph = helper.make_graph(
        nodes,
        "resize_gather",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [scales, index],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_generated_literals_run_as_the_runtime(generated: dict[str, Path]) -> None:
    module = import_generated(generated["resize_gather"])
    model = module.load(generated["resize_gather"].with_suffix(".mpk"), DEVICE)
    x = np.array([[[[1.0, 2.0], [3.0, 4.0]]]], np.float32)
    out = model.forward(Tensor.from_numpy(x, DEVICE)).to_numpy()
    expected = x.repeat(2, axis=2).repeat(2, axis=3)[..., [3, 0]]
    np.testing.assert_array_equal(out, expected)


def test_generated_cnn_uses_layers_and_matches_the_reference(generated: dict[str, Path]) -> None:
    source = generated["small_cnn"].read_text()
    for expected in (
        "class SmallCnn(Module[B]):",
        "conv_conv: Conv2d[B]",
        "fc_gemm: Linear[B]",
        "bn_batchnormalization: BatchNorm[B]",
        "def forward(self, x: Tensor[B, D4]) -> Tensor[B, D2]:",
    ):
        assert expected in source
    module = import_generated(generated["small_cnn"])
    model = module.load(generated["small_cnn"].with_suffix(".mpk"), DEVICE)
    x = np.random.default_rng(0).normal(size=(3, 1, 6, 6)).astype(np.float32)
    out = model.forward(Tensor.from_numpy(x, DEVICE)).to_numpy()
    np.testing.assert_allclose(out, reference_cnn(x, small_cnn()[1]), rtol=1e-4, atol=1e-5)
    runtime = load(small_cnn()[0], DEVICE).forward(Tensor.from_numpy(x, DEVICE)).to_numpy()
    np.testing.assert_allclose(out, runtime, rtol=1e-5, atol=1e-6)


def test_fresh_init_has_the_graph_shapes(generated: dict[str, Path]) -> None:
    module = import_generated(generated["small_cnn"])
    fresh = module.init(DEVICE)
    loaded = module.load(generated["small_cnn"].with_suffix(".mpk"), DEVICE)
    shapes = [(n, p.shape()) for n, p in fresh.named_parameters()]
    assert shapes == [(n, p.shape()) for n, p in loaded.named_parameters()]
    assert fresh.forward(Tensor.zeros((1, 1, 6, 6), DEVICE)).dims() == (1, 3)


def test_generated_code_passes_mypy_strict(generated: dict[str, Path], tmp_path: Path) -> None:
    status, report = mypy_strict(generated.values(), tmp_path)
    assert status == 0, report


def _cli(*args: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "ferrum.onnx", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def test_cli_writes_files_and_reports_errors(tmp_path: Path) -> None:
    onnx.save(single_node("Relu", ["x"], ["y"]), tmp_path / "relu.onnx")
    done = _cli(tmp_path / "relu.onnx", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "relu.py").is_file() and (tmp_path / "out" / "relu.mpk").is_file()
    onnx.save(single_node("NoSuchOp", ["x"], ["y"]), tmp_path / "bad.onnx")
    failed = _cli(tmp_path / "bad.onnx", tmp_path / "o2")
    assert failed.returncode == 1
    assert "NoSuchOp (node 'the_node')" in failed.stderr and not (tmp_path / "o2" / "bad.py").exists()


def test_names_from_the_file_cannot_become_code(tmp_path: Path) -> None:
    """A graph name (or file name) holding a triple quote stays text in the generated docstrings."""
    payload = 'g"""; import os; os.environ["FERRUM_PWNED"] = "1"; """'
    proto = single_node("Relu", ["x"], ["y"])
    proto.graph.name = payload
    path = tmp_path / 'x""";import os;os.environ["FERRUM_PWNED"]="2";""".onnx'
    onnx.save(proto, path)
    source = generate(path, tmp_path / "out", "relu").source
    tree = ast.parse(source.read_text())
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.Assign) and "environ" in ast.unparse(n)]
    module_doc = ast.get_docstring(tree) or ""
    assert path.name in module_doc
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    assert payload in (ast.get_docstring(cls) or "")
    import_generated(source)
    assert "FERRUM_PWNED" not in os.environ


def test_every_op_function_is_reachable_by_its_module_and_name() -> None:
    # Generated code calls ``ops.<family>.<fn.__name__>``: an op defined from a table (ops.registry.define)
    # must be bound under the name it was given, in the module it says, with a docstring.
    checked = 0
    for name in registered_ops():
        for domain in DOMAINS:
            spec = lookup(name, 10**6, domain)
            if spec is None:
                continue
            module, fn_name = spec.fn.__module__, spec.fn.__name__
            bound = getattr(importlib.import_module(module), fn_name, None)
            assert bound is spec.fn, f"{name}: {module}.{fn_name} is not the op's function"
            assert spec.fn.__doc__, f"{name} has no docstring"
            checked += 1
    assert checked == len(registered_ops())
