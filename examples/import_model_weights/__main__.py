"""``python -m examples.import_model_weights``: PyTorch-trained MNIST weights in ferrum (.pt, .safetensors).

Loads ``model.pt`` through ``PytorchStore`` and ``model.safetensors`` through
``SafetensorsStore`` (both with the PyTorch-to-Burn adapter and one key
renaming) into the same ferrum model, runs it on digits of ferrum's MNIST
test sample and checks its logits against those torch computed
(``expected.npz``). Options: ``--pt PATH``, ``--safetensors PATH``,
``--expected PATH`` (your own files), ``--digits N`` (default 8),
``--smoke`` (2 digits).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from ferrum import D3, Device, Tensor
from ferrum.backend import Backend, NdArray
from ferrum.store import ModuleStore, PytorchStore, PyTorchToBurnAdapter, SafetensorsStore

from ..common.cli import example_parser
from ..common.reference_digits import add_reference_args, compare, load_reference, sample_digits
from .model import Model, ModelConfig

B = TypeVar("B", bound=Backend)

HERE = Path(__file__).resolve().parent


def stores(pt: Path, safetensors: Path) -> dict[str, ModuleStore]:
    """The two files as stores: PyTorch's layout made Burn's, torch's ``bn1`` renamed ``norm1``."""
    return {
        pt.name: PytorchStore.from_file(pt).with_key_remapping(r"^bn1\.", "norm1."),
        safetensors.name: SafetensorsStore.from_file(safetensors)
        .with_from_adapter(PyTorchToBurnAdapter())
        .with_key_remapping(r"^bn1\.", "norm1."),
    }


def images(indices: list[int], device: Device[B]) -> Tensor[B, D3]:
    """The test sample's digits ``indices``, normalised as in training: [n, 28, 28]."""
    return Tensor.from_numpy(sample_digits(indices), device)


def run(model: Model[B], x: Tensor[B, D3]) -> np.ndarray[Any, np.dtype[np.float32]]:
    return np.asarray(model.forward(x).to_numpy(), dtype=np.float32)


def main() -> int:
    parser = example_parser("import_model_weights", __doc__)
    parser.add_argument("--pt", type=Path, default=HERE / "model.pt")
    parser.add_argument("--safetensors", type=Path, default=HERE / "model.safetensors")
    add_reference_args(parser, HERE / "expected.npz")
    args = parser.parse_args()
    reference = load_reference(parser, args, "logits")

    device = NdArray.device()
    x = images(reference.indices, device)
    failures = 0
    for name, store in stores(args.pt, args.safetensors).items():
        model, result = ModelConfig().init(device).load_from_with_result(store)
        print(f"{name}: {result!r}")
        for path in result.unused:
            print(f"  unused: {path}")
        if not compare(run(model, x), reference, "torch", "logit"):
            failures += 1
    if failures:
        print(f"{failures} of the files disagree with torch", file=sys.stderr)
        return 1
    print(f"both files give torch's predictions on {len(reference.indices)} digits")
    return 0


if __name__ == "__main__":
    sys.exit(main())
