"""model.rs: the model, its convolution block and its config.

Burn adds ``TrainStep`` and ``InferenceStep`` to the model in the same
file; here the model inherits them from ``examples.common.classifier``
(the forward pass on the batch's images and the cross-entropy loss), as
the other image classifiers of the examples do.
"""

from __future__ import annotations

from typing import TypeVar

from ferrum import D2, D3, D4, Device, Tensor, config
from ferrum.backend import Backend
from ferrum.module import Module
from ferrum.nn import (
    BatchNorm,
    BatchNormConfig,
    Dropout,
    DropoutConfig,
    Gelu,
    Linear,
    LinearConfig,
    MaxPool2d,
    MaxPool2dConfig,
    PaddingConfig2d,
    Relu,
)
from ferrum.nn.conv import Conv2d, Conv2dConfig

from ..common.classifier import Classifier

B = TypeVar("B", bound=Backend)


class ConvBlock(Module[B]):
    """Convolution (no padding), batch norm, ReLU, then 2x2 max pooling when ``pool`` is set."""

    conv: Conv2d[B]
    norm: BatchNorm[B]
    pool: MaxPool2d | None
    activation: Relu

    @staticmethod
    def new(
        channels: tuple[int, int], kernel_size: tuple[int, int], device: Device[B], pool: bool
    ) -> ConvBlock[B]:
        return ConvBlock(
            conv=Conv2dConfig(channels, kernel_size, padding=PaddingConfig2d.Valid).init(device),
            norm=BatchNormConfig(channels[1]).init(device),
            pool=MaxPool2dConfig((2, 2), stride=(2, 2)).init() if pool else None,
            activation=Relu(),
        )

    def forward(self, x: Tensor[B, D4]) -> Tensor[B, D4]:
        x = self.activation.forward(self.norm.forward(self.conv.forward(x)))
        return x if self.pool is None else self.pool.forward(x)


class Model(Classifier[B]):
    conv1: ConvBlock[B]
    conv2: ConvBlock[B]
    dropout: Dropout
    fc1: Linear[B]
    fc2: Linear[B]
    fc3: Linear[B]
    activation: Gelu

    def forward(self, images: Tensor[B, D3]) -> Tensor[B, D2]:
        """Images [batch, 28, 28] to class scores [batch, num_classes]."""
        batch_size, height, width = images.dims()
        # The images are data: no gradient flows back into them.
        x = images.reshape((batch_size, 1, height, width)).detach()
        x = self.conv1.forward(x)  # [batch, channels, 13, 13]
        x = self.conv2.forward(x)  # [batch, channels, 5, 5]
        _, channels, height, width = x.dims()
        flat = x.reshape((batch_size, channels * height * width))
        flat = self.dropout.forward(self.activation.forward(self.fc1.forward(flat)))
        flat = self.dropout.forward(self.activation.forward(self.fc2.forward(flat)))
        return self.fc3.forward(flat)


@config
class ModelConfig:
    """Burn's ``Model::new`` takes no config (64 channels, 128 hidden units); here they are settings,
    so that ``--smoke`` can train a tiny model."""

    num_classes: int = 10
    channels: int = 64
    hidden_size: int = 128
    dropout: float = 0.25

    def init(self, device: Device[B]) -> Model[B]:
        """The model, its parameters on ``device``."""
        c = self.channels
        return Model(
            conv1=ConvBlock.new((1, c), (3, 3), device, pool=True),  # 28 -> 26, pooled to 13
            conv2=ConvBlock.new((c, c), (3, 3), device, pool=True),  # 13 -> 11, pooled to 5
            dropout=DropoutConfig(self.dropout).init(),
            fc1=LinearConfig(c * 5 * 5, self.hidden_size).init(device),
            fc2=LinearConfig(self.hidden_size, self.hidden_size).init(device),
            fc3=LinearConfig(self.hidden_size, self.num_classes).init(device),
            activation=Gelu(),
        )
