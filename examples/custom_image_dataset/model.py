"""model.rs: the VGG-style CNN and its config; its training and validation steps (Burn's training.rs)
come from ``examples.common.classifier``."""

from __future__ import annotations

from typing import TypeVar

from ferrum import D2, D4, Device, Tensor, config
from ferrum.backend import Backend
from ferrum.nn import (
    BatchNorm,
    BatchNormConfig,
    Dropout,
    DropoutConfig,
    Linear,
    LinearConfig,
    PaddingConfig2d,
    Relu,
)
from ferrum.nn.conv import Conv2d, Conv2dConfig
from ferrum.nn.pool import MaxPool2d, MaxPool2dConfig

from ..common.classifier import Classifier

B = TypeVar("B", bound=Backend)


class Cnn(Classifier[B]):
    """Three VGG blocks, then two linear layers.

    A block is two 3x3 convolutions, each followed by batch normalisation
    and ReLU, then a 2x2 max pool and dropout. Burn's blocks have no
    normalisation; without it the network needs many more steps than a CPU
    run has before its loss starts to fall.
    """

    activation: Relu
    dropout: Dropout
    pool: MaxPool2d
    conv1: Conv2d[B]
    conv2: Conv2d[B]
    conv3: Conv2d[B]
    conv4: Conv2d[B]
    conv5: Conv2d[B]
    conv6: Conv2d[B]
    norm1: BatchNorm[B]
    norm2: BatchNorm[B]
    norm3: BatchNorm[B]
    norm4: BatchNorm[B]
    norm5: BatchNorm[B]
    norm6: BatchNorm[B]
    fc1: Linear[B]
    fc2: Linear[B]

    def block(
        self, x: Tensor[B, D4], convs: tuple[Conv2d[B], Conv2d[B]], norms: tuple[BatchNorm[B], BatchNorm[B]]
    ) -> Tensor[B, D4]:
        for conv, norm in zip(convs, norms, strict=True):
            x = self.activation.forward(norm.forward(conv.forward(x)))
        return self.dropout.forward(self.pool.forward(x))  # half the height and width

    def forward(self, images: Tensor[B, D4]) -> Tensor[B, D2]:
        """Images ``[batch, 3, size, size]`` to class scores ``[batch, num_classes]``."""
        # Each block halves the height and width; the channels go width, 2 width, 4 width.
        x = self.block(images, (self.conv1, self.conv2), (self.norm1, self.norm2))
        x = self.block(x, (self.conv3, self.conv4), (self.norm3, self.norm4))
        x = self.block(x, (self.conv5, self.conv6), (self.norm5, self.norm6))  # [batch, 4w, size/8, size/8]
        flat = x.flatten(1, 3)
        flat = self.dropout.forward(self.activation.forward(self.fc1.forward(flat)))
        return self.fc2.forward(flat)


@config
class CnnConfig:
    """The CNN's sizes. Burn's is ``width=32, hidden_size=128`` on 32x32 images; ``width`` 16 trains
    four times faster on a CPU."""

    num_classes: int
    image_size: int = 32
    width: int = 16
    hidden_size: int = 128
    dropout: float = 0.3

    def init(self, device: Device[B]) -> Cnn[B]:
        """The model, its parameters on ``device``."""
        if self.image_size % 8:
            raise ValueError(f"image_size must be a multiple of 8 (3 poolings), not {self.image_size}")
        w = self.width

        def conv(channels_in: int, channels_out: int) -> Conv2d[B]:
            same = Conv2dConfig((channels_in, channels_out), (3, 3)).with_padding(PaddingConfig2d.Same)
            return same.init(device)

        side = self.image_size // 8
        return Cnn(
            activation=Relu(),
            dropout=DropoutConfig(self.dropout).init(),
            pool=MaxPool2dConfig((2, 2)).with_strides((2, 2)).init(),
            conv1=conv(3, w),
            conv2=conv(w, w),
            conv3=conv(w, 2 * w),
            conv4=conv(2 * w, 2 * w),
            conv5=conv(2 * w, 4 * w),
            conv6=conv(4 * w, 4 * w),
            norm1=BatchNormConfig(w).init(device),
            norm2=BatchNormConfig(w).init(device),
            norm3=BatchNormConfig(2 * w).init(device),
            norm4=BatchNormConfig(2 * w).init(device),
            norm5=BatchNormConfig(4 * w).init(device),
            norm6=BatchNormConfig(4 * w).init(device),
            fc1=LinearConfig(4 * w * side * side, self.hidden_size).init(device),
            fc2=LinearConfig(self.hidden_size, self.num_classes).init(device),
        )
