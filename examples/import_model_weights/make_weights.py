"""Make this example's weight files with PyTorch: ``model.pt``, ``model.safetensors`` and ``expected.npz``.

    /path/to/torch-venv/bin/python examples/import_model_weights/make_weights.py

Needs torch and safetensors, which ferrum never does: the files it writes are
committed, and the example only reads them. The network is defined in torch
as an ``nn.Sequential`` of named layers (so its state-dict keys are
``conv1.weight``, ``bn1.running_mean``, ``fc2.bias``, ...), trained for four
epochs on the MNIST sample ferrum ships (read here straight from its IDX
files), then saved as a state dict (``torch.save``) and as safetensors.
``expected.npz`` holds torch's logits (eval mode) for the first eight
digits of ferrum's test sample, with their indices and labels.
"""

from __future__ import annotations

import gzip
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
import torch  # type: ignore[import-not-found]  # torch is in the torch venv only
from safetensors.torch import save_file
from torch import nn  # pyright: ignore[reportMissingImports]

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parent.parent / "python" / "ferrum" / "data" / "dataset" / "vision" / "mnist_sample"
MEAN, STD = 0.1307, 0.3081  # of the MNIST training pixels in [0, 1], as the example's batcher uses
NUM_EXPECTED = 8
EPOCHS = 4


def read_idx(name: str) -> np.ndarray[Any, Any]:
    """An IDX file of the sample (uint8 images [n, 28, 28] or labels [n])."""
    data = gzip.decompress((SAMPLE / f"{name}.gz").read_bytes())
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * dims).reshape(shape)


def normalise(images: np.ndarray[Any, Any]) -> Any:
    """uint8 [n, 28, 28] to the float tensor [n, 1, 28, 28] the network reads."""
    x = torch.from_numpy(images.astype(np.float32) / 255.0)
    return ((x - MEAN) / STD).unsqueeze(1)


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
    torch.manual_seed(0)
    train_x, train_y = normalise(read_idx("train-images-idx3-ubyte")), read_idx("train-labels-idx1-ubyte")
    targets = torch.from_numpy(train_y.astype(np.int64))
    model = network()
    optim = torch.optim.Adam(model.parameters(), lr=2e-3)
    model.train()
    for epoch in range(EPOCHS):
        order = torch.randperm(len(targets))
        last = float("nan")
        for start in range(0, len(order), 64):
            idx = order[start : start + 64]
            loss = nn.functional.cross_entropy(model(train_x[idx]), targets[idx])
            optim.zero_grad()
            loss.backward()
            optim.step()
            last = loss.item()
        print(f"epoch {epoch + 1}: last batch loss {last:.3f}")

    model.eval()
    state = model.state_dict()
    torch.save(state, HERE / "model.pt")
    save_file({k: v.contiguous() for k, v in state.items()}, str(HERE / "model.safetensors"))

    test_x, test_y = read_idx("t10k-images-idx3-ubyte"), read_idx("t10k-labels-idx1-ubyte")
    with torch.no_grad():
        logits = model(normalise(test_x[:NUM_EXPECTED])).numpy()
        accuracy = (model(normalise(test_x)).argmax(1).numpy() == test_y).mean()
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
