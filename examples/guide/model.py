"""model.rs: the CNN and its config; and, from training.rs, its training and validation steps.

Rust adds ``TrainStep`` and ``InferenceStep`` to the model in training.rs;
in Python they are two methods of the class, so they live here.
"""

from __future__ import annotations

from typing import TypeVar

from ferrum import D1, D2, D3, Device, Int, Tensor, config
from ferrum.backend import Autodiff, Backend
from ferrum.module import Module
from ferrum.nn import Dropout, DropoutConfig, Linear, LinearConfig, Relu
from ferrum.nn.conv import Conv2d, Conv2dConfig
from ferrum.nn.loss import CrossEntropyLossConfig
from ferrum.nn.pool import AdaptiveAvgPool2d, AdaptiveAvgPool2dConfig
from ferrum.train import ClassificationOutput, TrainOutput

from .data import MnistBatch

B = TypeVar("B", bound=Backend)
I = TypeVar("I", bound=Backend)  # noqa: E741 - Burn's name for the inner backend


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
        x = self.conv2.forward(x)  # [batch, 16, 24, 24]
        x = self.activation.forward(self.dropout.forward(x))
        x = self.pool.forward(x)  # [batch, 16, 8, 8]
        flat = x.reshape((batch_size, 16 * 8 * 8))
        flat = self.activation.forward(self.dropout.forward(self.linear1.forward(flat)))
        return self.linear2.forward(flat)  # [batch, num_classes]

    # ---- training.rs

    def forward_classification(
        self, images: Tensor[B, D3], targets: Tensor[B, D1, Int]
    ) -> ClassificationOutput[B]:
        output = self.forward(images)
        loss = CrossEntropyLossConfig().init(output.device()).forward(output, targets)
        return ClassificationOutput(loss, output, targets)

    def train_step(
        self: Model[Autodiff[I]], batch: MnistBatch[Autodiff[I]]
    ) -> TrainOutput[ClassificationOutput[Autodiff[I]]]:
        """Burn's TrainStep: forward, loss and backward. mypy allows it on an autodiff backend only."""
        item = self.forward_classification(batch.images, batch.targets)
        return TrainOutput(self, item.loss.backward(), item)

    def inference_step(self, batch: MnistBatch[B]) -> ClassificationOutput[B]:
        """Burn's InferenceStep: the validation step, run on the inner backend."""
        return self.forward_classification(batch.images, batch.targets)


@config
class ModelConfig:
    num_classes: int
    hidden_size: int
    dropout: float = 0.5

    def init(self, device: Device[B]) -> Model[B]:
        """The model, its parameters on ``device``."""
        return Model(
            conv1=Conv2dConfig((1, 8), (3, 3)).init(device),
            conv2=Conv2dConfig((8, 16), (3, 3)).init(device),
            pool=AdaptiveAvgPool2dConfig((8, 8)).init(),
            dropout=DropoutConfig(self.dropout).init(),
            linear1=LinearConfig(16 * 8 * 8, self.hidden_size).init(device),
            linear2=LinearConfig(self.hidden_size, self.num_classes).init(device),
            activation=Relu(),
        )
