"""The batcher that turns MNIST items into normalised image and label tensors (as the guide's data.py).

Each example folder is a package of its own, so this one keeps its copy
rather than importing the guide's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np
from ferrum import D1, D3, Device, Int, Tensor
from ferrum.backend import Backend
from ferrum.data.dataloader import Batcher
from ferrum.data.dataset.vision import MnistItem

B = TypeVar("B", bound=Backend)

# Mean and standard deviation of the MNIST training pixels scaled to [0, 1].
MEAN = 0.1307
STD = 0.3081


@dataclass
class MnistBatch(Generic[B]):
    images: Tensor[B, D3]  # [batch, 28, 28], normalised
    targets: Tensor[B, D1, Int]  # [batch]


class MnistBatcher(Batcher[MnistItem, MnistBatch[B]]):
    """Makes batches on ``device``: training ones on the autodiff backend, validation ones on the inner."""

    def __init__(self, device: Device[B]) -> None:
        self.device = device

    def batch(self, items: list[MnistItem]) -> MnistBatch[B]:
        pixels = np.stack([item.image for item in items])
        images: Tensor[B, D3] = Tensor.from_numpy(pixels, self.device).float()
        images = ((images / 255.0) - MEAN) / STD
        targets: Tensor[B, D1, Int] = Tensor.from_data([item.label for item in items], self.device)
        return MnistBatch(images, targets)
