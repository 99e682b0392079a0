"""Real architectures exported by torch's two ONNX exporters run in ferrum as in onnxruntime.

The fixtures (tests/fixtures/onnx_real, written by scripts/make_onnx_real_fixtures.py, which needs
torch, torchvision, transformers and onnxruntime; these tests need none of them) are torchvision
and Hugging Face architectures with small configs and seeded random weights, each exported with the
TorchScript exporter (``-ts``, opset 17) and the dynamo exporter (``-dynamo``), with onnxruntime's
outputs for stored inputs. Every case runs through ``ferrum.onnx.load`` (step by step, and as a
compiled plan) and through the module ``python -m ferrum.onnx`` generates, which must pass
``mypy --strict``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from ferrum import Tensor
from ferrum.backend import NdArray
from ferrum.onnx import load
from ferrum.onnx.codegen import generate
from ferrum.onnx.plan import plan_cache, signature

from tests.support.onnx_models import import_generated, mypy_strict
from tests.support.onnx_real_models import FIXTURES, fill_weights

DEVICE = NdArray.device()
MANIFEST = json.loads((FIXTURES / "manifest.json").read_text())
CASES = sorted(MANIFEST["cases"])
# onnxruntime and ferrum sum in different orders: relative to the output's own scale.
RTOL = 1e-5


def _case(name: str) -> tuple[onnx.ModelProto, list[np.ndarray], list[np.ndarray]]:
    proto = fill_weights(onnx.load(FIXTURES / f"{name}.onnx"))
    data = np.load(FIXTURES / f"{name}.npz")
    weights = {t.name for t in proto.graph.initializer}
    inputs = [data[f"in_{i.name}"] for i in proto.graph.input if i.name not in weights]
    outputs = [
        data[k] for k in sorted((k for k in data.files if k.startswith("out_")), key=lambda k: int(k[4:]))
    ]
    return proto, inputs, outputs


def _check(name: str, model: Any, inputs: list[np.ndarray], expected: list[np.ndarray]) -> None:
    out = model.forward(*(Tensor.from_numpy(x, DEVICE) for x in inputs))
    got = out if isinstance(out, tuple) else (out,)
    assert len(got) == len(expected), name
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        scale = float(np.abs(e).max())
        assert scale > 1e-3, f"{name}: output {i} is all but zero: the fixture checks nothing"
        err = float(np.abs(g.to_numpy() - e).max())
        assert g.dims() == e.shape and err <= RTOL * scale, (
            f"{name} output {i}: |diff| {err:.2e}, scale {scale:.2e}"
        )


def test_the_suite_covers_every_architecture_with_both_exporters() -> None:
    archs = {c.rsplit("-", 1)[0] for c in CASES}
    assert len(archs) >= 20 and len(CASES) >= 40
    # what torch itself could not export is recorded with torch's reason
    assert set(MANIFEST["not_exported"]) <= {f"{a}-{e}" for a in archs for e in ("ts", "dynamo")}


@pytest.mark.parametrize("name", CASES)
def test_runs_as_onnxruntime(name: str) -> None:
    proto, inputs, expected = _case(name)
    _check(name, load(proto, DEVICE, plan=False), inputs, expected)


@pytest.mark.filterwarnings("error::RuntimeWarning")  # a graph that cannot compile would warn
@pytest.mark.parametrize("name", CASES)
def test_plan_runs_as_onnxruntime(name: str) -> None:
    proto, inputs, expected = _case(name)
    model = load(proto, DEVICE)
    _check(name, model, inputs, expected)  # the first call compiles the plan as it runs step by step
    _check(name, model, inputs, expected)  # the second runs the plan
    key = signature([Tensor.from_numpy(x, DEVICE) for x in inputs])
    assert key is not None
    compiled = plan_cache(model)[key]
    assert compiled is not None and compiled.engine_segments >= 1, name


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    out = tmp_path_factory.mktemp("real_generated")
    files = {}
    for name in CASES:
        path = out / f"{name.replace('-', '_')}.onnx"
        onnx.save(_case(name)[0], path)
        made = generate(path, out)
        files[name] = (made.source, made.weights)
    return files


@pytest.mark.parametrize("name", CASES)
def test_generated_code_runs_as_onnxruntime(name: str, generated: dict[str, tuple[Path, Path]]) -> None:
    _, inputs, expected = _case(name)
    source, weights = generated[name]
    module = import_generated(source, "real")
    _check(name, module.load(weights, DEVICE), inputs, expected)


def test_generated_code_passes_mypy_strict(generated: dict[str, tuple[Path, Path]], tmp_path: Path) -> None:
    status, report = mypy_strict([source for source, _ in generated.values()], tmp_path)
    assert status == 0, report
