"""The guide's CNN and its config (Burn's example imports them from its guide).

A hand-written loop calls ``forward`` and computes the loss itself, so the
model needs no ``train_step``/``inference_step``: those are for the Learner.
"""

from __future__ import annotations

from typing import TypeVar

from ferrum import D2, D3, Device, Tensor, config
from ferrum.backend import Backend
from ferrum.module import Module
from ferrum.nn import Dropout, DropoutConfig, Linear, LinearConfig, Relu
from ferrum.nn.conv import Conv2d, Conv2dConfig
from ferrum.nn.pool import AdaptiveAvgPool2d, AdaptiveAvgPool2dConfig

B = TypeVar("B", bound=Backend)


class Model(Module[B]):
    conv1: Conv2d[B]
    conv2: Conv2d[B]
    pool: AdaptiveAvgPool2d
    dropout: Dropout
    linear1: Linear[B]
    linear2: Linear[B]
    activation: Relu

    def forward(self, images: Tensor[B, D3]) -> Tensor[B, D2]:
        """Images [batch, height, width] to class scores [batch, num_classes]."""
        batch_size, height, width = images.dims()
        x = images.reshape((batch_size, 1, height, width))  # a channel
        x = self.dropout.forward(self.conv1.forward(x))  # [batch, 8, 26, 26]
        x = self.activation.forward(self.dropout.forward(self.conv2.forward(x)))  # [batch, 16, 24, 24]
        x = self.pool.forward(x)  # [batch, 16, 8, 8]
        flat = x.reshape((batch_size, 16 * 8 * 8))
        flat = self.activation.forward(self.dropout.forward(self.linear1.forward(flat)))
        return self.linear2.forward(flat)  # [batch, num_classes]


@config
class ModelConfig:
    num_classes: int
    hidden_size: int
    dropout: float = 0.5

    def init(self, device: Device[B]) -> Model[B]:
        return Model(
            conv1=Conv2dConfig((1, 8), (3, 3)).init(device),
            conv2=Conv2dConfig((8, 16), (3, 3)).init(device),
            pool=AdaptiveAvgPool2dConfig((8, 8)).init(),
            dropout=DropoutConfig(self.dropout).init(),
            linear1=LinearConfig(16 * 8 * 8, self.hidden_size).init(device),
            linear2=LinearConfig(self.hidden_size, self.num_classes).init(device),
            activation=Relu(),
        )
