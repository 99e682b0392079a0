"""``python -m examples.onnx_inference``: an ONNX MNIST model run by ferrum, at run time and as code.

The same ``mnist.onnx`` goes through both of ferrum's import paths:
``ferrum.onnx.load`` (a module built from the graph at run time) and
``python -m ferrum.onnx MODEL OUT_DIR`` (a typed Python module and its
weights, written into a temporary folder, then imported). Both run on
digits of ferrum's MNIST test sample and are checked against onnxruntime's
outputs (``expected.npz``). Options: ``--model PATH``, ``--expected PATH``
(your own files), ``--digits N`` (default 8), ``--smoke`` (2 digits).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

import ferrum.onnx
import numpy as np
from ferrum import D4, Tensor
from ferrum.backend import NdArray

from ..common.cli import example_parser
from ..common.reference_digits import Array, add_reference_args, compare, load_reference, sample_digits

HERE = Path(__file__).resolve().parent


def digits(indices: list[int]) -> Array:
    """The test sample's digits ``indices``, normalised as in training: [n, 1, 28, 28]."""
    return sample_digits(indices)[:, None]


def generate(model: Path, out_dir: Path) -> ModuleType:
    """``python -m ferrum.onnx model out_dir``, as a user runs it, then the written module imported."""
    done = subprocess.run(
        [sys.executable, "-m", "ferrum.onnx", str(model), str(out_dir), "--name", "mnist_model"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"python -m ferrum.onnx failed:\n{done.stderr}")
    print(f"  {done.stdout.strip()}")
    source = out_dir / "mnist_model.py"
    spec = importlib.util.spec_from_file_location("mnist_model", source)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot import {source}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses (ferrum's Modules are) look their module up there
    spec.loader.exec_module(module)
    return module


def main() -> int:
    parser = example_parser("onnx_inference", __doc__)
    parser.add_argument("--model", type=Path, default=HERE / "mnist.onnx")
    add_reference_args(parser, HERE / "expected.npz")
    args = parser.parse_args()
    reference = load_reference(parser, args, "log_probs")

    device = NdArray.device()
    x: Tensor[NdArray, D4] = Tensor.from_numpy(digits(reference.indices), device)
    results: dict[str, Array] = {}

    # 1. At run time: the graph becomes a ferrum Module whose initializers are Params.
    runtime = ferrum.onnx.load(args.model, device)
    results["ferrum.onnx.load"] = np.asarray(runtime.forward(x).to_numpy(), np.float32)

    # 2. As code: a typed module and its .mpk weights, generated, imported and loaded.
    with tempfile.TemporaryDirectory() as tmp:
        print(f"python -m ferrum.onnx {args.model.name} {tmp}")
        generated = generate(args.model, Path(tmp))
        model = generated.load(Path(tmp) / "mnist_model.mpk", device)
        print(f"  {type(model).__name__} fields: {', '.join(vars(model))}")
        results["generated code"] = np.asarray(model.forward(x).to_numpy(), np.float32)

    ok = []
    for name, ours in results.items():
        print(f"{name}:")
        ok.append(compare(ours, reference, "onnxruntime", "output"))
    if not all(ok):
        print("ferrum's outputs differ from onnxruntime's", file=sys.stderr)
        return 1
    print(f"both import paths give onnxruntime's predictions on {len(reference.indices)} digits")
    return 0


if __name__ == "__main__":
    sys.exit(main())
