"""dataset.rs: the batcher that turns MNIST items into images in [-1, 1] (the generator's tanh range)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np
from ferrum import D1, D4, Device, Int, Tensor
from ferrum.backend import Backend
from ferrum.data.dataloader import Batcher
from ferrum.data.dataset.vision import MnistItem

B = TypeVar("B", bound=Backend)


@dataclass
class MnistBatch(Generic[B]):
    images: Tensor[B, D4]  # [batch, 1, 28, 28], in [-1, 1]
    targets: Tensor[B, D1, Int]  # [batch]; a GAN does not use them


class MnistBatcher(Batcher[MnistItem, MnistBatch[Any]]):
    """Burn 0.20's form ``batch(items, device)``.

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.data.dataset.vision import MnistDataset
        >>> items = [MnistDataset.sample("test").get(i) for i in range(2)]
        >>> batch = MnistBatcher().batch([i for i in items if i is not None], NdArray.device())
        >>> batch.images.dims(), batch.images.min().into_scalar() >= -1.0
        ((2, 1, 28, 28), True)
    """

    def batch(self, items: list[MnistItem], device: Device[B]) -> MnistBatch[B]:
        pixels = np.stack([item.image for item in items]).astype(np.float32)[:, None]
        # Mean 0.5 and standard deviation 0.5, as the PyTorch WGAN example: pixels in [-1, 1].
        images: Tensor[B, D4] = Tensor.from_numpy((pixels / 255.0 - 0.5) / 0.5, device)
        targets: Tensor[B, D1, Int] = Tensor.from_data([item.label for item in items], device)
        return MnistBatch(images, targets)
