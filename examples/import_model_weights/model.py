"""The CNN the weights belong to, as ferrum modules; ``make_weights.py`` spells the same network in torch.

The field names are the torch state dict's keys, except the BatchNorm: torch's
``bn1`` is ``norm1`` here, which the stores rename with a key-remapping rule.
"""

from __future__ import annotations

from typing import TypeVar

from ferrum import D2, D3, Device, Tensor, config
from ferrum.backend import Backend
from ferrum.module import Module
from ferrum.nn import BatchNorm, BatchNormConfig, Linear, LinearConfig, MaxPool2d, MaxPool2dConfig, Relu
from ferrum.nn.conv import Conv2d, Conv2dConfig

B = TypeVar("B", bound=Backend)


class Model(Module[B]):
    conv1: Conv2d[B]
    norm1: BatchNorm[B]
    conv2: Conv2d[B]
    fc1: Linear[B]
    fc2: Linear[B]
    pool: MaxPool2d
    activation: Relu

    def forward(self, images: Tensor[B, D3]) -> Tensor[B, D2]:
        """Normalised images [batch, 28, 28] to logits [batch, 10]."""
        batch_size, height, width = images.dims()
        x = images.reshape((batch_size, 1, height, width))
        x = self.activation.forward(self.norm1.forward(self.conv1.forward(x)))  # [batch, 8, 26, 26]
        x = self.pool.forward(x)  # [batch, 8, 13, 13]
        x = self.pool.forward(self.activation.forward(self.conv2.forward(x)))  # [batch, 16, 5, 5]
        flat = x.reshape((batch_size, 16 * 5 * 5))
        return self.fc2.forward(self.activation.forward(self.fc1.forward(flat)))


@config
class ModelConfig:
    num_classes: int = 10
    hidden_size: int = 32

    def init(self, device: Device[B]) -> Model[B]:
        """The model with fresh weights on ``device``; ``load_from`` replaces them."""
        return Model(
            conv1=Conv2dConfig((1, 8), (3, 3)).init(device),
            norm1=BatchNormConfig(8).init(device),
            conv2=Conv2dConfig((8, 16), (3, 3)).init(device),
            fc1=LinearConfig(16 * 5 * 5, self.hidden_size).init(device),
            fc2=LinearConfig(self.hidden_size, self.num_classes).init(device),
            pool=MaxPool2dConfig((2, 2)).init(),
            activation=Relu(),
        )
