"""The PyTorch side of benches/compare.py: loading torch, and the counterparts
of the training rows' models and Adam step.

PyTorch is never a dependency of ferrum; it is only the yardstick. This module
does not import ferrum, so the memory check's torch process (compare_memory.py)
holds torch alone. The models are built with torch's own initialisation;
compare_training.py copies ferrum's weights into them where a row compares
the same model.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import numpy.typing as npt
from compare_core import F32, Thunk

LR = 1e-4


def load_torch(disabled: bool, threads: int) -> Any:
    """The torch module set for a fair CPU comparison, or None when absent."""
    if disabled:
        return None
    try:
        torch = importlib.import_module("torch")
    except ImportError:
        return None
    torch.set_num_threads(threads)
    return torch


def torch_mlp(torch: Any) -> Any:
    """The 784-512-10 perceptron with a ReLU (compare_training.Mlp)."""
    nn = torch.nn
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 10))


def torch_guide_cnn(torch: Any) -> Any:
    """The Burn Book guide's MNIST model (examples/guide/model.py), layer for layer.

    Indices 1 and 3 are the convolutions, 8 and 11 the linear layers.
    """
    nn = torch.nn
    return nn.Sequential(
        nn.Unflatten(1, (1, 28)),
        nn.Conv2d(1, 8, (3, 3)),
        nn.Dropout(0.5),
        nn.Conv2d(8, 16, (3, 3)),
        nn.Dropout(0.5),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d((8, 8)),
        nn.Flatten(),
        nn.Linear(16 * 8 * 8, 512),
        nn.Dropout(0.5),
        nn.ReLU(),
        nn.Linear(512, 10),
    )


def torch_train_step(torch: Any, model: Any, inputs: F32, targets: npt.NDArray[np.int64]) -> Thunk:
    """One training step per call: forward, cross-entropy, backward, Adam.

    Adam's hyper-parameters are Burn's defaults (epsilon 1e-5), as ferrum's
    ``AdamConfig()``.
    """
    optim = torch.optim.Adam(model.parameters(), lr=LR, betas=(0.9, 0.999), eps=1e-5)
    tx, ty = torch.from_numpy(inputs), torch.from_numpy(targets)
    model.train()

    def step() -> None:
        optim.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(model(tx), ty).backward()
        optim.step()

    return step
