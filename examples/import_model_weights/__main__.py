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

import argparse
import sys
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from ferrum import D3, Device, Tensor
from ferrum.backend import Backend, NdArray
from ferrum.data.dataset.vision import MnistDataset
from ferrum.store import ModuleStore, PytorchStore, PyTorchToBurnAdapter, SafetensorsStore

from .model import Model, ModelConfig

B = TypeVar("B", bound=Backend)

HERE = Path(__file__).resolve().parent
MEAN, STD = 0.1307, 0.3081  # the normalisation torch trained with
TOLERANCE = 1e-4


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
    test = MnistDataset.sample("test")
    items = [test.get(i) for i in indices]
    pixels = np.stack([item.image for item in items if item is not None]).astype(np.float32)
    if len(pixels) != len(indices):
        raise SystemExit(f"the test sample has {test.len()} digits; asked for {indices}")
    return Tensor.from_numpy((pixels / 255.0 - MEAN) / STD, device)


def run(model: Model[B], x: Tensor[B, D3]) -> np.ndarray[Any, np.dtype[np.float32]]:
    return np.asarray(model.forward(x).to_numpy(), dtype=np.float32)


def main() -> int:
    summary = __doc__.splitlines()[0] if __doc__ else None
    parser = argparse.ArgumentParser(prog="python -m examples.import_model_weights", description=summary)
    parser.add_argument("--pt", type=Path, default=HERE / "model.pt")
    parser.add_argument("--safetensors", type=Path, default=HERE / "model.safetensors")
    parser.add_argument("--expected", type=Path, default=HERE / "expected.npz")
    parser.add_argument("--digits", type=int, default=8)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()

    expected = np.load(args.expected)
    count = 2 if args.smoke else args.digits
    indices = [int(i) for i in expected["indices"][:count]]
    labels, torch_logits = expected["labels"][:count], expected["logits"][:count]
    if len(indices) < count:
        parser.error(f"{args.expected} holds {len(indices)} digits, fewer than {count}")

    device = NdArray.device()
    x = images(indices, device)
    failures = 0
    for name, store in stores(args.pt, args.safetensors).items():
        model, result = ModelConfig().init(device).load_from_with_result(store)
        print(f"{name}: {result!r}")
        for path in result.unused:
            print(f"  unused: {path}")
        logits = run(model, x)
        diff = float(np.abs(logits - torch_logits).max())
        same = bool((logits.argmax(1) == torch_logits.argmax(1)).all())
        print("  digit  label  torch  ferrum")
        predictions = zip(indices, labels, torch_logits.argmax(1), logits.argmax(1), strict=True)
        for i, label, theirs, ours in predictions:
            print(f"  {i:5d}  {label:5d}  {theirs:5d}  {ours:6d}")
        print(f"  same predictions: {same}; max |logit difference| {diff:.2e} (tolerance {TOLERANCE:.0e})")
        if not same or diff > TOLERANCE:
            failures += 1
    if failures:
        print(f"{failures} of the files disagree with torch", file=sys.stderr)
        return 1
    print(f"both files give torch's predictions on {count} digits")
    return 0


if __name__ == "__main__":
    sys.exit(main())
