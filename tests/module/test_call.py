"""Calling a module: ``model(x)`` is ``model.forward(x)`` at run time and for mypy and pyright alike."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import types
from pathlib import Path
from typing import TypeVar

import numpy as np
import pytest
from ferrum import D2, Tensor
from ferrum.backend import Backend, NdArray
from ferrum.module import Module
from ferrum.nn import LinearConfig, Relu

B = TypeVar("B", bound=Backend)
DEVICE = NdArray.device()
REPO_PYTHON = Path(__file__).resolve().parents[2] / "python"
NO_PYRIGHT = importlib.util.find_spec("pyright") is None


class Twice(Module[B]):
    def forward(self, x: Tensor[B, D2], bias: float = 0.0) -> Tensor[B, D2]:
        return x * 2.0 + bias


class NoForward(Module[B]):
    width: int


class OwnCall(Module[B]):
    def forward(self, x: Tensor[B, D2]) -> Tensor[B, D2]:
        return x

    def __call__(self, x: Tensor[B, D2]) -> Tensor[B, D2]:
        return x * 3.0


def test_call_is_forward() -> None:
    layer = LinearConfig(4, 2).init(DEVICE)
    x: Tensor[NdArray, D2] = Tensor.from_data(np.arange(12, dtype=np.float32).reshape(3, 4), DEVICE)
    np.testing.assert_array_equal(layer(x).to_numpy(), layer.forward(x).to_numpy())
    np.testing.assert_array_equal(Relu()(x - 5.0).to_numpy(), np.maximum(x.to_numpy() - 5.0, 0.0))


def test_call_passes_keywords_and_errors_through() -> None:
    x: Tensor[NdArray, D2] = Tensor.ones((2, 2), DEVICE)
    assert Twice[NdArray]()(x, bias=1.0).to_numpy().tolist() == [[3.0, 3.0], [3.0, 3.0]]
    with pytest.raises(TypeError, match="bias"):
        Twice[NdArray]()(x, biass=1.0)  # type: ignore[call-arg]


def test_a_module_without_forward_is_not_callable() -> None:
    with pytest.raises(TypeError, match="NoForward is not callable: it has no forward method"):
        NoForward[NdArray](3)()  # type: ignore[call-overload]


def test_a_subclass_may_define_its_own_call() -> None:
    x: Tensor[NdArray, D2] = Tensor.ones((1, 1), DEVICE)
    assert OwnCall[NdArray]()(x).item() == 3.0


SNIPPET = """\
from __future__ import annotations

from typing import TypeVar

from ferrum import D2, D3, Int, Tensor
from ferrum.backend import Backend, NdArray
from ferrum.module import Module
from ferrum.nn import Linear, LinearConfig, Relu

B = TypeVar("B", bound=Backend)


class Mlp(Module[B]):
    fc: Linear[B]
    relu: Relu

    def forward(self, x: Tensor[B, D2]) -> Tensor[B, D2]:
        return self.relu(self.fc(x))


device = NdArray.device()
model = Mlp(LinearConfig(4, 2).init(device), Relu())
x: Tensor[NdArray, D2] = Tensor.ones((3, 4), device)
y: Tensor[NdArray, D2] = model(x)
z: Tensor[NdArray, D3] = model(x)  # rejected
model("x")  # rejected
model(x, x)  # rejected
labels: Tensor[NdArray, D2, Int] = model(x)  # rejected
volume: Tensor[NdArray, D3] = Tensor.ones((1, 2, 4), device)
out3: Tensor[NdArray, D3] = model.fc(volume)
"""


def rejected_lines(source: str) -> set[int]:
    return {n for n, line in enumerate(source.splitlines(), 1) if line.endswith("# rejected")}


def test_mypy_types_a_call_as_forward(tmp_path: Path) -> None:
    from mypy import api

    (tmp_path / "snippet.py").write_text(SNIPPET)
    config = f"[mypy]\nstrict = True\nmypy_path = {REPO_PYTHON}\nplugins = ferrum.mypy\n"
    (tmp_path / "mypy.ini").write_text(config)
    stdout, stderr, _ = api.run(
        ["--config-file", str(tmp_path / "mypy.ini"), "--cache-dir", str(tmp_path / "cache"),
         "--no-error-summary", str(tmp_path / "snippet.py")]
    )
    assert not stderr, stderr
    errors = {int(m[1]) for m in re.finditer(r"snippet\.py:(\d+): error:", stdout)}
    assert errors == rejected_lines(SNIPPET), stdout


@pytest.mark.skipif(NO_PYRIGHT, reason="pyright is not installed (the [test] extra brings it)")
def test_pyright_types_a_call_as_forward(tmp_path: Path) -> None:
    (tmp_path / "snippet.py").write_text(SNIPPET)
    proc = subprocess.run(
        [sys.executable, "-m", "pyright", "--pythonpath", sys.executable, str(tmp_path / "snippet.py")],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    errors = {int(m[1]) for m in re.finditer(r"snippet\.py:(\d+):\d+ - error", proc.stdout)}
    assert errors == rejected_lines(SNIPPET), proc.stdout


def test_snippet_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    kept = "\n".join(line for line in SNIPPET.splitlines() if not line.endswith("# rejected"))
    module = types.ModuleType("snippet")
    monkeypatch.setitem(sys.modules, "snippet", module)  # dataclasses look the module up
    exec(compile(kept, "snippet", "exec"), module.__dict__)
    assert isinstance(module.y, Tensor) and module.y.dims() == (3, 2)
    assert module.out3.dims() == (1, 2, 2)
