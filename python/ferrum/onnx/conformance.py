"""Running ONNX's backend node tests (``onnx.backend.test.case.node``) on ferrum's backend.

Used by ``tests/onnx/test_node_suite.py`` and by ``scripts/onnx_op_table.py``
(which writes the per-op pass table, ``docs/onnx-ops.md``). Each case is one
generated model with its inputs and expected outputs; it passes when
``FerrumBackend`` reproduces them under the runner's own comparison
(``onnx.backend.test.runner.Runner.assert_similar_outputs``: shape, dtype,
and values within the case's rtol/atol).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import re
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx.backend.test.case.test_case import TestCase
from onnx.backend.test.loader import load_node_model_tests
from onnx.backend.test.runner import Runner

from ferrum._ferrum import Tensor
from ferrum.backend import NdArray
from ferrum.onnx.backend import FerrumBackend
from ferrum.onnx.codegen import generate

__all__ = [
    "CaseResult",
    "LightModel",
    "case_op",
    "check_light_model",
    "light_models",
    "node_cases",
    "run_case",
]

_EXPANDED = re.compile(r"_expanded(_ver\d+)?$")


def node_cases() -> list[TestCase]:
    """Every node test case the installed ``onnx`` generates (NumPy's warnings while generating muted)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return list(load_node_model_tests())


def case_op(case: TestCase, ops_of: dict[str, str]) -> str:
    """The op a case tests: its single node's op, or for an ``_expanded`` case the op of its base case."""
    base = _EXPANDED.sub("", case.name)
    if base != case.name and base in ops_of:
        return ops_of[base]
    model = case.model
    assert model is not None, f"node case {case.name} has no model"
    return model.graph.node[-1].op_type if model.graph.node else "?"


@dataclasses.dataclass(frozen=True)
class CaseResult:
    """The outcome of one ONNX node test case on ``FerrumBackend``.

    ``name`` is the case (``test_relu``...), ``op`` the ONNX op it tests,
    ``passed`` whether every data set matched, and ``error`` the first line of
    the exception (``"TypeName: message"``, cut at 200 characters) when it did
    not, ``""`` when it passed.
    """

    name: str
    op: str
    passed: bool
    error: str


def run_case(case: TestCase, op: str) -> CaseResult:
    """Load and run one case through ``FerrumBackend``; any failure is reported, never raised."""
    try:
        assert case.model is not None, f"node case {case.name} has no model"
        rep = FerrumBackend.prepare(case.model)
        for inputs, expected in case.data_sets or []:
            outputs = rep.run([_array(i) for i in inputs])
            Runner.assert_similar_outputs(
                [_array(e) for e in expected],
                list(outputs),
                rtol=case.rtol,
                atol=case.atol,
                model_dir=case.name,
            )
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return CaseResult(case.name, op, False, f"{type(exc).__name__}: {first[:200]}")
    return CaseResult(case.name, op, True, "")


def _array(value: Any) -> Any:
    if isinstance(value, onnx.TensorProto):
        return onnx.numpy_helper.to_array(value)
    return value


_DATA = Path(onnx.__file__).parent / "backend" / "test" / "data"


@dataclasses.dataclass(frozen=True)
class LightModel:
    """A real model graph the onnx wheel ships (data/light), with the runner's tolerances."""

    name: str
    path: Path
    rtol: float
    atol: float


def light_models() -> list[LightModel]:
    """The light models listed by ``data/real/test_*/data.json`` (ResNet-50, VGG-19, ...)."""
    found = []
    for meta_path in sorted((_DATA / "real").glob("test_*/data.json")):
        meta = json.loads(meta_path.read_text())
        path = _DATA.parents[3] / meta["url"]
        found.append(LightModel(meta["model_name"], path, float(meta["rtol"]), float(meta["atol"])))
    return found


def check_light_model(case: LightModel, generated_dir: Path | None = None) -> None:
    """Run ``case`` on the runner's input and compare with its stored output (AssertionError if not).

    Through ``FerrumBackend`` (the run-time path), or, with ``generated_dir``, through the module
    ``python -m ferrum.onnx`` writes there.
    """
    model = onnx.load(case.path)
    initializers = {t.name for t in model.graph.initializer}
    inputs = [
        Runner.generate_dummy_data(x, seed=0, name=case.name, random=False)
        for x in model.graph.input
        if x.name not in initializers
    ]
    if generated_dir is None:
        outputs = list(FerrumBackend.prepare(model).run(inputs))
    else:
        files = generate(case.path, generated_dir, case.name)
        spec = importlib.util.spec_from_file_location(f"ferrum_generated_{case.name}", files.source)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
        try:
            spec.loader.exec_module(module)
            device = NdArray.device()
            net = module.load(files.weights, device)
            result = net.forward(*(Tensor.from_numpy(x, device) for x in inputs))
        finally:
            del sys.modules[spec.name]
        outputs = [np.asarray(o.to_numpy()) for o in (result if isinstance(result, tuple) else (result,))]
    expected = [
        onnx.numpy_helper.to_array(onnx.load_tensor(str(case.path).replace(".onnx", f"_output_{i}.pb")))
        for i in range(len(model.graph.output))
    ]
    Runner.assert_similar_outputs(expected, outputs, rtol=case.rtol, atol=case.atol, model_dir=case.name)
