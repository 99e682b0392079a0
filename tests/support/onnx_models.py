"""Small ONNX models built with ``onnx.helper`` for the ONNX import tests (no torch needed), and helpers
for the modules ``python -m ferrum.onnx`` generates."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import onnx
from mypy import api
from onnx import TensorProto, helper, numpy_helper

REPO_PYTHON = Path(__file__).resolve().parents[2] / "python"


def _init(name: str, array: np.ndarray) -> onnx.TensorProto:
    return numpy_helper.from_array(array, name)


def small_cnn(seed: int = 0, opset: int = 17) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """Conv -> BatchNormalization -> Relu -> MaxPool -> Flatten -> Gemm, as a PyTorch export looks.

    Input ``x`` ``[batch, 1, 6, 6]``, output ``logits`` ``[batch, 3]``; returns the model and its weights.
    """
    rng = np.random.default_rng(seed)
    weights = {
        "conv.weight": rng.normal(0, 0.5, (4, 1, 3, 3)).astype(np.float32),
        "conv.bias": rng.normal(0, 0.1, (4,)).astype(np.float32),
        "bn.weight": rng.uniform(0.5, 1.5, (4,)).astype(np.float32),
        "bn.bias": rng.normal(0, 0.1, (4,)).astype(np.float32),
        "bn.running_mean": rng.normal(0, 0.1, (4,)).astype(np.float32),
        "bn.running_var": rng.uniform(0.5, 1.5, (4,)).astype(np.float32),
        "fc.weight": rng.normal(0, 0.3, (3, 16)).astype(np.float32),
        "fc.bias": rng.normal(0, 0.1, (3,)).astype(np.float32),
    }
    nodes = [
        helper.make_node(
            "Conv",
            ["x", "conv.weight", "conv.bias"],
            ["c"],
            name="/conv/Conv",
            kernel_shape=[3, 3],
            pads=[1, 1, 1, 1],
        ),
        helper.make_node(
            "BatchNormalization",
            ["c", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"],
            ["n"],
            name="/bn/BatchNormalization",
            epsilon=1e-5,
        ),
        helper.make_node("Relu", ["n"], ["r"], name="/relu/Relu"),
        helper.make_node("MaxPool", ["r"], ["p"], name="/pool/MaxPool", kernel_shape=[3, 3], strides=[3, 3]),
        helper.make_node("Flatten", ["p"], ["f"], name="/Flatten", axis=1),
        helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"], ["logits"], name="/fc/Gemm", transB=1),
    ]
    graph = helper.make_graph(
        nodes,
        "small_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 1, 6, 6])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 3])],
        [_init(k, v) for k, v in weights.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model, weights


def reference_cnn(x: np.ndarray, w: dict[str, np.ndarray]) -> np.ndarray:
    """``small_cnn`` in NumPy (the independent reference)."""
    b = x.shape[0]
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    conv = np.zeros((b, 4, 6, 6), np.float64)
    for i in range(6):
        for j in range(6):
            patch = padded[:, :, i : i + 3, j : j + 3]
            conv[:, :, i, j] = np.einsum("bchw,ochw->bo", patch, w["conv.weight"])
    conv += w["conv.bias"][None, :, None, None]
    shape = (1, 4, 1, 1)
    norm = (conv - w["bn.running_mean"].reshape(shape)) / np.sqrt(w["bn.running_var"].reshape(shape) + 1e-5)
    norm = norm * w["bn.weight"].reshape(shape) + w["bn.bias"].reshape(shape)
    relu = np.maximum(norm, 0)
    pooled = relu.reshape(b, 4, 2, 3, 2, 3).max(axis=(3, 5))
    logits: np.ndarray = pooled.reshape(b, 16) @ w["fc.weight"].T + w["fc.bias"]
    return logits


def single_node(
    op_type: str, inputs: list[str], outputs: list[str], opset: int = 17, **attrs: Any
) -> onnx.ModelProto:
    """A graph of one node over float inputs of shape [2, 3]."""
    node = helper.make_node(op_type, inputs, outputs, name="the_node", **attrs)
    graph = helper.make_graph(
        [node],
        "one",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3]) for n in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def import_generated(path: Path, prefix: str = "generated") -> ModuleType:
    """Import a generated module from its file, as ``<prefix>_<file stem>``."""
    spec = importlib.util.spec_from_file_location(f"{prefix}_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve the module's annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def mypy_strict(files: Iterable[Path], tmp_path: Path) -> tuple[int, str]:
    """``mypy --strict`` (with ferrum's plugin) over ``files``: its exit status and report."""
    config = tmp_path / "mypy.ini"
    config.write_text(f"[mypy]\nstrict = True\nmypy_path = {REPO_PYTHON}\nplugins = ferrum.mypy\n")
    stdout, stderr, status = api.run(
        ["--config-file", str(config), "--cache-dir", str(tmp_path / ".mypy_cache"), *map(str, files)]
    )
    return status, stdout + stderr
