"""Make this example's weight files with PyTorch: ``model.pt``, ``model.safetensors`` and ``expected.npz``.

    /path/to/torch-venv/bin/python -m examples.import_model_weights.make_weights  # from the repository root

Needs torch and safetensors, which ferrum never does: the files it writes are
committed, and the example only reads them. The network is defined in torch
as an ``nn.Sequential`` of named layers (so its state-dict keys are
``conv1.weight``, ``bn1.running_mean``, ``fc2.bias``, ...), trained for four
epochs on the MNIST sample ferrum ships by the loop it shares with
``onnx_inference/make_model.py`` (``examples/common/torch_mnist.py``), then
saved as a state dict (``torch.save``) and as safetensors.
``expected.npz`` holds torch's logits (eval mode) for the first eight
digits of ferrum's test sample, with their indices and labels.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
import torch  # type: ignore[import-not-found]  # torch is in the torch venv only
from safetensors.torch import save_file
from torch import nn  # pyright: ignore[reportMissingImports]

from ..common.torch_mnist import NUM_EXPECTED, normalise, read_idx, train

HERE = Path(__file__).resolve().parent


def network() -> Any:
    """The CNN of model.py, spelled in torch (BatchNorm is ``bn1`` here, ``norm1`` in ferrum)."""
    return nn.Sequential(
        OrderedDict(
            conv1=nn.Conv2d(1, 8, 3),  # [n, 8, 26, 26]
            bn1=nn.BatchNorm2d(8),
            relu1=nn.ReLU(),
            pool1=nn.MaxPool2d(2),  # [n, 8, 13, 13]
            conv2=nn.Conv2d(8, 16, 3),  # [n, 16, 11, 11]
            relu2=nn.ReLU(),
            pool2=nn.MaxPool2d(2),  # [n, 16, 5, 5]
            flatten=nn.Flatten(),
            fc1=nn.Linear(16 * 5 * 5, 32),
            relu3=nn.ReLU(),
            fc2=nn.Linear(32, 10),
        )
    )


def main() -> None:
    model = train(network, nn.functional.cross_entropy)
    state = model.state_dict()
    torch.save(state, HERE / "model.pt")
    save_file({k: v.contiguous() for k, v in state.items()}, str(HERE / "model.safetensors"))

    test_x, test_y = read_idx("t10k-images-idx3-ubyte"), read_idx("t10k-labels-idx1-ubyte")
    with torch.no_grad():
        logits = model(torch.from_numpy(normalise(test_x[:NUM_EXPECTED]))).numpy()
        accuracy = (model(torch.from_numpy(normalise(test_x))).argmax(1).numpy() == test_y).mean()
    np.savez(
        HERE / "expected.npz",
        indices=np.arange(NUM_EXPECTED, dtype=np.int64),
        labels=test_y[:NUM_EXPECTED].astype(np.int64),
        logits=logits.astype(np.float32),
    )
    print(f"test accuracy of the torch model on the 1000 sample digits: {accuracy:.3f}")
    for name in ("model.pt", "model.safetensors", "expected.npz"):
        print(f"wrote {name} ({(HERE / name).stat().st_size} bytes)")


if __name__ == "__main__":
    main()
