"""model.rs: the model, its convolution block and its config; and its training and validation steps.

Burn adds ``TrainStep`` and ``InferenceStep`` to the model in the same
file; in Python they are two methods of the class.
"""

from __future__ import annotations

from typing import TypeVar

from ferrum import D2, D3, D4, Device, Tensor, config
from ferrum.backend import Autodiff, Backend
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
from ferrum.nn.loss import CrossEntropyLossConfig
from ferrum.train import ClassificationOutput, TrainOutput

from .data import MnistBatch

B = TypeVar("B", bound=Backend)
I = TypeVar("I", bound=Backend)  # noqa: E741 - Burn's name for the inner backend


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


class Model(Module[B]):
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

    def forward_classification(self, batch: MnistBatch[B]) -> ClassificationOutput[B]:
        output = self.forward(batch.images)
        loss = CrossEntropyLossConfig().init(output.device()).forward(output, batch.targets)
        return ClassificationOutput(loss, output, batch.targets)

    def train_step(
        self: Model[Autodiff[I]], batch: MnistBatch[Autodiff[I]]
    ) -> TrainOutput[ClassificationOutput[Autodiff[I]]]:
        """Burn's TrainStep: forward, loss and backward. mypy allows it on an autodiff backend only."""
        item = self.forward_classification(batch)
        return TrainOutput(self, item.loss.backward(), item)

    def inference_step(self, batch: MnistBatch[B]) -> ClassificationOutput[B]:
        """Burn's InferenceStep: the validation and evaluation step, run on the inner backend."""
        return self.forward_classification(batch)


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
