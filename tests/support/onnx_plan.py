"""What the compiled-plan tests (tests/onnx/test_plan.py, test_plan_ops.py) share: run a model twice
and take its compiled plan, and assert the plan ran wholly in the engine."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from ferrum import Tensor
from ferrum.backend import NdArray
from ferrum.onnx.model import OnnxModel
from ferrum.onnx.plan import CompiledPlan, plan_cache, signature

Array = npt.NDArray[Any]
DEVICE = NdArray.device()


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
