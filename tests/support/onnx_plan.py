"""What the compiled-plan tests (tests/onnx/test_plan.py, test_plan_ops.py) share: build a model of
a few nodes, run it twice and take its compiled plan, and assert the plan ran wholly in the engine.

Both modules turn RuntimeWarning into an error: a graph that cannot compile warns and runs step by
step, which there is a failure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import onnx
from ferrum import Tensor
from ferrum.backend import NdArray
from ferrum.onnx import load
from ferrum.onnx.model import OnnxModel
from ferrum.onnx.plan import CompiledPlan, plan_cache, signature
from onnx import helper, numpy_helper

Array = npt.NDArray[Any]
DEVICE = NdArray.device()


def plan_model(
    nodes: list[onnx.NodeProto],
    inputs: Sequence[tuple[str, int, Sequence[int | str]]],
    outputs: Sequence[tuple[str, int]],
    inits: dict[str, Array] | None = None,
    opset: int = 17,
    plan: bool = True,
) -> OnnxModel:
    """``nodes`` as a loaded model: inputs ``(name, TensorProto type, shape)`` (a str is a symbolic
    dimension), outputs ``(name, type)``, ``inits`` as initializers; ``plan=False`` runs step by step."""
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(n, t, list(s)) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, None) for n, t in outputs],
        [numpy_helper.from_array(a, k) for k, a in (inits or {}).items()],
    )
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    return load(proto, DEVICE, plan=plan)


def run_planned(model: OnnxModel, *arrays: Array) -> tuple[tuple[Array, ...], CompiledPlan]:
    """The outputs of the second call (the first compiles the plan), and the plan."""
    xs = [Tensor.from_numpy(a, DEVICE) for a in arrays]
    model.forward(*xs)
    out = model.forward(*xs)
    compiled = plan_cache(model)[signature(xs)]  # type: ignore[index]
    assert compiled is not None
    got = out if isinstance(out, tuple) else (out,)
    return tuple(np.asarray(g.to_numpy()) for g in got), compiled


def only_engine(compiled: CompiledPlan) -> None:
    """Assert that ``compiled`` runs as one engine segment, with no op left to Python."""
    assert compiled.python_ops == () and compiled.engine_segments == 1 and compiled.direct
