"""The PyTorch side of the scripts that make the committed files of two examples (torch only there).

``import_model_weights/make_weights.py`` and ``onnx_inference/make_model.py``
each train a small CNN in torch on the MNIST sample ferrum ships, read here
straight from its IDX files, with the same loop; only the network, its loss
and what is written afterwards differ. Nothing in ferrum or its examples
imports this module: run those scripts with a Python that has torch.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch  # type: ignore[import-not-found]  # torch is in the torch venv only

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "python" / "ferrum" / "data" / "dataset" / "vision" / "mnist_sample"
MEAN, STD = 0.1307, 0.3081  # of the MNIST training pixels in [0, 1], as the examples normalise
NUM_EXPECTED = 8  # test digits whose outputs the examples check
EPOCHS = 4


def read_idx(name: str) -> np.ndarray[Any, Any]:
    """An IDX file of the sample (uint8 images [n, 28, 28] or labels [n])."""
    data = gzip.decompress((SAMPLE / f"{name}.gz").read_bytes())
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * dims).reshape(shape)


def normalise(images: np.ndarray[Any, Any]) -> np.ndarray[Any, np.dtype[np.float32]]:
    """uint8 [n, 28, 28] to the float32 [n, 1, 28, 28] the networks read."""
    x = images.astype(np.float32) / 255.0
    return ((x - MEAN) / STD).astype(np.float32)[:, None]


def train(network: Callable[[], Any], loss_fn: Callable[[Any, Any], Any]) -> Any:
    """``network()`` trained by Adam (lr 2e-3, batches of 64, seed 0) for ``EPOCHS`` epochs on the
    sample's training digits, ``loss_fn(outputs, targets)`` its loss; returned in eval mode."""
    torch.manual_seed(0)  # before the network is made: its initial weights are drawn from it too
    train_x = torch.from_numpy(normalise(read_idx("train-images-idx3-ubyte")))
    targets = torch.from_numpy(read_idx("train-labels-idx1-ubyte").astype(np.int64))
    model = network()
    optim = torch.optim.Adam(model.parameters(), lr=2e-3)
    model.train()
    for epoch in range(EPOCHS):
        order = torch.randperm(len(targets))
        last = float("nan")
        for start in range(0, len(order), 64):
            idx = order[start : start + 64]
            loss = loss_fn(model(train_x[idx]), targets[idx])
            optim.zero_grad()
            loss.backward()
            optim.step()
            last = loss.item()
        print(f"epoch {epoch + 1}: last batch loss {last:.3f}")
    model.eval()
    return model
