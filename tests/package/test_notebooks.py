"""The notebooks of examples/notebooks/ run top to bottom in a Jupyter kernel of this interpreter and
print what they should; and they are committed without outputs.

Each runs with nbclient in its own folder (as Jupyter opens it), with a timeout per cell.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "examples" / "notebooks"
ALL = sorted(NOTEBOOKS.glob("*.ipynb"))

nbclient = pytest.importorskip("nbclient", reason="nbclient is not installed (the [test] extra brings it)")
nbformat = pytest.importorskip("nbformat", reason="nbformat is not installed (the [test] extra brings it)")
pytest.importorskip("ipykernel", reason="ipykernel is not installed (the [test] extra brings it)")


def execute(name: str) -> str:
    """Run the notebook ``name`` in a kernel of this interpreter; everything its cells printed."""
    notebook: Any = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        timeout=120,  # seconds per cell
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    # The kernel is this interpreter, not whichever "python3" Jupyter finds first.
    client.kernel_manager_class = _kernel_manager()
    client.execute()
    texts = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output["output_type"] == "stream":
                texts.append(output["text"])
            elif "data" in output:
                texts.append(output["data"].get("text/plain", ""))
    return "\n".join(texts)


def _kernel_manager() -> Any:
    from jupyter_client.manager import KernelManager

    class ThisInterpreter(KernelManager):
        def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
            cmd = super().format_kernel_cmd(extra_arguments)
            return [sys.executable, *cmd[1:]]

    return ThisInterpreter


def test_the_notebooks_are_the_three() -> None:
    assert [p.name for p in ALL] == [
        "01_tensors_and_autodiff.ipynb",
        "02_train_the_guide_model.ipynb",
        "03_load_a_pytorch_checkpoint.ipynb",
    ]


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.stem)
def test_notebooks_are_committed_without_outputs(path: Path) -> None:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    for i, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None, f"{path.name} cell {i}"


def test_tensors_and_autodiff() -> None:
    out = execute("01_tensors_and_autodiff.ipynb")
    assert "a @ b = [[6.0, 6.0], [15.0, 15.0]]" in out
    assert "mean: 3.5" in out
    assert "argmax per row: [[2], [2]]" in out
    # y = sum(w * x^2) at x = (1, -2, 0.5), w = (3, 0.5, -1): by hand 3 + 2 - 0.25.
    assert "y = 4.75" in out
    assert "dy/dx = [6.0, -2.0, -1.0]" in out and "dy/dw = [1.0, 4.0, 0.25]" in out
    assert "gradients match NumPy: True" in out


def test_training_the_guide_model() -> None:
    out = execute("02_train_the_guide_model.ipynb")
    [(first, last)] = re.findall(r"train loss: epoch 1 ([\d.]+), epoch 2 ([\d.]+)", out)
    assert float(last) < float(first)
    [accuracy] = re.findall(r"valid accuracy after 2 epochs: ([\d.]+) %", out)
    assert float(accuracy) > 30.0  # 10 classes: chance is 10 %
    assert len(re.findall(r"Predicted \d Expected \d", out)) == 8
    assert re.search(r"\d/8 test digits right", out), out


def test_loading_a_pytorch_checkpoint() -> None:
    import numpy as np

    out = execute("03_load_a_pytorch_checkpoint.ipynb")
    expected = np.load(NOTEBOOKS.parent / "import_model_weights" / "expected.npz")
    assert "unused ['norm1.num_batches_tracked']" in out and "missing 0" in out
    assert f"torch predicts:  {expected['logits'].argmax(1).tolist()}" in out
    assert f"ferrum predicts: {expected['logits'].argmax(1).tolist()}" in out
    assert "same predictions as torch: True" in out
    [difference] = re.findall(r"max \|logit difference\|: ([\d.e+-]+)", out)
    assert float(difference) < 1e-4
