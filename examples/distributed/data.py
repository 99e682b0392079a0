"""MNIST items into batches of flattened images (Burn's example reads AG News; this one downloads nothing)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np
from ferrum import D1, D2, Device, Int, Tensor
from ferrum.backend import Backend
from ferrum.data.dataloader import Batcher
from ferrum.data.dataset.vision import MnistItem

B = TypeVar("B", bound=Backend)

# Mean and standard deviation of the MNIST training pixels (scaled to [0, 1]).
MEAN, STD = 0.1307, 0.3081


@dataclass
class MnistBatch(Generic[B]):
    images: Tensor[B, D2]  # [batch, 784], normalised
    targets: Tensor[B, D1, Int]  # [batch]


class MnistBatcher(Batcher[MnistItem, MnistBatch[Any]]):
    """Items to a batch on the device given: the autodiff one for training, the inner one to validate."""

    def batch(self, items: list[MnistItem], device: Device[B]) -> MnistBatch[B]:
        pixels = np.stack([item.image for item in items]).reshape(len(items), 28 * 28)
        scaled = ((pixels.astype(np.float32) / 255.0) - MEAN) / STD
        images: Tensor[B, D2] = Tensor.from_numpy(scaled.astype(np.float32), device)
        targets: Tensor[B, D1, Int] = Tensor.from_ints([item.label for item in items], device)
        return MnistBatch(images, targets)
