"""Running ONNX's backend node tests (``onnx.backend.test.case.node``) on ferrum's backend.

Used by ``tests/test_onnx_node_suite.py`` and by ``scripts/onnx_op_table.py``
(which writes the per-op pass table, ``docs/onnx-ops.md``). Each case is one
generated model with its inputs and expected outputs; it passes when
``FerrumBackend`` reproduces them under the runner's own comparison
(``onnx.backend.test.runner.Runner.assert_similar_outputs``: shape, dtype,
and values within the case's rtol/atol).
"""

from __future__ import annotations

import dataclasses
import re
import warnings
from typing import Any

import onnx
from onnx.backend.test.case.test_case import TestCase
from onnx.backend.test.loader import load_node_model_tests
from onnx.backend.test.runner import Runner

from ferrum.onnx.backend import FerrumBackend

__all__ = ["CaseResult", "case_op", "node_cases", "run_case"]

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
