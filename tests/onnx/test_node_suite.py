"""ONNX's backend node tests (onnx.backend.test.case.node) on ferrum's ONNX backend.

Every node test runs (about 1,700 small models, a few seconds; a case of an op
ferrum.onnx lacks fails at load). The set of failing cases must be exactly the
one recorded in tests/fixtures/onnx_node_failures.txt by
scripts/onnx_op_table.py, which also writes the per-op table docs/onnx-ops.md:
a regression and an unrecorded fix both fail here.
"""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from ferrum.onnx import registered_ops
from ferrum.onnx.conformance import CaseResult, case_op, node_cases, run_case

FIXTURE = Path(__file__).parents[1] / "fixtures" / "onnx_node_failures.txt"
# Ops whose outputs are random draws, which the node tests' references cannot predict.
RANDOM_OPS = {"Bernoulli", "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike"}


@pytest.fixture(scope="module")
def results() -> list[CaseResult]:
    cases = node_cases()
    base = {c.name: case_op(c, {}) for c in cases if "_expanded" not in c.name}
    return [run_case(case, case_op(case, base)) for case in cases]


def _recorded() -> dict[str, str]:
    lines = [line for line in FIXTURE.read_text().splitlines() if line and not line.startswith("#")]
    return dict(line.split("\t", 1) for line in lines)


def test_failures_are_exactly_the_recorded_ones(results: list[CaseResult]) -> None:
    header = FIXTURE.read_text().splitlines()[0]
    assert f"onnx {onnx.__version__}" in header, f"the fixture was recorded with another onnx: {header}"
    recorded = _recorded()
    failing = {r.name: r.error for r in results if not r.passed}
    new = {name: error for name, error in failing.items() if name not in recorded}
    # A random op's case can match its reference by chance (Bernoulli's output is 0s and 1s):
    # such a case may pass or fail without being a fix.
    by_name = {r.name: r.op for r in results}
    fixed = sorted(name for name in set(recorded) - set(failing) if by_name.get(name) not in RANDOM_OPS)
    assert not new, f"node tests that now fail (run scripts/onnx_op_table.py if expected): {new}"
    assert not fixed, f"node tests that now pass (run scripts/onnx_op_table.py to record it): {fixed}"


def test_most_node_tests_of_supported_ops_pass(results: list[CaseResult]) -> None:
    supported = set(registered_ops())
    own = [r for r in results if r.op in supported]
    passed = sum(r.passed for r in own)
    assert len(own) > 1000
    assert passed / len(own) > 0.8


# Ops whose node tests cannot pass by design (each is tested in tests/onnx/test_ops.py instead).
NO_PASSING_CASE = {
    "Bernoulli": "random draws: the reference's values cannot be reproduced",
    "Not": "its node tests import opset 1, below the supported 7",
}


def test_every_implemented_op_passes_some_node_test(results: list[CaseResult]) -> None:
    ops_run = {r.op for r in results} & set(registered_ops())
    passing = {r.op for r in results if r.passed}
    assert sorted(ops_run - passing - set(NO_PASSING_CASE)) == [], "ops whose every node test fails"
